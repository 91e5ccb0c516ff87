"""`companion bench calibration`: each box's cell-network calibration, printed as it is."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.bench.calibration import calibration_row, rows_table
from app.cli import main
from vision.cellnet.calibrate import Calibration


def test_a_row_prints_the_calibrations_own_figures() -> None:
    made = Calibration(0.9312, 0.005, 0.95, 0.00417, 3100, 40, 2790, 3, 1.84)
    row = calibration_row("devset", made, made=True, seconds=51.6)
    assert (
        Calibration(
            **{k: v for k, v in row.items() if k not in ("box", "made", "seconds", "own_head")}
        )
        == made
    )
    assert row["own_head"] is False
    (head, line) = rows_table([row]).splitlines()
    assert head.split()[:4] == ["box", "target", "conf", "threshold"]
    assert line.split() == [
        "devset",
        "0.50%",
        "95%",
        "0.9312",
        "0.417%",
        "2790/3100",
        "90.0%",
        "3",
        "40",
        "1.84",
        "made",
        "in",
        "52",
        "s",
    ]
    loaded = rows_table([calibration_row("devset", made, made=False, seconds=0.1)])
    assert loaded.splitlines()[1].endswith("  loaded")


def test_a_box_that_names_nothing_shows_no_threshold_and_says_why() -> None:
    nothing = Calibration(1.0 + 1e-9, 0.005, 0.95, 0.0, 3100, 40, 0, 0)
    table = rows_table([calibration_row("devset", nothing, made=False, seconds=0.0)])
    line = table.splitlines()[1].split()
    assert line[3:6] == ["none", "-", "0/3100"]
    assert "names no cell" in table.splitlines()[2]


def test_the_printed_figures_are_the_cached_calibrations(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cache = tmp_path / "cache"
    args = ["bench", "calibration", "--pack-style", "ink", "--tables", "2", "--cache", str(cache)]
    # A few steps of the metric's learning: what is printed, not how well it learns.
    args += ["--set", "read.net_fit_tables=2", "--set", "read.net_metric_steps=5"]
    assert main([*args, "--json"]) == 0
    (first,) = json.loads(capsys.readouterr().out)["boxes"]
    # The calibration's own file (its graded cells may lie beside it).
    (kept,) = (f for f in cache.glob("calibration-*.json") if not f.stem.endswith("-cells"))
    record = Calibration.from_json(kept.read_text(encoding="utf-8"))
    assert first["made"] is True and first["box"] == "ink"
    figures = {k: v for k, v in record.__dict__.items() if k != "head"}
    assert {k: first[k] for k in figures} == figures
    assert first["own_head"] is True and record.head is not None
    assert record.tables == 2 and record.cells > 50
    # The second run loads what the first kept, and prints it.
    assert main(args) == 0
    printed = capsys.readouterr().out.splitlines()
    assert (
        printed[0] == "$ companion bench calibration --pack-style ink --seed 1 --tables 2"
        f" --set read.net_fit_tables=2 --set read.net_metric_steps=5 --cache {cache}"
    )
    line = printed[3].split()
    assert line[0] == "ink" and line[-1] == "loaded"
    assert line[5] == f"{record.answered}/{record.cells}" and int(line[7]) == record.wrong
    assert int(line[8]) == record.tables and float(line[9]) == round(record.design_effect, 2)
    if record.answered:
        assert float(line[3]) == round(record.threshold, 4)
        assert line[4] == f"{100 * record.bound:.3f}%"


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--pack", "{tmp}/no-such-pack"], "no such tile pack directory"),
        (["--pack", "{tmp}"], "no pack.toml"),
        (["--tables", "0"], "--tables must be at least 1"),
        (["--cache", "{tmp}/file"], "is not a folder"),
        (["--cache", "{tmp}/file/below"], "cannot be written"),
        (["--set", "read.nothing=1"], "--set"),
    ],
)
def test_bad_arguments_are_one_sentence(
    args: list[str], says: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "file").write_text("x")
    argv = ["bench", "calibration", *(a.format(tmp=tmp_path) for a in args)]
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith("companion: ") and says in captured.err
    assert captured.err.count("\n") == 1
