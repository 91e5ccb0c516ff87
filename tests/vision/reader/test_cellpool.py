"""Reading a table's cells in worker processes: the same answers, and nothing lost when a
worker cannot be used."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from vision.box.pack import Pack, load_pack
from vision.config import ReadConfig, VisionConfig
from vision.reader import cellpool
from vision.reader.cellpool import CellWorkers, deal_out, deal_seats, worker_count
from vision.reader.read import TableReader, read_table
from vision.synthetic.render import Effects, Rendered, random_camera, render_table
from vision.synthetic.scene import random_scene

ONE = VisionConfig(read=ReadConfig(cell_workers=0))
TWO = VisionConfig(read=ReadConfig(cell_workers=1))


def _render(pack: Pack, seed: int) -> Rendered:
    rng = np.random.default_rng(seed)
    scene = random_scene(pack.catalogue, rng, n_seats=4, side="front", difficulty="hard")
    return render_table(scene, pack, random_camera(rng, scene, pack), Effects.hard(), rng)


def _kill(workers: CellWorkers) -> None:
    """Kill every worker process outright, and give the pool time to notice."""
    pool = workers._pool
    assert pool is not None
    for process in list(pool._processes.values()):
        assert process.pid is not None
        os.kill(process.pid, signal.SIGKILL)
    time.sleep(0.2)


def test_cells_are_dealt_out_in_turn_in_the_shares_asked() -> None:
    parts = deal_out(85, 2, 29.4)
    assert sorted(i for part in parts for i in part) == list(range(85))
    assert [len(p) for p in parts] == [29, 56]
    # Dealt in turn: every stretch of 17 (a seat's cells) goes to both parts.
    for seat in range(5):
        got = [sum(seat * 17 <= i < seat * 17 + 17 for i in part) for part in parts]
        assert min(got) >= 5
    assert [len(p) for p in deal_out(10, 3, 4)] == [4, 3, 3]
    assert deal_out(3, 2, -5.0) == [[], [0, 1, 2]]
    assert deal_out(3, 2, 9.0) == [[0, 1, 2], []]
    assert deal_out(4, 1, 0.0) == [[0, 1, 2, 3]]


def test_seat_cells_are_dealt_so_this_process_reads_its_weighted_share() -> None:
    # One worker, equal weight: this process reads half of all 84 cells, 16 of the display's.
    parts = deal_seats(68, 16, 1, 1.0)
    assert sorted(i for part in parts for i in part) == list(range(68))
    assert abs(16 + len(parts[0]) - 42) <= 1
    # Two workers, this process weighing 0.5: a fifth of the cells, the display's 16 of them.
    parts = deal_seats(64, 16, 2, 0.5)
    assert len(parts) == 3 and len(parts[0]) == 0
    assert abs(len(parts[1]) - len(parts[2])) <= 1


def test_workers_are_one_fewer_than_the_cores_unless_set() -> None:
    assert worker_count(ONE) == 0
    assert worker_count(TWO) == 1
    assert 0 <= worker_count(VisionConfig()) <= 2


@pytest.mark.slow
def test_a_table_read_with_a_worker_reads_as_one_read_alone(pack_ink: Pack) -> None:
    with TableReader(pack_ink, config=TWO) as reader:
        for seed in (3, 4):
            rendered = _render(pack_ink, seed)
            alone = read_table(rendered.image, pack_ink, config=ONE)
            shared = reader.read(rendered.image)
            assert shared == alone
        workers = reader.workers
        assert workers is not None and workers.alive
    assert not workers.alive  # stopped with the reader


@pytest.mark.slow
def test_a_killed_worker_costs_time_not_the_read(pack_ink: Pack) -> None:
    rendered = _render(pack_ink, 5)
    alone = read_table(rendered.image, pack_ink, config=ONE)
    with TableReader(pack_ink, config=TWO) as reader:
        workers = reader.workers
        assert workers is not None
        reader.read(rendered.image)
        _kill(workers)
        assert reader.read(rendered.image) == alone
        assert not workers.alive
        assert reader.workers is None  # not restarted again and again


@pytest.mark.slow
def test_work_sent_to_a_worker_is_done_there_or_here_once_the_workers_stopped(
    pack_ink: Pack,
) -> None:
    workers = CellWorkers(pack_ink, TWO, 1)
    try:
        job = workers.submit(os.getpid)
        assert job is not None
        assert workers.result(job, os.getpid) != os.getpid()
        _kill(workers)
        job = workers.submit(os.getpid)
        assert workers.result(job, os.getpid) == os.getpid()
        assert not workers.alive
        assert workers.submit(os.getpid) is None
        assert workers.result(None, os.getpid) == os.getpid()
    finally:
        workers.close()


class _StoppingPool:
    """A pool whose shutdown waits until let go (two threads giving up at once)."""

    def __init__(self) -> None:
        self.shutdowns = 0
        self.entered = threading.Event()
        self.go = threading.Event()

    def shutdown(self, wait: bool, cancel_futures: bool) -> None:
        self.shutdowns += 1
        self.entered.set()
        self.go.wait(5)


def test_workers_given_up_from_two_threads_at_once_stop_once(
    pack_ink: Pack, caplog: pytest.LogCaptureFixture
) -> None:
    workers = CellWorkers(pack_ink, TWO, 1)
    workers.close()
    pool = _StoppingPool()
    workers._pool = pool  # type: ignore[assignment]
    first = threading.Thread(target=workers._give_up, args=(RuntimeError("broken"),))
    with caplog.at_level("WARNING", logger=cellpool.log.name):
        first.start()
        assert pool.entered.wait(5)
        workers._give_up(RuntimeError("broken too"))  # while the first is stopping the pool
        assert workers.submit(os.getpid) is None
        pool.go.set()
        first.join(5)
    assert pool.shutdowns == 1 and not workers.alive
    assert sum("cell workers stopped" in r.getMessage() for r in caplog.records) == 1


@pytest.mark.slow
def test_workers_refuse_a_pack_changed_on_disk_and_the_cells_are_read_here(
    pack_dirs: dict[str, Path], tmp_path: Path
) -> None:
    root = tmp_path / "pack"
    shutil.copytree(pack_dirs["ink"], root)
    pack = load_pack(root)
    rendered = _render(pack, 6)
    alone = read_table(rendered.image, pack, config=ONE)
    picture = next(root.rglob("*.png"))
    picture.write_bytes(next(p for p in root.rglob("*.png") if p != picture).read_bytes())
    workers = CellWorkers(pack, TWO, 1)
    try:
        crop = np.full((114, 114, 3), 240, np.uint8)

        def part() -> cellpool.Part:
            return [crop], [None], [None]

        def here(part: cellpool.Part) -> list:  # type: ignore[type-arg]
            return [f"here {len(part[0])}"]

        got = workers.read([part, part], here)
        assert got == [["here 1"], ["here 1"]]
        assert not workers.alive
    finally:
        workers.close()
    with TableReader(pack, config=TWO) as reader:
        assert reader.read(rendered.image) == alone


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux ends orphans so")
def test_workers_end_with_a_reader_killed_outright(pack_dirs: dict[str, Path]) -> None:
    script = (
        "import sys, time\n"
        "from vision.reader.cellpool import CellWorkers\n"
        "from vision.config import ReadConfig, VisionConfig\n"
        "from vision.box.pack import load_pack\n"
        "if __name__ == '__main__':\n"
        "    config = VisionConfig(read=ReadConfig(cell_workers=1))\n"
        "    w = CellWorkers(load_pack(sys.argv[1]), config, 1)\n"
        "    w._pool.submit(print, 'up').result()\n"
        "    print(*[p.pid for p in w._pool._processes.values()], flush=True)\n"
        "    time.sleep(60)\n"
    )
    reader = subprocess.Popen(
        [sys.executable, "-c", script, str(pack_dirs["ink"])],
        stdout=subprocess.PIPE,
        text=True,
        cwd=Path(__file__).resolve().parents[3],
    )
    assert reader.stdout is not None
    line = reader.stdout.readline()
    while line.strip() == "up":
        line = reader.stdout.readline()
    pids = [int(p) for p in line.split()]
    assert pids
    reader.send_signal(signal.SIGKILL)
    reader.wait(10)
    assert reader.stdout.read() == ""  # no worker holds the reader's output open
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and any(_alive(p) for p in pids):
        time.sleep(0.1)
    assert not any(_alive(p) for p in pids)


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().split()[2] != "Z"
    except FileNotFoundError:
        return False


def test_a_closed_reader_refuses_to_read(pack_ink: Pack) -> None:
    reader = TableReader(pack_ink, config=TWO)
    reader.close()
    with pytest.raises(RuntimeError, match="closed"):
        reader.read(np.zeros((40, 60, 3), np.uint8))
