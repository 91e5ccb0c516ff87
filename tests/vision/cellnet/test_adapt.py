"""A box's own head, fitted on renders of its pictures (vision.cellnet.adapt)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import numpy as np
import pytest

from vision.box.pack import Pack
from vision.cellnet.adapt import (
    _comparison_loss,
    allowed,
    box_head,
    fit_head,
    fit_metric,
    refine_metric,
)
from vision.cellnet.calibrate import Calibration, calibration_for
from vision.cellnet.data import COVERED, EMPTY, PackCells, draw_box_cells, draw_tables
from vision.cellnet.model import (
    BOARD_CELL,
    DISPLAY_CELL,
    BoxPictures,
    CellNet,
    CellParts,
    Head,
    box_pictures,
    cell_net,
)
from vision.config import VisionConfig


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
    head = box_head(net, box, pack_random, 2, seed=5, ridge=RIDGE)
    rng = np.random.default_rng([5, 20261207, 2])  # the tables box_head drew
    drawn = draw_tables(pack_random, 2, rng, net.px)
    assert head.metric is not None
    parts = [net.parts(*cells.net_inputs(), box, head.metric) for cells in drawn]
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


RIDGE = VisionConfig().read.net_metric_ridge


def test_the_refinements_gradient_is_the_losss() -> None:
    """_comparison_loss's gradient by the metric against central differences, with cells
    whose candidates are allowed, rivals and left out."""
    rng = np.random.default_rng(0)
    d, w, b, k, c = 5, 4, 3, 8, 4
    net = cast(
        CellNet, SimpleNamespace(misfit=1.2, sharpness=10.0, head=SimpleNamespace(scale=19.0))
    )
    x = rng.normal(size=(b, d, w + 2, w + 2))
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    pictures = rng.normal(size=(k, d, w * w))
    pictures /= np.linalg.norm(pictures, axis=1, keepdims=True)
    chosen = np.stack([rng.choice(k - 1, c, replace=False) for _ in range(b)])
    chosen[1, 2] = k - 1  # the left-out candidate, chosen by no other comparison
    rows, cols = np.divmod(np.arange(w * w), w)
    shifts_at = np.stack([(rows + dy) * (w + 2) + cols + dx for dy in range(3) for dx in range(3)])
    shifts = rng.integers(0, 9, size=(b, c))
    ok = np.zeros((b, c), np.int8)
    ok[:, 0] = 1
    ok[0, 1] = 1
    ok[1, 2] = -1
    metric = np.eye(d) + 0.3 * rng.normal(size=(d, d))

    def loss(m: np.ndarray, shown: np.ndarray = pictures) -> float:
        return _comparison_loss(m, x, shown, chosen, shifts, shifts_at, ok, net)[0]

    _, grad = _comparison_loss(metric, x, pictures, chosen, shifts, shifts_at, ok, net)
    step = 1e-6
    for i in range(d):
        for j in range(d):
            e = np.zeros((d, d))
            e[i, j] = step
            numeric = (loss(metric + e) - loss(metric - e)) / (2 * step)
            assert abs(numeric - grad[i, j]) < 1e-6
    # A left-out candidate weighs nothing: another picture in its place changes nothing.
    moved = pictures.copy()
    moved[k - 1] = pictures[0]
    assert loss(metric) == loss(metric, moved)
    ok[1, 2] = 0  # as a rival it counts
    assert loss(metric) != loss(metric, moved)


def test_the_refined_metric_tells_the_boxs_tiles_apart_better(pack_random: Pack) -> None:
    net = cell_net()
    box = box_pictures(net, pack_random)
    rng = np.random.default_rng([5, 20261207, 2])
    drawn = [c for c in draw_tables(pack_random, 2, rng, net.px) if len(c.tiles)]
    maps = [net.maps(list(cells.crops)) for cells in drawn]
    metric = fit_metric(net, box, drawn, maps, RIDGE)
    assert metric is not None
    assert refine_metric(net, box, drawn, maps, metric, 0) is metric
    refined = refine_metric(net, box, drawn, maps, metric, 60, seed=1)
    assert refined.shape == metric.shape and np.isfinite(refined).all()
    assert not np.allclose(refined, metric)
    # The same tables and seed refine alike.
    assert np.array_equal(refined, refine_metric(net, box, drawn, maps, metric, 60, seed=1))

    def tiles_loss(m: np.ndarray) -> float:
        """The loss of the visible tile cells' truths among the tiles, by the network's head."""
        head = replace(net.head, metric=m)
        total, count = 0.0, 0
        for cells, raw in zip(drawn, maps, strict=True):
            parts = net.parts(*cells.net_inputs(), box, m, raw)
            ok = allowed(cells, box)[:, : parts.scores.shape[1]]
            shown = np.asarray(cells.tiles) >= 0
            logits = head.scale * parts.scores[shown].astype(np.float64)
            logits -= logits.max(axis=1, keepdims=True)
            p = np.exp(logits)
            p /= p.sum(axis=1, keepdims=True)
            total -= float(np.log(np.where(ok[shown], p, 0.0).sum(axis=1)).sum())
            count += int(shown.sum())
        return total / count

    assert tiles_loss(refined) < tiles_loss(metric)


class _Net:
    """What fit_metric asks of a network: its window and feature count."""

    window = 2
    features = 3


def _display_cells(tiles: np.ndarray) -> PackCells:
    """Display cells of one tile, `tiles` their labels (0, the tile; or COVERED)."""
    n = len(tiles)
    return PackCells(
        name="t",
        tile_ids=("t",),
        crops=np.zeros((n, 8, 8, 3), np.uint8),
        kinds=np.full(n, DISPLAY_CELL, np.int8),
        boards=np.zeros((n, 8, 8, 3), np.uint8),
        tiles=np.asarray(tiles, np.int16),
        rotations=np.zeros(n, np.int16),
        pictures=np.zeros((1, 16, 16, 3), np.uint8),
        raw=(np.zeros((8, 8, 3), np.uint8),),
        same=np.ones((1, 1), bool),
        tables=np.zeros(n, np.int16),
        tile_mm=45.0,
    )


def test_the_metric_weighs_less_the_direction_crops_stray_in() -> None:
    rng = np.random.default_rng(0)
    n, d, c = 40, 3, 4
    picture = rng.normal(size=(1, d, 2, 2)).astype(np.float32)
    picture /= np.linalg.norm(picture, axis=1, keepdims=True)
    box = BoxPictures(
        ("t",), np.repeat(picture.reshape(1, d, 4), 4, axis=0), np.eye(4, dtype=bool), 8
    )
    # Each crop is its picture (at the middle shift) strayed far along the first feature
    # and little along the others.
    maps = np.zeros((n, d, c, c), np.float32)
    maps[:, :, 1:3, 1:3] = picture
    maps[:, 0, 1:3, 1:3] += rng.normal(0.0, 0.3, size=(n, 2, 2))
    maps[:, 1:, 1:3, 1:3] += rng.normal(0.0, 0.02, size=(n, 2, 2, 2))
    cells = _display_cells(np.zeros(n))
    metric = fit_metric(_Net(), box, [cells], [maps], RIDGE)  # type: ignore[arg-type]
    assert metric is not None and np.allclose(metric, metric.T, atol=1e-5)
    gains = np.linalg.eigvalsh(metric)
    assert (gains > 0).all()
    # The strayed feature gains least; a ridge of r times the mean eigenvalue keeps any two
    # gains within a factor of sqrt(1 + D / r).
    assert metric[0, 0] < 0.75 * min(metric[1, 1], metric[2, 2])
    assert gains.max() / gains.min() <= np.sqrt(1 + _Net.features / RIDGE) + 1e-4


def test_no_visible_cell_sets_no_metric() -> None:
    box = BoxPictures(("t",), np.zeros((4, 3, 4), np.float32), np.eye(4, dtype=bool), 8)
    cells = _display_cells(np.full(1, COVERED))
    maps = [np.ones((1, 3, 4, 4), np.float32)]
    assert fit_metric(_Net(), box, [cells], maps, RIDGE) is None  # type: ignore[arg-type]
    for ridge in (0.0, -1.0, float("inf")):
        with pytest.raises(ValueError, match=r"^a metric's ridge must be a finite number above 0"):
            fit_metric(_Net(), box, [cells], maps, ridge)  # type: ignore[arg-type]


def test_a_turn_of_the_features_reads_as_no_metric(pack_random: Pack) -> None:
    """A rotation of the feature space keeps every cosine only if crops, pictures and board
    looks are all mapped by it."""
    net = cell_net()
    box = box_pictures(net, pack_random)
    cells = draw_box_cells(pack_random, 1, np.random.default_rng(4), px=net.px)
    turn, _ = np.linalg.qr(np.random.default_rng(0).normal(size=(net.features,) * 2))
    turned = replace(net.head, metric=turn.astype(np.float32))
    p = net.probabilities(*cells.net_inputs(), box, turned)
    assert np.allclose(p, net.probabilities(*cells.net_inputs(), box), atol=1e-4)


def test_no_tables_leave_the_networks_head(pack_random: Pack) -> None:
    net = cell_net()
    assert box_head(net, box_pictures(net, pack_random), pack_random, 0, ridge=RIDGE) is net.head


def test_a_calibration_keeps_its_head() -> None:
    head = Head(17.0, -0.5, np.arange(10, dtype=np.float32).reshape(2, 5), np.ones(2, np.float32))
    made = Calibration(0.95, 0.005, 0.95, 0.004, 3000, 40, 2000, 2, 1.2, head)
    again = Calibration.from_json(made.to_json())
    assert again == made and again.head is not None
    assert again.head.scale == 17.0 and np.array_equal(again.head.aux_weight, head.aux_weight)
    assert Calibration.from_json(replace(made, head=None).to_json()).head is None
    # A metric is square, over the features the linear head's input begins with.
    wide = replace(head, aux_weight=np.zeros((2, 8), np.float32))
    metric = np.arange(9, dtype=np.float32).reshape(3, 3)
    kept = Calibration.from_json(replace(made, head=replace(wide, metric=metric)).to_json())
    assert kept.head is not None and kept.head.metric is not None
    assert np.array_equal(kept.head.metric, metric)


@pytest.mark.parametrize(
    "metric",
    [
        [[1.0, 2.0]],
        [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]],
        [[float("nan"), 0.0], [0.0, 1.0]],
        [[1e9, 0.0], [0.0, 1.0]],
    ],
)
def test_a_head_refuses_a_damaged_metric(metric: list[list[float]]) -> None:
    head = Head(17.0, -0.5, np.zeros((2, 7), np.float32), np.ones(2, np.float32))
    Head.from_json(head.to_json() | {"metric": [[1.0, 0.0], [0.0, 1.0]]})
    with pytest.raises(ValueError, match=r"^not a head's weights$"):
        Head.from_json(head.to_json() | {"metric": metric})


def test_a_kept_calibration_with_a_damaged_metric_is_made_again(
    pack_random: Pack, tmp_path: Path
) -> None:
    net = cell_net()
    box = box_pictures(net, pack_random)
    settings: dict[str, Any] = dict(
        tables=1, target=0.005, confidence=0.95, cache=tmp_path, fit_tables=1, ridge=RIDGE
    )
    made = calibration_for(net, box, pack_random, **settings)
    assert made.head is not None and made.head.metric is not None
    (kept,) = [p for p in tmp_path.glob("calibration-*.json") if not p.name.endswith("-cells.json")]
    small = replace(made.head, metric=np.eye(3, dtype=np.float32))
    kept.write_text(replace(made, head=small).to_json(), encoding="utf-8")
    again = calibration_for(net, box, pack_random, **settings)
    assert again.head is not None and again.head.metric is not None
    assert again.head.metric.shape == (net.features, net.features)
