"""The journal's promise, observed through the file layer: a line is flushed and fsync'ed to
the game file before `append` returns, and the pointer replaced only once its text is synced;
what a damaged journal names and keeps aside."""

from __future__ import annotations

import errno
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from companion.errors import DataError
from companion.game import Seat
from companion.journal import (
    CURRENT,
    DEFAULT_GAME,
    Journal,
    game_of,
    longest_replay,
    write_atomically,
)
from companion.session import Session


@dataclass(frozen=True)
class Synced:
    """One fsync: the inode it was for and that file's bytes on disk at that moment."""

    inode: int
    is_dir: bool
    data: bytes | None


class FsyncLog(list[Synced]):
    def of(self, path: Path) -> list[bytes | None]:
        inode = path.stat().st_ino
        return [s.data for s in self if s.inode == inode]


@pytest.fixture
def fsyncs(monkeypatch: pytest.MonkeyPatch) -> FsyncLog:
    log = FsyncLog()
    real = os.fsync

    def watched(fd: int) -> None:
        where = Path(os.readlink(f"/proc/self/fd/{fd}"))
        is_dir = where.is_dir()
        log.append(Synced(os.fstat(fd).st_ino, is_dir, None if is_dir else where.read_bytes()))
        real(fd)

    monkeypatch.setattr(os, "fsync", watched)
    return log


def test_each_appended_line_is_on_disk_and_synced_before_append_returns(
    tmp_path: Path, fsyncs: FsyncLog
) -> None:
    journal = Journal(tmp_path)
    journal.start({"kind": "setup"})
    game = journal.current_path()
    assert game is not None
    assert fsyncs.of(game) == [b'{"kind":"setup"}\n']
    fsyncs.clear()
    journal.append({"kind": "turn", "n": 1})
    assert fsyncs.of(game) == [b'{"kind":"setup"}\n{"kind":"turn","n":1}\n']
    journal.append({"kind": "turn", "n": 2})
    assert fsyncs.of(game)[-1] == (
        b'{"kind":"setup"}\n{"kind":"turn","n":1}\n{"kind":"turn","n":2}\n'
    )
    assert len(fsyncs.of(game)) == 2
    journal.close()


def test_a_new_game_file_is_synced_with_its_directory_before_the_pointer_names_it(
    tmp_path: Path, fsyncs: FsyncLog
) -> None:
    journal = Journal(tmp_path)
    journal.start({"kind": "setup"})
    game = journal.current_path()
    assert game is not None
    directory = tmp_path.stat().st_ino
    kinds = [
        "dir" if s.is_dir else "game" if s.data == b'{"kind":"setup"}\n' else "pointer"
        for s in fsyncs
    ]
    # the game file, its directory entry, the pointer's text, then the pointer's rename
    assert kinds == ["game", "dir", "pointer", "dir"]
    assert [s.inode for s in fsyncs if s.is_dir] == [directory, directory]
    assert fsyncs[2].data == f"{game.name}\n".encode()
    assert (tmp_path / CURRENT).read_text() == f"{game.name}\n"


def test_write_atomically_syncs_the_text_then_the_rename(tmp_path: Path, fsyncs: FsyncLog) -> None:
    target = tmp_path / "kept.json"
    write_atomically(target, "{}\n", mode=0o600)
    assert [(s.is_dir, s.data) for s in fsyncs] == [(False, b"{}\n"), (True, None)]
    assert fsyncs[1].inode == tmp_path.stat().st_ino
    assert target.read_text() == "{}\n"
    assert oct(target.stat().st_mode & 0o777) == oct(0o600)
    assert not (tmp_path / ".kept.json.tmp").exists()


SETUP = {"type": "setup", "n": 0}


def lines_of(path: Path) -> list[bytes]:
    return path.read_bytes().splitlines(keepends=True)


def events_of(journal: Journal) -> list[dict[str, object]]:
    """The saved game's events, checking that nothing in it is damaged."""
    saved = journal.load()
    assert saved is not None and saved.damage is None, saved
    return list(saved.events)


def damage_of(journal: Journal) -> tuple[list[dict[str, object]], str | None]:
    """The events kept before the damage, and the sentence naming it."""
    saved = journal.load()
    assert saved is not None
    return list(saved.events), saved.damage


def test_a_new_file_gets_the_usual_permissions_and_a_secret_one_is_never_readable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    old = os.umask(0o022)
    try:
        write_atomically(tmp_path / "plain", "x\n")
        assert (tmp_path / "plain").stat().st_mode & 0o777 == 0o644
    finally:
        os.umask(old)
    created: list[int] = []
    real_open = os.open

    def watched(path: str, flags: int, mode: int = 0o777) -> int:
        created.append(mode)
        return real_open(path, flags, mode)

    monkeypatch.setattr(os, "open", watched)
    write_atomically(tmp_path / "secret", "pin\n", mode=0o600)
    assert created[0] == 0o600  # the temp file is its owner's from its first byte
    assert (tmp_path / "secret").stat().st_mode & 0o777 == 0o600


def test_the_state_directory_is_made_with_its_parents(tmp_path: Path) -> None:
    journal = Journal(tmp_path / "a" / "b" / "state")
    journal.start(SETUP)
    assert events_of(journal) == [SETUP]


def test_an_unusable_state_directory_names_itself_and_the_reason(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(DataError) as error:
        Journal(blocker / "state")
    assert error.value.message == (
        f"{blocker / 'state'}: cannot be used as the state directory (Not a directory)"
    )


def test_a_state_directory_that_cannot_be_written_is_one_sentence(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(os, "access", lambda path, mode: False)  # as for a user, not root
    with pytest.raises(DataError) as error:
        Journal(tmp_path)
    assert error.value.message == f"{tmp_path}: is not writable"


def test_a_journal_opened_on_a_saved_game_appends_to_it(tmp_path: Path) -> None:
    first = Journal(tmp_path)
    first.start(SETUP)
    first.close()
    again = Journal(tmp_path)
    assert events_of(again) == [SETUP]  # loading opens the saved game for appends
    again.append({"type": "turn", "n": 1})
    again.close()
    again.append({"type": "turn", "n": 2})  # reopened after close
    assert events_of(Journal(tmp_path)) == [
        SETUP,
        {"type": "turn", "n": 1},
        {"type": "turn", "n": 2},
    ]


def test_appending_without_a_game_is_one_sentence(tmp_path: Path) -> None:
    with pytest.raises(DataError) as error:
        Journal(tmp_path).append({"type": "turn"})
    assert error.value.message == f"{tmp_path}: has no game to add to"


def test_games_started_in_the_same_second_get_their_own_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    moment = time.gmtime(1_800_000_000)
    monkeypatch.setattr(time, "gmtime", lambda *args: moment)
    journal = Journal(tmp_path)
    for n in range(3):
        journal.start({"type": "setup", "n": n})
    stamp = time.strftime("%Y%m%d-%H%M%S", moment)
    names = sorted(p.name for p in tmp_path.glob("game-*"))
    assert names == [f"game-{stamp}-{n}.jsonl" for n in range(3)]
    assert journal.current_path() == tmp_path / f"game-{stamp}-2.jsonl"
    assert events_of(Journal(tmp_path)) == [{"type": "setup", "n": 2}]


def test_a_pointer_to_anything_but_a_game_file_is_refused(tmp_path: Path) -> None:
    (tmp_path / CURRENT).write_text("../../etc/passwd\n")
    saved = Journal(tmp_path).load()
    assert saved is not None and saved.events == ()
    assert saved.damage == f"{tmp_path / CURRENT}: does not name a game file"


def test_a_missing_game_file_is_one_sentence(tmp_path: Path) -> None:
    journal = Journal(tmp_path)
    journal.start(SETUP)
    game = journal.current_path()
    assert game is not None
    journal.close()
    game.unlink()
    saved = Journal(tmp_path).load()
    assert saved is not None and saved.path is None and saved.events == ()
    assert saved.damage == f"{game.name} is named as the current game but is missing"


def _game_with(tmp_path: Path, text: bytes) -> Path:
    journal = Journal(tmp_path)
    journal.start(SETUP)
    game = journal.current_path()
    assert game is not None
    journal.close()
    game.write_bytes(game.read_bytes() + text)
    return game


def test_a_blank_line_is_damage_named_with_the_lines_before_it_kept(tmp_path: Path) -> None:
    game = _game_with(tmp_path, b'\n{"type":"turn","n":1}\n')
    assert damage_of(Journal(tmp_path)) == ([SETUP], f"line 2 of {game.name} is damaged")


def test_a_damaged_last_line_with_its_newline_is_damage_not_a_torn_tail(tmp_path: Path) -> None:
    game = _game_with(tmp_path, b'{"type":"turn","n":1}\n{"type":"tu\x00\x00\n')
    assert damage_of(Journal(tmp_path)) == (
        [SETUP, {"type": "turn", "n": 1}],
        f"line 3 of {game.name} is damaged",
    )


def test_a_damaged_line_before_the_last_is_named(tmp_path: Path) -> None:
    game = _game_with(tmp_path, b'{"type":"tu\x00\x00\n{"type":"turn","n":2}\n')
    assert damage_of(Journal(tmp_path)) == ([SETUP], f"line 2 of {game.name} is damaged")


def test_a_line_that_is_no_event_is_named(tmp_path: Path) -> None:
    game = _game_with(tmp_path, b'[1, 2]\n{"type":"turn","n":2}\n')
    assert damage_of(Journal(tmp_path)) == ([SETUP], f"line 2 of {game.name} is damaged")


def test_a_torn_tail_is_left_out_and_cut_by_the_next_line_whole_lines_kept(
    tmp_path: Path,
) -> None:
    game = _game_with(tmp_path, b'{"type":"turn","n":1}\n{"type":"tu')
    before = game.read_bytes()
    whole = lines_of(game)[:2]
    journal = Journal(tmp_path)
    assert events_of(journal) == [SETUP, {"type": "turn", "n": 1}]
    assert game.read_bytes() == before  # loading changes nothing on disk
    journal.append({"type": "turn", "n": 2})
    journal.close()
    assert lines_of(game) == [*whole, b'{"type":"turn","n":2}\n']


def test_loading_a_whole_game_never_rewrites_it(tmp_path: Path) -> None:
    game = _game_with(tmp_path, b'{"type":"turn","n":1}\n')
    inode, data = game.stat().st_ino, game.read_bytes()
    assert events_of(Journal(tmp_path)) == [SETUP, {"type": "turn", "n": 1}]
    assert (game.stat().st_ino, game.read_bytes()) == (inode, data)


# ------------------------------------------------------------ damaged files kept aside


def test_damaged_files_kept_aside_in_the_same_second_each_get_their_own_copy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    moment = time.gmtime(1_800_000_000)
    monkeypatch.setattr(time, "gmtime", lambda *args: moment)
    stamp = time.strftime("%Y%m%dT%H%M%SZ", moment)
    damaged = tmp_path / "game.jsonl"
    journal = Journal(tmp_path)
    for n in range(3):
        damaged.write_bytes(b"garbage %d\n" % n)
        copy = journal.keep_aside(damaged)
        assert copy.name == f"game.jsonl.damaged-{stamp}" + (f"-{n}" if n else "")
        assert copy.read_bytes() == b"garbage %d\n" % n
        assert oct(copy.stat().st_mode & 0o777) == oct(0o600)  # like the journal, its owner's


def test_an_unreadable_old_copy_is_passed_over_and_the_same_damage_copied_once(
    tmp_path: Path,
) -> None:
    damaged = tmp_path / "game.jsonl"
    damaged.write_bytes(b"garbage\n")
    (tmp_path / "game.jsonl.damaged-20000101T000000Z").mkdir()  # cannot be read as a file
    kept = tmp_path / "game.jsonl.damaged-20000101T000001Z"
    kept.write_bytes(b"garbage\n")
    assert Journal(tmp_path).keep_aside(damaged) == kept
    assert len(list(tmp_path.glob("game.jsonl.damaged-*"))) == 2


def test_a_copy_that_cannot_be_synced_is_removed_and_the_sync_error_raised(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    damaged = tmp_path / "game.jsonl"
    damaged.write_bytes(b"garbage\n")

    def full(fd: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)
    with pytest.raises(OSError, match="No space left"):
        Journal(tmp_path).keep_aside(damaged)
    assert list(tmp_path.glob("game.jsonl.damaged-*")) == []

    def refused(self: Path, missing_ok: bool = False) -> None:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(Path, "unlink", refused)
    with pytest.raises(OSError, match="No space left"):  # not the failed clean-up's error
        Journal(tmp_path).keep_aside(damaged)


# ------------------------------------------------------------ the file layer's failures


def test_a_file_that_takes_bytes_one_at_a_time_gets_them_all(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    journal = Journal(tmp_path)
    journal.start({"type": "setup", "n": 0})
    real = os.write
    monkeypatch.setattr(os, "write", lambda fd, data: real(fd, bytes(data[:1])))
    journal.append({"type": "setup", "n": 1})
    journal.close()
    monkeypatch.undo()
    assert events_of(Journal(tmp_path)) == [{"type": "setup", "n": 0}, {"type": "setup", "n": 1}]


def test_a_file_that_takes_no_bytes_is_an_input_output_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    journal = Journal(tmp_path)
    journal.start({"type": "setup", "n": 0})
    monkeypatch.setattr(os, "write", lambda fd, data: 0)
    with pytest.raises(OSError) as err:
        journal.append({"type": "setup", "n": 1})
    assert (err.value.errno, err.value.strerror) == (errno.EIO, "the file took no bytes")


def test_a_temp_file_left_by_a_crash_is_overwritten_whole(tmp_path: Path) -> None:
    (tmp_path / ".kept.json.tmp").write_text('{"a much longer text": 1}\n')
    write_atomically(tmp_path / "kept.json", "{}\n")
    assert (tmp_path / "kept.json").read_text() == "{}\n"


def test_a_text_that_cannot_be_synced_leaves_the_old_file_and_no_temp_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "kept.json").write_text("old\n")

    def full(fd: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)
    with pytest.raises(OSError, match="No space left"):
        write_atomically(tmp_path / "kept.json", "new\n")
    assert (tmp_path / "kept.json").read_text() == "old\n"
    assert not (tmp_path / ".kept.json.tmp").exists()


def test_a_game_file_is_its_owners_alone_whatever_the_umask(tmp_path: Path) -> None:
    old = os.umask(0)  # a umask that takes nothing away: the mode is the journal's own
    try:
        Journal(tmp_path).start({"type": "setup"})
    finally:
        os.umask(old)
    (game,) = tmp_path.glob("game-*.jsonl")
    assert game.stat().st_mode & 0o777 == 0o600  # no execute bit, nobody else's


def test_a_log_line_without_its_entry_is_damage(tmp_path: Path) -> None:
    journal = Journal(tmp_path)
    journal.start({"type": "setup"})
    journal.append({"type": "log", "entry": "Red passed"})
    journal.close()
    saved = Journal(tmp_path).load()
    assert saved is not None and saved.damage is not None
    assert list(saved.events) == [{"type": "setup"}]


# ------------------------------------------------------------ what a damaged journal names


def test_a_pointer_or_game_file_that_cannot_be_read_is_named_with_the_reason(
    tmp_path: Path,
) -> None:
    (tmp_path / CURRENT).mkdir()
    saved = Journal(tmp_path).load()
    assert saved is not None and saved.path is None and saved.events == ()
    assert saved.damage == f"{tmp_path / CURRENT} cannot be read (Is a directory)"
    (tmp_path / CURRENT).rmdir()
    (tmp_path / CURRENT).write_text("game-20260101-000000-0.jsonl\n")
    (tmp_path / "game-20260101-000000-0.jsonl").mkdir()
    saved = Journal(tmp_path).load()
    assert saved is not None and saved.path is None and saved.events == ()
    assert saved.damage == "game-20260101-000000-0.jsonl cannot be read (Is a directory)"


def test_a_pointer_that_is_no_text_is_damage_and_kept_aside(tmp_path: Path) -> None:
    (tmp_path / CURRENT).write_bytes(b"\xff\xfe game\n")
    saved = Journal(tmp_path).load()
    assert saved is not None and saved.events == ()
    assert saved.path == tmp_path / CURRENT  # the file a host keeps a copy of
    assert saved.damage == f"{tmp_path / CURRENT}: does not name a game file"


def test_a_damaged_journal_takes_no_appends(tmp_path: Path) -> None:
    journal = Journal(tmp_path)
    journal.start({"type": "setup"})
    journal.close()
    game = journal.current_path()
    assert game is not None
    game.write_bytes(b"garbage\n")
    journal = Journal(tmp_path)
    assert journal.load() is not None
    with pytest.raises(DataError) as error:
        journal.append({"type": "turn"})
    assert error.value.message == f"{tmp_path}: has no game to add to"
    assert game.read_bytes() == b"garbage\n"


def test_a_game_that_does_not_replay_is_named_by_its_file_and_kept_aside(tmp_path: Path) -> None:
    session = Session(journal=Journal(tmp_path))
    session.start_game([Seat("Ana", 1), Seat("Bo", 2)], seed=1)
    path = Journal(tmp_path).current_path()
    assert path is not None
    with path.open("a") as fh:
        fh.write('{"type":"turn","turn":{"steps":"far"}}\n')
    resumed = Session.resume(Journal(tmp_path))
    assert resumed.damage is not None and resumed.damage.kept is not None
    assert resumed.damage.kept.startswith(f"{path.name}.damaged-")
    assert path.name in resumed.damage.problem


def test_a_saved_game_that_names_no_game_is_maori_and_a_name_that_is_no_text_names_none() -> None:
    assert DEFAULT_GAME == "maori"
    assert game_of({"type": "setup"}) == "maori"
    assert game_of({"type": "setup", "game": "giants"}) == "giants"
    assert game_of({"type": "setup", "game": 5}) == ""
    assert game_of({"type": "setup", "game": None}) == ""


def _replays_up_to(last: int) -> Callable[[int], str]:
    """A replay that takes at most `last` events (and always none)."""

    def replay(n: int) -> str:
        if n > last:
            raise DataError("", f"event {last + 1} does not replay")
        return f"game of {n}"

    return replay


def test_the_longest_replayable_run_is_kept_with_its_game_and_why_the_rest_is_not() -> None:
    events = [{"type": "setup"}, {"type": "turn"}, {"type": "turn"}, {"type": "turn"}]
    assert longest_replay(events, _replays_up_to(4)) == (tuple(events), "game of 4", None)
    assert longest_replay(events, _replays_up_to(2)) == (
        tuple(events[:2]),
        "game of 2",
        "event 3 does not replay",
    )
    # Not even the setup replays: nothing is kept and there is no game.
    assert longest_replay(events[:2], _replays_up_to(0)) == ((), None, "event 1 does not replay")
