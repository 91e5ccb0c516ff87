"""The motion gate: is the table still (hands gone) so a read can be trusted, and what changed.

Fed with the camera's low-resolution grey preview frames and their times (seconds, any
clock), `MotionGate.feed` says MOVING (this frame differs from the last), SETTLING (no
motion yet for `still_seconds`, or an arm still reaching in from the edge of the view) or
STILL. Time is passed in, nothing sleeps and nothing runs in the background, so the gate
is a pure state machine: the same frames and times always give the same answers.

`changed_areas` compares the frame of the last read with the current one area by area
(display, seat n), rectified so a change is measured in mm² of the table, and says which
areas changed.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import Enum

import cv2
import numpy as np
from numpy.typing import NDArray

from vision.config import MotionConfig
from vision.reader.areas import AreaKey, AreaPose, area_outline_mm, cell_crop, crop_matrix

Gray = NDArray[np.uint8]


class GateState(Enum):
    """What the gate makes of the latest frame. Truthy only when STILL, so the live loop's
    `if gate.feed(frame, t):` reads "if the table is still"."""

    MOVING = "moving"
    SETTLING = "settling"
    STILL = "still"

    def __bool__(self) -> bool:
        return self is GateState.STILL


class MotionGate:
    """Still after `still_seconds` without motion and with no arm reaching in from the edge.

    An arm left lying across the edge of the view (changed against the last still frame and
    touching the edge) keeps the gate SETTLING for up to `max_hand_wait_seconds`; after that
    it is taken as part of the table (a sleeve, a bag) and the gate goes STILL. A `mask`
    (255 where the kit lies, e.g. from `kit_mask`) limits both tests to the table's kit.
    """

    def __init__(self, config: MotionConfig | None = None, mask: Gray | None = None) -> None:
        self.config = config or MotionConfig()
        self.mask = None if mask is None else np.asarray(mask > 0, bool)
        self.reset()

    def reset(self) -> None:
        """Forget everything seen: the next frame starts a new wait."""
        self._previous: NDArray[np.float32] | None = None
        self._reference: NDArray[np.float32] | None = None
        self._moved_at: float | None = None
        self.state = GateState.SETTLING
        self.changed_fraction = 0.0
        self.arm_in_view = False

    @property
    def reference(self) -> NDArray[np.float32] | None:
        """The smoothed frame at which the gate last went still (None before)."""
        return self._reference

    def feed(self, frame_small: NDArray[np.uint8], t: float) -> GateState:
        """Take one small frame (grey, or BGR turned grey) taken at time `t` (seconds)."""
        smooth = _smooth(frame_small, self.config)
        previous, self._previous = self._previous, smooth
        if previous is None or previous.shape != smooth.shape:
            self._moved_at = t
            self.state = GateState.SETTLING
            return self.state
        changed = _changed(previous, smooth, self.config.pixel_threshold, self._mask(smooth))
        self.changed_fraction = float(changed.mean())
        if self.changed_fraction > self.config.moving_fraction:
            self._moved_at = t
            self.state = GateState.MOVING
            return self.state
        quiet = t - (self._moved_at if self._moved_at is not None else t)
        if quiet < self.config.still_seconds:
            self.state = GateState.SETTLING
            return self.state
        self.arm_in_view = self._arm_in_view(smooth)
        if self.arm_in_view and quiet < self.config.max_hand_wait_seconds:
            self.state = GateState.SETTLING
            return self.state
        if self.state is not GateState.STILL:
            self._reference = smooth
        self.state = GateState.STILL
        return self.state

    def _mask(self, smooth: NDArray[np.float32]) -> NDArray[np.bool_] | None:
        if self.mask is None:
            return None
        if self.mask.shape != smooth.shape:
            raise ValueError(
                f"the motion mask is {self.mask.shape[::-1]} but frames are {smooth.shape[::-1]}"
            )
        return self.mask

    def _arm_in_view(self, smooth: NDArray[np.float32]) -> bool:
        """Changed pixels against the last still frame that reach the edge of the view."""
        if self._reference is None or self._reference.shape != smooth.shape:
            return False
        mask = self._mask(smooth)
        changed = _changed(self._reference, smooth, self.config.pixel_threshold, mask)
        if changed.mean() <= self.config.moving_fraction:
            return False
        edge = np.zeros(changed.shape, bool)
        edge[[0, -1], :] = True
        edge[:, [0, -1]] = True
        if mask is not None:
            inner = cv2.erode(mask.astype(np.uint8), np.ones((3, 3), np.uint8)).astype(bool)
            edge |= mask & ~inner
        count, labels = cv2.connectedComponents(changed.astype(np.uint8), connectivity=8)
        if count <= 1:
            return False
        touching = np.unique(labels[edge & changed])
        touching = touching[touching > 0]
        if touching.size == 0:
            return False
        sizes = np.bincount(labels.ravel(), minlength=count)
        # An arm is a sizeable patch, not a few noisy pixels at the border.
        return bool(sizes[touching].max() >= self.config.moving_fraction * changed.size)


def changed_areas(
    reference_small: NDArray[np.uint8],
    current_small: NDArray[np.uint8],
    poses_small: Mapping[AreaKey, AreaPose],
    config: MotionConfig | None = None,
) -> set[AreaKey]:
    """The areas (display, seat n) that look different in `current_small` than in
    `reference_small`: more than `min_changed_mm2` of the area changed. `poses_small` are the
    areas' poses in the small frames (`AreaPose.scaled(small_width / full_width)`)."""
    config = config or MotionConfig()
    if reference_small.shape[:2] != current_small.shape[:2]:
        raise ValueError("the two frames must have the same size")
    ref = _grey(reference_small)
    cur = _grey(current_small)
    ppm = config.compare_px_per_mm
    out: set[AreaKey] = set()
    kernel = np.ones((2, 2), np.uint8)
    for area, pose in poses_small.items():
        outline = area_outline_mm(pose.geometry)
        (x0, y0), (x1, y1) = outline.min(axis=0), outline.max(axis=0)
        size = float(max(x1 - x0, y1 - y0))
        centre = (float(x0 + x1) / 2, float(y0 + y1) / 2)
        a = cell_crop(ref, pose, centre, size, ppm)
        b = cell_crop(cur, pose, centre, size, ppm)
        # Pixels outside the frame repeat its edge; leave them out.
        inside = _inside(ref.shape, pose, centre, size, ppm)
        fa = np.asarray(cv2.GaussianBlur(a.astype(np.float32), (0, 0), 0.8), np.float32)
        fb = np.asarray(cv2.GaussianBlur(b.astype(np.float32), (0, 0), 0.8), np.float32)
        changed = _changed(fa, fb, config.pixel_threshold, inside)
        changed = cv2.morphologyEx(changed.astype(np.uint8), cv2.MORPH_OPEN, kernel) > 0
        n = a.shape[0]
        mm2_per_px = (size / n) ** 2
        if float(changed.sum()) * mm2_per_px > config.min_changed_mm2:
            out.add(area)
    return out


def kit_mask(shape: tuple[int, int], poses_small: Mapping[AreaKey, AreaPose]) -> Gray:
    """255 over every located area's outline in a small frame of `shape` (rows, cols)."""
    mask = np.zeros(shape, np.uint8)
    for pose in poses_small.values():
        pts = pose.project(area_outline_mm(pose.geometry))
        cv2.fillConvexPoly(mask, np.round(pts).astype(np.int32), 255)
    return mask


def _grey(frame: NDArray[np.uint8]) -> Gray:
    if frame.ndim == 3:
        return np.asarray(cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY), np.uint8)
    if frame.ndim != 2:
        raise ValueError("a frame must be grey (rows, cols) or colour (rows, cols, 3)")
    return np.asarray(frame, np.uint8)


def _smooth(frame: NDArray[np.uint8], config: MotionConfig) -> NDArray[np.float32]:
    grey = _grey(frame).astype(np.float32)
    if config.blur_sigma_px > 0:
        grey = np.asarray(cv2.GaussianBlur(grey, (0, 0), config.blur_sigma_px), np.float32)
    return np.asarray(grey, np.float32)


def _changed(
    a: NDArray[np.float32],
    b: NDArray[np.float32],
    threshold: float,
    mask: NDArray[np.bool_] | None,
) -> NDArray[np.bool_]:
    """Pixels whose grey value moved by more than `threshold`, after taking out a change of
    the whole picture's brightness (the camera's auto exposure, a cloud)."""
    diff = b.astype(np.float32) - a.astype(np.float32)
    sample = diff if mask is None else diff[mask]
    shift = float(np.median(sample)) if sample.size else 0.0
    changed = np.abs(diff - shift) > threshold
    if mask is not None:
        changed &= mask
    return np.asarray(changed, bool)


def _inside(
    shape: tuple[int, ...], pose: AreaPose, centre: tuple[float, float], size: float, ppm: float
) -> NDArray[np.bool_]:
    """Which pixels of an area crop come from inside the frame."""
    m = pose.homography @ crop_matrix(centre, size, ppm)
    n = max(4, round(size * ppm))
    u, v = np.meshgrid(np.arange(n, dtype=np.float64), np.arange(n, dtype=np.float64))
    pts = np.stack([u.ravel(), v.ravel(), np.ones(n * n)])
    q = m @ pts
    x = q[0] / q[2]
    y = q[1] / q[2]
    h, w = shape[:2]
    ok = (q[2] > 0) & (x >= -0.5) & (x <= w - 0.5) & (y >= -0.5) & (y <= h - 0.5)
    return np.asarray(ok.reshape(n, n), bool)
