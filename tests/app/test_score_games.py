"""`companion score --game G FILE [--json]` for the board games beside Māori."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.cli import main

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
    assert json.loads(out) == {
        "game": "tongiaki",
        "players": [
            {"name": "Ana", "islands": 2, "boats": 2, "royal_islands": 1, "total": 9},
            {"name": "Bo", "islands": 2, "boats": 3, "royal_islands": 0, "total": 5},
        ],
        "winners": ["Ana"],
    }


def test_score_table_has_a_row_per_line_and_the_winner(
    tally: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["score", str(tally), "--game", "tongiaki"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["Ana", "Bo"]
    rows = {line[:14].strip(): line[14:].split() for line in lines[1:]}
    assert rows["total"] == ["9", "5"] and rows["royal islands"] == ["1", "0"]
    assert lines[-1] == "winner: Ana"


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        (None, "no such file"),
        ("[1, 2", "not valid JSON"),
        ('{"players": ["Ana", "Bo"], "islands": [{"value": "5"}]}', "island 1's value"),
        ('{"game": "maori", "islands": []}', "not a 'tongiaki' one"),
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
