"""app.bench.changes: `--set` reaches the reader of the timed turns."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import pytest

from app.bench import changes


def test_a_setting_reaches_the_timed_reader(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    seen: list[Any] = []

    def timed(pack: object, count: int, seed: int, config: Any = None) -> dict[str, Any]:
        seen.append(config)
        nan = float("nan")
        return {
            "kinds": {},
            "decode_ms": 1.0,
            "changes_in_decodes": nan,
            "changes_p90_in_decodes": nan,
            "whole_in_decodes": nan,
            "cells_read_again_median": nan,
            "stages_ms": {},
        }

    monkeypatch.setattr(changes, "timed_turns", timed)
    monkeypatch.setattr("app.demo.pack_for_demo", lambda style, cache: tmp_path)
    monkeypatch.setattr(changes, "load_pack", lambda path: object())
    parser = argparse.ArgumentParser()
    changes.configure(parser)
    args = parser.parse_args(["--turns", "0", "--timed", "1", "--set", "read.recogniser='net'"])
    assert changes.run(args) == 0
    assert seen[0].read.recogniser == "net"
