"""Loading tile packs: good packs load with their pictures; every bad pack fails in one sentence."""

from __future__ import annotations

import os
import pickle
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest
import tomli_w

from companion.errors import DataError
from vision.box.pack import PackError, load_pack


def _picture(size: tuple[int, int], seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    w, h = size
    return rng.integers(0, 255, (h, w, 3), dtype=np.uint8)


def _write_pack(root: Path, *, tiles: list[dict[str, Any]] | None = None, **extra: Any) -> Path:
    """A small but complete pack: two tile types, a ship on white paper, a front board."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "tiles").mkdir(exist_ok=True)
    (root / "pieces").mkdir(exist_ok=True)
    (root / "boards").mkdir(exist_ok=True)
    if tiles is None:
        tiles = [
            {"id": "water", "kind": "water", "count": 2, "image": "tiles/water.png"},
            {"id": "end-s", "kind": "end", "land": "S", "palms": 1, "image": "tiles/end-s.png"},
        ]
    for i, t in enumerate(tiles):
        image = t.get("image")
        if isinstance(image, str) and not image.startswith(("/", "..")):
            cv2.imwrite(str(root / image), _picture((160, 160), i))
    ship = np.full((100, 160, 3), 255, np.uint8)
    cv2.ellipse(ship, (80, 50), (60, 25), 0, 0, 360, (40, 60, 150), -1)
    cv2.circle(ship, (80, 50), 8, (255, 255, 255), -1)  # a white sail inside the hull
    cv2.imwrite(str(root / "pieces/ship.png"), ship)
    cv2.imwrite(str(root / "boards/front.png"), _picture((400, 400), 99))
    doc: dict[str, Any] = {
        "name": "test box",
        "tile": tiles,
        "ship": {"image": "pieces/ship.png"},
        "board": {
            "front": {
                "rows": 4,
                "cols": 4,
                "printed_boats": 2,
                "map": ["...."] * 4,
                "image": "boards/front.png",
            }
        },
    }
    doc.update(extra)
    (root / "pack.toml").write_bytes(tomli_w.dumps(doc).encode())
    return root


def _snapshot(root: Path) -> dict[str, tuple[int, int]]:
    return {
        str(p.relative_to(root)): (p.stat().st_mtime_ns, p.stat().st_size) for p in root.rglob("*")
    }


def test_good_pack_loads_pictures_and_meanings(tmp_path: Path) -> None:
    root = _write_pack(tmp_path / "box")
    before = _snapshot(root)
    pack = load_pack(root)
    assert _snapshot(root) == before, "loading a pack must not write anything"
    assert set(pack.tiles) == {"water", "end-s"}
    assert pack.catalogue.meaning("end-s").land == "S"
    assert pack.tile_mm == 45
    for picture in pack.tiles.values():
        assert picture.dtype == np.uint8 and picture.ndim == 3 and picture.shape[2] == 3
        assert picture.shape[0] == picture.shape[1]
    assert pack.boards["front"].shape[:2] == (400, 400)
    assert "atoll" not in pack.boards


def test_ship_without_alpha_takes_paper_as_transparent(tmp_path: Path) -> None:
    pack = load_pack(_write_pack(tmp_path / "box"))
    ship = pack.ship
    assert ship.shape == (100, 160, 4)
    assert ship[2, 2, 3] == 0, "white paper around the ship is transparent"
    assert ship[50, 40, 3] == 255, "the hull is opaque"
    assert ship[50, 80, 3] == 255, "a white detail inside the hull stays opaque"


def test_ship_alpha_channel_is_kept(tmp_path: Path) -> None:
    root = _write_pack(tmp_path / "box")
    rgba = np.zeros((90, 90, 4), np.uint8)
    rgba[20:70, 30:60] = (10, 20, 30, 255)
    cv2.imwrite(str(root / "pieces/ship.png"), rgba)
    ship = load_pack(root).ship
    assert ship[0, 0, 3] == 0 and ship[40, 40, 3] == 255


def test_pictures_are_read_only(tmp_path: Path) -> None:
    pack = load_pack(_write_pack(tmp_path / "box"))
    with pytest.raises(ValueError):
        pack.tiles["water"][0, 0] = 0


def test_a_pack_pickles_whole_and_read_only(tmp_path: Path) -> None:
    """Another process draws a box's tables from a pickled pack."""
    pack = load_pack(_write_pack(tmp_path / "box"))
    again = pickle.loads(pickle.dumps(pack))
    assert again.root == pack.root and again.catalogue == pack.catalogue
    assert set(again.tiles) == set(pack.tiles) and set(again.boards) == set(pack.boards)
    for name, picture in pack.tiles.items():
        assert np.array_equal(again.tiles[name], picture)
    assert np.array_equal(again.ship, pack.ship)
    assert np.array_equal(again.boards["front"], pack.boards["front"])
    with pytest.raises(TypeError):
        again.tiles["water"] = again.ship


def _error(root: Path) -> str:
    with pytest.raises(PackError) as info:
        load_pack(root)
    assert isinstance(info.value, DataError)
    message = info.value.message
    assert "\n" not in message and "Traceback" not in message
    return message


def test_missing_directory_and_pack_toml(tmp_path: Path) -> None:
    assert "no such tile pack" in _error(tmp_path / "nowhere")
    (tmp_path / "empty").mkdir()
    message = _error(tmp_path / "empty")
    assert "pack.toml" in message


def test_missing_picture_names_the_file(tmp_path: Path) -> None:
    root = _write_pack(tmp_path / "box")
    os.remove(root / "tiles/end-s.png")
    message = _error(root)
    assert "end-s.png" in message and "missing" in message


def test_unreadable_and_truncated_pictures(tmp_path: Path) -> None:
    root = _write_pack(tmp_path / "box")
    (root / "tiles/end-s.png").write_bytes(b"not a picture at all")
    assert "end-s.png" in _error(root)
    data = cv2.imencode(".png", _picture((160, 160), 5))[1].tobytes()
    (root / "tiles/end-s.png").write_bytes(data[: len(data) // 2])
    assert "end-s.png" in _error(root)


def test_truncated_jpeg_is_refused(tmp_path: Path) -> None:
    tiles = [{"id": "water", "kind": "water", "image": "tiles/water.jpg"}]
    root = _write_pack(tmp_path / "box", tiles=tiles)
    data = cv2.imencode(".jpg", _picture((200, 200), 1))[1].tobytes()
    (root / "tiles/water.jpg").write_bytes(data)
    load_pack(root)
    (root / "tiles/water.jpg").write_bytes(data[: len(data) * 2 // 3])
    assert "water.jpg" in _error(root)


def test_picture_not_square_or_too_small(tmp_path: Path) -> None:
    root = _write_pack(tmp_path / "box")
    cv2.imwrite(str(root / "tiles/water.png"), _picture((200, 160), 3))
    message = _error(root)
    assert "water.png" in message and "square" in message
    cv2.imwrite(str(root / "tiles/water.png"), _picture((100, 100), 3))
    message = _error(root)
    assert "water.png" in message and "128" in message


def test_duplicate_id_and_contradicting_kind(tmp_path: Path) -> None:
    twice = [
        {"id": "water", "kind": "water", "image": "tiles/a.png"},
        {"id": "water", "kind": "water", "image": "tiles/b.png"},
    ]
    message = _error(_write_pack(tmp_path / "dup", tiles=twice))
    assert "pack.toml" in message and "twice" in message
    wrong = [{"id": "mid", "kind": "middle", "land": "N", "image": "tiles/mid.png"}]
    message = _error(_write_pack(tmp_path / "kind", tiles=wrong))
    assert "pack.toml" in message and "middle" in message


@pytest.mark.parametrize("image", ["../outside.png", "/etc/passwd", "tiles/../../outside.png"])
def test_picture_path_must_stay_inside_the_pack(tmp_path: Path, image: str) -> None:
    cv2.imwrite(str(tmp_path / "outside.png"), _picture((160, 160), 4))
    tiles = [{"id": "water", "kind": "water", "image": image}]
    message = _error(_write_pack(tmp_path / "box", tiles=tiles))
    assert "pack.toml" in message and image in message


def test_board_picture_aspect_must_match_the_grid(tmp_path: Path) -> None:
    root = _write_pack(tmp_path / "box")
    cv2.imwrite(str(root / "boards/front.png"), _picture((400, 300), 7))
    message = _error(root)
    assert "front.png" in message and "4:4" in message


def test_front_board_picture_is_required(tmp_path: Path) -> None:
    root = _write_pack(tmp_path / "box")
    doc = {
        "name": "no board",
        "tile": [{"id": "water", "kind": "water", "image": "tiles/water.png"}],
        "ship": {"image": "pieces/ship.png"},
    }
    (root / "pack.toml").write_bytes(tomli_w.dumps(doc).encode())
    assert "[board.front]" in _error(root)
