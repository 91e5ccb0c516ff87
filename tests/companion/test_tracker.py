"""The turn tracker on scripted reads: clean reads, misreads, covered cells, refusals."""

from __future__ import annotations

import random
from dataclasses import replace

import pytest

from companion.actions import Discard, Pass, TakeToBoard, TakeToStorage, Turn, Variant
from companion.bots import RandomPlayer
from companion.game import Game, Seat, new_game
from companion.reading import EMPTY, UNKNOWN, CellRead, TableRead
from companion.state import GameState
from companion.tracker import (
    Accepted,
    Doubtful,
    Refused,
    Unreadable,
    infer_turn,
    read_of_state,
)
from tests.companion.conftest import lay, make_game


def after(game: Game, turn: Turn) -> GameState:
    state = game.state.copy()
    game.rules.apply(state, turn)
    return state


def with_cell(
    read: TableRead, seat: int | None, cell: tuple[int, int], value: CellRead
) -> TableRead:
    """The same read with one cell replaced (seat None: the display)."""
    r, c = cell
    if seat is None:
        rows = [list(row) for row in read.display]
        rows[r][c] = value
        return replace(read, display=tuple(tuple(row) for row in rows))
    board = [list(row) for row in read.seats[seat].cells]
    board[r][c] = value
    seats = dict(read.seats)
    seats[seat] = replace(read.seats[seat], cells=tuple(tuple(row) for row in board))
    return replace(read, seats=seats)


def test_a_clean_read_of_a_take_is_accepted_with_the_tile_drawn() -> None:
    game = make_game(ship=15)
    turn = Turn(1, TakeToBoard((1, 0), (2, 2)), drawn="middle-boat")
    verdict = infer_turn(game.rules, game.state, read_of_state(after(game, turn)))
    assert verdict == Accepted(turn)


def test_storage_and_pass_are_told_apart() -> None:
    game = make_game(ship=15)
    turn = Turn(2, TakeToStorage((0, 1)), drawn="volcano")
    assert infer_turn(game.rules, game.state, read_of_state(after(game, turn))) == Accepted(turn)
    assert infer_turn(game.rules, game.state, read_of_state(after(game, Turn(3, Pass())))) == (
        Accepted(Turn(3, Pass()))
    )


def test_a_palm_laid_sideways_is_refused_with_the_rule() -> None:
    game = make_game(ship=1)
    state = after(game, Turn(1, TakeToBoard((0, 2), (0, 0)), drawn="water"))
    read = with_cell(read_of_state(state), 1, (0, 0), CellRead("single-palm1", 90, 0.99))
    verdict = infer_turn(game.rules, game.state, read)
    assert isinstance(verdict, Refused)
    assert verdict.reason == "Palms must point to their owner: lay the tile upright."


def test_a_tile_that_cost_too_much_is_refused_with_the_cost() -> None:
    game = make_game(ship=15)
    game.state.players[0].shells = 1
    state = after(game, Turn(1, TakeToBoard((0, 0), (0, 0)), drawn="water"))
    state.ship = 5  # the player moved 6 steps on the table
    verdict = infer_turn(game.rules, game.state, read_of_state(state))
    assert isinstance(verdict, Refused)
    assert verdict.reason.startswith("Moving 6 steps with 2 boats")


@pytest.mark.parametrize("shells", [5, 14])
def test_a_ship_that_did_not_move_is_refused_and_costs_nothing(shells: int) -> None:
    game = make_game(ship=15)
    game.state.players[0].shells = shells
    state = game.state.copy()
    state.ship = 15  # the table shows the explorer ship where it stood
    verdict = infer_turn(game.rules, game.state, read_of_state(state))
    assert verdict == Refused(
        "The explorer ship stands where it stood: the ship must move at least one step."
    )


def test_another_players_board_must_not_change() -> None:
    game = make_game(ship=15)
    read = read_of_state(after(game, Turn(1, Pass())))
    read = with_cell(read, 2, (3, 3), CellRead("water", 0, 0.9))
    verdict = infer_turn(game.rules, game.state, read)
    assert verdict == Refused(
        "Blue's board changed during Red's turn (row 4, column 4): put it back as it was."
    )


def test_two_tiles_laid_in_one_turn_are_refused() -> None:
    game = make_game(ship=15)
    state = after(game, Turn(1, TakeToBoard((0, 0), (0, 0)), drawn="water"))
    read = with_cell(read_of_state(state), 1, (1, 1), CellRead("water-boat", 0, 0.9))
    verdict = infer_turn(game.rules, game.state, read)
    assert isinstance(verdict, Refused)
    assert verdict.reason.startswith("The table shows more than one turn's changes")


def test_a_covered_new_tile_is_a_question_not_a_guess() -> None:
    game = make_game(ship=15)
    turn = Turn(1, TakeToBoard((0, 0), (2, 2), 90), drawn="middle-boat")
    read = with_cell(read_of_state(after(game, turn)), 1, (2, 2), UNKNOWN)
    verdict = infer_turn(game.rules, game.state, read)
    assert isinstance(verdict, Doubtful)
    assert turn in verdict.candidates and len(verdict.candidates) == 4  # four rotations
    assert "could not be seen" in verdict.reason


def test_an_unseen_ship_is_a_question() -> None:
    game = make_game(ship=15)
    turn = Turn(2, TakeToBoard((0, 1), (0, 0)), drawn="water")
    read = replace(read_of_state(after(game, turn)), ship=None)
    verdict = infer_turn(game.rules, game.state, read)
    assert isinstance(verdict, Doubtful) and turn in verdict.candidates
    assert verdict.reason == "The explorer ship could not be seen: where is it now?"


def test_an_unseen_refill_asks_to_clear_the_table() -> None:
    game = make_game(ship=15)
    turn = Turn(1, TakeToBoard((0, 0), (3, 3)), drawn="water")
    read = with_cell(read_of_state(after(game, turn)), None, (0, 0), UNKNOWN)
    verdict = infer_turn(game.rules, game.state, read)
    assert verdict == Unreadable(
        "The display's row 1, column 1 cannot be seen, so the tile drawn is unknown: "
        "clear it and press again."
    )


def test_a_display_tile_read_empty_does_not_block_a_clear_turn() -> None:
    # A pale arm or a lamp's glare over a display tile can read as an empty slot; while
    # tiles remain, the rules keep the display full, so that slot is merely unseen.
    game = make_game(ship=15)
    turn = Turn(1, TakeToBoard((1, 0), (2, 2)), drawn="middle-boat")
    read = with_cell(read_of_state(after(game, turn)), None, (3, 2), EMPTY)
    assert infer_turn(game.rules, game.state, read) == Accepted(turn)


def test_a_taken_slot_left_empty_asks_for_its_refill() -> None:
    game = make_game(ship=15)
    turn = Turn(1, TakeToBoard((1, 0), (2, 2)), drawn="middle-boat")
    read = with_cell(read_of_state(after(game, turn)), None, (1, 0), EMPTY)
    assert infer_turn(game.rules, game.state, read) == Unreadable(
        "The display's row 2, column 1 looks empty, but it is refilled while tiles remain: "
        "draw a tile into it (or clear what covers it) and press again."
    )


def test_once_the_stack_is_out_a_taken_slot_stays_empty() -> None:
    game = make_game(ship=15)
    game.state.stack.clear()
    turn = Turn(1, TakeToBoard((1, 0), (2, 2)))
    read = read_of_state(after(game, turn))
    assert read.display[1][0] == EMPTY
    assert infer_turn(game.rules, game.state, read) == Accepted(turn)


def test_the_movers_board_must_be_in_view() -> None:
    game = make_game(ship=15)
    read = read_of_state(after(game, Turn(1, Pass())))
    read = replace(read, seats={2: read.seats[2]})
    verdict = infer_turn(game.rules, game.state, read)
    assert isinstance(verdict, Unreadable) and "seat 1" in verdict.reason


def test_an_unknown_cell_where_nothing_changed_does_not_block_a_clear_turn() -> None:
    game = make_game(ship=15)
    turn = Turn(1, TakeToBoard((0, 0), (0, 0)), drawn="middle-boat")
    read = with_cell(read_of_state(after(game, turn)), 1, (3, 3), UNKNOWN)
    assert infer_turn(game.rules, game.state, read) == Accepted(turn)


def test_a_tile_redrawn_into_its_own_slot_leaves_a_real_question() -> None:
    game = make_game(ship=15)  # column 1 holds four plain water tiles
    turn = Turn(1, TakeToBoard((1, 0), (0, 0)), drawn="water")
    verdict = infer_turn(game.rules, game.state, read_of_state(after(game, turn)))
    assert isinstance(verdict, Doubtful) and turn in verdict.candidates


def ship_on_a_diagonal(variant: Variant) -> Game:
    """Red's ship on row 1, column 1 and tiles along the diagonal to row 4, column 4."""
    game = make_game(variant=variant, ship=15)
    for cell in ((0, 0), (1, 1), (2, 2), (3, 3)):
        lay(game, 0, cell, "end-bare")
    game.state.players[0].ship = (0, 0)
    return game


def shells_charged(game: Game, turn: Turn) -> int:
    return game.rules.check(game.state, turn).path_cost


def test_an_unseen_free_move_of_the_player_ship_is_asked_not_assumed() -> None:
    game = ship_on_a_diagonal(Variant.ADVANCED)
    moved = Turn(1, Pass(), ship_to=(3, 3))  # Red passes and puts the ship on row 4, column 4
    verdict = infer_turn(game.rules, game.state, read_of_state(after(game, moved)))
    assert isinstance(verdict, Doubtful)
    assert verdict.reason == "The camera cannot see Red's ship: where does it stand now?"
    assert moved in verdict.candidates
    assert {t.ship_to for t in verdict.candidates} == {(0, 0), (1, 1), (2, 2), (3, 3)}
    game.push(moved)  # the host's choice
    game.push(Turn(1, Pass()))  # Blue
    laid = Turn(1, TakeToBoard((0, 2), (3, 2)))  # next to the ship on row 4, column 4
    verdict = infer_turn(game.rules, game.state, read_of_state(after(game, laid)))
    assert isinstance(verdict, Doubtful)
    assert all(t.ship_path == () and shells_charged(game, t) == 0 for t in verdict.candidates)
    assert replace(laid, ship_to=(3, 3), drawn=verdict.candidates[0].drawn) in verdict.candidates


def test_a_paid_player_ship_path_is_never_accepted_unseen() -> None:
    game = ship_on_a_diagonal(Variant.ADVANCED)
    game.push(Turn(1, Pass()))
    game.push(Turn(1, Pass()))
    laid = Turn(1, TakeToBoard((0, 2), (3, 2)), ship_path=((1, 1), (2, 2)))
    verdict = infer_turn(game.rules, game.state, read_of_state(after(game, laid)))
    assert not isinstance(verdict, Accepted)
    assert isinstance(verdict, Doubtful) and len(verdict.candidates) == 5


def test_a_player_ship_that_is_seen_is_recorded() -> None:
    game = ship_on_a_diagonal(Variant.ADVANCED)
    moved = Turn(1, Pass(), ship_to=(3, 3))
    read = read_of_state(after(game, moved), player_ships=True)
    assert infer_turn(game.rules, game.state, read) == Accepted(moved)
    game.push(moved)
    game.push(Turn(1, Pass()))
    laid = Turn(1, TakeToBoard((0, 2), (3, 2)), ship_to=(3, 3))
    verdict = infer_turn(
        game.rules, game.state, read_of_state(after(game, laid), player_ships=True)
    )
    assert isinstance(verdict, Accepted)
    assert verdict.turn == replace(laid, drawn=verdict.turn.drawn)
    assert shells_charged(game, verdict.turn) == 0


def test_a_seen_player_ship_on_water_is_refused() -> None:
    game = ship_on_a_diagonal(Variant.ADVANCED)
    state = after(game, Turn(1, Pass()))
    state.players[0].ship = (0, 3)
    verdict = infer_turn(game.rules, game.state, read_of_state(state, player_ships=True))
    assert verdict == Refused(
        "Red's ship can only stand on a tile; row 1, column 4 is empty water.", Turn(1, Pass())
    )


def test_the_profispiel_ship_goes_where_the_rules_put_it() -> None:
    game = ship_on_a_diagonal(Variant.PRO)
    removed = Turn(1, Discard((3, 3)))
    assert infer_turn(game.rules, game.state, read_of_state(after(game, removed))) == (
        Accepted(removed)
    )
    state = after(game, removed)
    state.players[0].ship = (2, 2)  # moved on a turn that laid nothing
    verdict = infer_turn(game.rules, game.state, read_of_state(state, player_ships=True))
    assert isinstance(verdict, Refused)
    assert verdict.reason.startswith("In the Profispiel the player ship only moves when a tile")


def test_a_read_carries_the_player_ship_through_json() -> None:
    game = ship_on_a_diagonal(Variant.ADVANCED)
    read = read_of_state(game.state, player_ships=True)
    data = read.to_json()
    assert data["seats"]["1"]["player_ship"] == [0, 0]
    assert "player_ship" not in data["seats"]["2"]


@pytest.mark.parametrize("variant", list(Variant))
def test_every_turn_of_random_games_is_recovered_from_a_clean_read(variant: Variant) -> None:
    for seed in range(3):
        game = Game(
            new_game([Seat("A", 2), Seat("B", 4), Seat("C", 5)], seed=seed, variant=variant)
        )
        bot = RandomPlayer(random.Random(seed))
        while not game.over:
            turn = bot.choose(game.rules, game.state)
            expected = after(game, turn)
            verdict = infer_turn(game.rules, game.state, read_of_state(expected))
            if isinstance(verdict, Accepted):
                choices: tuple[Turn, ...] = (verdict.turn,)
            else:
                assert isinstance(verdict, Doubtful), verdict
                choices = verdict.candidates
            outcomes = [after(game, t) for t in choices]
            assert any(
                o.players == expected.players and o.display == expected.display for o in outcomes
            )
            game.push(turn)
