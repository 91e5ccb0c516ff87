"""app.memory: tuning the C allocator is harmless, and a no-op without glibc."""

from __future__ import annotations

import ctypes
import platform
from typing import Any

import numpy as np
import pytest

from app import memory


def test_tuning_leaves_the_process_working() -> None:
    assert isinstance(memory.tune_allocator(), bool)
    # Frame-sized blocks (mapped on their own after tuning) still hold what is written.
    frames = [np.full((1200, 1600, 3), i, np.uint8) for i in range(4)]
    del frames[1:3]
    assert [int(f[600, 800, 1]) for f in frames] == [0, 3]


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="glibc only")
def test_glibc_is_tuned() -> None:
    assert memory.tune_allocator() is True


def test_without_glibc_nothing_is_done(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(memory, "_glibc", lambda: None)
    assert memory.tune_allocator() is False


class _OtherLibc:
    """A C library with mallopt but not glibc's (as musl has)."""

    def mallopt(self, param: int, value: int) -> int:
        raise AssertionError("mallopt must not be called off glibc")


def test_a_c_library_other_than_glibc_is_not_used(monkeypatch: pytest.MonkeyPatch) -> None:
    def fake_cdll(name: Any) -> _OtherLibc:
        return _OtherLibc()

    monkeypatch.setattr(ctypes, "CDLL", fake_cdll)
    assert memory._glibc.__wrapped__() is None


def test_no_c_library_at_all_is_not_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_cdll(name: Any) -> None:
        raise OSError("no C library")

    monkeypatch.setattr(ctypes, "CDLL", no_cdll)
    assert memory._glibc.__wrapped__() is None
