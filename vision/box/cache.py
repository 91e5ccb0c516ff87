"""Where what is learnt from a pack (the ship model, the cells' judge) is kept between runs."""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path


def cache_dir() -> Path:
    """$MAORI_CACHE_DIR, else $XDG_CACHE_HOME/maori-companion, else ~/.cache/maori-companion."""
    explicit = os.environ.get("MAORI_CACHE_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "maori-companion"


def write_quietly(path: Path, text: str) -> None:
    """Write a cache file whole (through a temporary beside it) or not at all: a cache that
    cannot be written is learnt again next time, never half read."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.stem}-", suffix=".tmp")
    except OSError:
        return
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(text)
        os.replace(temp, path)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(temp)
