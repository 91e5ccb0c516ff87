"""A box's own head, fitted on renders of its pictures (vision.cellnet.adapt)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from vision.box.pack import Pack
from vision.cellnet.adapt import allowed, box_head, fit_head
from vision.cellnet.calibrate import Calibration
from vision.cellnet.data import COVERED, EMPTY, draw_box_cells, draw_tables
from vision.cellnet.model import BOARD_CELL, CellParts, Head, box_pictures, cell_net


def _loss(parts: CellParts, ok: np.ndarray, head: Head) -> float:
    p = parts.probabilities(head).astype(np.float64)
    return float(-np.log(np.where(ok, p, 0.0).sum(axis=1) + 1e-12).mean())


def test_what_each_truth_allows(pack_random: Pack) -> None:
    net = cell_net()
    box = box_pictures(net, pack_random)
    cells = draw_box_cells(pack_random, 1, np.random.default_rng(3), px=net.px)
    ok = allowed(cells, box)
    k = len(box.windows)
    for i, label in enumerate(cells.tiles):
        beneath = int(cells.beneath[i]) if cells.beneath is not None else None
        if label == EMPTY:
            assert ok[i, k + 1] and ok[i, k] == (cells.kinds[i] == BOARD_CELL)
            assert not ok[i, :k].any() and not ok[i, k + 2]
        elif label == COVERED:
            # The hand, or what lies beneath it.
            assert ok[i, k + 2] and (ok[i, :k].any() or beneath == EMPTY)
        else:
            assert ok[i, :k].any() and not ok[i, k:].any()
            tile = box.tile_ids.index(cells.tile_ids[int(label)])
            assert ok[i, tile * 4 + (int(cells.rotations[i]) // 90) % 4]


def test_the_fitted_head_reads_its_tables_better_and_stays_near_the_networks(
    pack_random: Pack,
) -> None:
    net = cell_net()
    box = box_pictures(net, pack_random)
    head = box_head(net, box, pack_random, 2, seed=5)
    rng = np.random.default_rng([5, 20261207, 2])  # the tables box_head drew
    drawn = draw_tables(pack_random, 2, rng, net.px)
    parts = [net.parts(*cells.net_inputs(), box) for cells in drawn]
    oks = [allowed(cells, box) for cells in drawn]
    joined = CellParts(
        *(np.concatenate([getattr(p, f) for p in parts]) for f in CellParts.__dataclass_fields__)
    )
    ok = np.concatenate(oks)
    assert _loss(joined, ok, head) < _loss(joined, ok, net.head)
    assert abs(head.scale - net.head.scale) < 0.5 * net.head.scale
    # The same tables fit the same head.
    again = fit_head(joined, ok, net.head)
    assert again.scale == head.scale and np.array_equal(again.aux_weight, head.aux_weight)


def test_no_tables_leave_the_networks_head(pack_random: Pack) -> None:
    net = cell_net()
    assert box_head(net, box_pictures(net, pack_random), pack_random, 0) is net.head


def test_a_calibration_keeps_its_head() -> None:
    head = Head(17.0, -0.5, np.arange(10, dtype=np.float32).reshape(2, 5), np.ones(2, np.float32))
    made = Calibration(0.95, 0.005, 0.95, 0.004, 3000, 40, 2000, 2, 1.2, head)
    again = Calibration.from_json(made.to_json())
    assert again == made and again.head is not None
    assert again.head.scale == 17.0 and np.array_equal(again.head.aux_weight, head.aux_weight)
    assert Calibration.from_json(replace(made, head=None).to_json()).head is None
