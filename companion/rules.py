"""The rules of Māori: validating and applying a turn, the reach map and the end of the game.

`Rules` is the base game; `AdvancedRules` (Fortgeschrittenenspiel) and `ProRules` (Profispiel)
add the player ship as subclasses, in the style of python-chess's variants. Every refusal is an
IllegalMove (or MalformedMove for a move that does not even describe a turn) with one sentence a
player understands, raised before anything is changed.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from typing import NamedTuple

from companion.actions import (
    Action,
    Cell,
    Discard,
    Matching,
    Pass,
    StorageToBoard,
    TakeToBoard,
    TakeToStorage,
    Turn,
    Variant,
)
from companion.errors import GameOver, IllegalMove, MalformedMove
from companion.state import (
    DISPLAY_SIZE,
    MAX_STEPS,
    SHIP_POSITIONS,
    GameState,
    Placed,
    PlayerState,
)
from companion.tiles import EDGE_OFFSET, OPPOSITE, ROTATIONS, Meaning

EDGE_NAMES = {"N": "north", "E": "east", "S": "south", "W": "west"}
SIDE_NAMES = ("north", "east", "south", "west")
NEIGHBOURS_8 = tuple((dr, dc) for dr in (-1, 0, 1) for dc in (-1, 0, 1) if (dr, dc) != (0, 0))
# Kinds of action as tuples: isinstance with a tuple is cheaper than building `A | B` per call.
_TAKES = (TakeToBoard, TakeToStorage)
_LAYS = (TakeToBoard, StorageToBoard)


def at(cell: Cell) -> str:
    """'row 3, column 2' — cells as players count them, from 1."""
    return f"row {cell[0] + 1}, column {cell[1] + 1}"


def touching(a: Cell, b: Cell) -> bool:
    """Horizontal, vertical or diagonal neighbours (the player ship's reach)."""
    return max(abs(a[0] - b[0]), abs(a[1] - b[1])) == 1


def plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


@cache
def ship_line(position: int) -> tuple[Cell, ...]:
    """The display cells the ship looks along from `position`, nearest first (docs/table-kit.md)."""
    side, k = divmod(position, 4)
    n = DISPLAY_SIZE
    if side == 0:
        return tuple((r, k) for r in range(n))
    if side == 1:
        return tuple((k, c) for c in reversed(range(n)))
    if side == 2:
        return tuple((r, n - 1 - k) for r in reversed(range(n)))
    return tuple((n - 1 - k, c) for c in range(n))


def describe_line(position: int) -> str:
    side, k = divmod(position, 4)
    if side in (0, 2):
        col = k if side == 0 else DISPLAY_SIZE - 1 - k
        return f"column {col + 1} from the {SIDE_NAMES[side]}"
    row = k if side == 1 else DISPLAY_SIZE - 1 - k
    return f"row {row + 1} from the {SIDE_NAMES[side]}"


@dataclass(frozen=True, slots=True)
class TakeOption:
    """A display tile the mover can take from one ship position, and what it costs in all."""

    slot: Cell
    tile: str
    skip_cost: int
    cost: int


@dataclass(frozen=True, slots=True)
class Reach:
    """One ship position the mover can reach, its cost, and the tiles takeable from there."""

    position: int
    steps: int
    move_cost: int
    takes: tuple[TakeOption, ...]


@dataclass(frozen=True, slots=True)
class TurnRecord:
    """What a turn did, for the move log: the turn as applied and every cost and gain."""

    player: int
    name: str
    turn: Turn
    ship_from: int
    ship_at: int
    move_cost: int
    skip_cost: int
    path_cost: int
    gained: int
    tile: str | None
    final_round_started: bool
    game_over: bool
    own_ship_from: Cell | None = None

    @property
    def paid(self) -> int:
        return self.move_cost + self.skip_cost + self.path_cost

    def describe(self) -> str:
        """One line for the move log."""
        a = self.turn.action
        parts = [f"{self.name} moved the ship {plural(self.turn.steps, 'step')}"]
        if self.move_cost:
            parts[0] += f" ({plural(self.move_cost, 'shell')})"
        if isinstance(a, TakeToBoard):
            parts.append(f"took {self.tile} from the display ({at(a.slot)})")
            if self.skip_cost:
                parts[-1] += f" for {plural(self.skip_cost, 'shell')}"
            parts.append(f"laid it on {at(a.cell)}, turned {a.rotation}°")
        elif isinstance(a, TakeToStorage):
            parts.append(f"put {self.tile} from the display ({at(a.slot)}) into storage")
            if self.skip_cost:
                parts[-1] += f" for {plural(self.skip_cost, 'shell')}"
        elif isinstance(a, StorageToBoard):
            parts.append(f"laid the stored {self.tile} on {at(a.cell)}, turned {a.rotation}°")
        elif isinstance(a, Discard):
            parts.append(f"removed {self.tile} from {at(a.cell)}")
        else:
            parts.append("did nothing else")
        if self.path_cost:
            parts.append(f"moved their own ship {plural(self.path_cost, 'step')} for shells")
        ship_to = self.turn.ship_to
        if ship_to is not None:
            stayed = ship_to == self.own_ship_from and not self.path_cost
            parts.append(f"{'left' if stayed else 'put'} their own ship on {at(ship_to)}")
        if self.gained:
            parts.append(f"gained {plural(self.gained, 'shell')}")
        return ", ".join(parts[:-1]) + " and " + parts[-1] if len(parts) > 1 else parts[0]


class _Plan(NamedTuple):
    """The outcome of checking a turn, used to apply it without checking again."""

    turn: Turn
    new_position: int
    move_cost: int
    skip_cost: int
    path_cost: int
    tile: str | None
    placed_cell: Cell | None
    ship_after: Cell | None


class Rules:
    """The base game (Grundspiel)."""

    variant = Variant.BASE

    def __init__(self, matching: Matching = Matching.FREE) -> None:
        self.matching = matching

    # ----------------------------------------------------------------- queries

    @staticmethod
    def is_volcano(state: GameState, tile: str) -> bool:
        return tile in state.catalogue.volcanoes

    def boats(self, state: GameState, player: PlayerState) -> int:
        """Boats that move the explorer ship: printed plus those on tiles on the board now."""
        boats_on = state.catalogue.boats_on
        try:
            on_tiles = sum([boats_on[p.tile] for row in player.board for p in row if p])
        except KeyError as missing:  # a tile the catalogue lacks: the catalogue names it
            state.catalogue.meaning(missing.args[0])
            raise
        return state.layout.printed_boats + on_tiles

    def takeable(self, state: GameState, position: int) -> list[tuple[Cell, int]]:
        """(slot, shells to skip to it) for each tile takeable from a ship position."""
        out: list[tuple[Cell, int]] = []
        skipped = 0
        display = state.display
        volcanoes = state.catalogue.volcanoes
        for r, c in ship_line(position):
            tile = display[r][c]
            if tile is None:
                continue
            if tile in volcanoes:
                break
            out.append(((r, c), skipped))
            skipped += 1
        return out

    def reach_map(self, state: GameState) -> list[Reach]:
        """Every position the mover can reach and what they can take there, with total costs."""
        if state.over:
            return []
        player = state.mover
        boats = self.boats(state, player)
        out = []
        for steps in range(1, min(boats + player.shells, MAX_STEPS) + 1):
            position = (state.ship + steps) % SHIP_POSITIONS
            move_cost = max(0, steps - boats)
            takes = tuple(
                TakeOption(slot, state.display[slot[0]][slot[1]] or "", skip, move_cost + skip)
                for slot, skip in self.takeable(state, position)
                if move_cost + skip <= player.shells
            )
            out.append(Reach(position, steps, move_cost, takes))
        return out

    def rotations_for(self, meaning: Meaning) -> tuple[int, ...]:
        """Rotations a tile may lie at: palms must point to their owner."""
        return (0,) if meaning.palms else ROTATIONS

    def legal_turns(self, state: GameState) -> Iterator[Turn]:
        """Every legal turn without paid player-ship steps or relocation."""
        if state.over:
            return
        player = state.mover
        empty = state.empty_cells(player)
        tiles_on_board = [
            (r, c) for r, row in enumerate(player.board) for c, p in enumerate(row) if p is not None
        ]
        for reach in self.reach_map(state):
            candidates: list[Action] = [Pass()]
            candidates += [Discard(cell) for cell in tiles_on_board]
            if player.storage is not None:
                meaning = state.catalogue.meaning(player.storage)
                candidates += [
                    StorageToBoard(cell, rot)
                    for cell in empty
                    for rot in self.rotations_for(meaning)
                ]
            for take in reach.takes:
                if player.storage is None:
                    candidates.append(TakeToStorage(take.slot))
                meaning = state.catalogue.meaning(take.tile)
                candidates += [
                    TakeToBoard(take.slot, cell, rot)
                    for cell in empty
                    for rot in self.rotations_for(meaning)
                ]
            for action in candidates:
                turn = Turn(reach.steps, action)
                try:
                    self.check(state, turn)
                except IllegalMove:
                    continue
                yield turn

    # -------------------------------------------------------------- validation

    def check(self, state: GameState, turn: Turn) -> _Plan:
        """Validate `turn` for the mover; raise IllegalMove/MalformedMove, change nothing."""
        if state.over:
            raise GameOver("The game is over: no more turns can be played.")
        if not isinstance(turn, Turn):
            raise MalformedMove("A turn must be a Turn value.")
        player = state.mover
        name = player.name
        steps = turn.steps
        if type(steps) is not int or steps < 1:
            raise MalformedMove("The explorer ship must move at least 1 step.")
        if steps > MAX_STEPS:
            raise IllegalMove(
                f"The explorer ship moves less than a full circle: at most {MAX_STEPS} steps."
            )
        boats = self.boats(state, player)
        move_cost = max(0, steps - boats)
        if move_cost > player.shells:
            raise IllegalMove(
                f"Moving {plural(steps, 'step')} with {plural(boats, 'boat')} costs "
                f"{plural(move_cost, 'shell')}; {name} has {player.shells}."
            )
        position = (state.ship + steps) % SHIP_POSITIONS
        action = turn.action
        skip_cost = 0
        tile: str | None = None
        placed_cell: Cell | None = None

        if isinstance(action, TakeToBoard):
            tile, skip_cost = self._check_take(state, position, action.slot)
            self._check_placement(state, player, action.cell, action.rotation, tile)
            placed_cell = action.cell
        elif isinstance(action, TakeToStorage):
            tile, skip_cost = self._check_take(state, position, action.slot)
            if player.storage is not None:
                raise IllegalMove(f"{name}'s storage already holds a tile.")
        elif isinstance(action, StorageToBoard):
            if player.storage is None:
                raise IllegalMove(f"{name}'s storage is empty.")
            tile = player.storage
            self._check_placement(state, player, action.cell, action.rotation, tile)
            placed_cell = action.cell
        elif isinstance(action, Discard):
            tile = self._check_discard(state, player, action.cell)
        elif not isinstance(action, Pass):
            raise MalformedMove("Unknown action.")

        drawn = self._check_drawn(state, turn)
        path_cost, ship_after = self._check_player_ship(state, player, turn, placed_cell)
        total = move_cost + skip_cost + path_cost
        if total > player.shells:
            costs = []
            if move_cost:
                costs.append(f"moving {plural(steps, 'step')} with {plural(boats, 'boat')}")
            if skip_cost:
                costs.append(f"skipping {plural(skip_cost, 'tile')}")
            if path_cost:
                costs.append(f"{plural(path_cost, 'step')} of {name}'s own ship")
            what = ", ".join(costs[:-1]) + " and " + costs[-1] if len(costs) > 1 else costs[0]
            raise IllegalMove(
                f"{what[0].upper()}{what[1:]} costs {plural(total, 'shell')}; "
                f"{name} has {player.shells}."
            )
        if drawn != turn.drawn:
            turn = Turn(turn.steps, action, turn.ship_path, turn.ship_to, drawn)
        return _Plan(
            turn,
            position,
            move_cost,
            skip_cost,
            path_cost,
            tile,
            placed_cell,
            ship_after,
        )

    def _check_take(self, state: GameState, position: int, slot: Cell) -> tuple[str, int]:
        r, c = slot
        if not (0 <= r < DISPLAY_SIZE and 0 <= c < DISPLAY_SIZE):
            raise MalformedMove(f"The display has no {at(slot)}.")
        tile = state.display[r][c]
        if tile is None:
            raise IllegalMove(f"The display's {at(slot)} is empty.")
        if self.is_volcano(state, tile):
            raise IllegalMove("A volcano cannot be taken.")
        line = ship_line(position)
        if slot not in line:
            raise IllegalMove(
                f"The ship stands beside {describe_line(position)}; "
                f"the tile in {at(slot)} is not in it."
            )
        for cell, skip in self.takeable(state, position):
            if cell == slot:
                return tile, skip
        raise IllegalMove(f"The tile in {at(slot)} lies behind the volcano.")

    def _check_cell(self, state: GameState, cell: Cell) -> None:
        r, c = cell
        if not (0 <= r < state.layout.rows and 0 <= c < state.layout.cols):
            raise MalformedMove(
                f"The board has {state.layout.rows} rows and {state.layout.cols} columns; "
                f"there is no {at(cell)}."
            )
        if not state.layout.playable(cell):
            raise IllegalMove(f"{at(cell).capitalize()} of the board is not a playing field.")

    def _check_placement(
        self, state: GameState, player: PlayerState, cell: Cell, rotation: int, tile: str
    ) -> None:
        self._check_cell(state, cell)
        if rotation not in ROTATIONS:
            raise MalformedMove("A tile lies turned 0, 90, 180 or 270 degrees.")
        if player.board[cell[0]][cell[1]] is not None:
            raise IllegalMove(
                f"{at(cell).capitalize()} of {player.name}'s board already holds a tile."
            )
        upright = state.catalogue.meaning(tile)
        if upright.palms and rotation != 0:
            raise IllegalMove("Palms must point to their owner: lay the tile upright.")
        if self.matching is Matching.STRICT:
            self._check_fit(state, player, cell, upright.rotated(rotation))

    def _check_fit(
        self, state: GameState, player: PlayerState, cell: Cell, meaning: Meaning
    ) -> None:
        for edge, (dr, dc) in EDGE_OFFSET.items():
            nr, nc = cell[0] + dr, cell[1] + dc
            if not (0 <= nr < state.layout.rows and 0 <= nc < state.layout.cols):
                continue
            other = player.board[nr][nc]
            if other is None:
                continue
            mine = edge in meaning.land
            theirs = OPPOSITE[edge] in state.meaning(other).land
            if mine != theirs:
                side = "Its" if mine else "The neighbour's"
                raise IllegalMove(
                    f"The tile does not fit the tile in {at((nr, nc))}: {side} island edge "
                    f"on the {EDGE_NAMES[edge] if mine else EDGE_NAMES[OPPOSITE[edge]]} "
                    "meets water (strict matching)."
                )

    def _check_discard(self, state: GameState, player: PlayerState, cell: Cell) -> str:
        self._check_cell(state, cell)
        placed = player.board[cell[0]][cell[1]]
        if placed is None:
            raise IllegalMove(f"There is no tile on {at(cell)} of {player.name}'s board to remove.")
        return placed.tile

    def _check_drawn(self, state: GameState, turn: Turn) -> str | None:
        takes = isinstance(turn.action, _TAKES)
        if not takes:
            if turn.drawn is not None:
                raise IllegalMove("Nothing was taken from the display, so nothing is drawn.")
            return None
        if not state.stack:
            if turn.drawn is not None:
                raise IllegalMove("The stack is empty: the display slot stays empty.")
            return None
        if turn.drawn is None:
            return state.stack[-1]
        if turn.drawn not in state.stack:
            raise IllegalMove(f"There is no {turn.drawn} left in the stack.")
        return turn.drawn

    def _check_player_ship(
        self,
        state: GameState,
        player: PlayerState,
        turn: Turn,
        placed_cell: Cell | None,
    ) -> tuple[int, Cell | None]:
        """Variants hook: validate the player ship; return (shells paid, ship after the turn)."""
        if turn.ship_path or turn.ship_to is not None:
            raise IllegalMove(
                "Player ships are only used in the Fortgeschrittenen- and Profispiel."
            )
        return 0, player.ship

    # ------------------------------------------------------------------ apply

    def apply(self, state: GameState, turn: Turn) -> TurnRecord:
        """Check `turn` and carry it out on `state` (in place)."""
        plan = self.check(state, turn)
        index = state.to_move
        player = state.players[index]
        action = plan.turn.action
        paid = plan.move_cost + plan.skip_cost + plan.path_cost
        player.shells -= paid
        state.supply += paid
        ship_from = state.ship
        state.ship = plan.new_position
        gained = 0
        if isinstance(action, _TAKES):
            r, c = action.slot
            state.display[r][c] = None
            drawn = plan.turn.drawn
            if drawn is not None:
                if state.stack[-1] == drawn:
                    state.stack.pop()
                else:  # a camera table draws unseen: any copy of that tile will do
                    state.stack.remove(drawn)
                state.display[r][c] = drawn
        if isinstance(action, TakeToStorage):
            player.storage = plan.tile
        if isinstance(action, StorageToBoard):
            player.storage = None
        if isinstance(action, _LAYS):
            assert plan.tile is not None and plan.placed_cell is not None
            r, c = plan.placed_cell
            player.board[r][c] = Placed(plan.tile, action.rotation)
            printed = state.catalogue.meaning(plan.tile).shells
            gained = min(printed, state.supply)
            player.shells += gained
            state.supply -= gained
        if isinstance(action, Discard):
            assert plan.tile is not None
            r, c = action.cell
            player.board[r][c] = None
            state.box.append(plan.tile)
        own_ship_from = player.ship
        player.ship = plan.ship_after
        final_started = self._end_turn(state)
        return TurnRecord(
            index,
            player.name,
            plan.turn,
            ship_from,
            plan.new_position,
            plan.move_cost,
            plan.skip_cost,
            plan.path_cost,
            gained,
            plan.tile,
            final_started,
            state.over,
            own_ship_from,
        )

    def _end_turn(self, state: GameState) -> bool:
        """Advance to the next player; start the final round or end the game when due."""
        state.turn_number += 1
        started = False
        if state.final_round_from is None and (
            not state.has_empty_cell(state.mover) or self.tiles_exhausted(state)
        ):
            state.final_round_from = state.to_move
            started = True
        state.to_move = (state.to_move + 1) % len(state.players)
        if state.to_move == state.final_round_from:
            state.over = True
        return started

    def tiles_exhausted(self, state: GameState) -> bool:
        """No tile can ever be taken again: the stack is empty and no ship position reaches a
        display tile (the display holds none, or only volcanoes and tiles behind them)."""
        if state.stack:
            return False
        return not any(self.takeable(state, position) for position in range(SHIP_POSITIONS))


class AdvancedRules(Rules):
    """Fortgeschrittenenspiel: the player ship marks where the next tile may be laid."""

    variant = Variant.ADVANCED

    def _walk(self, player: PlayerState, path: tuple[Cell, ...], state: GameState) -> Cell | None:
        position = player.ship
        if path and position is None:
            raise IllegalMove(f"{player.name}'s ship is not on the board yet.")
        for step in path:
            assert position is not None
            if not touching(step, position):
                raise IllegalMove(
                    f"{player.name}'s ship moves one field at a time (diagonals included); "
                    f"{at(step)} is not next to {at(position)}."
                )
            self._check_cell(state, step)
            if player.board[step[0]][step[1]] is None:
                raise IllegalMove(
                    f"{player.name}'s ship can only stand on a tile; {at(step)} is empty water."
                )
            position = step
        return position

    @staticmethod
    def ship_paths(state: GameState, player: PlayerState) -> dict[Cell, tuple[Cell, ...]]:
        """Shortest paid path of the player ship to every tile it can reach (its own: ())."""
        if player.ship is None:
            return {}
        paths: dict[Cell, tuple[Cell, ...]] = {player.ship: ()}
        frontier = [player.ship]
        while frontier:
            nxt = []
            for r, c in frontier:
                for dr, dc in NEIGHBOURS_8:
                    cell = (r + dr, c + dc)
                    if cell in paths or not state.layout.playable(cell):
                        continue
                    if player.board[cell[0]][cell[1]] is None:
                        continue
                    paths[cell] = (*paths[(r, c)], cell)
                    nxt.append(cell)
            frontier = nxt
        return paths

    def _check_discard(self, state: GameState, player: PlayerState, cell: Cell) -> str:
        tile = super()._check_discard(state, player, cell)
        if player.ship == cell:
            raise IllegalMove(f"The tile under {player.name}'s ship cannot be removed.")
        return tile

    def _check_player_ship(
        self,
        state: GameState,
        player: PlayerState,
        turn: Turn,
        placed_cell: Cell | None,
    ) -> tuple[int, Cell | None]:
        if turn.ship_path and placed_cell is None:
            raise IllegalMove(
                "The player ship may only be moved for shells before a tile is laid on the board."
            )
        ship = self._walk(player, turn.ship_path, state)
        if placed_cell is not None and ship is not None and not touching(placed_cell, ship):
            raise IllegalMove(
                f"The tile must lie next to {player.name}'s ship on {at(ship)} "
                "(horizontally, vertically or diagonally)."
            )
        return len(turn.ship_path), self._ship_after(state, player, turn, placed_cell, ship)

    def _ship_after(
        self,
        state: GameState,
        player: PlayerState,
        turn: Turn,
        placed_cell: Cell | None,
        ship: Cell | None,
    ) -> Cell | None:
        if ship is None and placed_cell is not None:
            ship = placed_cell  # the first tile laid carries the ship
        if turn.ship_to is None:
            return ship
        target = turn.ship_to
        self._check_cell(state, target)
        occupied = player.board[target[0]][target[1]] is not None and not (
            isinstance(turn.action, Discard) and turn.action.cell == target
        )
        if not occupied and target != placed_cell:
            raise IllegalMove(
                f"{player.name}'s ship can only stand on a tile; {at(target)} is empty water."
            )
        return target


class ProRules(AdvancedRules):
    """Profispiel: the player ship always goes onto the tile just laid, and never moves
    otherwise (a `ship_to` naming where it stands anyway is allowed)."""

    variant = Variant.PRO

    def _ship_after(
        self,
        state: GameState,
        player: PlayerState,
        turn: Turn,
        placed_cell: Cell | None,
        ship: Cell | None,
    ) -> Cell | None:
        after = placed_cell if placed_cell is not None else ship
        if turn.ship_to is not None and turn.ship_to != after:
            if placed_cell is None:
                raise IllegalMove(
                    "In the Profispiel the player ship only moves when a tile is laid on the "
                    "board, and then onto that tile."
                )
            raise IllegalMove(
                "In the Profispiel the ship goes onto the tile just laid and nowhere else."
            )
        return after


RULES: dict[Variant, type[Rules]] = {
    Variant.BASE: Rules,
    Variant.ADVANCED: AdvancedRules,
    Variant.PRO: ProRules,
}


def rules_for(variant: Variant, matching: Matching = Matching.FREE) -> Rules:
    """The rules object for a variant and matching option."""
    return RULES[variant](matching)
