"""Durable games: the journal survives kills at any moment and resumes at the last turn."""

from __future__ import annotations

import errno
import json
import os
import random
import re
import signal
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from companion import journal as journal_module
from companion.actions import Pass, Turn
from companion.bots import RandomPlayer
from companion.errors import DataError, NotNow
from companion.game import Seat
from companion.journal import Journal, StorageError
from companion.session import Session

SEATS = [Seat("Ana", 1), Seat("Bo", 2), Seat("Cy", 3)]


def test_a_resumed_session_is_the_same_game_with_its_move_log(tmp_path: Path) -> None:
    session = Session(journal=Journal(tmp_path))
    session.start_game(SEATS, seed=5)
    bot = RandomPlayer(random.Random(5))
    assert session.game is not None
    for _ in range(10):
        session.play(bot.choose(session.game.rules, session.game.state))
    session.undo()
    session.note("refused", "Palms must point to their owner: lay the tile upright.")
    again = Session.resume(Journal(tmp_path))
    assert again.game is not None
    assert again.game.state == session.game.state
    assert [e["text"] for e in again.view()["log"]] == [e["text"] for e in session.view()["log"]]


def test_without_a_saved_game_resume_gives_a_fresh_session(tmp_path: Path) -> None:
    assert Session.resume(Journal(tmp_path)).game is None


def test_a_torn_last_line_is_dropped_and_the_game_goes_on(tmp_path: Path) -> None:
    session = Session(journal=Journal(tmp_path))
    session.start_game(SEATS, seed=1)
    session.play(Turn(1, Pass()))
    journal = Journal(tmp_path)
    path = journal.current_path()
    assert path is not None
    with open(path, "a", encoding="utf-8") as fh:
        fh.write('{"type":"turn","turn":{"ste')  # the power went here
    again = Session.resume(Journal(tmp_path))
    assert again.game is not None and len(again.game.records) == 1
    again.play(Turn(1, Pass()))
    third = Session.resume(Journal(tmp_path))
    assert third.game is not None and len(third.game.records) == 2


def test_an_unusable_state_directory_is_one_sentence(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(DataError, match="cannot be used as the state directory"):
        Journal(blocker / "state")


# ------------------------------------------------------------------ a write that fails


class Disk:
    """os.write as on a disk with `free` bytes left: a write takes what fits, and the next
    one fails with ENOSPC (None: room enough). Other failures are injected the same way."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.free: int | None = None
        self.fsync_error: int | None = None
        self.truncate_error: int | None = None
        real_write, real_fsync, real_ftruncate = os.write, os.fsync, os.ftruncate

        def write(fd: int, data: bytes | memoryview) -> int:
            if self.free is None:
                return real_write(fd, data)
            if self.free <= 0:
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
            written = real_write(fd, bytes(data[: self.free]))
            self.free -= written
            return written

        def fsync(fd: int) -> None:
            if self.fsync_error is not None:
                raise OSError(self.fsync_error, os.strerror(self.fsync_error))
            real_fsync(fd)

        def ftruncate(fd: int, length: int) -> None:
            if self.truncate_error is not None:
                raise OSError(self.truncate_error, os.strerror(self.truncate_error))
            real_ftruncate(fd, length)

        monkeypatch.setattr(os, "write", write)
        monkeypatch.setattr(os, "fsync", fsync)
        monkeypatch.setattr(os, "ftruncate", ftruncate)


def saved_bytes(tmp_path: Path) -> bytes:
    path = Journal(tmp_path).current_path()
    assert path is not None
    return path.read_bytes()


def test_a_turn_that_cannot_be_saved_changes_neither_memory_nor_disk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    session = Session(journal=Journal(tmp_path))
    session.start_game(SEATS, seed=1)
    session.play(Turn(1, Pass()))
    game = session.game
    assert game is not None
    before = (game.state.copy(), list(game.events), session.view()["log"])
    on_disk = saved_bytes(tmp_path)
    disk = Disk(monkeypatch)
    for free in (0, 7, 40):  # nothing fits, a few bytes of the line, the turn but not its log
        disk.free = free
        with pytest.raises(
            StorageError, match=r"^The game could not be saved: the disk is full\.$"
        ):
            session.play(Turn(1, Pass()))
        with pytest.raises(StorageError, match="disk is full"):
            session.undo()
        with pytest.raises(StorageError, match="disk is full"):
            session.note("refused", "Lay the tile upright.")
        assert (game.state, game.events, session.view()["log"]) == before
        assert saved_bytes(tmp_path) == on_disk
        assert session.view()["unsaved"] == "The game could not be saved: the disk is full."
    disk.free = None  # space again: only what is confirmed from now on reaches the disk
    session.play(Turn(1, Pass()))
    assert session.view()["unsaved"] is None
    session.undo()
    again = Session.resume(Journal(tmp_path))
    assert again.game is not None and again.damage is None
    assert again.game.events == game.events and again.game.state == game.state
    assert again.view()["log"] == session.view()["log"]


def test_an_append_whose_fsync_fails_is_cut_off_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    session = Session(journal=Journal(tmp_path))
    session.start_game(SEATS, seed=1)
    on_disk = saved_bytes(tmp_path)
    disk = Disk(monkeypatch)
    disk.fsync_error = errno.EIO
    with pytest.raises(StorageError, match=r"^The game could not be saved \(Input/output error\)"):
        session.play(Turn(1, Pass()))
    disk.fsync_error = None
    assert saved_bytes(tmp_path) == on_disk
    assert session.game is not None and not session.game.records


def test_a_cut_that_fails_too_is_made_before_the_next_append(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    session = Session(journal=Journal(tmp_path))
    session.start_game(SEATS, seed=1)
    disk = Disk(monkeypatch)
    disk.free, disk.truncate_error = 30, errno.EIO
    with pytest.raises(StorageError):
        session.play(Turn(1, Pass()))
    assert len(saved_bytes(tmp_path).splitlines()) == 3  # setup, log, and a cut-off turn
    disk.free = disk.truncate_error = None
    session.play(Turn(2, Pass()))
    again = Session.resume(Journal(tmp_path))
    assert again.game is not None and again.damage is None
    assert [r.turn for r in again.game.records] == [Turn(2, Pass())]


def test_a_new_game_that_cannot_be_saved_leaves_the_running_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    session = Session(journal=Journal(tmp_path))
    session.start_game(SEATS, seed=1)
    session.play(Turn(1, Pass()))
    running = session.game
    files = sorted(tmp_path.iterdir())
    disk = Disk(monkeypatch)
    disk.free = 100
    with pytest.raises(
        StorageError, match=r"^The new game could not be saved: the disk is full\.$"
    ):
        session.start_game(SEATS[:2], seed=2)
    disk.free = None
    assert session.game is running and sorted(tmp_path.iterdir()) == files
    session.play(Turn(1, Pass()))
    again = Session.resume(Journal(tmp_path)).game
    assert again is not None and running is not None and again.state == running.state


def test_a_new_game_named_by_the_pointer_is_the_one_played_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Only the directory's fsync after the pointer was replaced fails: memory follows disk."""
    session = Session(journal=Journal(tmp_path))
    session.start_game(SEATS, seed=1)
    real = journal_module._fsync_dir
    calls = iter(range(10))

    def second_fails(directory: Path) -> None:
        if next(calls) == 1:  # 0: the new game file's entry, 1: the pointer's replacement
            raise OSError(errno.EIO, os.strerror(errno.EIO))
        real(directory)

    monkeypatch.setattr(journal_module, "_fsync_dir", second_fails)
    session.start_game(SEATS[:2], seed=2)
    session.play(Turn(1, Pass()))
    again = Session.resume(Journal(tmp_path)).game
    assert again is not None and session.game is not None
    assert again.state == session.game.state and len(again.state.players) == 2


FULL_DISK = r"""
import json, resource, signal, sys
from companion.actions import Pass, Turn
from companion.errors import CompanionError
from companion.game import Seat
from companion.journal import Journal
from companion.session import Session
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # the write fails with EFBIG instead
session = Session(journal=Journal(sys.argv[1]))
session.start_game([Seat("Ana", 1), Seat("Bo", 2), Seat("Cy", 3)], seed=1)
session.play(Turn(1, Pass()))
size = session.journal.current_path().stat().st_size
soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
resource.setrlimit(resource.RLIMIT_FSIZE, (size + 20, hard))  # room for part of a line
refused = []
for change in (lambda: session.play(Turn(1, Pass())), session.undo, session.undo):
    try:
        change()
    except CompanionError as exc:
        refused.append(exc.message)
resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
session.play(Turn(2, Pass()))
print(json.dumps({"refused": refused, "events": session.game.events}))
"""


def test_a_file_size_limit_met_mid_line_leaves_nothing_to_be_written_later(tmp_path: Path) -> None:
    """The kernel itself refuses the write part way (RLIMIT_FSIZE, no root needed)."""
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    done = subprocess.run(
        [sys.executable, "-c", FULL_DISK, str(tmp_path)],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    shown = json.loads(done.stdout)
    assert len(shown["refused"]) == 3 and all("could not be saved" in m for m in shown["refused"])
    again = Session.resume(Journal(tmp_path))
    assert again.game is not None and again.damage is None
    assert again.game.events == shown["events"]
    assert [r.turn for r in again.game.records] == [Turn(1, Pass()), Turn(2, Pass())]


# ------------------------------------------------------------------ damaged journals


def played(tmp_path: Path, turns: int = 3) -> tuple[Session, Path]:
    session = Session(journal=Journal(tmp_path))
    session.start_game(SEATS, seed=1)
    for _ in range(turns):
        session.play(Turn(1, Pass()))
    path = Journal(tmp_path).current_path()
    assert path is not None
    return session, path


def damaged_copies(path: Path) -> list[Path]:
    return sorted(path.parent.glob(f"{path.name}.damaged-*"))


def test_a_damaged_line_is_the_same_damage_on_every_start(tmp_path: Path) -> None:
    """A whole line (newline included) that is not an event was not torn by a power cut."""
    _session, path = played(tmp_path)
    original = path.read_bytes() + b'{"type":"turn","turn":{"st\n'
    path.write_bytes(original)
    first = Session.resume(Journal(tmp_path))
    second = Session.resume(Journal(tmp_path))
    for resumed in (first, second):
        assert resumed.game is None and resumed.damage is not None
        assert resumed.damage.problem == f"line 9 of {path.name} is damaged"
        assert resumed.damage.turn_number == 3
    assert path.read_bytes() == original  # nothing cut, nothing appended
    (copy,) = damaged_copies(path)  # one copy, however often the service starts
    assert re.fullmatch(rf"{re.escape(path.name)}\.damaged-\d{{8}}T\d{{6}}Z", copy.name)
    assert copy.read_bytes() == original and first.damage == second.damage
    assert first.damage is not None and first.damage.kept == copy.name
    assert first.view()["damage"] == {
        "problem": f"line 9 of {path.name} is damaged",
        "kept": copy.name,
        "turn_number": 3,
    }


def test_the_host_resumes_a_damaged_game_at_its_last_good_turn(tmp_path: Path) -> None:
    _session, path = played(tmp_path, turns=4)
    lines = path.read_bytes().splitlines(keepends=True)  # setup, log, then turn, log, ...
    lines[6] = b"garbage\n"  # the third turn's line: turns 3 and 4 are after it
    path.write_bytes(b"".join(lines))
    resumed = Session.resume(Journal(tmp_path))
    assert resumed.damage is not None and resumed.damage.turn_number == 2
    resumed.resume_last_good()
    assert resumed.game is not None and resumed.damage is None
    assert len(resumed.game.records) == 2
    assert resumed.view()["log"][-1]["text"] == (
        f"Resumed after turn 2: the saved game was damaged (a copy is kept as "
        f"{damaged_copies(path)[0].name})."
    )
    resumed.play(Turn(1, Pass()))
    again = Session.resume(Journal(tmp_path))
    assert again.damage is None and again.game is not None
    assert again.game.state == resumed.game.state
    assert again.view()["log"] == resumed.view()["log"]
    assert path.read_bytes() == b"".join(lines)  # the damaged file is left as it was


def test_an_event_that_does_not_replay_is_damage_too(tmp_path: Path) -> None:
    _session, path = played(tmp_path)
    lines = path.read_text().splitlines(keepends=True)
    assert lines[4].startswith('{"type":"turn","turn":{"steps":1,')  # the second turn
    lines[4] = '{"type":"turn","turn":{"steps":"far"}}\n'  # JSON, but no turn
    path.write_text("".join(lines))
    resumed = Session.resume(Journal(tmp_path))
    assert resumed.game is None and resumed.damage is not None
    assert "event 3 cannot be replayed" in resumed.damage.problem
    assert resumed.damage.turn_number == 1
    assert len(resumed.damage.events) == 4  # setup, log, the first turn and its log


@pytest.mark.parametrize(
    ("cut", "problem"),
    [(0, "is empty"), (40, "ends inside its setup line")],
)
def test_a_file_cut_inside_its_setup_is_kept_and_reported(
    tmp_path: Path, cut: int, problem: str
) -> None:
    _session, path = played(tmp_path)
    original = path.read_bytes()[:cut]
    path.write_bytes(original)
    resumed = Session.resume(Journal(tmp_path))
    assert resumed.game is None and resumed.damage is not None
    assert resumed.damage.problem == f"{path.name} {problem}"
    assert resumed.damage.turn_number is None
    assert path.read_bytes() == original and damaged_copies(path)[0].read_bytes() == original
    with pytest.raises(NotNow, match="no good turn: start a new game"):
        resumed.resume_last_good()
    resumed.start_game(SEATS[:2], seed=3)
    assert resumed.damage is None
    assert path.read_bytes() == original  # the new game is a file of its own
    assert Session.resume(Journal(tmp_path)).game is not None


def test_damaged_copies_never_overwrite_one_another(tmp_path: Path) -> None:
    _session, path = played(tmp_path)
    path.write_bytes(b"first damage\n")
    Session.resume(Journal(tmp_path))
    path.write_bytes(b"second damage\n")
    Session.resume(Journal(tmp_path))
    copies = damaged_copies(path)
    assert sorted(c.read_bytes() for c in copies) == [b"first damage\n", b"second damage\n"]


def test_a_damaged_pointer_is_reported_not_fatal(tmp_path: Path) -> None:
    played(tmp_path)
    (tmp_path / "current").write_text("../../etc/passwd\n")
    resumed = Session.resume(Journal(tmp_path))
    assert resumed.damage is not None and "does not name a game file" in resumed.damage.problem
    (tmp_path / "current").write_text("game-20260101-000000-0.jsonl\n")
    resumed = Session.resume(Journal(tmp_path))
    assert resumed.damage is not None
    assert resumed.damage.problem.endswith("is named as the current game but is missing")
    assert resumed.damage.kept is None
    (tmp_path / "current").unlink()
    (tmp_path / "current").mkdir()
    resumed = Session.resume(Journal(tmp_path))
    assert resumed.damage is not None and resumed.damage.problem.endswith(
        "cannot be read (Is a directory)"
    )


def test_a_torn_line_is_cut_when_the_next_line_is_written_not_before(tmp_path: Path) -> None:
    _session, path = played(tmp_path)
    whole = path.read_bytes()
    torn = whole + b'{"type":"turn","turn":{"st'  # the power went here
    path.write_bytes(torn)
    resumed = Session.resume(Journal(tmp_path))
    assert resumed.damage is None and path.read_bytes() == torn
    resumed.play(Turn(1, Pass()))
    lines = path.read_bytes().splitlines()
    assert path.read_bytes().startswith(whole) and len(lines) == whole.count(b"\n") + 2
    assert all(json.loads(line) for line in lines)
    assert not damaged_copies(path)


PLAYER = r"""
import random, sys, time
from companion.bots import RandomPlayer
from companion.game import Seat
from companion.journal import Journal
from companion.session import Session
journal = Journal(sys.argv[1])
session = Session.resume(journal)
if session.game is None:
    session.start_game([Seat("Ana", 1), Seat("Bo", 2), Seat("Cy", 3)], seed=9)
game = session.game
while not game.over:
    bot = RandomPlayer(random.Random(1000 + game.state.turn_number))
    session.play(bot.choose(game.rules, game.state))
    print(game.state.turn_number, flush=True)
    time.sleep(0.05)  # a little thinking, so kills land all through the game
print("over", flush=True)
"""


def reference_game(turns: int) -> object:
    session = Session()
    session.start_game([Seat("Ana", 1), Seat("Bo", 2), Seat("Cy", 3)], seed=9)
    game = session.game
    assert game is not None
    while game.state.turn_number < turns and not game.over:
        bot = RandomPlayer(random.Random(1000 + game.state.turn_number))
        session.play(bot.choose(game.rules, game.state))
    return game.state


@pytest.mark.slow
def test_kill_9_at_random_moments_never_loses_a_confirmed_turn(tmp_path: Path) -> None:
    rng = random.Random(4)
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    confirmed = 0
    kills_mid_game = 0
    for _ in range(40):
        proc = subprocess.Popen(
            [sys.executable, "-c", PLAYER, str(tmp_path)],
            stdout=subprocess.PIPE,
            text=True,
            env=env,
        )
        time.sleep(rng.uniform(0.3, 0.7))
        proc.send_signal(signal.SIGKILL)
        out, _ = proc.communicate()
        printed = [line for line in out.split() if line.isdigit()]
        if printed:
            confirmed = int(printed[-1])
        resumed = Session.resume(Journal(tmp_path))
        if resumed.game is None:
            continue
        kills_mid_game += "over" not in out
        state = resumed.game.state
        assert state.turn_number >= confirmed, "a turn shown as confirmed was lost"
        assert state == reference_game(state.turn_number)
        if "over" in out:
            break
    assert kills_mid_game >= 5, "the kills must land during the game"
    finished = subprocess.run(
        [sys.executable, "-c", PLAYER, str(tmp_path)], capture_output=True, text=True, env=env
    )
    assert finished.returncode == 0 and "over" in finished.stdout
    final = Session.resume(Journal(tmp_path)).game
    assert final is not None and final.over
    assert final.state == reference_game(10**6)
    assert json.loads(json.dumps(final.score().to_json()))["winners"]


@pytest.fixture
def umask_022() -> Iterator[None]:
    """The usual umask, which leaves new files readable by everyone (0644)."""
    old = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(old)


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.mark.usefixtures("umask_022")
def test_game_files_are_their_owners_alone(tmp_path: Path) -> None:
    state = tmp_path / "state" / "table"
    _session, path = played(state)
    assert _mode(state) == 0o700 and _mode(path) == 0o600 and _mode(state / "current") == 0o600
    assert _mode(tmp_path / "state") == 0o755  # folders above it are not the journal's
    path.write_bytes(path.read_bytes() + b"damage\n")
    resumed = Session.resume(Journal(state))
    assert resumed.damage is not None and resumed.damage.kept is not None
    assert _mode(state / resumed.damage.kept) == 0o600
    resumed.resume_last_good()  # a new game file with the good lines
    now = Journal(state).current_path()
    assert now is not None and now != path and _mode(now) == 0o600
    assert sorted(_mode(p) for p in state.iterdir()) == [0o600] * len(list(state.iterdir()))


@pytest.mark.usefixtures("umask_022")
def test_a_folder_that_exists_keeps_its_mode_and_a_readable_game_file_is_made_private(
    tmp_path: Path,
) -> None:
    tmp_path.chmod(0o750)
    _session, path = played(tmp_path)
    path.chmod(0o644)  # a game file others may read
    resumed = Session.resume(Journal(tmp_path))
    assert _mode(path) == 0o644  # reading it changes nothing
    resumed.play(Turn(1, Pass()))
    assert _mode(path) == 0o600 and _mode(tmp_path) == 0o750
