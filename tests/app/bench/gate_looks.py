"""Draws again the real looks the quick test of the change gate reads
(tests/vision/reader/test_gate_looks.py): `python -m tests.app.bench.gate_looks` (minutes).

Game turns rendered as `companion bench changes` renders them (glare, shadows, noise, JPEG,
a camera shaken a little, hands), the gate run over them as that benchmark runs it; kept: the
changed cells whose looks differ least from what they showed, and unchanged cells spread
over the differences the gate saw.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np

from app.bench.changes import run_gate, turns
from tests.vision.reader.test_gate_looks import CHANGED, LOOKS, SCALE, UNCHANGED
from vision.box.pack import load_pack
from vision.reader.incremental import ChangeConfig, gate
from vision.synthetic.artpacks import write_art_pack


def draw(path: Path = LOOKS, count: int = 300, seed: int = 5) -> str:
    """Render `count` game turns with the lagoon pack (seed 0, as the tests draw it), run the
    gate over them and keep the looks chosen at `path`; says how many cells were compared."""
    cfg = ChangeConfig()
    with tempfile.TemporaryDirectory() as root:
        pack = load_pack(write_art_pack(Path(root) / "lagoon", "lagoon", seed=0))
        pairs: list[tuple[np.ndarray, np.ndarray, bool]] = []
        run_gate(pack, turns(pack, count, seed), cfg, None, False, pairs)
    apart, _ = gate([p[0] for p in pairs], [p[1] for p in pairs], cfg)
    changed = sorted((d, i) for i, d in enumerate(apart) if pairs[i][2])
    unchanged = sorted((d, i) for i, d in enumerate(apart) if not pairs[i][2])
    chosen = [i for _, i in changed[:CHANGED]]
    step = len(unchanged) / UNCHANGED
    chosen += [unchanged[int(k * step)][1] for k in range(UNCHANGED)]
    path.parent.mkdir(exist_ok=True)

    def stored(looks: list[np.ndarray]) -> np.ndarray:
        return np.round(np.stack(looks) * SCALE).astype(np.uint16)

    np.savez_compressed(
        path,
        kept=stored([pairs[i][0] for i in chosen]),
        seen=stored([pairs[i][1] for i in chosen]),
        changed=np.array([pairs[i][2] for i in chosen]),
    )
    return f"{len(pairs)} compared cells; the least changed differ by {changed[0][0]:.2f}"


if __name__ == "__main__":
    print(draw())
