"""Tiny picture files that declare huge pictures (decompression bombs), made in the test."""

from __future__ import annotations

import struct
import zlib

import cv2
import numpy as np


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


def png_deep(width: int, height: int) -> bytes:
    """A whole PNG (IHDR, one IDAT, IEND) declaring width x height pixels of colour with alpha
    at 16 bits a channel (8 bytes a pixel decoded), holding a single row of them."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        crc = zlib.crc32(kind + data) & 0xFFFFFFFF
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", crc)

    header = struct.pack(">IIBBBBB", width, height, 16, 6, 0, 0, 0)
    pixels = zlib.compress(b"\x00" * (8 * width + 1))
    signature = b"\x89PNG\r\n\x1a\n"
    return signature + chunk(b"IHDR", header) + chunk(b"IDAT", pixels) + chunk(b"IEND", b"")


def jpeg_claiming(width: int, height: int) -> bytes:
    """A small whole JPEG (of 8 x 8 px) whose start-of-frame header says width x height."""
    ok, encoded = cv2.imencode(".jpg", np.full((8, 8, 3), 128, np.uint8))
    assert ok
    jpeg = bytearray(encoded.tobytes())
    sof = next(i for i in range(2, len(jpeg) - 1) if jpeg[i] == 0xFF and jpeg[i + 1] == 0xC0)
    jpeg[sof + 5 : sof + 9] = struct.pack(">HH", height, width)
    return bytes(jpeg)
