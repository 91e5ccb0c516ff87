"""The run-time reader gives what the learning's own code gave (vision/data/cellnet-check.npz,
written by vision.cellnet.train.write_check with the network)."""

from __future__ import annotations

import numpy as np

from vision.cellnet.model import DATA, BoxPictures, _normalised, cell_net


def test_opencv_and_numpy_give_the_learnings_probabilities() -> None:
    with np.load(DATA / "cellnet-check.npz") as check:
        net = cell_net()
        maps = _normalised(net.maps(list(check["refs"])))
        w = net.window
        windows = maps[:, :, 1 : 1 + w, 1 : 1 + w].reshape(len(maps), maps.shape[1], -1)
        box = BoxPictures(
            tuple(f"t{i}" for i in range(len(maps) // 4)),
            np.ascontiguousarray(windows),
            check["same"],
            net.px,
        )
        kinds = [int(k) for k in check["kinds"]]
        boards = [b if k == 1 else None for b, k in zip(check["boards"], kinds, strict=True)]
        p = net.probabilities(list(check["crops"]), kinds, boards, box)
        assert p.shape == check["probabilities"].shape
        assert np.abs(p - check["probabilities"]).max() < 1e-4
