"""The rules engine against the rulebook and its rulings (docs/rules.md), one behaviour per test."""

from __future__ import annotations

import pytest

from companion.actions import (
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
from companion.game import Seat, new_game
from companion.rules import ship_line
from companion.state import SHELLS_TOTAL
from tests.companion.conftest import PLAIN_DISPLAY, lay, make_game


def refusal(game, turn) -> str:  # type: ignore[no-untyped-def]
    before = game.state.to_json()
    with pytest.raises(IllegalMove) as err:
        game.push(turn)
    assert game.state.to_json() == before, "a refused turn must change nothing"
    return err.value.message


# ---------------------------------------------------------------- setup


def test_setup_draws_sixteen_without_volcanoes_and_shuffles_them_back() -> None:
    for seed in range(30):
        state = new_game([Seat("A", 1), Seat("B", 2)], seed=seed)
        shown = [t for row in state.display for t in row]
        assert len(shown) == 16 and "volcano" not in shown
        assert state.stack.count("volcano") == 2
        assert len(state.stack) == 97 - 16


def test_setup_gives_five_shells_each_from_thirty_and_left_of_start_player_begins() -> None:
    state = new_game([Seat("A", 1), Seat("B", 2), Seat("C", 3)], start_player=1, seed=1)
    assert [p.shells for p in state.players] == [5, 5, 5]
    assert state.supply == SHELLS_TOTAL - 15
    assert state.mover.name == "C"


@pytest.mark.parametrize(
    ("seats", "side", "message"),
    [
        ([Seat("A", 1)], "front", "2 to 5 players"),
        ([Seat(str(i), i) for i in range(1, 6)], "atoll", "at most 4 players"),
        ([Seat("A", 1), Seat("a", 2)], "front", "same name"),
        ([Seat("A", 1), Seat("B", 1)], "front", "different seat"),
    ],
)
def test_setup_refusals(seats: list[Seat], side: str, message: str) -> None:
    with pytest.raises(IllegalMove, match=message):
        new_game(seats, side=side)


def test_a_camera_display_may_not_show_a_volcano_at_setup() -> None:
    display = [row[:] for row in PLAIN_DISPLAY]
    display[0][0] = "volcano"
    with pytest.raises(IllegalMove, match="set aside"):
        make_game(display)


# ------------------------------------------------------------ the ship


def test_ship_lines_follow_the_table_kit() -> None:
    assert ship_line(0) == ((0, 0), (1, 0), (2, 0), (3, 0))
    assert ship_line(5) == ((1, 3), (1, 2), (1, 1), (1, 0))
    assert ship_line(8) == ((3, 3), (2, 3), (1, 3), (0, 3))
    assert ship_line(15) == ((0, 0), (0, 1), (0, 2), (0, 3))


def test_moving_further_than_the_boats_costs_a_shell_per_step() -> None:
    game = make_game()
    record = game.push(Turn(4, Pass()))
    assert (record.move_cost, game.state.players[0].shells, game.state.ship) == (2, 3, 4)
    assert game.state.supply == SHELLS_TOTAL - 10 + 2


def test_moving_too_far_is_refused_with_the_cost() -> None:
    game = make_game()
    game.state.players[0].shells = 1
    assert (
        refusal(game, Turn(4, Pass())) == "Moving 4 steps with 2 boats costs 2 shells; Red has 1."
    )


def test_the_ship_must_move() -> None:
    game = make_game()
    with pytest.raises(MalformedMove, match="at least 1 step"):
        game.push(Turn(0, Pass()))


@pytest.mark.parametrize("steps", [16, 17])
def test_a_move_stays_below_a_full_circle(steps: int) -> None:
    game = make_game()
    game.state.players[0].shells = 20
    assert refusal(game, Turn(steps, Pass())) == (
        "The explorer ship moves less than a full circle: at most 15 steps."
    )


def test_the_reach_map_stops_below_a_full_circle() -> None:
    game = make_game(ship=3)
    game.state.players[0].shells = 20
    steps = [r.steps for r in game.reach_map()]
    assert steps == list(range(1, 16))
    assert 3 not in [r.position for r in game.reach_map()]


def test_boats_on_the_board_at_the_start_of_the_turn_count() -> None:
    game = make_game()
    lay(game, 0, (3, 3), "water-boat2")
    record = game.push(Turn(4, Pass()))
    assert record.move_cost == 0


def test_the_ship_goes_round_the_display_clockwise() -> None:
    game = make_game(ship=14)
    game.push(Turn(3, Pass()))
    assert game.state.ship == 1


# ------------------------------------------------------------ taking


def test_the_tile_beside_the_ship_is_free_and_each_skipped_tile_costs_a_shell() -> None:
    game = make_game(ship=15)  # moving 1 step: position 0, looking down column 1
    record = game.push(Turn(1, TakeToBoard((3, 0), (0, 0))))
    assert record.skip_cost == 3
    assert game.state.players[0].shells == 2


def test_empty_slots_cost_nothing_to_skip() -> None:
    display = [row[:] for row in PLAIN_DISPLAY]
    display[0][0] = display[1][0] = None
    game = make_game(display, ship=15)
    record = game.push(Turn(1, TakeToBoard((2, 0), (0, 0))))
    assert record.skip_cost == 0


def test_a_volcano_blocks_what_lies_behind_it() -> None:
    game = make_game(ship=15)
    game.state.display[1][0] = "volcano"
    game.state.stack.remove("volcano")
    assert refusal(game, Turn(1, TakeToBoard((2, 0), (0, 0)))) == (
        "The tile in row 3, column 1 lies behind the volcano."
    )
    assert refusal(game, Turn(1, TakeToBoard((1, 0), (0, 0)))) == "A volcano cannot be taken."
    game.push(Turn(1, TakeToBoard((0, 0), (0, 0))))


def test_only_the_ships_row_or_column_can_be_reached() -> None:
    game = make_game(ship=15)
    message = refusal(game, Turn(1, TakeToBoard((0, 1), (0, 0))))
    assert (
        message == "The ship stands beside column 1 from the north; "
        "the tile in row 1, column 2 is not in it."
    )


def test_total_cost_of_moving_and_skipping_is_checked() -> None:
    game = make_game(ship=15)
    game.state.players[0].shells = 3
    message = refusal(game, Turn(4, TakeToStorage((3, 3))))
    assert message == "Moving 4 steps with 2 boats and skipping 3 tiles costs 5 shells; Red has 3."


def test_the_emptied_slot_is_refilled_from_the_stack_and_a_volcano_drawn_stays() -> None:
    game = make_game(ship=15)
    game.state.stack.remove("volcano")
    game.state.stack.append("volcano")  # on top
    game.push(Turn(1, TakeToBoard((0, 0), (0, 0))))
    assert game.state.display[0][0] == "volcano"


def test_a_camera_table_says_which_tile_was_drawn() -> None:
    game = make_game(ship=15)
    record = game.push(Turn(1, TakeToStorage((0, 0)), drawn="middle-boat"))
    assert game.state.display[0][0] == "middle-boat"
    assert record.turn.drawn == "middle-boat"
    game2 = make_game(ship=15)
    game2.state.stack = [t for t in game2.state.stack if t != "middle-boat"]
    assert refusal(game2, Turn(1, TakeToStorage((0, 0)), drawn="middle-boat")) == (
        "There is no middle-boat left in the stack."
    )


def test_when_the_stack_is_empty_the_slot_stays_empty() -> None:
    game = make_game(ship=15)
    game.state.stack.clear()
    game.push(Turn(1, TakeToStorage((0, 0))))
    assert game.state.display[0][0] is None


# ------------------------------------------------------------ placing


def test_palms_must_point_to_their_owner() -> None:
    game = make_game(ship=1)  # 1 step: position 2, column 3 from the north: single-palm1 first
    assert refusal(game, Turn(1, TakeToBoard((0, 2), (0, 0), 90))) == (
        "Palms must point to their owner: lay the tile upright."
    )
    game.push(Turn(1, TakeToBoard((0, 2), (0, 0), 0)))


def test_a_tile_without_palms_may_lie_any_way() -> None:
    game = make_game(ship=15)
    game.push(Turn(1, TakeToBoard((0, 0), (1, 1), 270)))
    assert game.state.players[0].board[1][1] is not None


def test_a_field_holds_one_tile() -> None:
    game = make_game(ship=15)
    lay(game, 0, (1, 1), "water")
    assert refusal(game, Turn(1, TakeToBoard((0, 0), (1, 1)))) == (
        "Row 2, column 2 of Red's board already holds a tile."
    )


def test_a_cell_off_the_board_is_malformed() -> None:
    game = make_game(ship=15)
    with pytest.raises(MalformedMove, match="no row 5, column 1"):
        game.push(Turn(1, TakeToBoard((0, 0), (4, 0))))


def test_shells_are_conserved_when_the_supply_is_short() -> None:
    game = make_game(ship=0)
    # Red pays 2 to skip, supply is then 0 + 2; the tile prints 1 shell.
    game.state.supply = 0
    game.state.players[1].shells += SHELLS_TOTAL - 10
    record = game.push(Turn(1, TakeToBoard((2, 1), (0, 0))))
    assert record.skip_cost == 2 and record.gained == 1
    assert game.state.supply == 1


def test_strict_matching_refuses_an_island_edge_against_water() -> None:
    game = make_game(ship=3, matching=Matching.STRICT)  # 1 step: position 4, row 1 from east
    lay(game, 0, (1, 0), "water")
    message = refusal(game, Turn(1, TakeToBoard((0, 3), (0, 0))))  # end-s-palm1 above water
    assert message == (
        "The tile does not fit the tile in row 2, column 1: Its island edge on the south "
        "meets water (strict matching)."
    )


def test_free_matching_allows_an_unsuitable_tile() -> None:
    game = make_game(ship=3)
    lay(game, 0, (1, 0), "water")
    game.push(Turn(1, TakeToBoard((0, 3), (0, 0))))


# ------------------------------------------------------------ storage and discard


def test_storage_holds_one_tile() -> None:
    game = make_game(ship=15, names=("Red", "Blue"))
    game.state.players[0].storage = "water"
    game.state.stack.remove("water")
    assert refusal(game, Turn(1, TakeToStorage((0, 0)))) == "Red's storage already holds a tile."


def test_storage_to_board_needs_a_stored_tile() -> None:
    game = make_game()
    assert refusal(game, Turn(1, StorageToBoard((0, 0)))) == "Red's storage is empty."


def test_storage_to_board_lays_the_stored_tile() -> None:
    game = make_game()
    game.state.players[0].storage = "water-shell2"
    game.state.stack.remove("water-shell2")
    record = game.push(Turn(1, StorageToBoard((2, 2), 90)))
    assert game.state.players[0].storage is None
    assert record.gained == 2


def test_a_discarded_tile_goes_back_into_the_box() -> None:
    game = make_game()
    lay(game, 0, (0, 0), "water")
    game.push(Turn(1, Discard((0, 0))))
    assert game.state.players[0].board[0][0] is None
    assert game.state.box == ["water"]
    assert (
        refusal(game, Turn(1, Discard((0, 0))))
        == "There is no tile on row 1, column 1 of Blue's board to remove."
    )


def test_drawn_only_goes_with_a_take() -> None:
    game = make_game()
    assert refusal(game, Turn(1, Pass(), drawn="water")) == (
        "Nothing was taken from the display, so nothing is drawn."
    )


# ------------------------------------------------------------ the end


def fill_all_but(game, player: int, free: tuple[int, int]) -> None:  # type: ignore[no-untyped-def]
    for r in range(4):
        for c in range(4):
            if (r, c) != free:
                lay(
                    game,
                    player,
                    (r, c),
                    next(t for t in game.state.stack if t != "volcano"),
                )


def test_a_full_board_gives_every_other_player_exactly_one_more_turn() -> None:
    game = make_game(names=("Red", "Blue", "Green"), start_player=2, ship=15)
    fill_all_but(game, 0, (3, 3))
    record = game.push(Turn(1, TakeToBoard((0, 0), (3, 3))))
    assert record.final_round_started and not game.over
    game.push(Turn(1, Pass()))
    assert not game.over
    last = game.push(Turn(1, Pass()))
    assert last.game_over and game.over
    with pytest.raises(GameOver):
        game.push(Turn(1, Pass()))


def test_the_game_also_ends_when_no_tile_can_ever_be_taken_again() -> None:
    display: list[list[str | None]] = [[None] * 4 for _ in range(4)]
    display[0][0] = "water"
    game = make_game(display, ship=15)
    game.state.stack.clear()
    record = game.push(Turn(1, TakeToBoard((0, 0), (0, 0))))
    assert record.final_round_started
    game.push(Turn(1, Pass()))
    assert game.over


def test_tiles_hidden_behind_volcanoes_from_every_side_start_the_final_round() -> None:
    game = make_game(ship=15)
    display: list[list[str | None]] = [[None] * 4 for _ in range(4)]
    display[1][1] = "water"  # every line towards it passes a volcano first
    for cell in ((0, 1), (1, 0), (2, 1), (1, 2)):
        display[cell[0]][cell[1]] = "volcano"
    game.state.display = display
    game.state.stack.clear()
    record = game.push(Turn(1, Pass()))
    assert record.final_round_started and not game.over
    game.push(Turn(1, Pass()))
    assert game.over


def test_passing_with_the_stack_empty_does_not_end_the_game() -> None:
    game = make_game(names=("Red", "Blue", "Green"), ship=15)
    game.state.stack.clear()
    for _ in range(9):  # three rounds in which nobody does anything
        record = game.push(Turn(1, Pass()))
        assert not record.final_round_started
    assert not game.over
    # the tiles still on display can be taken and the game goes on to a full board
    assert game.reach_map()[0].takes


# ------------------------------------------------------------ variants


def test_advanced_first_tile_carries_the_ship_and_the_next_lies_next_to_it() -> None:
    game = make_game(names=("Red", "Blue"), variant=Variant.ADVANCED, ship=15)
    game.push(Turn(1, TakeToBoard((0, 0), (1, 1))))
    assert game.state.players[0].ship == (1, 1)
    game.push(Turn(1, Pass()))
    # Red: position 1 -> 2 (one step), column 3 from the north: single-palm1 first
    assert refusal(game, Turn(1, TakeToBoard((0, 2), (3, 3)))) == (
        "The tile must lie next to Red's ship on row 2, column 2 "
        "(horizontally, vertically or diagonally)."
    )
    game.push(Turn(1, TakeToBoard((0, 2), (2, 2))))  # diagonal is fine
    assert game.state.players[0].ship == (1, 1)


def test_advanced_ship_may_move_for_shells_before_laying_and_freely_after() -> None:
    game = make_game(variant=Variant.ADVANCED, ship=15)
    lay(game, 0, (0, 0), "water")
    lay(game, 0, (1, 1), "water-boat")
    game.state.players[0].ship = (0, 0)
    record = game.push(Turn(1, TakeToBoard((0, 0), (2, 2)), ship_path=((1, 1),), ship_to=(0, 0)))
    assert record.path_cost == 1 and game.state.players[0].shells == 4
    assert game.state.players[0].ship == (0, 0)


def test_advanced_ship_never_stands_on_water_and_its_tile_cannot_be_removed() -> None:
    game = make_game(variant=Variant.ADVANCED)
    lay(game, 0, (0, 0), "water")
    game.state.players[0].ship = (0, 0)
    assert refusal(game, Turn(1, Pass(), ship_to=(3, 3))) == (
        "Red's ship can only stand on a tile; row 4, column 4 is empty water."
    )
    assert refusal(game, Turn(1, Discard((0, 0)))) == "The tile under Red's ship cannot be removed."


def test_pro_ship_always_goes_onto_the_tile_just_laid() -> None:
    game = make_game(variant=Variant.PRO, ship=15)
    lay(game, 0, (0, 0), "water")
    game.state.players[0].ship = (0, 0)
    game.push(Turn(1, TakeToBoard((0, 0), (1, 0))))
    assert game.state.players[0].ship == (1, 0)
    game.push(Turn(1, Pass()))
    assert refusal(game, Turn(1, TakeToBoard((0, 2), (2, 0)), ship_to=(0, 0))) == (
        "In the Profispiel the ship goes onto the tile just laid and nowhere else."
    )


@pytest.mark.parametrize("action", [Pass(), TakeToStorage((0, 0)), Discard((1, 1))])
def test_pro_ship_stays_when_no_tile_is_laid(action: Pass | TakeToStorage | Discard) -> None:
    game = make_game(variant=Variant.PRO, ship=15)
    lay(game, 0, (0, 0), "water")
    lay(game, 0, (1, 1), "water-boat")
    game.state.players[0].ship = (0, 0)
    message = refusal(game, Turn(1, action, ship_to=(1, 1)))
    assert message == (
        "In the Profispiel the player ship only moves when a tile is laid on the board, "
        "and then onto that tile."
    )
    assert "just laid" not in message
    game.push(Turn(1, action, ship_to=(0, 0)))  # naming where it stands anyway is no move
    assert game.state.players[0].ship == (0, 0)


def test_the_base_game_has_no_player_ships() -> None:
    game = make_game()
    lay(game, 0, (0, 0), "water")
    assert "only used in the" in refusal(game, Turn(1, Pass(), ship_to=(0, 0)))


# ------------------------------------------------------------ the reach map


def test_reach_map_lists_every_position_and_the_total_cost_of_each_tile() -> None:
    game = make_game(ship=15)
    reach = {r.position: r for r in game.reach_map()}
    assert sorted(reach) == list(range(0, 7))  # 2 boats + 5 shells = 7 steps
    assert reach[0].move_cost == 0
    assert [(t.slot, t.cost) for t in reach[0].takes] == [
        ((0, 0), 0),
        ((1, 0), 1),
        ((2, 0), 2),
        ((3, 0), 3),
    ]
    assert reach[6].move_cost == 5
    assert [(t.slot, t.cost) for t in reach[6].takes] == [((2, 3), 5)]


def test_every_enumerated_turn_is_legal() -> None:
    game = make_game(ship=15)
    turns = list(game.rules.legal_turns(game.state))
    assert len(turns) > 100
    for turn in turns[:: max(1, len(turns) // 50)]:
        game.push(turn)
        game.pop()
