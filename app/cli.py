"""The `companion` command: one table of subcommands, each in its own lazily imported module.

Each subcommand module exposes ``configure(parser) -> None`` (adds its arguments) and
``run(args) -> int`` (does the work, prints only once everything succeeded). A module is
imported only when its subcommand runs, so `companion --help` stays light (no OpenCV).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import sys
from collections.abc import Sequence

from companion import __version__
from companion.errors import CompanionError, printable

#: (name, module, one-line help) of each subcommand.
COMMANDS: tuple[tuple[str, str, str], ...] = (
    ("score", "app.score", "score a finished game file"),
    ("read", "app.read", "read one photo of the table: display, ship, seats"),
    ("pack", "app.pack", "draw a synthetic tile pack or check one"),
    ("demo", "app.demo", "play a whole synthetic game through the real pipeline"),
    ("run", "app.service", "the table service: camera, buttons and phone pages"),
    ("kit", "app.kit", "write the printable table kit: display mat, seat markers, guide"),
    ("lens", "app.lens", "measure how the camera's lens bends straight lines"),
    ("teach", "app.teach", "teach the camera your own box: build a tile pack from pictures"),
    (
        "bench",
        "app.bench",
        "benchmarks (figures and commands in docs/)",
    ),
)

#: Exit status for bad input (docs/formats.md, "Errors") and after Ctrl-C.
EXIT_BAD_INPUT = 2
EXIT_INTERRUPTED = 130


def _selected(argv: Sequence[str]) -> str | None:
    """The subcommand named in argv: the first word that is not an option."""
    for word in argv:
        if not word.startswith("-"):
            return word
    return None


def build_parser(selected: str | None = None) -> argparse.ArgumentParser:
    """The argument parser; only the `selected` subcommand's module is imported."""
    parser = argparse.ArgumentParser(
        prog="companion",
        description="The Māori table companion: reads the table, checks turns, scores games.",
    )
    parser.add_argument("--version", action="version", version=f"companion {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name, module, summary in COMMANDS:
        sub = subparsers.add_parser(name, help=summary, description=summary)
        sub.set_defaults(module=module)
        if name == selected:
            importlib.import_module(module).configure(sub)
    return parser


def say_error(message: str) -> None:
    """Print `message` on standard error as one printable line (companion.errors.printable)."""
    print(f"companion: {printable(message)}", file=sys.stderr)


def _fail(message: str) -> int:
    say_error(message)
    return EXIT_BAD_INPUT


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    args_list = list(sys.argv[1:] if argv is None else argv)
    try:
        parser = build_parser(_selected(args_list))
        try:
            args = parser.parse_args(args_list)
        except SystemExit as exc:  # --help, --version and usage errors
            return exc.code if isinstance(exc.code, int) else EXIT_BAD_INPUT
        status: int = importlib.import_module(args.module).run(args)
        return status
    except CompanionError as exc:
        return _fail(exc.message)
    except BrokenPipeError:
        # The reader went away (`companion score x --json | head`): nothing left to say.
        with contextlib.suppress(OSError):
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - stop the flush at exit failing
        return 0
    except OSError as exc:
        where = f"{exc.filename}: " if exc.filename else ""
        return _fail(f"{where}{exc.strerror or exc}")
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
