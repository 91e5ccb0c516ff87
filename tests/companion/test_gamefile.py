"""Game files (docs/formats.md, "Scoring a finished game"): reading, defaults, errors, round
trip."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from companion.catalogue import default_boards
from companion.errors import DataError
from companion.gamefile import dump_game, load_game_file, parse_game
from companion.tiles import Kind

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "rulebook-37.json"
WATER = {"kind": "water"}


def small_game(**top: Any) -> dict[str, Any]:
    """A valid 1x2 game with two players; keyword arguments replace top-level keys."""
    game: dict[str, Any] = {
        "layout": {"rows": 1, "cols": 2, "printed_boats": 2, "map": [".."]},
        "players": [
            {"name": "Ana", "shells": 1, "storage": None, "board": [[WATER, None]]},
            {"name": "Bo", "shells": 0, "board": [[{"kind": "single", "palms": 2}, WATER]]},
        ],
    }
    game.update(top)
    return game


def problem(data: Any) -> str:
    with pytest.raises(DataError) as info:
        parse_game(data, "g.json")
    assert info.value.source == "g.json"
    return info.value.problem


def test_the_example_loads_with_its_layout_and_players() -> None:
    layout, players = load_game_file(EXAMPLE)
    assert (layout.side, layout.rows, layout.cols, layout.printed_boats) == ("front", 4, 4, 2)
    assert [p.name for p in players] == ["Ana", "Bo"]
    assert [p.shells for p in players] == [3, 5]
    assert players[0].storage is not None and players[0].storage.huts == 1
    assert players[0].board[0][2] is not None and players[0].board[0][2].land == "EW"


def test_layout_defaults_to_the_bundled_side() -> None:
    game = small_game()
    del game["layout"]
    for p in game["players"]:
        p["board"] = [[None] * 4 for _ in range(4)]
    layout, _ = parse_game(game, "g.json")
    assert layout == default_boards()["front"]

    game["board_side"] = "atoll"
    atoll = default_boards()["atoll"]
    for p in game["players"]:
        p["board"] = [[None] * atoll.cols for _ in range(atoll.rows)]
    layout, _ = parse_game(game, "g.json")
    assert layout == atoll


def test_round_trip_through_dump_game() -> None:
    layout, players = load_game_file(EXAMPLE)
    again = parse_game(json.loads(json.dumps(dump_game(layout, players, "front"))), "x")
    assert again == (layout, players)


def test_storage_may_be_left_out_and_a_comment_is_fine() -> None:
    _, players = parse_game(small_game(comment="end of Sunday's game"), "g.json")
    assert players[1].storage is None
    assert players[1].board[0][0] is not None and players[1].board[0][0].kind is Kind.SINGLE


def test_extra_keys_that_change_no_result_are_fine() -> None:
    game = small_game(comment="x", date="2024-05-01", version=1)
    game["players"][0].update(score=37, colour="red", seat=3)
    _, players = parse_game(game, "g.json")
    assert [p.name for p in players] == ["Ana", "Bo"]


def test_tile_symbols_default_to_zero() -> None:
    _, players = parse_game(small_game(), "g.json")
    tile = players[1].board[0][0]
    assert tile is not None and (tile.huts, tile.boats, tile.lei) == (0, 0, "")


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (lambda g: g.update(board_side="back"), 'board_side must be "front" or "atoll"'),
        (lambda g: g.update(layuot={}), "unknown key 'layuot'; did you mean 'layout'?"),
        (lambda g: g.update(players=[]), "players must be a list of 1 to 5 players"),
        (lambda g: g.update(players=[g["players"][0]] * 6), "1 to 5 players"),
        (lambda g: g["layout"].update(map=["..", ".."]), "layout map must be a list of 1 strings"),
        (lambda g: g["players"][1].update(name="Ana"), "player 2 has the same name as player 1"),
        (lambda g: g["players"][0].update(name=""), "player 1 needs a name"),
        (lambda g: g["players"][0].pop("shells"), "player 1 (Ana) needs shells"),
        (lambda g: g["players"][0].update(shells=True), "shells must be a whole number"),
        (lambda g: g.update(side="atoll"), "unknown key 'side'; did you mean 'board_side'?"),
        (
            lambda g: g["players"][0].update(board=[[WATER]]),
            "board row 1 has 1 cell but the layout has 1 row of 2 cells",
        ),
        (
            lambda g: g["players"][0].update(storage={"kind": "volcano"}),
            "player 1 (Ana), storage: a volcano cannot be taken",
        ),
        (
            lambda g: g["players"][1]["board"][0].__setitem__(1, {"kind": "water", "palms": 1}),
            "player 2 (Bo), board row 1, column 2: a water tile cannot carry palms or huts",
        ),
        (
            lambda g: g["players"][0].update(shells=9_223_372_036_854_775_807),
            "player 1 (Ana), shells must be a whole number from 0 to 30",
        ),
        (lambda g: g["players"][0].update(name="W" * 41), "name has 41 characters; at most 40"),
        (
            lambda g: g["players"][1]["board"][0].__setitem__(0, {"kind": "single", "palms": 10}),
            "player 2 (Bo), board row 1, column 1: palms must be a whole number from 0 to 9",
        ),
        (
            lambda g: g["layout"].update(rows=100_000, cols=100_000),
            "layout rows must be a whole number from 1 to 12",
        ),
        (
            lambda g: g["layout"].update(printed_boats=2**62),
            "layout printed_boats must be a whole number from 0 to 20",
        ),
    ],
)
def test_bad_game_files_name_where_the_problem_is(change: Any, expected: str) -> None:
    game = small_game()
    change(game)
    assert expected in problem(game)


def test_a_front_side_with_cells_inside_the_atoll_is_refused() -> None:
    # Palms inside the atoll count double: a front layout marking atoll cells would double them.
    front = small_game(layout={"rows": 1, "cols": 2, "printed_boats": 2, "map": [".a"]})
    front["players"][1]["board"] = [[WATER, {"kind": "single", "palms": 2}]]
    assert problem(front) == (
        "layout map row 1 has 'a', a cell inside the atoll, but the front side has no atoll "
        "(only the atoll side has); use '.' or '#'"
    )
    atoll = copy.deepcopy(front)
    atoll["board_side"] = "atoll"
    layout, _ = parse_game(atoll, "g.json")
    assert layout.in_atoll((0, 1))


@pytest.mark.parametrize(
    ("shells", "held"), [((30, 30), 60), ((16, 15), 31), ((10, 10, 10, 1), 31)]
)
def test_players_holding_more_shells_than_the_box_are_refused(
    shells: tuple[int, ...], held: int
) -> None:
    game = small_game()
    game["players"] = [
        {"name": f"P{i}", "shells": n, "board": [[None, None]]} for i, n in enumerate(shells)
    ]
    assert problem(game) == f"the players hold {held} wooden shells in all, but the box holds 30"


@pytest.mark.parametrize("shells", [(30, 0), (15, 15), (6, 6, 6, 6, 6)])
def test_players_holding_the_box_s_shells_are_scored(shells: tuple[int, ...]) -> None:
    game = small_game()
    game["players"] = [
        {"name": f"P{i}", "shells": n, "board": [[None, None]]} for i, n in enumerate(shells)
    ]
    _, players = parse_game(game, "g.json")
    assert sum(p.shells for p in players) == sum(shells)


def test_a_layout_problem_is_named_as_the_layout() -> None:
    assert problem(small_game(layout={"rows": 1, "cols": 2, "map": [".x"]})) == (
        "layout map row 1 has 'x'; use '.', 'a' or '#'"
    )


def test_not_an_object() -> None:
    assert "JSON object" in problem([1, 2])


def test_duplicate_keys_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "g.json"
    path.write_text('{"players": [], "players": []}', encoding="utf-8")
    with pytest.raises(DataError, match="appears twice"):
        load_game_file(path)
