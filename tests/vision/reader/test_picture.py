"""What a picture costs, read from its header before any decoder runs (vision.reader.picture)."""

from __future__ import annotations

import struct
import zlib

import cv2
import numpy as np
import pytest

from tests.vision.bombs import jpeg_claiming, png_deep
from vision.reader.picture import (
    MAX_DECODED_BYTES,
    MAX_PICTURE_PIXELS,
    PictureRefused,
    check_picture,
    declared_layout,
    decoded_bytes,
)


def _png(width: int, height: int, depth: int, colour: int) -> bytes:
    header = struct.pack(">IIBBBBB", width, height, depth, colour, 0, 0, 0)
    crc = struct.pack(">I", zlib.crc32(b"IHDR" + header) & 0xFFFFFFFF)
    return b"\x89PNG\r\n\x1a\n" + struct.pack(">I", 13) + b"IHDR" + header + crc


@pytest.mark.parametrize(
    ("depth", "colour", "channels", "sample"),
    [
        (1, 0, 3, 1),
        (8, 0, 3, 1),
        (16, 0, 3, 2),
        (8, 2, 3, 1),
        (16, 2, 3, 2),
        (8, 3, 4, 1),
        (16, 4, 4, 2),
        (8, 6, 4, 1),
        (16, 6, 4, 2),
    ],
)
def test_a_png_costs_its_channels_and_bit_depth(
    depth: int, colour: int, channels: int, sample: int
) -> None:
    assert declared_layout(_png(300, 200, depth, colour)) == (300, 200, channels, sample)
    assert decoded_bytes(_png(300, 200, depth, colour)) == 300 * 200 * channels * sample


def test_a_jpeg_costs_its_components_and_precision() -> None:
    jpeg = bytearray(jpeg_claiming(640, 480))
    assert declared_layout(bytes(jpeg)) == (640, 480, 3, 1)
    sof = jpeg.index(b"\xff\xc0")
    jpeg[sof + 4] = 12  # a 12-bit JPEG decodes to 16 bits a sample
    jpeg[sof + 9] = 4  # CMYK
    assert declared_layout(bytes(jpeg)) == (640, 480, 4, 2)


def test_a_deep_png_under_the_pixel_limit_is_refused_by_its_bytes() -> None:
    bomb = png_deep(7070, 7070)
    assert len(bomb) < 1000 and MAX_PICTURE_PIXELS > 7070 * 7070
    with pytest.raises(PictureRefused) as refused:
        check_picture(bomb, MAX_PICTURE_PIXELS)
    assert str(refused.value) == (
        "says it is 7070 x 7070 px of 4 channels at 16 bits a channel, 399 MB decoded; "
        f"a picture decodes to at most {MAX_DECODED_BYTES // 1_000_000} MB "
        "(save it smaller or at 8 bits a channel)"
    )


def test_a_photo_of_the_pixel_limit_at_8_bits_is_within_the_bytes() -> None:
    side = int(MAX_PICTURE_PIXELS**0.5)
    assert check_picture(_png(side, side, 8, 2), MAX_PICTURE_PIXELS, complete=False)
    assert check_picture(jpeg_claiming(7000, 7000), MAX_PICTURE_PIXELS)[1:] == (7000, 7000)


def test_a_side_limit_is_checked_from_the_header() -> None:
    with pytest.raises(PictureRefused) as refused:
        check_picture(jpeg_claiming(7000, 7000), MAX_PICTURE_PIXELS, max_side=1600)
    assert str(refused.value) == (
        "says it is 7000 x 7000 px; this picture has at most 1600 px a side"
    )


@pytest.mark.parametrize(
    ("picture", "cost"),
    [
        (np.zeros((40, 60, 4), np.uint16), 40 * 60 * 4 * 2),
        (np.zeros((40, 60, 3), np.uint8), 40 * 60 * 3),
        (np.zeros((40, 60), np.uint8), 40 * 60 * 3),
    ],
    ids=["colour-alpha-16", "colour-8", "grey-8"],
)
def test_the_header_counts_at_least_what_the_decoder_makes(picture: np.ndarray, cost: int) -> None:
    ok, encoded = cv2.imencode(".png", picture)
    assert ok
    assert decoded_bytes(encoded.tobytes()) == cost
    for flags in (cv2.IMREAD_UNCHANGED, cv2.IMREAD_COLOR):
        decoded = cv2.imdecode(encoded, flags)
        assert decoded is not None and decoded.nbytes <= cost
