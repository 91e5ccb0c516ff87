"""Durable games: the journal survives kills at any moment and resumes at the last turn."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from companion.actions import Pass, Turn
from companion.bots import RandomPlayer
from companion.errors import CompanionError, DataError
from companion.game import Seat
from companion.journal import Journal
from companion.session import Session

SEATS = [Seat("Ana", 1), Seat("Bo", 2), Seat("Cy", 3)]


def test_a_resumed_session_is_the_same_game_with_its_move_log(tmp_path: Path) -> None:
    session = Session(journal=Journal(tmp_path))
    session.start_game(SEATS, seed=5)
    bot = RandomPlayer(random.Random(5))
    assert session.game is not None
    for _ in range(10):
        session.play(bot.choose(session.game.rules, session.game.state))
    session.undo()
    session.note("refused", "Palms must point to their owner: lay the tile upright.")
    again = Session.resume(Journal(tmp_path))
    assert again.game is not None
    assert again.game.state == session.game.state
    assert [e["text"] for e in again.view()["log"]] == [e["text"] for e in session.view()["log"]]


def test_without_a_saved_game_resume_gives_a_fresh_session(tmp_path: Path) -> None:
    assert Session.resume(Journal(tmp_path)).game is None


def test_a_torn_last_line_is_dropped_and_the_game_goes_on(tmp_path: Path) -> None:
    session = Session(journal=Journal(tmp_path))
    session.start_game(SEATS, seed=1)
    session.play(Turn(1, Pass()))
    journal = Journal(tmp_path)
    path = journal.current_path()
    assert path is not None
    with open(path, "a", encoding="utf-8") as fh:
        fh.write('{"type":"turn","turn":{"ste')  # the power went here
    again = Session.resume(Journal(tmp_path))
    assert again.game is not None and len(again.game.records) == 1
    again.play(Turn(1, Pass()))
    third = Session.resume(Journal(tmp_path))
    assert third.game is not None and len(third.game.records) == 2


def test_damage_in_the_middle_is_one_sentence(tmp_path: Path) -> None:
    session = Session(journal=Journal(tmp_path))
    session.start_game(SEATS, seed=1)
    session.play(Turn(1, Pass()))
    session.play(Turn(1, Pass()))
    path = Journal(tmp_path).current_path()
    assert path is not None
    lines = path.read_text().splitlines()
    lines[1] = "garbage"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(DataError, match="line 2 is damaged"):
        Session.resume(Journal(tmp_path))


def test_a_turn_that_cannot_be_saved_is_not_shown(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    session = Session(journal=Journal(tmp_path))
    session.start_game(SEATS, seed=1)
    assert session.game is not None
    before = session.game.state.copy()
    version = session.version

    def full(event: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(session.journal, "append", full)
    with pytest.raises(CompanionError, match="could not be saved \\(No space left on device\\)"):
        session.play(Turn(1, Pass()))
    assert session.game.state == before and session.version == version
    assert [e["type"] for e in session.game.events] == ["setup"]


def test_an_unusable_state_directory_is_one_sentence(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(DataError, match="cannot be used as the state directory"):
        Journal(blocker / "state")


PLAYER = r"""
import random, sys, time
from companion.bots import RandomPlayer
from companion.game import Seat
from companion.journal import Journal
from companion.session import Session
journal = Journal(sys.argv[1])
session = Session.resume(journal)
if session.game is None:
    session.start_game([Seat("Ana", 1), Seat("Bo", 2), Seat("Cy", 3)], seed=9)
game = session.game
while not game.over:
    bot = RandomPlayer(random.Random(1000 + game.state.turn_number))
    session.play(bot.choose(game.rules, game.state))
    print(game.state.turn_number, flush=True)
    time.sleep(0.05)  # a little thinking, so kills land all through the game
print("over", flush=True)
"""


def reference_game(turns: int) -> object:
    session = Session()
    session.start_game([Seat("Ana", 1), Seat("Bo", 2), Seat("Cy", 3)], seed=9)
    game = session.game
    assert game is not None
    while game.state.turn_number < turns and not game.over:
        bot = RandomPlayer(random.Random(1000 + game.state.turn_number))
        session.play(bot.choose(game.rules, game.state))
    return game.state


@pytest.mark.slow
def test_kill_9_at_random_moments_never_loses_a_confirmed_turn(tmp_path: Path) -> None:
    rng = random.Random(4)
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    confirmed = 0
    kills_mid_game = 0
    for _ in range(40):
        proc = subprocess.Popen(
            [sys.executable, "-c", PLAYER, str(tmp_path)],
            stdout=subprocess.PIPE,
            text=True,
            env=env,
        )
        time.sleep(rng.uniform(0.3, 0.7))
        proc.send_signal(signal.SIGKILL)
        out, _ = proc.communicate()
        printed = [line for line in out.split() if line.isdigit()]
        if printed:
            confirmed = int(printed[-1])
        resumed = Session.resume(Journal(tmp_path))
        if resumed.game is None:
            continue
        kills_mid_game += "over" not in out
        state = resumed.game.state
        assert state.turn_number >= confirmed, "a turn shown as confirmed was lost"
        assert state == reference_game(state.turn_number)
        if "over" in out:
            break
    assert kills_mid_game >= 5, "the kills must land during the game"
    finished = subprocess.run(
        [sys.executable, "-c", PLAYER, str(tmp_path)], capture_output=True, text=True, env=env
    )
    assert finished.returncode == 0 and "over" in finished.stdout
    final = Session.resume(Journal(tmp_path)).game
    assert final is not None and final.over
    assert final.state == reference_game(10**6)
    assert json.loads(json.dumps(final.score().to_json()))["winners"]
