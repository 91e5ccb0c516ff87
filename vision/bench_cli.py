"""`companion bench vision [--scenes N] [--seed S] [--pack-style STYLE] [--true-poses]
[--bare-table] [--hand-on-storage] [--table wood|cloth] [--keep-mistakes DIR]
[--lens K [--straighten]] [--set SECTION.NAME=VALUE]`.

Renders easy and hard tables with art packs the recogniser was not tuned on, reads them back
and prints wrong cells, abstentions, scenes read perfectly, the ship's accuracy and the read
time beside the frame's JPEG decode (vision.bench). OpenCV is imported only when it runs.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

STYLE_CHOICES = ("ink", "random", "lagoon")  # vision.artpacks.STYLES (not imported: numpy)
TABLE_CHOICES = ("wood", "cloth")  # vision.scene.TABLE_TOPS, likewise
DEFAULT_STYLES = ("ink", "random")


def configure(parser: argparse.ArgumentParser) -> None:
    """Add the arguments of `companion bench vision`."""
    parser.add_argument("--scenes", type=int, default=10,
                        help="scenes per difficulty and pack (default 10)")
    parser.add_argument("--seed", type=int, default=1, help="seed of the scenes (default 1)")
    parser.add_argument(
        "--pack-style", action="append", choices=STYLE_CHOICES, dest="styles",
        help="art style of the pack (repeatable; default: ink and random; the recogniser "
        "was tuned on lagoon)",
    )
    parser.add_argument("--bare-table", action="store_true",
                        help="no storage cards: every storage slot lies on the bare table")
    parser.add_argument("--hand-on-storage", action="store_true",
                        help="one more hand over one seat's storage slot on every table")
    parser.add_argument("--table", choices=TABLE_CHOICES, default="wood",
                        help="the table top: wood (default) or a cloth of one colour")
    parser.add_argument("--true-poses", action="store_true",
                        help="read through the renderer's exact poses (the recogniser alone)")
    parser.add_argument(
        "--keep-mistakes", metavar="DIR", type=Path,
        help="write every table with a mistake there (the frame as PNG, its pack beside it), "
        "to look at with `companion read`; DIR must be new or empty",
    )
    parser.add_argument(
        "--lens", type=float, default=0.0, metavar="K",
        help="draw the tables through a lens that bends straight lines by K (vision.lens: "
        "0.03 a normal lens's barrel, 0.1 and more a wide one's; default 0, a pinhole)",
    )
    parser.add_argument(
        "--straighten", action="store_true",
        help="straighten each frame with the lens's K before reading it (as a camera whose "
        "lens `companion lens` measured; the time counts in the read)",
    )
    parser.add_argument(
        "--set", action="append", default=[], dest="settings", metavar="SECTION.NAME=VALUE",
        help="read with one threshold of vision/config.py changed, e.g. cells.min_gain=0.3 "
        "(repeatable): to measure what it does",
    )


def run(args: argparse.Namespace) -> int:
    """Run the benchmark and print its figures."""
    from companion.errors import CompanionError
    from vision.bench import report, run_bench
    from vision.config import VisionConfig, with_settings

    if args.scenes < 1:
        raise CompanionError("--scenes must be at least 1")
    try:
        config = with_settings(VisionConfig(), args.settings)
    except ValueError as e:
        raise CompanionError(f"--set: {e}") from None
    from vision.lens import Lens

    try:
        Lens(args.lens)
    except ValueError as e:
        raise CompanionError(f"--lens: {e}") from None
    if args.straighten and not args.lens:
        raise CompanionError("--straighten needs --lens K: a pinhole's frames are straight")
    if args.lens and args.true_poses:
        raise CompanionError("--true-poses reads through the renderer's pinhole poses: "
                             "not with --lens")
    styles = tuple(args.styles or DEFAULT_STYLES)
    keep: Path | None = args.keep_mistakes
    if keep is not None:
        if keep.exists() and (not keep.is_dir() or any(keep.iterdir())):
            raise CompanionError(f"--keep-mistakes: {keep} exists and is not an empty folder")
        try:
            keep.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise CompanionError(f"--keep-mistakes: cannot make {keep} ({e.strerror})") from None

    def progress(text: str) -> None:
        print(text, file=sys.stderr, flush=True)

    results = run_bench(args.scenes, args.seed, styles, true_poses=args.true_poses,
                        config=config, progress=progress, storage_cards=not args.bare_table,
                        storage_hands=args.hand_on_storage, table_top=args.table,
                        keep_mistakes=keep, lens_k=args.lens, straighten=args.straighten)
    command = f"companion bench vision --scenes {args.scenes} --seed {args.seed}"
    command += "".join(f" --pack-style {s}" for s in styles)
    if args.true_poses:
        command += " --true-poses"
    if args.bare_table:
        command += " --bare-table"
    if args.hand_on_storage:
        command += " --hand-on-storage"
    if args.table != "wood":
        command += f" --table {args.table}"
    if args.lens:
        command += f" --lens {args.lens:g}" + (" --straighten" if args.straighten else "")
    command += "".join(f" --set {s}" for s in args.settings)
    print(report(results, command))
    return 0
