"""What a read of the table says, shaped exactly like `companion read --json` (docs/formats.md).

The recogniser (vision/) produces these; the turn tracker consumes them; the synthetic
renderer's ground truth uses the same types (confidence 1), so a benchmark compares like with
like. They live in companion/ because they are the game's view of the table, not OpenCV's.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

Cell = tuple[int, int]


class CameraState(StrEnum):
    """Whether the camera gives pictures of the table (as the camera reports it and as the
    pages show it)."""

    OK = "ok"  # frames come
    LOST = "lost"  # they do not: unplugged, covered, stopped
    CLOSED = "closed"  # the camera is not open
    NONE = "none"  # there is no camera at all: turns are entered by tapping


@dataclass(frozen=True, slots=True)
class CellRead:
    """One cell: a tile (id, rotation, confidence), empty, or unknown."""

    tile: str | None = None
    rotation: int = 0
    confidence: float = 1.0
    empty: bool = False

    @property
    def unknown(self) -> bool:
        return self.tile is None and not self.empty

    def to_json(self) -> dict[str, Any]:
        if self.empty:
            return {"empty": True}
        if self.tile is None:
            return {"unknown": True}
        return {
            "tile": self.tile,
            "rotation": self.rotation,
            "confidence": round(float(self.confidence), 4),
        }


EMPTY = CellRead(empty=True)
UNKNOWN = CellRead()

Grid = tuple[tuple[CellRead | None, ...], ...]


@dataclass(frozen=True, slots=True)
class SeatRead:
    """One seat's board (rows from seat north, None for non-playable cells), storage, and the
    cell the player ship stands on (variants; None: not seen)."""

    cells: Grid
    storage: CellRead | None = None
    player_ship: Cell | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "cells": [[None if c is None else c.to_json() for c in row] for row in self.cells]
        }
        if self.storage is not None:
            out["storage"] = self.storage.to_json()
        if self.player_ship is not None:
            out["player_ship"] = list(self.player_ship)
        return out


@dataclass(frozen=True, slots=True)
class TableRead:
    """The whole table: the display (4x4 from display north), the ship, the seats seen."""

    display: Grid
    ship: int | None
    seats: dict[int, SeatRead] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "display": {
                "cells": [
                    [UNKNOWN.to_json() if c is None else c.to_json() for c in row]
                    for row in self.display
                ],
                "ship": self.ship,
            },
            "seats": {str(s): self.seats[s].to_json() for s in sorted(self.seats)},
            "warnings": list(self.warnings),
        }
