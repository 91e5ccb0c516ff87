"""`companion bench vision [--scenes N] [--seed S] [--pack-style STYLE] [--true-poses]
[--bare-table] [--hand-on-storage] [--table wood|cloth] [--keep-mistakes DIR]
[--lens K [--straighten]] [--set SECTION.NAME=VALUE] [--scenes-dir DIR] [--no-render]
[--csv FILE]`.

Renders easy and hard tables with art packs the recogniser was not tuned on, reads them back
and prints wrong cells, abstentions, scenes read perfectly, the ship's accuracy, the answered
cells' calibration and the read time beside the frame's JPEG decode (app.bench.rendered). Each set
of a `--scenes-dir` (a folder of photos with truth, app.bench.scenes) is read and judged
too; every set's figures end the report side by side, one line each (and in `--csv FILE`).
OpenCV is imported only when it runs.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from vision.config import VisionConfig

from app.bench.options import add_settings, check_csv, settings_config
from companion.progress import terminal_progress

STYLE_CHOICES = (
    "ink",
    "random",
    "lagoon",
)  # vision.synthetic.artpacks.STYLES (not imported: numpy)
TABLE_CHOICES = ("wood", "cloth")  # vision.synthetic.scene.TABLE_TOPS, likewise
DEFAULT_STYLES = ("ink", "random")


def configure(parser: argparse.ArgumentParser) -> None:
    """Add the arguments of `companion bench vision`."""
    parser.add_argument(
        "--scenes", type=int, default=10, help="scenes per difficulty and pack (default 10)"
    )
    parser.add_argument("--seed", type=int, default=1, help="seed of the scenes (default 1)")
    parser.add_argument(
        "--pack-style",
        action="append",
        choices=STYLE_CHOICES,
        dest="styles",
        help="art style of the pack (repeatable; default: ink and random; the recogniser "
        "was tuned on lagoon)",
    )
    parser.add_argument(
        "--bare-table",
        action="store_true",
        help="no storage cards: every storage slot lies on the bare table",
    )
    parser.add_argument(
        "--hand-on-storage",
        action="store_true",
        help="one more hand over one seat's storage slot on every table",
    )
    parser.add_argument(
        "--table",
        choices=TABLE_CHOICES,
        default="wood",
        help="the table top: wood (default) or a cloth of one colour",
    )
    parser.add_argument(
        "--true-poses",
        action="store_true",
        help="read through the renderer's exact poses (the recogniser alone)",
    )
    parser.add_argument(
        "--keep-mistakes",
        metavar="DIR",
        type=Path,
        help="write every table with a mistake there (the frame as PNG, its pack beside it), "
        "to look at with `companion read`; DIR must be new or empty",
    )
    parser.add_argument(
        "--lens",
        type=float,
        default=0.0,
        metavar="K",
        help="draw the tables through a lens that bends straight lines by K (vision.reader.lens: "
        "0.03 a normal lens's barrel, 0.1 and more a wide one's; default 0, a pinhole)",
    )
    parser.add_argument(
        "--straighten",
        action="store_true",
        help="straighten each frame with the lens's K before reading it (as a camera whose "
        "lens `companion lens` measured; the time counts in the read)",
    )
    add_settings(
        parser,
        "read with one threshold of vision/config.py changed, e.g. cells.min_gain=0.3 "
        "(repeatable): to measure what it does",
    )
    parser.add_argument(
        "--scenes-dir",
        action="append",
        default=[],
        dest="scenes_dirs",
        metavar="DIR",
        type=Path,
        help="also read and judge each set of scenes in DIR (pack/ and sets/<name>/NN.jpg "
        "with NN.json, the development set's format; repeatable)",
    )
    parser.add_argument(
        "--no-render",
        action="store_true",
        help="read only the --scenes-dir sets, no rendered tables",
    )
    parser.add_argument(
        "--csv",
        metavar="FILE",
        type=Path,
        help="write one row per set (rendered and scenes) with its figures",
    )


def _checked(args: argparse.Namespace) -> VisionConfig:
    """The config the arguments ask for; a CompanionError for arguments that do not fit."""
    from companion.errors import CompanionError

    if args.scenes < 1:
        raise CompanionError("--scenes must be at least 1")
    config = settings_config(args.settings)
    from vision.reader.lens import Lens

    try:
        Lens(args.lens)
    except ValueError as e:
        raise CompanionError(f"--lens: {e}") from None
    if args.straighten and not args.lens:
        raise CompanionError("--straighten needs --lens K: a pinhole's frames are straight")
    if args.lens and args.true_poses:
        raise CompanionError(
            "--true-poses reads through the renderer's pinhole poses: not with --lens"
        )
    if args.no_render and not args.scenes_dirs:
        raise CompanionError("--no-render leaves nothing to read without --scenes-dir DIR")
    return config


def _command(args: argparse.Namespace, styles: tuple[str, ...]) -> str:
    """The command line that runs this benchmark again."""
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
    command += "".join(f" --scenes-dir {d}" for d in args.scenes_dirs)
    if args.no_render:
        command += " --no-render"
    if args.csv is not None:
        command += f" --csv {args.csv}"
    return command


def run(args: argparse.Namespace) -> int:
    """Run the benchmark and print its figures."""
    from app.bench.rendered import report, run_bench
    from companion.errors import CompanionError

    config = _checked(args)
    csv_path: Path | None = args.csv
    check_csv(csv_path)
    from app.bench.scenes import open_scenes

    folders = [open_scenes(d) for d in args.scenes_dirs]
    styles = tuple(args.styles or DEFAULT_STYLES)
    keep: Path | None = args.keep_mistakes
    if keep is not None:
        if keep.exists() and (not keep.is_dir() or any(keep.iterdir())):
            raise CompanionError(f"--keep-mistakes: {keep} exists and is not an empty folder")
        try:
            keep.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise CompanionError(f"--keep-mistakes: cannot make {keep} ({e.strerror})") from None

    shown = terminal_progress("bench vision:")

    def progress(text: str) -> None:
        if shown is not None:
            shown.note(text)

    from app.bench.scenes import bench_scenes, rendered_row, rows_table, scenes_row, write_csv

    results = (
        []
        if args.no_render
        else run_bench(
            args.scenes,
            args.seed,
            styles,
            true_poses=args.true_poses,
            config=config,
            progress=progress,
            storage_cards=not args.bare_table,
            storage_hands=args.hand_on_storage,
            table_top=args.table,
            keep_mistakes=keep,
            lens_k=args.lens,
            straighten=args.straighten,
        )
    )
    scenes = [(folder, bench_scenes(folder, config, progress)) for folder in folders]
    command = _command(args, styles)
    print(report(results, command) if results else f"$ {command}")
    rows = [
        rendered_row(pack, name, tally)
        for pack, tallies in results
        for name, tally in tallies.items()
    ]
    for folder, tallies in scenes:
        print(f"scenes: {folder.name} (pack {folder.pack_name})")
        for name, set_tally in tallies.items():
            print(f"  {set_tally.line(name)}")
            print(f"    the matcher's misses: {set_tally.misses_line()}")
            rows.append(scenes_row(folder.name, folder.pack_name, name, set_tally))
    print(
        "every set (rendered: wrong and abstained of the visible cells; scenes: of every "
        "cell judged, as check.py)"
    )
    print(rows_table(rows))
    if csv_path is not None:
        write_csv(rows, csv_path)
    return 0
