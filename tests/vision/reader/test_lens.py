"""A lens that bends straight lines: its frames straightened back as a straight camera's.

Measuring the bend from the kit's markers (`app.lens.photo_markers`) and reading a bent
table are tested with `companion lens` in tests/app/test_lens.py."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from vision.reader.lens import Lens


@pytest.mark.parametrize("k", [0.12, -0.2])
def test_straightening_undoes_the_bend(k: float) -> None:
    rng = np.random.default_rng(3)
    straight = np.asarray(
        cv2.GaussianBlur(rng.integers(0, 255, (360, 640, 3), dtype=np.uint8), (0, 0), 4), np.uint8
    )
    lens = Lens(k)
    back = lens.straighten(lens.bend(straight))
    cw, ch = lens.canvas(640, 360)
    assert back.shape == (ch, cw, 3)
    x0, y0 = (cw - 640) // 2, (ch - 360) // 2
    # The middle, which the seen frame shows whatever the bend: as it was, give or take
    # resampling.
    inner = np.abs(
        back[y0 + 90 : y0 + 270, x0 + 140 : x0 + 500].astype(int)
        - straight[90:270, 140:500].astype(int)
    )
    assert inner.mean() < 2.0
    assert Lens(0.0).straighten(straight) is straight
    with pytest.raises(ValueError, match=r"between -0\.3 and 0\.5"):
        Lens(0.8)
