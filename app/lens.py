"""`companion lens IMAGE [IMAGE ...] [--tile-mm 45]`: measure how the camera's lens bends
straight lines, from photos of the table (vision.reader.lens.measure_lens: the kit's markers place
every area on one table plane at the kit's scale once the bend is taken out).

The bend is printed for each photo and for all of them together, with the setting that makes
the table service straighten every frame (`lens_k` under [camera]) and the option that makes
`companion read` do so (`--lens K`). A photo that shows fewer than two areas with three
markers each is named and left out; bad input ends with exit status 2 and one line naming
the file.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from companion.errors import CompanionError

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    from vision.config import VisionConfig
    from vision.reader.markers import MarkerSighting


def configure(parser: argparse.ArgumentParser) -> None:
    """Add the arguments of `companion lens`."""
    parser.add_argument(
        "images",
        nargs="+",
        metavar="IMAGE",
        help="photos from the camera of the whole laid-out kit (the display "
        "mat and the seats' markers; move the boards between photos)",
    )
    parser.add_argument(
        "--tile-mm",
        type=float,
        default=45.0,
        metavar="MM",
        help="side of one island tile in millimetres, as the kit was printed (default 45)",
    )


def run(args: argparse.Namespace) -> int:
    """Measure the photos and print the bend to set."""
    from app.read import FrameError, read_frame
    from companion.catalogue import default_boards
    from vision.config import VisionConfig
    from vision.reader.lens import NEGLIGIBLE_K, measure_lens

    if not args.tile_mm > 0:
        raise CompanionError(f"--tile-mm must be a positive length, not {args.tile_mm:g}")
    config = VisionConfig()
    layout = default_boards()["front"]
    photos = []
    singles = []
    lines = []  # printed once every photo has been read (a bad one prints nothing)
    for name in args.images:
        image = read_frame(Path(name), config.read.max_pixels)
        markers = photo_markers(image, config)
        if not markers:
            raise FrameError(name, "no markers of the table kit in the photo")
        one = measure_lens(
            [(markers, image.shape[1], image.shape[0])], args.tile_mm, layout, config.areas
        )
        if one is None:
            lines.append(f"{name}: fewer than two areas with three markers seen; left out")
            continue
        photos.append((markers, image.shape[1], image.shape[0]))
        singles.append(one)
        lines.append(
            f"{name}: k = {one.k:.3f} ({one.areas} areas beside the reference, their "
            f"scales {one.seen_off_pct:.1f} % off as seen, "
            f"{one.straightened_off_pct:.1f} % straightened)"
        )
    # One photo's own measure is the whole measure; several are measured together.
    measure = singles[0] if len(singles) == 1 else None
    if len(photos) > 1:
        measure = measure_lens(photos, args.tile_mm, layout, config.areas)
    if measure is None:
        raise CompanionError(
            "no photo shows two areas of the kit with three markers each: "
            "take one of the whole table with nothing over the markers"
        )
    lines.append(
        f"lens bend k = {measure.k:.3f} (from {len(photos)} photo{'s' if len(photos) > 1 else ''})"
    )
    if abs(measure.k) < NEGLIGIBLE_K:
        lines.append("Straight enough: nothing to set.")
    else:
        lines.append(
            f"Set `lens_k = {measure.k:.3f}` under [camera] in the table's settings; "
            f"`companion read` takes `--lens {measure.k:.3f}`."
        )
    print("\n".join(lines))
    return 0


def photo_markers(image: NDArray[np.uint8], config: VisionConfig) -> dict[int, MarkerSighting]:
    """The kit's markers seen in a BGR photo, by id."""
    import cv2
    import numpy as np

    from vision.reader.markers import detect_markers

    gray = np.asarray(cv2.cvtColor(image, cv2.COLOR_BGR2GRAY), np.uint8)
    return detect_markers(gray, config.markers)
