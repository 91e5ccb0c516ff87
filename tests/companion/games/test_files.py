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
    assert rows["Ana"] == (5, counts(5, 0, islands=2, boats=3, royal_islands=0))
    assert rows["Bo"] == (6, counts(2, 4, islands=3, boats=3, royal_islands=1))
    assert rows["Cy"] == (5, counts(5, 0, islands=1, boats=3, royal_islands=0))
    assert table.winners == ("Bo",) and table.over
    assert table.points == ("island_points", "royal_island_points")
    assert table.tiebreaks == ("islands", "boats")


def counts(island_points: int, royal_island_points: int, **more: int) -> dict[str, int]:
    return {
        "island_points": island_points,
        "royal_island_points": royal_island_points,
        **more,
    }


def test_a_tie_on_points_and_islands_goes_to_fewer_boats(tmp_path: Path) -> None:
    data = {
        "players": ["Ana", "Bo", "Cy"],
        "islands": [{"value": 3, "boats": {"Ana": 2, "Bo": 1, "Cy": 1}}],
    }
    assert score_game_file("tongiaki", write(tmp_path, data)).winners == ("Bo", "Cy")


def test_an_event_log_file_scores_the_replayed_game(tmp_path: Path) -> None:
    game = play_game(Tongiaki, ["Ana", "Bo"], 2)
    assert score_game_file("tongiaki", write(tmp_path, game_file(game))) == game.score()


def test_a_log_that_stops_mid_game_is_scored_as_unfinished(tmp_path: Path) -> None:
    game = play_game(Tongiaki, ["Ana", "Bo"], 2)
    events = game.events[: len(game.events) // 2]
    table = score_game_file("tongiaki", write(tmp_path, {"events": events}))
    assert not table.over and table.winners == ()
    assert table.to_json()["over"] is False and table.to_json()["winners"] == []


def two(*islands: dict[str, Any], players: tuple[str, ...] = ("Ana", "Bo")) -> dict[str, Any]:
    return {"players": list(players), "islands": list(islands)}


FIVE_ISLANDS = [{"value": v, "boats": {"Ana": 1}} for v in (2, 3, 4, 5)]


@pytest.mark.parametrize(
    ("data", "problem"),
    [
        (
            two({"value": 5, "boats": {"Ana": 16}}),
            "boats of Ana must be a whole number from 0 to 15",
        ),
        (
            two(
                *({"value": 4, "boats": {"Ana": 3}} for _ in range(5)),
                {"value": 0, "boats": {"Ana": 1}},
            ),
            "Ana has 16 boats",
        ),
        (two({"value": 6}), "island 1's value must be 2 to 5 points .or 0 for Tonga., not 6"),
        (two({"value": 1}), "not 1"),
        (two({"value": 0, "royal": "Ana"}), "Tonga .* cannot be royal"),
        (two(*({"value": 5, "royal": "Ana"} for _ in range(3))), "Ana has 3 royal islands"),
        (two(*({"value": 5} for _ in range(4))), "holds 3 islands worth 5, the count names 4"),
        (two({"value": 0}, {"value": 0}), "the box holds 1 Tonga, the count names 2"),
        (two({"value": 5, "boat": {"Ana": 1}}), "island 1 has no key 'boat'"),
        ({**two({"value": 5}), "island": []}, "an island count has no key 'island'"),
        ({**two({"value": 5}), "events": []}, "not both"),
        ({"events": [], "players": ["Ana"]}, "an event log has no key 'players'"),
    ],
)
def test_a_count_that_the_box_cannot_hold_is_refused(
    tmp_path: Path, data: Any, problem: str
) -> None:
    path = write(tmp_path, data)
    with pytest.raises(DataError, match=problem) as raised:
        score_game_file("tongiaki", path)
    assert "\n" not in raised.value.message


def test_an_event_log_needs_the_whole_stack(tmp_path: Path) -> None:
    setup = Tongiaki.new(["Ana", "Bo"], 1).events[0]
    write(tmp_path, {"events": [{**setup, "stack": setup["stack"][:1]}]})
    with pytest.raises(DataError, match="event 1: The stack must hold every tile not on the map"):
        score_game_file("tongiaki", tmp_path / "game.json")
    assert not score_game_file("tongiaki", write(tmp_path, {"events": [setup]})).over


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
