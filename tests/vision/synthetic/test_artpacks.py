"""Procedural art packs: complete, loadable, distinguishable, rotation defined, real styles."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest

from companion.catalogue import Catalogue, TileType, default_catalogue
from companion.errors import DataError
from companion.tiles import Kind, Meaning
from vision.box.pack import Pack, load_pack
from vision.synthetic.artpacks import STYLES, write_art_pack


def _seen(picture: np.ndarray) -> np.ndarray:
    """A tile as a camera at ~1.5 px/mm sees it: about 48 px a side, a little blurred."""
    small = cv2.resize(picture, (48, 48), interpolation=cv2.INTER_AREA).astype(np.float32)
    return cv2.GaussianBlur(small, (0, 0), 1.0)


def _visible_difference(a: np.ndarray, b: np.ndarray) -> float:
    """The largest mean difference over one 8 x 8 block: 'some detail clearly differs'."""
    diff = np.abs(a - b).mean(axis=2)
    return float(diff.reshape(6, 8, 6, 8).mean(axis=(1, 3)).max())


@pytest.fixture(params=["lagoon", "ink", "random"])
def pack(request: pytest.FixtureRequest) -> Pack:
    fixture: Pack = request.getfixturevalue(f"pack_{request.param}")
    return fixture


def test_every_style_is_offered() -> None:
    assert {"lagoon", "ink", "random"} <= set(STYLES)


def test_pack_is_complete(pack: Pack) -> None:
    catalogue = default_catalogue()
    assert [t.id for t in pack.catalogue] == [t.id for t in catalogue]
    for tile in catalogue:
        assert pack.catalogue[tile.id].meaning == tile.meaning
        assert pack.catalogue[tile.id].count == tile.count
    assert set(pack.boards) == {"front", "atoll"}
    alpha = pack.ship[:, :, 3]
    assert alpha[0, 0] == 0 and alpha[alpha.shape[0] // 2, alpha.shape[1] // 2] == 255


@pytest.mark.slow
def test_different_tile_types_look_different_at_every_rotation(pack: Pack) -> None:
    seen = {tile_id: _seen(p) for tile_id, p in pack.tiles.items()}
    for a, pa in seen.items():
        for b, pb in seen.items():
            if a == b:
                continue
            worst = min(_visible_difference(pa, np.rot90(pb, k)) for k in range(4))
            assert worst > 8, f"{a} and {b} (turned) look alike"


def test_no_tile_looks_like_itself_turned(pack: Pack) -> None:
    for tile_id, picture in pack.tiles.items():
        seen = _seen(picture)
        worst = min(_visible_difference(seen, np.rot90(seen, k)) for k in (1, 2, 3))
        assert worst > 8, f"{tile_id} looks the same turned; its rotation is undefined"


def test_palms_point_north_so_turned_tiles_differ(pack: Pack) -> None:
    # end-n-palm1 turned 90° has its land east, like end-e-palm1: only the palm tells them apart.
    turned = np.rot90(_seen(pack.tiles["end-n-palm1"]), -1)
    assert _visible_difference(turned, _seen(pack.tiles["end-e-palm1"])) > 8


def test_styles_are_clearly_different(pack_lagoon: Pack, pack_ink: Pack) -> None:
    def mean_colour(p: Pack) -> np.ndarray:
        return np.asarray(
            np.mean([t.reshape(-1, 3).mean(axis=0) for t in p.tiles.values()], axis=0)
        )

    assert np.abs(mean_colour(pack_lagoon) - mean_colour(pack_ink)).max() > 60
    for tile_id in ("water", "end-s-palm1", "volcano"):
        diff = np.abs(pack_lagoon.tiles[tile_id].astype(int) - pack_ink.tiles[tile_id]).mean()
        assert diff > 40


def test_same_seed_same_pack_and_random_style_follows_seed(tmp_path: Path) -> None:
    small = Catalogue(
        "two tiles",
        (
            TileType("sea", Meaning(Kind.WATER), 1),
            TileType("isle", Meaning(Kind.SINGLE, palms=2, huts=1), 1),
        ),
        default_catalogue().boards,
    )
    a = write_art_pack(tmp_path / "a", "random", catalogue=small, px=128, seed=5)
    b = write_art_pack(tmp_path / "b", "random", catalogue=small, px=128, seed=5)
    c = write_art_pack(tmp_path / "c", "random", catalogue=small, px=128, seed=6)
    files = sorted(p.relative_to(a) for p in a.rglob("*") if p.is_file())
    assert Path("tiles/sea.png") in files and Path("tiles/isle.png") in files
    for rel in files:
        if rel.name != "pack.toml":
            assert (a / rel).read_bytes() == (b / rel).read_bytes()
    pa, pc = load_pack(a), load_pack(c)
    assert set(pa.tiles) == {"sea", "isle"}
    assert np.abs(pa.tiles["sea"].astype(int) - pc.tiles["sea"]).mean() > 10


def test_refuses_a_used_directory_and_an_unknown_style(tmp_path: Path) -> None:
    (tmp_path / "used").mkdir()
    (tmp_path / "used" / "notes.txt").write_text("mine")
    with pytest.raises(DataError, match="not an empty directory"):
        write_art_pack(tmp_path / "used", "ink", px=128)
    with pytest.raises(DataError, match="unknown art style"):
        write_art_pack(tmp_path / "new", "oil")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["used"], "nothing half-written"


def test_line_looks_are_mostly_thin_line_drawings_of_small_symbols() -> None:
    from vision.synthetic.artpacks import line_look, random_look

    looks = [line_look(seed) for seed in range(900, 940)]
    assert sum(look.filled for look in looks) < len(looks) / 2
    assert all(0.3 <= look.symbol_scale <= 1.0 for look in looks)
    assert all(0.004 <= look.line <= 0.012 for look in looks)
    assert all(look.paper_texture > 0 for look in looks)
    # The palette is the seed's random look's.
    assert all(line_look(s).land == random_look(s).land for s in range(900, 905))


def test_every_finish_but_print_changes_the_drawing_the_same_way_for_a_seed() -> None:
    from companion.catalogue import default_catalogue
    from vision.synthetic.artpacks import FINISHES, draw_tile, finished, random_look

    meaning = next(t.meaning for t in default_catalogue() if t.meaning.palms)
    drawn = draw_tile(meaning, random_look(4), 160, np.random.default_rng(1))
    untouched = np.random.default_rng(9)
    assert finished(drawn, "print", untouched) is drawn
    assert untouched.random() == np.random.default_rng(9).random(), "print draws no numbers"
    for finish in FINISHES[1:]:
        out = finished(drawn, finish, np.random.default_rng(5))
        assert out.shape == drawn.shape and out.dtype == np.uint8
        assert np.abs(out.astype(int) - drawn).mean() > 2.0, finish
        assert np.array_equal(out, finished(drawn, finish, np.random.default_rng(5)))
    with pytest.raises(ValueError, match="finish"):
        finished(drawn, "oil", np.random.default_rng(0))


def test_finished_looks_are_the_three_looks_printed_in_every_finish_but_print() -> None:
    from vision.synthetic.artpacks import FINISHES, finished_look, line_look, varied_look

    looks = [finished_look(seed) for seed in range(2000, 2060)]
    assert {look.finish for look in looks} == set(FINISHES[1:])
    assert finished_look(2002).symbol_scale == varied_look(2002).symbol_scale
    assert finished_look(2003).line == line_look(2003).line


def test_a_finished_pack_prints_its_tiles_and_boards_in_its_finish(tmp_path: Path) -> None:
    from dataclasses import replace

    from vision.synthetic.artpacks import random_look

    plain = write_art_pack(tmp_path / "plain", "random", seed=3, px=160, look=random_look(3))
    soft = write_art_pack(
        tmp_path / "soft", "random", seed=3, px=160, look=replace(random_look(3), finish="soft")
    )
    for name in (
        "tiles/" + sorted(p.name for p in (plain / "tiles").iterdir())[0],
        "boards/front.png",
    ):
        a, b = cv2.imread(str(plain / name)), cv2.imread(str(soft / name))
        assert a is not None and b is not None
        assert a.shape == b.shape and not np.array_equal(a, b), name
    ship = "pieces/ship.png"
    assert (plain / ship).read_bytes() == (soft / ship).read_bytes(), "the wooden ship is no print"


@pytest.mark.parametrize("shape", range(3))
def test_shaped_packs_tell_their_tiles_apart_by_symbols_of_their_own(
    tmp_path: Path, shape: int
) -> None:
    from dataclasses import replace

    from vision.synthetic.artpacks import (
        SHAPED_HUTS,
        SHAPED_PALMS,
        SHAPED_SHELLS,
        random_look,
        shaped_look,
    )

    assert {shaped_look(seed).palm for seed in range(2600, 2630)} == set(SHAPED_PALMS)
    look = replace(
        random_look(5),
        palm=SHAPED_PALMS[shape],
        hut=SHAPED_HUTS[shape],
        shell_shape=SHAPED_SHELLS[shape],
    )
    tiles = load_pack(write_art_pack(tmp_path / "p", "random", seed=5, px=160, look=look)).tiles
    seen = {name: _seen(picture) for name, picture in tiles.items()}
    for a, b in (
        ("end-n-palm1", "end-n-palm2"),
        ("end-n-palm1", "end-n-palm1-hut"),
        ("water-boat", "water-boat-shell"),
    ):
        assert _visible_difference(seen[a], seen[b]) > 8, f"{a} and {b} look alike"
    turned = np.rot90(seen["end-n-palm1"], -1)
    assert _visible_difference(turned, seen["end-e-palm1"]) > 8, "the palm does not point north"
