"""The journal's promise, observed through the file layer: a line is flushed and fsync'ed to
the game file before `append` returns, and the pointer replaced only once its text is synced."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import pytest

from companion.journal import CURRENT, Journal, write_atomically


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
