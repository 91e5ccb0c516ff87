"""Random legal games from setup to the final score, checking invariants after every turn."""

from __future__ import annotations

import json
import random
from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from companion.actions import Matching, Variant
from companion.bots import RandomPlayer
from companion.catalogue import default_catalogue
from companion.game import Game, Seat, new_game
from companion.state import SHELLS_TOTAL, GameState

MAX_TURNS = 2000


def check_invariants(game: Game, box: Counter[str]) -> None:
    state = game.state
    assert state.supply + sum(p.shells for p in state.players) == SHELLS_TOTAL
    assert state.supply >= 0 and all(p.shells >= 0 for p in state.players)
    assert Counter(state.tiles_in_play()) == box
    for p in state.players:
        for r, row in enumerate(p.board):
            for c, placed in enumerate(row):
                if placed is not None:
                    assert state.layout.playable((r, c))
                    if state.catalogue.meaning(placed.tile).palms:
                        assert placed.rotation == 0, "palms point to their owner"
        if p.ship is not None:
            assert p.board[p.ship[0]][p.ship[1]] is not None, "a player ship stands on a tile"


@settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(
    seed=st.integers(0, 10**6),
    players=st.integers(2, 5),
    variant=st.sampled_from(list(Variant)),
    matching=st.sampled_from(list(Matching)),
    atoll=st.booleans(),
)
@pytest.mark.slow
def test_random_games_keep_every_invariant(
    seed: int, players: int, variant: Variant, matching: Matching, atoll: bool
) -> None:
    side = "atoll" if atoll and players <= 4 else "front"
    seats = [Seat(f"P{i}", i + 1) for i in range(players)]
    state = new_game(
        seats, seed=seed, variant=variant, matching=matching, side=side, ship=seed % 16
    )
    game = Game(state)
    box = Counter(default_catalogue().tiles())
    bot = RandomPlayer(random.Random(seed))
    check_invariants(game, box)
    rng = random.Random(seed + 1)
    while not game.over:
        assert game.state.turn_number < MAX_TURNS, "a game must end"
        before = game.state.copy()
        before_json = json.dumps(before.to_json(), sort_keys=True)
        game.push(bot.choose(game.rules, game.state))
        check_invariants(game, box)
        if rng.random() < 0.15:
            game.pop()
            assert game.state == before
            assert json.dumps(game.state.to_json(), sort_keys=True) == before_json
            game.push(bot.choose(game.rules, game.state))
            check_invariants(game, box)
        if rng.random() < 0.1:
            text = json.dumps(game.state.to_json())
            assert GameState.from_json(json.loads(text)) == game.state
    final = game.score()
    assert len(final.players) == players and final.winners
    replayed = Game.replay(json.loads(json.dumps(game.to_json()))["events"])
    assert replayed.state == game.state
    assert replayed.score() == final


@pytest.mark.parametrize("variant", list(Variant))
def test_random_games_end_when_the_tiles_run_out(variant: Variant) -> None:
    # Only the display's 16 tiles are left: no board can fill, so the game ends because
    # no tile can be taken any more (passing alone never ends it).
    for seed in range(10):
        seats = [Seat(f"P{i}", i + 1) for i in range(2 + seed % 4)]
        game = Game(new_game(seats, seed=seed, variant=variant, ship=seed % 16))
        game.state.stack.clear()
        bot = RandomPlayer(random.Random(seed))
        while not game.over:
            assert game.state.turn_number < MAX_TURNS, "a game must end"
            game.push(bot.choose(game.rules, game.state))
        assert game.rules.tiles_exhausted(game.state)
