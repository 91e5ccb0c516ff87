"""Finding the explorer ship in the ship lane: every position, any heading, a ship not there."""

from __future__ import annotations

import math

import cv2
import numpy as np
import pytest
from numpy.typing import NDArray

from vision import kit
from vision.config import ShipConfig
from vision.pack import Pack
from vision.ship import locate_ship, read_ship
from vision.tilemodel import learn_pack

PPM = 2.0
SHIP_MM = 42.0
SKIN = (120, 150, 205)


def mat(geo: kit.DisplayGeometry) -> NDArray[np.float32]:
    """The display mat's active area at PPM px/mm: white paper, thin grey outlines."""
    n = round(2 * geo.half_extent * PPM)
    img = np.full((n, n, 3), (244, 247, 248), np.float32)
    c = (n - 1) / 2
    for half in (geo.lane_inner, geo.half_extent - 0.5):
        h = half * PPM
        cv2.rectangle(img, (round(c - h), round(c - h)), (round(c + h), round(c + h)),
                      (185, 185, 185), 1, cv2.LINE_AA)
    return img


def at(img: NDArray[np.float32], x_mm: float, y_mm: float) -> tuple[int, int]:
    """The pixel of a point (mm from the display's centre) in a picture made by `mat`."""
    c = (img.shape[0] - 1) / 2
    return round(c + x_mm * PPM), round(c + y_mm * PPM)


def put_ship(img: NDArray[np.float32], ship: NDArray[np.uint8], geo: kit.DisplayGeometry,
             position: int, heading: float, offset: tuple[float, float]) -> None:
    """Lay the ship's picture (BGRA or BGR on white) at a lane position, turned `heading`
    degrees clockwise, `offset` mm off the nominal centre."""
    h, w = ship.shape[:2]
    scale = SHIP_MM / max(h, w) * PPM
    cx, cy = geo.ship_centre(position)
    n = img.shape[0]
    u = (cx + offset[0] + geo.half_extent) * PPM - 0.5
    v = (cy + offset[1] + geo.half_extent) * PPM - 0.5
    m = cv2.getRotationMatrix2D(((w - 1) / 2, (h - 1) / 2), -heading, scale)
    m[:, 2] += (u - (w - 1) / 2, v - (h - 1) / 2)
    colour = ship[:, :, :3].astype(np.float32)
    alpha = (ship[:, :, 3] if ship.shape[2] == 4 else np.full((h, w), 255, np.uint8)).astype(
        np.float32
    ) / 255.0
    warped = cv2.warpAffine(colour, m, (n, n), flags=cv2.INTER_AREA)
    cover = cv2.warpAffine(alpha, m, (n, n), flags=cv2.INTER_LINEAR)[:, :, None]
    img[:] = img * (1 - cover) + warped * cover


def camera(
    img: NDArray[np.float32], rng: np.random.Generator, gain: float = 1.0
) -> NDArray[np.uint8]:
    out = cv2.GaussianBlur(img * gain, (0, 0), 0.8) + rng.normal(0, 3.0, img.shape)
    return np.clip(out + 0.5, 0, 255).astype(np.uint8)


@pytest.mark.parametrize("style", ["lagoon", "ink"])
def test_the_ship_is_found_at_every_position(
    style: str, pack_lagoon: Pack, pack_ink: Pack
) -> None:
    pack = pack_lagoon if style == "lagoon" else pack_ink
    geo = kit.DisplayGeometry(pack.tile_mm)
    rng = np.random.default_rng(1)
    for position in range(kit.SHIP_POSITIONS):
        area = mat(geo)
        # Sailing clockwise along the lane, give or take; up to 6 mm off its place.
        along = ((position // 4) + 1) % 4 * 90.0
        heading = along + float(rng.uniform(-10, 10)) + (180.0 if position % 3 == 0 else 0.0)
        offset = (float(rng.uniform(-5, 5)), float(rng.uniform(-5, 5)))
        put_ship(area, pack.ship, geo, position, heading, offset)
        sighting = locate_ship(camera(area, rng, gain=float(rng.uniform(0.85, 1.0))),
                               pack.ship, geo)
        assert sighting.position == position, (position, sighting)


def test_read_ship_gives_the_position_and_a_confidence(pack_lagoon: Pack) -> None:
    geo = kit.DisplayGeometry(pack_lagoon.tile_mm)
    model = learn_pack(pack_lagoon, PPM)
    area = mat(geo)
    put_ship(area, pack_lagoon.ship, geo, 9, 270.0, (0.0, 2.0))
    position, confidence = read_ship(camera(area, np.random.default_rng(2)), model, geo)
    assert position == 9
    assert 0.5 <= confidence <= 1.0


def test_no_ship_in_the_lane_is_none(pack_lagoon: Pack) -> None:
    geo = kit.DisplayGeometry(pack_lagoon.tile_mm)
    sighting = locate_ship(camera(mat(geo), np.random.default_rng(3)), pack_lagoon.ship, geo)
    assert sighting.position is None


def test_a_hand_in_the_lane_is_not_taken_for_the_ship(pack_lagoon: Pack) -> None:
    geo = kit.DisplayGeometry(pack_lagoon.tile_mm)
    area = mat(geo)
    n = area.shape[0]
    # A hand reaching over the east side of the lane, no ship anywhere.
    cx, cy = geo.ship_centre(5)
    u, v = ((cx + geo.half_extent) * PPM, (cy + geo.half_extent) * PPM)
    cv2.ellipse(area, (round(u), round(v)), (round(22 * PPM), round(30 * PPM)), 20, 0, 360,
                (150, 175, 225), -1)
    cv2.rectangle(area, (round(u), round(v - 25 * PPM)), (n, round(v + 25 * PPM)),
                  (150, 175, 225), -1)
    sighting = locate_ship(camera(area, np.random.default_rng(4)), pack_lagoon.ship, geo)
    assert sighting.position is None


def test_a_ship_twice_as_ambiguous_is_none(pack_lagoon: Pack) -> None:
    """Two ships in the lane (a second box's, say): no position is clearly the ship's."""
    geo = kit.DisplayGeometry(pack_lagoon.tile_mm)
    area = mat(geo)
    put_ship(area, pack_lagoon.ship, geo, 2, 90.0, (0.0, 0.0))
    put_ship(area, pack_lagoon.ship, geo, 10, 270.0, (0.0, 0.0))
    sighting = locate_ship(camera(area, np.random.default_rng(5)), pack_lagoon.ship, geo)
    assert sighting.position is None
    assert sighting.score > ShipConfig().min_score


def test_the_heading_along_the_lane_is_found_whatever_the_picture_turns() -> None:
    from vision.ship import _heading

    ink = np.zeros((40, 60), np.float32)
    cv2.ellipse(ink, (30, 20), (25, 6), 0, 0, 360, 1.0, -1)
    # A long axis along x: the upright ship picture must turn by 90 degrees.
    assert math.isclose(_heading(ink) % 180.0, 90.0, abs_tol=2.0)


def lay_tiles(img: NDArray[np.float32], geo: kit.DisplayGeometry, reach_mm: float) -> None:
    """Dark tiles in all 16 cells, the edge tiles of the north, east and west sides pushed
    `reach_mm` out over the lane's line (the south side's lie in place)."""
    half = geo.tile_mm / 2
    for r in range(4):
        for col in range(4):
            x, y = geo.cell_centre(r, col)
            x += reach_mm * ((col == 3) - (col == 0))
            y -= reach_mm * (r == 0)
            cv2.rectangle(img, at(img, x - half, y - half), at(img, x + half, y + half),
                          (70, 55, 45), -1)


def test_the_ship_beside_a_hand_between_tiles_over_the_lane_is_found(pack_ink: Pack) -> None:
    """Tiles lying over the lane's inner line on three sides, a washed-out ship on the fourth
    and a hand reaching over the tiles with a finger into the lane two places away: the
    ship is still found."""
    geo = kit.DisplayGeometry(pack_ink.tile_mm)
    area = mat(geo)
    lay_tiles(area, geo, 5.0)
    # Washed out by glare: the ship shows at 40 % of its contrast against the paper.
    paper = area.copy()
    put_ship(area, pack_ink.ship, geo, 9, 270.0, (3.0, 0.0))
    area[:] = 0.4 * area + 0.6 * paper
    cx, cy = geo.ship_centre(11)
    palm = at(area, cx, cy - 40)
    cv2.ellipse(area, palm, (round(30 * PPM), round(30 * PPM)), 0, 0, 360, SKIN, -1)
    cv2.line(area, palm, at(area, cx + 6, cy + 4), SKIN, round(16 * PPM))
    sighting = locate_ship(camera(area, np.random.default_rng(6), gain=0.9), pack_ink.ship, geo)
    assert sighting.position == 9, sighting


def hand_beside(area: NDArray[np.float32], geo: kit.DisplayGeometry, position: int,
                along_mm: float) -> None:
    """A hand lying in the lane `along_mm` along it from a position's centre (palm, fingers
    towards the grid), its arm running out over the mat's edge."""
    cx, cy = geo.ship_centre(position)
    # Positions 0-3 and 8-11 run along x (docs/table-kit.md: north and south sides).
    along = np.array((1.0, 0.0) if (position // 4) % 2 == 0 else (0.0, 1.0))
    out = np.sign(np.array((cx, cy)) * (1 - along))
    palm = np.array((cx, cy)) + along * along_mm
    px = at(area, palm[0], palm[1])
    cv2.ellipse(area, px, (round(20 * PPM), round(20 * PPM)), 0, 0, 360, SKIN, -1)
    end = palm + out * 200
    cv2.line(area, px, at(area, end[0], end[1]), SKIN, round(34 * PPM))


def ship_beside_hand(
    pack: Pack, position: int, heading: float
) -> tuple[kit.DisplayGeometry, NDArray[np.float32]]:
    """The mat with the ship at a position, turned `heading`, and a hand in the lane
    30 mm along from it."""
    geo = kit.DisplayGeometry(pack.tile_mm)
    area = mat(geo)
    put_ship(area, pack.ship, geo, position, heading, (0.0, 0.0))
    hand_beside(area, geo, position, 30.0)
    return geo, area


@pytest.mark.parametrize("style", ["lagoon", "ink"])
@pytest.mark.parametrize(("position", "heading"), [(14, 10.0), (2, 260.0)])
def test_the_ship_beside_a_hand_in_its_own_window_is_found(
    style: str, position: int, heading: float, request: pytest.FixtureRequest
) -> None:
    """A hand in the lane right beside the ship fills the ship's window past what a ship
    could: the window is searched last, at every length and heading, and the ship found;
    with that last search off it is not seen."""
    pack: Pack = request.getfixturevalue(f"pack_{style}")
    geo, area = ship_beside_hand(pack, position, heading)
    frame = camera(area, np.random.default_rng(7))
    sighting = locate_ship(frame, pack.ship, geo)
    assert sighting.position == position, sighting
    off = ShipConfig(armed_min_score=1.1)
    assert locate_ship(frame, pack.ship, geo, off).position is None


@pytest.mark.parametrize(("style", "fingertip_at"), [("ink", 6), ("lagoon", 10)])
def test_a_fingertip_elsewhere_in_the_lane_is_not_taken_for_the_ship_beside_a_hand(
    style: str, fingertip_at: int, request: pytest.FixtureRequest
) -> None:
    """The ship beside a hand (its window passed over for the hand) and a fingertip in the
    lane elsewhere, which matches the ship's picture fairly (0.56-0.66): the fingertip is
    never named; the ship is, or nothing when the two match too alike."""
    pack: Pack = request.getfixturevalue(f"pack_{style}")
    geo, area = ship_beside_hand(pack, 14, 10.0)
    cv2.circle(area, at(area, *geo.ship_centre(fingertip_at)), round(10 * PPM), SKIN, -1)
    sighting = locate_ship(camera(area, np.random.default_rng(7)), pack.ship, geo)
    assert sighting.position in (14, None), sighting
    if style == "ink":
        assert sighting.position == 14, sighting


@pytest.mark.parametrize("style", ["lagoon", "ink"])
def test_the_ship_beside_a_hand_is_found_with_arms_lying_along_two_sides_of_the_lane(
    style: str, request: pytest.FixtureRequest
) -> None:
    """Arms lying along the west and south sides fill six windows wholly (nothing can be
    seen in them) and a hand lies beside the ship on the north side: the hand's window is
    searched for the ship, not passed over after the six full ones."""
    pack: Pack = request.getfixturevalue(f"pack_{style}")
    geo, area = ship_beside_hand(pack, 2, 260.0)
    x = -(geo.lane_inner + kit.LANE_MM / 2)
    for (x0, y0, x1, y1) in [(x, -160, x, 160), (-160, -x, 160, -x)]:
        cv2.line(area, at(area, x0, y0), at(area, x1, y1), SKIN, round(50 * PPM))
    sighting = locate_ship(camera(area, np.random.default_rng(7)), pack.ship, geo)
    assert sighting.position == 2, sighting


def test_a_hand_alone_in_the_lane_is_not_the_ship_at_any_heading(pack_lagoon: Pack) -> None:
    """The last search, at every length and heading, of windows a hand fills finds no ship
    in a hand."""
    geo = kit.DisplayGeometry(pack_lagoon.tile_mm)
    area = mat(geo)
    hand_beside(area, geo, 14, 10.0)
    hand_beside(area, geo, 2, -20.0)
    sighting = locate_ship(camera(area, np.random.default_rng(8)), pack_lagoon.ship, geo)
    assert sighting.position is None, sighting
