"""`companion bench judge [--pack-style STYLE] [--pack DIR] [--seed S] [--set judge.NAME=VALUE]
[--csv FILE]`.

Learns the judge (vision.box.judge) of each pack and prints what its out-of-fold weighings
say of it: the cells learnt from, the log-loss and calibration error, the two thresholds,
the share of cells answered and the share answered wrongly. With `--set judge.NAME=VALUE`
it measures a setting of the network; the learning sets are kept in the cache directory, so
only the first run per pack draws its tables.
"""

from __future__ import annotations

import argparse
import csv
from pathlib import Path
from typing import Any

from app.bench.options import add_settings, check_csv, settings_config
from app.bench.vision import STYLE_CHOICES
from companion.progress import terminal_progress

COLUMNS = (
    "pack",
    "cells",
    "log_loss",
    "ece",
    "threshold",
    "threshold_unknown",
    "answered",
    "wrong",
)


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--pack-style",
        action="append",
        choices=STYLE_CHOICES,
        dest="styles",
        help="an art pack of this style, drawn with --seed (repeatable; default: every style "
        "unless --pack is given)",
    )
    parser.add_argument(
        "--pack",
        action="append",
        default=[],
        dest="packs",
        metavar="DIR",
        type=Path,
        help="a tile pack folder (repeatable), e.g. one `companion teach` made",
    )
    parser.add_argument("--seed", type=int, default=1, help="seed of the drawn packs (default 1)")
    add_settings(
        parser,
        "learn with one setting of vision/config.py changed, e.g. judge.decay=0.001 (repeatable)",
    )
    parser.add_argument("--csv", metavar="FILE", type=Path, help="write one row per pack")


def judge_row(name: str, report: dict[str, float]) -> dict[str, Any]:
    """One pack's row: its name and its judge's report."""
    row: dict[str, Any] = {"pack": name, **{k: report.get(k, float("nan")) for k in COLUMNS[1:]}}
    row["cells"] = int(row["cells"])
    return row


def rows_table(rows: list[dict[str, Any]]) -> str:
    """The rows as a fixed-width table."""
    head = f"{'pack':<16} {'cells':>6} {'log-loss':>8} {'ece':>6} {'thr':>6} {'thr unk':>7} "
    head += f"{'answered':>8} {'wrong':>6}"
    lines = [head]
    for r in rows:
        lines.append(
            f"{r['pack']:<16} {int(r['cells']):>6} {r['log_loss']:>8.4f} {r['ece']:>6.3f} "
            f"{r['threshold']:>6.3f} {r['threshold_unknown']:>7.3f} "
            f"{100 * r['answered']:>7.1f}% {100 * r['wrong']:>5.2f}%"
        )
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    """Learn each pack's judge and print its figures."""
    config = settings_config(args.settings)
    csv_path: Path | None = args.csv
    check_csv(csv_path)
    from app.bench.rendered import drawn_pack
    from vision.box.judge import fit_judge, learning_examples
    from vision.box.pack import load_pack
    from vision.box.tilemodel import learn_pack

    packs = [load_pack(d) for d in args.packs]
    styles = args.styles or ([] if packs else list(STYLE_CHOICES))
    rows: list[dict[str, Any]] = []

    def one(pack: Any, name: str) -> None:
        tiles = learn_pack(pack, config.crops.px_per_mm, config.cells)
        progress = terminal_progress(f"bench judge: {name}")
        examples = learning_examples(pack, tiles, config, progress)
        rows.append(judge_row(name, fit_judge(examples, config.judge).report))

    for style in styles:
        with drawn_pack(style, args.seed) as pack:
            one(pack, style)
    for folder, pack in zip(args.packs, packs, strict=True):
        one(pack, folder.name if folder.name != "pack" else folder.parent.name)
    command = "companion bench judge" + "".join(f" --pack-style {s}" for s in styles)
    command += "".join(f" --pack {d}" for d in args.packs) + f" --seed {args.seed}"
    command += "".join(f" --set {s}" for s in args.settings)
    print(f"$ {command}")
    print(rows_table(rows))
    if csv_path is not None:
        with csv_path.open("w", newline="") as out:
            writer = csv.DictWriter(out, fieldnames=COLUMNS)
            writer.writeheader()
            writer.writerows(rows)
    return 0
