"""The rules at their edges: the last shell can be spent, one more cannot."""

from __future__ import annotations

import pytest

from companion.actions import Pass, TakeToBoard, TakeToStorage, Turn
from companion.errors import IllegalMove
from tests.companion.conftest import make_game


def refusal(game, turn) -> str:  # type: ignore[no-untyped-def]
    before = game.state.to_json()
    with pytest.raises(IllegalMove) as err:
        game.push(turn)
    assert game.state.to_json() == before
    return err.value.message


@pytest.mark.parametrize("shells", [1, 2, 5])
def test_the_last_shell_pays_for_the_last_step(shells: int) -> None:
    game = make_game()  # 2 boats printed on the board
    game.state.players[0].shells = shells
    assert refusal(game, Turn(2 + shells + 1, Pass())) == (
        f"Moving {2 + shells + 1} steps with 2 boats costs {shells + 1} shells; Red has {shells}."
    )
    record = game.push(Turn(2 + shells, Pass()))
    assert record.move_cost == shells
    assert game.state.players[0].shells == 0


def test_the_last_shell_pays_for_the_last_skipped_tile() -> None:
    game = make_game(ship=15)  # 1 step: position 0, looking down column 1
    game.state.players[0].shells = 2
    assert refusal(game, Turn(1, TakeToBoard((3, 0), (0, 0)))) == (
        "Skipping 3 tiles costs 3 shells; Red has 2."
    )
    game.state.players[0].shells = 3
    record = game.push(Turn(1, TakeToBoard((3, 0), (0, 0))))
    assert record.skip_cost == 3
    assert game.state.players[0].shells == 0


def test_moving_and_skipping_may_spend_every_shell_together() -> None:
    game = make_game(ship=15)
    game.state.players[0].shells = 4
    assert refusal(game, Turn(4, TakeToStorage((3, 3)))) == (
        "Moving 4 steps with 2 boats and skipping 3 tiles costs 5 shells; Red has 4."
    )
    game.state.players[0].shells = 5
    record = game.push(Turn(4, TakeToStorage((3, 3))))
    assert (record.move_cost, record.skip_cost) == (2, 3)
    assert game.state.players[0].shells == 0


def test_the_reach_map_offers_exactly_what_the_last_shell_buys() -> None:
    game = make_game(ship=15)
    game.state.players[0].shells = 1
    reach = game.rules.reach_map(game.state)
    assert [r.steps for r in reach] == [1, 2, 3]
    assert [r.move_cost for r in reach] == [0, 0, 1]
    for r in reach:
        assert all(t.cost <= 1 for t in r.takes)
        assert max(t.cost for t in r.takes) == 1
    legal = list(game.rules.legal_turns(game.state))
    assert max(t.steps for t in legal) == 3
    assert any(t.steps == 3 for t in legal)
