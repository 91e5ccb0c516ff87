"""Tongiaki (Thomas Rauscher, 2004) as a pure rules engine: see game.Tongiaki."""

from companion.games.tongiaki.game import Tongiaki

__all__ = ["Tongiaki"]
