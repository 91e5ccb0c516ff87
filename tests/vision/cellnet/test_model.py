"""The committed cell network read through OpenCV's dnn module (vision.cellnet.model)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

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


def test_board_looks_are_embedded_once_and_give_the_same_maps() -> None:
    from vision.cellnet.model import CellNet, _normalised

    net = CellNet()
    rng = np.random.default_rng(1)
    looks = [rng.integers(0, 256, (net.px, net.px, 3), dtype=np.uint8) for _ in range(3)]
    first = net.look_maps(looks)
    assert np.allclose(first, _normalised(net.maps(looks)), atol=1e-6)
    embedded: list[int] = []
    maps = net.maps

    def counted(images: Sequence[np.ndarray], batch: int = 64) -> np.ndarray:
        embedded.append(len(images))
        return maps(images, batch)

    net.maps = counted  # type: ignore[method-assign]
    again = net.look_maps([looks[2].copy(), looks[0].copy(), looks[1]])
    assert embedded == []
    assert np.array_equal(again, first[[2, 0, 1]])
    new = rng.integers(0, 256, (net.px, net.px, 3), dtype=np.uint8)
    net.look_maps([looks[0], new])
    assert embedded == [1]


def test_a_network_whose_sharpness_would_overflow_the_comparisons_is_refused(
    tmp_path: Path,
) -> None:
    from vision.cellnet.model import DATA, MAX_SHARPNESS, CellNet

    meta = json.loads((DATA / "cellnet.json").read_text(encoding="utf-8"))
    meta["head"]["sharpness"] = MAX_SHARPNESS + 1
    head = tmp_path / "cellnet.json"
    head.write_text(json.dumps(meta), encoding="utf-8")
    with pytest.raises(ValueError, match="sharpness"):
        CellNet(DATA / "cellnet.onnx", head)


def test_the_comparison_shared_among_threads_is_the_agreement_over_shifts(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from vision.cellnet import model
    from vision.cellnet.model import _agreement, _normalised, _shifted

    monkeypatch.setattr(model, "_COMPARERS", 2)
    rng = np.random.default_rng(3)
    crops = _normalised(rng.standard_normal((7, 32, 12, 12)).astype(np.float32))
    windows = _normalised(rng.standard_normal((130, 32, 100)).astype(np.float32))
    shared = _shifted(crops, windows, 10, 0.4, 20.0)
    assert shared.shape == (7, 130)
    # The agreement written out, shift by shift, for every crop and window.
    best = np.full((7, 130), -np.inf, np.float32)
    for dy in range(3):
        for dx in range(3):
            part = crops[:, :, dy : dy + 10, dx : dx + 10].reshape(7, 32, -1)
            cos = np.einsum("ndl,kdl->nkl", part, windows)
            best = np.maximum(best, _agreement(cos, 0.4, 20.0))
    assert np.allclose(shared, best, rtol=1e-5, atol=1e-6)
