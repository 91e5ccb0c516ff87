"""Finding the kit's markers: every id, its corners to a fraction of a pixel, nothing else."""

from __future__ import annotations

from dataclasses import replace

import cv2
import numpy as np
import pytest

from tests.vision.handmade import Frame, Scene, camera_homography, draw, project, seat_default
from vision import kit
from vision.config import MarkerConfig
from vision.reader.markers import MarkerSighting, detect_markers, recover_markers


def _grey(image: np.ndarray) -> np.ndarray:
    return np.asarray(cv2.cvtColor(image, cv2.COLOR_BGR2GRAY), np.uint8)


def _true_corners(frame: Frame, marker_id: int) -> np.ndarray:
    area = "display" if marker_id < 4 else marker_id // 4
    return project(frame.truth[area] @ frame.stickers[marker_id], kit.marker_corners((0, 0)))


@pytest.mark.parametrize("value", [0, 255, 128])
def test_a_plain_frame_has_no_markers(value: int) -> None:
    assert detect_markers(np.full((900, 1600), value, np.uint8)) == {}


def test_a_colour_frame_is_refused() -> None:
    with pytest.raises(ValueError, match="grey"):
        detect_markers(np.zeros((100, 100, 3), np.uint8))


@pytest.mark.parametrize(
    ("tilt", "roll", "blur"),
    [(0.0, 0.0, 0.0), (25.0, 37.0, 0.0), (25.0, 200.0, 1.2), (12.0, 90.0, 0.6)],
)
def test_every_marker_is_found_with_corners_to_a_fraction_of_a_pixel(
    tilt: float, roll: float, blur: float
) -> None:
    scene = Scene(seats={3: seat_default(3), 4: seat_default(4)})
    camera = camera_homography(tilt_deg=tilt, tilt_towards_deg=60, roll_deg=roll, px_per_mm=1.7)
    frame = draw(scene, camera, blur_sigma=blur, noise=2.0)
    found = detect_markers(_grey(frame.image))
    in_frame = {
        i
        for i in frame.stickers
        if np.all((_true_corners(frame, i) > 2) & (_true_corners(frame, i) < (2877, 1617)))
    }
    assert len(in_frame) >= 8
    assert set(found) == in_frame
    errors = [
        np.linalg.norm(found[i].corners - _true_corners(frame, i), axis=1).max() for i in found
    ]
    # The detector's own corners are off by about a pixel; the fitted sides are not.
    assert max(errors) < 0.6
    assert all(s.refined for s in found.values())


def test_corner_order_follows_the_marker_not_the_picture() -> None:
    """Upside down, the first corner is still the marker's north-west one."""
    scene = Scene(seats={1: seat_default(1)})
    frame = draw(scene, camera_homography(roll_deg=0.0, px_per_mm=1.8))
    turned = np.ascontiguousarray(np.rot90(_grey(frame.image), 2))
    h, w = turned.shape
    found = detect_markers(turned)
    for i in (0, 4):
        expected = (w - 1, h - 1) - _true_corners(frame, i)
        assert np.linalg.norm(found[i].corners - expected, axis=1).max() < 0.6


def test_uneven_dim_light_is_no_obstacle() -> None:
    scene = Scene(seats={1: seat_default(1)})
    frame = draw(scene, camera_homography(px_per_mm=1.6), light_gradient=0.8, noise=3.0)
    dim = (_grey(frame.image).astype(np.float32) * 0.45).astype(np.uint8)
    assert set(detect_markers(dim)) == {0, 1, 2, 3, 4, 5, 6, 7}


def test_ids_beyond_the_kit_are_ignored() -> None:
    scene = Scene(display=None, extra_markers=((30, -200.0, 0.0, 0.0), (7, 200.0, 0.0, 10.0)))
    found = detect_markers(_grey(draw(scene, camera_homography()).image))
    assert set(found) == {7}


def test_a_second_copy_of_a_sticker_is_kept_as_an_alternative() -> None:
    scene = Scene(display=None, extra_markers=((9, -200.0, 0.0, 0.0), (9, 250.0, 100.0, 30.0)))
    found = detect_markers(_grey(draw(scene, camera_homography()).image))
    assert set(found) == {9}
    assert len(found[9].alternatives) == 1
    centres = {
        tuple(np.round(found[9].corners.mean(axis=0))),
        tuple(np.round(found[9].alternatives[0].mean(axis=0))),
    }
    assert len(centres) == 2


def test_a_missing_marker_is_found_again_only_where_it_is_expected() -> None:
    scene = Scene(seats={2: seat_default(2)})
    frame = draw(scene, camera_homography(px_per_mm=1.8))
    grey = _grey(frame.image)
    found = detect_markers(grey)
    lost = {i: s for i, s in found.items() if i != 9}
    near = {9: found[9].corners + 5.0}
    again = recover_markers(grey, lost, near)
    assert np.allclose(again[9].corners, found[9].corners, atol=0.05)
    far = {9: found[9].corners + 400.0}
    assert 9 not in recover_markers(grey, lost, far)


def test_a_sighting_knows_its_centre_and_size() -> None:
    corners = np.array([[10.0, 10.0], [70.0, 10.0], [70.0, 70.0], [10.0, 70.0]])
    sighting = MarkerSighting(3, corners)
    assert np.allclose(sighting.centre, (40.0, 40.0))
    assert sighting.side_px == pytest.approx(60.0)


@pytest.mark.parametrize("rows_off_cut", [-40, 0, 40])
def test_a_marker_across_the_first_pass_strips_is_found_once(rows_off_cut: int) -> None:
    """The quick first pass looks at two overlapping strips in two threads: a sticker lying
    across their cut is found once, where one look at the whole frame finds it."""
    dictionary = cv2.aruco.getPredefinedDictionary(getattr(cv2.aruco, kit.MARKER_DICT))
    side = 96  # px of the 2880 x 1620 frame: some 30 mm at a camera's usual scale
    sticker = np.full((side + 32, side + 32), 255, np.uint8)
    sticker[16:-16, 16:-16] = cv2.aruco.generateImageMarker(dictionary, 5, side)
    frame = np.full((1620, 2880), 200, np.uint8)
    top = 810 + rows_off_cut - sticker.shape[0] // 2
    frame[top : top + sticker.shape[0], 1400 : 1400 + sticker.shape[1]] = sticker
    first_pass = MarkerConfig(fallback_passes=False)  # the later passes look at it whole
    found = detect_markers(frame, first_pass)
    whole = detect_markers(frame, replace(first_pass, fast_strips=1))
    assert set(found) == set(whole) == {5}
    assert found[5].alternatives == ()
    assert np.abs(found[5].corners - whole[5].corners).max() < 0.05
    corner = np.array([1416 - 0.5, top + 16 - 0.5])  # the black square's, pixel centres at 0
    expected = corner + np.array([[0, 0], [side, 0], [side, side], [0, side]])
    assert np.abs(found[5].corners - expected).max() < 1.0
