"""app.bench.options: the options several benchmarks share."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from app.bench.options import add_settings, check_csv, settings_config
from companion.errors import CompanionError


def test_settings_change_the_config_and_a_bad_one_is_one_sentence() -> None:
    parser = argparse.ArgumentParser()
    add_settings(parser, "help")
    args = parser.parse_args(["--set", "judge.members=1", "--set", "judge.steps=7"])
    config = settings_config(args.settings)
    assert (config.judge.members, config.judge.steps) == (1, 7)
    with pytest.raises(CompanionError, match=r"^--set: judge\.members must be at least 1$"):
        settings_config(["judge.members=0"])
    assert settings_config(["read.net_metric_ridge=0.3"]).read.net_metric_ridge == 0.3
    for bad in ("-1", "0", "inf", "1e999"):
        with pytest.raises(
            CompanionError, match=r"^--set: read\.net_metric_ridge must be a finite number above 0$"
        ):
            settings_config([f"read.net_metric_ridge={bad}"])
    assert settings_config(["read.net_metric_steps=0"]).read.net_metric_steps == 0
    with pytest.raises(CompanionError, match=r"^--set: read\.net_metric_steps must be 0 or more$"):
        settings_config(["read.net_metric_steps=-1"])


def test_a_csv_that_cannot_be_written_is_refused(tmp_path: Path) -> None:
    check_csv(None)
    check_csv(tmp_path / "rows.csv")
    for bad in (tmp_path, tmp_path / "missing" / "rows.csv"):
        with pytest.raises(CompanionError, match="cannot be written"):
            check_csv(bad)
