"""vision.box.learning: the random cameras the judge learns from."""

from __future__ import annotations

import numpy as np

from vision.box.learning import random_effects


def test_the_cameras_learnt_from_are_as_often_sharp_as_soft() -> None:
    """Blurs are drawn log-uniform from a tenth of a pixel to two and a half: about half
    under half a pixel (sharp cameras, sharper than the renderer's own drawing), and about
    half the cameras sharpen their pictures themselves."""
    rng = np.random.default_rng(0)
    drawn = [random_effects(rng) for _ in range(2000)]
    blurs = np.array([e.blur_px for e in drawn])
    assert blurs.min() >= 0.1 and blurs.max() <= 2.5
    assert 0.45 <= float((blurs < 0.5).mean()) <= 0.55
    sharpened = np.array([e.sharpen for e in drawn])
    assert 0.45 <= float((sharpened > 0).mean()) <= 0.55
    assert sharpened[sharpened > 0].min() >= 0.3 and sharpened.max() <= 1.5
