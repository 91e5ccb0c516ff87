"""Bots play whole games through the BoardGame interface, for every player count."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from companion.errors import CompanionError
from companion.games.bots import RandomBot, play_game, play_out
from companion.games.tongiaki import Tongiaki


@pytest.mark.parametrize("players", range(2, 7))
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_bots_finish_a_game_for_every_player_count(players: int, seed: int) -> None:
    game = play_game(Tongiaki, [f"P{i}" for i in range(players)], seed)
    assert game.over and game.to_move() is None
    table = game.score()
    assert len(table.players) == players and table.winners


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(players=st.integers(2, 6), seed=st.integers(0, 2**32))
def test_any_seed_ends(players: int, seed: int) -> None:
    assert play_game(Tongiaki, [f"P{i}" for i in range(players)], seed).over


def test_the_same_seed_plays_the_same_game() -> None:
    a = play_game(Tongiaki, ["Ana", "Bo", "Cy"], 7)
    b = play_game(Tongiaki, ["Ana", "Bo", "Cy"], 7)
    assert a.events == b.events


def test_the_bot_chooses_among_the_legal_actions() -> None:
    game = Tongiaki.new(["Ana", "Bo"], 3)
    bot = RandomBot(3)
    for _ in range(30):
        action = bot.choose(game)
        assert action in game.legal_actions()
        game.push(action)


def test_a_game_that_does_not_end_in_time_is_reported() -> None:
    with pytest.raises(CompanionError, match="did not finish within 5 moves"):
        play_out(Tongiaki.new(["Ana", "Bo"], 1), seed=1, max_moves=5)
