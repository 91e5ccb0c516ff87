"""`companion read IMAGE --pack DIR [--side front|atoll] [--json] [--lens K]`: read one photo of
the table (straightened first for a camera whose lens bends straight lines, vision.reader.lens).

With --json it prints exactly the object of docs/formats.md ("Reading a table"); without, a short
summary a person can check against the table. Bad input (a missing, empty, truncated,
enormous or non-image file, a bad pack, a picture without the kit) ends with exit status 2
and one line naming the file.
"""

from __future__ import annotations

import argparse
import io
import json
import warnings
from dataclasses import replace
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from companion.catalogue import BOARD_SIDES
from companion.errors import CompanionError, DataError
from companion.reading import CellRead, TableRead
from vision.config import VisionConfig

#: A photo file larger than this is refused before it is read (no camera writes one).
MAX_FILE_BYTES = 200_000_000


class FrameError(DataError):
    """The IMAGE given to `companion read` cannot be read as a photo."""


def configure(parser: argparse.ArgumentParser) -> None:
    """Add the arguments of `companion read`."""
    parser.add_argument("image", metavar="IMAGE", help="a photo of the table (JPEG or PNG)")
    parser.add_argument("--pack", required=True, metavar="DIR", help="the tile pack directory")
    parser.add_argument(
        "--side", choices=BOARD_SIDES, default="front", help="the boards' side in play (front)"
    )
    parser.add_argument(
        "--json", action="store_true", help="print the read as one JSON object (docs/formats.md)"
    )
    parser.add_argument(
        "--recogniser",
        choices=("matcher", "net"),
        default=VisionConfig().read.recogniser,
        help="what names each cell: the matcher and the box's judge, or the cell network "
        "(docs/cellnet.md); default %(default)s",
    )
    parser.add_argument(
        "--lens",
        type=float,
        default=0.0,
        metavar="K",
        help="straighten the photo first: the camera's lens bends straight lines by K "
        "(`companion lens` measures it; default 0, none)",
    )


def run(args: argparse.Namespace) -> int:
    """Read the photo and print what is on the table."""
    from vision.box.pack import load_pack
    from vision.reader.lens import Lens
    from vision.reader.read import TableNotFound, TableReader

    try:
        lens = Lens(args.lens)
    except ValueError as e:
        raise CompanionError(f"--lens: {e}") from None
    config = VisionConfig()
    config = replace(config, read=replace(config.read, recogniser=args.recogniser))
    pack = load_pack(args.pack)
    pack.catalogue.board(args.side)  # a pack without that side fails before the photo is read
    image = read_frame(Path(args.image), config.read.max_pixels)
    width, height = lens.canvas(image.shape[1], image.shape[0])
    if width * height > config.read.max_pixels:
        raise FrameError(
            args.image,
            f"straightened it would be {width} x {height} pixels; a "
            f"photo may have at most {config.read.max_pixels // 1_000_000} "
            "megapixels",
        )
    image = lens.straighten(image)
    try:
        with TableReader(pack, side=args.side, config=config) as reader:
            table = reader.read(image)
    except TableNotFound:
        raise FrameError(args.image, "no markers of the table kit in the photo") from None
    if args.json:
        print(json.dumps(table.to_json()))
    else:
        print(summary(table))
    return 0


def read_frame(path: Path, max_pixels: int) -> NDArray[np.uint8]:
    """Decode a PNG or JPEG photo as BGR, checking its header before decoding; FrameError on
    any problem."""
    import cv2
    from PIL import Image

    from vision.reader.picture import PictureRefused, check_picture, decode, is_complete

    source = str(path)
    try:
        size = path.stat().st_size
        if path.is_dir():
            raise FrameError(source, "is a directory, not a photo")
        if size == 0:
            raise FrameError(source, "is empty")
        if size > MAX_FILE_BYTES:
            raise FrameError(
                source,
                f"is {size // 1_000_000} MB; a photo has at most {MAX_FILE_BYTES // 1_000_000} MB",
            )
        data = path.read_bytes()
    except FileNotFoundError:
        raise FrameError(source, "no such file") from None
    except OSError as exc:
        raise FrameError(source, f"cannot be read ({exc.strerror or exc})") from None
    try:
        kind, _width, _height = check_picture(data, max_pixels, complete=False)
    except PictureRefused as exc:
        raise FrameError(source, str(exc)) from None
    truncated = FrameError(source, f"is cut off (the {kind} file is truncated)")
    image: NDArray[np.uint8] | None = None
    # OpenCV is the quick decoder but says nothing of a cut-off file, so it only gets files
    # that end as they should; Pillow decodes (and judges) the rest.
    if is_complete(data, kind):
        decoded = decode(data, cv2.IMREAD_COLOR)
        image = None if decoded is None else np.asarray(decoded, np.uint8)
    if image is None:
        try:
            with warnings.catch_warnings():
                # The size is checked above, from the header.
                warnings.simplefilter("ignore", Image.DecompressionBombWarning)
                with Image.open(io.BytesIO(data)) as picture:
                    picture.load()
                    rgb = np.asarray(picture.convert("RGB"), np.uint8)
        except (OSError, ValueError, SyntaxError, Image.DecompressionBombError):
            raise truncated from None
        image = np.ascontiguousarray(rgb[:, :, ::-1])
    return image


def _cell_text(cell: CellRead | None) -> str:
    if cell is None:
        return "#"
    if cell.empty:
        return "."
    if cell.tile is None:
        return "?"
    return f"{cell.tile}@{cell.rotation}"


def summary(table: TableRead) -> str:
    """A short human summary: the display, the ship, each seat, the warnings."""
    lines: list[str] = ["display (rows from north; '.' empty, '?' unknown):"]
    cells = [[_cell_text(c) for c in row] for row in table.display]
    widths = [max(len(row[i]) for row in cells) for i in range(4)]
    for row in cells:
        lines.append("  " + "  ".join(text.ljust(w) for text, w in zip(row, widths, strict=True)))
    lines.append(f"ship: {'not seen' if table.ship is None else f'position {table.ship}'}")
    if not table.seats:
        lines.append("seats: none seen")
    for seat in sorted(table.seats):
        read = table.seats[seat]
        flat = [c for row in read.cells for c in row if c is not None]
        tiles = sum(1 for c in flat if c.tile is not None)
        empty = sum(1 for c in flat if c.empty)
        unknown = len(flat) - tiles - empty
        storage = _cell_text(read.storage)
        lines.append(
            f"seat {seat}: {tiles} tiles, {empty} empty, {unknown} unknown; storage {storage}"
        )
        for board_row in read.cells:
            lines.append("    " + "  ".join(_cell_text(c) for c in board_row))
    for warning in table.warnings:
        lines.append(f"warning: {warning}")
    return "\n".join(lines)
