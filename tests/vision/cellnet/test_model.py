"""The committed cell network read through OpenCV's dnn module (vision.cellnet.model)."""

from __future__ import annotations

import numpy as np

from vision.box.pack import Pack
from vision.cellnet.geometry import MARGIN_GREY, net_picture, turned
from vision.cellnet.model import BOARD_CELL, DISPLAY_CELL, ROTATIONS, STORAGE_CELL, cell_net


def _on_the_mat(picture: np.ndarray, tile_mm: float) -> np.ndarray:
    """A tile picture laid on the white mat, as a crop in the network's geometry."""
    square = net_picture(picture, tile_mm, cell_net().px)
    margin = np.all(square == MARGIN_GREY, axis=2)
    square[margin] = 240
    return square


def test_every_crop_gets_a_distribution_over_every_answer(pack_random: Pack) -> None:
    net = cell_net()
    box = net.pictures(dict(pack_random.tiles), pack_random.catalogue)
    rng = np.random.default_rng(0)
    crops = [rng.integers(0, 256, (net.px, net.px, 3), dtype=np.uint8) for _ in range(5)]
    kinds = [DISPLAY_CELL, BOARD_CELL, STORAGE_CELL, BOARD_CELL, DISPLAY_CELL]
    boards = [None, crops[0], None, None, None]
    p = net.probabilities(crops, kinds, boards, box)
    assert p.shape == (5, 4 * len(box.tile_ids) + 3)
    assert np.allclose(p.sum(axis=1), 1.0, atol=1e-5)
    # Only a board cell whose board look is given can be an empty board.
    k = 4 * len(box.tile_ids)
    assert p[0, k] < 1e-3 and p[2, k] < 1e-3 and p[3, k] < 1e-3


def test_a_tile_laid_at_each_rotation_is_named_with_its_meaning(pack_random: Pack) -> None:
    """A box never learnt from: its own pictures, turned and laid on the mat, read back."""
    net = cell_net()
    box = net.pictures(dict(pack_random.tiles), pack_random.catalogue)
    tile_mm = pack_random.tile_mm
    crops, truths = [], []
    for t, tile_id in enumerate(box.tile_ids):
        for r, rotation in enumerate(ROTATIONS):
            picture = turned(np.asarray(pack_random.tiles[tile_id], np.uint8), rotation)
            crops.append(_on_the_mat(picture, tile_mm))
            truths.append(4 * t + r)
    p = net.probabilities(crops, [DISPLAY_CELL] * len(crops), [None] * len(crops), box)
    answers = net.answers(p, box, threshold=0.0)
    right = 0
    for (read, _sure), truth in zip(answers, truths, strict=True):
        if read.tile is not None:
            got = 4 * box.tile_ids.index(read.tile) + ROTATIONS.index(read.rotation)
            right += bool(box.same[truth, got])
    assert right >= 0.95 * len(truths)
