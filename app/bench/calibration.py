"""`companion bench calibration [--pack DIR] [--pack-style STYLE] [--seed S] [--tables N]
[--set SECTION.NAME=VALUE] [--cache DIR] [--json]`.

Prints each box's calibration of the cell network (vision.cellnet.calibrate) as the reader
would use it: the target wrong-rate and confidence, the threshold chosen, the stated upper
bound on the wrong-rate of the cells answered at that threshold, the cells and tables it
rests on, how many were answered and how many of those wrongly, and the tables' design
effect. The calibration comes from the cache directory like the reader's
(vision.reader.read.net_calibration): one already made is loaded, else it is made now and
kept there; the output says which. Boxes: `--pack DIR` (repeatable), else the art packs
`companion bench vision` draws (ink, and random of seed 1000 + `--seed`).
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

from app.bench.options import add_settings, settings_config
from app.bench.vision import DEFAULT_STYLES, STYLE_CHOICES
from companion.errors import CompanionError
from companion.progress import terminal_progress

if TYPE_CHECKING:
    from vision.box.pack import Pack
    from vision.cellnet.calibrate import Calibration
    from vision.config import VisionConfig


def configure(parser: argparse.ArgumentParser) -> None:
    """Add the arguments of `companion bench calibration`."""
    parser.add_argument(
        "--pack",
        action="append",
        default=[],
        dest="packs",
        metavar="DIR",
        type=Path,
        help="a tile pack folder (repeatable), e.g. one `companion teach` made",
    )
    parser.add_argument(
        "--pack-style",
        action="append",
        choices=STYLE_CHOICES,
        dest="styles",
        help="an art pack of this style, drawn as `companion bench vision` draws it "
        "(repeatable; default: ink and random unless --pack is given)",
    )
    parser.add_argument(
        "--seed",
        type=int,
        default=1,
        help="the run seed of `companion bench vision` whose packs to draw (default 1)",
    )
    parser.add_argument(
        "--tables",
        type=int,
        metavar="N",
        help="rendered tables of each box to calibrate on (default: read.net_tables, 40)",
    )
    add_settings(
        parser,
        "calibrate with one setting of vision/config.py changed, e.g. read.net_wrong_rate=0.01 "
        "(repeatable)",
    )
    parser.add_argument(
        "--cache",
        metavar="DIR",
        type=Path,
        help="the cache directory the calibrations are loaded from and kept in (default: the "
        "reader's, $MAORI_CACHE_DIR or ~/.cache/maori-companion)",
    )
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")


def calibration_row(
    box: str, calibration: Calibration, made: bool, seconds: float
) -> dict[str, Any]:
    """One box's row: its name, whether its calibration was made now (else loaded from the
    cache) and in how many seconds, the calibration's own figures, and whether the answers
    are the box's own head's (vision.cellnet.adapt)."""
    figures = {k: v for k, v in asdict(calibration).items() if k != "head"}
    own_head = calibration.head is not None
    return {"box": box, "made": made, "seconds": round(seconds, 1), **figures, "own_head": own_head}


def rows_table(rows: list[dict[str, Any]]) -> str:
    """The rows as a fixed-width table, each line a box."""
    head = (
        f"{'box':<18} {'target':>7} {'conf':>4} {'threshold':>9} {'bound':>7} "
        f"{'answered':>15} {'wrong':>5} {'tables':>6} {'deff':>5}  calibration"
    )
    lines = [head]
    for r in rows:
        answered = f"{r['answered']}/{r['cells']}"
        share = 100 * r["answered"] / r["cells"] if r["cells"] else 0.0
        how = f"made in {r['seconds']:.0f} s" if r["made"] else "loaded"
        # A box that names nothing has no threshold and no rate to bound.
        threshold = f"{r['threshold']:>9.4f}" if r["answered"] else f"{'none':>9}"
        bound = f"{100 * r['bound']:>6.3f}%" if r["answered"] else f"{'-':>7}"
        lines.append(
            f"{r['box']:<18} {100 * r['target']:>6.2f}% {100 * r['confidence']:>3.0f}% "
            f"{threshold} {bound} {answered:>9} {share:>4.1f}% {r['wrong']:>5} "
            f"{r['tables']:>6} {r['design_effect']:>5.2f}  {how}"
        )
    if any(not r["answered"] for r in rows):
        lines.append(
            "threshold none: no threshold holds the rate on these tables, so the box names "
            "no cell (every cell is left unknown)"
        )
    return "\n".join(lines)


def _checked(args: argparse.Namespace) -> VisionConfig:
    """The config the arguments ask for; a CompanionError for arguments that do not fit."""
    from dataclasses import replace

    config = settings_config(args.settings)
    if args.tables is not None:
        if args.tables < 1:
            raise CompanionError("--tables must be at least 1")
        config = replace(config, read=replace(config.read, net_tables=args.tables))
    cache: Path | None = args.cache
    if cache is not None and cache.exists() and not cache.is_dir():
        raise CompanionError(f"--cache: {cache} is not a folder")
    if cache is not None:
        # What is made is kept there: a folder that cannot hold it is refused before the work.
        try:
            cache.mkdir(parents=True, exist_ok=True)
            with tempfile.TemporaryFile(dir=cache):
                pass
        except OSError:
            raise CompanionError(f"--cache: {cache} cannot be written") from None
    return config


def _command(args: argparse.Namespace, styles: list[str], tables: int) -> str:
    """The command line that prints these figures again."""
    command = "companion bench calibration"
    command += "".join(f" --pack {d}" for d in args.packs)
    command += "".join(f" --pack-style {s}" for s in styles)
    if styles:
        command += f" --seed {args.seed}"
    command += f" --tables {tables}"
    command += "".join(f" --set {s}" for s in args.settings)
    if args.cache is not None:
        command += f" --cache {args.cache}"
    return command


def run(args: argparse.Namespace) -> int:
    """Load or make each box's calibration and print what it rests on."""
    config = _checked(args)
    from app.bench.rendered import bench_pack_seed, drawn_pack
    from vision.box.cache import cache_dir
    from vision.box.pack import load_pack

    packs = [load_pack(d) for d in args.packs]
    styles: list[str] = args.styles or ([] if packs else list(DEFAULT_STYLES))
    cache: Path = args.cache or cache_dir()
    rows: list[dict[str, Any]] = []

    def one(pack: Pack, name: str) -> None:
        from vision.reader.read import net_calibration

        shown = terminal_progress(f"bench calibration: {name}")
        made = False

        def progress(done: int, total: int) -> None:
            nonlocal made
            made = True  # calibrate alone reports progress: a loaded calibration shows none
            if shown is not None:
                shown(done, total)

        start = time.perf_counter()
        calibration = net_calibration(pack, config, cache, progress)
        if shown is not None:
            shown.finish()
        rows.append(calibration_row(name, calibration, made, time.perf_counter() - start))

    for folder, pack in zip(args.packs, packs, strict=True):
        one(pack, folder.name if folder.name != "pack" else folder.resolve().parent.name)
    for style in styles:
        seed = bench_pack_seed(style, args.seed)
        with drawn_pack(style, seed) as pack:
            one(pack, f"{style} (seed {seed})" if style == "random" else style)
    if args.json:
        print(json.dumps({"cache": str(cache), "boxes": rows}, indent=2))
        return 0
    print(f"$ {_command(args, styles, config.read.net_tables)}")
    rate, confidence = 100 * config.read.net_wrong_rate, 100 * config.read.net_confidence
    print(
        f"each box's threshold holds a wrong-rate of at most {rate:g} % among the cells it "
        f"names with {confidence:g} % confidence, on tables rendered with its pictures, "
        f"read by its own head fitted on {config.read.net_fit_tables} other tables "
        f"(cache: {cache})"
    )
    print(rows_table(rows))
    return 0
