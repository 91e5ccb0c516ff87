"""The turn tracker: what a player did, from the state before their turn and a read of the table.

`infer_turn` compares a fresh read with the state and lists every turn that would produce
exactly what the camera sees (cells it could not see are compatible with anything). One legal
turn is accepted; several, or a change hidden under an unknown cell, become a question for the
host (never a guess); a table that shows an illegal turn is refused with the rules' own
sentence; a table that cannot be read well enough asks the player to clear it and press again.

The player ship of the variants is taken from the read when the reader reports it
(`SeatRead.player_ship`). In the Fortgeschrittenenspiel it may move freely after every action,
so while it is not seen every tile it could stand on becomes a choice for the host; shells for
its paid steps are only charged from a position the game knows, never from a guessed one.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace
from enum import Enum
from typing import Literal

from companion.actions import (
    Action,
    Cell,
    Discard,
    Pass,
    StorageToBoard,
    TakeToBoard,
    TakeToStorage,
    Turn,
)
from companion.errors import IllegalMove, MalformedMove
from companion.reading import EMPTY, CellRead, SeatRead, TableRead
from companion.rules import AdvancedRules, ProRules, Rules, at, touching
from companion.state import DISPLAY_SIZE, MAX_STEPS, SHIP_POSITIONS, GameState, Placed, PlayerState

#: Where a change can be seen: ("display", r, c), ("board", r, c) or ("storage", 0, 0).
Place = tuple[str, int, int]
#: What a place holds: None (empty) or (tile id, rotation).
Content = tuple[str, int] | None


class Unknown(Enum):
    """A place the read could not see."""

    UNKNOWN = "unknown"


class Drawn(Enum):
    """A refilled display slot: it holds whatever tile is drawn from the stack."""

    DRAWN = "drawn"


#: What the read shows at a place.
Seen = Content | Literal[Unknown.UNKNOWN]
#: What a place holds after an action.
Predicted = Content | Literal[Drawn.DRAWN]


@dataclass(frozen=True, slots=True)
class Accepted:
    """The read shows exactly one legal turn."""

    turn: Turn


@dataclass(frozen=True, slots=True)
class Refused:
    """The table shows a turn the rules forbid, or changes no single turn explains."""

    reason: str
    turn: Turn | None = None


@dataclass(frozen=True, slots=True)
class Doubtful:
    """Several turns fit what the camera sees: the host chooses (or corrects a cell)."""

    reason: str
    candidates: tuple[Turn, ...]


@dataclass(frozen=True, slots=True)
class Unreadable:
    """Something that matters could not be seen: clear the table and press again."""

    reason: str


Verdict = Accepted | Refused | Doubtful | Unreadable


def _content(read: CellRead | None) -> Seen:
    """A read cell as content, or unknown."""
    if read is None or read.unknown:
        return Unknown.UNKNOWN
    if read.empty:
        return None
    assert read.tile is not None
    return (read.tile, read.rotation)


def _same(state: GameState, a: Content, b: Content, *, turned: bool) -> bool:
    """Equal contents; rotations count only on boards, and a turn that looks the same is the
    same (a symmetric tile)."""
    if a is None or b is None:
        return a is b
    if a[0] != b[0]:
        return False
    if not turned or a[1] == b[1]:
        return True
    meaning = state.catalogue.meaning(a[0])
    return meaning.rotated(a[1]) == meaning.rotated(b[1])


def _placed(p: Placed | None) -> Content:
    return None if p is None else (p.tile, p.rotation)


@dataclass(slots=True)
class _Observation:
    """The read, cell by cell, against the state: what changed, what is unknown (and of
    that, the display slots seen empty that the rules keep full)."""

    known: dict[Place, Content]
    unknown: set[Place]
    changed: dict[Place, Content]
    kept_full: set[Place]


def _observe(state: GameState, player: PlayerState, read: TableRead) -> _Observation:
    known: dict[Place, Content] = {}
    unknown: set[Place] = set()
    changed: dict[Place, Content] = {}
    kept_full: set[Place] = set()

    def note(place: Place, before: Content, seen: Seen, turned: bool) -> None:
        if seen is Unknown.UNKNOWN:
            unknown.add(place)
            return
        known[place] = seen
        if not _same(state, before, seen, turned=turned):
            changed[place] = seen

    for r in range(DISPLAY_SIZE):
        for c in range(DISPLAY_SIZE):
            before = state.display[r][c]
            seen = _content(read.display[r][c])
            if seen is None and before is not None and state.stack:
                # The display is refilled while tiles remain, so a slot seen empty is a tile
                # the camera could not see (a pale arm or a lamp's glare over it) or a refill
                # forgotten: unknown, never evidence of a change.
                kept_full.add(("display", r, c))
                seen = Unknown.UNKNOWN
            note(("display", r, c), None if before is None else (before, 0), seen, False)
    seat = read.seats.get(player.seat)
    assert seat is not None
    for r, c in state.layout.playable_cells:
        cell = seat.cells[r][c] if r < len(seat.cells) and c < len(seat.cells[r]) else None
        note(("board", r, c), _placed(player.board[r][c]), _content(cell), True)
    stored = None if player.storage is None else (player.storage, 0)
    note(("storage", 0, 0), stored, _content(seat.storage), False)
    return _Observation(known, unknown, changed, kept_full)


def _other_boards_changed(state: GameState, read: TableRead) -> str | None:
    for index, player in enumerate(state.players):
        if index == state.to_move or player.seat not in read.seats:
            continue
        seat = read.seats[player.seat]
        moved = []
        for r, c in state.layout.playable_cells:
            if r >= len(seat.cells) or c >= len(seat.cells[r]):
                continue
            seen = _content(seat.cells[r][c])
            if seen is not Unknown.UNKNOWN and not _same(
                state, _placed(player.board[r][c]), seen, turned=True
            ):
                moved.append(at((r, c)))
        seen_storage = _content(seat.storage)
        stored = None if player.storage is None else (player.storage, 0)
        if seen_storage is not Unknown.UNKNOWN and not _same(
            state, stored, seen_storage, turned=False
        ):
            moved.append("the storage")
        if moved:
            return (
                f"{player.name}'s board changed during {state.mover.name}'s turn "
                f"({'; '.join(moved)}): put it back as it was."
            )
    return None


def _step_options(rules: Rules, state: GameState, ship: int | None) -> list[int]:
    """The explorer ship's possible steps: all it can afford when unseen, else the one seen
    (none when it stands where it stood)."""
    if ship is None:
        reach = min(rules.boats(state, state.mover) + state.mover.shells, MAX_STEPS)
        return list(range(1, reach + 1))
    steps = (ship - state.ship) % SHIP_POSITIONS
    return [steps] if steps else []


def _actions(
    state: GameState, rules: Rules, obs: _Observation
) -> Iterator[tuple[Action, dict[Place, Predicted]]]:
    """Every action worth considering, each with the places it changes and what they then hold
    (Drawn for the refilled display slot)."""
    player = state.mover
    yield Pass(), {}
    targets = [
        (r, c)
        for r, c in state.layout.playable_cells
        if player.board[r][c] is None
        and (("board", r, c) in obs.changed or ("board", r, c) in obs.unknown)
    ]
    slots = [
        (r, c)
        for r in range(DISPLAY_SIZE)
        for c in range(DISPLAY_SIZE)
        if state.display[r][c] is not None
        and not rules.is_volcano(state, state.display[r][c] or "")
    ]

    def rotations(cell: Cell, tile: str) -> tuple[int, ...]:
        seen = obs.known.get(("board", *cell))
        if seen is not None and seen[0] == tile:
            return (seen[1],)
        return rules.rotations_for(state.catalogue.meaning(tile))

    refill: Predicted = Drawn.DRAWN if state.stack else None
    for r, c in state.layout.playable_cells:
        if player.board[r][c] is not None:
            yield Discard((r, c)), {("board", r, c): None}
    if player.storage is not None:
        for cell in targets:
            for rot in rotations(cell, player.storage):
                yield (
                    StorageToBoard(cell, rot),
                    {
                        ("board", *cell): (player.storage, rot),
                        ("storage", 0, 0): None,
                    },
                )
    for slot in slots:
        tile = state.display[slot[0]][slot[1]]
        assert tile is not None
        if player.storage is None:
            yield TakeToStorage(slot), {("display", *slot): refill, ("storage", 0, 0): (tile, 0)}
        for cell in targets:
            for rot in rotations(cell, tile):
                yield (
                    TakeToBoard(slot, cell, rot),
                    {
                        ("display", *slot): refill,
                        ("board", *cell): (tile, rot),
                    },
                )


def _fits(
    state: GameState, obs: _Observation, effects: dict[Place, Predicted]
) -> tuple[bool, str | None]:
    """Does an action explain every change seen, and contradict nothing seen?
    Returns (fits, the tile drawn as seen or None)."""
    drawn: str | None = None
    if any(place not in effects for place in obs.changed):
        return False, None
    for place, predicted in effects.items():
        if place in obs.unknown:
            continue
        seen = obs.known[place]
        if predicted is Drawn.DRAWN:
            if seen is None or seen[0] not in state.stack:
                return False, None
            drawn = seen[0]
            continue
        if not _same(state, predicted, seen, turned=place[0] == "board"):
            return False, None
    return True, drawn


def _player_ship_path(rules: Rules, state: GameState, action: Action) -> tuple[Cell, ...]:
    """The cheapest paid path that lets the player ship reach the laid tile (variants)."""
    if not isinstance(rules, AdvancedRules) or not isinstance(action, TakeToBoard | StorageToBoard):
        return ()
    player = state.mover
    if player.ship is None:
        return ()
    best: tuple[Cell, ...] | None = None
    for path in rules.ship_paths(state, player).values():
        end = path[-1] if path else player.ship
        if touching(end, action.cell) and (best is None or len(path) < len(best)):
            best = path
    return best or ()


def _tiles_after(player: PlayerState, action: Action) -> list[Cell]:
    """The cells of the mover's board that hold a tile once `action` is done."""
    cells = {(r, c) for r, row in enumerate(player.board) for c, p in enumerate(row) if p}
    if isinstance(action, TakeToBoard | StorageToBoard):
        cells.add(action.cell)
    if isinstance(action, Discard):
        cells.discard(action.cell)
    return sorted(cells)


def _with_player_ship(
    rules: Rules, state: GameState, turns: list[Turn], seen: Cell | None
) -> tuple[list[Turn], str | None]:
    """Each legal turn with where the player ship stands after it (variants): the cell seen,
    or, unseen in the Fortgeschrittenenspiel, one turn per tile it may have been put on.
    Returns the legal turns and the first refusal met."""
    if not isinstance(rules, AdvancedRules):
        return turns, None
    out: list[Turn] = []
    refusal: str | None = None
    for turn in turns:
        if seen is not None:
            stays = rules.check(state, turn).ship_after
            pro_stays = isinstance(rules, ProRules) and seen == stays
            options = [turn if pro_stays else replace(turn, ship_to=seen)]
        elif isinstance(rules, ProRules):
            options = [turn]  # the Profispiel's ship goes only where the rules put it
        else:
            tiles = _tiles_after(state.mover, turn.action)
            options = [replace(turn, ship_to=cell) for cell in tiles] or [turn]
        for option in options:
            try:
                rules.check(state, option)
            except (IllegalMove, MalformedMove) as exc:
                refusal = refusal or exc.message
                continue
            out.append(option)
    return out, refusal


def describe_changes(state: GameState, obs: _Observation) -> str:
    parts = []
    for (area, r, c), seen in sorted(obs.changed.items(), key=lambda item: item[0]):
        where = "the storage" if area == "storage" else f"{area} {at((r, c))}"
        what = "empty" if seen is None else seen[0]
        parts.append(f"{where} now {what}")
    return "; ".join(parts)


def infer_turn(rules: Rules, state: GameState, read: TableRead) -> Verdict:
    """The turn the player to move made, judged from `read` (see the module docstring)."""
    if state.over:
        return Refused("The game is over.")
    unseen = _unseen_or_moved(state, read)
    if unseen is not None:
        return unseen
    steps_options = _step_options(rules, state, read.ship)
    if not steps_options:
        return Refused(
            "The explorer ship stands where it stood: the ship must move at least one step."
        )
    obs = _observe(state, state.mover, read)
    fitting = _fitting_turns(rules, state, obs, steps_options)
    if not isinstance(fitting, list):
        return fitting
    if not fitting:
        return Refused(
            "The table shows more than one turn's changes: "
            f"{describe_changes(state, obs)}. Put back what should not have moved."
        )
    legal: list[Turn] = []
    first_refusal: str | None = None
    for turn in fitting:
        try:
            rules.check(state, turn)
        except (IllegalMove, MalformedMove) as exc:
            first_refusal = first_refusal or exc.message
            continue
        legal.append(turn)
    if not legal:
        assert first_refusal is not None
        return Refused(first_refusal, fitting[0] if len(fitting) == 1 else None)
    seen = read.seats[state.mover.seat].player_ship
    placed, ship_refusal = _with_player_ship(rules, state, legal, seen)
    if not placed:
        assert ship_refusal is not None
        return Refused(ship_refusal, legal[0] if len(legal) == 1 else None)
    if len(placed) == 1:
        return Accepted(placed[0])
    return Doubtful(_question(state, read, obs, several_turns=len(legal) > 1), tuple(placed))


def _unseen_or_moved(state: GameState, read: TableRead) -> Verdict | None:
    """Why `read` cannot be judged at all (the mover's board or the display unseen, another
    player's board changed), or None."""
    player = state.mover
    if player.seat not in read.seats:
        return Unreadable(
            f"{player.name}'s board (seat {player.seat}) is not in view: check that its markers "
            "can be seen and press again."
        )
    if all(cell is None or cell.unknown for row in read.display for cell in row):
        return Unreadable("The display could not be seen: check its markers and press again.")
    other = _other_boards_changed(state, read)
    if other:
        return Refused(other)
    return None


def _fitting_turns(
    rules: Rules, state: GameState, obs: _Observation, steps_options: list[int]
) -> list[Turn] | Unreadable:
    """Every turn whose action explains the changes seen, or why the tile drawn into a
    display slot taken from cannot be known."""
    fitting: list[Turn] = []
    for action, effects in _actions(state, rules, obs):
        fits, drawn = _fits(state, obs, effects)
        if not fits:
            continue
        if isinstance(action, TakeToBoard | TakeToStorage) and state.stack and drawn is None:
            slot = ("display", *action.slot)
            if slot in obs.kept_full and obs.changed:
                return Unreadable(
                    f"The display's {at(action.slot)} looks empty, but it is refilled while "
                    "tiles remain: draw a tile into it (or clear what covers it) and press again."
                )
            if slot in obs.unknown and obs.changed:
                return Unreadable(
                    f"The display's {at(action.slot)} cannot be seen, so the tile drawn is "
                    "unknown: clear it and press again."
                )
            if slot in obs.unknown:
                continue  # unseen slot and nothing else changed: not evidence of a take
        path = _player_ship_path(rules, state, action)
        for steps in steps_options:
            fitting.append(Turn(steps, action, ship_path=path, drawn=drawn))
    return fitting


def _question(state: GameState, read: TableRead, obs: _Observation, *, several_turns: bool) -> str:
    """What to ask the host when more than one turn fits."""
    if not several_turns:
        return f"The camera cannot see {state.mover.name}'s ship: where does it stand now?"
    if read.ship is None:
        return "The explorer ship could not be seen: where is it now?"
    if obs.unknown:
        hidden = sorted(place for place in obs.unknown if place[0] != "storage")
        where = ", ".join(f"{a} {at((r, c))}" for a, r, c in hidden[:4])
        return f"Some cells could not be seen ({where}): which turn was it?"
    return "More than one turn fits what the camera sees: which was it?"


def read_of_state(
    state: GameState, *, confidence: float = 1.0, player_ships: bool = False
) -> TableRead:
    """What a perfect camera would read from a table in `state`;
    with `player_ships`, a reader that also sees where each player ship stands."""

    def cell(content: Content) -> CellRead:
        if content is None:
            return EMPTY
        return CellRead(content[0], content[1], confidence)

    display = tuple(
        tuple(cell(None if t is None else (t, 0)) for t in row) for row in state.display
    )
    seats = {}
    for player in state.players:
        grid = tuple(
            tuple(
                cell(_placed(player.board[r][c])) if state.layout.playable((r, c)) else None
                for c in range(state.layout.cols)
            )
            for r in range(state.layout.rows)
        )
        storage = cell(None if player.storage is None else (player.storage, 0))
        ship = player.ship if player_ships else None
        seats[player.seat] = SeatRead(grid, storage, ship)
    return TableRead(display, state.ship, seats)
