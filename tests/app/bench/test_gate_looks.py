"""The real looks of the change gate's quick test, drawn again from `companion bench changes`'s
rendered turns (tests/app/bench/gate_looks.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.app.bench.gate_looks import draw
from tests.vision.reader.test_gate_looks import CHANGED, UNCHANGED, stored
from vision.reader.incremental import ChangeConfig, gate


@pytest.mark.slow
def test_looks_drawn_again_hold_the_changed_and_unchanged_cells_the_quick_test_reads(
    tmp_path: Path,
) -> None:
    path = tmp_path / "data" / "gate-looks.npz"
    said = draw(path, count=40, seed=5)
    assert said.endswith(tuple("0123456789")) and " compared cells; " in said
    cfg = ChangeConfig()
    kept, seen, changed = stored(path)
    assert kept.shape == seen.shape == (CHANGED + UNCHANGED, cfg.look_px, cfg.look_px, 3)
    assert changed.sum() == CHANGED and (~changed).sum() == UNCHANGED
    apart, again = gate(list(kept), list(seen), cfg)
    assert all(again[i] for i in range(len(apart)) if changed[i])
