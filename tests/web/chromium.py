"""Finding the Chromium the browser tests drive, and refusing to skip them in CI.

Debian installs it as /usr/bin/chromium, Ubuntu and older Debian as chromium-browser; $CHROMIUM
names any other. Without a browser (or without playwright) the tests skip on a developer's
machine, but under CI=true they fail: a CI that cannot run the browser must not pass."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Mapping
from pathlib import Path

import pytest

#: Where Debian and Ubuntu put Chromium, in the order tried after $CHROMIUM.
KNOWN_PLACES = ("/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/lib/chromium/chromium")
NAMES = ("chromium", "chromium-browser")


def find_chromium(
    environ: Mapping[str, str] = os.environ,
    which: Callable[[str], str | None] = shutil.which,
) -> Path | None:
    """The Chromium executable, however it is installed, or None."""
    named = environ.get("CHROMIUM")
    candidates = [named] if named else []
    candidates += [*KNOWN_PLACES, *(found for name in NAMES if (found := which(name)))]
    for candidate in candidates:
        if candidate and os.access(candidate, os.X_OK) and Path(candidate).is_file():
            return Path(candidate)
    return None


def in_ci(environ: Mapping[str, str] = os.environ) -> bool:
    return environ.get("CI", "").lower() in ("true", "1", "yes")


def need_browser(
    have_playwright: bool, chromium: Path | None, environ: Mapping[str, str] = os.environ
) -> Path:
    """The Chromium to launch; skips the test without one, or fails it under CI."""
    if not have_playwright:
        problem = "playwright is not installed (pip install -e '.[dev]')"
    elif chromium is None:
        problem = (
            "Chromium is not installed: apt-get install chromium (or set CHROMIUM to its path)"
        )
    else:
        return chromium
    if in_ci(environ):
        pytest.fail(f"{problem}; under CI=true the browser tests must run", pytrace=False)
    pytest.skip(problem)
