"""Moves as values: what a player does in one turn (python-chess style, immutable and hashable).

A turn is one `Turn`: the explorer ship's steps, then exactly one discovery action, plus the
player-ship details of the variants and the tile that refilled the display (recorded by the
engine so that a logged turn replays exactly).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from companion.errors import MalformedMove

Cell = tuple[int, int]


class Variant(StrEnum):
    """Base game, Fortgeschrittenenspiel (player ship may move) and Profispiel (must move)."""

    BASE = "base"
    ADVANCED = "advanced"
    PRO = "pro"


class Matching(StrEnum):
    """Free placement (German original, default) or strict (edges must fit, translations)."""

    FREE = "free"
    STRICT = "strict"


@dataclass(frozen=True, slots=True)
class TakeToBoard:
    """Take the tile in display `slot` and lay it on `cell` of the board, turned `rotation`."""

    slot: Cell
    cell: Cell
    rotation: int = 0


@dataclass(frozen=True, slots=True)
class TakeToStorage:
    """Take the tile in display `slot` into the storage."""

    slot: Cell


@dataclass(frozen=True, slots=True)
class StorageToBoard:
    """Lay the stored tile on `cell` of the board, turned `rotation`."""

    cell: Cell
    rotation: int = 0


@dataclass(frozen=True, slots=True)
class Discard:
    """Remove the tile on `cell` of the board; it goes back into the box."""

    cell: Cell


@dataclass(frozen=True, slots=True)
class Pass:
    """Do nothing after moving the ship."""


Action = TakeToBoard | TakeToStorage | StorageToBoard | Discard | Pass


@dataclass(frozen=True, slots=True)
class Turn:
    """One whole turn.

    steps: how far the explorer ship moves clockwise (at least 1).
    ship_path: variants only; the player ship's paid steps (1 shell each) before a tile is laid,
    each onto a tile that is a horizontal, vertical or diagonal neighbour of the last.
    ship_to: Fortgeschrittenenspiel only; where the player ship is put after the action.
    drawn: the tile that refilled the emptied display slot; None lets the engine draw from the
    top of its stack (a camera table always says what was drawn).
    """

    steps: int
    action: Action = Pass()
    ship_path: tuple[Cell, ...] = ()
    ship_to: Cell | None = None
    drawn: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"steps": self.steps, "action": action_to_json(self.action)}
        if self.ship_path:
            out["ship_path"] = [list(c) for c in self.ship_path]
        if self.ship_to is not None:
            out["ship_to"] = list(self.ship_to)
        if self.drawn is not None:
            out["drawn"] = self.drawn
        return out

    @classmethod
    def from_json(cls, data: Any) -> Turn:
        """Parse a turn; anything that is not a turn raises MalformedMove."""
        if not isinstance(data, dict):
            raise MalformedMove("A turn must be an object with steps and an action.")
        steps = data.get("steps")
        if type(steps) is not int:
            raise MalformedMove("A turn needs the ship's steps as a whole number.")
        path = data.get("ship_path", [])
        if not isinstance(path, list):
            raise MalformedMove("ship_path must be a list of cells.")
        ship_to = data.get("ship_to")
        drawn = data.get("drawn")
        if drawn is not None and not isinstance(drawn, str):
            raise MalformedMove("drawn must be a tile id.")
        return cls(
            steps=steps,
            action=action_from_json(data.get("action", {"type": "pass"})),
            ship_path=tuple(_cell(c, "ship_path") for c in path),
            ship_to=None if ship_to is None else _cell(ship_to, "ship_to"),
            drawn=drawn,
        )


_ACTION_NAMES: dict[type, str] = {
    TakeToBoard: "take_to_board",
    TakeToStorage: "take_to_storage",
    StorageToBoard: "storage_to_board",
    Discard: "discard",
    Pass: "pass",
}


def action_to_json(action: Action) -> dict[str, Any]:
    """The JSON form of an action: {"type": ..., fields...}."""
    out: dict[str, Any] = {"type": _ACTION_NAMES[type(action)]}
    if isinstance(action, TakeToBoard | TakeToStorage):
        out["slot"] = list(action.slot)
    if isinstance(action, TakeToBoard | StorageToBoard | Discard):
        out["cell"] = list(action.cell)
    if isinstance(action, TakeToBoard | StorageToBoard):
        out["rotation"] = action.rotation
    return out


def _cell(value: Any, what: str) -> Cell:
    if isinstance(value, list | tuple) and len(value) == 2 and all(type(v) is int for v in value):
        return (value[0], value[1])
    raise MalformedMove(f"{what} must be a [row, column] pair of whole numbers.")


def _rotation(value: Any) -> int:
    if type(value) is not int:
        raise MalformedMove("rotation must be 0, 90, 180 or 270.")
    return int(value)


def action_from_json(data: Any) -> Action:
    """Parse an action; anything that is not one raises MalformedMove."""
    if not isinstance(data, dict):
        raise MalformedMove("An action must be an object with a type.")
    kind = data.get("type")
    if kind == "take_to_board":
        return TakeToBoard(
            _cell(data.get("slot"), "slot"),
            _cell(data.get("cell"), "cell"),
            _rotation(data.get("rotation", 0)),
        )
    if kind == "take_to_storage":
        return TakeToStorage(_cell(data.get("slot"), "slot"))
    if kind == "storage_to_board":
        return StorageToBoard(_cell(data.get("cell"), "cell"), _rotation(data.get("rotation", 0)))
    if kind == "discard":
        return Discard(_cell(data.get("cell"), "cell"))
    if kind == "pass":
        return Pass()
    names = ", ".join(_ACTION_NAMES.values())
    raise MalformedMove(f"Unknown action {kind!r}; use one of {names}.")
