"""`companion score --game giants FILE [--json]`: an event log, finished or not; a final count."""

from __future__ import annotations

import copy
import json
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from app.cli import main
from companion.games.giants import GiantsGame
from companion.games.giants.bots import choose_action, play_random_game
from companion.games.giants.final_count import score_final_count
from tests.web.test_giants_count import five_player_count

NAMES = ["Ana", "Bo", "Cy"]

#: The rulebook's scoring example ("Es – Punteggio") as a final count.
COUNT = {
    "game": "giants",
    "players": ["Blue", "Red", "Yellow"],
    "track": {"Blue": 4, "Red": 9, "Yellow": 2},
    "rongo_halves": {"Blue": 3, "Red": 0, "Yellow": 4},
    "moai": [
        {"owner": "Blue", "size": 3, "value": 9},
        {"owner": "Red", "size": 1, "value": 8},
        {"owner": "Yellow", "size": 2, "value": 8, "headdress_value": 6, "headdress": True},
    ],
}


def _score(path: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[int, str, str]:
    code = main(["score", "--game", "giants", str(path), *extra])
    out, err = capsys.readouterr()
    return code, out, err


def _write(tmp_path: Path, data: Any) -> Path:
    path = tmp_path / "giants.json"
    path.write_text(json.dumps(data), "utf-8")
    return path


def _mid_game() -> GiantsGame:
    """A game stopped in its third turn."""
    rng = random.Random(5)
    game = GiantsGame.new(NAMES)
    while game.state.round < 3:
        game.push(choose_action(game, rng))
    assert not game.over
    return game


def test_a_log_that_stops_mid_game_is_unfinished(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "giants.json"
    path.write_text(_mid_game().dumps(), "utf-8")
    code, out, err = _score(path, capsys, "--json")
    assert (code, err) == (0, "")
    table = json.loads(out)
    assert table["over"] is False and table["winners"] == []
    assert [p["name"] for p in table["players"]] == NAMES
    code, out, err = _score(path, capsys)
    assert code == 0 and "not over" in out and "winner" not in out.replace("won", "")


def test_a_finished_log_names_its_winners(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    game = play_random_game(NAMES, 1)
    path = tmp_path / "giants.json"
    path.write_text(game.dumps(), "utf-8")
    code, out, _ = _score(path, capsys, "--json")
    table = json.loads(out)
    assert code == 0 and table == game.score().to_json()
    assert table["over"] is True and table["winners"]
    assert table["rows"]["points"] == ["transport", "moai", "headdresses", "rongo"]
    for p in table["players"]:
        assert p["total"] == sum(p[k] for k in table["rows"]["points"])


def test_a_final_count_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _write(tmp_path, COUNT)
    code, out, err = _score(path, capsys, "--json")
    assert (code, err) == (0, "")
    table = json.loads(out)
    assert {p["name"]: p["total"] for p in table["players"]} == {
        "Blue": 34,
        "Red": 17,
        "Yellow": 30,
    }
    assert table["over"] is True and table["winners"] == ["Blue"]
    code, out, _ = _score(path, capsys)
    assert code == 0 and "winner: Blue" in out


def _log_with(change: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(_mid_game().dumps())
    change(data)
    return data


def _set(path: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def change(data: dict[str, Any]) -> None:
        *keys, last = path.split(".")
        here: Any = data
        for key in keys:
            here = here[int(key)] if key.isdigit() else here[key]
        here[int(last) if last.isdigit() else last] = value

    return change


def _first_move(data: dict[str, Any]) -> dict[str, Any]:
    return next(
        e["action"] for e in data["events"][1:] if e.get("action", {}).get("type") == "move"
    )


def _misspell_move(data: dict[str, Any]) -> None:
    _first_move(data)["erekt"] = "a01"


@pytest.mark.parametrize(
    ("change", "words"),
    [
        (_set("score", 3), "the game file has an unknown key 'score'"),
        (_set("events.0.sead", 3), "the setup has an unknown key 'sead'"),
        (_set("events.0.options.two_worker", True), "options has an unknown key 'two_worker'"),
        (_set("events.0.island.hex.0.forest", 3), "a hex entry has an unknown key 'forest'"),
        (_set("events.0.island.ahus", []), "the island has an unknown key 'ahus'"),
        (_set("events.0.seed", "one"), "the setup's seed must be a whole number"),
        (_set("events.1.when", "now"), "event 2: the event has an unknown key 'when'"),
        (_misspell_move, "A move action has no key 'erekt'"),
        (_set("events.0.island.ahu.3.value", 12), "must be a whole number from 1 to 9"),
    ],
)
def test_a_wrong_log_exits_2_with_one_sentence(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    change: Callable[[dict[str, Any]], None],
    words: str,
) -> None:
    path = _write(tmp_path, _log_with(change))
    code, out, err = _score(path, capsys, "--json")
    assert (code, out) == (2, "")
    assert err.count("\n") == 1 and words in err and str(path) in err


@pytest.mark.parametrize(
    ("path", "value", "words"),
    [
        ("hats", 1, "the final count has an unknown key 'hats'"),
        ("moai.0.hat", True, "Moai 1 has an unknown key 'hat'"),
        ("moai.0.size", 4, "Moai 1's size must be a whole number from 1 to 3"),
        ("rongo_halves.Red", -1, "rongo_halves of 'Red' must be a whole number from 0 to 30"),
    ],
)
def test_a_wrong_final_count_exits_2_with_one_sentence(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], path: str, value: Any, words: str
) -> None:
    data = copy.deepcopy(COUNT)
    _set(path, value)(data)
    code, out, err = _score(_write(tmp_path, data), capsys)
    assert (code, out) == (2, "")
    assert err.count("\n") == 1 and words in err


def test_the_phones_final_count_prints_the_score_the_page_shows(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The file Giants' count page saves (tests/web/test_giants_count.py) printed by
    `companion score --game giants FILE --json` as the engine scores the count."""
    count = five_player_count()
    path = tmp_path / "giants-final-count.json"
    path.write_text(json.dumps(count, indent=1), encoding="utf-8")  # what the page saves
    capsys.readouterr()
    assert main(["score", "--game", "giants", str(path), "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == score_final_count(count).to_json()
