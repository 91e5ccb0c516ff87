"""The motion gate: still only when nothing moved for a while and no arm reaches in; and
which areas changed between two reads. Time is passed in: nothing here sleeps."""

from __future__ import annotations

from typing import Any

import cv2
import numpy as np
import pytest

from companion.catalogue import default_boards
from tests.vision.handmade import Scene, camera_homography, draw, seat_default
from vision.config import MotionConfig
from vision.reader.areas import AreaKey, AreaPose, locate_all
from vision.reader.markers import detect_markers
from vision.reader.motion import GateState, MotionGate, changed_areas, kit_mask

SMALL = (320, 180)  # the preview stream: a 2880 x 1620 camera reduced 9 times
CONFIG = MotionConfig(still_seconds=1.0, max_hand_wait_seconds=5.0)


def _small(image: np.ndarray) -> np.ndarray:
    grey = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
    return np.asarray(cv2.resize(grey, SMALL, interpolation=cv2.INTER_AREA), np.uint8)


@pytest.fixture(scope="module")
def table() -> np.ndarray:
    scene = Scene(seats={1: seat_default(1), 3: seat_default(3)})
    return _small(draw(scene, camera_homography(px_per_mm=1.6)).image)


def _noisy(frame: np.ndarray, rng: np.random.Generator, sigma: float = 3.0) -> np.ndarray:
    return np.clip(frame + rng.normal(0, sigma, frame.shape), 0, 255).astype(np.uint8)


def _with_blob(frame: np.ndarray, x: int, y: int, r: int = 14) -> np.ndarray:
    out = frame.copy()
    cv2.circle(out, (x, y), r, 200, -1)
    return out


def _with_arm(frame: np.ndarray, reach: int) -> np.ndarray:
    """An arm coming in from the bottom edge of the view."""
    out = frame.copy()
    cv2.rectangle(out, (150, SMALL[1] - reach), (185, SMALL[1]), 190, -1)
    return out


def _feed(
    gate: MotionGate, frames: list[np.ndarray], t0: float, dt: float = 0.1
) -> list[GateState]:
    return [gate.feed(f, t0 + i * dt) for i, f in enumerate(frames)]


def test_a_quiet_table_becomes_still_after_still_seconds(table: np.ndarray) -> None:
    rng = np.random.default_rng(1)
    gate = MotionGate(CONFIG)
    states = _feed(gate, [_noisy(table, rng) for _ in range(16)], 0.0)
    assert GateState.MOVING not in states
    assert states[:10] == [GateState.SETTLING] * 10  # t = 0.0 .. 0.9
    assert states[10:] == [GateState.STILL] * 6  # from t = 1.0 on
    assert gate.reference is not None


def test_motion_resets_the_wait(table: np.ndarray) -> None:
    rng = np.random.default_rng(2)
    gate = MotionGate(CONFIG)
    _feed(gate, [_noisy(table, rng) for _ in range(12)], 0.0)
    assert gate.state is GateState.STILL
    moving = [_noisy(_with_blob(table, 100 + 12 * i, 90), rng) for i in range(5)]
    states = _feed(gate, moving, 2.0)
    assert states[1:] == [GateState.MOVING] * 4
    after = _feed(gate, [_noisy(moving[-1], rng) for _ in range(12)], 2.5)
    assert after[:9] == [GateState.SETTLING] * 9  # still for less than a second
    assert after[-1] is GateState.STILL


def test_a_change_of_the_whole_picture_s_brightness_is_not_motion(table: np.ndarray) -> None:
    gate = MotionGate(CONFIG)
    frames = [np.clip(table.astype(int) + 3 * i, 0, 255).astype(np.uint8) for i in range(12)]
    assert GateState.MOVING not in _feed(gate, frames, 0.0)


def test_an_arm_resting_across_the_edge_keeps_the_gate_waiting(table: np.ndarray) -> None:
    rng = np.random.default_rng(3)
    gate = MotionGate(CONFIG)
    _feed(gate, [_noisy(table, rng) for _ in range(12)], 0.0)
    assert gate.state is GateState.STILL
    # The arm reaches in, then lies still.
    _feed(gate, [_noisy(_with_arm(table, r), rng) for r in (30, 60, 90)], 2.0)
    resting = _with_arm(table, 90)
    states = _feed(gate, [_noisy(resting, rng) for _ in range(50)], 2.3)
    assert GateState.STILL not in states[:45]  # waits while the arm lies there ...
    assert gate.arm_in_view
    assert states[-1] is GateState.STILL  # ... but not beyond max_hand_wait_seconds


def test_a_tile_laid_inside_the_table_is_not_an_arm(table: np.ndarray) -> None:
    rng = np.random.default_rng(4)
    gate = MotionGate(CONFIG)
    _feed(gate, [_noisy(table, rng) for _ in range(12)], 0.0)
    placed = _with_blob(table, 160, 90)
    _feed(gate, [_noisy(_with_blob(table, 160 - 10 * i, 90), rng) for i in range(3)], 2.0)
    states = _feed(gate, [_noisy(placed, rng) for _ in range(12)], 2.3)
    assert states[-1] is GateState.STILL
    assert not gate.arm_in_view


def test_the_state_is_truthy_only_when_still() -> None:
    assert GateState.STILL
    assert not GateState.SETTLING
    assert not GateState.MOVING


def test_a_mask_ignores_motion_outside_the_kit(table: np.ndarray) -> None:
    rng = np.random.default_rng(5)
    mask = np.zeros(table.shape, np.uint8)
    mask[40:140, 60:260] = 255
    gate = MotionGate(CONFIG, mask=mask)
    frames = [_noisy(_with_blob(table, 20, 20 + 5 * i, 12), rng) for i in range(14)]
    assert _feed(gate, frames, 0.0)[-1] is GateState.STILL


def test_the_same_frames_and_times_give_the_same_states(table: np.ndarray) -> None:
    rng = np.random.default_rng(6)
    frames = [_noisy(_with_blob(table, 60 + 7 * (i % 5), 80), rng) for i in range(20)]
    first = _feed(MotionGate(CONFIG), frames, 0.0)
    again = _feed(MotionGate(CONFIG), frames, 0.0)
    assert first == again


# -- which areas changed -------------------------------------------------------------------


def _areas_scene(
    squares: tuple[Any, ...] = (), brightness: float = 1.0
) -> tuple[np.ndarray, dict[AreaKey, AreaPose]]:
    scene = Scene(seats={1: seat_default(1), 3: seat_default(3)}, squares=squares)
    camera = camera_homography(px_per_mm=1.6)
    frame = draw(scene, camera, noise=2.0)
    image = np.clip(frame.image.astype(np.float32) * brightness, 0, 255).astype(np.uint8)
    grey = np.asarray(cv2.cvtColor(frame.image, cv2.COLOR_BGR2GRAY), np.uint8)
    display, seats, _ = locate_all(detect_markers(grey), 45.0, default_boards()["front"], gray=grey)
    factor = SMALL[0] / image.shape[1]
    poses: dict[AreaKey, AreaPose] = {}
    if display is not None:
        poses["display"] = display.scaled(factor)
    poses.update({s: p.scaled(factor) for s, p in seats.items()})
    return _small(image), poses


def test_changed_areas_names_the_area_where_a_tile_was_laid() -> None:
    before, poses = _areas_scene()
    tile = ((3, 23.5, -23.5, 45.0, (60, 200, 230)),)
    after, _ = _areas_scene(tile)
    assert changed_areas(before, after, poses) == {3}
    on_display = (("display", -73.5, 24.5, 45.0, (200, 90, 40)),)
    after_display, _ = _areas_scene(on_display)
    assert changed_areas(before, after_display, poses) == {"display"}


def test_noise_and_a_brighter_room_change_no_area() -> None:
    before, poses = _areas_scene()
    again, _ = _areas_scene()
    brighter, _ = _areas_scene(brightness=1.08)
    assert changed_areas(before, again, poses) == set()
    assert changed_areas(before, brighter, poses) == set()


def test_the_kit_mask_covers_the_located_areas() -> None:
    before, poses = _areas_scene()
    mask = kit_mask(before.shape, poses)
    centre = poses["display"].project([(0.0, 0.0)])[0]
    assert mask[int(centre[1]), int(centre[0])] == 255
    assert 0.1 < (mask > 0).mean() < 0.9
