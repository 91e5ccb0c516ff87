"""Tiny picture files that declare huge pictures (decompression bombs), made in the test."""

from __future__ import annotations

import struct


def rle_bmp(width: int, height: int) -> bytes:
    """An 8-bit run-length BMP declaring width x height pixels, whose data ends at once."""
    palette = bytes(4 * 256)
    data = b"\x00\x01"  # RLE8 "end of bitmap": every pixel left is the first colour
    offset = 14 + 40 + len(palette)
    info = struct.pack("<IiiHHIIiiII", 40, width, height, 1, 8, 1, len(data), 2835, 2835, 256, 0)
    head = b"BM" + struct.pack("<IHHI", offset + len(data), 0, 0, offset)
    return head + info + palette + data


def webp_header(width: int, height: int) -> bytes:
    """A lossless WebP declaring width x height pixels (at most 16384 a side), a few bytes of
    image data after its header."""
    bits = (width - 1) | ((height - 1) << 14)  # alpha hint 0, version 0
    payload = b"\x2f" + struct.pack("<I", bits) + bytes(63)
    chunk = b"VP8L" + struct.pack("<I", len(payload)) + payload
    return b"RIFF" + struct.pack("<I", 4 + len(chunk)) + b"WEBP" + chunk
