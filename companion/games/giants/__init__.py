"""Giants (Matagot, 2008): the companion follows a real game of Moai on Easter Island.

A pure library like the rest of companion/: `GiantsGame` implements the BoardGame interface of
companion.games.base; the island is data (island.toml); docs/rules-giants.md holds the rulings.
"""

from companion.games.giants.actions import (
    Action,
    Bid,
    Choose,
    Mark,
    Move,
    Pass,
    Place,
    Reclaim,
    Roll,
    TakeRongo,
)
from companion.games.giants.game import GiantsGame
from companion.games.giants.island import Island, default_island

__all__ = [
    "Action",
    "Bid",
    "Choose",
    "GiantsGame",
    "Island",
    "Mark",
    "Move",
    "Pass",
    "Place",
    "Reclaim",
    "Roll",
    "TakeRongo",
    "default_island",
]
