"""Simulated players that choose legal turns, for the demo, the tests and the benchmarks.

`RandomPlayer` plays like an eager, careless person: it usually takes a reachable tile and
lays it on a free field. `GreedyPlayer` weighs every reachable tile on every free field by what
it would add to the board's score, so a demo game looks like people playing. Both return only
turns the rules accept.
"""

from __future__ import annotations

import random
from typing import Protocol

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
from companion.rules import NEIGHBOURS_8, Reach, Rules
from companion.scoring import tally
from companion.state import GameState, Placed, PlayerState


class Bot(Protocol):
    def choose(self, rules: Rules, state: GameState) -> Turn:
        """A legal turn for the player to move."""
        ...


def placement_cells(state: GameState, player: PlayerState) -> list[Cell]:
    """Free fields where the player may lay a tile now (next to the player ship in variants)."""
    empty = state.empty_cells(player)
    if state.variant is Variant.BASE or player.ship is None:
        return empty
    r, c = player.ship
    near = {(r + dr, c + dc) for dr, dc in NEIGHBOURS_8}
    return [cell for cell in empty if cell in near]


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


class RandomPlayer:
    """Random but eager: takes a tile nine times in ten, keeps one in storage now and then."""

    def __init__(self, rng: random.Random, discard_chance: float = 0.02) -> None:
        self.rng = rng
        self.discard_chance = discard_chance

    def _propose(self, rules: Rules, state: GameState, reaches: list[Reach]) -> Turn:
        rng = self.rng
        player = state.mover
        cells = placement_cells(state, player)
        with_takes = [r for r in reaches if r.takes]
        roll = rng.random()
        action: Action = Pass()
        steps = rng.choice(reaches).steps
        if player.storage is not None and cells and roll < 0.25:
            meaning = state.catalogue.meaning(player.storage)
            action = StorageToBoard(rng.choice(cells), rng.choice(rules.rotations_for(meaning)))
        elif with_takes and roll < 0.95:
            reach = rng.choice(with_takes)
            take = min(rng.sample(reach.takes, min(2, len(reach.takes))), key=lambda t: t.cost)
            steps = reach.steps
            if cells and (player.storage is not None or rng.random() < 0.9):
                meaning = state.catalogue.meaning(take.tile)
                action = TakeToBoard(
                    take.slot, rng.choice(cells), rng.choice(rules.rotations_for(meaning))
                )
            elif player.storage is None:
                action = TakeToStorage(take.slot)
        elif roll < 0.95 + self.discard_chance:
            tiles = [
                (r, c)
                for r, row in enumerate(player.board)
                for c, p in enumerate(row)
                if p is not None
            ]
            if tiles:
                action = Discard(rng.choice(tiles))
        ship_to = None
        if state.variant is Variant.ADVANCED and rng.random() < 0.2:
            tiles = [
                (r, c)
                for r, row in enumerate(player.board)
                for c, p in enumerate(row)
                if p is not None
            ]
            if tiles:
                ship_to = rng.choice(tiles)
        return Turn(steps, action, ship_to=ship_to)

    def choose(self, rules: Rules, state: GameState) -> Turn:
        reaches = rules.reach_map(state)
        for _ in range(12):
            if not reaches:
                break
            turn = self._propose(rules, state, reaches)
            try:
                rules.check(state, turn)
            except IllegalMove:
                continue
            return turn
        return fallback_turn(rules, state)


class GreedyPlayer:
    """Lays the reachable tile where it adds most to the board, minus the shells it costs."""

    def __init__(self, rng: random.Random, shell_value: float = 1.5) -> None:
        self.rng = rng
        self.shell_value = shell_value

    def _value(
        self, state: GameState, player: PlayerState, cell: Cell | None, placed: Placed | None
    ) -> float:
        board = [row[:] for row in player.board]
        if cell is not None:
            board[cell[0]][cell[1]] = placed
        meanings = tuple(
            tuple(None if p is None else state.meaning(p) for p in row) for row in board
        )
        t = tally(state.layout, meanings)
        removed = set(t.removed)
        # Palms on unfinished islands count half: they may still be completed.
        hopeful = sum(
            (state.meaning(p).palms * (2 if state.meaning(p).huts else 1))
            for r, row in enumerate(board)
            for c, p in enumerate(row)
            if p is not None and (r, c) in removed
        )
        return t.palms_no_hut + t.palms_hut + t.leis + 0.5 * t.boat_count + 0.5 * hopeful + t.empty

    def choose(self, rules: Rules, state: GameState) -> Turn:
        player = state.mover
        base = self._value(state, player, None, None)
        best: tuple[float, float, Turn] | None = None
        cells = placement_cells(state, player)
        options: dict[Cell, tuple[int, int, str]] = {}  # slot -> (cost, steps, tile)
        for reach in rules.reach_map(state):
            for take in reach.takes:
                known = options.get(take.slot)
                if known is None or take.cost < known[0]:
                    options[take.slot] = (take.cost, reach.steps, take.tile)
        candidates: list[tuple[float, Turn]] = []
        for slot, (cost, steps, tile) in options.items():
            meaning = state.catalogue.meaning(tile)
            for cell in cells:
                for rotation in rules.rotations_for(meaning):
                    gain = self._value(state, player, cell, Placed(tile, rotation)) - base
                    candidates.append(
                        (
                            gain - self.shell_value * cost,
                            Turn(steps, TakeToBoard(slot, cell, rotation)),
                        )
                    )
        if player.storage is not None:
            meaning = state.catalogue.meaning(player.storage)
            for cell in cells:
                for rotation in rules.rotations_for(meaning):
                    gain = self._value(state, player, cell, Placed(player.storage, rotation)) - base
                    candidates.append((gain, Turn(1, StorageToBoard(cell, rotation))))
        self.rng.shuffle(candidates)  # ties are broken at random, repeatably
        candidates.sort(key=lambda item: item[0], reverse=True)
        for score, turn in candidates[:20]:
            try:
                rules.check(state, turn)
            except IllegalMove:
                continue
            if best is None or score > best[0]:
                best = (score, 0.0, turn)
            break
        if best is not None:
            return best[2]
        return fallback_turn(rules, state)
