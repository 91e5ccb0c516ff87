"""Synthetic table frames with exact truth: a TableScene drawn with a tile pack's pictures.

`render_table(scene, pack, camera, effects, rng)` lays the kit out as docs/table-kit.md says (the
display mat with markers 0-3, seat boards with markers 4s..4s+3 and storage slots), puts the
pack's tile pictures in their cells (rotation, offset, turn), the ship in its lane and the
clutter on top, photographs it with a pinhole camera (real perspective for a tilted camera)
and applies the light and sensor effects. The result carries the truth (companion.reading
types, confidence 1), which cells are hidden, and the homographies from each area's mm frame
to image pixels (pixel centres at whole numbers, as OpenCV).

`companion bench render` measures how long a frame takes.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from types import MappingProxyType

import cv2
import numpy as np
from numpy.typing import NDArray

from companion.reading import TableRead
from vision import kit
from vision.box.pack import Pack
from vision.reader.lens import Lens
from vision.synthetic import render_config as cfg
from vision.synthetic.scene import (
    DISPLAY,
    STORAGE_ROW,
    Area,
    CellKey,
    Clutter,
    PlacedTile,
    Point,
    SeatScene,
    TableScene,
    check_seat_cells,
    scene_points,
)

Matrix = NDArray[np.float64]
Image = NDArray[np.uint8]
FloatImage = NDArray[np.float32]
BGR = tuple[int, int, int]
_SHIFT = 4  # fixed-point bits for cv2 drawing calls


# --- geometry helpers ------------------------------------------------------------------------


def _translate(x: float, y: float) -> Matrix:
    return np.array([[1.0, 0.0, x], [0.0, 1.0, y], [0.0, 0.0, 1.0]])


def _turn(degrees: float) -> Matrix:
    """Clockwise turn as seen from above (y points south)."""
    a = math.radians(degrees)
    c, s = math.cos(a), math.sin(a)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def _scale(sx: float, sy: float) -> Matrix:
    return np.array([[sx, 0.0, 0.0], [0.0, sy, 0.0], [0.0, 0.0, 1.0]])


def area_to_table(origin: Point, facing_deg: float) -> Matrix:
    """3x3 map from an area's mm frame to the table's mm frame."""
    return _translate(*origin) @ _turn(facing_deg)


def picture_to_mm(width_px: int, height_px: int, width_mm: float, height_mm: float) -> Matrix:
    """Pixel (centres at whole numbers) of a picture spanning width_mm x height_mm, centred."""
    sx, sy = width_mm / width_px, height_mm / height_px
    return _translate(0.5 * sx - width_mm / 2, 0.5 * sy - height_mm / 2) @ _scale(sx, sy)


def apply(h: Matrix, points: NDArray[np.float64] | Sequence[Point]) -> NDArray[np.float64]:
    """Map (N, 2) points through a homography."""
    p = np.asarray(points, np.float64).reshape(-1, 2)
    q = np.column_stack([p, np.ones(len(p))]) @ h.T
    out: NDArray[np.float64] = q[:, :2] / q[:, 2:3]
    return out


def _local_scale(h: Matrix, x: float, y: float) -> float:
    """Image pixels per unit at (x, y) (square root of the area scale)."""
    p = apply(h, [(x, y), (x + 1.0, y), (x, y + 1.0)])
    j = np.column_stack([p[1] - p[0], p[2] - p[0]])
    return math.sqrt(abs(float(np.linalg.det(j))))


def _min_scale(h: Matrix, x: float, y: float) -> float:
    """Image pixels per unit at (x, y) in the least favoured direction."""
    p = apply(h, [(x, y), (x + 1.0, y), (x, y + 1.0)])
    j = np.column_stack([p[1] - p[0], p[2] - p[0]])
    return float(np.linalg.svd(j, compute_uv=False).min())


# --- camera ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class CameraSpec:
    """A pinhole camera over the table.

    `height_mm` above the table, leaning `tilt_deg` off vertical towards the table direction
    `tilt_towards_deg` (clockwise from the table's north), the picture turned `roll_deg`
    in-plane. `px_per_mm` None: the focal length is chosen so the scene fills the frame
    (a margin of `margin_px`); `look_at_mm` None: the camera aims at the scene's middle.
    """

    size: tuple[int, int] = cfg.FRAME_PX
    height_mm: float = 1000.0
    tilt_deg: float = 0.0
    tilt_towards_deg: float = 0.0
    roll_deg: float = 0.0
    px_per_mm: float | None = None
    look_at_mm: Point | None = None
    margin_px: int = cfg.FIT_MARGIN_PX
    # A lens that bends straight lines (vision.reader.lens: barrel for k > 0); 0 is a pinhole. The
    # truth (homographies, what is covered) stays the pinhole's.
    lens_k: float = 0.0

    @classmethod
    def overhead(cls, roll_deg: float = 0.0, **kwargs: object) -> CameraSpec:
        """Straight down from 1 m."""
        return cls(roll_deg=roll_deg, **kwargs)  # type: ignore[arg-type]

    @classmethod
    def tilted(
        cls,
        tilt_deg: float = 20.0,
        towards_deg: float = 30.0,
        roll_deg: float = 0.0,
        **kwargs: object,
    ) -> CameraSpec:
        """Leaning `tilt_deg` off vertical, from 0.8 m."""
        kwargs.setdefault("height_mm", 800.0)
        return cls(tilt_deg=tilt_deg, tilt_towards_deg=towards_deg, roll_deg=roll_deg, **kwargs)  # type: ignore[arg-type]


@dataclass(frozen=True)
class Camera:
    """A placed camera: intrinsics `k`, rotation `rot` (table -> camera), `centre` (mm)."""

    spec: CameraSpec
    k: Matrix
    rot: Matrix
    centre: NDArray[np.float64]

    @property
    def size(self) -> tuple[int, int]:
        return self.spec.size

    @property
    def table_to_image(self) -> Matrix:
        """3x3 homography from the table plane (mm) to image pixels."""
        t = -self.rot @ self.centre
        h = self.k @ np.column_stack([self.rot[:, 0], self.rot[:, 1], t])
        out: Matrix = h / h[2, 2]
        return out

    def project(self, points: NDArray[np.float64] | Sequence[Point]) -> NDArray[np.float64]:
        return apply(self.table_to_image, points)

    def raised(self, height_mm: float) -> Matrix:
        """3x3 homography from image points of the table plane to where the same table
        points, raised `height_mm` towards the camera, are seen (the table's z is down)."""
        t = -self.rot @ self.centre
        h = self.k @ np.column_stack(
            [self.rot[:, 0], self.rot[:, 1], t - height_mm * self.rot[:, 2]]
        )
        out: Matrix = h @ np.linalg.inv(self.table_to_image)
        out /= out[2, 2]
        return out


def _pose(spec: CameraSpec, look_at: Point) -> tuple[Matrix, NDArray[np.float64]]:
    tilt = math.radians(spec.tilt_deg)
    az = math.radians(spec.tilt_towards_deg)
    # Table frame: x east, y south, z down into the table. Azimuth clockwise from north (-y).
    axis = np.array([math.sin(tilt) * math.sin(az), -math.sin(tilt) * math.cos(az), math.cos(tilt)])
    dist = spec.height_mm / math.cos(tilt)
    centre = np.array([look_at[0], look_at[1], 0.0]) - dist * axis
    east = np.array([1.0, 0.0, 0.0])
    x_c = east - axis * float(east @ axis)
    x_c /= np.linalg.norm(x_c)
    y_c = np.cross(axis, x_c)
    roll = math.radians(spec.roll_deg)
    # Rolling the camera by +roll turns the picture of the table by -roll.
    x_r = math.cos(roll) * x_c + math.sin(roll) * y_c
    y_r = -math.sin(roll) * x_c + math.cos(roll) * y_c
    return np.stack([x_r, y_r, axis]), centre


def _normalised(
    rot: Matrix, centre: NDArray[np.float64], points: Sequence[Point]
) -> NDArray[np.float64]:
    p = np.column_stack([np.asarray(points, np.float64), np.zeros(len(points))])
    cam = (p - centre) @ rot.T
    out: NDArray[np.float64] = cam[:, :2] / cam[:, 2:3]
    return out


def fit_camera(spec: CameraSpec, points: Sequence[Point]) -> Camera:
    """Place the camera so `points` (table mm) fill the frame, unless the spec fixes scale/aim."""
    w, h = spec.size
    pts = np.asarray(points, np.float64)
    look = spec.look_at_mm or (float(pts[:, 0].mean()), float(pts[:, 1].mean()))
    rot, centre = _pose(spec, look)
    if spec.look_at_mm is None:
        for _ in range(4):  # aim at the middle of the points' picture
            n = _normalised(rot, centre, points)
            mid = (n.min(axis=0) + n.max(axis=0)) / 2
            ray = rot.T @ np.array([mid[0], mid[1], 1.0])
            hit = centre + ray * (-centre[2] / ray[2])
            look = (float(hit[0]), float(hit[1]))
            rot, centre = _pose(spec, look)
    if spec.px_per_mm is not None:
        f = spec.px_per_mm * spec.height_mm / math.cos(math.radians(spec.tilt_deg))
    else:
        n = np.abs(_normalised(rot, centre, points))
        f = min((w / 2 - spec.margin_px) / n[:, 0].max(), (h / 2 - spec.margin_px) / n[:, 1].max())
    k = np.array([[f, 0.0, (w - 1) / 2], [0.0, f, (h - 1) / 2], [0.0, 0.0, 1.0]])
    return Camera(spec, k, rot, centre)


def least_px_per_mm(camera: Camera, points: Sequence[Point]) -> float:
    """The smallest image scale (px per mm, worst direction) over `points`."""
    h = camera.table_to_image
    return min(_min_scale(h, x, y) for x, y in points)


def random_camera(
    rng: np.random.Generator,
    scene: TableScene,
    pack: Pack,
    *,
    size: tuple[int, int] = cfg.FRAME_PX,
    max_tilt_deg: float = kit.CAMERA_TILT_MAX_DEG,
) -> CameraSpec:
    """A camera as docs/table-kit.md allows (0.6-1.6 m, ≤ 25° tilt, any roll, ≥ 1.5 px/mm).

    Draws height, tilt and roll; keeps the first draw that shows the whole scene at the
    kit's least resolution, easing the tilt and roll when the scene is too wide.
    """
    points = scene_points(scene, pack.catalogue)
    lo, hi = kit.CAMERA_HEIGHT_MM
    # First any roll; then the frame's long side along the table's (roll near 0 or 180°);
    # then less and less tilt.
    attempts = 36
    for attempt in range(attempts):
        if attempt < 12:
            roll, ease = float(rng.uniform(0, 360)), 1.0
        else:
            ease = 1.0 if attempt < 24 else (attempts - attempt) / 12
            roll = float(rng.choice([0.0, 180.0]) + rng.uniform(-4, 4))
        spec = CameraSpec(
            size=size,
            height_mm=float(rng.uniform(lo, hi)),
            tilt_deg=float(rng.uniform(0, max_tilt_deg * ease)),
            tilt_towards_deg=float(rng.uniform(0, 360)),
            roll_deg=roll,
        )
        if least_px_per_mm(fit_camera(spec, points), points) >= kit.MIN_PX_PER_MM:
            return spec
    return CameraSpec(size=size, height_mm=float(rng.uniform(lo, hi)))


# --- effects -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Effects:
    """Light and sensor effects (clutter is part of the scene: vision.synthetic.scene.add_clutter).

    light: uneven light (a gradient and vignetting), 0..1; warmth: warm colour cast, 0..1;
    exposure: overall gain; glare_spots and glare_strength (1 = washed out to white at the
    centre); shadows and shadow_strength (soft dark patches); blur_px (Gaussian sigma);
    noise (sensor noise sigma in grey levels); sharpen (a camera's own sharpening after
    the sensor: an unsharp mask of SHARPEN_PX and this strength, 0 none); jpeg_quality
    (None: no JPEG round trip). The tiles as printed card: tile_height_mm (their thickness:
    the top lifted towards the camera, the side walls seen below it), tile_shadow (how dark
    the soft shadow each casts on what it lies on, 0..1), print_jitter (each tile's print
    a little off in each colour, up to this gain), tile_wear (the chance of each corner
    being worn pale).
    """

    light: float = 0.0
    warmth: float = 0.0
    exposure: float = 1.0
    glare_spots: int = 0
    glare_strength: float = 0.0
    shadows: int = 0
    shadow_strength: float = 0.0
    blur_px: float = 0.0
    noise: float = 0.0
    sharpen: float = 0.0
    jpeg_quality: int | None = None
    tile_height_mm: float = 0.0
    tile_shadow: float = 0.0
    print_jitter: float = 0.0
    tile_wear: float = 0.0

    @classmethod
    def none(cls) -> Effects:
        """A perfect camera in perfect light."""
        return cls()

    @classmethod
    def easy(cls) -> Effects:
        """A good camera in fair light."""
        return cls(light=0.15, warmth=0.15, blur_px=0.6, noise=2.0, jpeg_quality=92)

    @classmethod
    def hard(cls) -> Effects:
        """Lamp light from one side, warm, glare, shadows, a soft lens, noise, strong JPEG."""
        return cls(
            light=0.5,
            warmth=0.6,
            exposure=0.92,
            glare_spots=2,
            glare_strength=0.95,
            shadows=2,
            shadow_strength=0.35,
            blur_px=1.2,
            noise=6.0,
            jpeg_quality=70,
        )


# --- result ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Rendered:
    """A synthetic frame and everything true about it.

    truth: the table as a perfect recogniser reads it (true content even where hidden).
    covered: cells (area, row, col; storage is (seat, -1, 0)) hidden enough that the
    recogniser should answer unknown; occlusion: the hidden fraction of every cell.
    homographies: "display" or seat number -> 3x3 from that area's mm frame to image pixels.
    marker_corners: marker id -> (4, 2) image corners of its black square as placed (NW, NE,
    SE, SW); hidden_markers: markers covered, washed out or outside the frame.
    """

    image: Image
    truth: TableRead
    covered: frozenset[CellKey]
    occlusion: Mapping[CellKey, float]
    homographies: Mapping[Area, Matrix]
    marker_corners: Mapping[int, NDArray[np.float64]]
    hidden_markers: frozenset[int]
    ship_covered: bool
    jpeg_quality: int | None
    camera: Camera
    px_per_mm: tuple[float, float]  # least and most over the kit's areas


# --- drawing ---------------------------------------------------------------------------------


class _Sprites:
    """Pictures halved (block averages) until about the size they are drawn at.

    Kept across renders: pack pictures are read-only, and each entry holds its source so
    the id it is filed under stays that picture's.
    """

    _MAX_ENTRIES = 4096

    def __init__(self) -> None:
        self._cache: dict[tuple[int, int], tuple[Image, Image | None, Image]] = {}

    def level(self, src: Image, alpha: Image | None, scale: float) -> tuple[Image, Image | None]:
        """`src` (and `alpha`) halved k times so it is drawn at no less than 0.7 px per px."""
        k = 0
        while scale * (2 ** (k + 1)) < 1.4 and min(src.shape[:2]) >> (k + 1) >= 8:
            k += 1
        if k == 0:
            return src, alpha
        key = (id(src), k)
        hit = self._cache.get(key)
        if hit is None or hit[2] is not src:
            small, small_alpha = src, alpha
            h, w = src.shape[:2]
            size = (max(1, w >> k), max(1, h >> k))
            # INTER_AREA averages whole blocks: level pixel i covers picture pixels
            # 2^k i .. 2^k (i + 1) - 1, the mapping `paste` assumes.
            small = np.asarray(cv2.resize(src, size, interpolation=cv2.INTER_AREA), np.uint8)
            if alpha is not None:
                small_alpha = np.asarray(
                    cv2.resize(alpha, size, interpolation=cv2.INTER_AREA), np.uint8
                )
            if len(self._cache) >= self._MAX_ENTRIES:
                self._cache.clear()
            hit = (small, small_alpha, src)
            self._cache[key] = hit
        return hit[0], hit[1]


_SPRITES = _Sprites()

_SHIP_LAYERS: dict[int, tuple[Image, Image, Image]] = {}


def _ship_layers(ship: Image) -> tuple[Image, Image]:
    """The ship picture's colour and alpha as contiguous pictures, split once per picture:
    the sprite cache files pictures by id and keeps them, so a new split every frame would
    fill it (4096 entries, hundreds of MiB) before it is cleared."""
    hit = _SHIP_LAYERS.get(id(ship))
    if hit is None or hit[0] is not ship:
        if len(_SHIP_LAYERS) >= 8:
            _SHIP_LAYERS.clear()
        colour = np.ascontiguousarray(ship[:, :, :3])
        alpha = np.ascontiguousarray(ship[:, :, 3])
        colour.flags.writeable = alpha.flags.writeable = False
        hit = (ship, colour, alpha)
        _SHIP_LAYERS[id(ship)] = hit
    return hit[1], hit[2]


class _Frame:
    """The picture being drawn, with the camera's table -> image homography."""

    def __init__(self, image: Image, table_to_image: Matrix) -> None:
        self.img = image
        self.h_table = table_to_image
        self.height, self.width = image.shape[:2]
        self.sprites = _SPRITES
        self._ones: dict[tuple[int, int], Image] = {}

    def paste(self, src: Image, picture_to_image: Matrix, alpha: Image | None = None) -> None:
        """Warp a picture (BGR, optional alpha) into the frame with anti-aliased edges."""
        h, w = src.shape[:2]
        scale = _local_scale(picture_to_image, w / 2, h / 2)
        level, level_alpha = self.sprites.level(src, alpha, scale)
        lh, lw = level.shape[:2]
        # Level pixel centres map onto the matching points of the full picture.
        hmat = picture_to_image @ np.array(
            [[w / lw, 0.0, 0.5 * w / lw - 0.5], [0.0, h / lh, 0.5 * h / lh - 0.5], [0.0, 0.0, 1.0]]
        )
        corners = apply(
            hmat, [(-0.5, -0.5), (lw - 0.5, -0.5), (lw - 0.5, lh - 0.5), (-0.5, lh - 0.5)]
        )
        x0 = max(0, math.floor(corners[:, 0].min()) - 1)
        y0 = max(0, math.floor(corners[:, 1].min()) - 1)
        x1 = min(self.width, math.ceil(corners[:, 0].max()) + 2)
        y1 = min(self.height, math.ceil(corners[:, 1].max()) + 2)
        if x1 <= x0 or y1 <= y0:
            return
        roi_h = _translate(-x0, -y0) @ hmat
        size = (x1 - x0, y1 - y0)
        warped = cv2.warpPerspective(
            level, roi_h, size, flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE
        )
        if level_alpha is None:
            key = (lh, lw)
            if key not in self._ones:
                self._ones[key] = np.full((lh, lw), 255, np.uint8)
            level_alpha = self._ones[key]
        a = cv2.warpPerspective(
            level_alpha,
            roi_h,
            size,
            flags=cv2.INTER_LINEAR,
            borderMode=cv2.BORDER_CONSTANT,
            borderValue=0,
        )
        weight = a.astype(np.float32) * (1.0 / 255.0)
        roi = self.img[y0:y1, x0:x1]
        roi[:] = cv2.blendLinear(warped, roi, weight, 1.0 - weight)

    def fill(
        self, area_to_image: Matrix, points: Sequence[Point] | NDArray[np.float64], colour: BGR
    ) -> None:
        """Fill a polygon given in an area's mm frame."""
        pts = apply(area_to_image, points)
        fixed = np.round(pts * (1 << _SHIFT)).astype(np.int32).reshape(-1, 1, 2)
        cv2.fillPoly(self.img, [fixed], colour, cv2.LINE_AA, _SHIFT)

    def outline(
        self,
        area_to_image: Matrix,
        points: Sequence[Point],
        width_mm: float,
        grey: int,
        background: int = 250,
    ) -> None:
        """A thin closed outline; lines under a pixel wide are drawn fainter instead."""
        pts = apply(area_to_image, points)
        cx, cy = np.asarray(points, np.float64).mean(axis=0)
        width_px = width_mm * _local_scale(area_to_image, float(cx), float(cy))
        strength = min(1.0, width_px)
        shade = round(background - (background - grey) * strength)
        fixed = np.round(pts * (1 << _SHIFT)).astype(np.int32).reshape(-1, 1, 2)
        thickness = max(1, round(width_px))
        cv2.polylines(
            self.img, [fixed], True, (shade, shade, shade), thickness, cv2.LINE_AA, _SHIFT
        )


def _mat_paper(tile_mm: float) -> tuple[float, float, float, float]:
    """The printed mat's A3 sheet in the display's frame: (left, top, width, height), laid
    out as `companion kit` prints it; a tile size the kit cannot print gets a centred sheet."""
    from vision.kit.printer import A3_MM, KitError, mat_layout

    width, height = A3_MM
    try:
        x, y = mat_layout(tile_mm).origin
    except KitError:
        x, y = width / 2, height / 2
    return -x, -y, width, height


def _square(cx: float, cy: float, half: float) -> list[Point]:
    return [
        (cx - half, cy - half),
        (cx + half, cy - half),
        (cx + half, cy + half),
        (cx - half, cy + half),
    ]


@cache
def _aruco_dictionary() -> cv2.aruco.Dictionary:
    return cv2.aruco.getPredefinedDictionary(getattr(cv2.aruco, kit.MARKER_DICT))


@cache
def _sticker_picture(marker_id: int, module_px: int) -> tuple[Image, float]:
    """A marker sticker (white margin around the black square) and its side in mm."""
    marker = cv2.aruco.generateImageMarker(
        _aruco_dictionary(), marker_id, 6 * module_px, borderBits=1
    )
    module_mm = kit.MARKER_MM / 6
    white = round(cfg.STICKER_WHITE_MM / module_mm * module_px)
    sticker = cv2.copyMakeBorder(marker, white, white, white, white, cv2.BORDER_CONSTANT, value=255)
    ink = (sticker.astype(np.float32) / 255.0) * (246 - 22) + 22  # printed black is not pure black
    picture = np.asarray(cv2.cvtColor(ink.astype(np.uint8), cv2.COLOR_GRAY2BGR), np.uint8)
    side_mm = sticker.shape[0] * module_mm / module_px
    return picture, side_mm


def _marker_placement(centre: Point, sticker_offset: Point, sticker_turn: float) -> Matrix:
    """Sticker frame (centred, mm) -> area frame, as the sticker was stuck."""
    return _translate(centre[0] + sticker_offset[0], centre[1] + sticker_offset[1]) @ _turn(
        sticker_turn
    )


def _draw_sticker(
    frame: _Frame,
    area_to_image: Matrix,
    scene: TableScene,
    marker_id: int,
    centre: Point,
    module_px: int,
) -> NDArray[np.float64]:
    """Stick marker `marker_id` near `centre`; returns its black square's image corners."""
    sticker = scene.sticker(marker_id)
    place = area_to_image @ _marker_placement(centre, sticker.offset_mm, sticker.turn_deg)
    picture, side_mm = _sticker_picture(marker_id, module_px)
    n = picture.shape[0]
    frame.paste(picture, place @ picture_to_mm(n, n, side_mm, side_mm))
    corners_mm = kit.marker_corners((0.0, 0.0))
    return apply(place, corners_mm)


def _tile_edge(frame: _Frame, placement: Matrix, tile_mm: float) -> None:
    half = tile_mm / 2 + cfg.TILE_EDGE_MM
    frame.fill(placement, _square(0, 0, half), cfg.TILE_EDGE_BGR)


def _tile_placement(area_to_image: Matrix, cell_centre: Point, tile: PlacedTile) -> Matrix:
    """Tile frame (centred, upright, mm) -> image."""
    ox, oy = tile.offset_mm
    return (
        area_to_image
        @ _translate(cell_centre[0] + ox, cell_centre[1] + oy)
        @ _turn(tile.rotation + tile.turn_deg)
    )


@dataclass(frozen=True)
class _Card:
    """How the tiles of one frame stand as card: `raised` (image -> image, the top face's
    lift; None for flat tiles), `wall` the side walls' colour, the print's `jitter` and
    `wear` (Effects)."""

    raised: Matrix | None = None
    wall: BGR = cfg.TILE_EDGE_BGR
    jitter: float = 0.0
    wear: float = 0.0


def _printed(picture: Image, card: _Card, rng: np.random.Generator) -> Image:
    """One tile's print: its colours a little off, its corners perhaps worn pale."""
    out = picture
    if card.jitter > 0:
        gain = 1.0 + rng.uniform(-card.jitter, card.jitter, 3)
        out = np.clip(out.astype(np.float32) * gain, 0, 255).astype(np.uint8)
    if card.wear > 0:
        n = out.shape[0]
        worn = rng.random(4) < card.wear
        if worn.any():
            out = out.copy()
            for corner, (cx, cy) in zip(worn, ((0, 0), (n, 0), (n, n), (0, n)), strict=True):
                if corner:
                    r = float(rng.uniform(0.03, 0.08)) * n
                    pale = np.zeros(out.shape[:2], np.uint8)
                    cv2.circle(pale, (cx, cy), round(r), 255, -1, cv2.LINE_AA)
                    weight = pale.astype(np.float32)[..., None] / 255.0 * 0.7
                    out = (out * (1 - weight) + 235.0 * weight).astype(np.uint8)
    return out


def _draw_tile(
    frame: _Frame,
    pack: Pack,
    area_to_image: Matrix,
    cell_centre: Point,
    tile: PlacedTile,
    card: _Card | None,
    rng: np.random.Generator,
) -> None:
    if tile.tile_id not in pack.tiles:
        raise ValueError(f"tile {tile.tile_id!r} is not in the pack {pack.name!r}")
    picture = pack.tiles[tile.tile_id]
    placement = _tile_placement(area_to_image, cell_centre, tile)
    if card is not None:
        picture = _printed(picture, card, rng)
    if card is not None and card.raised is not None:
        half = pack.tile_mm / 2 + cfg.TILE_EDGE_MM
        foot = apply(placement, _square(0, 0, half))
        top = apply(card.raised @ placement, _square(0, 0, half))
        walls = cv2.convexHull(np.concatenate([foot, top]).astype(np.float32))
        frame.fill(np.eye(3), walls.reshape(-1, 2).astype(np.float64), card.wall)
        placement = card.raised @ placement
    _tile_edge(frame, placement, pack.tile_mm)
    n = picture.shape[0]
    frame.paste(picture, placement @ picture_to_mm(n, n, pack.tile_mm, pack.tile_mm))


def _cast_shadows(
    frame: _Frame,
    tiles: list[tuple[Matrix, Point, PlacedTile]],
    tile_mm: float,
    strength: float,
    offset_mm: Point,
) -> None:
    """The soft shadows the tiles cast on what they lie on, `offset_mm` away in the table's
    frame, darkening it by up to `strength`."""
    shade = np.zeros((frame.height, frame.width), np.uint8)
    to_table = np.asarray(np.linalg.inv(frame.h_table), np.float64)
    # Shifted on the table: image -> table, moved, table -> image.
    moved = frame.h_table @ _translate(*offset_mm) @ to_table
    for area_to_image, centre, tile in tiles:
        corners = apply(
            moved @ _tile_placement(area_to_image, centre, tile), _square(0, 0, tile_mm / 2)
        )
        fixed = np.round(corners * (1 << _SHIFT)).astype(np.int32).reshape(-1, 1, 2)
        cv2.fillPoly(shade, [fixed], 255, cv2.LINE_AA, _SHIFT)
    if not shade.any():
        return
    middle = apply(to_table, [(frame.width / 2, frame.height / 2)])[0]
    # Some 0.6 mm of penumbra, at the frame's middle.
    sigma = max(0.8, 0.6 * _local_scale(frame.h_table, float(middle[0]), float(middle[1])))
    soft = cv2.GaussianBlur(shade, (0, 0), sigma)
    keep = 1.0 - strength * soft.astype(np.float32) / 255.0
    frame.img[:] = np.clip(frame.img * keep[..., None], 0, 255).astype(np.uint8)


def _board_rim_colour(board: Image) -> BGR:
    edge = np.concatenate([board[:4].reshape(-1, 3), board[-4:].reshape(-1, 3)])
    b, g, r = (edge.mean(axis=0) * 0.7).astype(int)
    return (int(b), int(g), int(r))


# --- clutter shapes (table mm) ---------------------------------------------------------------


def _ellipse(
    centre: Point, axes: tuple[float, float], angle_deg: float, n: int = 28
) -> NDArray[np.float64]:
    t = np.linspace(0, 2 * np.pi, n, endpoint=False)
    a = math.radians(angle_deg)
    x, y = axes[0] * np.cos(t), axes[1] * np.sin(t)
    return np.column_stack(
        [
            centre[0] + x * math.cos(a) - y * math.sin(a),
            centre[1] + x * math.sin(a) + y * math.cos(a),
        ]
    )


def _clutter_shapes(item: Clutter) -> list[tuple[NDArray[np.float64], BGR]]:
    """Polygons (table mm) and colours that draw one clutter item, back to front."""
    cx, cy = item.at_mm
    s = item.size_mm
    a = math.radians(item.angle_deg)
    fwd = np.array([math.cos(a), math.sin(a)])
    side = np.array([-fwd[1], fwd[0]])
    col = item.colour
    dark: BGR = (int(col[0] * 0.7), int(col[1] * 0.7), int(col[2] * 0.7))
    light: BGR = (
        min(255, int(col[0] * 1.15)),
        min(255, int(col[1] * 1.12)),
        min(255, int(col[2] * 1.1)),
    )
    shapes: list[tuple[NDArray[np.float64], BGR]] = []
    at = np.array([cx, cy])
    if item.kind == "hand":
        wrist = at - fwd * s * 0.55
        start = np.array(
            item.reach_from_mm if item.reach_from_mm is not None else tuple(wrist - fwd * 500)
        )
        arm_w = s * 0.42
        arm = np.array(
            [
                start + side * arm_w * 1.1,
                wrist + side * arm_w,
                wrist - side * arm_w,
                start - side * arm_w * 1.1,
            ]
        )
        shapes.append((arm, dark))
        shapes.append(
            (
                arm * 0.0 + (arm - (arm.mean(axis=0))) * np.array([0.96, 0.96]) + arm.mean(axis=0),
                col,
            )
        )
        shapes.append(
            (_ellipse(tuple(at - fwd * s * 0.1), (s * 0.42, s * 0.5), item.angle_deg), col)
        )
        for k, off in enumerate((-0.36, -0.12, 0.12, 0.34)):
            base = at + side * off * s + fwd * s * 0.2
            length = s * (0.42 if k in (1, 2) else 0.36)
            finger = _ellipse(
                tuple(base + fwd * length * 0.5), (length * 0.55, s * 0.1), item.angle_deg, 16
            )
            shapes.append((finger, col))
        thumb_dir = math.degrees(a) - 55
        tb = at - side * s * 0.42 - fwd * s * 0.05
        shapes.append(
            (
                _ellipse(
                    tuple(
                        tb
                        + np.array(
                            [math.cos(math.radians(thumb_dir)), math.sin(math.radians(thumb_dir))]
                        )
                        * s
                        * 0.2
                    ),
                    (s * 0.24, s * 0.1),
                    thumb_dir,
                    16,
                ),
                col,
            )
        )
    elif item.kind == "cup":
        shapes.append((_ellipse((cx + s * 0.55, cy), (s * 0.22, s * 0.08), 0.0, 16), dark))
        shapes.append((_ellipse((cx, cy), (s / 2, s / 2), 0.0, 40), light))
        shapes.append((_ellipse((cx, cy), (s * 0.43, s * 0.43), 0.0, 40), col))
        shapes.append(
            (_ellipse((cx + s * 0.03, cy + s * 0.02), (s * 0.38, s * 0.38), 0.0, 40), (30, 50, 80))
        )
    elif item.kind == "shell":
        t = np.linspace(-0.95, 0.95, 14) * math.pi / 2
        fan = [tuple(at + (fwd * math.cos(v) + side * math.sin(v)) * s * 0.55) for v in t]
        hinge = [
            tuple(at - fwd * s * 0.3 + side * s * 0.12),
            tuple(at - fwd * s * 0.3 - side * s * 0.12),
        ]
        shapes.append((np.array(fan + hinge[::-1]), col))
        for v in np.linspace(-0.7, 0.7, 5) * math.pi / 2:
            rib = [at - fwd * s * 0.25, at + (fwd * math.cos(v) + side * math.sin(v)) * s * 0.5]
            p0, p1 = np.array(rib[0]), np.array(rib[1])
            normal = np.array([-(p1 - p0)[1], (p1 - p0)[0]])
            normal = normal / (np.linalg.norm(normal) + 1e-9) * s * 0.03
            shapes.append((np.array([p0 + normal, p1 + normal, p1 - normal, p0 - normal]), dark))
    else:  # player_ship
        t = np.linspace(-1, 1, 15)
        beam = s * 0.2 * np.sqrt(np.clip(1 - t**2, 0, 1)) + s * 0.03
        left = [at + fwd * (s / 2) * v + side * b for v, b in zip(t, beam, strict=True)]
        right = [at + fwd * (s / 2) * v - side * b for v, b in zip(t, beam, strict=True)]
        hull = np.array(left + right[::-1])
        shapes.append((hull, dark))
        shapes.append(((hull - at) * 0.85 + at, col))
        sail = np.array(
            [
                at + side * s * 0.26 + fwd * s * 0.05,
                at + side * s * 0.26 - fwd * s * 0.05,
                at - side * s * 0.26 - fwd * s * 0.05,
                at - side * s * 0.26 + fwd * s * 0.05,
            ]
        )
        shapes.append((sail, (235, 240, 245)))
    return shapes


def _clutter_height_shift(item: Clutter) -> float:
    """How far (mm) an item's shadow falls from it: hands hover, cups stand tall."""
    return {"hand": 60.0, "cup": 35.0, "player_ship": 10.0, "shell": 3.0}[item.kind]


# --- the table and the light ---------------------------------------------------------------


def _visible_table(camera: Camera) -> tuple[float, float, float, float]:
    w, h = camera.size
    inv = np.asarray(np.linalg.inv(camera.table_to_image), np.float64)
    corners = apply(inv, [(0, 0), (w - 1, 0), (w - 1, h - 1), (0, h - 1)])
    return (
        float(corners[:, 0].min()),
        float(corners[:, 1].min()),
        float(corners[:, 0].max()),
        float(corners[:, 1].max()),
    )


def _table_plane(camera: Camera) -> tuple[float, float, float, int, int]:
    """Where a table top is drawn before it is photographed: its north-west corner (mm), its
    scale (px per mm) and size (px), covering what the camera sees of the table."""
    x0, y0, x1, y1 = _visible_table(camera)
    x0, y0, x1, y1 = x0 - 20, y0 - 20, x1 + 20, y1 + 20
    ppm = cfg.WOOD_PX_PER_MM
    area = (x1 - x0) * (y1 - y0) * ppm * ppm
    if area > cfg.WOOD_MAX_PIXELS:
        ppm *= math.sqrt(cfg.WOOD_MAX_PIXELS / area)
    return x0, y0, ppm, max(16, int((x1 - x0) * ppm)), max(16, int((y1 - y0) * ppm))


def _photographed(top: Image, camera: Camera, x0: float, y0: float, ppm: float) -> Image:
    """A table top drawn on the table plane (`_table_plane`) as the camera sees it."""
    to_table = _translate(x0, y0) @ _scale(1 / ppm, 1 / ppm) @ _translate(0.5, 0.5)
    out = cv2.warpPerspective(
        top,
        camera.table_to_image @ to_table,
        camera.size,
        flags=cv2.INTER_LINEAR,
        borderMode=cv2.BORDER_REFLECT,
    )
    return np.asarray(out, np.uint8)


_TOPS: dict[tuple[str, int, tuple[int, int], bytes], Image] = {}
_TOPS_LOCK = threading.Lock()


def _table_top(kind: str, camera: Camera, seed: int) -> Image:
    """The table top (`_wood` or `_cloth`) as the camera sees it, a copy to draw on: the last
    few are kept, for a camera that stays where it is photographs the same table each frame
    (a game played frame by frame draws it once)."""
    key = (kind, seed, camera.size, camera.table_to_image.tobytes())
    with _TOPS_LOCK:
        top = _TOPS.get(key)
    if top is None:
        top = (_cloth if kind == "cloth" else _wood)(camera, seed)
        with _TOPS_LOCK:
            while len(_TOPS) >= 2:
                _TOPS.pop(next(iter(_TOPS)))
            _TOPS[key] = top
    return top.copy()


def _wood(camera: Camera, seed: int) -> Image:
    """A wooden table top (planks with grain), drawn on the table plane and photographed."""
    rng = np.random.default_rng([seed, 5])
    x0, y0, ppm, w, h = _table_plane(camera)
    ys = (np.arange(h, dtype=np.float32) + 0.5) / ppm + y0
    xs = (np.arange(w, dtype=np.float32) + 0.5) / ppm + x0
    warp = cv2.resize(
        rng.standard_normal((max(2, h // 60), max(2, w // 60)), np.float32),
        (w, h),
        interpolation=cv2.INTER_CUBIC,
    )
    plank_mm = float(rng.uniform(110, 170))
    phase = float(rng.uniform(0, plank_mm))
    plank = np.floor((ys + phase) / plank_mm).astype(np.int64)
    n_planks = int(plank.max() - plank.min() + 1)
    shade = rng.uniform(0.85, 1.1, n_planks).astype(np.float32)[plank - plank.min()]
    period = float(rng.uniform(3.5, 6.5))
    grain = np.sin((ys[:, None] + 6.0 * warp + 0.015 * xs[None, :]) * (2 * np.pi / period))
    fine = cv2.resize(
        rng.standard_normal((h, max(2, w // 8)), np.float32), (w, h), interpolation=cv2.INTER_LINEAR
    )
    # Grain finer than about 3 texture pixels would alias into stripes: fade it out.
    grain_amp = 0.07 * float(np.clip((period * ppm - 2.0) / 2.0, 0.0, 1.0))
    value = shade[:, None] * (1.0 + grain_amp * grain + 0.03 * fine)
    seam_half = max(1.2, 0.75 / ppm)
    seam = np.abs(((ys + phase) % plank_mm) - plank_mm / 2) > plank_mm / 2 - seam_half
    value[seam] *= 0.55
    base = np.array([rng.uniform(60, 90), rng.uniform(110, 140), rng.uniform(150, 190)], np.float32)
    wood = np.clip(value[:, :, None] * base[None, None, :], 0, 255).astype(np.uint8)
    return _photographed(wood, camera, x0, y0, ppm)


def _cloth(camera: Camera, seed: int) -> Image:
    """A cloth table top (one colour of CLOTH_BGR, a faint weave and a few soft folds),
    drawn on the table plane and photographed."""
    rng = np.random.default_rng([seed, 6])
    x0, y0, ppm, w, h = _table_plane(camera)
    folds = cv2.resize(
        rng.standard_normal((max(2, h // 150), max(2, w // 150)), np.float32),
        (w, h),
        interpolation=cv2.INTER_CUBIC,
    )
    weave = rng.standard_normal((h, w)).astype(np.float32)
    value = 1.0 + 0.04 * folds + 0.03 * weave
    base = np.asarray(cfg.CLOTH_BGR[int(rng.integers(len(cfg.CLOTH_BGR)))], np.float32)
    base = base * rng.uniform(0.9, 1.1, 3).astype(np.float32)
    cloth = np.clip(value[:, :, None] * base[None, None, :], 0, 255).astype(np.uint8)
    return _photographed(cloth, camera, x0, y0, ppm)


@dataclass
class _LightMaps:
    """Low-resolution maps of the light: gain per channel, glare (0..1), and what covers."""

    gain: FloatImage
    glare: FloatImage
    cover: Image
    down: int

    def sample(
        self, points: NDArray[np.float64], size: tuple[int, int]
    ) -> tuple[NDArray[np.bool_], NDArray[np.bool_]]:
        """For image points: (hidden by clutter or glare, inside the frame)."""
        w, h = size
        inside = (
            (points[:, 0] >= 0)
            & (points[:, 0] <= w - 1)
            & (points[:, 1] >= 0)
            & (points[:, 1] <= h - 1)
        )
        mx = np.clip((points[:, 0] / self.down).astype(int), 0, self.cover.shape[1] - 1)
        my = np.clip((points[:, 1] / self.down).astype(int), 0, self.cover.shape[0] - 1)
        hidden = (self.cover[my, mx] > 127) | (self.glare[my, mx] >= cfg.GLARE_WASHOUT)
        return hidden & inside, inside


def _light_maps(
    camera: Camera, effects: Effects, scene: TableScene, rng: np.random.Generator
) -> _LightMaps:
    w, h = camera.size
    down = cfg.MAP_DOWNSCALE
    mw, mh = (w + down - 1) // down, (h + down - 1) // down
    yy, xx = np.mgrid[0:mh, 0:mw].astype(np.float32)
    xn, yn = xx / mw - 0.5, yy / mh - 0.5
    angle = float(rng.uniform(0, 2 * np.pi))
    gradient = (np.cos(angle) * xn + np.sin(angle) * yn) * 2.0
    vignette = (xn**2 + yn**2) * 2.0
    lum = effects.exposure * (1.0 + 0.5 * effects.light * gradient - 0.6 * effects.light * vignette)
    shade = np.ones((mh, mw), np.float32)
    for _ in range(effects.shadows):
        cx, cy = rng.uniform(0, mw), rng.uniform(0, mh)
        ax, ay = rng.uniform(0.15, 0.4) * mw, rng.uniform(0.1, 0.3) * mh
        blob = np.zeros((mh, mw), np.float32)
        cv2.ellipse(
            blob,
            (int(cx), int(cy)),
            (int(ax), int(ay)),
            float(rng.uniform(0, 180)),
            0,
            360,
            1.0,
            -1,
        )
        blob = np.asarray(cv2.GaussianBlur(blob, (0, 0), max(2.0, 0.25 * min(ax, ay))), np.float32)
        shade *= 1.0 - effects.shadow_strength * float(rng.uniform(0.6, 1.0)) * blob
    # Clutter: what covers, and the soft shadow it casts.
    cover = np.zeros((mh, mw), np.uint8)
    cast = np.zeros((mh, mw), np.float32)
    light_dir = np.array([math.cos(angle + math.pi), math.sin(angle + math.pi)])
    to_map = _scale(1 / down, 1 / down) @ camera.table_to_image
    for item in scene.clutter:
        shift = light_dir * _clutter_height_shift(item)
        for poly, _ in _clutter_shapes(item):
            pts = apply(to_map, poly)
            fixed = np.round(pts * (1 << _SHIFT)).astype(np.int32).reshape(-1, 1, 2)
            cv2.fillPoly(cover, [fixed], 255, cv2.LINE_8, _SHIFT)
            spts = apply(to_map, poly + shift)
            sfixed = np.round(spts * (1 << _SHIFT)).astype(np.int32).reshape(-1, 1, 2)
            cv2.fillPoly(cast, [sfixed], 1.0, cv2.LINE_8, _SHIFT)
    if scene.clutter:
        cast = np.asarray(cv2.GaussianBlur(cast, (0, 0), 4.0), np.float32)
        shade *= 1.0 - cfg.CLUTTER_SHADOW_DARKNESS * cast * (cover == 0)
    warm = np.array(
        [1 - 0.2 * effects.warmth, 1 - 0.05 * effects.warmth, 1 + 0.08 * effects.warmth], np.float32
    )
    gain = (lum * shade)[:, :, None] * warm[None, None, :]
    glare = np.zeros((mh, mw), np.float32)
    for _ in range(effects.glare_spots):
        cx, cy = rng.uniform(0.1, 0.9) * mw, rng.uniform(0.1, 0.9) * mh
        radius = float(rng.uniform(0.03, 0.08)) * mw
        peak = effects.glare_strength * float(rng.uniform(0.75, 1.0))
        glare += peak * np.exp(
            -((xx - cx) ** 2 + ((yy - cy) * rng.uniform(0.7, 1.3)) ** 2) / (2 * radius**2)
        )
    return _LightMaps(gain.astype(np.float32), np.clip(glare, 0, 1).astype(np.float32), cover, down)


def _noise(shape: tuple[int, int], sigma: float, rng: np.random.Generator) -> NDArray[np.int16]:
    """Sensor noise: a fresh quarter-frame of Gaussian noise, mirrored into the four quarters."""
    h, w = shape
    qh, qw = (h + 1) // 2, (w + 1) // 2
    block = np.empty((qh, qw, 3), np.int16)
    cv2.setRNGSeed(int(rng.integers(0, 2**31 - 1)))
    cv2.randn(block, np.zeros(3), np.full(3, sigma))
    top = np.concatenate([block, block[:, ::-1]], axis=1)
    full = np.concatenate([top, top[::-1, ::-1]], axis=0)
    return np.ascontiguousarray(full[:h, :w])


#: The radius (Gaussian sigma, frame pixels) of a camera's own sharpening (Effects.sharpen).
SHARPEN_PX = 1.0


def _photograph(
    image: Image, maps: _LightMaps, effects: Effects, rng: np.random.Generator
) -> tuple[Image, int | None]:
    """Lens blur, light (gain, warmth, shadows), glare, sensor noise, the camera's
    sharpening and JPEG, in 8 bits."""
    h, w = image.shape[:2]
    out = image
    if effects.blur_px > 0:
        out = np.asarray(cv2.GaussianBlur(out, (0, 0), effects.blur_px), np.uint8)
    # Gain in fixed point: 128 is 1.0, so light may brighten up to 2x.
    gain = np.clip(maps.gain * 128.0 + 0.5, 0, 255).astype(np.uint8)
    gain_full = cv2.resize(gain, (w, h), interpolation=cv2.INTER_LINEAR)
    out = np.asarray(cv2.multiply(out, gain_full, scale=1.0 / 128.0), np.uint8)
    if maps.glare.any():
        # Glare pulls towards white: 255 - (255 - v) * (1 - glare).
        keep = np.clip((1.0 - maps.glare) * 255.0 + 0.5, 0, 255).astype(np.uint8)
        keep_full = cv2.resize(keep, (w, h), interpolation=cv2.INTER_LINEAR)
        keep3 = cv2.merge([keep_full, keep_full, keep_full])
        dimmed = cv2.multiply(cv2.bitwise_not(out), keep3, scale=1.0 / 255.0)
        out = np.asarray(cv2.bitwise_not(dimmed), np.uint8)
    if effects.noise > 0:
        out = np.asarray(
            cv2.add(out, _noise((h, w), effects.noise, rng), dtype=cv2.CV_8U), np.uint8
        )
    if effects.sharpen > 0:
        soft = cv2.GaussianBlur(out, (0, 0), SHARPEN_PX)
        out = np.asarray(cv2.addWeighted(out, 1.0 + effects.sharpen, soft, -effects.sharpen, 0))
    out = np.asarray(out, np.uint8)
    quality = effects.jpeg_quality
    if quality is not None:
        ok, data = cv2.imencode(".jpg", out, [cv2.IMWRITE_JPEG_QUALITY, int(quality)])
        if not ok:
            raise RuntimeError("JPEG encoding failed")
        out = np.asarray(cv2.imdecode(data, cv2.IMREAD_COLOR), np.uint8)
    return out, quality


# --- the whole frame -----------------------------------------------------------------------


def _sample_square(
    placement: Matrix, half: float, n: int = cfg.TRUTH_SAMPLES
) -> NDArray[np.float64]:
    t = (np.arange(n) + 0.5) / n * 2 * half - half
    gx, gy = np.meshgrid(t, t)
    return apply(placement, np.column_stack([gx.ravel(), gy.ravel()]))


def _draw_display(
    frame: _Frame,
    scene: TableScene,
    geo: kit.DisplayGeometry,
    h_display: Matrix,
    module_px: int,
    marker_corners: dict[int, NDArray[np.float64]],
    tiles_to_draw: list[tuple[Matrix, Point, PlacedTile]],
) -> None:
    """The display mat: paper, thin grey outlines and its stickers; its tiles are added to
    `tiles_to_draw`, its stickers' corners to `marker_corners`."""
    tile_mm = geo.tile_mm
    left, top, pw, ph = _mat_paper(tile_mm)
    frame.fill(
        h_display,
        [(left, top), (left + pw, top), (left + pw, top + ph), (left, top + ph)],
        (244, 247, 248),
    )
    for r in range(4):
        for c in range(4):
            frame.outline(
                h_display,
                _square(*geo.cell_centre(r, c), tile_mm / 2),
                kit.MAT_OUTLINE_MM,
                kit.MAT_OUTLINE_GREY,
            )
            tile = scene.display[r][c]
            if tile is not None:
                tiles_to_draw.append((h_display, geo.cell_centre(r, c), tile))
    for half in (geo.lane_inner, geo.half_extent):
        frame.outline(h_display, _square(0, 0, half), kit.MAT_OUTLINE_MM, kit.MAT_OUTLINE_GREY)
    for marker_id, centre in geo.marker_centres().items():
        marker_corners[marker_id] = _draw_sticker(
            frame, h_display, scene, marker_id, centre, module_px
        )


def _draw_seat(
    frame: _Frame,
    pack: Pack,
    scene: TableScene,
    seat: SeatScene,
    h_seat: Matrix,
    module_px: int,
    marker_corners: dict[int, NDArray[np.float64]],
    tiles_to_draw: list[tuple[Matrix, Point, PlacedTile]],
) -> None:
    """A seat: its board (rim, picture), stickers and storage card; its tiles are added to
    `tiles_to_draw`, its stickers' corners to `marker_corners`."""
    catalogue = pack.catalogue
    tile_mm = pack.tile_mm
    layout = catalogue.board(seat.side)
    check_seat_cells(seat, layout)
    sgeo = kit.SeatGeometry(seat.seat, layout.rows, layout.cols, tile_mm)
    gw, gh = layout.cols * sgeo.pitch, layout.rows * sgeo.pitch
    board = pack.boards.get(seat.side)
    rim = cfg.BOARD_BORDER_MM
    rim_colour = _board_rim_colour(board) if board is not None else (60, 90, 120)
    frame.fill(
        h_seat,
        [
            (-gw / 2 - rim, -gh / 2 - rim),
            (gw / 2 + rim, -gh / 2 - rim),
            (gw / 2 + rim, gh / 2 + rim),
            (-gw / 2 - rim, gh / 2 + rim),
        ],
        rim_colour,
    )
    if board is not None:
        bh, bw = board.shape[:2]
        frame.paste(board, h_seat @ picture_to_mm(bw, bh, gw, gh))
    sx, sy = sgeo.storage_centre()
    if scene.storage_cards:
        card = sgeo.pitch / 2 + kit.STORAGE_CARD_MARGIN_MM
        frame.fill(h_seat, _square(sx, sy, card), (240, 244, 245))
        frame.outline(
            h_seat,
            _square(sx, sy, sgeo.pitch / 2),
            kit.STORAGE_OUTLINE_MM,
            kit.STORAGE_OUTLINE_GREY,
            240,
        )
    for marker_id, centre in sgeo.marker_centres().items():
        marker_corners[marker_id] = _draw_sticker(
            frame, h_seat, scene, marker_id, centre, module_px
        )
    for r, row in enumerate(seat.cells):
        for c, tile in enumerate(row):
            if tile is not None:
                tiles_to_draw.append((h_seat, sgeo.cell_centre(r, c), tile))
    if seat.storage is not None:
        tiles_to_draw.append((h_seat, (sx, sy), seat.storage))


def _occlusion(
    scene: TableScene,
    pack: Pack,
    h_display: Matrix,
    homographies: dict[Area, Matrix],
    maps: _LightMaps,
    cam: Camera,
) -> dict[CellKey, float]:
    """The hidden share of each placed tile (covered, washed out or outside the frame)."""
    catalogue = pack.catalogue
    tile_mm = pack.tile_mm
    geo = kit.DisplayGeometry(tile_mm)
    occlusion: dict[CellKey, float] = {}
    for key, _tile in scene.placed():
        area, r, c = key
        if area == DISPLAY:
            h_area, centre = h_display, geo.cell_centre(r, c)
        else:
            seat = scene.seat(int(area))
            layout = catalogue.board(seat.side)
            sgeo = kit.SeatGeometry(seat.seat, layout.rows, layout.cols, tile_mm)
            if r != STORAGE_ROW and not layout.playable((r, c)):
                continue
            centre = sgeo.storage_centre() if r == STORAGE_ROW else sgeo.cell_centre(r, c)
            h_area = homographies[seat.seat]
        samples = _sample_square(h_area @ _translate(*centre), tile_mm / 2)
        hidden, inside = maps.sample(samples, cam.size)
        occlusion[key] = float(np.mean(hidden | ~inside))
    return occlusion


def _hidden_markers(
    marker_corners: dict[int, NDArray[np.float64]], maps: _LightMaps, cam: Camera
) -> set[int]:
    """The markers hidden enough not to be found."""
    hidden_markers: set[int] = set()
    for marker_id, corners in marker_corners.items():
        quad = cv2.getPerspectiveTransform(
            np.array(kit.marker_corners((0.0, 0.0)), np.float32), corners.astype(np.float32)
        ).astype(np.float64)
        hidden, inside = maps.sample(_sample_square(quad, kit.MARKER_MM / 2), cam.size)
        if np.mean(hidden | ~inside) >= cfg.MARKER_HIDDEN_FRACTION:
            hidden_markers.add(marker_id)
    return hidden_markers


def render_table(
    scene: TableScene,
    pack: Pack,
    camera: CameraSpec | None = None,
    effects: Effects | None = None,
    rng: np.random.Generator | None = None,
) -> Rendered:
    """Draw `scene` with `pack`'s pictures as `camera` sees it under `effects`."""
    camera = camera or CameraSpec()
    effects = effects or Effects.none()
    rng = rng if rng is not None else np.random.default_rng(0)
    catalogue = pack.catalogue
    tile_mm = pack.tile_mm
    truth = scene.truth(catalogue)  # also checks every seat's board size
    points = scene_points(scene, catalogue)
    cam = fit_camera(camera, points)
    h_table = cam.table_to_image
    frame = _Frame(_table_top(scene.table_top, cam, scene.table_seed), h_table)
    scales = [_local_scale(h_table, x, y) for x, y in points]
    module_px = max(6, math.ceil(kit.MARKER_MM / 6 * max(scales) * 1.5))

    homographies: dict[Area, Matrix] = {}
    marker_corners: dict[int, NDArray[np.float64]] = {}
    tiles_to_draw: list[tuple[Matrix, Point, PlacedTile]] = []

    # The display mat: paper, thin grey outlines, stickers 0-3.
    geo = kit.DisplayGeometry(tile_mm)
    h_display = h_table @ area_to_table(scene.display_origin_mm, scene.display_facing_deg)
    homographies[DISPLAY] = h_display / h_display[2, 2]
    _draw_display(frame, scene, geo, h_display, module_px, marker_corners, tiles_to_draw)

    # The seats: board (rim, picture), stickers, storage card.
    for seat in scene.seats:
        h_seat = h_table @ area_to_table(seat.origin_mm, seat.facing_deg)
        homographies[seat.seat] = h_seat / h_seat[2, 2]
        _draw_seat(frame, pack, scene, seat, h_seat, module_px, marker_corners, tiles_to_draw)

    card: _Card | None = None
    if effects.tile_height_mm > 0 or effects.print_jitter > 0 or effects.tile_wear > 0:
        lift = cam.raised(effects.tile_height_mm) if effects.tile_height_mm > 0 else None
        wall = tuple(
            int(v) for v in np.clip(np.array(cfg.TILE_EDGE_BGR) * rng.uniform(0.6, 2.2), 0, 255)
        )
        card = _Card(lift, wall, effects.print_jitter, effects.tile_wear)  # type: ignore[arg-type]
    if effects.tile_shadow > 0:
        # The light falls from one side: the shadow lies away from it, longer for thicker tiles.
        angle = rng.uniform(0.0, 2 * math.pi)
        length = 0.5 + 1.5 * effects.tile_height_mm
        offset = (length * math.cos(angle), length * math.sin(angle))
        _cast_shadows(frame, tiles_to_draw, tile_mm, effects.tile_shadow, offset)
    for h_area, centre, tile in tiles_to_draw:
        _draw_tile(frame, pack, h_area, centre, tile, card, rng)

    # The explorer ship, bow pointing the way it sails (clockwise).
    ship_box: NDArray[np.float64] | None = None
    if scene.ship is not None:
        ship = pack.ship
        sh, sw = ship.shape[:2]
        length = cfg.SHIP_LENGTH_MM
        scale_mm = length / max(sh, sw)
        heading = ((scene.ship // 4 + 1) % 4) * 90.0 - (90.0 if sw > sh else 0.0)
        cx, cy = geo.ship_centre(scene.ship)
        place = (
            h_display
            @ _translate(cx + scene.ship_offset_mm[0], cy + scene.ship_offset_mm[1])
            @ _turn(heading + scene.ship_turn_deg)
        )
        ship_bgr, ship_alpha = _ship_layers(ship)
        frame.paste(
            ship_bgr, place @ picture_to_mm(sw, sh, sw * scale_mm, sh * scale_mm), ship_alpha
        )
        t = (np.arange(cfg.TRUTH_SAMPLES) + 0.5) / cfg.TRUTH_SAMPLES - 0.5
        gx, gy = np.meshgrid(t * sw * scale_mm * 0.8, t * sh * scale_mm * 0.8)
        ship_box = apply(place, np.column_stack([gx.ravel(), gy.ravel()]))

    # Clutter on top, then the light.
    for item in scene.clutter:
        for poly, colour in _clutter_shapes(item):
            frame.fill(h_table, poly, colour)
    maps = _light_maps(cam, effects, scene, rng)
    image, quality = _photograph(Lens(camera.lens_k).bend(frame.img), maps, effects, rng)

    # What is hidden.
    occlusion = _occlusion(scene, pack, h_display, homographies, maps, cam)
    covered = frozenset(k for k, v in occlusion.items() if v >= cfg.COVERED_FRACTION)
    hidden_markers = _hidden_markers(marker_corners, maps, cam)
    ship_covered = False
    if ship_box is not None:
        hidden, inside = maps.sample(ship_box, cam.size)
        ship_covered = bool(np.mean(hidden | ~inside) >= cfg.SHIP_COVERED_FRACTION)
    return Rendered(
        image=image,
        truth=truth,
        covered=covered,
        occlusion=MappingProxyType(occlusion),
        homographies=MappingProxyType(homographies),
        marker_corners=MappingProxyType(marker_corners),
        hidden_markers=frozenset(hidden_markers),
        ship_covered=ship_covered,
        jpeg_quality=quality,
        camera=cam,
        px_per_mm=(least_px_per_mm(cam, points), max(scales)),
    )
