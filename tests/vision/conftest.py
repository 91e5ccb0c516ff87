"""Shared fixtures for vision tests: procedurally drawn tile packs, one per style.

Each pack is drawn once per test session into a temporary directory. Use the loaded packs
(`pack_lagoon`, `pack_ink`, `pack_random`) or their directories (`pack_dirs[style]`).
The lagoon and ink packs (seed 0) are the ones the reader's thresholds were set on;
`pack_random` stands for a box never seen before: the random style drawn with a seed that no
benchmark, tuning run or other test uses (docs/testing.md). Keep it out of tuning.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from vision.box.pack import Pack, load_pack
from vision.synthetic.artpacks import STYLES, write_art_pack

#: Seed of the `random` style used by the fixtures: a pack no threshold was set on. The
#: benchmarks draw random packs with seeds 1000 + their run's seed; tests name others below 1100.
UNSEEN_PACK_SEED = 4099


class _PackDirs(dict[str, Path]):
    """style -> pack directory, drawn the first time a style is asked for."""

    def __init__(self, root: Path) -> None:
        super().__init__()
        self.root = root

    def __missing__(self, style: str) -> Path:
        if style not in STYLES:
            raise KeyError(style)
        seed = UNSEEN_PACK_SEED if style == "random" else 0
        path = write_art_pack(self.root / style, style, seed=seed)
        self[style] = path
        return path


@pytest.fixture(scope="session")
def pack_dirs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Directories of the drawn packs, by style name (drawn lazily, once per session)."""
    return _PackDirs(tmp_path_factory.mktemp("art-packs"))


@pytest.fixture(scope="session")
def pack_lagoon(pack_dirs: dict[str, Path]) -> Pack:
    """The flat, bright vector-colour pack."""
    return load_pack(pack_dirs["lagoon"])


@pytest.fixture(scope="session")
def pack_ink(pack_dirs: dict[str, Path]) -> Pack:
    """The dark textured-paper, hatched, thin-line pack."""
    return load_pack(pack_dirs["ink"])


@pytest.fixture(scope="session")
def pack_random(pack_dirs: dict[str, Path]) -> Pack:
    """A pack in the seeded random style: a box nothing was tuned on."""
    return load_pack(pack_dirs["random"])
