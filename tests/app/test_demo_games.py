"""`companion demo --game G --headless`: bots play a whole board game through the table's
BoardSession, kept in its journal with --state-dir."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app import board_games
from app.cli import main
from companion.errors import CompanionError
from companion.games.session import BoardSession, board_journal


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


@pytest.mark.parametrize("players", range(3, 6))
def test_a_headless_giants_demo_plays_a_whole_game_for_every_player_count(
    players: int, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["demo", "--game", "giants", "--headless", "--json", "--players", str(players)]
    assert main([*argv, "--seed", str(players)]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["game"] == "giants" and len(result["players"]) == players
    best = max(p["total"] for p in result["players"])
    assert result["winners"] and all(
        p["total"] == best for p in result["players"] if p["name"] in result["winners"]
    )


def test_a_demo_with_a_state_dir_keeps_every_move_in_the_journal(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["demo", "--game", "giants", "--headless", "--json", "--players", "3", "--seed", "4"]
    assert main([*argv, "--state-dir", str(tmp_path)]) == 0
    printed = json.loads(capsys.readouterr().out)
    board = BoardSession.resume(board_journal(tmp_path))
    assert board.damage is None and board.game is not None and board.game.over
    assert board.game.score().to_json() == printed
    assert main(argv) == 0  # the same game without a journal
    assert json.loads(capsys.readouterr().out) == printed


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
        (["demo", "--players", "6", "--headless"], "Māori is played by 2 to 5 players"),
        (
            ["demo", "--game", "giants", "--players", "2", "--headless"],
            "Giants is played by 3 to 5 players",
        ),
        (["demo", "--game", "giants", "--players", "6"], "Giants is played by 3 to 5 players"),
    ],
)
def test_what_a_demo_cannot_do_exits_2_with_one_line(
    argv: list[str], problem: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert problem in err and err.count("\n") == 1


def test_a_demo_stopped_mid_game_goes_on_where_it_stopped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    argv = ["demo", "--game", "tongiaki", "--headless", "--json", "--players", "3", "--seed", "6"]
    assert main(argv) == 0
    unbroken = json.loads(capsys.readouterr().out)
    monkeypatch.setattr(board_games, "MAX_MOVES", 25)
    with pytest.raises(CompanionError, match="did not finish within 25 moves"):
        board_games.play_through(BoardSession(board_journal(tmp_path)), "tongiaki", 3, 6)
    monkeypatch.undo()
    assert main([*argv, "--state-dir", str(tmp_path)]) == 0
    assert json.loads(capsys.readouterr().out) == unbroken
