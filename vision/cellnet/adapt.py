"""A box's own head: the network's last weights fitted on renders of the box's pictures.

The network compares crops with pictures the same way for every box; how far a score must
rise before a tile is likelier than an empty cell or a covering hand depends on the box's
art (a board as pale as a hand, palms drawn faint). At a new box's first read the few
weights of the head (vision.cellnet.model.Head: the scores' scale, the board's bias, the
linear head of the empty and covered answers) are fitted on `tables` random tables of the
box's own pictures, drawn apart from the calibration's tables (another seed), by the
learning's objective (the negative log of the probability of every answer the truth allows;
a covered cell also allows what lies beneath it, as the calibration grades it), pulled
towards the network's head. The calibration then holds its rate for the
box's head on tables it was not fitted on.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numpy.typing import NDArray

from vision.box.pack import Pack
from vision.cellnet.data import COVERED, EMPTY, PackCells, draw_tables
from vision.cellnet.model import BOARD_CELL, BoxPictures, CellNet, CellParts, Head

__all__ = ["allowed", "box_head", "fit_head"]

#: Adam's steps, step size and the pull towards the network's head (per cell).
STEPS = 400
STEP_SIZE = 0.01
PULL = 1e-3


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
            truth = index[cells.tile_ids[label]] * 4 + (int(cells.rotations[i]) // 90) % 4
            out[i, :k] |= box.same[truth]
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


def box_head(
    net: CellNet,
    box: BoxPictures,
    pack: Pack,
    tables: int,
    seed: int = 0,
    progress: Callable[[int, int], None] | None = None,
) -> Head:
    """The box's own head, fitted on `tables` random tables of its pictures (the network's
    head when `tables` is 0 or none shows the kit)."""
    rng = np.random.default_rng([seed, 20261207, 2])
    drawn = [c for c in draw_tables(pack, tables, rng, net.px, progress) if len(c.tiles)]
    parts = [net.parts(*cells.net_inputs(), box) for cells in drawn]
    truths = [allowed(cells, box) for cells in drawn]
    if not parts:
        return net.head
    joined = CellParts(
        np.concatenate([p.scores for p in parts]),
        np.concatenate([p.board for p in parts]),
        np.concatenate([p.aux_in for p in parts]),
    )
    return fit_head(joined, np.concatenate(truths), net.head)
