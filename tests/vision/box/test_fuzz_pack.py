"""Fuzzing the pack loader: a damaged pack fails in one sentence and is never written to.

Each example starts from a pack drawn by vision.synthetic.artpacks (copied once per module, so the
session's pack is never touched), damages it (pack.toml bytes or values, a picture cut off,
emptied, replaced by text, of the wrong size, declaring huge dimensions, paths leaving the
pack, symlinks out of it), loads it and puts the copy back as it was.
"""

from __future__ import annotations

import os
import shutil
import struct
import tomllib
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest
import tomli_w
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from companion.errors import DataError
from tests.jsonpaths import json_slots
from tests.vision.bombs import jpeg_claiming, png_deep, rle_bmp, webp_header
from vision.box import pack as pack_module
from vision.box.pack import PACK_FILE, Pack, PackError, load_pack
from vision.reader.picture import MAX_PICTURE_PIXELS

FUZZ = settings(
    max_examples=80,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)

Snapshot = dict[str, tuple[bool, int, int]]


def snapshot(root: Path) -> Snapshot:
    """Every entry under `root` (symlinks not followed): is-link, mtime, size."""
    out: Snapshot = {}
    for folder, dirs, files in os.walk(root, followlinks=False):
        for name in dirs + files:
            path = Path(folder, name)
            info = path.lstat()
            out[str(path.relative_to(root))] = (path.is_symlink(), info.st_mtime_ns, info.st_size)
    return out


class WorkPack:
    """A copy of a drawn pack that each example may damage; `restore()` undoes the damage."""

    def __init__(self, source: Path, root: Path, outside: Path) -> None:
        shutil.copytree(source, root)
        self.root = root
        self.outside = outside  # a directory beside the pack, with a valid picture in it
        self.files = {
            str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()
        }
        self.dirs = {str(p.relative_to(root)) for p in root.rglob("*") if p.is_dir()}
        self.toml: dict[str, Any] = tomllib.loads(self.files[PACK_FILE].decode())
        self.pictures = sorted(name for name in self.files if name != PACK_FILE)

    def restore(self) -> None:
        for folder, dirs, files in os.walk(self.root, topdown=False, followlinks=False):
            for name in files + dirs:
                path = Path(folder, name)
                rel = str(path.relative_to(self.root))
                if path.is_symlink() or (rel not in self.files and rel not in self.dirs):
                    if path.is_dir() and not path.is_symlink():
                        shutil.rmtree(path)
                    else:
                        path.unlink()
        for rel in sorted(self.dirs):
            (self.root / rel).mkdir(exist_ok=True)
        for rel, data in self.files.items():
            path = self.root / rel
            if path.is_dir():
                shutil.rmtree(path)
            if not path.exists() or path.read_bytes() != data:
                path.write_bytes(data)


@pytest.fixture(scope="module")
def work(pack_dirs: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> WorkPack:
    base = tmp_path_factory.mktemp("fuzz-pack")
    outside = base / "outside"
    outside.mkdir()
    source = pack_dirs["lagoon"]
    shutil.copy(source / "tiles" / "water.png", outside / "picture.png")
    return WorkPack(source, base / "pack", outside)


@pytest.fixture
def pack(work: WorkPack) -> Iterator[WorkPack]:
    work.restore()
    yield work
    work.restore()


def load_or_one_sentence(root: Path) -> Pack | None:
    """Load the pack: a Pack, or None after checking the failure was one PackError sentence
    and that nothing inside the pack was written."""
    before = snapshot(root)
    try:
        loaded = load_pack(root)
    except PackError as error:
        assert isinstance(error, DataError)
        assert error.message and "\n" not in error.message and "Traceback" not in error.message
        loaded = None
    assert snapshot(root) == before, "loading a pack wrote inside it"
    return loaded


# ----------------------------------------------------------------------- pictures


def png_header(width: int, height: int, rows: int = 0) -> bytes:
    """A PNG that declares width x height RGB pixels but holds only `rows` rows of them."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        crc = zlib.crc32(kind + data) & 0xFFFFFFFF
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", crc)

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    pixels = zlib.compress(b"\x00" * ((3 * width + 1) * rows))
    return (
        b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", pixels) + chunk(b"IEND", b"")
    )


def encoded(width: int, height: int, ext: str = ".png", channels: int = 3) -> bytes:
    rng = np.random.default_rng(width * 7919 + height)
    picture = rng.integers(0, 255, (height, width, channels), dtype=np.uint8)
    ok, data = cv2.imencode(ext, picture)
    assert ok
    return bytes(data.tobytes())


PICTURE_DAMAGE = st.sampled_from(
    [
        "cut",
        "empty",
        "text",
        "flip",
        "tiny",
        "not square",
        "long",
        "huge header",
        "over opencv's limit",
        "jpeg cut",
        "directory",
        "missing",
        "symlink out",
        "symlink to a directory out",
        "grey",
        "alpha",
    ]
)


def damage_picture(work: WorkPack, name: str, damage: str, data: st.DataObject) -> None:
    path = work.root / name
    original = work.files[name]
    if damage == "cut":
        path.write_bytes(original[: data.draw(st.integers(0, len(original) - 1))])
    elif damage == "empty":
        path.write_bytes(b"")
    elif damage == "text":
        path.write_text(data.draw(st.text(max_size=200)), encoding="utf-8")
    elif damage == "flip":
        i = data.draw(st.integers(0, len(original) - 1))
        path.write_bytes(original[:i] + bytes([original[i] ^ 0xFF]) + original[i + 1 :])
    elif damage == "tiny":
        path.write_bytes(encoded(16, 16))
    elif damage == "not square":
        path.write_bytes(encoded(300, 200))
    elif damage == "long":
        path.write_bytes(encoded(1000, 130))
    elif damage == "huge header":
        path.write_bytes(png_header(20_000, 20_000, rows=2))
    elif damage == "over opencv's limit":
        path.write_bytes(png_header(100_000, 100_000))
    elif damage == "jpeg cut":
        jpeg = encoded(200, 200, ".jpg")
        path.write_bytes(jpeg[: data.draw(st.integers(2, len(jpeg) - 3))])
    elif damage == "directory":
        path.unlink()
        path.mkdir()
    elif damage == "missing":
        path.unlink()
    elif damage == "symlink out":
        path.unlink()
        path.symlink_to(work.outside / "picture.png")
    elif damage == "symlink to a directory out":
        path.parent.rename(path.parent.with_name(path.parent.name + "-moved"))
        path.parent.symlink_to(work.outside, target_is_directory=True)
    elif damage == "grey":
        path.write_bytes(encoded(200, 200, channels=1))
    elif damage == "alpha":
        path.write_bytes(encoded(200, 200, channels=4))


@pytest.mark.slow
@FUZZ
@given(data=st.data())
def test_a_damaged_picture_fails_in_one_sentence(pack: WorkPack, data: st.DataObject) -> None:
    try:
        name = data.draw(st.sampled_from(pack.pictures), label="picture")
        damage = data.draw(PICTURE_DAMAGE, label="damage")
        damage_picture(pack, name, damage, data)
        loaded = load_or_one_sentence(pack.root)
        if damage in ("cut", "empty", "text", "tiny", "huge header", "jpeg cut", "missing"):
            assert loaded is None, f"a picture damaged by {damage!r} was accepted"
        if damage in ("symlink out", "symlink to a directory out", "over opencv's limit"):
            assert loaded is None, f"a picture damaged by {damage!r} was accepted"
    finally:
        pack.restore()


# ----------------------------------------------------------------------- pack.toml

ESCAPING_PATHS = [
    "../outside/picture.png",
    "tiles/../../outside/picture.png",
    "/etc/passwd",
    "C:\\pack\\tiles\\water.png",
    "C:tiles/water.png",
    "\\\\server\\share\\water.png",
    "..\\outside\\picture.png",
    "tiles/\x00water.png",
    "tiles/water.png\nsecond line",
    "tiles/\x1b[2Jwater.png",
    "",
    "   ",
    ".",
    "tiles",
]

TOML_VALUES = st.recursive(
    st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**63 - 1)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=20)
    | st.sampled_from(ESCAPING_PATHS),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=10,
)


@st.composite
def pack_documents(draw: st.DrawFn, base: dict[str, Any]) -> dict[str, Any]:
    """The pack's pack.toml with 1-3 changes: a value replaced (by an escaping picture path,
    a huge number, a wrong type), removed, an unknown key added, a tile given twice."""
    doc: dict[str, Any] = tomllib.loads(tomli_w.dumps(base))  # a fresh copy
    for _ in range(draw(st.integers(1, 3))):
        change = draw(st.sampled_from(["replace", "remove", "add", "image", "duplicate"]))
        tiles = doc.get("tile")
        tables = [t for t in tiles if isinstance(t, dict)] if isinstance(tiles, list) else []
        if change == "duplicate" and tables:  # an earlier change may have put a non-table there
            assert isinstance(tiles, list)
            tiles.append(dict(draw(st.sampled_from(tables))))
            continue
        if change == "image":
            images = [(c, k) for c, k in json_slots(doc, []) if k == "image"]
            if images:
                container, key = draw(st.sampled_from(images))
                container[key] = draw(st.sampled_from(ESCAPING_PATHS))
                continue
        slots = json_slots(doc, [])
        if not slots:
            break
        container, key = draw(st.sampled_from(slots))
        if change == "remove":
            del container[key]
        elif change == "add" and isinstance(container, dict):
            container[draw(st.text(min_size=1, max_size=8))] = draw(TOML_VALUES)
        else:
            container[key] = draw(TOML_VALUES)
    return doc


@pytest.mark.slow
@FUZZ
@given(data=st.data())
def test_a_changed_pack_toml_fails_in_one_sentence(pack: WorkPack, data: st.DataObject) -> None:
    try:
        doc = data.draw(pack_documents(pack.toml), label="pack.toml")
        try:
            text = tomli_w.dumps(doc)
        except (TypeError, ValueError):  # a change TOML cannot write (e.g. a mixed array)
            return
        (pack.root / PACK_FILE).write_text(text, encoding="utf-8")
        loaded = load_or_one_sentence(pack.root)
        if loaded is not None:
            for tile in loaded.catalogue:
                assert tile.image in pack.files, f"a picture from {tile.image!r} was loaded"
    finally:
        pack.restore()


@pytest.mark.slow
@FUZZ
@given(data=st.data())
def test_damaged_pack_toml_bytes_fail_in_one_sentence(pack: WorkPack, data: st.DataObject) -> None:
    try:
        original = pack.files[PACK_FILE]
        damage = data.draw(st.sampled_from(["flip", "cut", "insert", "bom", "utf-16"]))
        if damage == "flip":
            changed = bytearray(original)
            for i in data.draw(st.lists(st.integers(0, len(original) - 1), min_size=1, max_size=8)):
                changed[i] ^= data.draw(st.integers(1, 255))
            raw = bytes(changed)
        elif damage == "cut":
            raw = original[: data.draw(st.integers(0, len(original) - 1))]
        elif damage == "insert":
            i = data.draw(st.integers(0, len(original)))
            raw = original[:i] + data.draw(st.binary(min_size=1, max_size=20)) + original[i:]
        elif damage == "bom":
            raw = b"\xef\xbb\xbf" + original
        else:
            raw = original.decode().encode("utf-16")
        (pack.root / PACK_FILE).write_bytes(raw)
        load_or_one_sentence(pack.root)
    finally:
        pack.restore()


# ----------------------------------------------------------------------- named cases


def _toml_with(pack: WorkPack, change: Any) -> None:
    doc: dict[str, Any] = tomllib.loads(tomli_w.dumps(pack.toml))
    change(doc)
    (pack.root / PACK_FILE).write_text(tomli_w.dumps(doc), encoding="utf-8")


def _error(pack: WorkPack) -> str:
    assert load_or_one_sentence(pack.root) is None
    with pytest.raises(PackError) as info:
        load_pack(pack.root)
    return info.value.message


def test_the_copied_pack_loads(pack: WorkPack) -> None:
    loaded = load_or_one_sentence(pack.root)
    assert loaded is not None and len(loaded.tiles) == len(pack.toml["tile"])


@pytest.mark.parametrize("image", ESCAPING_PATHS)
def test_a_picture_path_that_leaves_the_pack_or_is_not_a_file_is_refused(
    pack: WorkPack, image: str
) -> None:
    _toml_with(pack, lambda doc: doc["tile"][0].update(image=image))
    assert f"tile {pack.toml['tile'][0]['id']!r}" in _error(pack)


def test_a_symlink_out_of_the_pack_is_refused(pack: WorkPack) -> None:
    name = pack.pictures[0]
    (pack.root / name).unlink()
    (pack.root / name).symlink_to(pack.outside / "picture.png")  # a good picture, elsewhere
    assert "outside the pack" in _error(pack)


def test_a_symlinked_folder_out_of_the_pack_is_refused(pack: WorkPack) -> None:
    tiles = pack.root / "tiles"
    tiles.rename(pack.root / "tiles-moved")
    tiles.symlink_to(pack.outside, target_is_directory=True)
    assert "outside the pack" in _error(pack)


def test_control_characters_in_a_picture_path_are_one_sentence(pack: WorkPack) -> None:
    _toml_with(pack, lambda doc: doc["ship"].update(image="pieces/ship\x00.png"))
    assert "control character" in _error(pack)
    _toml_with(pack, lambda doc: doc["ship"].update(image="pieces/ship.png\nrm -rf"))
    assert "control character" in _error(pack)


def test_a_picture_declaring_huge_dimensions_is_refused_before_decoding(pack: WorkPack) -> None:
    (pack.root / pack.pictures[0]).write_bytes(png_header(20_000, 20_000, rows=2))
    message = _error(pack)
    assert "20000 x 20000" in message and "million pixels" in message
    assert MAX_PICTURE_PIXELS < 20_000 * 20_000
    (pack.root / pack.pictures[0]).write_bytes(png_header(100_000, 100_000))
    assert "100000 x 100000" in _error(pack)


def test_a_jpeg_declaring_huge_dimensions_is_refused(pack: WorkPack) -> None:
    jpeg = bytearray(encoded(200, 200, ".jpg"))
    sof = next(i for i in range(2, len(jpeg) - 1) if jpeg[i] == 0xFF and jpeg[i + 1] == 0xC0)
    jpeg[sof + 5 : sof + 9] = struct.pack(">HH", 60_000, 60_000)
    (pack.root / pack.pictures[0]).write_bytes(bytes(jpeg))
    assert "60000 x 60000" in _error(pack)


@pytest.mark.parametrize(
    ("bomb", "named"),
    [(rle_bmp(30_000, 30_000), "BMP"), (webp_header(16_384, 16_384), "WebP")],
    ids=["rle-bmp", "webp"],
)
def test_a_picture_in_another_format_is_refused_without_decoding(
    pack: WorkPack, monkeypatch: pytest.MonkeyPatch, bomb: bytes, named: str
) -> None:
    imdecode = cv2.imdecode

    def only_others(data: np.ndarray, flags: int) -> Any:
        assert data.tobytes() != bomb, "a refused picture reached the decoder"
        return imdecode(data, flags)

    monkeypatch.setattr(cv2, "imdecode", only_others)
    (pack.root / pack.pictures[0]).write_bytes(bomb)
    message = _error(pack)
    assert f"is a {named} picture; only PNG and JPEG pictures are read" in message


def test_a_corrupt_jpeg_adds_no_line_of_libjpeg(
    pack: WorkPack, capfd: pytest.CaptureFixture[str]
) -> None:
    jpeg = bytearray(encoded(200, 200, ".jpg"))
    middle = len(jpeg) // 2
    jpeg[middle : middle + 2] = b"\xff\xd0"  # a restart marker where none belongs
    (pack.root / pack.pictures[0]).write_bytes(bytes(jpeg))
    load_or_one_sentence(pack.root)
    assert capfd.readouterr().err == ""


def test_duplicate_ids_and_a_missing_ship_are_refused(pack: WorkPack) -> None:
    _toml_with(pack, lambda doc: doc["tile"].append(dict(doc["tile"][0])))
    assert "appears twice" in _error(pack)
    _toml_with(pack, lambda doc: doc.pop("ship"))
    assert "[ship]" in _error(pack)


def test_deep_or_huge_values_in_pack_toml_are_one_sentence(pack: WorkPack) -> None:
    path = pack.root / PACK_FILE
    path.write_bytes(pack.files[PACK_FILE] + b"\nextra = " + b"[" * 5000 + b"]" * 5000 + b"\n")
    assert "nested too deep" in _error(pack)
    path.write_bytes(pack.files[PACK_FILE] + b"\nextra = " + b"9" * 5000 + b"\n")
    assert "number is too long" in _error(pack)
    path.write_bytes(
        pack.files[PACK_FILE] + b'\n[board."a\\nb"]\nrows = 1\ncols = 1\nmap = ["."]\n'
    )
    assert "[board.'a\\nb']" in _error(pack)


@pytest.mark.parametrize(
    ("change", "words"),
    [
        (
            lambda doc: doc["tile"][0].update(count=2**63 - 1),
            "count must be a whole number from 1 to 100",
        ),
        (
            lambda doc: doc["tile"][0].update(palms=2**40),
            "palms must be a whole number from 0 to 9",
        ),
        (lambda doc: doc.update(tile_mm=1e308), "tile_mm must be a length between 20 and 100 mm"),
        (lambda doc: doc.update(name="n" * 81), "name must be a string of at most 80 characters"),
        (
            lambda doc: doc["board"]["front"].update(rows=13, map=["...."] * 13),
            "rows must be a whole number from 1 to 12",
        ),
        (
            lambda doc: doc["board"]["front"].update(printed_boats=10**9),
            "printed_boats must be a whole number from 0 to 20",
        ),
        (
            lambda doc: [tile.update(count=100) for tile in doc["tile"]],
            "tiles; a box has at most 500",
        ),
    ],
    ids=["count", "palms", "tile_mm", "name", "rows", "printed_boats", "total"],
)
def test_every_number_in_pack_toml_is_bounded(pack: WorkPack, change: Any, words: str) -> None:
    _toml_with(pack, change)
    assert words in _error(pack)


def test_the_pictures_of_a_pack_are_bounded_all_together(
    pack: WorkPack, monkeypatch: pytest.MonkeyPatch
) -> None:
    loaded = load_pack(pack.root)
    pictures = [*loaded.tiles.values(), loaded.ship, *loaded.boards.values()]
    # The drawn pack's pictures are 8-bit colour, the ship 8-bit colour with alpha.
    in_all = sum(p.shape[0] * p.shape[1] * max(3, p.shape[2]) for p in pictures)
    monkeypatch.setattr(pack_module, "MAX_PACK_BYTES", in_all)
    assert load_or_one_sentence(pack.root) is not None
    monkeypatch.setattr(pack_module, "MAX_PACK_BYTES", in_all - 1)
    assert "MB decoded in all" in _error(pack)


def _never_decoded(monkeypatch: pytest.MonkeyPatch, *refused: bytes) -> None:
    imdecode = cv2.imdecode

    def only_others(data: np.ndarray, flags: int) -> Any:
        assert data.tobytes() not in refused, "a refused picture reached the decoder"
        return imdecode(data, flags)

    monkeypatch.setattr(cv2, "imdecode", only_others)


def _tile_pictures(pack: WorkPack) -> list[Path]:
    return [pack.root / tile["image"] for tile in pack.toml["tile"]]


def test_a_deep_picture_under_the_pixel_limit_is_refused_by_its_bytes(
    pack: WorkPack, monkeypatch: pytest.MonkeyPatch
) -> None:
    board = pack.root / pack.toml["board"]["front"]["image"]
    bomb = png_deep(6000, 6000)  # 135 bytes; within a 4 x 4 board's sides, 288 MB decoded
    _never_decoded(monkeypatch, bomb, png_deep(7070, 7070))
    board.write_bytes(bomb)
    message = _error(pack)
    assert "6000 x 6000 px of 4 channels at 16 bits a channel, 288 MB decoded" in message
    assert "a picture decodes to at most 150 MB" in message
    for picture in [board, pack.root / pack.toml["ship"]["image"], *_tile_pictures(pack)[:5]]:
        pack.restore()
        picture.write_bytes(png_deep(7070, 7070))
        assert "says it is 7070 x 7070 px" in _error(pack)


def test_a_tile_picture_is_bounded_a_side(pack: WorkPack, monkeypatch: pytest.MonkeyPatch) -> None:
    bomb = jpeg_claiming(7000, 7000)  # 629 bytes; 147 MB decoded
    _never_decoded(monkeypatch, bomb)
    for picture in _tile_pictures(pack)[:5]:
        picture.write_bytes(bomb)
    message = _error(pack)
    assert "picture says it is 7000 x 7000 px; this picture has at most 1600 px a side" in message
    pack.restore()
    (pack.root / pack.toml["ship"]["image"]).write_bytes(bomb)
    assert "ship picture says it is 7000 x 7000 px" in _error(pack)


def test_a_board_picture_is_bounded_by_its_cells(
    pack: WorkPack, monkeypatch: pytest.MonkeyPatch
) -> None:
    board = pack.root / pack.toml["board"]["front"]["image"]
    cells = max(pack.toml["board"]["front"]["rows"], pack.toml["board"]["front"]["cols"])
    bomb = jpeg_claiming(cells * pack_module.MAX_TILE_PX + 1, 600)
    _never_decoded(monkeypatch, bomb)
    board.write_bytes(bomb)
    assert f"this picture has at most {cells * pack_module.MAX_TILE_PX} px a side" in _error(pack)


def test_a_scan_of_a_tile_at_600_dpi_is_taken(pack: WorkPack) -> None:
    side = round(45 / 25.4 * 600)  # 1063 px
    first = _tile_pictures(pack)[0]
    picture = cv2.imread(str(first), cv2.IMREAD_UNCHANGED)
    assert picture is not None
    scan = cv2.resize(picture, (side, side), interpolation=cv2.INTER_LINEAR)
    assert cv2.imwrite(str(first), scan.astype(np.uint16) * 257)  # at 16 bits a channel
    loaded = load_or_one_sentence(pack.root)
    assert loaded is not None
    assert max(p.shape[0] for p in loaded.tiles.values()) == side


def test_a_huge_picture_file_is_refused_before_it_is_read(pack: WorkPack) -> None:
    with (pack.root / pack.pictures[0]).open("r+b") as picture:
        picture.truncate(pack_module.MAX_PICTURE_BYTES + 1)  # sparse: nothing is written
    assert "picture is a file of over 100 MB" in _error(pack)
