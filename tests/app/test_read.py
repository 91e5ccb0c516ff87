"""`companion read`: the docs/formats.md JSON on stdout, or exit 2 and one line for bad input."""

from __future__ import annotations

import json
import struct
import zlib
from pathlib import Path

import cv2
import numpy as np
import pytest

from app.cli import main
from tests.vision.bombs import png_deep, rle_bmp, webp_header
from vision.box.pack import Pack
from vision.synthetic.render import Effects, random_camera, render_table
from vision.synthetic.scene import random_scene


@pytest.fixture(scope="module")
def photo(tmp_path_factory: pytest.TempPathFactory, pack_lagoon: Pack) -> Path:
    rng = np.random.default_rng(21)
    scene = random_scene(pack_lagoon.catalogue, rng, n_seats=2, difficulty="easy")
    rendered = render_table(
        scene, pack_lagoon, random_camera(rng, scene, pack_lagoon), Effects.easy(), rng
    )
    path = tmp_path_factory.mktemp("photos") / "table.jpg"
    cv2.imwrite(str(path), rendered.image, [cv2.IMWRITE_JPEG_QUALITY, 92])
    return path


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(["read", *argv])
    out, err = capsys.readouterr()
    return status, out, err


@pytest.mark.slow
def test_json_is_the_formats_md_object(
    capsys: pytest.CaptureFixture[str], photo: Path, pack_dirs: dict[str, Path]
) -> None:
    status, out, err = _run(capsys, str(photo), "--pack", str(pack_dirs["lagoon"]), "--json")
    assert status == 0, err
    data = json.loads(out)
    assert set(data) == {"display", "seats", "warnings"}
    assert set(data["display"]) == {"cells", "ship"}
    assert len(data["seats"]) == 2
    for cell in (c for row in data["display"]["cells"] for c in row):
        assert set(cell) in ({"tile", "rotation", "confidence"}, {"empty"}, {"unknown"})


@pytest.mark.slow
def test_without_json_a_short_summary(
    capsys: pytest.CaptureFixture[str], photo: Path, pack_dirs: dict[str, Path]
) -> None:
    status, out, _ = _run(capsys, str(photo), "--pack", str(pack_dirs["lagoon"]))
    assert status == 0
    assert out.startswith("display (rows from north")
    assert "ship:" in out and out.count("\nseat ") == 2


def _png_header(width: int, height: int) -> bytes:
    """A PNG that declares a size and holds (almost) nothing."""
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    chunk = b"IHDR" + ihdr
    crc = struct.pack(">I", zlib.crc32(chunk) & 0xFFFFFFFF)
    return b"\x89PNG\r\n\x1a\n" + struct.pack(">I", len(ihdr)) + chunk + crc


@pytest.mark.parametrize(
    ("name", "content", "problem"),
    [
        ("missing.jpg", None, "no such file"),
        ("empty.jpg", b"", "is empty"),
        ("notes.txt", b"this is not a photo\n", "is not a picture"),
        ("huge.png", _png_header(10_000, 10_000), "at most 50 million pixels"),
        ("deep.png", png_deep(7070, 7070), "399 MB decoded; a picture decodes to at most 150 MB"),
        ("bomb.bmp", rle_bmp(30_000, 30_000), "is a BMP picture; only PNG and JPEG"),
        ("bomb.webp", webp_header(16_384, 16_384), "is a WebP picture; only PNG and JPEG"),
        ("half.jpg", "half-jpeg", "is cut off"),
        ("half.png", "half-png", "is cut off"),
    ],
)
def test_bad_photos_end_with_exit_2_and_one_line(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    photo: Path,
    pack_dirs: dict[str, Path],
    name: str,
    content: bytes | str | None,
    problem: str,
) -> None:
    path = tmp_path / name
    if content == "half-jpeg":
        data = photo.read_bytes()
        path.write_bytes(data[: len(data) // 2])
    elif content == "half-png":
        image = cv2.imread(str(photo))
        assert image is not None
        _, buf = cv2.imencode(".png", image)
        path.write_bytes(buf.tobytes()[: len(buf) // 2])
    elif isinstance(content, bytes):
        path.write_bytes(content)
    status, out, err = _run(capsys, str(path), "--pack", str(pack_dirs["lagoon"]), "--json")
    assert status == 2
    assert out == ""
    assert err.count("\n") == 1 and err.startswith("companion: ")
    assert str(path) in err and problem in err


@pytest.mark.slow
def test_a_damaged_jpeg_is_one_line_without_libjpegs_own(
    capfd: pytest.CaptureFixture[str], tmp_path: Path, photo: Path, pack_dirs: dict[str, Path]
) -> None:
    data = bytearray(photo.read_bytes())
    middle = len(data) // 2
    data[middle : middle + 2] = b"\xff\xd0"  # a restart marker where none belongs
    path = tmp_path / "damaged.jpg"
    path.write_bytes(bytes(data))
    main(["read", str(path), "--pack", str(pack_dirs["lagoon"]), "--json"])
    err = capfd.readouterr().err
    assert "JPEG data" not in err and err.count("\n") <= 1


def test_a_directory_is_not_a_photo(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, pack_dirs: dict[str, Path]
) -> None:
    status, _, err = _run(capsys, str(tmp_path), "--pack", str(pack_dirs["lagoon"]))
    assert status == 2 and "is a directory" in err and err.count("\n") == 1


def test_a_photo_without_the_kit_names_the_photo(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, pack_dirs: dict[str, Path]
) -> None:
    path = tmp_path / "wall.png"
    cv2.imwrite(str(path), np.full((720, 1280, 3), 200, np.uint8))
    status, out, err = _run(capsys, str(path), "--pack", str(pack_dirs["lagoon"]), "--json")
    assert status == 2 and out == ""
    assert err == f"companion: {path}: no markers of the table kit in the photo\n"
    assert err.count(str(path)) == 1  # the photo is named once


def test_a_bad_pack_ends_with_exit_2_and_one_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, photo: Path
) -> None:
    status, out, err = _run(capsys, str(photo), "--pack", str(tmp_path), "--json")
    assert status == 2 and out == ""
    assert err.count("\n") == 1 and "pack.toml" in err


def test_a_side_the_pack_lacks_is_refused(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, photo: Path, pack_dirs: dict[str, Path]
) -> None:
    status, _, err = _run(capsys, str(photo), "--pack", str(pack_dirs["lagoon"]), "--side", "x")
    assert status == 2 and "--side" in err
