"""`companion demo`: a whole synthetic game through the real pipeline, repeatable by seed,
and resumable after kill -9 with the same ending."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.slow

DEMO = [sys.executable, "-m", "app", "demo", "--headless", "--players", "2", "--seed", "5"]


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("demo-cache")


@pytest.fixture(scope="module")
def unbroken(cache: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[dict, Path]:  # type: ignore[type-arg]
    saved = tmp_path_factory.mktemp("game") / "final.json"
    out = subprocess.run(
        [*DEMO, "--json", "--save-game", str(saved), "--cache", str(cache)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert out.returncode == 0, out.stderr
    assert "\r" not in out.stderr  # piped: no progress line
    return json.loads(out.stdout), saved


def test_the_printed_scores_are_the_scoring_of_the_saved_game(unbroken) -> None:  # type: ignore[no-untyped-def]
    printed, saved = unbroken
    scored = subprocess.run(
        [sys.executable, "-m", "app", "score", str(saved), "--json"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert json.loads(scored.stdout) == printed
    assert [p["name"] for p in printed["players"]] == ["Aroha", "Tama"]
    assert printed["winners"]


def test_a_demo_killed_mid_game_resumes_and_ends_as_an_unbroken_one(
    unbroken: Any,
    cache: Path,
    tmp_path: Path,
) -> None:
    printed, _ = unbroken
    state = tmp_path / "state"
    command = [*DEMO, "--json", "--cache", str(cache), "--state-dir", str(state)]
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    # Wait until some turns are saved, then pull the plug.
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        games = list(state.glob("game-*.jsonl"))
        if games and games[0].read_text().count('"type":"turn"') >= 8:
            break
        time.sleep(0.2)
    proc.send_signal(signal.SIGKILL)
    proc.communicate()
    turns_saved = next(iter(state.glob("game-*.jsonl"))).read_text().count('"type":"turn"')
    assert turns_saved >= 8
    resumed = subprocess.run(command, capture_output=True, text=True, timeout=600)
    assert resumed.returncode == 0, resumed.stderr
    assert json.loads(resumed.stdout) == printed


def test_the_first_turns_show_a_refusal_and_a_question_answered_by_the_host(
    unbroken: Any, cache: Path
) -> None:
    printed, _ = unbroken
    out = subprocess.run(
        [*DEMO, "--cache", str(cache)], capture_output=True, text=True, timeout=600
    )
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    refused = "  shown: a turn refused: The explorer ship stands where it stood"
    asked = "  shown: a covered cell asked about: Some cells could not be seen"
    assert any(line.startswith(refused) for line in lines), out.stdout
    assert any(line.startswith(asked) for line in lines), out.stdout
    assert "1 confirmed by the host" in out.stdout
    # Shown on purpose, recorded as played: the scores are those of the --json run.
    totals = next(line for line in lines if line.startswith("total")).split()[1:]
    assert [int(t) for t in totals] == [p["total"] for p in printed["players"]]
