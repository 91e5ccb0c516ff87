"""A game in progress: setup, push/pop undo, the append-only event log, replay and the score.

The event log is a list of JSON objects: one `setup` event holding the initial state, then a
`turn` event per turn (with the drawn tile filled in) and an `undo` event per undo. Replaying
the log rebuilds the state exactly.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from companion.actions import Matching, Turn, Variant
from companion.catalogue import Catalogue, default_catalogue
from companion.errors import DataError, IllegalMove, MalformedMove, NotNow
from companion.rules import Reach, Rules, TurnRecord, rules_for
from companion.scoring import FinalScore, PlayerBoard, score_game
from companion.state import (
    DISPLAY_SIZE,
    SHELLS_TOTAL,
    SHIP_POSITIONS,
    START_SHELLS,
    GameState,
    PlayerState,
)

MIN_PLAYERS = 2
MAX_PLAYERS = 5
MAX_PLAYERS_ATOLL = 4


@dataclass(frozen=True, slots=True)
class Seat:
    """A player at the table: name, seat number (1..5, docs/table-kit.md) and colour."""

    name: str
    seat: int
    colour: str = ""


def new_game(
    seats: Sequence[Seat],
    *,
    start_player: int = 0,
    ship: int = 0,
    side: str = "front",
    variant: Variant | str = Variant.BASE,
    matching: Matching | str = Matching.FREE,
    catalogue: Catalogue | None = None,
    seed: int | None = None,
    display: Sequence[Sequence[str | None]] | None = None,
) -> GameState:
    """Set up a game. `seats` are in turn order (clockwise); the start player places the ship
    and the player to their left begins. Without `display` the tiles are shuffled and drawn as
    the rulebook says (volcanoes set aside, then shuffled back); with `display` (read by the
    camera) the rest of the box becomes the stack in an unknown order."""
    catalogue = catalogue or default_catalogue()
    try:
        variant = Variant(variant)
        matching = Matching(matching)
    except ValueError as exc:
        raise MalformedMove(
            f"{exc}; variants are base, advanced, pro and matching free or strict."
        ) from None
    n = len(seats)
    if not MIN_PLAYERS <= n <= MAX_PLAYERS:
        raise IllegalMove(f"Māori is played by 2 to 5 players, not {n}.")
    if side == "atoll" and n > MAX_PLAYERS_ATOLL:
        raise IllegalMove("The atoll side is played by at most 4 players.")
    layout = catalogue.board(side)
    names = [s.name.strip() for s in seats]
    if any(not name for name in names):
        raise IllegalMove("Every player needs a name.")
    if len({name.casefold() for name in names}) != n:
        raise IllegalMove("Two players have the same name.")
    seat_numbers = [s.seat for s in seats]
    if any(s not in range(1, 6) for s in seat_numbers) or len(set(seat_numbers)) != n:
        raise IllegalMove("Each player needs a different seat from 1 to 5.")
    if not 0 <= start_player < n:
        raise IllegalMove("The start player must be one of the players.")
    if not 0 <= ship < SHIP_POSITIONS:
        raise IllegalMove("The explorer ship starts at one of the positions 0 to 15.")
    rng = random.Random(seed)
    tiles = catalogue.tiles()
    volcano = catalogue.volcanoes
    grid: list[list[str | None]]
    if display is None:
        rng.shuffle(tiles)
        grid = [[None] * DISPLAY_SIZE for _ in range(DISPLAY_SIZE)]
        set_aside: list[str] = []
        for r in range(DISPLAY_SIZE):
            for c in range(DISPLAY_SIZE):
                while tiles and tiles[-1] in volcano:
                    set_aside.append(tiles.pop())
                grid[r][c] = tiles.pop() if tiles else None
        tiles += set_aside
        rng.shuffle(tiles)
    else:
        grid = _check_display(display, catalogue, volcano)
        for row in grid:
            for tile in row:
                if tile is not None:
                    tiles.remove(tile)
        rng.shuffle(tiles)
    players = [
        PlayerState(
            name=name,
            seat=s.seat,
            colour=s.colour,
            board=[[None] * layout.cols for _ in range(layout.rows)],
            shells=START_SHELLS,
        )
        for name, s in zip(names, seats, strict=True)
    ]
    return GameState(
        catalogue=catalogue,
        side=side,
        layout=layout,
        variant=variant,
        matching=matching,
        players=players,
        display=grid,
        stack=tiles,
        ship=ship,
        start_player=start_player,
        to_move=(start_player + 1) % n,
        supply=SHELLS_TOTAL - START_SHELLS * n,
    )


def _check_display(
    display: Sequence[Sequence[str | None]], catalogue: Catalogue, volcano: frozenset[str]
) -> list[list[str | None]]:
    if len(display) != DISPLAY_SIZE or any(len(row) != DISPLAY_SIZE for row in display):
        raise IllegalMove("The display is 4 rows of 4 tiles.")
    left = {t.id: t.count for t in catalogue}
    for r, row in enumerate(display):
        for c, tile in enumerate(row):
            if tile is None:
                continue
            if tile not in left:
                raise IllegalMove(
                    f"The display's row {r + 1}, column {c + 1} holds {tile}, "
                    "which is not in this box."
                )
            if tile in volcano:
                raise IllegalMove(
                    "Volcanoes drawn while setting up are set aside: replace it with another tile."
                )
            left[tile] -= 1
            if left[tile] < 0:
                raise IllegalMove(f"The display holds more {tile} tiles than the box has.")
    return [list(row) for row in display]


class Game:
    """A game with undo and an event log; `push` and `pop` like python-chess's Board.

    Each turn is played on a new `state`; the one before it is kept, unchanged, for undo and
    shares the players the turn left alone. Change a game only through push and pop.
    """

    def __init__(self, state: GameState) -> None:
        self.state = state
        self.rules: Rules = rules_for(state.variant, state.matching)
        self.records: list[TurnRecord] = []
        self._undo: list[GameState] = []
        self.events: list[dict[str, Any]] = [{"type": "setup", "state": state.to_json()}]

    @property
    def over(self) -> bool:
        return self.state.over

    def reach_map(self) -> list[Reach]:
        """Where the player to move can send the ship and what each tile costs from there."""
        return self.rules.reach_map(self.state)

    def check(self, turn: Turn) -> None:
        """Raise the refusal `push` would raise, changing nothing."""
        self.rules.check(self.state, turn)

    def push(self, turn: Turn) -> TurnRecord:
        """Play a turn for the player to move; an illegal turn raises and changes nothing."""
        before = self.state
        after = before.copy_for_turn()
        record = self.rules.apply(after, turn)
        self.state = after
        self._undo.append(before)
        self.records.append(record)
        self.events.append({"type": "turn", "turn": record.turn.to_json()})
        return record

    def pop(self) -> TurnRecord:
        """Undo the last turn and return its record."""
        if not self._undo:
            raise NotNow("There is no turn to undo.")
        self.state = self._undo.pop()
        self.events.append({"type": "undo"})
        return self.records.pop()

    def score(self) -> FinalScore:
        """The score of the boards as they lie (final once the game is over)."""
        return score_state(self.state)

    def to_json(self) -> dict[str, Any]:
        """The event log, from which `Game.replay` rebuilds this game."""
        return {"format": "maori-companion/events/1", "events": list(self.events)}

    @classmethod
    def replay(cls, events: Sequence[dict[str, Any]], source: str = "event log") -> Game:
        """Rebuild a game from its event log; a damaged log raises DataError."""
        if not events or not isinstance(events[0], dict) or events[0].get("type") != "setup":
            raise DataError(source, "an event log starts with a setup event")
        game = cls(GameState.from_json(events[0]["state"], source))
        for i, event in enumerate(events[1:], start=2):
            kind = event.get("type") if isinstance(event, dict) else None
            try:
                if kind == "turn":
                    game.push(Turn.from_json(event.get("turn")))
                elif kind == "undo":
                    game.pop()
                else:
                    raise DataError(source, f"event {i} has unknown type {kind!r}")
            except (IllegalMove, MalformedMove, NotNow) as exc:
                raise DataError(source, f"event {i} cannot be replayed: {exc.message}") from None
        return game


def score_state(state: GameState) -> FinalScore:
    """Score the boards of a state (the final score once the game is over)."""
    players = [
        PlayerBoard(
            name=p.name,
            shells=p.shells,
            board=state.board_meanings(p),
            storage=None if p.storage is None else state.catalogue.meaning(p.storage),
        )
        for p in state.players
    ]
    return score_game(state.layout, players)
