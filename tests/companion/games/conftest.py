"""Builders for hand-laid Tongiaki positions: the map, the boats and the top of the stack."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from companion.games.tongiaki import Tongiaki

#: Seat order gives the colours: red, blue, yellow, orange, green, purple.
FOUR = ("Rosso", "Blu", "Giallo", "Arancio")


def tile(tile_id: str, q: int, r: int, rotation: int = 0, **more: Any) -> dict[str, Any]:
    return {"tile": tile_id, "q": q, "r": r, "rotation": rotation, **more}


def laid(
    tiles: Sequence[dict[str, Any]],
    *,
    names: Sequence[str] = FOUR,
    first: Sequence[str] = (),
    to_move: int = 0,
    seed: int = 0,
) -> Tongiaki:
    """A game whose turn starts on this map, with `first` the next tiles revealed."""
    position = {"map": list(tiles), "to_move": to_move}
    return Tongiaki.new(names, seed, first=first, position=position)


def empty_tonga() -> dict[str, Any]:
    return tile("tonga", 0, 0, boats=[[], [], [], [], [], []])
