"""`companion bench rules`: only its figures when piped, progress on a terminal."""

from __future__ import annotations

import sys

import pytest

from app.cli import main
from tests.companion.test_progress import FakeTerminal


def test_the_rules_benchmark_piped_prints_only_its_figures(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["bench", "rules", "--seconds", "0.2"]) == 0
    out, err = capsys.readouterr()
    assert err == ""
    assert out.startswith("random 4-player games: ")


def test_the_rules_benchmark_on_a_terminal_shows_progress(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    terminal = FakeTerminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    assert main(["bench", "rules", "--seconds", "0.2"]) == 0
    out, _ = capsys.readouterr()
    assert out.startswith("random 4-player games: ")
    shown = terminal.getvalue()
    assert "bench rules: seconds [" in shown
    assert "timing the reach map" in shown
    assert shown.endswith("\n")
