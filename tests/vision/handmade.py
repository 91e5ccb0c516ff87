"""Hand-made frames of the table kit for testing the geometry: markers, mats, boards, hands.

Drawn straight from vision.kit with cv2.aruco.generateImageMarker and a pinhole camera, with
no tile art, so marker, pose and motion tests do not depend on the renderer. Each element is
drawn 4x oversampled and reduced, so edges sit where the geometry says to a fraction of a
pixel.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import cv2
import numpy as np
from numpy.typing import NDArray

from vision import kit

AreaKey = str | int
Matrix = NDArray[np.float64]
_OVERSAMPLE = 4


def camera_homography(
    size: tuple[int, int] = (2880, 1620),
    *,
    height_mm: float = 1100.0,
    tilt_deg: float = 0.0,
    tilt_towards_deg: float = 0.0,
    roll_deg: float = 0.0,
    px_per_mm: float = 2.2,
    look_at: tuple[float, float] = (0.0, 0.0),
) -> Matrix:
    """Table mm (x east, y south) -> image px for a pinhole camera looking at `look_at`.

    `px_per_mm` is the scale at the point looked at; `tilt_deg` leans the camera away from
    vertical towards the azimuth `tilt_towards_deg`; `roll_deg` turns the picture in-plane.
    """
    width, height = size
    tilt = math.radians(tilt_deg)
    az = math.radians(tilt_towards_deg)
    roll = math.radians(roll_deg)
    dist = height_mm / math.cos(tilt)
    f = px_per_mm * dist
    # Optical axis: z points into the table; leaning moves the camera away from `az`.
    axis = np.array([math.sin(tilt) * math.cos(az), math.sin(tilt) * math.sin(az), math.cos(tilt)])
    centre = np.array([look_at[0], look_at[1], 0.0]) - dist * axis
    up_hint = np.array([0.0, 1.0, 0.0]) if abs(axis[1]) < 0.9 else np.array([1.0, 0.0, 0.0])
    x_c = np.cross(up_hint, axis)
    x_c /= np.linalg.norm(x_c)
    y_c = np.cross(axis, x_c)
    x_r = math.cos(roll) * x_c + math.sin(roll) * y_c
    y_r = -math.sin(roll) * x_c + math.cos(roll) * y_c
    rot = np.stack([x_r, y_r, axis])
    k = np.array([[f, 0, (width - 1) / 2], [0, f, (height - 1) / 2], [0, 0, 1]])
    t = -rot @ centre
    h = k @ np.column_stack([rot[:, 0], rot[:, 1], t])
    return np.asarray(h / h[2, 2], dtype=np.float64)


def placement(x: float, y: float, angle_deg: float) -> Matrix:
    """Area frame -> table mm: turned clockwise (as seen from above) by angle, then moved."""
    a = math.radians(angle_deg)
    c, s = math.cos(a), math.sin(a)
    return np.array([[c, -s, x], [s, c, y], [0.0, 0.0, 1.0]])


def project(h: Matrix, pts: Iterable[tuple[float, float]]) -> NDArray[np.float64]:
    p = np.asarray(list(pts), dtype=np.float64).reshape(-1, 2)
    q = np.column_stack([p, np.ones(len(p))]) @ h.T
    return np.asarray(q[:, :2] / q[:, 2:], dtype=np.float64)


@dataclass
class Scene:
    """What to draw: areas placed on the table and how the camera sees it."""

    display: tuple[float, float, float] | None = (0.0, 0.0, 0.0)
    seats: Mapping[int, tuple[float, float, float]] = field(default_factory=dict)
    tile_mm: float = 45.0
    rows: int = 4
    cols: int = 4
    hidden: frozenset[int] = frozenset()  # marker ids not drawn
    sticker_mm: float = 0.0  # uniform misplacement of every sticker, up to this
    sticker_deg: float = 0.0
    # A marker drawn at another area's place: (id, area key, nominal id whose place it takes).
    wrong_stickers: tuple[tuple[int, AreaKey, int], ...] = ()
    hands: tuple[tuple[float, float, float, float], ...] = ()  # ellipses: x, y, rx, ry (table)
    # Spare stickers lying on the table: (id, x, y, angle) in table mm.
    extra_markers: tuple[tuple[int, float, float, float], ...] = ()
    # Things that read as a marker `scale` times a sticker's size (a player's board of 4 x 4
    # cells in its dark outline can): (id, x, y, angle, scale) in table mm.
    look_alikes: tuple[tuple[int, float, float, float, float], ...] = ()
    # Flat squares lying in an area (a stand-in for a tile): (area, x, y, side, BGR).
    squares: tuple[tuple[AreaKey, float, float, float, tuple[int, int, int]], ...] = ()
    seed: int = 0


@dataclass
class Frame:
    image: NDArray[np.uint8]  # BGR
    truth: dict[AreaKey, Matrix]  # area mm -> image px (the printed mat / the board)
    stickers: dict[int, Matrix]  # marker id -> its sticker's placement in its area frame


def seat_default(seat: int) -> tuple[float, float, float]:
    """A plausible table place for each seat around a display at the origin."""
    places = {
        1: (0.0, 330.0, 0.0),
        2: (0.0, -330.0, 180.0),
        3: (-470.0, 0.0, 90.0),
        4: (470.0, 0.0, -90.0),
        5: (-470.0, 300.0, 45.0),
    }
    return places[seat]


def _board(img: NDArray[np.float32], h: Matrix, sgeo: kit.SeatGeometry) -> None:
    """A seat's board (its grid of lines) and its storage slot."""
    bx, by = sgeo.cols * sgeo.pitch / 2 + 8, sgeo.rows * sgeo.pitch / 2 + 8
    _fill(img, h, [(-bx, -by), (bx, -by), (bx, by), (-bx, by)], (150, 120, 60))
    gx, gy = sgeo.cols * sgeo.pitch / 2, sgeo.rows * sgeo.pitch / 2
    for r in range(sgeo.rows + 1):
        _line(img, h, (-gx, -gy + r * sgeo.pitch), (gx, -gy + r * sgeo.pitch), (90, 60, 20))
    for c in range(sgeo.cols + 1):
        _line(img, h, (-gx + c * sgeo.pitch, -gy), (-gx + c * sgeo.pitch, gy), (90, 60, 20))
    sx, sy = sgeo.storage_centre()
    p = sgeo.pitch / 2
    _fill(
        img,
        h,
        [(sx - p, sy - p), (sx + p, sy - p), (sx + p, sy + p), (sx - p, sy + p)],
        (150, 120, 60),
    )


def draw(
    scene: Scene,
    camera: Matrix,
    size: tuple[int, int] = (2880, 1620),
    *,
    blur_sigma: float = 0.0,
    noise: float = 0.0,
    light_gradient: float = 0.0,
) -> Frame:
    """Draw a scene as the camera sees it."""
    rng = np.random.default_rng(scene.seed)
    width, height = size
    img = np.empty((height, width, 3), np.float32)
    img[:] = (70, 95, 125)  # a wooden table
    truth: dict[AreaKey, Matrix] = {}
    stickers: dict[int, Matrix] = {}
    markers: list[tuple[int, Matrix]] = []  # id, marker mm -> image

    def sticker(area_h: Matrix, marker_id: int, centre: tuple[float, float]) -> None:
        dx, dy = rng.uniform(-1, 1, 2) * scene.sticker_mm / math.sqrt(2)
        da = rng.uniform(-1, 1) * scene.sticker_deg
        place = placement(centre[0] + dx, centre[1] + dy, da)
        stickers[marker_id] = place
        if marker_id not in scene.hidden:
            markers.append((marker_id, area_h @ place))

    if scene.display is not None:
        geo = kit.DisplayGeometry(scene.tile_mm)
        h = camera @ placement(*scene.display)
        truth["display"] = h
        picture, to_mm = _mat_picture(geo)
        _paste(img, picture, h @ to_mm)
        for marker_id, c in geo.marker_centres().items():
            sticker(h, marker_id, c)
    for seat, where in sorted(scene.seats.items()):
        sgeo = kit.SeatGeometry(seat, scene.rows, scene.cols, scene.tile_mm)
        h = camera @ placement(*where)
        truth[seat] = h
        _board(img, h, sgeo)
        for marker_id, c in sgeo.marker_centres().items():
            sticker(h, marker_id, c)
    for marker_id, area, nominal in scene.wrong_stickers:
        if area == "display":
            centre = kit.DisplayGeometry(scene.tile_mm).marker_centres()[nominal]
        else:
            sg = kit.SeatGeometry(int(area), scene.rows, scene.cols, scene.tile_mm)
            centre = sg.marker_centres()[nominal]
        markers.append((marker_id, truth[area] @ placement(centre[0], centre[1], 0.0)))
    for marker_id, x, y, angle in scene.extra_markers:
        markers.append((marker_id, camera @ placement(x, y, angle)))
    for marker_id, x, y, angle, scale in scene.look_alikes:
        markers.append((marker_id, camera @ placement(x, y, angle) @ np.diag([scale, scale, 1.0])))
    for marker_id, h in markers:
        _marker(img, h, marker_id)
    for area, x, y, side, colour in scene.squares:
        s = side / 2
        _fill(
            img,
            truth[area],
            [(x - s, y - s), (x + s, y - s), (x + s, y + s), (x - s, y + s)],
            colour,
        )
    for hx, hy, rx, ry in scene.hands:
        ring = [(hx + rx * math.cos(t), hy + ry * math.sin(t)) for t in np.linspace(0, 6.283, 40)]
        pts = project(camera, ring)
        cv2.fillPoly(
            img, [np.round(pts * 16).astype(np.int32)], (120, 150, 200), cv2.LINE_AA, shift=4
        )
    if light_gradient:
        ramp = np.linspace(1 - light_gradient, 1.0, width, dtype=np.float32)
        img *= ramp[None, :, None]
    if blur_sigma:
        img = np.asarray(cv2.GaussianBlur(img, (0, 0), blur_sigma), np.float32)
    if noise:
        img += rng.normal(0, noise, img.shape).astype(np.float32)
    return Frame(np.clip(img + 0.5, 0, 255).astype(np.uint8), truth, stickers)


def _fill(
    img: NDArray[np.float32],
    h: Matrix,
    poly: list[tuple[float, float]],
    colour: tuple[int, int, int],
) -> None:
    pts = project(h, poly)
    cv2.fillConvexPoly(img, np.round(pts * 16).astype(np.int32), colour, cv2.LINE_AA, shift=4)


def _line(
    img: NDArray[np.float32],
    h: Matrix,
    a: tuple[float, float],
    b: tuple[float, float],
    colour: tuple[int, int, int],
) -> None:
    p, q = project(h, [a, b])
    cv2.line(
        img,
        tuple(np.round(p * 16).astype(int)),
        tuple(np.round(q * 16).astype(int)),
        colour,
        1,
        cv2.LINE_AA,
        shift=4,
    )


def _mat_picture(geo: kit.DisplayGeometry) -> tuple[NDArray[np.float32], Matrix]:
    """The display mat as an upright picture at 4 px/mm, 15 mm of paper beyond the lane, with
    0.5 mm grey outlines of the lane and the tiles' squares centred exactly on their lines;
    and its pixel -> mat mm map."""
    ppm = 4
    e = geo.half_extent + 15
    n = round(2 * e * ppm)
    mat = np.full((n, n), 235, np.float32)

    def band(lo_mm: float, hi_mm: float, fixed_mm: float, vertical: bool) -> None:
        a, b = (round((v + e) * ppm) for v in (lo_mm, hi_mm))
        f = round((fixed_mm + e) * ppm)  # a pixel boundary: the line's middle
        if vertical:
            mat[a:b, f - 1 : f + 1] = 190
        else:
            mat[f - 1 : f + 1, a:b] = 190

    squares = [(0.0, 0.0, d) for d in (geo.lane_inner, geo.half_extent)]
    squares += [(*geo.cell_centre(r, c), geo.tile_mm / 2) for r in range(4) for c in range(4)]
    for x, y, d in squares:
        for fixed in (y - d, y + d):
            band(x - d, x + d, fixed, vertical=False)
        for fixed in (x - d, x + d):
            band(y - d, y + d, fixed, vertical=True)
    s = 1 / ppm
    to_mm = np.array([[s, 0, -e + s / 2], [0, s, -e + s / 2], [0, 0, 1]])
    return mat, to_mm


def _paste(img: NDArray[np.float32], picture: NDArray[Any], picture_to_image: Matrix) -> None:
    """Warp a grey picture into the frame, oversampled 4x and reduced (exact edges)."""
    outline = project(
        picture_to_image,
        [
            (-0.5, -0.5),
            (picture.shape[1] - 0.5, -0.5),
            (picture.shape[1] - 0.5, picture.shape[0] - 0.5),
            (-0.5, picture.shape[0] - 0.5),
        ],
    )
    x0, y0 = np.floor(outline.min(axis=0)).astype(int) - 2
    x1, y1 = np.ceil(outline.max(axis=0)).astype(int) + 3
    x0, y0 = max(x0, 0), max(y0, 0)
    x1, y1 = min(x1, img.shape[1]), min(y1, img.shape[0])
    if x1 <= x0 or y1 <= y0:
        return
    s = _OVERSAMPLE
    # big-ROI pixel (U, V) centre is at full-frame ((U + 0.5) / s - 0.5 + x0, ...)
    shift = np.array([[s, 0, s * (0.5 - x0) - 0.5], [0, s, s * (0.5 - y0) - 0.5], [0, 0, 1]])
    m = shift @ picture_to_image
    big_w, big_h = (x1 - x0) * s, (y1 - y0) * s
    warped = cv2.warpPerspective(
        picture.astype(np.float32), m, (big_w, big_h), flags=cv2.INTER_LINEAR, borderValue=-1
    )
    mask = (warped >= 0).astype(np.float32)
    value = np.where(warped >= 0, warped, 0)
    small_mask = cv2.resize(mask, (x1 - x0, y1 - y0), interpolation=cv2.INTER_AREA)
    small_val = cv2.resize(value, (x1 - x0, y1 - y0), interpolation=cv2.INTER_AREA)
    roi = img[y0:y1, x0:x1]
    roi *= (1 - small_mask)[..., None]
    roi += small_val[..., None]


def _marker(img: NDArray[np.float32], h: Matrix, marker_id: int) -> None:
    """A sticker: the black square (side M) on white paper 5 mm wider on every side."""
    dictionary = cv2.aruco.getPredefinedDictionary(getattr(cv2.aruco, kit.MARKER_DICT))
    module_px = 24
    square = cv2.aruco.generateImageMarker(dictionary, marker_id, 6 * module_px)
    pad = module_px  # 1 module = 5 mm of white paper
    sticker = cv2.copyMakeBorder(square, pad, pad, pad, pad, cv2.BORDER_CONSTANT, value=255)
    mm_per_px = kit.MARKER_MM / (6 * module_px)
    half = kit.MARKER_MM / 2 + pad * mm_per_px
    # sticker pixel (u, v) centre -> marker mm
    to_mm = np.array(
        [[mm_per_px, 0, -half + mm_per_px / 2], [0, mm_per_px, -half + mm_per_px / 2], [0, 0, 1]]
    )
    # Printed black is not pure black, nor the paper pure white.
    _paste(img, sticker.astype(np.float32) * 0.92 + 10, h @ to_mm)
