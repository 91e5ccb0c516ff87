"""`companion pack synth` draws an art pack and `companion pack check` checks it."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.cli import main
from vision.box.pack import load_pack


def test_cli_draws_and_checks_a_pack(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "box"
    assert main(["pack", "synth", "--style", "ink", "--out", str(out), "--px", "128"]) == 0
    assert load_pack(out).tiles["water"].shape == (128, 128, 3)
    assert main(["pack", "check", str(out)]) == 0
    assert "50 tile types" in capsys.readouterr().out
    assert main(["pack", "synth", "--style", "ink", "--out", str(out)]) == 2
    assert "not an empty directory" in capsys.readouterr().err
