"""app.bench.judge: each pack's judge weighed out of fold."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from app.bench.judge import judge_row, rows_table
from app.cli import main


def test_a_row_gives_the_reports_figures_and_the_table_shows_them() -> None:
    report = {"cells": 120.0, "log_loss": 0.05, "ece": 0.01, "threshold": 0.7}
    row = judge_row("ink", {**report, "threshold_unknown": 0.95, "answered": 0.9, "wrong": 0.001})
    assert row["pack"] == "ink" and row["cells"] == 120 and row["log_loss"] == 0.05
    table = rows_table([row])
    assert "ink" in table and "0.0500" in table and "90.0%" in table


@pytest.mark.slow
def test_the_benchmark_learns_each_pack_and_writes_its_row(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("MAORI_CACHE_DIR", str(tmp_path / "cache"))
    out = tmp_path / "judge.csv"
    small = ["--set", "judge.tables=4", "--set", "judge.folds=2", "--set", "judge.steps=20"]
    args = ["bench", "judge", "--pack-style", "random", *small, "--csv", str(out)]
    assert main(args) == 0
    printed = capsys.readouterr().out
    assert printed.startswith("$ companion bench judge --pack-style random --seed 1 --set")
    (row,) = list(csv.DictReader(out.open()))
    assert row["pack"] == "random" and int(row["cells"]) > 50
    assert 0.0 < float(row["log_loss"]) < 1.2 and 0.0 <= float(row["answered"]) <= 1.0
    # A network setting fits again on the cells drawn, without drawing them again (a file
    # drawn again is renamed into place: another inode).
    (drawn,) = (tmp_path / "cache").glob("learning-*.npz")
    kept = drawn.stat()
    assert main([*args[:-2], "--set", "judge.hidden=4"]) == 0
    assert list((tmp_path / "cache").glob("learning-*.npz")) == [drawn]
    again = drawn.stat()
    assert (again.st_ino, again.st_mtime_ns) == (kept.st_ino, kept.st_mtime_ns)


@pytest.mark.parametrize("setting", ["judge.nothing=1", "judge.members=0", "judge.folds=1"])
def test_a_setting_no_judge_has_is_one_sentence(
    setting: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["bench", "judge", "--pack-style", "ink", "--set", setting]) == 2
    err = capsys.readouterr().err
    assert err.startswith("companion: --set") and err.count("\n") == 1
