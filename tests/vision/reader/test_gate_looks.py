"""The gate of a read of what changed (vision.reader.incremental.gate) on real looks, in the
quick suite: looks of cells cut from rendered game turns (glare, shadows, noise, JPEG, a
camera shaken a little, hands; app.bench.changes), kept in data/gate-looks.npz. Every
changed cell among them must be read again; the quieter unchanged ones are kept.

The looks are drawn again with `python -m tests.vision.reader.test_gate_looks` (minutes):
the changed cells whose looks differ least from what they showed, and unchanged cells
spread over the differences the gate saw.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from vision.reader.incremental import ChangeConfig, gate

LOOKS = Path(__file__).with_name("data") / "gate-looks.npz"
#: Looks are kept to 1/SCALE of a grey level (uint16): far finer than the gate's threshold.
SCALE = 64
CHANGED, UNCHANGED = 12, 12


def _stored() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    with np.load(LOOKS) as data:
        kept, seen, changed = data["kept"], data["seen"], data["changed"]
    return kept.astype(np.float32) / SCALE, seen.astype(np.float32) / SCALE, changed


def test_every_changed_cell_of_real_looks_is_read_again_and_quiet_unchanged_ones_kept() -> None:
    cfg = ChangeConfig()
    kept, seen, changed = _stored()
    assert kept.shape == seen.shape and kept.shape[1:] == (cfg.look_px, cfg.look_px, 3)
    assert changed.sum() == CHANGED and (~changed).sum() == UNCHANGED
    apart, again = gate(list(kept), list(seen), cfg)
    missed = [f"pair {i}: {d:.2f}" for i, d in enumerate(apart) if changed[i] and not again[i]]
    assert missed == []
    # A gate that read every cell again would miss nothing and save nothing. Under these
    # turns' glare, shake and hands about two unchanged cells in five are kept: the quietest.
    quiet = sorted((d, i) for i, d in enumerate(apart) if not changed[i])[: UNCHANGED // 3]
    assert not any(again[i] for _, i in quiet)


def draw(turns: int = 300, seed: int = 5) -> None:
    """Render `turns` game turns with the lagoon pack (seed 0, as the tests draw it), run the
    gate over them and keep the looks chosen (see the module's docstring)."""
    import tempfile

    from app.bench.changes import run_gate
    from app.bench.changes import turns as rendered_turns
    from vision.box.pack import load_pack
    from vision.synthetic.artpacks import write_art_pack

    cfg = ChangeConfig()
    with tempfile.TemporaryDirectory() as root:
        pack = load_pack(write_art_pack(Path(root) / "lagoon", "lagoon", seed=0))
        pairs: list[tuple[np.ndarray, np.ndarray, bool]] = []
        run_gate(pack, rendered_turns(pack, turns, seed), cfg, None, False, pairs)
    apart, _ = gate([p[0] for p in pairs], [p[1] for p in pairs], cfg)
    changed = sorted((d, i) for i, d in enumerate(apart) if pairs[i][2])
    unchanged = sorted((d, i) for i, d in enumerate(apart) if not pairs[i][2])
    chosen = [i for _, i in changed[:CHANGED]]
    step = len(unchanged) / UNCHANGED
    chosen += [unchanged[int(k * step)][1] for k in range(UNCHANGED)]
    LOOKS.parent.mkdir(exist_ok=True)

    def stored(looks: list[np.ndarray]) -> np.ndarray:
        return np.round(np.stack(looks) * SCALE).astype(np.uint16)

    np.savez_compressed(
        LOOKS,
        kept=stored([pairs[i][0] for i in chosen]),
        seen=stored([pairs[i][1] for i in chosen]),
        changed=np.array([pairs[i][2] for i in chosen]),
    )
    print(f"{len(pairs)} compared cells; the least changed differ by {changed[0][0]:.2f}")


if __name__ == "__main__":
    draw()
