"""Errors that carry one sentence a player or a maintainer understands.

Each kind says whose fault it is, and the web maps it to its HTTP status:

- `MalformedMove` (400): the request does not describe anything (a cell off the board).
- `IllegalMove` (409): a well-formed move the rules forbid in this position.
- `NotNow` (409): a request the table's state does not allow at the moment (no game is
  running, no question is open); not a move, so not an illegal one.
- `DataError` (400 when a request names the file): a file is missing or malformed.
- `StorageError` (503): the state directory could not take a write; the request was fine.
"""

from __future__ import annotations


def printable(text: str) -> str:
    """`text` with every character that is not printable written as its Python escape
    (a newline as \\n, a terminal escape as \\x1b, U+202E as \\u202e, a lone surrogate as
    \\ud800): safe for one line of a terminal, and encodable as UTF-8."""
    if text.isprintable():
        return text
    return "".join(
        c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in text
    )


def json_printable(text: str) -> str:
    """JSON text (from json.dumps) with each character that is not printable written as a
    JSON escape: the same JSON value, safe for a terminal and encodable as UTF-8. Outside
    strings JSON text is printable ASCII, so only characters inside strings change."""
    if text.isprintable():
        return text
    out: list[str] = []
    for c in text:
        code = ord(c)
        if c.isprintable():
            out.append(c)
        elif code > 0xFFFF:
            code -= 0x10000
            out.append(f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}")
        else:
            out.append(f"\\u{code:04x}")
    return "".join(out)


class CompanionError(Exception):
    """Base of every error the companion reports to a person instead of a traceback."""

    @property
    def message(self) -> str:
        return str(self.args[0]) if self.args else self.__class__.__name__


class DataError(CompanionError):
    """A file (catalogue, board layout, pack, game file) is missing, unreadable or malformed."""

    def __init__(self, source: str, problem: str) -> None:
        super().__init__(f"{source}: {problem}" if source else problem)
        self.source = source
        self.problem = problem


class MalformedMove(CompanionError):
    """A move that does not even describe a turn (a cell off the board, a rotation of 45)."""


class IllegalMove(CompanionError):
    """A well-formed move that the rules forbid in the current position."""


class GameOver(IllegalMove):
    """A move was offered after the game ended."""


class NotNow(CompanionError):
    """A request the table's current state does not allow: no game is running, no question is
    open, no turn is left to undo."""


class StorageError(CompanionError):
    """The state directory could not take a write: the server's fault, not the request's."""
