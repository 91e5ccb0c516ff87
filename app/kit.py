"""`companion kit --out DIR [--tile-mm 45]`: write the printable table kit (docs/table-kit.md)."""

from __future__ import annotations

import argparse

from companion.progress import terminal_progress
from vision.kit.printer import kit_files, write_kit


def configure(parser: argparse.ArgumentParser) -> None:
    """Add the arguments of `companion kit`."""
    parser.add_argument(
        "--out",
        required=True,
        metavar="DIR",
        help="folder to write the kit into (new, empty, or an earlier kit)",
    )
    parser.add_argument(
        "--tile-mm",
        type=float,
        default=45.0,
        metavar="MM",
        help="side of one island tile in millimetres (default 45)",
    )


def run(args: argparse.Namespace) -> int:
    """Write the kit and list what was written."""
    shown = terminal_progress("writing the kit")
    count = len(kit_files())
    written: list[str] = []

    def progress(name: str) -> None:
        written.append(name)
        if shown is not None:
            shown(len(written), count)

    files = write_kit(args.out, args.tile_mm, progress)
    print(f"Table kit written to {args.out} (tile {args.tile_mm:g} mm):")
    for path in files:
        print(f"  {path.name}")
    print("Print every PDF at 100 % and check the scale bar; start with setup-guide-A4.pdf.")
    return 0
