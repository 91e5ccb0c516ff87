"""Errors that carry one sentence a player or a maintainer understands."""

from __future__ import annotations


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
