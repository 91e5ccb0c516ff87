"""The turn tracker on the changes a player would notice it missing: another seat's storage."""

from __future__ import annotations

from dataclasses import replace

import pytest

from companion.actions import Pass, TakeToBoard, TakeToStorage, Turn
from companion.reading import EMPTY, UNKNOWN, CellRead, TableRead
from companion.tracker import Accepted, Doubtful, Refused, Unreadable, infer_turn, read_of_state
from tests.companion.conftest import lay, make_game
from tests.companion.test_tracker import after, with_cell


def with_storage(read: TableRead, seat: int, value: CellRead) -> TableRead:
    seats = dict(read.seats)
    seats[seat] = replace(read.seats[seat], storage=value)
    return replace(read, seats=seats)


def test_a_tile_put_in_another_players_storage_is_refused() -> None:
    game = make_game(ship=15)
    turn = Turn(1, TakeToBoard((1, 0), (2, 2)), drawn="middle-boat")
    read = with_storage(read_of_state(after(game, turn)), 2, CellRead("water", 0, 0.95))
    assert infer_turn(game.rules, game.state, read) == Refused(
        "Blue's board changed during Red's turn (the storage): put it back as it was."
    )


def test_a_tile_taken_from_another_players_storage_is_refused() -> None:
    game = make_game(ship=15)
    game.state.players[1].storage = "water-shell2"
    game.state.stack.remove("water-shell2")
    read = with_storage(read_of_state(after(game, Turn(1, Pass()))), 2, EMPTY)
    verdict = infer_turn(game.rules, game.state, read)
    assert verdict == Refused(
        "Blue's board changed during Red's turn (the storage): put it back as it was."
    )


def test_another_players_storage_swapped_for_another_tile_is_refused() -> None:
    game = make_game(ship=15)
    game.state.players[1].storage = "water-shell2"
    game.state.stack.remove("water-shell2")
    read = with_storage(
        read_of_state(after(game, Turn(1, Pass()))), 2, CellRead("water-boat", 0, 0.95)
    )
    verdict = infer_turn(game.rules, game.state, read)
    assert isinstance(verdict, Refused) and "(the storage)" in verdict.reason


def test_another_players_storage_unseen_or_unchanged_does_not_block_the_turn() -> None:
    game = make_game(ship=15)
    game.state.players[1].storage = "water-shell2"
    game.state.stack.remove("water-shell2")
    turn = Turn(1, TakeToBoard((1, 0), (2, 2)), drawn="middle-boat")
    read = read_of_state(after(game, turn))
    assert infer_turn(game.rules, game.state, read) == Accepted(turn)
    unseen = with_storage(read, 2, UNKNOWN)
    assert infer_turn(game.rules, game.state, unseen) == Accepted(turn)


def test_a_board_cell_and_the_storage_of_another_player_are_both_named() -> None:
    game = make_game(ship=15)
    read = read_of_state(after(game, Turn(1, Pass())))
    seats = dict(read.seats)
    cells = [list(row) for row in read.seats[2].cells]
    cells[0][1] = CellRead("water", 0, 0.9)
    seats[2] = replace(
        read.seats[2], cells=tuple(tuple(r) for r in cells), storage=CellRead("water", 0, 0.9)
    )
    verdict = infer_turn(game.rules, game.state, replace(read, seats=seats))
    assert verdict == Refused(
        "Blue's board changed during Red's turn (row 1, column 2; the storage): "
        "put it back as it was."
    )


def test_the_refusal_names_every_change_in_reading_order() -> None:
    game = make_game(ship=15)
    lay(game, 0, (0, 0), "water")
    state = after(game, Turn(1, Pass()))
    state.players[0].board[0][0] = None
    read = with_cell(read_of_state(state), 1, (1, 1), CellRead("water-boat", 0, 0.9))
    read = with_storage(read, 1, CellRead("water-boat2", 0, 0.9))
    verdict = infer_turn(game.rules, game.state, read)
    assert verdict == Refused(
        "The table shows more than one turn's changes: board row 1, column 1 now empty; "
        "board row 2, column 2 now water-boat; the storage now water-boat2. "
        "Put back what should not have moved."
    )


def test_a_tile_turned_on_the_movers_board_is_a_change() -> None:
    game = make_game(ship=15)
    lay(game, 0, (2, 2), "end-s-palm1")
    read = read_of_state(after(game, Turn(1, Pass())))
    turned = with_cell(read, 1, (2, 2), CellRead("end-s-palm1", 90, 0.9))
    verdict = infer_turn(game.rules, game.state, turned)
    assert isinstance(verdict, Refused)
    assert "board row 3, column 3 now end-s-palm1" in verdict.reason


def test_a_symmetric_tile_read_at_another_turn_is_no_change() -> None:
    game = make_game(ship=15)
    lay(game, 0, (2, 2), "water")
    read = read_of_state(after(game, Turn(1, Pass())))
    read = with_cell(read, 1, (2, 2), CellRead("water", 180, 0.9))
    assert infer_turn(game.rules, game.state, read) == Accepted(Turn(1, Pass()))


def test_display_tiles_read_at_any_turn_are_no_change() -> None:
    # Display tiles lie whichever way they were dealt; only the tile counts there.
    game = make_game(ship=15)
    turn = Turn(1, TakeToBoard((1, 0), (2, 2)), drawn="middle-boat")
    read = read_of_state(after(game, turn))
    display = tuple(
        tuple(CellRead(cell.tile, 90, 0.9) if cell and cell.tile else cell for cell in row)
        for row in read.display
    )
    assert infer_turn(game.rules, game.state, replace(read, display=display)) == Accepted(turn)


def test_a_seat_read_with_rows_missing_takes_them_as_unseen() -> None:
    game = make_game(ship=15)
    turn = Turn(1, TakeToBoard((1, 0), (0, 0)), drawn="middle-boat")
    read = read_of_state(after(game, turn))
    seats = dict(read.seats)
    seats[1] = replace(read.seats[1], cells=read.seats[1].cells[:3])
    assert infer_turn(game.rules, game.state, replace(read, seats=seats)) == Accepted(turn)


@pytest.mark.parametrize(("shells", "furthest"), [(5, 7), (0, 2), (13, 15), (20, 15)])
def test_an_unseen_ship_offers_every_distance_the_player_could_pay_for(
    shells: int, furthest: int
) -> None:
    # 2 boats: 2 steps free, a shell for each one more; never a full circle (at most 15)
    game = make_game(ship=15)
    game.state.players[0].shells = shells
    read = replace(read_of_state(after(game, Turn(1, Pass()))), ship=None)
    verdict = infer_turn(game.rules, game.state, read)
    assert isinstance(verdict, Doubtful)
    assert [t.steps for t in verdict.candidates] == list(range(1, furthest + 1))
    assert all(t.action == Pass() for t in verdict.candidates)


def _cut(read: TableRead, seat: int, rows: int, cols: int) -> TableRead:
    seats = dict(read.seats)
    cells = tuple(row[:cols] for row in read.seats[seat].cells[:rows])
    seats[seat] = replace(read.seats[seat], cells=cells)
    return replace(read, seats=seats)


def test_another_seat_read_short_is_judged_on_the_cells_it_has() -> None:
    game = make_game(ship=15)
    turn = Turn(1, TakeToBoard((1, 0), (0, 0)), drawn="middle-boat")
    read = read_of_state(after(game, turn))
    assert infer_turn(game.rules, game.state, _cut(read, 2, 3, 4)) == Accepted(turn)
    assert infer_turn(game.rules, game.state, _cut(read, 2, 4, 3)) == Accepted(turn)
    moved = _cut(with_cell(read, 2, (2, 2), CellRead("water", 0, 0.9)), 2, 4, 3)
    assert infer_turn(game.rules, game.state, moved) == Refused(
        "Blue's board changed during Red's turn (row 3, column 3): put it back as it was."
    )


def test_a_tile_turned_on_another_board_is_refused_a_symmetric_one_is_not() -> None:
    game = make_game(ship=15)
    lay(game, 1, (1, 1), "end-s-palm1")
    lay(game, 1, (1, 2), "water")
    read = read_of_state(after(game, Turn(1, Pass())))
    same = with_cell(read, 2, (1, 2), CellRead("water", 180, 0.9))
    assert infer_turn(game.rules, game.state, same) == Accepted(Turn(1, Pass()))
    turned = with_cell(read, 2, (1, 1), CellRead("end-s-palm1", 90, 0.9))
    assert infer_turn(game.rules, game.state, turned) == Refused(
        "Blue's board changed during Red's turn (row 2, column 2): put it back as it was."
    )


def test_a_tile_from_nowhere_beside_a_covered_display_slot_is_refused() -> None:
    game = make_game(ship=15)
    read = read_of_state(after(game, Turn(1, Pass())))
    read = with_cell(read, None, (0, 0), UNKNOWN)
    read = with_cell(read, 1, (2, 2), CellRead("end-bare", 0, 0.9))
    assert infer_turn(game.rules, game.state, read) == Refused(
        "The table shows more than one turn's changes: board row 3, column 3 now end-bare. "
        "Put back what should not have moved."
    )


def test_a_refill_with_a_tile_the_stack_no_longer_holds_is_refused() -> None:
    game = make_game(ship=15)
    assert "water-shell" not in game.state.stack
    turn = Turn(1, TakeToBoard((1, 0), (2, 2)), drawn="middle-boat")
    read = with_cell(read_of_state(after(game, turn)), None, (1, 0), CellRead("water-shell", 0, 1))
    verdict = infer_turn(game.rules, game.state, read)
    assert isinstance(verdict, Refused)
    assert verdict.reason.startswith("The table shows more than one turn's changes")


def test_a_stored_tile_read_at_any_turn_is_the_stored_tile() -> None:
    game = make_game(ship=15)
    turn = Turn(2, TakeToStorage((0, 1)), drawn="volcano")
    read = read_of_state(after(game, turn))
    read = with_storage(read, 1, CellRead("water-boat", 90, 0.9))
    assert infer_turn(game.rules, game.state, read) == Accepted(turn)


def test_after_the_end_every_read_is_refused() -> None:
    game = make_game(ship=15)
    read = read_of_state(after(game, Turn(1, Pass())))
    game.state.over = True
    assert infer_turn(game.rules, game.state, read) == Refused("The game is over.")


def test_the_movers_board_out_of_view_is_named_with_its_seat() -> None:
    game = make_game(ship=15)
    read = read_of_state(after(game, Turn(1, Pass())))
    read = replace(read, seats={2: read.seats[2]})
    assert infer_turn(game.rules, game.state, read) == Unreadable(
        "Red's board (seat 1) is not in view: check that its markers can be seen and press again."
    )


def test_a_display_not_seen_at_all_asks_to_check_its_markers() -> None:
    game = make_game(ship=15)
    read = read_of_state(after(game, Turn(1, Pass())))
    unseen = tuple(tuple(UNKNOWN for _ in row) for row in read.display)
    assert infer_turn(game.rules, game.state, replace(read, display=unseen)) == Unreadable(
        "The display could not be seen: check its markers and press again."
    )


def test_a_covered_display_slot_where_nothing_changed_does_not_block_a_pass() -> None:
    game = make_game(ship=15)
    read = with_cell(read_of_state(after(game, Turn(1, Pass()))), None, (2, 0), UNKNOWN)
    assert infer_turn(game.rules, game.state, read) == Accepted(Turn(1, Pass()))


def test_a_refusal_carries_the_turn_when_only_one_fits() -> None:
    game = make_game(ship=1)
    state = after(game, Turn(1, TakeToBoard((0, 2), (0, 0)), drawn="water"))
    read = with_cell(read_of_state(state), 1, (0, 0), CellRead("single-palm1", 90, 0.99))
    verdict = infer_turn(game.rules, game.state, read)
    assert verdict == Refused(
        "Palms must point to their owner: lay the tile upright.",
        Turn(1, TakeToBoard((0, 2), (0, 0), 90), drawn="water"),
    )


def test_a_refusal_of_several_fitting_turns_carries_none() -> None:
    game = make_game(ship=1)
    state = after(game, Turn(1, TakeToBoard((0, 2), (0, 0)), drawn="water"))
    read = with_cell(read_of_state(state), 1, (0, 0), CellRead("single-palm1", 90, 0.99))
    verdict = infer_turn(game.rules, game.state, replace(read, ship=None))
    assert verdict == Refused("Palms must point to their owner: lay the tile upright.")


def test_a_question_names_the_unseen_cells_the_first_four_and_never_the_storage() -> None:
    game = make_game(ship=15)
    turn = Turn(1, TakeToBoard((0, 0), (2, 2), 90), drawn="middle-boat")
    read = with_cell(read_of_state(after(game, turn)), 1, (2, 2), UNKNOWN)
    read = with_storage(read, 1, UNKNOWN)
    verdict = infer_turn(game.rules, game.state, read)
    assert isinstance(verdict, Doubtful)
    assert (
        verdict.reason == "Some cells could not be seen (board row 3, column 3): which turn was it?"
    )
    for cell in [(3, 3), (3, 2), (3, 1), (3, 0)]:
        read = with_cell(read, 1, cell, UNKNOWN)
    verdict = infer_turn(game.rules, game.state, read)
    assert isinstance(verdict, Doubtful)
    assert verdict.reason == (
        "Some cells could not be seen (board row 3, column 3, board row 4, column 1, "
        "board row 4, column 2, board row 4, column 3): which turn was it?"
    )


def test_a_tile_redrawn_into_its_own_slot_asks_which_turn_it_was() -> None:
    game = make_game(ship=15)
    turn = Turn(1, TakeToBoard((1, 0), (0, 0)), drawn="water")
    verdict = infer_turn(game.rules, game.state, read_of_state(after(game, turn)))
    assert isinstance(verdict, Doubtful)
    assert verdict.reason == "More than one turn fits what the camera sees: which was it?"


def test_a_perfect_read_is_certain_unless_told_otherwise() -> None:
    game = make_game(ship=15)
    lay(game, 0, (1, 1), "water")
    sure = read_of_state(game.state)
    assert sure.seats[1].cells[1][1] == CellRead("water", 0, 1.0)
    assert sure.display[0][0] == CellRead("water", 0, 1.0)
    unsure = read_of_state(game.state, confidence=0.6)
    assert unsure.seats[1].cells[1][1] == CellRead("water", 0, 0.6)


def test_tiles_in_storage_read_at_any_turn_are_no_change() -> None:
    game = make_game(ship=15)
    for player, tile in ((0, "end-n-palm1"), (1, "end-e-palm2")):
        game.state.players[player].storage = tile
        game.state.stack.remove(tile)
    read = read_of_state(after(game, Turn(1, Pass())))
    read = with_storage(read, 1, CellRead("end-n-palm1", 90, 0.9))
    read = with_storage(read, 2, CellRead("end-e-palm2", 180, 0.9))
    assert infer_turn(game.rules, game.state, read) == Accepted(Turn(1, Pass()))


def test_a_land_tile_taken_to_storage_is_seen_at_any_turn() -> None:
    game = make_game(ship=15)
    meaning = game.state.catalogue.meaning
    turn = next(
        t
        for t in game.rules.legal_turns(game.state)
        if isinstance(t.action, TakeToStorage)
        and meaning(game.state.display[t.action.slot[0]][t.action.slot[1]] or "").land
    )
    read = read_of_state(after(game, turn))
    stored = read.seats[1].storage
    assert stored is not None and stored.tile is not None
    read = with_storage(read, 1, CellRead(stored.tile, 270, 0.9))
    verdict = infer_turn(game.rules, game.state, read)
    assert isinstance(verdict, Accepted | Doubtful)
    chosen = (verdict.turn,) if isinstance(verdict, Accepted) else verdict.candidates
    assert any(t.action == turn.action and t.steps == turn.steps for t in chosen)


def test_a_covered_display_slot_is_never_offered_as_the_tile_taken() -> None:
    # Storage unseen too: any slot whose tile could have been redrawn is a candidate, but
    # not the covered one, whose new tile nobody saw.
    game = make_game(ship=15)
    read = with_cell(read_of_state(after(game, Turn(1, Pass()))), None, (2, 0), UNKNOWN)
    read = with_storage(read, 1, UNKNOWN)
    verdict = infer_turn(game.rules, game.state, read)
    assert isinstance(verdict, Doubtful)
    assert verdict.reason == (
        "Some cells could not be seen (display row 3, column 1): which turn was it?"
    )
    assert [(t.steps, t.action) for t in verdict.candidates] == [
        (1, Pass()),
        (1, TakeToStorage((0, 0))),
        (1, TakeToStorage((1, 0))),
        (1, TakeToStorage((3, 0))),
    ]


def test_the_movers_board_read_a_column_short_takes_it_as_unseen() -> None:
    game = make_game(ship=15)
    turn = Turn(1, TakeToBoard((1, 0), (0, 0)), drawn="middle-boat")
    read = read_of_state(after(game, turn))
    assert infer_turn(game.rules, game.state, _cut(read, 1, 4, 3)) == Accepted(turn)


def test_a_perfect_read_of_the_atoll_side_leaves_its_corners_out() -> None:
    game = make_game(ship=15, side="atoll")
    game.state.players[0].storage = "water-shell2"
    game.state.stack.remove("water-shell2")
    read = read_of_state(game.state)
    layout = game.state.layout
    for r, row in enumerate(read.seats[1].cells):
        for c, cell in enumerate(row):
            assert (cell is None) == (not layout.playable((r, c)))
    assert read.seats[1].storage == CellRead("water-shell2", 0, 1.0)
