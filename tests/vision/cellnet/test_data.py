"""The learning cells' helpers that need no network."""

from __future__ import annotations

from dataclasses import replace

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
        pack_look,
    )
    from vision.synthetic.artpacks import (
        finished_look,
        line_look,
        random_look,
        shaped_look,
        varied_look,
    )

    assert pack_look(HELD_OUT.start) == random_look(HELD_OUT.start)
    looks = [pack_look(seed) for seed in HELD_OUT_LOOKS]
    kinds = (varied_look, line_look)
    finished = [
        (seed, look)
        for seed, look in zip(HELD_OUT_LOOKS, looks, strict=True)
        if look.finish != "print"
    ]
    plain = [
        (seed, look)
        for seed, look in zip(HELD_OUT_LOOKS, looks, strict=True)
        if look.finish == "print"
    ]
    assert all(any(look == kind(seed) for kind in kinds) for seed, look in plain)
    assert {kind.__name__ for kind in kinds} == {
        kind.__name__ for seed, look in plain for kind in kinds if look == kind(seed)
    }
    assert all(look == finished_look(seed) for seed, look in finished)
    # The finished packs are of every look beneath: their symbols' scale and line tell.
    beneath = {
        kind.__name__
        for seed, look in finished
        for kind in (random_look, varied_look, line_look)
        if replace(look, finish="print") == kind(seed)
    }
    assert beneath == {"random_look", "varied_look", "line_look"}
    assert min(len(finished), len(plain) // 2) >= 14
    assert pack_look(HELD_OUT_SHAPES.start) == shaped_look(HELD_OUT_SHAPES.start)
    assert pack_look(SHAPED_SEEDS.start) == shaped_look(SHAPED_SEEDS.start)
    learnt = set(learning_seeds(2400))
    assert not learnt & (set(HELD_OUT) | set(HELD_OUT_LOOKS) | set(HELD_OUT_SHAPES))
