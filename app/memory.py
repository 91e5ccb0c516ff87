"""Keep a long-running process's C heap from creeping up (glibc only; a no-op elsewhere).

Rendering and reading a frame allocate and free arrays of several MiB, and the web server
runs dozens of threads. glibc's malloc gives threads their own arenas (up to 8 per core) and
raises its mmap threshold to the size of the biggest block freed (up to 32 MiB), after which
frame-sized blocks come from those arenas, where freed memory mostly stays with the process.
`tune_allocator()`, called once at the start of the long-running commands (`companion run`,
`companion demo`, `companion bench load`), caps the arenas and fixes the threshold so that
frame-sized blocks are mapped and given back to the system when freed. Python's own memory
is unaffected. See docs/load.md for what it changes, measured.
"""

from __future__ import annotations

import ctypes
import functools
from typing import Any

#: At most this many malloc arenas (glibc's default is 8 per core).
ARENA_MAX = 2
#: Blocks of at least this many bytes are mapped on their own and unmapped when freed
#: (glibc's default starts at 128 KiB and rises with every bigger block freed).
MMAP_THRESHOLD_BYTES = 1 << 20

# mallopt's parameter numbers (glibc's malloc.h).
_M_MMAP_THRESHOLD = -3
_M_ARENA_MAX = -8


@functools.cache
def _glibc() -> Any:
    """The C library when it is glibc, else None (macOS, musl, Windows)."""
    try:
        libc = ctypes.CDLL(None)
    except (OSError, TypeError):
        return None
    # Only glibc has gnu_get_libc_version; musl and macOS have no mallopt's arena knob.
    names = ("gnu_get_libc_version", "mallopt")
    return libc if all(hasattr(libc, name) for name in names) else None


def tune_allocator() -> bool:
    """Cap glibc's arenas and fix its mmap threshold; False (and nothing done) without glibc."""
    libc = _glibc()
    if libc is None:
        return False
    arenas = libc.mallopt(_M_ARENA_MAX, ARENA_MAX)
    threshold = libc.mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD_BYTES)
    return bool(arenas == 1 and threshold == 1)
