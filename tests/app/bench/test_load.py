"""app.bench.load's verdicts: which growth is flagged, and where Python's heap grew."""

from __future__ import annotations

import tracemalloc
from collections.abc import Iterator

import pytest

from app.bench.load import (
    PYTHON_GROWTH_LIMIT_KIB,
    RSS_GROWTH_LIMIT_KIB,
    Sample,
    flags,
    growth,
    heap_growth,
    heap_sites,
)

FLAT = {"rss_kib": 0.0, "threads_kernel": 0.0, "open_files": 0.0, "python_kib": 0.0}


@pytest.fixture
def tracing() -> Iterator[None]:
    started = not tracemalloc.is_tracing()
    if started:
        tracemalloc.start()
    yield
    if started:
        tracemalloc.stop()


def test_flat_process_is_not_flagged() -> None:
    assert flags(FLAT) == []


def test_each_kind_of_growth_is_named() -> None:
    grows = {
        "rss_kib": RSS_GROWTH_LIMIT_KIB + 1,
        "threads_kernel": 1.0,
        "open_files": 1.0,
        "python_kib": PYTHON_GROWTH_LIMIT_KIB + 1,
    }
    found = " / ".join(flags(grows))
    for words in ("memory grows", "threads grow", "open files grow", "Python's own memory"):
        assert words in found


def test_untraced_heap_is_never_flagged() -> None:
    assert flags({**FLAT, "python_kib": -1.0}) == []


def test_heap_growth_names_the_line_that_kept_memory(tracing: None) -> None:
    before = heap_sites()
    kept = [bytearray(64 * 1024) for _ in range(32)]  # 2 MiB kept
    after = heap_sites()
    grown = heap_growth(before, after)
    assert kept and grown
    assert grown[0]["site"].endswith(f"test_load.py:{_line_of('# 2 MiB kept')}")
    assert grown[0]["growth_kib"] >= 2048


def test_heap_growth_without_tracing_is_empty() -> None:
    assert heap_growth(None, None) == []


def _line_of(marker: str) -> int:
    """The number of this file's first line ending with `marker`."""
    with open(__file__, encoding="utf-8") as source:
        return next(n for n, line in enumerate(source, 1) if line.rstrip().endswith(marker))


def test_heap_growth_lists_only_sites_that_grew_biggest_first() -> None:
    before = {"a.py:1": (10 << 20, 10), "b.py:2": (1 << 20, 1), "c.py:3": (0, 0)}
    after = {"a.py:1": (1 << 20, 1), "b.py:2": (2 << 20, 2), "d.py:4": (3 << 20, 3)}
    grown = heap_growth(before, after)
    assert [g["site"] for g in grown] == ["d.py:4", "b.py:2"]
    assert [g["growth_kib"] for g in grown] == [3072, 1024]


def test_growth_leaves_out_the_warm_up() -> None:
    # 100 MiB in the first minute (imports, caches, arenas), flat after it.
    samples = [
        Sample(
            at=float(m),
            rss_kib=(100 if m else 0) * 1024 + 10,
            threads_python=1,
            threads_kernel=1,
            open_files=5,
        )
        for m in range(6)
    ]
    assert growth(samples, 1.0, warm_up=1.0)["rss_kib"] == 0.0
    assert growth(samples, 1.0, warm_up=0.0)["rss_kib"] > RSS_GROWTH_LIMIT_KIB
