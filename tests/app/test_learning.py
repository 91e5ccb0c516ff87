"""A new box's first learning shown while it runs (app.learning): on the terminal and, through
the Session, in the state every phone follows; the bots' board games show their progress on
the terminal (app.demo). The phones' banner is tested in tests/web/test_browser_newcomer.py."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from app import demo
from app.cli import main
from app.learning import learn_box
from companion.session import Session
from tests.companion.test_progress import FakeTerminal


class SlowLearner:
    """Learns in `steps` steps of `step` seconds, then fits for `fit` seconds; the views of
    `session` are kept as the learning goes."""

    def __init__(self, session: Session, steps: int = 4, step: float = 0.05, fit: float = 0.3):
        self.pack = type("Pack", (), {"name": "synthetic lagoon art"})()
        self.session, self.steps, self.step, self.fit = session, steps, step, fit
        self.seen: list[Any] = []

    def prepare(self, progress: Callable[[int, int], None] | None = None) -> object:
        assert progress is not None
        progress(0, self.steps)
        for done in range(1, self.steps + 1):
            time.sleep(self.step)
            progress(done, self.steps)
            self.seen.append(self.session.view()["learning"])
        deadline = time.monotonic() + self.fit
        while time.monotonic() < deadline:
            time.sleep(0.02)
            self.seen.append(self.session.view()["learning"])
        return object()


def test_the_learning_reaches_the_terminal_and_the_phones_with_the_time_left() -> None:
    session = Session()
    terminal = FakeTerminal()
    learner = SlowLearner(session)
    version = session.version
    learn_box(learner, session, stream=terminal, tick=0.05)
    seen = [s for s in learner.seen if s is not None]
    steps = [s for s in seen if s["total"]]
    assert {s["done"] for s in steps} == {1, 2, 3}  # the last step done: what follows it
    assert steps[0]["what"] == "Learning the tiles of synthetic lagoon art"
    assert all(s["left"] is not None for s in steps[1:])  # a pace once a step was timed
    assert "3 of 4 steps" in steps[-1]["sentence"] and "left" in steps[-1]["sentence"]
    assert any(s["total"] == 0 and "finishing" in s["sentence"] for s in seen)
    assert session.view()["learning"] is None and session.version > version + 4
    transcript = terminal.getvalue()
    assert "learning the tiles of synthetic lagoon art [" in transcript
    assert "] 3/4, about" in transcript and "s left" in transcript
    assert "finishing what the steps drew" in transcript
    assert transcript.endswith("\n")


def test_a_piped_terminal_and_no_session_show_nothing() -> None:
    piped = FakeTerminal()
    piped.isatty = lambda: False  # type: ignore[method-assign]
    learn_box(SlowLearner(Session(), steps=2, fit=0.0), stream=piped, tick=0.05)
    assert piped.getvalue() == ""


def test_a_board_games_demo_shows_its_moves_and_scores_on_the_terminal(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    terminal = FakeTerminal()
    monkeypatch.setattr("sys.stderr", terminal)
    monkeypatch.setattr(demo, "BOARD_PROGRESS_EVERY", 0.05)
    argv = ["demo", "--game", "giants", "--headless", "--players", "3", "--seed", "3"]
    assert main([*argv, "--pace", "0.002"]) == 0
    lines = [line for line in terminal.getvalue().split("\r") if line]
    assert len(lines) >= 3
    assert all(line.startswith("\033[Kplaying: Giants move ") for line in lines)
    assert all(name in lines[-1] for name in ("Aroha", "Tama", "Mere"))
    assert terminal.getvalue().endswith("\n")
    assert capsys.readouterr().out.splitlines()[-1].startswith("winner")


def test_a_piped_board_games_demo_prints_only_its_score(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["demo", "--game", "giants", "--headless", "--players", "3"]) == 0
    assert capsys.readouterr().err == ""
