"""Durable games: every confirmed turn is on disk before anyone sees it.

A game is an append-only file of JSON lines, one event a line, the first its setup (which
names the game: `"game"`, Māori's when it names none), in a journal's directory: Māori's
Session keeps its events (setup, turn, undo, log) in the state directory, the board games'
session (companion.games.session) its own (setup, action, undo) in a folder of it. A line is
confirmed once it is written whole, newline included, and fsync'ed. An append that fails (a
full disk, an I/O error) is cut off the file again before the error is raised, so the file
holds exactly the confirmed lines; nothing is buffered in memory to be written later.
Reading back, a last line without its newline (torn by a power cut mid-write) was never
confirmed and is left out; any other line that is not an event makes the file damaged: it is
reported, never cut or rewritten. Which file is the current game is named by a small pointer
file replaced atomically (temp file, fsync, os.replace, directory fsync).
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from companion.errors import DataError
from companion.errors import StorageError as StorageError

CURRENT = "current"
GAME_FILE = re.compile(r"game-[0-9]{8}-[0-9]{6}-[0-9]+\.jsonl")
#: Each event type a journal takes -> the field such a line must hold as an object (None:
#: nothing checked beyond the type).
MAORI_EVENTS: Mapping[str, str | None] = {
    "setup": None,
    "turn": None,
    "undo": None,
    "log": "entry",
}
BOARD_EVENTS: Mapping[str, str | None] = {"setup": None, "action": "action", "undo": None}
#: Game files, their damaged copies and the pointer are their owner's alone (the players'
#: names and the night's play are nobody else's on a shared Pi).
GAME_MODE = 0o600
#: The game a setup line names when it names none.
DEFAULT_GAME = "maori"


def game_of(setup: dict[str, Any]) -> str:
    """The game a setup event names (`"game"`), Māori's when it names none."""
    game = setup.get("game", DEFAULT_GAME)
    return game if isinstance(game, str) else ""


def storage_sentence(what: str, exc: OSError) -> str:
    """One sentence for a failed write of `what` ("The game")."""
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return f"{what} could not be saved: the disk is full."
    return f"{what} could not be saved ({exc.strerror or exc})."


def _fsync_dir(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _write_all(fd: int, data: bytes) -> None:
    """os.write until every byte is written (a write may take only part of them)."""
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        if written <= 0:
            raise OSError(errno.EIO, "the file took no bytes")
        view = view[written:]


def _lines(events: tuple[dict[str, Any], ...] | list[dict[str, Any]]) -> bytes:
    return b"".join(json.dumps(e, separators=(",", ":")).encode("utf-8") + b"\n" for e in events)


def _unlink_quietly(path: Path) -> None:
    with contextlib.suppress(OSError):  # the error being raised already says what went wrong
        path.unlink()


def write_atomically(path: Path, text: str, mode: int | None = None) -> None:
    """Replace `path` with `text` so that a crash leaves either the old or the new file; a
    failed write leaves the old file and no temp file.

    `mode`, if given, is the new file's permissions from its first byte (0o600: its owner
    alone); otherwise the process's umask decides, as for any new file."""
    tmp = path.with_name(f".{path.name}.tmp")
    fd = os.open(
        tmp,
        os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC,
        0o666 if mode is None else mode,
    )
    try:
        try:
            if mode is not None:
                os.fchmod(fd, mode)  # also when an old temp file was left with other permissions
            _write_all(fd, text.encode("utf-8"))
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except OSError:
        _unlink_quietly(tmp)
        raise
    _fsync_dir(path.parent)


@dataclass(frozen=True, slots=True)
class Saved:
    """What `Journal.load` found: the events of the confirmed lines before any damage.

    `damage` is one sentence when the file (or the pointer to it) is damaged, None when
    every confirmed line is an event; `path` is the file read, None when there is none to
    keep (the pointer names a missing file)."""

    path: Path | None
    events: tuple[dict[str, Any], ...]
    damage: str | None = None


class Journal:
    """A directory holding one table's current game as an event file; `events` are the event
    types its lines may hold (MAORI_EVENTS, BOARD_EVENTS)."""

    def __init__(
        self, directory: str | Path, events: Mapping[str, str | None] = MAORI_EVENTS
    ) -> None:
        self.directory = Path(directory)
        self.events = events
        try:
            # A folder made here is its owner's alone, as the game files in it are.
            self.directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        except OSError as exc:
            raise DataError(
                str(directory), f"cannot be used as the state directory ({exc.strerror})"
            ) from None
        if not os.access(self.directory, os.W_OK):
            raise DataError(str(directory), "is not writable")
        self._fd: int | None = None
        self._path: Path | None = None
        # The length of the confirmed lines of `_path`: appends go after it, failures are cut
        # back to it.
        self._good: int | None = None

    def current_path(self) -> Path | None:
        """The current game's file, if there is one."""
        pointer = self.directory / CURRENT
        try:
            name = pointer.read_text(encoding="utf-8").strip()
        except FileNotFoundError:
            return None
        except UnicodeDecodeError:
            name = ""
        if not GAME_FILE.fullmatch(name):
            raise DataError(str(pointer), "does not name a game file")
        return self.directory / name

    def start(self, setup: dict[str, Any], *events: dict[str, Any]) -> None:
        """Begin a new game file with its setup event (and `events` after it) and make it the
        current game. A failure leaves the current game as it was."""
        stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
        n = 0
        while (path := self.directory / f"game-{stamp}-{n}.jsonl").exists():
            n += 1
        data = _lines([setup, *events])
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, GAME_MODE)
        try:
            try:
                _write_all(fd, data)
                os.fsync(fd)
            finally:
                os.close(fd)
            _fsync_dir(self.directory)
            write_atomically(self.directory / CURRENT, path.name + "\n", mode=GAME_MODE)
        except OSError:
            if self._current_name() != path.name:
                _unlink_quietly(path)
                raise
            # Only the directory's fsync after the pointer's replacement failed: the new game
            # is the current one, so it is the one to go on with.
        self.close()
        self._path, self._good = path, len(data)

    def _current_name(self) -> str | None:
        try:
            return (self.directory / CURRENT).read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError):
            return None

    def append(self, *events: dict[str, Any]) -> None:
        """Add events; they are on disk when this returns. A failure (OSError) leaves the
        file at its confirmed lines: none of these events stays in it or reaches it later."""
        if self._path is None or self._good is None:
            raise DataError(str(self.directory), "has no game to add to")
        data = _lines(events)
        if self._fd is None:
            self._fd = os.open(self._path, os.O_WRONLY | os.O_APPEND | os.O_CLOEXEC)
            with contextlib.suppress(OSError):  # a file others may read is made the owner's
                if os.fstat(self._fd).st_mode & 0o077:
                    os.fchmod(self._fd, GAME_MODE)
        fd = self._fd
        try:
            if os.fstat(fd).st_size != self._good:  # a torn line, or a cut that failed
                os.ftruncate(fd, self._good)
            _write_all(fd, data)
            os.fsync(fd)
        except OSError:
            self._cut_back(fd)
            raise
        self._good += len(data)

    def _cut_back(self, fd: int) -> None:
        """Cut the file back to its confirmed lines after a failed append. Should this fail
        too, the next append cuts first and a restart leaves out the unterminated line."""
        assert self._good is not None
        with contextlib.suppress(OSError):
            os.ftruncate(fd, self._good)
            os.fsync(fd)

    def load(self) -> Saved | None:
        """The current game's confirmed events up to any damage, or None without a game.
        Nothing is changed on disk; appends then go after the confirmed lines (unless the
        file is damaged: then `start` must begin another)."""
        self.close()
        self._path = self._good = None
        pointer = self.directory / CURRENT
        try:
            path = self.current_path()
        except DataError as exc:
            return Saved(pointer, (), exc.message)
        except OSError as exc:
            return Saved(None, (), f"{pointer} cannot be read ({exc.strerror})")
        if path is None:
            return None
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            return Saved(None, (), f"{path.name} is named as the current game but is missing")
        except OSError as exc:
            return Saved(None, (), f"{path.name} cannot be read ({exc.strerror})")
        events: list[dict[str, Any]] = []
        good = 0
        *whole, _torn = data.split(b"\n")  # a last line without its newline: never confirmed
        for i, line in enumerate(whole, start=1):
            event = _event(line, self.events)
            if event is None:
                return Saved(path, tuple(events), f"line {i} of {path.name} is damaged")
            events.append(event)
            good += len(line) + 1
        if not events:
            why = "is empty" if not data else "ends inside its setup line"
            return Saved(path, (), f"{path.name} {why}")
        self._path, self._good = path, good
        return Saved(path, tuple(events))

    def keep_aside(self, path: Path) -> Path:
        """A dated copy of a damaged file beside it (name.damaged-YYYYMMDDTHHMMSSZ), never
        overwriting one; a copy with the same bytes made on an earlier start is reused."""
        data = path.read_bytes()
        for old in sorted(path.parent.glob(f"{path.name}.damaged-*")):
            try:
                if old.read_bytes() == data:
                    return old
            except OSError:
                continue
        stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
        n = 0
        while True:
            copy = path.with_name(f"{path.name}.damaged-{stamp}" + (f"-{n}" if n else ""))
            try:
                fd = os.open(copy, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, GAME_MODE)
            except FileExistsError:
                n += 1
                continue
            break
        try:
            try:
                _write_all(fd, data)
                os.fsync(fd)
            finally:
                os.close(fd)
            _fsync_dir(path.parent)
        except OSError:
            _unlink_quietly(copy)
            raise
        return copy

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def _event(line: bytes, types: Mapping[str, str | None]) -> dict[str, Any] | None:
    """The event on one confirmed line, or None if the line is not one of `types`."""
    try:
        event = json.loads(line)
    except (ValueError, RecursionError):  # not JSON, not UTF-8, a number too long
        return None
    if not isinstance(event, dict) or event.get("type") not in types:
        return None
    field = types[event["type"]]
    if field is not None and not isinstance(event.get(field), dict):
        return None
    return event


G = TypeVar("G")


def longest_replay(
    events: Sequence[dict[str, Any]], replay: Callable[[int], G]
) -> tuple[tuple[dict[str, Any], ...], G | None, str | None]:
    """The longest run of `events` from the start that `replay(n)` (the game of the first n
    events, DataError when they do not replay) takes, its game (None if not even the setup
    replays) and why the rest does not (None when all of it replays)."""
    try:
        return tuple(events), replay(len(events)), None
    except DataError as exc:
        problem = exc.message
    # A run that replays stays replayable when shortened: search for its longest length.
    good, bad, game = 0, len(events), None
    while bad - good > 1:
        middle = (good + bad) // 2
        try:
            game, good = replay(middle), middle
        except DataError:
            bad = middle
    return tuple(events[:good]), game, problem
