"""`companion demo --game G --headless`: bots play a whole board game through its interface."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from companion.cli import main


@pytest.mark.parametrize("players", range(2, 7))
def test_a_headless_tongiaki_demo_plays_a_whole_game_for_every_player_count(
    players: int, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["demo", "--game", "tongiaki", "--headless", "--json", "--players", str(players)]
    assert main([*argv, "--seed", str(players)]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["game"] == "tongiaki"
    assert len(result["players"]) == players
    assert all({"name", "total", "islands", "boats"} <= set(p) for p in result["players"])
    best = max(p["total"] for p in result["players"])
    assert result["winners"] and all(
        p["total"] == best for p in result["players"] if p["name"] in result["winners"]
    )


def test_the_same_seed_prints_the_same_game_and_the_saved_file_scores_the_same(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    saved = tmp_path / "game.json"
    argv = ["demo", "--game", "tongiaki", "--headless", "--json", "--seed", "9"]
    assert main([*argv, "--save-game", str(saved)]) == 0
    first = json.loads(capsys.readouterr().out)
    assert main(argv) == 0
    assert json.loads(capsys.readouterr().out) == first
    assert main(["score", "--game", "tongiaki", str(saved), "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == first


def test_the_readable_demo_ends_with_the_winners(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", "--game", "tongiaki", "--headless", "--seed", "3"]) == 0
    assert capsys.readouterr().out.splitlines()[-1].startswith("winner")


@pytest.mark.parametrize(
    ("argv", "problem"),
    [
        (["demo", "--game", "tongiaki"], "add --headless"),
        (["demo", "--players", "6", "--headless"], "Māori is played by 2 to 5 players"),
        (["demo", "--game", "tongiaki", "--headless", "--state-dir", "x"], "--state-dir"),
    ],
)
def test_what_a_demo_cannot_do_exits_2_with_one_line(
    argv: list[str], problem: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert problem in err and err.count("\n") == 1
