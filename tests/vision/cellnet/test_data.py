"""The learning cells' helpers that need no network."""

from __future__ import annotations

import numpy as np

from vision.cellnet.data import look_alikes


def _pictures() -> list[np.ndarray]:
    rng = np.random.default_rng(3)
    ground = rng.integers(0, 255, (4, 40, 40, 3), dtype=np.uint8)
    # Tile 1 is tile 0 turned a quarter with one small mark more, tile 3 tile 0's twin.
    one = np.rot90(ground[0]).copy()
    one[5:9, 5:9] = 255
    return [ground[0], one, ground[2], ground[0].copy()]


def test_a_twin_of_another_meaning_is_the_nearest_look_alike() -> None:
    same = np.eye(16, dtype=bool)
    near = look_alikes(_pictures(), same, 1)
    assert near[0, 0] == 3 and near[3, 0] == 0
    assert near[1, 0] in (0, 3)  # the turned tile with one mark more
    assert near.shape == (4, 1)


def test_tiles_of_the_same_meaning_are_never_look_alikes() -> None:
    same = np.eye(16, dtype=bool)
    same[0:4, 12:16] = same[12:16, 0:4] = True  # tiles 0 and 3 mean the same
    near = look_alikes(_pictures(), same, 2)
    assert 3 not in near[0] and 0 not in near[3]
    assert near[0, 0] == 1 and near[3, 0] == 1


def test_the_learning_skips_the_benchmarks_packs_then_goes_on_in_other_looks() -> None:
    from vision.cellnet.data import FINISHED_SEEDS, SHAPED_SEEDS, learning_seeds

    seeds = learning_seeds(2400)
    assert seeds[:1500] == list(range(1500))
    assert seeds[1500:2100] == list(FINISHED_SEEDS)
    assert seeds[2100:] == list(SHAPED_SEEDS)
    assert not set(seeds) & set(range(1500, 2000)), "benchmarks draw packs 1500-1999"
    assert learning_seeds(10) == list(range(10))


def test_held_out_packs_come_in_every_look_and_are_never_learnt() -> None:
    from vision.cellnet.data import (
        HELD_OUT,
        HELD_OUT_LOOKS,
        HELD_OUT_SHAPES,
        SHAPED_SEEDS,
        learning_seeds,
        look_of,
    )
    from vision.synthetic.artpacks import (
        finished_look,
        line_look,
        random_look,
        shaped_look,
        varied_look,
    )

    assert look_of(HELD_OUT.start) == random_look(HELD_OUT.start)
    looks = (varied_look, line_look, finished_look)
    for seed in HELD_OUT_LOOKS[:6]:
        assert look_of(seed) == looks[seed % 3](seed)
    assert {look_of(seed).finish for seed in HELD_OUT_LOOKS if seed % 3 == 2} - {"print"}
    assert look_of(HELD_OUT_SHAPES.start) == shaped_look(HELD_OUT_SHAPES.start)
    assert look_of(SHAPED_SEEDS.start) == shaped_look(SHAPED_SEEDS.start)
    learnt = set(learning_seeds(2400))
    assert not learnt & (set(HELD_OUT) | set(HELD_OUT_LOOKS) | set(HELD_OUT_SHAPES))
