"""The games beside Māori, each a pure library behind companion.games.base.BoardGame.

`GAMES` maps what `--game` takes to "module:Class"; a game's module is imported only when that
game is asked for, so a new game plugs in with one line here.
"""

from __future__ import annotations

import importlib
from typing import cast

from companion.errors import CompanionError
from companion.games.base import BoardGame

#: `--game` key -> "module:Class" of its BoardGame. Māori ("maori") is the companion itself.
GAMES: dict[str, str] = {
    "giants": "companion.games.giants:GiantsGame",
    "tongiaki": "companion.games.tongiaki:Tongiaki",
}

#: The game the companion plays when none is named.
DEFAULT_GAME = "maori"


class UnknownGame(CompanionError):
    """A `--game` key that names no game the companion knows."""


def game_keys() -> list[str]:
    """Every key `--game` takes, Māori first."""
    return [DEFAULT_GAME, *sorted(GAMES)]


def game_class(key: str) -> type[BoardGame]:
    """The BoardGame class for `key`; UnknownGame (one sentence) for a key no game has."""
    target = GAMES.get(key)
    if target is None:
        known = ", ".join(sorted(GAMES))
        raise UnknownGame(f"There is no game {key!r} among the board games ({known}).")
    module, _, name = target.partition(":")
    return cast("type[BoardGame]", getattr(importlib.import_module(module), name))
