"""Stand-ins the live-loop tests share: a motion gate that counts frames and the table a
fake camera films."""

from __future__ import annotations

import numpy as np

from companion.reading import TableRead
from companion.state import GameState
from companion.tracker import read_of_state


class CountingGate:
    """Still after `needed` frames since the last reset."""

    def __init__(self, needed: int = 3) -> None:
        self.needed = needed
        self.seen = 0

    def feed(self, image: np.ndarray, at: float) -> bool:
        self.seen += 1
        return self.seen >= self.needed

    def reset(self) -> None:
        self.seen = 0


class Table:
    """The physical table the fake camera films: a game state the test changes by hand."""

    def __init__(self, state: GameState) -> None:
        self.state = state

    def read(self, image: np.ndarray) -> TableRead:
        return read_of_state(self.state)
