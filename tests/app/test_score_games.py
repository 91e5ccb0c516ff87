"""`companion score --game G FILE [--json]` for the board games beside Māori."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.cli import main
from tests.web.test_tongiaki_pages import FIVE, file_score

TALLY = {
    "game": "tongiaki",
    "players": ["Ana", "Bo"],
    "islands": [
        {"value": 5, "boats": {"Ana": 1, "Bo": 2}},
        {"value": 4, "royal": "Ana"},
        {"value": 0, "boats": {"Bo": 1}},
    ],
}


@pytest.fixture
def tally(tmp_path: Path) -> Path:
    path = tmp_path / "tongiaki.json"
    path.write_text(json.dumps(TALLY), "utf-8")
    return path


def test_score_json_prints_game_players_with_breakdown_and_winners(
    tally: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["score", "--game", "tongiaki", str(tally), "--json"]) == 0
    out, err = capsys.readouterr()
    assert err == ""
    ana = {"island_points": 5, "royal_island_points": 4, "islands": 2, "boats": 2}
    bo = {"island_points": 5, "royal_island_points": 0, "islands": 2, "boats": 3}
    assert json.loads(out) == {
        "game": "tongiaki",
        "over": True,
        "players": [
            {"name": "Ana", **ana, "royal_islands": 1, "total": 9},
            {"name": "Bo", **bo, "royal_islands": 0, "total": 5},
        ],
        "winners": ["Ana"],
        "rows": {
            "points": ["island_points", "royal_island_points"],
            "tiebreaks": ["islands", "boats"],
        },
    }


def test_score_table_has_a_row_per_line_and_the_winner(
    tally: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["score", str(tally), "--game", "tongiaki"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["Ana", "Bo"]
    labels = [line[:19].strip() for line in lines]
    rows = {line[:19].strip(): line[19:].split() for line in lines[1:]}
    assert rows["island points"] == ["5", "5"] and rows["royal island points"] == ["4", "0"]
    assert rows["total"] == ["9", "5"]
    # Points above the total; the counts that break ties below it, named so.
    assert labels.index("royal island points") < labels.index("total")
    tiebreaks = next(i for i, line in enumerate(lines) if line.startswith("tie-breaks"))
    assert labels.index("total") < tiebreaks < labels.index("islands") < labels.index("boats")
    assert rows["islands"] == ["2", "2"] and rows["boats"] == ["2", "3"]
    assert lines[-1] == "winner: Ana"


def test_a_log_that_stops_mid_game_is_said_to_be_unfinished(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from companion.games.bots import play_game
    from companion.games.tongiaki import Tongiaki

    game = play_game(Tongiaki, ["Ana", "Bo"], 3)
    path = tmp_path / "half.json"
    path.write_text(json.dumps({"events": game.events[: len(game.events) // 2]}), "utf-8")
    assert main(["score", "--game", "tongiaki", str(path), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["over"] is False and data["winners"] == []
    assert main(["score", "--game", "tongiaki", str(path)]) == 0
    out = capsys.readouterr().out
    assert "The game is not over" in out and "nobody has won yet" in out
    assert "winner" not in out


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        (None, "no such file"),
        ("[1, 2", "not valid JSON"),
        ('{"players": ["Ana", "Bo"], "islands": [{"value": "5"}]}', "island 1's value"),
        ('{"game": "maori", "islands": []}', "not a 'tongiaki' one"),
        (
            '{"players": ["Ana", "Bo"], "islands": [{"value": 5, "boat": {"Ana": 1}}]}',
            "no key 'boat'",
        ),
        ('{"players": ["Ana", "Bo"], "islands": [{"value": 5, "boats": {"Ana": 16}}]}', "0 to 15"),
    ],
)
def test_a_bad_file_exits_2_with_one_line(
    tmp_path: Path, content: str | None, problem: str, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "bad.json"
    if content is not None:
        path.write_text(content, "utf-8")
    assert main(["score", "--game", "tongiaki", str(path), "--json"]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.count("\n") == 1 and problem in err and str(path) in err


def test_an_unknown_game_is_a_usage_error(tally: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["score", "--game", "chess", str(tally)]) == 2
    assert "invalid choice: 'chess'" in capsys.readouterr().err


def test_the_phones_count_scores_as_companion_score_prints_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The score the Tongiaki count page shows (the game file's score, tests/web/
    test_tongiaki_pages.py) is what `companion score --game tongiaki FILE --json` prints."""
    path = tmp_path / "count.json"
    path.write_text(json.dumps(FIVE), "utf-8")
    capsys.readouterr()
    assert main(["score", "--game", "tongiaki", str(path), "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed == file_score(tmp_path, FIVE)
    assert printed["winners"] == ["Blue"]
