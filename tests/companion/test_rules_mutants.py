"""The rules at their edges: the last shell can be spent, one more cannot; every refusal by its
sentence; the stack's order; what legal_turns lists."""

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
from companion.catalogue import default_catalogue
from companion.errors import GameOver, IllegalMove, MalformedMove
from companion.rules import describe_line, ship_line
from companion.state import Placed
from tests.companion.conftest import lay, make_game


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


# ------------------------------------------------------------ the move log's line


def _line(game, turn) -> str:  # type: ignore[no-untyped-def]
    return str(game.push(turn).describe())


def test_the_log_line_of_a_pass_names_the_steps_and_what_they_cost() -> None:
    assert _line(make_game(), Turn(3, Pass())) == (
        "Red moved the ship 3 steps (1 shell) and did nothing else"
    )
    assert _line(make_game(), Turn(4, Pass())) == (
        "Red moved the ship 4 steps (2 shells) and did nothing else"
    )
    assert _line(make_game(), Turn(1, Pass())) == "Red moved the ship 1 step and did nothing else"


def test_the_log_line_of_a_tile_laid_names_the_slot_the_cost_the_cell_and_the_turn() -> None:
    game = make_game(ship=15)
    assert _line(game, Turn(1, TakeToBoard((3, 0), (0, 0), 90))) == (
        "Red moved the ship 1 step, took water from the display (row 4, column 1) for 3 shells "
        "and laid it on row 1, column 1, turned 90°"
    )
    game = make_game(ship=15)
    assert _line(game, Turn(1, TakeToBoard((1, 0), (0, 0)))) == (
        "Red moved the ship 1 step, took water from the display (row 2, column 1) for 1 shell "
        "and laid it on row 1, column 1, turned 0°"
    )
    game = make_game(ship=15)
    assert _line(game, Turn(1, TakeToBoard((0, 0), (3, 2), 270))) == (
        "Red moved the ship 1 step, took water from the display (row 1, column 1) "
        "and laid it on row 4, column 3, turned 270°"
    )


def test_the_log_line_of_a_shell_tile_names_the_shells_gained() -> None:
    game = make_game(ship=15)
    assert _line(game, Turn(2, TakeToBoard((2, 1), (0, 0)))) == (
        "Red moved the ship 2 steps, took water-shell from the display (row 3, column 2) for "
        "2 shells, laid it on row 1, column 1, turned 0° and gained 1 shell"
    )


def test_the_log_lines_of_storage_and_discard() -> None:
    game = make_game(ship=15)
    assert _line(game, Turn(1, TakeToStorage((2, 0)))) == (
        "Red moved the ship 1 step and put water from the display (row 3, column 1) into "
        "storage for 2 shells"
    )
    game = make_game(ship=15)
    assert _line(game, Turn(1, TakeToStorage((0, 0)))) == (
        "Red moved the ship 1 step and put water from the display (row 1, column 1) into storage"
    )
    game = make_game(ship=15)
    game.state.players[0].storage = "water-boat2"
    game.state.stack.remove("water-boat2")
    assert _line(game, Turn(1, StorageToBoard((1, 1), 180))) == (
        "Red moved the ship 1 step and laid the stored water-boat2 on row 2, column 2, turned 180°"
    )
    game = make_game(ship=15)
    lay(game, 0, (2, 2), "water")
    assert _line(game, Turn(1, Discard((2, 2)))) == (
        "Red moved the ship 1 step and removed water from row 3, column 3"
    )


# ------------------------------------------------------------ malformed and late turns


def _refused_with(game, turn, kind: type[Exception]) -> str:  # type: ignore[no-untyped-def]
    before = game.state.to_json()
    with pytest.raises(kind) as err:
        game.push(turn)
    assert game.state.to_json() == before
    return str(err.value.message)  # type: ignore[attr-defined]


def test_malformed_and_late_turns_are_refused_with_their_sentence() -> None:
    game = make_game()
    assert _refused_with(game, "pass", MalformedMove) == "A turn must be a Turn value."
    assert _refused_with(game, Turn(0, Pass()), MalformedMove) == (
        "The explorer ship must move at least 1 step."
    )
    assert _refused_with(game, Turn(1, "take"), MalformedMove) == "Unknown action."  # type: ignore[arg-type]
    game.state.over = True
    assert _refused_with(game, Turn(1, Pass()), GameOver) == (
        "The game is over: no more turns can be played."
    )


# ------------------------------------------------------------ enumerating turns


TURNS = (0, 90, 180, 270)


def _every_turn_the_rules_allow(game) -> set[Turn]:  # type: ignore[no-untyped-def]
    state = game.state
    player = state.mover
    cells = [(r, c) for r in range(4) for c in range(4)]
    actions: list[object] = [Pass()]
    actions += [Discard(cell) for cell in cells]
    actions += [StorageToBoard(cell, rot) for cell in cells for rot in TURNS]
    actions += [TakeToStorage(slot) for slot in cells]
    actions += [TakeToBoard(slot, cell, rot) for slot in cells for cell in cells for rot in TURNS]
    allowed = set()
    for steps in range(1, min(2 + player.shells, 16) + 1):
        for action in actions:
            try:
                game.rules.check(state, Turn(steps, action))  # type: ignore[arg-type]
            except IllegalMove:
                continue
            allowed.add(Turn(steps, action))  # type: ignore[arg-type]
    return allowed


@pytest.mark.parametrize("stored", [None, "end-n-palm1", "water-boat2"])
def test_legal_turns_lists_every_turn_the_rules_allow_and_no_other(stored: str | None) -> None:
    game = make_game(ship=15)
    game.state.players[0].shells = 2
    lay(game, 0, (1, 1), "water")
    lay(game, 0, (2, 3), "single-palm1")
    if stored is not None:
        game.state.players[0].storage = stored
        game.state.stack.remove(stored)
    listed = [Turn(t.steps, t.action) for t in game.rules.legal_turns(game.state)]
    assert len(listed) == len(set(listed))
    allowed = _every_turn_the_rules_allow(game)
    assert set(listed) == allowed
    kinds = {type(t.action).__name__ for t in allowed}
    assert kinds == {"Pass", "Discard", "TakeToBoard", "TakeToStorage", "StorageToBoard"} - (
        {"TakeToStorage"} if stored else {"StorageToBoard"}
    )


@pytest.mark.parametrize(
    ("neighbour", "at_cell", "cell", "where", "edge"),
    [
        ("end-n-palm1", (1, 0), (0, 0), "row 2, column 1", "north"),
        ("end-s-palm1", (0, 0), (1, 0), "row 1, column 1", "south"),
        ("end-w-palm1", (0, 1), (0, 0), "row 1, column 2", "west"),
        ("end-e-palm1", (2, 0), (2, 1), "row 3, column 1", "east"),
    ],
)
def test_strict_matching_names_the_neighbours_island_edge_against_water(
    neighbour: str, at_cell: tuple[int, int], cell: tuple[int, int], where: str, edge: str
) -> None:
    game = make_game(ship=3, matching=Matching.STRICT)  # 1 step: row 1 from the east
    lay(game, 0, at_cell, neighbour)
    water = Turn(1, TakeToBoard((0, 0), cell))
    assert refusal(game, water) == (
        f"The tile does not fit the tile in {where}: The neighbour's island edge on the {edge} "
        "meets water (strict matching)."
    )


@pytest.mark.parametrize("position", range(16))
def test_each_ship_position_is_named_by_the_line_it_looks_down(position: int) -> None:
    words = describe_line(position).split()
    assert words[0] in ("row", "column") and words[2:4] == ["from", "the"]
    number, side = int(words[1]) - 1, words[4]
    line = ship_line(position)
    assert len(line) == 4
    along = 0 if words[0] == "row" else 1
    assert all(cell[along] == number for cell in line)
    first = {"north": (0, 0), "south": (0, 3), "west": (1, 0), "east": (1, 3)}[side]
    assert line[0][first[0]] == first[1]
    assert side == ("north", "east", "south", "west")[position // 4]


def test_the_reach_map_names_each_takeable_tile_and_its_price() -> None:
    game = make_game(ship=15)  # 2 steps: position 1, looking down column 2
    reach = {r.steps: r for r in game.rules.reach_map(game.state)}[2]
    assert [(t.slot, t.tile, t.skip_cost, t.cost) for t in reach.takes] == [
        ((0, 1), "water-boat", 0, 0),
        ((1, 1), "water-boat", 1, 1),
        ((2, 1), "water-shell", 2, 2),
        ((3, 1), "water-shell", 3, 3),
    ]


def test_the_log_line_names_the_steps_paid_for_the_players_own_ship() -> None:
    game = make_game(variant=Variant.ADVANCED, ship=15)
    lay(game, 0, (0, 0), "water")
    lay(game, 0, (1, 1), "water-boat")
    game.state.players[0].ship = (0, 0)
    turn = Turn(1, TakeToBoard((0, 0), (2, 2)), ship_path=((1, 1),), ship_to=(0, 0))
    assert _line(game, turn) == (
        "Red moved the ship 1 step, took water from the display (row 1, column 1), "
        "laid it on row 3, column 3, turned 0°, moved their own ship 1 step for shells and "
        "put their own ship on row 1, column 1"
    )


# ------------------------------------------------------------ what a turn leaves


def test_a_laid_tile_keeps_its_turn_and_the_record_its_ship_move() -> None:
    game = make_game(ship=15)
    record = game.push(Turn(2, TakeToBoard((0, 1), (1, 2), 90)))
    assert game.state.players[0].board[1][2] == Placed("water-boat", 90)
    assert (record.player, record.ship_from, record.ship_at) == (0, 15, 1)
    assert game.state.turn_number == 1
    game.state.players[1].storage = "water-boat2"
    game.state.stack.remove("water-boat2")
    game.push(Turn(1, StorageToBoard((3, 3), 270)))
    assert game.state.players[1].board[3][3] == Placed("water-boat2", 270)
    assert game.state.turn_number == 2


def test_passing_with_the_stack_out_ends_nothing_while_a_tile_can_be_taken() -> None:
    game = make_game(ship=15)
    game.state.stack.clear()
    for _ in game.state.players:
        game.push(Turn(1, Pass()))
    assert not game.over  # only a full board (or no tile left to take) starts the end
    game.push(Turn(1, TakeToBoard((0, 2), (0, 0))))
    assert not game.over


def test_play_passes_to_the_left_round_the_table() -> None:
    game = make_game(names=("Red", "Blue", "Green"), start_player=2, ship=15)
    movers = []
    for _ in range(4):
        movers.append(game.state.mover.name)
        game.push(Turn(1, Pass()))
    assert movers == ["Red", "Blue", "Green", "Red"]


# ------------------------------------------------------------ the sentence of each refusal


@pytest.mark.parametrize(
    ("slot", "where"),
    [((4, 0), "row 5, column 1"), ((0, 4), "row 1, column 5"), ((-1, 0), "row 0, column 1")],
)
def test_a_slot_off_the_display_is_named(slot: tuple[int, int], where: str) -> None:
    game = make_game(ship=15)
    for action in (TakeToBoard(slot, (0, 0)), TakeToStorage(slot)):
        assert _refused_with(game, Turn(1, action), MalformedMove) == (
            f"The display has no {where}."
        )


def test_an_empty_slot_is_named() -> None:
    display = [row[:] for row in make_game().state.display]
    display[1][0] = None
    game = make_game(display, ship=15)  # 1 step: column 1 from the north
    assert refusal(game, Turn(1, TakeToStorage((1, 0)))) == (
        "The display's row 2, column 1 is empty."
    )


@pytest.mark.parametrize(
    ("cell", "where"),
    [
        ((4, 0), "row 5, column 1"),
        ((0, 4), "row 1, column 5"),
        ((-1, 0), "row 0, column 1"),
        ((0, -1), "row 1, column 0"),
    ],
)
def test_a_cell_off_the_board_is_named(cell: tuple[int, int], where: str) -> None:
    game = make_game(ship=15)
    game.state.players[0].storage = "water-boat2"
    game.state.stack.remove("water-boat2")
    expected = f"The board has 4 rows and 4 columns; there is no {where}."
    for action in (TakeToBoard((0, 0), cell), StorageToBoard(cell), Discard(cell)):
        assert _refused_with(game, Turn(1, action), MalformedMove) == expected


@pytest.mark.parametrize("rotation", [45, -90, 360])
def test_a_tile_turned_between_the_sides_is_refused(rotation: int) -> None:
    game = make_game(ship=15)
    assert _refused_with(game, Turn(1, TakeToBoard((0, 0), (0, 0), rotation)), MalformedMove) == (
        "A tile lies turned 0, 90, 180 or 270 degrees."
    )


def test_a_full_cell_and_storage_are_named_by_their_owner() -> None:
    game = make_game(ship=15)
    lay(game, 0, (2, 1), "water")
    assert refusal(game, Turn(1, TakeToBoard((0, 0), (2, 1)))) == (
        "Row 3, column 2 of Red's board already holds a tile."
    )
    assert refusal(game, Turn(1, StorageToBoard((0, 0)))) == "Red's storage is empty."
    game.state.players[0].storage = "water-boat2"
    game.state.stack.remove("water-boat2")
    assert refusal(game, Turn(1, TakeToStorage((0, 0)))) == "Red's storage already holds a tile."


def test_a_drawn_tile_is_refused_when_nothing_can_be_drawn() -> None:
    game = make_game(ship=15)
    top = game.state.stack[-1]
    lay(game, 0, (0, 0), "water")
    assert refusal(game, Turn(1, Discard((0, 0)), drawn=top)) == (
        "Nothing was taken from the display, so nothing is drawn."
    )
    game.state.stack.clear()
    assert refusal(game, Turn(1, TakeToStorage((0, 0)), drawn=top)) == (
        "The stack is empty: the display slot stays empty."
    )
    record = game.push(Turn(1, TakeToStorage((0, 0))))
    assert record.turn.drawn is None
    assert game.state.display[0][0] is None


def test_the_explorer_ship_moves_at_most_fifteen_steps() -> None:
    game = make_game(ship=15)
    game.state.players[0].shells = 20
    assert refusal(game, Turn(16, Pass())) == (
        "The explorer ship moves less than a full circle: at most 15 steps."
    )
    record = game.push(Turn(15, Pass()))
    assert (record.ship_at, record.move_cost) == (14, 13)


def test_the_base_game_refuses_a_player_ship_path_with_its_sentence() -> None:
    game = make_game(ship=15)
    lay(game, 0, (0, 0), "water")
    expected = "Player ships are only used in the Fortgeschrittenen- and Profispiel."
    assert refusal(game, Turn(1, Pass(), ship_to=(0, 0))) == expected
    assert refusal(game, Turn(1, TakeToBoard((0, 0), (0, 1)), ship_path=((0, 0),))) == expected


# ------------------------------------------------------------ the player ship's refusals


def _advanced(variant: Variant = Variant.ADVANCED):  # type: ignore[no-untyped-def]
    """Red's ship on row 1, column 1, tiles on the first row and row 2, column 2."""
    game = make_game(variant=variant, ship=15)
    for cell in ((0, 0), (0, 1), (0, 2), (1, 1)):
        lay(game, 0, cell, "end-bare")
    game.state.players[0].ship = (0, 0)
    return game


def test_the_player_ship_walks_only_from_where_it_stands_over_tiles_next_to_each_other() -> None:
    game = _advanced()
    game.state.players[0].ship = None
    assert refusal(game, Turn(1, TakeToBoard((0, 0), (2, 2)), ship_path=((0, 1),))) == (
        "Red's ship is not on the board yet."
    )
    game.state.players[0].ship = (0, 0)
    assert refusal(game, Turn(1, TakeToBoard((0, 0), (1, 2)), ship_path=((0, 2),))) == (
        "Red's ship moves one field at a time (diagonals included); row 1, column 3 is not "
        "next to row 1, column 1."
    )
    assert refusal(game, Turn(1, TakeToBoard((0, 0), (2, 1)), ship_path=((1, 0),))) == (
        "Red's ship can only stand on a tile; row 2, column 1 is empty water."
    )
    turn = Turn(1, TakeToBoard((0, 0), (2, 3)), ship_path=((0, -1),))
    assert _refused_with(game, turn, MalformedMove) == (
        "The board has 4 rows and 4 columns; there is no row 1, column 0."
    )
    assert refusal(game, Turn(1, TakeToStorage((0, 0)), ship_path=((0, 1),))) == (
        "The player ship may only be moved for shells before a tile is laid on the board."
    )


def test_a_paid_walk_ends_next_to_the_tile_laid() -> None:
    game = _advanced()
    assert refusal(game, Turn(1, TakeToBoard((0, 0), (3, 3)), ship_path=((1, 1),))) == (
        "The tile must lie next to Red's ship on row 2, column 2 "
        "(horizontally, vertically or diagonally)."
    )
    record = game.push(
        Turn(1, TakeToBoard((0, 0), (2, 2)), ship_path=((0, 1), (1, 1)), ship_to=(1, 1))
    )
    assert (record.path_cost, record.paid) == (2, 2)
    assert game.state.players[0].shells == 3
    assert game.state.players[0].ship == (1, 1)


def test_the_cost_sentence_names_the_steps_of_the_players_own_ship() -> None:
    game = _advanced()
    game.state.players[0].shells = 1
    assert (
        refusal(game, Turn(1, TakeToBoard((0, 0), (2, 2)), ship_path=((0, 1), (1, 1))))
        == "2 steps of Red's own ship costs 2 shells; Red has 1."
    )
    assert refusal(game, Turn(1, TakeToBoard((1, 0), (1, 2)), ship_path=((0, 1),))) == (
        "Skipping 1 tile and 1 step of Red's own ship costs 2 shells; Red has 1."
    )
    assert refusal(game, Turn(3, TakeToBoard((0, 2), (2, 1)), ship_path=((1, 1),))) == (
        "Moving 3 steps with 2 boats and 1 step of Red's own ship costs 2 shells; Red has 1."
    )
    assert refusal(game, Turn(3, TakeToBoard((1, 2), (2, 1)), ship_path=((1, 1),))) == (
        "Moving 3 steps with 2 boats, skipping 1 tile and 1 step of Red's own ship costs "
        "3 shells; Red has 1."
    )


def test_the_player_ship_may_be_put_on_the_tile_just_laid_or_any_tile_but_not_water() -> None:
    game = _advanced()
    game.push(Turn(1, TakeToBoard((0, 0), (1, 0)), ship_to=(1, 0)))
    assert game.state.players[0].ship == (1, 0)
    game = _advanced()
    game.push(Turn(1, TakeToBoard((0, 0), (1, 0)), ship_to=(0, 2)))
    assert game.state.players[0].ship == (0, 2)
    game = _advanced()
    assert refusal(game, Turn(1, TakeToBoard((0, 0), (1, 0)), ship_to=(3, 3))) == (
        "Red's ship can only stand on a tile; row 4, column 4 is empty water."
    )
    assert _refused_with(game, Turn(1, Pass(), ship_to=(4, 0)), MalformedMove) == (
        "The board has 4 rows and 4 columns; there is no row 5, column 1."
    )
    # the tile removed this turn is water by the turn's end
    assert refusal(game, Turn(1, Discard((0, 2)), ship_to=(0, 2))) == (
        "Red's ship can only stand on a tile; row 1, column 3 is empty water."
    )
    game.push(Turn(1, Discard((0, 2)), ship_to=(1, 1)))
    assert game.state.players[0].ship == (1, 1)


def test_the_first_tile_laid_carries_a_ship_not_yet_on_the_board() -> None:
    for variant in (Variant.ADVANCED, Variant.PRO):
        game = _advanced(variant)
        game.state.players[0].ship = None
        game.push(Turn(1, TakeToBoard((0, 0), (3, 3))))
        assert game.state.players[0].ship == (3, 3)
        game.push(Turn(1, Pass()))
        game.push(Turn(1, Pass()))
        assert game.state.players[0].ship == (3, 3)


@pytest.mark.parametrize(
    ("matching", "variant"),
    [(Matching.STRICT, Variant.BASE), (Matching.FREE, Variant.ADVANCED)],
    ids=["strict matching", "player ship"],
)
def test_legal_turns_passes_over_refused_candidates_to_the_allowed_ones(
    matching: Matching, variant: Variant
) -> None:
    game = make_game(ship=15, matching=matching, variant=variant)
    game.state.players[0].shells = 2
    lay(game, 0, (1, 1), "water")
    lay(game, 0, (2, 3), "single-palm1")
    game.state.players[0].ship = (1, 1) if variant is Variant.ADVANCED else None
    listed = {Turn(t.steps, t.action) for t in game.rules.legal_turns(game.state)}
    allowed = _every_turn_the_rules_allow(game)
    assert listed == allowed
    assert any(isinstance(t.action, TakeToBoard) for t in allowed)


def test_strict_matching_takes_island_to_island_and_names_the_tiles_own_edge() -> None:
    game = make_game(ship=2, matching=Matching.STRICT)  # 1 step: column 4 from the north
    lay(game, 0, (1, 0), "water-boat")
    assert refusal(game, Turn(1, TakeToBoard((0, 3), (0, 0)))) == (
        "The tile does not fit the tile in row 2, column 1: Its island edge on the south "
        "meets water (strict matching)."
    )
    game.state.players[0].board[1][0] = Placed("end-n-palm1")
    game.push(Turn(1, TakeToBoard((0, 3), (0, 0))))  # end-s-palm1 onto the island's end
    assert game.state.players[0].board[0][0] == Placed("end-s-palm1")
    game = make_game(ship=15, matching=Matching.STRICT)  # 1 step: column 1 from the north
    lay(game, 0, (1, 1), "water-boat")
    game.push(Turn(1, TakeToBoard((0, 0), (1, 0))))  # water beside water
    assert game.state.players[0].board[1][0] == Placed("water")


# ------------------------------------------------------------ the stack


def test_the_tile_drawn_is_the_top_of_the_stack_and_the_next_lies_below_it() -> None:
    game = make_game(ship=15)
    game.state.stack = ["water-boat", "end-bare", "water-boat"]
    game.push(Turn(1, TakeToStorage((0, 0))))
    assert game.state.display[0][0] == "water-boat"
    assert game.state.stack == ["water-boat", "end-bare"]
    game.push(Turn(1, TakeToStorage((1, 1))))  # Blue, 1 step: column 2 from the north
    assert game.state.display[1][1] == "end-bare"


def test_a_camera_table_draws_the_tile_it_saw_and_leaves_the_rest_of_the_stack() -> None:
    game = make_game(ship=15)
    game.state.stack = ["end-bare", "water-boat", "middle-boat"]
    game.push(Turn(1, TakeToStorage((0, 0)), drawn="end-bare"))
    assert game.state.display[0][0] == "end-bare"
    assert game.state.stack == ["water-boat", "middle-boat"]


def test_a_turn_that_lays_no_tile_gains_no_shells() -> None:
    # the preview's "gained" (docs/web.md) is a number of shells for every turn
    for turn in (Turn(1, Pass()), Turn(1, TakeToStorage((0, 0)))):
        record = make_game(ship=15).push(turn)
        assert record.gained == 0 and type(record.gained) is int


def test_the_atolls_corners_are_no_playing_field() -> None:
    game = make_game(ship=15, side="atoll")
    assert refusal(game, Turn(1, TakeToBoard((0, 0), (4, 0)))) == (
        "Row 5, column 1 of the board is not a playing field."
    )
    game.push(Turn(1, TakeToBoard((0, 0), (4, 1))))


def test_bots_and_the_tracker_are_offered_palms_upright_and_water_at_every_turn() -> None:
    rules = make_game().rules
    meaning = default_catalogue().meaning
    assert rules.rotations_for(meaning("single-palm1")) == (0,)
    assert rules.rotations_for(meaning("water-boat")) == (0, 90, 180, 270)


def test_a_board_tile_the_box_lacks_is_named_when_its_boats_are_counted() -> None:
    game = make_game()
    game.state.players[0].board[2][2] = Placed("sea-serpent")
    with pytest.raises(KeyError, match="no tile type 'sea-serpent' in"):
        game.rules.boats(game.state, game.state.players[0])
