"""The motion gate: has the table been still long enough for a read (hands gone)?

Fed with the camera's small grey preview frames and their times, it compares each frame
with the previous one (after a little blur, so sensor noise does not count as motion); the
table is still once no frame has changed for `still_seconds`.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np
from numpy.typing import NDArray

from vision.config import MotionConfig


@dataclass
class StillnessGate:
    """Still after `config.still_seconds` without motion; `reset()` starts a new wait."""

    config: MotionConfig = MotionConfig()  # noqa: RUF009 - frozen dataclass, shared is fine
    _previous: NDArray[np.uint8] | None = None
    _moved_at: float | None = None
    _first_at: float | None = None

    def reset(self) -> None:
        self._previous = None
        self._moved_at = None
        self._first_at = None

    def moving(self, frame: NDArray[np.uint8]) -> bool:
        """Whether `frame` differs from the previous one (and remember it)."""
        smooth = np.asarray(cv2.GaussianBlur(frame, (0, 0), self.config.blur_sigma_px), np.uint8)
        previous, self._previous = self._previous, smooth
        if previous is None or previous.shape != smooth.shape:
            return False
        changed = cv2.absdiff(smooth, previous) > self.config.pixel_threshold
        return bool(changed.mean() > self.config.moving_fraction)

    def feed(self, image: NDArray[np.uint8], at: float) -> bool:
        """Take one preview frame; True once the table has been still long enough."""
        if self._first_at is None:
            self._first_at = at
        if self.moving(image):
            self._moved_at = at
        since = self._moved_at if self._moved_at is not None else self._first_at
        return at - since >= self.config.still_seconds
