"""Fixtures for the whole suite."""

from __future__ import annotations

from collections.abc import Iterator

import pytest


@pytest.fixture(scope="session", autouse=True)
def learned_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """What is learnt from packs (vision.box.cache: ship models, judges) is kept for the session
    only: every run learns its packs as a first read would, and nothing is left in the
    user's cache."""
    mp = pytest.MonkeyPatch()
    mp.setenv("MAORI_CACHE_DIR", str(tmp_path_factory.mktemp("learned")))
    yield
    mp.undo()
