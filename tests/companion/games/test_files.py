"""Board-game files: read one, score it (docs/formats.md, "Tongiaki game file")."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from companion.errors import DataError
from companion.games.bots import play_game
from companion.games.files import game_file, score_game_file
from companion.games.tongiaki import Tongiaki

TALLY = {
    "game": "tongiaki",
    "players": ["Ana", "Bo", "Cy"],
    "islands": [
        {"value": 0, "boats": {"Ana": 2, "Bo": 1}},
        {"value": 5, "boats": {"Ana": 1, "Cy": 3}},
        {"value": 4, "royal": "Bo"},
        {"value": 2, "boats": {"Bo": 1}},
    ],
}


def write(tmp_path: Path, data: Any) -> Path:
    path = tmp_path / "game.json"
    path.write_text(json.dumps(data) if not isinstance(data, str) else data, "utf-8")
    return path


def test_the_island_tally_scores_points_islands_and_boats(tmp_path: Path) -> None:
    table = score_game_file("tongiaki", write(tmp_path, TALLY))
    rows = {p.name: (p.total, p.breakdown) for p in table.players}
    assert rows["Ana"] == (5, {"islands": 2, "boats": 3, "royal_islands": 0})
    assert rows["Bo"] == (6, {"islands": 3, "boats": 3, "royal_islands": 1})
    assert rows["Cy"] == (5, {"islands": 1, "boats": 3, "royal_islands": 0})
    assert table.winners == ("Bo",)


def test_a_tie_on_points_and_islands_goes_to_fewer_boats(tmp_path: Path) -> None:
    data = {
        "players": ["Ana", "Bo", "Cy"],
        "islands": [{"value": 3, "boats": {"Ana": 2, "Bo": 1, "Cy": 1}}],
    }
    assert score_game_file("tongiaki", write(tmp_path, data)).winners == ("Bo", "Cy")


def test_an_event_log_file_scores_the_replayed_game(tmp_path: Path) -> None:
    game = play_game(Tongiaki, ["Ana", "Bo"], 2)
    assert score_game_file("tongiaki", write(tmp_path, game_file(game))) == game.score()


@pytest.mark.parametrize(
    ("data", "problem"),
    [
        ("{not json", "not valid JSON"),
        ([], "a game file is a JSON object"),
        ({"game": "giants", "events": []}, "this is a 'giants' game file"),
        ({"players": ["Ana", "Bo"]}, "needs `events` or `islands`"),
        ({"players": ["Ana"], "islands": []}, "2 to 6 players"),
        ({"players": ["Ana", "Bo"], "islands": [{"value": -1}]}, "island 1's value"),
        ({"players": ["Ana", "Bo"], "islands": [{"value": 2, "boats": {"Zed": 1}}]}, "'Zed'"),
        (
            {
                "players": ["Ana", "Bo"],
                "islands": [{"value": 2, "royal": "Ana", "boats": {"Bo": 1}}],
            },
            "royal",
        ),
        ({"events": [{"type": "setup", "players": ["A", "B"], "stack": ["w1"]}]}, "event 1"),
    ],
)
def test_a_bad_file_is_one_line_naming_it(tmp_path: Path, data: Any, problem: str) -> None:
    path = write(tmp_path, data)
    with pytest.raises(DataError, match=problem) as raised:
        score_game_file("tongiaki", path)
    assert raised.value.message.startswith(str(path)) and "\n" not in raised.value.message


def test_a_missing_file_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="no such file"):
        score_game_file("tongiaki", tmp_path / "nothing.json")
