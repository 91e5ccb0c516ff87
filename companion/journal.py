"""Durable games: every confirmed turn is on disk before anyone sees it.

A game is an append-only file of JSON lines (the Session's events: setup, turn, undo, log)
in the state directory. Each line is written whole, flushed and fsync'ed before the call
returns; a line torn by a power cut is the last one and is dropped when reading back, so a
game resumes at its last confirmed turn. Which file is the current game is named by a small
pointer file replaced atomically (temp file, fsync, os.replace, directory fsync).
"""

from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path
from typing import Any

from companion.errors import DataError

CURRENT = "current"
GAME_FILE = re.compile(r"game-[0-9]{8}-[0-9]{6}-[0-9]+\.jsonl")


def _fsync_dir(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_atomically(path: Path, text: str, mode: int | None = None) -> None:
    """Replace `path` with `text` so that a crash leaves either the old or the new file.

    `mode`, if given, is the new file's permissions from its first byte (0o600: its owner
    alone); otherwise the process's umask decides, as for any new file."""
    tmp = path.with_name(f".{path.name}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o666 if mode is None else mode)
    if mode is not None:
        os.fchmod(fd, mode)  # also when an old temp file was left with other permissions
    with open(fd, "w", encoding="utf-8") as fh:
        fh.write(text)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)
    _fsync_dir(path.parent)


class Journal:
    """The state directory of one table: the current game's event file."""

    def __init__(self, directory: str | Path) -> None:
        self.directory = Path(directory)
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise DataError(
                str(directory), f"cannot be used as the state directory ({exc.strerror})"
            ) from None
        if not os.access(self.directory, os.W_OK):
            raise DataError(str(directory), "is not writable")
        self._file: Any = None
        self._path: Path | None = None

    def current_path(self) -> Path | None:
        """The current game's file, if there is one."""
        pointer = self.directory / CURRENT
        try:
            name = pointer.read_text(encoding="utf-8").strip()
        except FileNotFoundError:
            return None
        if not GAME_FILE.fullmatch(name):
            raise DataError(str(pointer), "does not name a game file")
        return self.directory / name

    def start(self, setup: dict[str, Any]) -> None:
        """Begin a new game file with its setup event and make it the current game."""
        self.close()
        stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
        n = 0
        while (path := self.directory / f"game-{stamp}-{n}.jsonl").exists():
            n += 1
        with open(path, "x", encoding="utf-8") as fh:
            fh.write(json.dumps(setup, separators=(",", ":")) + "\n")
            fh.flush()
            os.fsync(fh.fileno())
        _fsync_dir(self.directory)
        write_atomically(self.directory / CURRENT, path.name + "\n")
        self._path = path

    def append(self, event: dict[str, Any]) -> None:
        """Add one event; it is on disk when this returns."""
        if self._path is None:
            self._path = self.current_path()
            if self._path is None:
                raise DataError(str(self.directory), "has no game to add to")
        if self._file is None:
            self._file = open(self._path, "a", encoding="utf-8")  # noqa: SIM115 - kept open
        self._file.write(json.dumps(event, separators=(",", ":")) + "\n")
        self._file.flush()
        os.fsync(self._file.fileno())

    def load(self) -> list[dict[str, Any]] | None:
        """The current game's events (a torn last line dropped), or None without a game."""
        path = self.current_path()
        if path is None:
            return None
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            raise DataError(str(path), "is named as the current game but is missing") from None
        events: list[dict[str, Any]] = []
        lines = data.split(b"\n")
        for i, line in enumerate(lines):
            if not line.strip():
                continue
            try:
                event = json.loads(line)
            except (json.JSONDecodeError, UnicodeDecodeError):
                if i >= len(lines) - 2:
                    break  # the last line, torn by a crash mid-write: never confirmed
                raise DataError(str(path), f"line {i + 1} is damaged") from None
            if not isinstance(event, dict):
                raise DataError(str(path), f"line {i + 1} is not an event")
            events.append(event)
        if data and not data.endswith(b"\n"):
            self._repair(path, events)
        self._path = path
        return events

    def _repair(self, path: Path, events: list[dict[str, Any]]) -> None:
        """Rewrite a file whose tail was torn, so new lines do not join the torn one."""
        text = "".join(json.dumps(e, separators=(",", ":")) + "\n" for e in events)
        write_atomically(path, text)

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None
