"""Picture files that people hand the companion: pack pictures, photos of the table, teaching
frames. Only PNG and JPEG are read (docs/formats.md); a file's declared size and its end are checked
before anything is decoded, so a small file declaring a huge picture never reaches a decoder.

`check_picture` reads nothing but the header and the last bytes (the size, and what the picture
decodes to in bytes: its channels and bit depth included); `decode` runs OpenCV with the
process's standard error closed, so libjpeg's own warnings ("Corrupt JPEG data: ...") never add
a line to the one-sentence error of a command line tool or a service's start (its pack). The
folder camera, which decodes while the phone pages are served, decodes with it open.
"""

from __future__ import annotations

import contextlib
import os
import struct
import sys
import threading
from collections.abc import Iterator

import cv2
import numpy as np

#: The most pixels a picture may have (a 50 MP photo): a small file that declares a huge
#: picture would otherwise take gigabytes to decode on the Pi.
MAX_PICTURE_PIXELS = 50_000_000
#: The most bytes a picture may decode to, at its own bit depth and channels (grey counted as
#: colour, a palette as colour with alpha): a 50 MP colour photo at 8 bits a channel. A
#: 16-bit picture with alpha costs 8 bytes a pixel, so one of 7070 x 7070 px (under the pixel
#: limit, a few hundred KB of file) would take 400 MB before any conversion.
MAX_DECODED_BYTES = 150_000_000
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
#: JPEG start-of-frame markers (they carry the picture's size); not DHT, JPG or DAC.
_JPEG_SOF = frozenset(range(0xC0, 0xD0)) - {0xC4, 0xC8, 0xCC}
#: How far from a JPEG's end its end-of-image marker may lie (some cameras add a trailer).
JPEG_TAIL_BYTES = 1024
#: Formats OpenCV or Pillow would decode but the companion refuses, by their first bytes.
_OTHER_FORMATS: tuple[tuple[bytes, str], ...] = (
    (b"BM", "BMP"),
    (b"GIF8", "GIF"),
    (b"II*\x00", "TIFF"),
    (b"MM\x00*", "TIFF"),
    (b"\x00\x00\x00\x0cjP  ", "JPEG 2000"),
    (b"\xff\x4f\xff\x51", "JPEG 2000"),
    (b"\x76\x2f\x31\x01", "OpenEXR"),
    (b"#?RADIANCE", "Radiance HDR"),
    (b"\x59\xa6\x6a\x95", "Sun raster"),
    (b"P1", "PNM"),
    (b"P2", "PNM"),
    (b"P3", "PNM"),
    (b"P4", "PNM"),
    (b"P5", "PNM"),
    (b"P6", "PNM"),
    (b"P7", "PAM"),
    (b"PF", "PFM"),
    (b"Pf", "PFM"),
)
_stderr_lock = threading.Lock()


class PictureRefused(ValueError):
    """A picture file that is not read: its one-sentence reason is `str(error)`."""


def picture_format(data: bytes) -> str | None:
    """The format from the file's first bytes: "PNG", "JPEG", or None for anything else."""
    if data.startswith(PNG_SIGNATURE):
        return "PNG"
    if data.startswith(b"\xff\xd8\xff"):
        return "JPEG"
    return None


def _other_format(data: bytes) -> str | None:
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "WebP"
    if data[4:12] in (b"ftypavif", b"ftypheic", b"ftypmif1"):
        return "AVIF/HEIF"
    return next((name for magic, name in _OTHER_FORMATS if data.startswith(magic)), None)


def declared_layout(data: bytes) -> tuple[int, int, int, int] | None:
    """(width, height, channels, bytes a sample) as a PNG or JPEG file's header declares
    it, the channels as a decoder gives them (at least 3: grey is decoded as colour; a
    PNG palette as colour with alpha, a JPEG's components as they are); None when it has
    no header."""
    if data.startswith(PNG_SIGNATURE) and data[12:16] == b"IHDR" and len(data) >= 26:
        width, height, depth, colour = struct.unpack(">IIBB", data[16:26])
        channels = 3 if colour in (0, 2) else 4  # 3 palette, 4 grey+alpha, 6 colour+alpha
        return int(width), int(height), channels, 2 if depth > 8 else 1
    if not data.startswith(b"\xff\xd8"):
        return None
    i = 2
    while i + 10 <= len(data) and data[i] == 0xFF:
        marker = data[i + 1]
        if marker == 0xFF:  # a fill byte before the marker
            i += 1
        elif marker in _JPEG_SOF:
            precision = data[i + 4]
            height, width = struct.unpack(">HH", data[i + 5 : i + 9])
            components = data[i + 9]
            return int(width), int(height), max(3, components), 2 if precision > 8 else 1
        elif marker == 0x01 or 0xD0 <= marker <= 0xD8:  # markers without a length
            i += 2
        else:
            i += 2 + int.from_bytes(data[i + 2 : i + 4], "big")
    return None


def decoded_bytes(data: bytes) -> int | None:
    """What a PNG or JPEG file decodes to, in bytes, from its header (None: no header)."""
    layout = declared_layout(data)
    if layout is None:
        return None
    width, height, channels, sample = layout
    return width * height * channels * sample


def is_complete(data: bytes, kind: str) -> bool:
    """A JPEG ends with its end-of-image marker, a PNG with its IEND chunk (decoders read a
    cut-off file silently as a half-grey picture, or say so on standard error)."""
    if kind == "JPEG":
        return b"\xff\xd9" in data[-JPEG_TAIL_BYTES:]
    return b"IEND" in data[-32:]


def check_picture(
    data: bytes,
    max_pixels: int,
    *,
    complete: bool = True,
    max_bytes: int = MAX_DECODED_BYTES,
    max_side: int | None = None,
) -> tuple[str, int, int]:
    """(format, width, height) of a PNG or JPEG file, from its header only; PictureRefused
    when it is another format, declares no size, no pixels, more than `max_pixels`, more
    than `max_side` px a side, a picture that decodes to more than `max_bytes`, or (with
    `complete`) does not end as such a file ends."""
    if not data:
        raise PictureRefused("is empty")
    kind = picture_format(data)
    if kind is None:
        other = _other_format(data)
        if other is not None:
            raise PictureRefused(f"is a {other} picture; only PNG and JPEG pictures are read")
        raise PictureRefused("is not a picture (PNG or JPEG)")
    layout = declared_layout(data)
    if layout is None:
        raise PictureRefused(f"is not a readable {kind} picture (its header is damaged)")
    width, height, channels, sample = layout
    if width == 0 or height == 0:
        raise PictureRefused(f"is a {kind} picture without pixels ({width} x {height} px)")
    if width * height > max_pixels:
        raise PictureRefused(
            f"says it is {width} x {height} px; a picture has at most "
            f"{max_pixels // 1_000_000} million pixels"
        )
    if max_side is not None and max(width, height) > max_side:
        raise PictureRefused(
            f"says it is {width} x {height} px; this picture has at most {max_side} px a side"
        )
    cost = width * height * channels * sample
    if cost > max_bytes:
        raise PictureRefused(
            f"says it is {width} x {height} px of {channels} channels at {8 * sample} bits "
            f"a channel, {cost // 1_000_000} MB decoded; a picture decodes to at most "
            f"{max_bytes // 1_000_000} MB (save it smaller or at 8 bits a channel)"
        )
    if complete and not is_complete(data, kind):
        raise PictureRefused(f"is cut off (the {kind} file is truncated)")
    return kind, width, height


@contextlib.contextmanager
def _stderr_closed() -> Iterator[None]:
    """Standard error (file descriptor 2) points at /dev/null inside the block."""
    with _stderr_lock:
        sys.stderr.flush()
        saved = os.dup(2)
        try:
            null = os.open(os.devnull, os.O_WRONLY)
            try:
                os.dup2(null, 2)
            finally:
                os.close(null)
            yield
        finally:
            os.dup2(saved, 2)
            os.close(saved)


def decode(data: bytes, flags: int, *, quiet: bool = True) -> np.ndarray | None:
    """OpenCV's decode of a checked picture (None when it cannot); `quiet`: saying nothing on
    standard error (which is closed for the whole process meanwhile: not for a thread that
    decodes while the phone pages are served)."""
    try:
        with _stderr_closed() if quiet else contextlib.nullcontext():
            image = cv2.imdecode(np.frombuffer(data, np.uint8), flags)
    except cv2.error:
        return None
    if image is None or image.size == 0:
        return None
    return np.asarray(image)
