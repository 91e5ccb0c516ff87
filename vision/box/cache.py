"""Where what is learnt from a pack (the ship model, the cells' judge) is kept between runs."""

from __future__ import annotations

import os
from pathlib import Path


def cache_dir() -> Path:
    """$MAORI_CACHE_DIR, else $XDG_CACHE_HOME/maori-companion, else ~/.cache/maori-companion."""
    explicit = os.environ.get("MAORI_CACHE_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "maori-companion"
