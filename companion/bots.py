"""Simulated players that choose legal turns, for the demo, the tests and the benchmarks.

`RandomPlayer` plays like an eager, careless person: it usually takes a reachable tile and
lays it on a free field. `GreedyPlayer` weighs every reachable tile on every free field by what
it would add to the board's score, so a demo game looks like people playing. Both return only
turns the rules accept.
"""

from __future__ import annotations

import random
from dataclasses import replace

from companion.actions import (
    Action,
    Cell,
    Discard,
    Pass,
    StorageToBoard,
    TakeToBoard,
    TakeToStorage,
    Turn,
    Variant,
)
from companion.errors import IllegalMove
from companion.rules import NEIGHBOURS_8, AdvancedRules, Rules, touching
from companion.scoring import islands, tally
from companion.state import MAX_STEPS, SHIP_POSITIONS, GameState, Placed, PlayerState
from companion.tiles import EDGE_OFFSET, OPPOSITE

Slot = Cell | None


def placement_cells(
    rules: Rules, state: GameState, player: PlayerState, budget: int
) -> dict[Cell, tuple[Cell, ...]]:
    """Free fields where the player may lay a tile, each with the cheapest paid player-ship
    path that allows it (always () in the base game); paths longer than `budget` are left out."""
    empty = state.empty_cells(player)
    if not isinstance(rules, AdvancedRules) or player.ship is None:
        return {cell: () for cell in empty}
    out: dict[Cell, tuple[Cell, ...]] = {}
    paths = sorted(rules.ship_paths(state, player).values(), key=len)
    for path in paths:
        if len(path) > budget:
            break
        r, c = path[-1] if path else player.ship
        for dr, dc in NEIGHBOURS_8:
            cell = (r + dr, c + dc)
            if cell in empty and cell not in out:
                out[cell] = path
    return out


def fallback_turn(rules: Rules, state: GameState) -> Turn:
    """The cheapest legal turn: move one step (or as few as possible) and do nothing."""
    for reach in rules.reach_map(state):
        turn = Turn(reach.steps, Pass())
        try:
            rules.check(state, turn)
        except IllegalMove:
            continue
        return turn
    raise IllegalMove(f"{state.mover.name} cannot move the explorer ship at all.")


def _tiles_on(player: PlayerState) -> list[Cell]:
    return [(r, c) for r, row in enumerate(player.board) for c, p in enumerate(row) if p]


class RandomPlayer:
    """Random but eager: takes a tile nine times in ten, keeps one in storage now and then."""

    def __init__(self, rng: random.Random, discard_chance: float = 0.02) -> None:
        self.rng = rng
        self.discard_chance = discard_chance

    def _propose(self, rules: Rules, state: GameState, boats: int) -> Turn:
        rng = self.rng
        player = state.mover
        cells = placement_cells(rules, state, player, player.shells)
        free = list(cells)
        action: Action = Pass()
        path: tuple[Cell, ...] = ()
        # Mostly stay within the free steps; now and then pay shells to go further.
        reach = min(boats + player.shells, MAX_STEPS)
        steps = rng.randint(1, reach if rng.random() < 0.2 else min(boats, reach) or reach)
        move_cost = max(0, steps - boats)
        position = (state.ship + steps) % SHIP_POSITIONS
        takes = [
            (slot, skip)
            for slot, skip in rules.takeable(state, position)
            if move_cost + skip <= player.shells
        ]
        roll = rng.random()
        if player.storage is not None and free and roll < 0.25:
            meaning = state.catalogue.meaning(player.storage)
            cell = rng.choice(free)
            action, path = (
                StorageToBoard(cell, rng.choice(rules.rotations_for(meaning))),
                cells[cell],
            )
        elif takes and roll < 0.95:
            slot = min(rng.sample(takes, min(2, len(takes))), key=lambda t: t[1])[0]
            if free and (player.storage is not None or rng.random() < 0.9):
                tile = state.display[slot[0]][slot[1]]
                assert tile is not None
                meaning = state.catalogue.meaning(tile)
                cell = rng.choice(free)
                action = TakeToBoard(slot, cell, rng.choice(rules.rotations_for(meaning)))
                path = cells[cell]
            elif player.storage is None:
                action = TakeToStorage(slot)
        elif (roll < 0.95 + self.discard_chance or not free) and _tiles_on(player):
            # A player boxed in by their own tiles frees a field, as people do.
            action = Discard(rng.choice(_tiles_on(player)))
        ship_to = None
        if state.variant is Variant.ADVANCED and rng.random() < 0.2 and _tiles_on(player):
            ship_to = rng.choice(_tiles_on(player))
        return Turn(steps, action, ship_path=path, ship_to=ship_to)

    def choose(self, rules: Rules, state: GameState) -> Turn:
        boats = rules.boats(state, state.mover)
        if boats + state.mover.shells > 0:
            for _ in range(12):
                turn = self._propose(rules, state, boats)
                try:
                    rules.check(state, turn)
                except IllegalMove:
                    continue
                return turn
        return fallback_turn(rules, state)


class GreedyPlayer:
    """Lays the reachable tile where it adds most to the board's prospects, minus its cost."""

    def __init__(self, rng: random.Random, shell_value: float = 1.0) -> None:
        self.rng = rng
        self.shell_value = shell_value

    @staticmethod
    def value(state: GameState, board: list[list[Placed | None]]) -> float:
        """Points the board scores now, plus a share of what unfinished islands may still
        score when every open land edge still faces a free field."""
        meanings = tuple(
            tuple(None if p is None else state.meaning(p) for p in row) for row in board
        )
        layout = state.layout
        t = tally(layout, meanings)
        hope = 0.0
        for island in islands(layout, meanings):
            if island.complete:
                continue
            open_edges = 0
            for r, c in island.cells:
                here = meanings[r][c]
                assert here is not None
                for edge in here.land:
                    dr, dc = EDGE_OFFSET[edge]
                    cell = (r + dr, c + dc)
                    if not layout.playable(cell):
                        open_edges = -1
                        break
                    other = meanings[cell[0]][cell[1]]
                    if other is None:
                        open_edges += 1
                    elif OPPOSITE[edge] not in other.land:
                        open_edges = -1
                        break
                if open_edges < 0:
                    break
            if open_edges > 0:
                hope += island.palm_points * 0.7 / open_edges + 0.5 * len(island.cells)
        return t.palms_no_hut + t.palms_hut + t.leis + t.empty + 0.3 * t.boat_count + hope

    def choose(self, rules: Rules, state: GameState) -> Turn:
        turn = self._choose(rules, state)
        if state.variant is Variant.ADVANCED:
            turn = self._free_move(rules, state, turn)
        return turn

    @staticmethod
    def _free_move(rules: Rules, state: GameState, turn: Turn) -> Turn:
        """Fortgeschrittenenspiel: after the action, put the player ship on the tile with the
        most free fields around it, so the next tile has somewhere to go."""
        player = state.mover
        board = [row[:] for row in player.board]
        action = turn.action
        if isinstance(action, TakeToBoard | StorageToBoard):
            board[action.cell[0]][action.cell[1]] = Placed("")
        if isinstance(action, Discard):
            board[action.cell[0]][action.cell[1]] = None

        def room(cell: Cell) -> int:
            r, c = cell
            return sum(
                1
                for dr, dc in NEIGHBOURS_8
                if state.layout.playable((r + dr, c + dc)) and board[r + dr][c + dc] is None
            )

        stays = rules.check(state, turn).ship_after
        tiles = [(r, c) for r, row in enumerate(board) for c, p in enumerate(row) if p]
        if stays is None or not tiles:
            return turn
        best = max(tiles, key=room)
        if room(best) <= room(stays):
            return turn
        moved = Turn(turn.steps, action, turn.ship_path, best, turn.drawn)
        try:
            rules.check(state, moved)
        except IllegalMove:
            return turn
        return moved

    def _choose(self, rules: Rules, state: GameState) -> Turn:
        player = state.mover
        base = self.value(state, player.board)
        cells = placement_cells(rules, state, player, player.shells)
        options: dict[Cell, tuple[int, int, str]] = {}  # slot -> (cost, steps, tile)
        for reach in rules.reach_map(state):
            for take in reach.takes:
                known = options.get(take.slot)
                if known is None or take.cost < known[0]:
                    options[take.slot] = (take.cost, reach.steps, take.tile)
        placements: list[tuple[str, int, int, Slot]] = [
            (tile, cost, steps, slot) for slot, (cost, steps, tile) in options.items()
        ]
        if player.storage is not None:
            placements.append((player.storage, 0, 1, None))
        candidates: list[tuple[float, Turn]] = []
        for tile, cost, steps, slot in placements:
            meaning = state.catalogue.meaning(tile)
            for cell, path in cells.items():
                for rotation in rules.rotations_for(meaning):
                    board = [row[:] for row in player.board]
                    board[cell[0]][cell[1]] = Placed(tile, rotation)
                    gain = self.value(state, board) - base
                    action: Action = (
                        StorageToBoard(cell, rotation)
                        if slot is None
                        else TakeToBoard(slot, cell, rotation)
                    )
                    price = self.shell_value * (cost + len(path))
                    candidates.append((gain - price, Turn(steps, action, ship_path=path)))
        self.rng.shuffle(candidates)  # ties are broken at random, repeatably
        candidates.sort(key=lambda item: item[0], reverse=True)
        for score, turn in candidates[:30]:
            if score <= -1.0:
                break  # nothing worth laying: keep a good tile or let the turn pass
            try:
                rules.check(state, turn)
            except IllegalMove:
                continue
            return turn
        if player.storage is None and options:
            slot, (cost, steps, _) = min(options.items(), key=lambda item: item[1][0])
            turn = Turn(steps, TakeToStorage(slot))
            try:
                rules.check(state, turn)
                return turn
            except IllegalMove:
                pass
        if player.storage is not None:
            # A stored tile that fits nowhere good blocks every take: lay the least bad tile
            # rather than wait for ever.
            for _, turn in candidates:
                try:
                    rules.check(state, turn)
                except IllegalMove:
                    continue
                return turn
        if not cells or player.storage is not None:
            # Boxed in by their own tiles (or by strict matching): free a field, as people do.
            freed = self._free_a_field(rules, state, player)
            if freed is not None:
                return freed
        return fallback_turn(rules, state)

    def _free_a_field(self, rules: Rules, state: GameState, player: PlayerState) -> Turn | None:
        """Remove the tile (beside the player ship, in the variants) whose loss costs the board
        least."""
        tiles = _tiles_on(player)
        if player.ship is not None:
            tiles = [cell for cell in tiles if touching(cell, player.ship)]
        beside = tiles

        def kept(cell: Cell) -> float:
            board = [row[:] for row in player.board]
            board[cell[0]][cell[1]] = None
            return self.value(state, board)

        for cell in sorted(beside, key=kept, reverse=True):
            turn = replace(fallback_turn(rules, state), action=Discard(cell))
            try:
                rules.check(state, turn)
            except IllegalMove:
                continue
            return turn
        return None
