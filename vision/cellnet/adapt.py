"""A box's own head: the network's last weights fitted on renders of the box's pictures.

The network compares crops with pictures the same way for every box; how far a score must
rise before a tile is likelier than an empty cell or a covering hand depends on the box's
art (a board as pale as a hand, palms drawn faint), and which of the features' directions
tell its tiles apart rather than its camera's light and blur depends on its art too. At a
new box's first read, on `tables` random tables of the box's own pictures, drawn apart from
the calibration's tables (another seed):

- the **metric** (vision.cellnet.model.Head.metric) is set in closed form: each visible
  cell's map is laid on its truth's picture (or a board cell's empty look) at the one of
  the comparison's shifts where they agree most (summed cosine), and the second moment of
  the places' differences, with a ridge of `ridge` times its mean eigenvalue
  (vision.config.ReadConfig.net_metric_ridge), is whitened (its inverse square root), so
  the directions in which this box's crops stray from their own pictures weigh less;
- the metric is then learnt further (`refine_metric`,
  vision.config.ReadConfig.net_metric_steps steps of Adam), so that each visible tile cell
  outscores its likeliest rivals of another meaning (the look-alikes a box's small symbols
  make), pulled towards the closed form;
- then the few weights of the head (the scores' scale, the board's bias, the linear head of
  the empty and covered answers) are fitted under that metric by the learning's objective
  (the negative log of the probability of every answer the truth allows; a covered cell
  also allows what lies beneath it, as the calibration grades it), pulled towards the
  network's head.

The calibration then holds its rate for the box's head on tables it was not fitted on.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

import numpy as np
from numpy.typing import NDArray

from vision.box.pack import Pack
from vision.cellnet.data import COVERED, EMPTY, PackCells, draw_tables
from vision.cellnet.model import (
    BOARD_CELL,
    BoxPictures,
    CellNet,
    CellParts,
    Floats,
    Head,
    _measure,
    _normalised,
)

__all__ = ["allowed", "box_head", "fit_head", "fit_metric", "refine_metric", "truth_candidate"]

Real = NDArray[np.floating[Any]]

#: Adam's steps, step size and the pull towards the network's head (per cell).
STEPS = 400
STEP_SIZE = 0.01
PULL = 1e-3


def truth_candidate(index: dict[str, int], cells: PackCells, i: int, label: int) -> int:
    """The candidate (tile index * 4 + quarter turns) of cell `i`, whose truth is tile
    `label` of `cells`; `index` gives each tile id's place among the box's candidates."""
    return index[cells.tile_ids[label]] * 4 + (int(cells.rotations[i]) // 90) % 4


def allowed(cells: PackCells, box: BoxPictures) -> NDArray[np.bool_]:
    """(N, 4T + 3): the answers each cell's truth allows, over [candidates..., empty board,
    empty, covered]; a covered cell may also be named with what lies beneath it."""
    k = len(box.windows)
    index = {t: i for i, t in enumerate(box.tile_ids)}
    out = np.zeros((len(cells.tiles), k + 3), bool)
    for i, label in enumerate(int(t) for t in cells.tiles):
        if label == COVERED:
            out[i, k + 2] = True
            if cells.beneath is None:
                continue
            label = int(cells.beneath[i])
        if label == EMPTY:
            out[i, k + 1] = True
            out[i, k] = int(cells.kinds[i]) == BOARD_CELL
        elif label >= 0:
            out[i, :k] |= box.same[truth_candidate(index, cells, i, label)]
    return out


def fit_head(parts: CellParts, allowed: NDArray[np.bool_], start: Head) -> Head:
    """The head that makes the allowed answers likeliest over `parts`, from `start` and
    pulled towards it (Adam, STEPS steps; deterministic)."""
    n = len(parts.scores)
    if not n:
        return start
    k = parts.scores.shape[1]
    scores = parts.scores.astype(np.float64)
    on_board = ~np.isnan(parts.board)
    board = np.nan_to_num(parts.board).astype(np.float64)
    aux_in = parts.aux_in.astype(np.float64)
    begin = [
        np.array(start.scale, np.float64),
        np.array(start.board_bias, np.float64),
        start.aux_weight.astype(np.float64),
        start.aux_bias.astype(np.float64),
    ]
    params = [p.copy() for p in begin]
    first = [np.zeros_like(p) for p in params]
    second = [np.zeros_like(p) for p in params]
    for step in range(1, STEPS + 1):
        scale, bias, weight, aux_bias = params
        logits = np.concatenate(
            [
                scale * scores,
                np.where(on_board, scale * board + bias, -1e4)[:, None],
                aux_in @ weight.T + aux_bias,
            ],
            axis=1,
        )
        logits -= logits.max(axis=1, keepdims=True)
        e = np.exp(logits)
        p = e / e.sum(axis=1, keepdims=True)
        q = np.where(allowed, e, 0.0)
        q /= q.sum(axis=1, keepdims=True)
        g = (p - q) / n  # d(mean loss) / d(logits)
        grads = [
            (g[:, :k] * scores).sum() + (g[:, k] * board * on_board).sum(),
            (g[:, k] * on_board).sum(),
            g[:, k + 1 :].T @ aux_in,
            g[:, k + 1 :].sum(axis=0),
        ]
        for j, grad in enumerate(grads):
            grad = grad + PULL * (params[j] - begin[j])
            first[j] = 0.9 * first[j] + 0.1 * grad
            second[j] = 0.999 * second[j] + 0.001 * grad**2
            m = first[j] / (1 - 0.9**step)
            v = second[j] / (1 - 0.999**step)
            params[j] = params[j] - STEP_SIZE * m / (np.sqrt(v) + 1e-8)
    return Head(
        float(params[0]),
        float(params[1]),
        params[2].astype(np.float32),
        params[3].astype(np.float32),
    )


def fit_metric(
    net: CellNet,
    box: BoxPictures,
    drawn: list[PackCells],
    maps: list[Floats],
    ridge: float,
) -> Floats | None:
    """The box's metric (see the module) from its drawn tables and their crops' raw `maps`,
    with `ridge` (above 0); None when no visible cell can be laid on its picture."""
    if not 0 < ridge < float("inf"):
        raise ValueError(f"a metric's ridge must be a finite number above 0, not {ridge}")
    w = net.window
    index = {t: i for i, t in enumerate(box.tile_ids)}
    scatter = np.zeros((net.features, net.features))
    places = 0
    for cells, raw in zip(drawn, maps, strict=True):
        _crops, kinds, boards = cells.net_inputs()
        x = raw / (np.linalg.norm(raw, axis=1, keepdims=True) + 1e-6)
        pairs: list[tuple[int, Floats]] = []
        looks: list[int] = []
        for i, label in enumerate(int(t) for t in cells.tiles):
            if label == COVERED:
                continue
            if label == EMPTY:
                look = boards[i]
                # A board with no picture has a blank look: nothing to learn from it.
                if int(kinds[i]) == BOARD_CELL and look is not None and look.any():
                    looks.append(i)
                continue
            pairs.append((i, box.windows[truth_candidate(index, cells, i, label)]))
        if looks:
            made = net.look_maps([b for i in looks if (b := boards[i]) is not None])
            seen = made[:, :, 1 : 1 + w, 1 : 1 + w].reshape(len(looks), net.features, -1)
            pairs += list(zip(looks, seen, strict=True))
        for i, window in pairs:
            shifts = [
                x[i, :, dy : dy + w, dx : dx + w].reshape(net.features, -1)
                for dy in range(3)
                for dx in range(3)
            ]
            best = max(shifts, key=lambda part: float((part * window).sum()))
            d = (best - window).astype(np.float64)
            scatter += d @ d.T
            places += d.shape[1]
    if not places:
        return None
    scatter /= places
    mean = np.trace(scatter) / net.features
    if not mean > 0:
        return None
    values, vectors = np.linalg.eigh(scatter + ridge * mean * np.eye(net.features))
    metric = vectors @ np.diag(np.maximum(values, ridge * mean) ** -0.5) @ vectors.T
    metric /= np.abs(metric).max()  # the scale is normalised away; keep it near 1
    return np.asarray(metric, np.float32) if np.isfinite(metric).all() else None


#: The refinement's rivals a cell (the likeliest candidates of other meanings), cells a step,
#: step size, pull towards the closed form, and steps between two choices of the rivals and
#: shifts. A box's calibration is kept by its settings, not these: a change to them changes
#: calibrate.VERSION too.
RIVALS = 12
BATCH = 128
REFINE_STEP = 0.003
REFINE_PULL = 0.01
SHIFT_EVERY = 50


def refine_metric(
    net: CellNet,
    box: BoxPictures,
    drawn: list[PackCells],
    maps: list[Floats],
    metric: Floats,
    steps: int,
    seed: int = 0,
    progress: Callable[[int, int], None] | None = None,
) -> Floats:
    """`metric` learnt further, `steps` steps of Adam on the box's drawn tables, so that each
    visible tile cell's own candidates outscore its `RIVALS` likeliest rivals of another
    meaning (the comparison's softmax over them, by the network's scale), pulled towards
    `metric`. The rivals, and the shift each comparison is made at, are those whose
    cosines sum highest (the comparison's mean term), chosen again every `SHIFT_EVERY`
    steps; `progress` (steps done, of all)."""
    if steps <= 0:
        return metric
    w, d, c = net.window, net.features, net.cells
    index = {t: i for i, t in enumerate(box.tile_ids)}
    xs: list[Floats] = []
    truths: list[int] = []
    for cells, raw in zip(drawn, maps, strict=True):
        for i, label in enumerate(int(t) for t in cells.tiles):
            if label >= 0:
                xs.append(raw[i])
                truths.append(truth_candidate(index, cells, i, label))
    if not xs:
        return metric
    x = _normalised(np.stack(xs).astype(np.float32))  # (N, D, c, c) unit places
    n = len(x)
    pictures = box.windows  # (K, D, L) unit places
    same = box.same[truths]  # (N, K): the candidates each cell's truth allows
    rivals = min(RIVALS, int((~same).sum(axis=1).min()))
    if rivals < 1:
        return metric
    # Each cell's own candidates (a turned tile may mean the same; a cell with fewer than
    # the most fills the rest with its first, left out of the softmax), then its rivals.
    width = int(same.sum(axis=1).max())
    own = np.argsort(~same, axis=1, kind="stable")[:, :width]
    own_ok = np.take_along_axis(same, own, axis=1)
    own = np.where(own_ok, own, own[:, :1])
    start = metric.astype(np.float32)
    m = start.copy()
    first = np.zeros_like(m)
    second = np.zeros_like(m)
    rng = np.random.default_rng([seed, 20261208])
    # The crop's window at each of the 3 x 3 shifts: place (dy + r, dx + q) of its map.
    rows, cols = np.divmod(np.arange(w * w), w)
    shifts_at = np.stack([(rows + dy) * c + cols + dx for dy in range(3) for dx in range(3)])
    chosen = np.zeros((n, width + rivals), np.intp)
    shifts = np.zeros((n, width + rivals), np.intp)
    ok = np.zeros((n, width + rivals), np.int8)  # 1 allowed, 0 a rival, -1 left out
    ok[:, :width] = np.where(own_ok, 1, -1)

    for step in range(steps):
        if progress and step % 10 == 0:
            progress(step, steps)
        if step % SHIFT_EVERY == 0:
            # Mapped as the reader maps them (vision.cellnet.model._measure).
            pm = _measure(pictures, m).reshape(len(pictures), -1)
            for lo in range(0, n, BATCH):
                part = slice(lo, lo + BATCH)
                here = _measure(x[part], m).reshape(-1, d, c * c)
                windows = here[:, :, shifts_at].transpose(0, 2, 1, 3).reshape(-1, d * w * w)
                summed = (windows @ pm.T).reshape(len(here), 9, -1)  # (B, 9, K)
                rival = np.where(same[part], -np.inf, summed.max(axis=1))
                top = np.argsort(-rival, axis=1, kind="stable")[:, :rivals]
                chosen[part] = np.concatenate([own[part], top], axis=1)
                best = summed.argmax(axis=1)
                shifts[part] = np.take_along_axis(best, chosen[part], axis=1)
        batch = rng.choice(n, min(BATCH, n), replace=False)
        _loss, grad = _comparison_loss(
            m, x[batch], pictures, chosen[batch], shifts[batch], shifts_at, ok[batch], net
        )
        grad += REFINE_PULL * (m - start)
        first = 0.9 * first + 0.1 * grad
        second = 0.999 * second + 0.001 * grad**2
        mh = first / (1 - 0.9 ** (step + 1))
        vh = second / (1 - 0.999 ** (step + 1))
        m = np.asarray(m - REFINE_STEP * mh / (np.sqrt(vh) + 1e-8), np.float32)
    if progress:
        progress(steps, steps)
    m /= np.abs(m).max()
    return np.asarray(m, np.float32) if np.isfinite(m).all() else metric


def _comparison_loss(
    m: Real,
    x: Real,
    pictures: Real,
    chosen: NDArray[np.intp],
    shifts: NDArray[np.intp],
    shifts_at: NDArray[np.intp],
    ok: NDArray[np.int8],
    net: CellNet,
) -> tuple[float, Real]:
    """The mean loss of `refine_metric` over the cells of unit maps `x` (B, D, c, c), each
    compared with its `chosen` candidates (B, C) of `pictures` (K, D, L) at its `shifts`
    (B, C; the crop's places of each in `shifts_at` (9, L)) under metric `m`, by `ok`
    (B, C) 1 where allowed, 0 where a rival, -1 where left out; and its gradient by `m`."""
    alpha, sharp, scale = net.misfit, net.sharpness, net.head.scale
    b, d = len(x), x.shape[1]
    given = x.reshape(b, d, -1).transpose(0, 2, 1)  # (B, c * c, D)
    mapped = given @ m.T
    xnorm = np.linalg.norm(mapped, axis=2, keepdims=True) + 1e-9
    flat = mapped / xnorm
    given_p = pictures.transpose(0, 2, 1)  # (K, L, D)
    mapped_p = given_p @ m.T
    pnorm = np.linalg.norm(mapped_p, axis=2, keepdims=True) + 1e-9
    pm = mapped_p / pnorm
    rows = np.arange(b)[:, None, None]
    places = shifts_at[shifts]  # (B, C, L)
    crop = flat[rows, places]  # (B, C, L, D)
    pic = pm[chosen]  # (B, C, L, D)
    cos = np.einsum("bcld,bcld->bcl", crop, pic, optimize=True)
    e = np.exp(-sharp * cos)
    soft = e / e.sum(axis=2, keepdims=True)
    score = cos.mean(axis=2) - alpha * (1.0 + np.log(e.mean(axis=2)) / sharp)
    logits = np.where(ok >= 0, scale * score, -np.inf)
    logits -= logits.max(axis=1, keepdims=True)
    p = np.exp(logits)
    total = p.sum(axis=1)
    q = np.where(ok > 0, p, 0.0)
    kept = q.sum(axis=1)
    loss = float(np.mean(np.log(total) - np.log(kept)))
    p /= total[:, None]
    q /= kept[:, None]
    g_cos = (scale * (p - q) / b)[:, :, None] * (1.0 / cos.shape[2] + alpha * soft)
    # Each cosine's gradient through both unit features and their normalisation, as a sum
    # of outer products over every comparison's places (no gradient laid on places first):
    # d cos / d(metric @ v) = (other - cos * own) / |metric @ v| for either side's v.
    cos = cos[..., None]
    g = g_cos[..., None]
    crop_side = (g / xnorm[rows, places]) * (pic - cos * crop)
    pic_side = (g / pnorm[chosen]) * (crop - cos * pic)
    grad = crop_side.reshape(-1, d).T @ given[rows, places].reshape(-1, d)
    grad += pic_side.reshape(-1, d).T @ given_p[chosen].reshape(-1, d)
    return loss, grad


def box_head(
    net: CellNet,
    box: BoxPictures,
    pack: Pack,
    tables: int,
    seed: int = 0,
    progress: Callable[[int, int], None] | None = None,
    *,
    ridge: float,
    metric_steps: int = 0,
) -> Head:
    """The box's own head, its metric (with `ridge`, then `metric_steps` steps of
    `refine_metric`) and weights fitted on `tables` random tables of its pictures (the
    network's head when `tables` is 0 or none shows the kit); `progress` (work done, of
    all: a table drawn or a step of the metric each)."""
    rng = np.random.default_rng([seed, 20261207, 2])
    whole = tables + metric_steps

    def drawing(i: int, _n: int) -> None:
        if progress:
            progress(i, whole)

    def learning(i: int, _n: int) -> None:
        if progress:
            progress(tables + i, whole)

    drawn = [c for c in draw_tables(pack, tables, rng, net.px, drawing) if len(c.tiles)]
    if not drawn:
        return net.head
    maps = [net.maps(list(cells.crops)) for cells in drawn]
    metric = fit_metric(net, box, drawn, maps, ridge)
    if metric is not None:
        metric = refine_metric(net, box, drawn, maps, metric, metric_steps, seed, learning)
    parts = [
        net.parts(*cells.net_inputs(), box, metric, raw)
        for cells, raw in zip(drawn, maps, strict=True)
    ]
    truths = [allowed(cells, box) for cells in drawn]
    joined = CellParts(
        np.concatenate([p.scores for p in parts]),
        np.concatenate([p.board for p in parts]),
        np.concatenate([p.aux_in for p in parts]),
    )
    return replace(fit_head(joined, np.concatenate(truths), net.head), metric=metric)
