"""Undo, the JSON round trip and the event log of a game."""

from __future__ import annotations

import json
import random

import pytest

from companion.actions import Matching, Pass, TakeToBoard, Turn, Variant
from companion.bots import GreedyPlayer
from companion.errors import DataError, NotNow
from companion.game import Game, Seat, new_game
from companion.state import GameState
from tests.companion.conftest import make_game


def test_pop_undoes_the_last_turn_exactly() -> None:
    game = make_game(ship=15)
    before = game.state.copy()
    record = game.push(Turn(3, TakeToBoard((2, 2), (0, 0))))
    assert game.state != before
    assert game.pop() == record
    assert game.state == before
    with pytest.raises(NotNow, match="no turn to undo"):
        game.pop()


def test_the_event_log_is_append_only_and_replays_undos() -> None:
    game = make_game(ship=15)
    game.push(Turn(1, TakeToBoard((0, 0), (0, 0))))
    game.push(Turn(2, Pass()))
    game.pop()
    game.push(Turn(1, Pass()))
    kinds = [e["type"] for e in game.events]
    assert kinds == ["setup", "turn", "turn", "undo", "turn"]
    again = Game.replay(game.to_json()["events"])
    assert again.state == game.state
    assert [r.describe() for r in again.records] == [r.describe() for r in game.records]


def test_logged_turns_name_the_tile_drawn_so_replay_needs_no_stack_order() -> None:
    game = make_game(ship=15)
    game.push(Turn(1, TakeToBoard((0, 0), (0, 0))))
    logged = game.events[-1]["turn"]
    assert logged["drawn"] == game.state.display[0][0]


def test_a_damaged_event_log_is_refused_with_one_sentence() -> None:
    game = make_game(ship=15)
    game.push(Turn(1, Pass()))
    events = json.loads(json.dumps(game.to_json()["events"]))
    events[1]["turn"]["steps"] = 9
    with pytest.raises(DataError, match="event 2 cannot be replayed: Moving 9 steps"):
        Game.replay(events)
    with pytest.raises(DataError, match="starts with a setup event"):
        Game.replay([{"type": "turn"}])


def test_state_json_round_trip_is_lossless_mid_game() -> None:
    game = Game(new_game([Seat("A", 1), Seat("B", 3), Seat("C", 5)], seed=4, side="atoll"))
    bot = GreedyPlayer(random.Random(4))
    for _ in range(12):
        game.push(bot.choose(game.rules, game.state))
    text = json.dumps(game.state.to_json())
    assert GameState.from_json(json.loads(text)) == game.state


def test_a_saved_state_that_is_not_one_is_a_data_error() -> None:
    with pytest.raises(DataError, match="is not a saved game state"):
        GameState.from_json({"side": "front"}, "save.json")


def test_a_greedy_game_ends_with_a_score_for_everyone() -> None:
    game = Game(new_game([Seat("A", 1), Seat("B", 2)], seed=11))
    bot = GreedyPlayer(random.Random(11))
    while not game.over:
        game.push(bot.choose(game.rules, game.state))
    final = game.score()
    assert [p.name for p in final.players] == ["A", "B"]
    assert any(p.total > 0 for p in final.players)


@pytest.mark.parametrize(
    ("players", "variant", "matching", "seed"),
    [
        (5, Variant.ADVANCED, Matching.FREE, 0),  # ships boxed in by their own tiles
        (3, Variant.PRO, Matching.FREE, 1),
        (2, Variant.ADVANCED, Matching.STRICT, 29),  # stored tiles that fit nowhere
    ],
)
@pytest.mark.slow
def test_greedy_games_of_the_variants_end(
    players: int, variant: Variant, matching: Matching, seed: int
) -> None:
    side = "front" if players == 5 else "atoll"
    seats = [Seat(f"P{i}", i + 1) for i in range(players)]
    state = new_game(
        seats, seed=seed, variant=variant, matching=matching, side=side, ship=seed % 16
    )
    game = Game(state)
    bot = GreedyPlayer(random.Random(seed))
    while not game.over:
        assert game.state.turn_number < 500, "a game must end"
        game.push(bot.choose(game.rules, game.state))
