"""Tongiaki (Thomas Rauscher, 2004) as a pure rules engine: see game.Tongiaki."""

from typing import TYPE_CHECKING

from companion.games.tongiaki.game import Tongiaki

if TYPE_CHECKING:
    from companion.games.base import BoardGame

    _offers_the_interface: type[BoardGame] = Tongiaki  # mypy checks Tongiaki against it

__all__ = ["Tongiaki"]
