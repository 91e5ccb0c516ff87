"""Options that several benchmarks share: `--set SECTION.NAME=VALUE` and `--csv FILE`.

Imported by the benchmarks' `configure`, so nothing heavy at module level (no numpy)."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from companion.errors import CompanionError

if TYPE_CHECKING:
    from vision.config import VisionConfig


def add_settings(parser: argparse.ArgumentParser, text: str) -> None:
    """`--set SECTION.NAME=VALUE` (repeatable, into `args.settings`), helped by `text`."""
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        dest="settings",
        metavar="SECTION.NAME=VALUE",
        help=text,
    )


def settings_config(settings: Sequence[str]) -> VisionConfig:
    """The default config with `settings` changed; a CompanionError naming the one that does
    not fit."""
    from vision.config import VisionConfig, with_settings

    try:
        return with_settings(VisionConfig(), settings)
    except ValueError as e:
        raise CompanionError(f"--set: {e}") from None


def check_csv(path: Path | None) -> None:
    """A CompanionError when `--csv` names what cannot be written as a file."""
    if path is not None and (path.is_dir() or not path.parent.is_dir()):
        raise CompanionError(
            f"--csv: {path} cannot be written (not a file in a folder that exists)"
        )
