"""The gate of a read of what changed (vision.reader.incremental.gate) on real looks, in the
quick suite: looks of cells cut from rendered game turns (glare, shadows, noise, JPEG, a
camera shaken a little, hands; app.bench.changes), kept in data/gate-looks.npz. Every
changed cell among them must be read again; the quieter unchanged ones are kept.

The looks are drawn again with `python -m tests.app.bench.gate_looks` (minutes): the
changed cells whose looks differ least from what they showed, and unchanged cells spread
over the differences the gate saw.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from vision.reader.incremental import ChangeConfig, gate

LOOKS = Path(__file__).with_name("data") / "gate-looks.npz"
#: Looks are kept to 1/SCALE of a grey level (uint16): far finer than the gate's threshold.
SCALE = 64
CHANGED, UNCHANGED = 12, 12


def stored(path: Path = LOOKS) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The kept looks, the looks seen and whether each cell changed, as kept at `path`."""
    with np.load(path) as data:
        kept, seen, changed = data["kept"], data["seen"], data["changed"]
    return kept.astype(np.float32) / SCALE, seen.astype(np.float32) / SCALE, changed


def test_every_changed_cell_of_real_looks_is_read_again_and_quiet_unchanged_ones_kept() -> None:
    cfg = ChangeConfig()
    kept, seen, changed = stored()
    assert kept.shape == seen.shape and kept.shape[1:] == (cfg.look_px, cfg.look_px, 3)
    assert changed.sum() == CHANGED and (~changed).sum() == UNCHANGED
    apart, again = gate(list(kept), list(seen), cfg)
    missed = [f"pair {i}: {d:.2f}" for i, d in enumerate(apart) if changed[i] and not again[i]]
    assert missed == []
    # A gate that read every cell again would miss nothing and save nothing. Under these
    # turns' glare, shake and hands about two unchanged cells in five are kept: the quietest.
    quiet = sorted((d, i) for i, d in enumerate(apart) if not changed[i])[: UNCHANGED // 3]
    assert not any(again[i] for _, i in quiet)
