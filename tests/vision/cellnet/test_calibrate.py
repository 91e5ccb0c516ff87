"""The calibration's bound and threshold (vision.cellnet.calibrate)."""

from __future__ import annotations

from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import replace
from typing import Any

import numpy as np
import pytest

from vision.box.pack import Pack
from vision.cellnet import calibrate
from vision.cellnet.calibrate import (
    Calibration,
    _fitted_beside_drawing,
    _rng,
    binomial_upper,
    choose_threshold,
    design_effect,
    graded,
    upper_bound,
)
from vision.cellnet.data import COVERED, PackCells, draw_tables
from vision.cellnet.geometry import net_picture
from vision.cellnet.model import Head, box_pictures, cell_net


def test_the_binomial_bound_is_clopper_pearsons() -> None:
    # No failure in n: the bound solves (1 - p)^n = alpha.
    assert binomial_upper(0, 600, 0.95) == pytest.approx(1 - 0.05 ** (1 / 600), rel=1e-6)
    # 1 of 100 at 95 %: 0.0466 (the exact Clopper-Pearson value, one-sided).
    assert binomial_upper(1, 100, 0.95) == pytest.approx(0.04656, abs=2e-5)
    assert binomial_upper(3, 3, 0.95) == 1.0
    assert binomial_upper(0, 0, 0.95) == 1.0


def test_cells_that_err_together_widen_the_bound() -> None:
    answered = np.full(40, 100, np.int64)
    spread = np.zeros(40, np.int64)
    spread[:8] = 1  # 8 wrong, one a table
    together = np.zeros(40, np.int64)
    together[0] = 8  # 8 wrong, all on one table
    alone = upper_bound(spread, answered, 0.95)
    clustered = upper_bound(together, answered, 0.95)
    assert alone == pytest.approx(binomial_upper(8, 4000, 0.95))
    assert clustered > alone
    # The widening is the design effect: 1 for wrong answers spread one a table, more when
    # they fall together, and the bound is the binomial one on counts divided by it.
    assert design_effect(spread, answered) == 1.0
    deff = design_effect(together, answered)
    assert deff > 5.0
    assert clustered == pytest.approx(binomial_upper(8 / deff, 4000 / deff, 0.95))


def test_the_threshold_leaves_out_the_wrong_answers_it_must() -> None:
    rng = np.random.default_rng(0)
    n = 4000
    tables = np.repeat(np.arange(40), n // 40)
    sure = rng.uniform(0.5, 1.0, n)
    named = np.ones(n, bool)
    wrong = np.zeros(n, bool)
    wrong[np.argsort(sure)[:60]] = True  # the least sure 60 are wrong
    threshold, bound, answered, wrong_count = choose_threshold(
        sure, wrong, named, tables, 0.005, 0.95
    )
    assert bound <= 0.005
    assert wrong_count == int((wrong & (sure >= threshold)).sum())
    assert answered == int((sure >= threshold).sum())
    # The 60 least sure are all left out, and most of the rest answered.
    assert threshold > np.sort(sure)[59]
    assert answered > 0.8 * n


def test_a_box_that_cannot_hold_the_rate_names_nothing() -> None:
    n = 200
    sure = np.linspace(0.5, 1.0, n)
    wrong = np.zeros(n, bool)
    wrong[-1] = True  # the surest answer is wrong, and there are few cells
    threshold, bound, answered, _ = choose_threshold(
        sure, wrong, np.ones(n, bool), np.zeros(n, np.int64), 0.005, 0.95
    )
    assert threshold > 1.0 and answered == 0 and bound == 0.0


def test_a_calibration_round_trips_and_refuses_another_version() -> None:
    made = Calibration(0.93, 0.005, 0.95, 0.0041, 3100, 40, 2800, 3, 1.7)
    assert Calibration.from_json(made.to_json()) == made
    with pytest.raises(ValueError):
        Calibration.from_json('{"version": 0, "threshold": 1}')


def test_a_covered_cell_named_with_what_lies_beneath_it_is_right(pack_random: Pack) -> None:
    """A hand over a tile: naming the tile beneath is right, naming anything else wrong."""
    net = cell_net()
    box = box_pictures(net, pack_random)
    tile = box.tile_ids[0]
    picture = net_picture(
        np.asarray(pack_random.tiles[tile], np.uint8), pack_random.tile_mm, net.px
    )
    other = next(t for t in box.tile_ids if not box.same[0, 4 * box.tile_ids.index(t)])
    crops = np.stack([picture, picture])
    cells = PackCells(
        name="covered",
        tile_ids=box.tile_ids,
        crops=crops,
        kinds=np.zeros(2, np.int8),
        boards=np.zeros_like(crops),
        tiles=np.full(2, COVERED, np.int16),
        rotations=np.zeros(2, np.int16),
        pictures=np.zeros((0, 2 * net.px, 2 * net.px, 3), np.uint8),
        raw=(),
        same=box.same,
        tables=np.zeros(2, np.int16),
        tile_mm=pack_random.tile_mm,
        beneath=np.array([0, box.tile_ids.index(other)], np.int16),
    )
    _sure, wrong, named = graded(net, box, cells)
    assert named.all(), "the tile is in plain view"
    assert wrong.tolist() == [False, True]
    # Drawn without what lies beneath, a covered cell named at all is wrong.
    _sure, wrong, _named = graded(net, box, replace(cells, beneath=None))
    assert wrong.all()


def test_the_calibrations_tables_drawn_beside_the_head_are_those_drawn_here(
    pack_random: Pack, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another process draws the calibration's tables while the head is fitted; they are the
    tables this process would draw, and this process draws them when the other cannot."""
    net = cell_net()
    here = draw_tables(pack_random, 2, _rng(0), net.px)
    fitted: list[int] = []
    futures: list[Future[list[PackCells]]] = []

    def fit() -> Head:
        fitted.append(1)
        return net.head

    def same_tables(drawn: list[PackCells]) -> bool:
        return len(drawn) == len(here) and all(
            np.array_equal(a.crops, b.crops) and np.array_equal(a.tiles, b.tiles)
            for a, b in zip(drawn, here, strict=True)
        )

    class Recording(ProcessPoolExecutor):
        def submit(self, *args: Any, **kwargs: Any) -> Future[Any]:
            made = super().submit(*args, **kwargs)
            futures.append(made)
            return made

    monkeypatch.setattr(calibrate, "ProcessPoolExecutor", Recording)
    head, beside = _fitted_beside_drawing(fit, pack_random, 2, net.px)
    assert head is net.head and fitted == [1]
    assert len(futures) == 1 and futures[0].exception() is None
    assert same_tables(beside)

    class Broken(ProcessPoolExecutor):
        def submit(self, *_args: Any, **_kwargs: Any) -> Future[Any]:
            gone: Future[Any] = Future()
            gone.set_exception(BrokenProcessPool("the other process died"))
            return gone

    monkeypatch.setattr(calibrate, "ProcessPoolExecutor", Broken)
    head, alone = _fitted_beside_drawing(fit, pack_random, 2, net.px)
    assert head is net.head and fitted == [1, 1] and same_tables(alone)

    def no_process(*_args: object, **_kwargs: object) -> None:
        raise OSError("no more processes")

    monkeypatch.setattr(calibrate, "ProcessPoolExecutor", no_process)
    head, alone = _fitted_beside_drawing(fit, pack_random, 2, net.px)
    assert head is net.head and fitted == [1, 1, 1] and same_tables(alone)
