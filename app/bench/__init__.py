"""`companion bench WHAT`: benchmarks, kept apart from the tests (figures go into docs/).

Each benchmark module exposes ``configure(parser)`` and ``run(args) -> int`` like a
subcommand; add a line to BENCHES for a new one.
"""

from __future__ import annotations

import argparse
import importlib

#: (name, module, one-line help)
BENCHES: tuple[tuple[str, str, str], ...] = (
    ("rules", "app.bench.rules", "random 4-player games per second and legal-move enumeration"),
    ("live", "app.bench.live", "button press to Server-Sent Event at the phones"),
    ("vision", "app.bench.vision", "read rendered tables: wrong cells, abstentions, ship, speed"),
    (
        "judge",
        "app.bench.judge",
        "each pack's learnt judge, weighed out of fold: log-loss, calibration, cells answered",
    ),
    (
        "calibration",
        "app.bench.calibration",
        "each box's cell-network calibration: threshold, stated wrong-rate bound, cells and tables",
    ),
    (
        "changes",
        "app.bench.changes",
        "rendered turns: changed cells the incremental read takes as unchanged, its speed",
    ),
    (
        "poses",
        "app.bench.poses",
        "rendered tables: pose fits' cell-centre error, read stages",
    ),
    ("render", "app.bench.render", "how long the synthetic renderer takes to draw a frame"),
    (
        "pages",
        "app.bench.pages",
        "phone pages: /api/state's size and time, one change to N pages",
    ),
    ("load", "app.bench.load", "phones and games over time: memory, threads, open files"),
)


def configure(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="bench", metavar="WHAT", required=True)
    for name, module, summary in BENCHES:
        bench = sub.add_parser(name, help=summary, description=summary)
        bench.set_defaults(bench_module=module)
        importlib.import_module(module).configure(bench)


def run(args: argparse.Namespace) -> int:
    status: int = importlib.import_module(args.bench_module).run(args)
    return status
