"""Reading a table's cell crops on more than one core.

A table's crops are shared out between this process and worker processes, each holding the
pack's model, learnt once when it starts (vision.reader.read deals the seats' cells out one at a
time, `deal_out`, and keeps the display's, one light group, here). Parts are handed over
unmade: the workers' are made and sent first, so that they read while this process cuts
its own. A second thread would gain nothing: a cell's read is many small
numpy steps, each taking Python's lock. BLAS is held to one thread while the parts are read,
or the processes' BLAS threads fight over the cores.

Workers load the pack from its directory and prove it is the same pack (a digest of its
pictures) before they read anything. Whatever goes wrong with a worker (the pack changed on
disk, a worker killed, no way to start processes), the cells are read here instead: a read
is never lost, only slower. A TableReader (vision.reader.read) starts its workers at its first
read and stops them when it is closed.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import multiprocessing
import os
import threading
import time
import weakref
from collections.abc import Callable, Hashable, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
from numpy.typing import NDArray
from threadpoolctl import ThreadpoolController

from vision.box.pack import Pack, load_pack
from vision.box.tilemodel import TileModel, learn_pack
from vision.config import VisionConfig
from vision.reader.recognise import CellMatch, match_cells

__all__ = [
    "CellWorkers",
    "Part",
    "deal_out",
    "deal_seats",
    "one_blas_thread",
    "pack_digest",
    "read_part",
    "worker_count",
]

log = logging.getLogger(__name__)

Image = NDArray[np.uint8]
Part = tuple[list[Image], list[Image | None], list[Hashable | None]]

_BLAS = ThreadpoolController()
T = TypeVar("T")


def one_blas_thread() -> contextlib.AbstractContextManager[object]:
    """A context in which BLAS uses one thread: a read's products are small, and BLAS threads
    that spin beside the read's own threads and processes cost far more than they give."""
    limit: contextlib.AbstractContextManager[object] = _BLAS.limit(limits=1, user_api="blas")
    return limit


def worker_count(config: VisionConfig) -> int:
    """Worker processes to use: ReadConfig.cell_workers, or (None) one fewer than the cores
    this process may run on, at most 2 (each holds the pack's model: some 185 MB)."""
    wanted = config.read.cell_workers
    if wanted is not None:
        return max(0, wanted)
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        cores = os.cpu_count() or 1
    return max(0, min(2, cores - 1))


_DIGESTS: dict[int, tuple[weakref.ref[Pack], str]] = {}


def pack_digest(pack: Pack) -> str:
    """A digest of everything the recogniser learns from a pack (its pictures and tile size),
    worked out once per Pack object (a pack's pictures are not changed in place)."""
    known = _DIGESTS.get(id(pack))
    if known is not None and known[0]() is pack:
        return known[1]
    digest = _digest(pack)
    key = id(pack)
    _DIGESTS[key] = (weakref.ref(pack, lambda _: _DIGESTS.pop(key, None)), digest)
    return digest


def _digest(pack: Pack) -> str:
    h = hashlib.blake2b(digest_size=16)
    h.update(repr(pack.tile_mm).encode())
    for name, picture in [
        *sorted(pack.tiles.items()),
        ("ship", pack.ship),
        *sorted(pack.boards.items()),
    ]:
        h.update(name.encode())
        h.update(repr(picture.shape).encode())
        h.update(np.ascontiguousarray(picture).tobytes())
    return h.hexdigest()


def deal_out(count: int, parts: int, here: float) -> list[list[int]]:
    """Indices 0..count-1 dealt into `parts` parts, in turn as cards are dealt (each part
    gets some of every stretch of them): the first about `here` of them (0..count), the
    others the rest alike. A part may be empty."""
    parts = max(1, parts)
    first = min(count, max(0, round(here))) if parts > 1 else count
    rest = count - first
    wanted = [first] + [rest // (parts - 1) + (k < rest % (parts - 1)) for k in range(parts - 1)]
    out: list[list[int]] = [[] for _ in range(parts)]
    credit = [0] * parts
    for i in range(count):  # smooth weighted round robin: exact shares, evenly spread
        for k in range(parts):
            credit[k] += wanted[k]
        k = max(range(parts), key=lambda j: credit[j])
        credit[k] -= count
        out[k].append(i)
    return out


def deal_seats(count: int, here_already: int, workers: int, weight: float) -> list[list[int]]:
    """`count` seat cells dealt out between this process, which also reads `here_already`
    cells of the display, and `workers` worker processes: this process's share of all the
    cells is `weight` (ReadConfig.cells_here_weight) to each worker's 1."""
    share = weight / (weight + workers)
    return deal_out(count, workers + 1, share * (count + here_already) - here_already)


# -- in a worker process ------------------------------------------------------------------

_MODEL: TileModel | None = None


def _start(root: str, config: VisionConfig, digest: str, parent: int) -> None:
    """A worker's start: BLAS on one thread, the pack loaded and proven the same, and the
    matcher's templates learnt (not when the cell network reads the cells: the workers then
    look for the ship alone)."""
    global _MODEL
    _die_with_parent(parent)
    _BLAS.limit(limits=1, user_api="blas")
    pack = load_pack(Path(root))
    if pack_digest(pack) != digest:
        raise RuntimeError(f"the pack at {root} is not the one being read")
    if config.read.recogniser != "net":
        _MODEL = learn_pack(pack, config.crops.px_per_mm, config.cells)


def _die_with_parent(parent: int) -> None:
    """Ask Linux to end this worker when the reading process ends, however it ends (a
    kill -9 included): an orphan would hold the reader's output open and its memory."""
    try:
        import ctypes
        import signal

        libc = ctypes.CDLL(None, use_errno=True)
        pr_set_pdeathsig = 1
        libc.prctl(pr_set_pdeathsig, signal.SIGKILL)
    except (OSError, AttributeError):  # not Linux: the pool's own shutdown must do
        return
    if os.getppid() != parent:  # the parent ended before the wish was made
        os._exit(0)


def read_part(model: TileModel, part: Part) -> list[CellMatch]:
    """One part's reads with a model (and the figures the table's reader weighs them by,
    vision.reader.recognise.doubt_odd_light): what a worker does, and the reader with its own
    part."""
    crops, refs, groups = part
    return match_cells(crops, model, refs, light_groups=groups)


def _read(part: Part) -> list[CellMatch]:
    if _MODEL is None:
        raise RuntimeError("the cell worker was not started")
    return read_part(_MODEL, part)


# -- in the reading process ----------------------------------------------------------------


class CellWorkers:
    """Worker processes that read parts of a table's cells with one pack's model (and,
    `submit`, other work of a read that would take this process's Python lock)."""

    def __init__(self, pack: Pack, config: VisionConfig, workers: int) -> None:
        self.pack = pack
        self.config = config
        self.workers = workers
        #: Seconds the last `read` waited for the workers once its own part was read.
        self.waited = 0.0
        self._pool: ProcessPoolExecutor | None = None
        self._stopping = threading.Lock()  # work is sent from more than one thread
        try:
            # Spawned, not forked: the reader may have threads (the web server's), and a
            # spawned worker is the reader's own child, which Linux can end with it.
            self._pool = ProcessPoolExecutor(
                workers,
                mp_context=multiprocessing.get_context("spawn"),
                initializer=_start,
                initargs=(str(pack.root), config, pack_digest(pack), os.getpid()),
            )
        except Exception as error:  # no processes on this system
            log.warning("cannot start cell workers (%s); reading cells in one process", error)

    def read(
        self,
        parts: Sequence[Callable[[], Part]],
        here: Callable[[Part], list[CellMatch]],
    ) -> list[list[CellMatch]]:
        """Each part's reads (`parts` make them: cutting the crops takes time): the first
        read here (with `here`), the others by the workers at the same time. The workers'
        parts are made and sent first, so that they read while this process cuts its own;
        a part a worker fails on is read here too."""
        sent: list[Part] = []
        jobs: list[Future[list[CellMatch]] | None] = []
        for make in parts[1:]:
            sent.append(make())
            jobs.append(self._submit(sent[-1]))
        mine = parts[0]()
        with one_blas_thread():
            own = here(mine)
            start = time.perf_counter()
            theirs = [self._result(job, part, here) for job, part in zip(jobs, sent, strict=True)]
            self.waited = time.perf_counter() - start
            return [own, *theirs]

    def submit(self, work: Callable[..., T], *args: Any) -> Future[T] | None:
        """`work(*args)` started in a worker (`work` a module's function, `args` such as
        pickle), or None when the workers stopped; `result` waits for it."""
        pool = self._pool
        if pool is None:
            return None
        try:
            return pool.submit(work, *args)
        except Exception as error:  # a broken pool refuses new work
            self._give_up(error)
            return None

    def result(self, job: Future[T] | None, work: Callable[..., T], *args: Any) -> T:
        """What `submit(work, *args)` gave: the worker's answer, or `work(*args)` done here
        when the worker failed (or there was none)."""
        if job is not None:
            try:
                return job.result()
            except Exception as error:
                self._give_up(error)
        return work(*args)

    def _submit(self, part: Part) -> Future[list[CellMatch]] | None:
        return self.submit(_read, part)

    def _result(
        self,
        job: Future[list[CellMatch]] | None,
        part: Part,
        here: Callable[[Part], list[CellMatch]],
    ) -> list[CellMatch]:
        return self.result(job, here, part)

    def _give_up(self, error: BaseException) -> None:
        """Read everything here from now on (said once in the log)."""
        with self._stopping:
            pool, self._pool = self._pool, None
        if pool is not None:
            log.warning("cell workers stopped (%s); reading cells in one process", error)
            pool.shutdown(wait=False, cancel_futures=True)

    @property
    def alive(self) -> bool:
        """True while the workers take parts."""
        return self._pool is not None

    def close(self) -> None:
        """Stop the workers."""
        with self._stopping:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)
