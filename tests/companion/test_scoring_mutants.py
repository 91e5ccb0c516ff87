"""Final scoring as `companion score --json` prints it, and boards it refuses to score."""

from __future__ import annotations

import json

import pytest

from companion.scoring import PlayerBoard, islands, score_game
from tests.companion.test_scoring import board, end, layout, mid


def test_the_printed_score_is_the_formats_md_object_in_whole_points() -> None:
    lay = layout("...")
    b = board([end("E", palms=1), mid("EW", palms=1), None])
    final = score_game(lay, [PlayerBoard("Ana", 2, b), PlayerBoard("Ben", 1, board([None] * 3))])
    printed = json.loads(json.dumps(final.to_json()))
    assert set(printed) == {"players", "winners"}
    assert [p["name"] for p in printed["players"]] == ["Ana", "Ben"]
    assert printed["winners"] == ["Ana"]
    ana = printed["players"][0]
    assert ana["empty"] == -3 and isinstance(ana["empty"], int)
    assert all(isinstance(v, int) for k, v in ana.items() if k not in ("name", "removed"))
    assert '"empty": -3,' in json.dumps(final.to_json())


@pytest.mark.parametrize(
    "rows",
    [
        [[None, None]],  # one row short
        [[None, None], [None, None], [None, None]],  # one row too many
        [[None, None], [None]],  # a row one cell short
    ],
)
def test_a_board_of_the_wrong_size_is_refused_with_its_size(rows: list[list[None]]) -> None:
    lay = layout("..", "..")
    with pytest.raises(ValueError, match=r"^a board must have 2 rows of 2 cells$"):
        score_game(lay, [PlayerBoard("Ana", 0, board(*rows))])
    with pytest.raises(ValueError, match=r"^a board must have 2 rows of 2 cells$"):
        islands(lay, board(*rows))


def test_a_tile_on_a_cell_that_is_not_playable_is_refused() -> None:
    lay = layout(".#")
    with pytest.raises(ValueError, match=r"^cell \(0, 1\) is not playable but holds a tile$"):
        score_game(lay, [PlayerBoard("Ana", 0, board([None, end("W", palms=1)]))])


def test_a_game_without_players_is_refused() -> None:
    with pytest.raises(ValueError, match=r"^there must be at least one player to score$"):
        score_game(layout(".."), [])
