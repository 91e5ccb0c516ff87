"""Builders for hand-made positions: a game whose display, stack and boards a test chooses."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from companion.catalogue import default_catalogue
from companion.game import Game, Seat, new_game
from companion.state import Placed

# A display with no volcano, one tile type per row, to make costs easy to read.
PLAIN_DISPLAY: list[list[str | None]] = [
    ["water", "water-boat", "single-palm1", "end-s-palm1"],
    ["water", "water-boat", "single-palm2", "end-n-palm1"],
    ["water", "water-shell", "single-palm1-hut", "end-e-palm1"],
    ["water", "water-shell", "single-palm2-hut", "end-w-palm1"],
]


def make_game(
    display: Sequence[Sequence[str | None]] | None = None,
    *,
    names: Sequence[str] = ("Red", "Blue"),
    ship: int = 0,
    start_player: int = len(("Red", "Blue")) - 1,
    **options: object,
) -> Game:
    """A game where Red moves first (the start player is the last seat), from `display`."""
    seats = [Seat(name, i + 1) for i, name in enumerate(names)]
    state = new_game(
        seats,
        display=[list(r) for r in (display or PLAIN_DISPLAY)],
        ship=ship,
        start_player=len(names) - 1 if start_player is None else start_player,
        seed=7,
        **options,  # type: ignore[arg-type]
    )
    return Game(state)


def lay(game: Game, player: int, cell: tuple[int, int], tile: str, rotation: int = 0) -> None:
    """Put a tile straight onto a board (setting up a position, not playing a turn)."""
    game.state.players[player].board[cell[0]][cell[1]] = Placed(tile, rotation)
    game.state.stack.remove(tile)


@pytest.fixture
def catalogue():  # type: ignore[no-untyped-def]
    return default_catalogue()
