"""Where the display and each seat lie in the frame, and the rectified crops cut from them.

Poses
-----
Every area (the display, seat 1..5) has a frame in millimetres (vision.kit: x east, y south,
origin at its centre). `AreaPose.homography` maps that frame to image pixels (OpenCV pixel
centres: pixel (x, y) is centred on (x, y)). Orientation comes from the marker ids, never
from the image's axes: any in-plane angle, a camera upside down and seats facing any way
all come out north up.

A pose is fitted by least squares to all four corners of every seen marker of the area
(16 points from 4 markers). Markers are stickers that may sit 3 mm / 2° off their place, so
when two or more areas are seen they are fitted TOGETHER as one table plane: one
homography for the table (shared perspective) and, per area, a turn, shift and scale on
that plane. Eight parameters per area become four, and each area's pose then rests on
every marker of the table; `AreaConfig.joint_plane_fit` turns this off and the fit falls
back to separate fits by itself when the one-plane model does not hold (a curved lens).
A marker that does not fit its area's others (a wrong or far-misplaced sticker) is left
out with a warning; an area that still does not fit, or whose view is impossible (scale,
marker sizes, a fold), is not located and gets a warning instead of garbage.

One marker alone does not place an area: its sticker's 2° turn is some 10 mm across a
board. But it does place it roughly on the table plane another area gives
(`from_one_marker`), which is enough for `vision.reader.read` to look again, closely, where the
area's other markers must be (a sticker the first pass missed is often found). A display
still left with one marker (a hand over the others) is placed by that marker and its
printed lane outline (`place_display_by_lane`); a seat, whose board has no outline the kit
prints, is not.

Given the grey frame, `locate_all` then refines the display beyond its stickers with the
printed outline of its ship lane (`refine_display`): thin grey lines found to a fraction of
a pixel between the stickers, where nothing else is printed. The jointly fitted seats then
take the table plane's perspective from the refined display. How close each fit puts the
cell centres on rendered tables: docs/vision.md, "Markers and areas" (`companion bench poses`).

Crops (the contract with vision.reader.recognise)
-----------------------------------------------------------
`cell_crop(image, pose, centre_mm, size_mm, px_per_mm)` returns a square picture of the
area, north of the area up, warped DIRECTLY from the full frame (one interpolation):
- n = max(4, round(size_mm * px_per_mm)) pixels a side; pixel size s = size_mm / n mm;
- crop pixel (u, v) (column, row, whole numbers at pixel centres) shows the area point
  x = cx - size_mm/2 + (u + 0.5) * s,  y = cy - size_mm/2 + (v + 0.5) * s;
  so the crop's centre is exactly the nominal centre (cx, cy) given.
- cells: centre = the NOMINAL cell centre (kit.DisplayGeometry / kit.SeatGeometry
  .cell_centre), size = tile_mm + 2 * CROP_MARGIN_MM (`tile_crop_mm`), at
  `config.PX_PER_MM` (2.0 px/mm: a 45 mm tile is 90 px, never less than the camera's own
  1.5 px/mm); `vision.reader.read` cuts them with `cell_crops`.
- the storage slot: `storage_crop`: centre = SeatGeometry.storage_centre(), size =
  board pitch Pb + 2 * CROP_MARGIN_MM (the slot is a Pb square, a tile may lie loosely in it).
- the ship lane: `display_area(image, pose, px_per_mm)` is the whole mat, grid and lane,
  side 2 * DisplayGeometry.half_extent, centred on the display centre, north up; the ship at
  position p is centred at `area_pixel(pose.geometry.ship_centre(p), ...)` of it.
- `cell_crops` cuts many crops of one area and size, each exactly as `cell_crop` would (one
  warp over all of them when their pixel grids coincide, as a grid's cells do).
- `picture_crop` cuts the same square from an upright flat picture covering a known extent
  (the pack's empty board picture), so references and camera crops line up pixel for pixel.
Pixels outside the frame repeat the frame's edge; `crop_visible` tells whether a square lies
wholly inside the frame (vision.reader.read reports a cell that does not as unknown).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from itertools import islice, product
from typing import Any, Final

import cv2
import numpy as np
from numpy.typing import NDArray

from companion.catalogue import BoardLayout
from companion.errors import CompanionError
from vision import kit
from vision.config import CROP_MARGIN_MM, PX_PER_MM, AreaConfig
from vision.reader.markers import MarkerSighting, marker_side_px

AreaKey = str | int  # DISPLAY or a seat number 1..5
Geometry = kit.DisplayGeometry | kit.SeatGeometry
Matrix = NDArray[np.float64]
Image = NDArray[np.uint8]
DISPLAY: Final = "display"


class DisplayNotFound(CompanionError):
    """The display mat's markers are not seen well enough to place its cells."""


class BoardNotFound(CompanionError):
    """A seat's markers are not seen well enough to place its board."""


@dataclass(frozen=True, slots=True, eq=False)
class AreaPose:
    """An area located in the frame: `homography` maps its mm frame to image pixels."""

    area: AreaKey
    homography: Matrix
    markers_seen: tuple[int, ...]
    reprojection_error_px: float
    geometry: Geometry
    # How the pose was fitted: "joint" (with the table plane), "separate", "lane" (refined
    # with the display's printed lane outline), ONE_MARKER (a display placed by one marker
    # and its lane outline; or, rough, any area by one marker: `from_one_marker`).
    method: str = "separate"
    # The seen corners of markers_seen (4 per marker, in order), image px.
    corners_px: NDArray[np.float64] | None = None

    @property
    def name(self) -> str:
        return area_name(self.area)

    def project(self, points_mm: Any) -> NDArray[np.float64]:
        """Image points (N x 2) of area points (N x 2, mm)."""
        return _apply(self.homography, np.asarray(points_mm, np.float64).reshape(-1, 2))

    def unproject(self, points_px: Any) -> NDArray[np.float64]:
        """Area points (mm) of image points."""
        return _apply(np.linalg.inv(self.homography), np.asarray(points_px, np.float64))

    def px_per_mm(self, at_mm: tuple[float, float] = (0.0, 0.0)) -> float:
        """The image scale at a point of the area (square root of the local area ratio)."""
        return float(_local_scale(self.homography, np.asarray([at_mm], np.float64))[0])

    def scaled(self, factor: float) -> AreaPose:
        """The same pose for a copy of the frame resized by `factor` (e.g. the motion stream)."""
        s = np.array([[factor, 0, 0.5 * factor - 0.5], [0, factor, 0.5 * factor - 0.5], [0, 0, 1]])
        return replace(self, homography=s @ self.homography)

    def outline_mm(self) -> NDArray[np.float64]:
        """The area's outline in its frame: the display mat, or a seat's board with its markers
        and storage slot."""
        return area_outline_mm(self.geometry)


def area_name(area: AreaKey) -> str:
    """How warnings name an area."""
    return "display" if area == DISPLAY else f"seat {area}"


def area_outline_mm(geometry: Geometry) -> NDArray[np.float64]:
    """A convex outline (4 x 2, mm) of everything the area holds."""
    if isinstance(geometry, kit.DisplayGeometry):
        e = geometry.half_extent
        return np.array([[-e, -e], [e, -e], [e, e], [-e, e]], np.float64)
    m = kit.MARKER_MM
    dx = geometry.cols * geometry.pitch / 2 + m + kit.BOARD_MARKER_OFFSET_MM
    dy = geometry.rows * geometry.pitch / 2 + m + kit.BOARD_MARKER_OFFSET_MM
    west = min(-dx, geometry.storage_centre()[0] - geometry.pitch / 2)
    return np.array([[west, -dy], [dx, -dy], [dx, dy], [west, dy]], np.float64)


# -- locating areas ------------------------------------------------------------------------


@dataclass(slots=True)
class _Fit:
    """One area's correspondences and its separate fit."""

    area: AreaKey
    geometry: Geometry
    ids: list[int]
    obj: NDArray[np.float64]  # (4k, 2) mm
    img: NDArray[np.float64]  # (4k, 2) px
    h: Matrix


def locate_display(
    markers: Mapping[int, MarkerSighting],
    geometry: kit.DisplayGeometry,
    config: AreaConfig | None = None,
) -> AreaPose:
    """The display's pose from its own markers (0-3); DisplayNotFound if it cannot be placed."""
    config = config or AreaConfig()
    fit, warnings = _fit_area(DISPLAY, geometry, markers, config)
    if fit is None:
        raise DisplayNotFound(warnings[-1] if warnings else "display: none of its markers seen")
    return _pose(fit)


def locate_seat(
    markers: Mapping[int, MarkerSighting],
    seat_geometry: kit.SeatGeometry,
    config: AreaConfig | None = None,
) -> AreaPose:
    """A seat's pose from its own markers (4s..4s+3); BoardNotFound if it cannot be placed."""
    config = config or AreaConfig()
    seat = seat_geometry.seat
    fit, warnings = _fit_area(seat, seat_geometry, markers, config)
    if fit is None:
        raise BoardNotFound(warnings[-1] if warnings else f"seat {seat}: none of its markers seen")
    return _pose(fit)


def locate_all(
    markers: Mapping[int, MarkerSighting],
    tile_mm: float,
    seat_layouts: BoardLayout | Mapping[int, BoardLayout],
    config: AreaConfig | None = None,
    *,
    gray: Image | None = None,
) -> tuple[AreaPose | None, dict[int, AreaPose], list[str]]:
    """Every area the markers place: the display's pose (or None), each seat's, and warnings.

    `seat_layouts` is the board side every seat uses, or one layout per seat. Seats with no
    marker seen are simply absent (not every seat is taken); partial sightings warn. Given
    the grey frame, the display is refined with its printed lane outline and the seats
    take the table plane's perspective from it.
    """
    config = config or AreaConfig()
    warnings: list[str] = []
    fits: list[_Fit] = []
    for area, geometry in area_geometries(tile_mm, seat_layouts):
        fit, notes = _fit_area(area, geometry, markers, config)
        warnings.extend(notes)
        if fit is not None:
            fits.append(fit)
    if not any(i in markers for i in range(4)):
        warnings.append("display: none of its markers seen")
    methods = ["separate"] * len(fits)
    if config.joint_plane_fit and len(fits) >= 2:
        for k, h in enumerate(_joint_fit(fits, config)):
            if h is not None:
                fits[k].h = h
                methods[k] = "joint"
    poses: list[AreaPose] = []
    for fit, method in zip(fits, methods, strict=True):
        pose = _pose(fit, method)
        problem = _implausible(pose, markers, config)
        if problem:
            warnings.append(f"{pose.name}: {problem}; not read")
        else:
            poses.append(pose)
    display = next((p for p in poses if p.area == DISPLAY), None)
    seats = {int(p.area): p for p in poses if p.area != DISPLAY}
    if gray is not None:
        display, seats = refine_areas(gray, display, seats, config, markers=markers)
        warnings = placed_by_lane_notes(warnings, display)
    return display, seats, warnings


def refine_areas(
    gray: Image,
    display: AreaPose | None,
    seats: Mapping[int, AreaPose],
    config: AreaConfig | None = None,
    *,
    markers: Mapping[int, MarkerSighting] | None = None,
) -> tuple[AreaPose | None, dict[int, AreaPose]]:
    """The last step of `locate_all` given the grey frame: the display refined with its
    printed lane outline (`refine_display`), and the jointly fitted seats placed again on
    the table plane it gives. Unchanged when the outline is not found (or lane_refine is
    off). Given the markers, a display not located because only one of its markers is seen
    is placed by that marker and its lane outline (`place_display_by_lane`), or where that
    is not seen by the tiles in its cells (`place_display_by_tiles`), when a seat gives the
    table plane; the seats then stay as they are."""
    config = config or AreaConfig()
    if display is None and markers is not None and config.lane_refine and seats:
        tile_mm = next(iter(seats.values())).geometry.tile_mm
        rough = from_one_marker(kit.DisplayGeometry(tile_mm), markers, list(seats.values()))
        if rough is None:
            return None, dict(seats)
        placed = place_display_by_lane(gray, rough, config)
        if placed is None or _implausible(placed, markers, config):
            placed = place_display_by_tiles(gray, rough, config)
            if placed is not None and _implausible(placed, markers, config):
                placed = None
        return placed, dict(seats)
    if display is None or not config.lane_refine:
        return display, dict(seats)
    refined, used = refine_display(gray, display, config)
    if not used:
        return display, dict(seats)
    return refined, {
        seat: _on_plane(pose, refined) if pose.method == "joint" else pose
        for seat, pose in seats.items()
    }


ONE_MARKER = "one marker + lane"


def area_geometries(
    tile_mm: float, seat_layouts: BoardLayout | Mapping[int, BoardLayout]
) -> list[tuple[AreaKey, Geometry]]:
    """The display's and every seat's geometry (`seat_layouts`: one board side for every
    seat, or one layout per seat; a seat without one is left out)."""
    out: list[tuple[AreaKey, Geometry]] = [(DISPLAY, kit.DisplayGeometry(tile_mm))]
    for seat in kit.SEATS:
        layout = seat_layouts if isinstance(seat_layouts, BoardLayout) else seat_layouts.get(seat)
        if layout is not None:
            out.append((seat, kit.SeatGeometry(seat, layout.rows, layout.cols, tile_mm)))
    return out


def from_one_marker(
    geometry: Geometry, markers: Mapping[int, MarkerSighting], located: Sequence[AreaPose]
) -> AreaPose | None:
    """A rough pose of an area of which exactly ONE marker is seen, on the table plane a
    located area gives (the one with the most markers): turned and placed by that marker
    alone, so off by its sticker's 3 mm and 2° (10 mm and more across the area). Good for
    looking again where its other markers must be, or, for the display, as a start for its
    lane outline (`place_display_by_lane`); None when nothing is located or not exactly one
    marker is seen."""
    nominal = geometry.marker_centres()
    seen = [i for i in nominal if i in markers]
    if len(seen) != 1 or not located:
        return None
    plane = max(located, key=lambda p: (len(p.markers_seen), p.method != "separate"))
    obj = np.asarray(kit.marker_corners(nominal[seen[0]]), np.float64)
    img = np.asarray(markers[seen[0]].corners, np.float64).reshape(4, 2)
    # The marker's corners on the table, in the located area's mm frame: one plane, one scale.
    on_plane = _apply(np.linalg.inv(plane.homography), img)
    h = plane.homography @ _similarity(obj, on_plane, scaled=False)
    area: AreaKey = DISPLAY if isinstance(geometry, kit.DisplayGeometry) else geometry.seat
    return AreaPose(area, h / h[2, 2], (seen[0],), 0.0, geometry, ONE_MARKER, img)


def place_display_by_lane(
    gray: Image, rough: AreaPose, config: AreaConfig | None = None
) -> AreaPose | None:
    """The display placed from a rough pose on ONE marker (`from_one_marker`) by
    its printed lane outline; None when the outline is not found clearly on every side.

    The rough pose's turn may be 2° off, beyond the outline's search at the lane's far
    side; so the display is turned about the marker by each of `one_marker_turns_deg`,
    refined with the outline from each start, and the refinement resting on the most line
    samples is kept."""
    config = config or AreaConfig()
    assert rough.corners_px is not None and len(rough.markers_seen) == 1
    obj = np.asarray(
        kit.marker_corners(rough.geometry.marker_centres()[rough.markers_seen[0]]), np.float64
    )
    cx, cy = obj.mean(axis=0)
    loose = replace(config, lane_max_shift_mm=config.one_marker_max_shift_mm)
    best: tuple[int, AreaPose] | None = None
    for turn in config.one_marker_turns_deg:
        h = rough.homography @ _about(turn, cx, cy)
        refined, used = refine_display(gray, replace(rough, homography=h / h[2, 2]), loose)
        if not used:
            continue
        error = _marker_errors_mm(refined.homography, [obj], [rough.corners_px])[0]
        if error > config.max_marker_error_mm:
            continue
        if best is None or used > best[0]:
            best = (used, replace(refined, method=ONE_MARKER))
    return None if best is None else best[1]


def place_seat_by_board(
    gray: Image, rough: AreaPose, board: Image, config: AreaConfig | None = None
) -> AreaPose | None:
    """A seat from a rough pose on ONE marker (`from_one_marker`) placed by its printed board:
    the board's picture (the pack's, grey or colour) matched with the frame's detail where the
    rough pose puts the grid, turned about the marker by up to `board_turn_deg` and shifted
    by up to `board_shift_mm`. Tiles lying on the board hide much of it, but the lines
    between its cells show between them and around them. None when the board is not found
    clearly (a match below `board_min_match`) or the match puts the marker further than
    max_marker_error_mm from where it is seen (`_place_by_grid`)."""
    config = config or AreaConfig()
    geo = rough.geometry
    if not isinstance(geo, kit.SeatGeometry) or rough.corners_px is None:
        raise TypeError("place_seat_by_board needs a seat's rough pose on one marker")
    grey_board = np.asarray(
        board if board.ndim == 2 else cv2.cvtColor(board, cv2.COLOR_BGR2GRAY), np.uint8
    )
    extent = (geo.cols * geo.pitch, geo.rows * geo.pitch)
    side = max(extent)
    ppm = config.board_px_per_mm
    picture = picture_crop(grey_board, extent, (0.0, 0.0), side, ppm)
    return _place_by_grid(
        gray,
        rough,
        picture,
        geo.rows,
        geo.cols,
        geo.pitch,
        side,
        config.board_shift_mm,
        config.board_min_match,
        ONE_MARKER_BOARD,
        config,
    )


def place_display_by_tiles(
    gray: Image, rough: AreaPose, config: AreaConfig | None = None
) -> AreaPose | None:
    """The display from a rough pose on ONE marker (`from_one_marker`) placed by the tiles in
    its cells, where its lane outline is not seen (`place_display_by_lane`): the edges of
    16 tile squares on the paper, each at its cell's centre, matched with the frame's detail
    within board_band_mm of the lines between the cells as a seat's board is
    (`_place_by_grid`), shifted by up to `tiles_shift_mm`. Each tile lies a few mm off its
    cell, so the grid is placed as well as their mean: its worst cell some 2 mm off on hard
    rendered tables (6 mm at worst), which the cell reader's search for each tile's place
    allows. None when the tiles are not found clearly (a match below
    `tiles_min_match`: the cells empty or covered) or the match puts the marker further than
    max_marker_error_mm from where it is seen."""
    config = config or AreaConfig()
    geo = rough.geometry
    if not isinstance(geo, kit.DisplayGeometry) or rough.corners_px is None:
        raise TypeError("place_display_by_tiles needs the display's rough pose on one marker")
    ppm = config.board_px_per_mm
    side = 4 * geo.pitch + 2 * config.board_band_mm
    picture = _tiles_picture(geo, side, ppm)
    return _place_by_grid(
        gray,
        rough,
        picture,
        4,
        4,
        geo.pitch,
        side,
        config.tiles_shift_mm,
        config.tiles_min_match,
        ONE_MARKER_TILES,
        config,
    )


def _tiles_picture(geo: kit.DisplayGeometry, side_mm: float, ppm: float) -> Image:
    """The display as its tiles make it look: white paper with a dark square of the tile's
    size at each cell's centre; a square of side_mm centred on the display, at ppm."""
    n = max(4, round(side_mm * ppm))
    at = (np.arange(n) + 0.5) * side_mm / n - side_mm / 2  # each pixel's centre, mm
    half = geo.tile_mm / 2
    centres = np.array([geo.cell_centre(0, c)[0] for c in range(4)])
    inside = (np.abs(at[:, None] - centres[None, :]) <= half).any(axis=1)
    picture = np.full((n, n), 255, np.uint8)
    picture[np.ix_(inside, inside)] = 64
    return picture


def _place_by_grid(
    gray: Image,
    rough: AreaPose,
    picture: Image,
    rows: int,
    cols: int,
    pitch: float,
    side: float,
    reach: float,
    min_match: float,
    method: str,
    config: AreaConfig,
) -> AreaPose | None:
    """An area from a rough pose on ONE marker placed by what lies along the lines of its
    grid (rows x cols cells at `pitch`): `picture`, a square of `side` mm centred on the
    area at board_px_per_mm, matched by its detail within board_band_mm of those lines with
    the frame's, turned about the marker by up to board_turn_deg and shifted up to `reach`
    mm. Coarse to fine: every board_coarse_turn_deg, then every board_turn_step_deg within
    half that of the best, their shifts searched within board_fine_shift_mm of its. None
    when the best match is below `min_match` or puts the marker further than
    max_marker_error_mm from where it is seen."""
    assert rough.corners_px is not None and len(rough.markers_seen) == 1
    ppm = config.board_px_per_mm
    template = _detail(picture, config.board_detail_mm * ppm)
    mask = _grid_band(template.shape[0], side, rows, cols, pitch, config.board_band_mm)
    mx, my = rough.geometry.marker_centres()[rough.markers_seen[0]]
    coarse = config.board_coarse_turn_deg
    turns = np.arange(-config.board_turn_deg, config.board_turn_deg + 1e-9, coarse)
    peaks = _grid_matches(
        gray, rough, template, mask, side, (mx, my), turns, (0.0, 0.0), reach, config
    )
    best = int(np.argmax([p[0] for p in peaks]))
    step = config.board_turn_step_deg
    turns = turns[best] + np.arange(-coarse / 2, coarse / 2 + 1e-9, step)
    peaks = _grid_matches(
        gray,
        rough,
        template,
        mask,
        side,
        (mx, my),
        turns,
        peaks[best][1:],
        config.board_fine_shift_mm,
        config,
    )
    best = int(np.argmax([p[0] for p in peaks]))
    match, tx, ty = peaks[best]
    if match < min_match:
        return None
    turn = float(turns[best])
    if 0 < best < len(turns) - 1:
        turn += step * parabola_vertex(peaks[best - 1][0], match, peaks[best + 1][0])
    shift = np.array([[1.0, 0.0, tx], [0.0, 1.0, ty], [0.0, 0.0, 1.0]])
    h = rough.homography @ _about(turn, mx, my) @ shift
    obj = np.asarray(kit.marker_corners((mx, my)), np.float64)
    error = _marker_errors_mm(h, [obj], [rough.corners_px])[0]
    if error > config.max_marker_error_mm:
        return None
    return _rescored(replace(rough, homography=h / h[2, 2], method=method))


def _grid_matches(
    gray: Image,
    rough: AreaPose,
    template: NDArray[np.float32],
    mask: NDArray[np.float32],
    side: float,
    marker: tuple[float, float],
    turns: NDArray[np.float64],
    around: tuple[float, float],
    reach: float,
    config: AreaConfig,
) -> list[tuple[float, float, float]]:
    """For each turn about the marker, the template's (the detail of a square of `side` mm
    centred on the area) best match in the frame within `reach` mm of the shift `around`:
    (match, shift x, shift y), the shift in mm."""
    ppm = config.board_px_per_mm
    size = side + 2 * reach
    step = size / max(4, round(size * ppm))  # mm a pixel of the searched square
    out = []
    for turn in turns:
        pose = replace(rough, homography=rough.homography @ _about(float(turn), *marker))
        seen = _detail(cell_crop(gray, pose, around, size, ppm), config.board_detail_mm * ppm)
        result = cv2.matchTemplate(seen, template, cv2.TM_CCORR_NORMED, mask=mask)
        _lo, peak, _lo_at, (px, py) = cv2.minMaxLoc(result)
        h, w = result.shape
        dx = parabola_vertex(*result[py, px - 1 : px + 2]) if 0 < px < w - 1 else 0.0
        dy = parabola_vertex(*result[py - 1 : py + 2, px]) if 0 < py < h - 1 else 0.0
        out.append(
            (
                float(peak),
                around[0] + (px + dx) * step - reach,
                around[1] + (py + dy) * step - reach,
            )
        )
    return out


ONE_MARKER_BOARD = "one marker + board"
ONE_MARKER_TILES = "one marker + tiles"


def _grid_band(
    n: int, side_mm: float, rows: int, cols: int, pitch: float, band_mm: float
) -> NDArray[np.float32]:
    """A mask (n x n, over a square of side_mm centred on the area) of the band within
    band_mm of the lines between the grid's cells and round it: where a board shows its
    own lines between the tiles, and where the tiles' edges lie."""
    at = (np.arange(n) + 0.5) * side_mm / n - side_mm / 2

    def near(count: int) -> NDArray[np.bool_]:
        lines = (np.arange(count + 1) - count / 2) * pitch
        inside = np.abs(at) <= count * pitch / 2 + band_mm
        out: NDArray[np.bool_] = inside & (
            np.min(np.abs(at[:, None] - lines[None, :]), axis=1) <= band_mm
        )
        return out

    near_cols, near_rows = near(cols), near(rows)
    in_x = np.abs(at) <= cols * pitch / 2 + band_mm
    in_y = np.abs(at) <= rows * pitch / 2 + band_mm
    band = (near_rows[:, None] & in_x[None, :]) | (near_cols[None, :] & in_y[:, None])
    return band.astype(np.float32)


def _about(turn_deg: float, x: float, y: float) -> Matrix:
    """A turn by turn_deg about the point (x, y) of an area, as a 3 x 3 matrix."""
    a = math.radians(turn_deg)
    c, s = math.cos(a), math.sin(a)
    return np.array([[c, -s, x - c * x + s * y], [s, c, y - s * x - c * y], [0.0, 0.0, 1.0]])


def _detail(picture: Image, sigma_px: float) -> NDArray[np.float32]:
    """A grey picture less its blur: the lines and edges that fix a place."""
    grey = np.asarray(picture, np.float32)
    out: NDArray[np.float32] = grey - np.asarray(
        cv2.GaussianBlur(grey, (0, 0), sigma_px, borderType=cv2.BORDER_REPLICATE), np.float32
    )
    return out


def parabola_vertex(a: float, b: float, c: float) -> float:
    """Vertex offset (-0.5..0.5) of a parabola through (-1, a), (0, b), (1, c): a peak's
    sub-step place."""
    den = float(a - 2 * b + c)
    return 0.0 if den >= 0 else float(np.clip(0.5 * float(a - c) / den, -0.5, 0.5))


def place_seats_by_board(
    gray: Image,
    markers: Mapping[int, MarkerSighting],
    display: AreaPose | None,
    seats: Mapping[int, AreaPose],
    tile_mm: float,
    seat_layouts: BoardLayout | Mapping[int, BoardLayout],
    boards: Image | Mapping[int, Image],
    config: AreaConfig | None = None,
) -> dict[int, AreaPose]:
    """The located seats, and those of which one marker is seen placed by it (on the table
    plane the located areas give) and their printed board (`place_seat_by_board`, the
    board picture every seat uses or one per seat)."""
    config = config or AreaConfig()
    located = [p for p in (display, *seats.values()) if p is not None]
    out = dict(seats)
    for area, geometry in area_geometries(tile_mm, seat_layouts):
        if area == DISPLAY or area in seats:
            continue
        board = boards.get(int(area)) if isinstance(boards, Mapping) else boards
        if board is None:
            continue
        rough = from_one_marker(geometry, markers, located)
        if rough is None:
            continue
        placed = place_seat_by_board(gray, rough, board, config)
        if placed is not None and not _implausible(placed, markers, config):
            out[int(area)] = placed
    return out


def placed_by_board_notes(warnings: Sequence[str], seats: Mapping[int, AreaPose]) -> list[str]:
    """The warnings, with "only 1 of 4 markers seen ...; not read" said again as what was
    done for each seat placed by one marker and its printed board."""
    return _placed_notes(warnings, seats.values(), ONE_MARKER_BOARD, "its printed board")


def placed_by_lane_notes(warnings: Sequence[str], display: AreaPose | None) -> list[str]:
    """The warnings, with "only 1 of 4 markers seen ...; not read" said again as what was
    done when the display was placed by one marker and its lane outline or its tiles."""
    poses = [] if display is None else [display]
    out = _placed_notes(warnings, poses, ONE_MARKER, "the printed lane outline")
    return _placed_notes(out, poses, ONE_MARKER_TILES, "the tiles in its cells")


def _placed_notes(
    warnings: Sequence[str], poses: Iterable[AreaPose], method: str, how: str
) -> list[str]:
    out = list(warnings)
    for pose in poses:
        if pose.method == method:
            seen = pose.markers_seen[0]
            done = f"{pose.name}: 1 of 4 markers seen (marker {seen}); placed by it and {how}"
            out = [done if w == _not_read(pose.name, seen) else w for w in out]
    return out


def _not_read(name: str, seen: int) -> str:
    """The warning for an area of which one marker is seen and that is not placed."""
    return f"{name}: only 1 of 4 markers seen (marker {seen}); not read"


def _on_plane(pose: AreaPose, display: AreaPose) -> AreaPose:
    """A jointly fitted seat placed again on the table plane the refined display gives."""
    if pose.area == DISPLAY or pose.corners_px is None:
        return pose
    obj = np.concatenate(
        [
            np.asarray(kit.marker_corners(pose.geometry.marker_centres()[i]), np.float64)
            for i in pose.markers_seen
        ]
    )
    g = np.linalg.inv(display.homography)
    h = np.linalg.inv(g) @ _similarity(obj, _apply(g, pose.corners_px))
    return _rescored(replace(pose, homography=h / h[2, 2]))


def _rescored(pose: AreaPose) -> AreaPose:
    """The pose with its reprojection error measured again over its seen marker corners."""
    if pose.corners_px is None or not pose.markers_seen:
        return pose
    centres = pose.geometry.marker_centres()
    obj = np.concatenate(
        [np.asarray(kit.marker_corners(centres[i]), np.float64) for i in pose.markers_seen]
    )
    err = pose.project(obj) - pose.corners_px
    return replace(pose, reprojection_error_px=float(np.sqrt(np.mean(np.sum(err**2, axis=1)))))


def _pose(fit: _Fit, method: str = "separate") -> AreaPose:
    err = _apply(fit.h, fit.obj) - fit.img
    rms = float(np.sqrt(np.mean(np.sum(err**2, axis=1)))) if len(err) else 0.0
    return AreaPose(fit.area, fit.h, tuple(fit.ids), rms, fit.geometry, method, fit.img)


def _fit_area(
    area: AreaKey,
    geometry: Geometry,
    markers: Mapping[int, MarkerSighting],
    config: AreaConfig,
) -> tuple[_Fit | None, list[str]]:
    """The area's separate least-squares fit over its markers, leaving out one that does not
    fit the others; None (with a warning) when it cannot be placed."""
    name = area_name(area)
    nominal = geometry.marker_centres()
    seen = [i for i in nominal if i in markers]
    if not seen:
        return None, []
    if len(seen) == 1:
        return None, [_not_read(name, seen[0])]
    obj = {i: np.asarray(kit.marker_corners(nominal[i]), np.float64) for i in seen}
    options = {i: [markers[i].corners, *markers[i].alternatives] for i in seen}

    best: tuple[float, list[int], dict[int, NDArray[np.float64]], Matrix] | None = None
    choices = [options[i] for i in seen]
    combos = list(islice(product(*[range(len(c)) for c in choices]), 64))
    for combo in combos:
        chosen = {i: options[i][k] for i, k in zip(seen, combo, strict=True)}
        result = _fit_markers(seen, obj, chosen, config)
        if result is not None and (best is None or result[0] < best[0]):
            best = (result[0], result[1], chosen, result[2])
    warnings: list[str] = []
    if best is None:
        ids = ", ".join(map(str, seen))
        return None, [f"{name}: markers {ids} do not fit the kit's layout together; not read"]
    _, used, chosen, h = best
    left_out = [i for i in seen if i not in used]
    if left_out:
        warnings.append(
            f"{name}: marker {left_out[0]} is not where the others put it "
            "(a wrong or misplaced sticker?); left out"
        )
    if any(len(options[i]) > 1 for i in used):
        dup = next(i for i in used if len(options[i]) > 1)
        warnings.append(f"{name}: marker {dup} is seen more than once; the copy that fits is used")
    if len(used) < 4:
        missing = ", ".join(str(i) for i in nominal if i not in used)
        warnings.append(f"{name}: {len(used)} of 4 markers seen (missing {missing})")
    fit = _Fit(
        area,
        geometry,
        used,
        np.concatenate([obj[i] for i in used]),
        np.concatenate([chosen[i] for i in used]),
        h,
    )
    return fit, warnings


def _fit_markers(
    seen: Sequence[int],
    obj: Mapping[int, NDArray[np.float64]],
    img: Mapping[int, NDArray[np.float64]],
    config: AreaConfig,
) -> tuple[float, list[int], Matrix] | None:
    """(worst marker error mm, markers used, homography), leaving out one misfit if needed."""
    subsets: list[list[int]] = [list(seen)]
    if len(seen) >= 4:
        subsets += [[i for i in seen if i != j] for j in seen]
    best: tuple[float, list[int], Matrix] | None = None
    for subset in subsets:
        h = _homography(
            np.concatenate([obj[i] for i in subset]), np.concatenate([img[i] for i in subset])
        )
        if h is None:
            continue
        worst = float(
            np.max(_marker_errors_mm(h, [obj[i] for i in subset], [img[i] for i in subset]))
        )
        if worst > config.max_marker_error_mm:
            continue
        # Prefer the fullest subset; among equals, the tightest.
        key = (-len(subset), worst)
        if best is None or key < (-len(best[1]), best[0]):
            best = (worst, subset, h)
        if subset is subsets[0]:
            break  # every marker fits: nothing to leave out
    return best


def _homography(obj: NDArray[np.float64], img: NDArray[np.float64]) -> Matrix | None:
    if len(obj) < 4:
        return None
    h, _ = cv2.findHomography(obj, img, 0)
    if h is None or not np.all(np.isfinite(h)) or abs(h[2, 2]) < 1e-12:
        return None
    return np.asarray(h / h[2, 2], np.float64)


def _marker_errors_mm(
    h: Matrix, obj: Sequence[NDArray[np.float64]], img: Sequence[NDArray[np.float64]]
) -> NDArray[np.float64]:
    """Per marker, the mean distance (mm, on the table) between its corners (4 x 2 each) and
    where `h` puts them."""
    try:
        back = _apply(np.linalg.inv(h), np.concatenate(img))
    except np.linalg.LinAlgError:
        return np.full(len(obj), math.inf)
    gap = (back - np.concatenate(obj)).reshape(len(obj), -1, 2)
    return np.asarray(np.mean(np.hypot(gap[..., 0], gap[..., 1]), axis=1), np.float64)


# -- one table plane for every area ---------------------------------------------------------


def _joint_fit(fits: list[_Fit], config: AreaConfig) -> list[Matrix | None]:
    """Each area's homography as (table plane) x (its turn, shift and scale on the table),
    or None for an area the one-plane model does not fit (it keeps its own fit)."""
    active = list(range(len(fits)))
    while len(active) >= 2:
        hs = _plane_fit([fits[k] for k in active])
        if hs is None:
            break
        errors = [_rms_mm([h], [fits[k]]) for h, k in zip(hs, active, strict=True)]
        worst = int(np.argmax(errors))
        if errors[worst] <= config.joint_max_rms_mm:
            out: list[Matrix | None] = [None] * len(fits)
            for h, k in zip(hs, active, strict=True):
                out[k] = h
            return out
        del active[worst]
    return [None] * len(fits)


def plane_scales(
    markers: Mapping[int, MarkerSighting],
    tile_mm: float,
    seat_layouts: BoardLayout | Mapping[int, BoardLayout],
    config: AreaConfig | None = None,
) -> list[float]:
    """How large each area looks on the one table plane the markers give, against the area
    with most markers (natural log of the scale; 0 for a kit printed to scale seen through
    a pinhole): the areas with at least three markers seen, the reference left out. Empty
    when fewer than two such areas are seen. A wide lens shrinks the areas far from the
    frame's centre (vision.reader.lens)."""
    config = config or AreaConfig()
    fits = []
    for area, geometry in area_geometries(tile_mm, seat_layouts):
        fit, _ = _fit_area(area, geometry, markers, config)
        if fit is not None and len(fit.ids) >= 3:
            fits.append(fit)
    if len(fits) < 2:
        return []
    hs = _plane_fit(fits)
    if hs is None:
        return []
    ref = _reference_fit(fits)
    to_plane = np.linalg.inv(hs[ref])
    out = []
    for k, h in enumerate(hs):
        if k != ref:
            on_plane = to_plane @ h
            on_plane = on_plane / on_plane[2, 2]
            out.append(0.5 * math.log(max(abs(float(np.linalg.det(on_plane[:2, :2]))), 1e-12)))
    return out


def _reference_fit(fits: Sequence[_Fit]) -> int:
    """The area the one-plane fit takes the plane's frame from: the one with most markers,
    the display among equals."""
    return max(range(len(fits)), key=lambda k: (len(fits[k].ids), fits[k].area == DISPLAY))


def _plane_fit(fits: list[_Fit]) -> list[Matrix] | None:
    """Least squares over every area's corners, measured on the table (mm): the plane's
    homography G (image -> plane, in the frame of the area with most markers) and each other
    area's turn, shift and scale S on the plane, so that G(image corner) = S(kit corner).
    Started from the separate fits (Umeyama), then Gauss-Newton."""
    ref = _reference_fit(fits)
    try:
        g = np.linalg.inv(fits[ref].h)
    except np.linalg.LinAlgError:
        return None
    g = g / g[2, 2]
    others = [k for k in range(len(fits)) if k != ref]
    sims = {k: _similarity(fits[k].obj, _apply(g, fits[k].img)) for k in others}
    # Image points are centred and scaled for a well-conditioned G.
    img_all = np.concatenate([f.img for f in fits])
    c = img_all.mean(axis=0)
    sc = 1.0 / max(float(np.std(img_all)), 1e-9)
    norm = np.array([[sc, 0, -sc * c[0]], [0, sc, -sc * c[1]], [0, 0, 1]])
    gn = g @ np.linalg.inv(norm)
    gn = gn / gn[2, 2]
    n_par = 8 + 4 * len(others)
    # Every area's corners in one system: its points, kit corners and (for the areas other
    # than the reference) the first of its four similarity columns.
    x = _apply(norm, img_all)
    xh = np.column_stack([x, np.ones(len(x))])
    obj = np.concatenate([f.obj for f in fits])
    owner = np.concatenate([np.full(len(f.obj), k) for k, f in enumerate(fits)])
    column = np.array([8 + 4 * others.index(k) if k != ref else -1 for k in owner])
    moving = np.flatnonzero(column >= 0)
    ox, oy = obj[moving, 0], obj[moving, 1]
    one, zero = np.ones_like(ox), np.zeros_like(ox)
    sim_x = -np.column_stack([ox, -oy, one, zero])
    sim_y = -np.column_stack([oy, ox, zero, one])
    sim_cols = column[moving, None] + np.arange(4)[None, :]
    for _ in range(10):
        w = xh @ gn[2]
        u = (xh @ gn[0]) / w
        v = (xh @ gn[1]) / w
        sim = np.stack([np.eye(3) if k == ref else sims[k] for k in range(len(fits))])[owner]
        target = np.einsum("pij,pj->pi", sim[:, :2, :2], obj) + sim[:, :2, 2]
        r_all = np.column_stack([u - target[:, 0], v - target[:, 1]]).reshape(-1)
        jac_all = np.zeros((2 * len(x), n_par))
        jac_all[0::2, 0:3] = xh / w[:, None]
        jac_all[1::2, 3:6] = xh / w[:, None]
        jac_all[0::2, 6:8] = -u[:, None] * x / w[:, None]
        jac_all[1::2, 6:8] = -v[:, None] * x / w[:, None]
        jac_all[2 * moving[:, None], sim_cols] = sim_x
        jac_all[2 * moving[:, None] + 1, sim_cols] = sim_y
        delta, *_ = np.linalg.lstsq(jac_all, -r_all, rcond=None)
        gn = gn + np.array([*delta[:8], 0.0]).reshape(3, 3)
        for k in others:
            j = 8 + 4 * others.index(k)
            a, b, tx, ty = delta[j : j + 4]
            sims[k] = sims[k] + np.array([[a, -b, tx], [b, a, ty], [0, 0, 0]])
        if float(np.max(np.abs(delta))) < 1e-5:
            break
    g = gn @ norm
    try:
        g_inv = np.linalg.inv(g)
    except np.linalg.LinAlgError:
        return None
    out = [g_inv if k == ref else g_inv @ sims[k] for k in range(len(fits))]
    if not all(np.all(np.isfinite(h)) for h in out):
        return None
    return [h / h[2, 2] for h in out]


def _rms_mm(hs: Sequence[Matrix], fits: Sequence[_Fit]) -> float:
    sq: list[NDArray[np.float64]] = []
    for h, fit in zip(hs, fits, strict=True):
        back = _apply(np.linalg.inv(h), fit.img)
        sq.append(np.sum((back - fit.obj) ** 2, axis=1))
    return float(np.sqrt(np.mean(np.concatenate(sq))))


def _similarity(
    src: NDArray[np.float64], dst: NDArray[np.float64], *, scaled: bool = True
) -> Matrix:
    """The least-squares rotation, uniform scale and shift taking src to dst (Umeyama);
    with scaled=False, rotation and shift only (both in mm on one plane)."""
    ms, md = src.mean(axis=0), dst.mean(axis=0)
    a, b = src - ms, dst - md
    cov = b.T @ a / len(src)
    u, d, vt = np.linalg.svd(cov)
    sign = np.eye(2)
    if np.linalg.det(u) * np.linalg.det(vt) < 0:
        sign[1, 1] = -1
    rot = u @ sign @ vt
    var = float(np.mean(np.sum(a**2, axis=1)))
    scale = float(np.trace(np.diag(d) @ sign)) / var if var > 0 and scaled else 1.0
    out = np.eye(3)
    out[:2, :2] = scale * rot
    out[:2, 2] = md - scale * rot @ ms
    return out


# -- the display's printed lane outline ----------------------------------------------------


def refine_display(
    gray: Image, pose: AreaPose, config: AreaConfig | None = None
) -> tuple[AreaPose, int]:
    """The display's pose refined with the printed outline of its ship lane.

    The lane's inner and outer squares (docs/table-kit.md) are thin grey lines on the mat's
    paper. Across each, between the stickers, a profile of the frame is searched for a thin
    dark dip with paper on both sides (a tile's or the ship's edge is a step, not a dip, and
    is passed over); per line, the samples that agree on one straight line are kept
    (RANSAC). A correction of the homography is then fitted to them, each placed to a
    fraction of a pixel, with the markers as a weak prior (they sit up to 3 mm off). The
    outer square comes first, searched widely (nothing else is printed near it); then both.
    Returns the refined pose and how many line samples it rests on, or the pose unchanged
    and 0 when the outline is not found clearly on every side.
    """
    config = config or AreaConfig()
    geo = pose.geometry
    if not isinstance(geo, kit.DisplayGeometry) or gray.ndim != 2:
        return pose, 0
    lines = _lane_lines(geo, config)
    outer = _LaneLines(*(a[lines.line >= 4] for a in lines))
    h = pose.homography
    corners_obj = np.concatenate(
        [
            np.asarray(kit.marker_corners(geo.marker_centres()[i]), np.float64)
            for i in pose.markers_seen
        ]
    )
    corners_img = pose.project(corners_obj) if pose.corners_px is None else pose.corners_px
    used = 0
    for round_ in range(4):
        wide = round_ == 0
        found = _lane_samples(
            gray,
            h,
            outer if wide else lines,
            config.lane_search_mm if wide else config.lane_fine_search_mm,
            config,
        )
        if found is None:
            return pose, 0
        points, normals, offsets, sides = found
        # Marker corners (as the current pose sees them) anchor what lines leave free.
        corners_now = _apply(np.linalg.inv(h), corners_img)
        solved = _solve_correction(
            points, normals, offsets, corners_now, corners_obj, sides, config
        )
        if solved is None:
            return pose, 0
        c, used = solved
        h = h @ np.linalg.inv(c)
        h = h / h[2, 2]
        step = float(np.max(np.abs(_apply(c, points) - points)))
        if not wide and step < 0.02:
            break
    cells = np.array([geo.cell_centre(r, k) for r in range(4) for k in range(4)], np.float64)
    moved = _apply(np.linalg.inv(pose.homography) @ h, cells) - cells
    if float(np.max(np.hypot(moved[:, 0], moved[:, 1]))) > config.lane_max_shift_mm:
        return pose, 0
    return _rescored(replace(pose, homography=h, method="lane")), used


@dataclass(frozen=True, slots=True)
class _LaneLines:
    """Sample points on the lane's printed lines (mm), their unit normals, their place along
    the line, the line (0-3 inner N E S W, 4-7 outer) and the side (0-3 N E S W)."""

    points: NDArray[np.float64]
    normals: NDArray[np.float64]
    along: NDArray[np.float64]
    line: NDArray[np.intp]
    side: NDArray[np.intp]

    def __iter__(self) -> Iterator[NDArray[Any]]:
        return iter((self.points, self.normals, self.along, self.line, self.side))


def _lane_lines(geo: kit.DisplayGeometry, config: AreaConfig) -> _LaneLines:
    reach = min(config.lane_sample_reach_mm, geo.lane_inner - 2.0)
    t = np.linspace(-reach, reach, config.lane_samples_per_line)
    pts, nrm, along, line, side = [], [], [], [], []
    for square, d in enumerate((geo.lane_inner, geo.half_extent)):
        for k, (nx, ny) in enumerate(((0.0, -1.0), (1.0, 0.0), (0.0, 1.0), (-1.0, 0.0))):
            if nx == 0:
                p = np.column_stack([t, np.full_like(t, ny * d)])
            else:
                p = np.column_stack([np.full_like(t, nx * d), t])
            pts.append(p)
            nrm.append(np.tile([nx, ny], (len(t), 1)))
            along.append(t)
            line.append(np.full(len(t), 4 * square + k, np.intp))
            side.append(np.full(len(t), k, np.intp))
    return _LaneLines(
        np.concatenate(pts),
        np.concatenate(nrm).astype(np.float64),
        np.concatenate(along),
        np.concatenate(line),
        np.concatenate(side),
    )


def _lane_samples(
    gray: Image, h: Matrix, lines: _LaneLines, search_mm: float, config: AreaConfig
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64], NDArray[np.intp]] | None:
    """Line samples found within search_mm and agreeing with their line: points (mm),
    normals, offsets along the normals, sides; None unless every side has enough."""
    points, normals, along, line, sides = lines
    scale = float(_local_scale(h, np.zeros((1, 2)))[0])
    step = 0.5 / max(scale, 1e-6)  # half a pixel, in mm
    far_mm = 1.4
    m = int(np.ceil((search_mm + far_mm) / step))
    offs = np.arange(-m, m + 1) * step
    # Each profile is the mean of parallel ones spread along the line (less noise).
    tangents = np.column_stack([-normals[:, 1], normals[:, 0]])
    spread = np.linspace(-1.0, 1.0, config.lane_profiles_per_sample) * config.lane_profile_reach_mm

    # The grid points + spread * tangents + offs * normals in the image: the homography is
    # linear in homogeneous coordinates, so the three terms are mapped once each.
    def lifted(v: NDArray[np.float64], w: float) -> NDArray[np.float64]:
        """(3, samples, 1, 1): x, y, w of each vector in homogeneous image coordinates."""
        out = h @ np.vstack([v.T, np.full(len(v), w)])
        return np.asarray(out, np.float64)[:, :, None, None]

    hom = (
        lifted(points, 1.0)
        + spread[None, None, :, None] * lifted(tangents, 0.0)
        + offs[None, None, None, :] * lifted(normals, 0.0)
    )  # (3, samples, profiles, offsets)
    xs = hom[0] / hom[2]
    ys = hom[1] / hom[2]
    height, width = gray.shape
    # The grid of one sample is a parallelogram on the mat and a convex quadrilateral in the
    # image: it lies inside the frame when its four corners do.
    cx, cy = (
        xs[:, :: len(spread) - 1, :: len(offs) - 1],
        ys[:, :: len(spread) - 1, :: len(offs) - 1],
    )
    inside = ((cx >= 0) & (cx <= width - 1) & (cy >= 0) & (cy <= height - 1)).all(axis=(1, 2))
    if not inside.any():
        return None
    # Bilinear samples of a float copy of just the region they fall in (no rounding).
    x0 = int(max(0, np.floor(xs.min())))
    y0 = int(max(0, np.floor(ys.min())))
    x1 = int(min(width, np.ceil(xs.max()) + 2))
    y1 = int(min(height, np.ceil(ys.max()) + 2))
    region = gray[y0:y1, x0:x1].astype(np.float32)
    sampled = cv2.remap(
        region,
        (xs - x0).astype(np.float32).reshape(len(points), -1),
        (ys - y0).astype(np.float32).reshape(len(points), -1),
        cv2.INTER_LINEAR,
        borderMode=cv2.BORDER_REPLICATE,
    )
    prof = np.asarray(sampled, np.float64).reshape(xs.shape).mean(axis=1)
    # Dip response: the mean of both flanks (0.6..1.4 mm away) minus the centre.
    near = max(1, round(0.6 / step))
    far = max(near + 1, round(far_mm / step))
    csum = np.concatenate([np.zeros((len(points), 1)), np.cumsum(prof, axis=1)], axis=1)
    idx = np.arange(far, len(offs) - far)
    left = (csum[:, idx - near + 1] - csum[:, idx - far + 1]) / (far - near)
    right = (csum[:, idx + far] - csum[:, idx + near]) / (far - near)
    response = (left + right) / 2 - prof[:, idx]
    stepness = np.abs(left - right)
    best = np.argmax(response, axis=1)
    r = np.arange(len(points))
    peak = response[r, best]
    noise = 1.4826 * np.median(np.abs(np.diff(prof, axis=1)), axis=1) / np.sqrt(2)
    ok = (
        inside
        & (peak >= config.lane_min_dip)
        & (peak >= config.lane_min_snr * np.maximum(noise, 0.5))
        & (stepness[r, best] <= config.lane_max_step_share * peak)
        & (best > 0)
        & (best < len(idx) - 1)
    )
    bb = np.clip(best, 1, len(idx) - 2)
    y0, y1, y2 = response[r, bb - 1], peak, response[r, bb + 1]
    denom = y0 - 2 * y1 + y2
    frac = np.where(denom < -1e-9, 0.5 * (y0 - y2) / np.where(denom < -1e-9, denom, -1), 0.0)
    offset = offs[idx[bb]] + np.clip(frac, -0.5, 0.5) * step
    ok &= _straight(
        along,
        offset,
        [np.flatnonzero(ok & (line == k)) for k in np.unique(line)],
        config.lane_outlier_mm,
    )
    if not _enough_sides(sides[ok], config):
        return None
    return points[ok], normals[ok], offset[ok], sides[ok]


def _enough_sides(sides: NDArray[np.intp], config: AreaConfig) -> bool:
    """Enough line samples on enough sides of the lane to pin the display down."""
    counts = np.bincount(sides, minlength=4)
    return int(np.sum(counts >= config.lane_min_per_side)) >= config.lane_min_sides


def _straight(
    t: NDArray[np.float64],
    d: NDArray[np.float64],
    groups: Sequence[NDArray[np.intp]],
    tolerance: float,
) -> NDArray[np.bool_]:
    """The samples (t along a line, d across it) on the straight line most of their group
    (one printed line) share: every pair of a group is tried (at most a few hundred), the
    first with most samples within `tolerance` wins. Groups of fewer than 2: none."""
    out = np.zeros(len(t), bool)
    most = max((len(g) for g in groups), default=0)
    if most < 2:
        return out
    # Every group padded to `most` samples, all tried at once.
    tt = np.zeros((len(groups), most))
    dd = np.zeros((len(groups), most))
    valid = np.zeros((len(groups), most), bool)
    for k, g in enumerate(groups):
        tt[k, : len(g)], dd[k, : len(g)], valid[k, : len(g)] = t[g], d[g], True
    i, j = np.triu_indices(most, 1)
    dt = tt[:, j] - tt[:, i]
    slope = np.where(np.abs(dt) > 1e-9, (dd[:, j] - dd[:, i]) / np.where(dt == 0, 1, dt), 0.0)
    pred = dd[:, i][:, :, None] + slope[:, :, None] * (tt[:, None, :] - tt[:, i][:, :, None])
    hits = (np.abs(pred - dd[:, None, :]) <= tolerance) & valid[:, None, :]
    counts = np.where(valid[:, i] & valid[:, j], hits.sum(axis=2), -1)
    best = np.argmax(counts, axis=1)
    for k, g in enumerate(groups):
        if len(g) >= 2:
            out[g] = hits[k, best[k], : len(g)]
    return out


def _correction_jacobian(pts: NDArray[np.float64], unit: float) -> NDArray[np.float64]:
    """d C(p) / d theta at theta = 0 for C a homography near identity: (N, 2, 8), mm."""
    x = pts[:, 0] / unit
    y = pts[:, 1] / unit
    one = np.ones_like(x)
    zero = np.zeros_like(x)
    jx = np.stack([x, y, one, zero, zero, zero, -x * x, -x * y], axis=1)
    jy = np.stack([zero, zero, zero, x, y, one, -x * y, -y * y], axis=1)
    return np.stack([jx, jy], axis=1) * unit


def _correction_matrix(theta: NDArray[np.float64], unit: float) -> Matrix:
    a, b, c, d, e, f, g, h = theta
    m = np.array([[1 + a, b, c], [d, 1 + e, f], [g, h, 1.0]])
    s = np.diag([unit, unit, 1.0])
    return np.asarray(s @ m @ np.linalg.inv(s), np.float64)


def _solve_correction(
    points: NDArray[np.float64],
    normals: NDArray[np.float64],
    offsets: NDArray[np.float64],
    corners_now: NDArray[np.float64],
    corners_obj: NDArray[np.float64],
    sides: NDArray[np.intp],
    config: AreaConfig,
) -> tuple[Matrix, int] | None:
    """The homography C (current mm -> true mm) that puts the found samples on their lines,
    robustly (samples off the fit by more than lane_outlier_mm are dropped), with the marker
    corners as a prior."""
    unit = 100.0
    seen = points + offsets[:, None] * normals  # where the line lies in the current frame
    j_line = np.einsum("nk,nkp->np", normals, _correction_jacobian(seen, unit))
    rhs_line = -offsets  # n . (seen + J theta) = n . point  =>  n . J theta = -offset
    j_mk = _correction_jacobian(corners_now, unit).reshape(-1, 8)
    rhs_mk = (corners_obj - corners_now).reshape(-1)
    w_line = 1.0 / config.lane_line_sigma_mm
    w_mk = 1.0 / (2 * config.sticker_sigma_mm)  # a corner moves with its whole sticker
    keep = np.ones(len(points), bool)
    theta = np.zeros(8)
    for _ in range(3):
        a = np.concatenate([w_line * j_line[keep], w_mk * j_mk])
        b = np.concatenate([w_line * rhs_line[keep], w_mk * rhs_mk])
        theta, *_ = np.linalg.lstsq(a, b, rcond=None)
        resid = np.abs(j_line @ theta - rhs_line)
        new_keep = resid <= config.lane_outlier_mm
        if np.array_equal(new_keep, keep):
            break
        keep = new_keep
        if not _enough_sides(sides[keep], config):
            return None
    return _correction_matrix(theta, unit), int(keep.sum())


# -- plausibility -----------------------------------------------------------------------------


def _implausible(
    pose: AreaPose, markers: Mapping[int, MarkerSighting], config: AreaConfig
) -> str | None:
    """Why the pose cannot be a real view of the area, or None when it can."""
    outline = pose.outline_mm()
    h = pose.homography
    w = np.column_stack([outline, np.ones(len(outline))]) @ h[2]
    if np.any(w <= 0):
        return "its markers give an impossible view (the area would fold over the horizon)"
    scales = _local_scale(h, outline)
    jac = _jacobian_det(h, outline)
    if np.any(jac <= 0):
        return "its markers give a mirrored view (markers in the wrong corners?)"
    centre_scale = pose.px_per_mm()
    if not config.min_px_per_mm <= centre_scale <= config.max_px_per_mm:
        return f"its markers give {centre_scale:.2f} px per mm, not a camera over the table"
    if float(scales.max() / scales.min()) > config.max_scale_change:
        return "its markers give an impossible view (the scale changes too much across it)"
    centres = pose.geometry.marker_centres()
    seen = np.array([centres[i] for i in pose.markers_seen], np.float64)
    expected = _local_scale(h, seen) * kit.MARKER_MM
    for k, (marker_id, size) in enumerate(zip(pose.markers_seen, expected, strict=True)):
        ratio = _used_side_px(pose, k, markers[marker_id]) / float(size)
        if not 1 / config.max_marker_size_ratio <= ratio <= config.max_marker_size_ratio:
            return (
                f"marker {marker_id} looks {ratio:.2f} times the size the others imply "
                "(a mat or sticker printed at the wrong scale?)"
            )
    return None


def _used_side_px(pose: AreaPose, k: int, sighting: MarkerSighting) -> float:
    """The side of the pose's k-th marker as the pose used it: of a marker seen more than
    once, the copy that fits the area (its first sighting may be another)."""
    used = pose.corners_px
    if used is None or len(used) != 4 * len(pose.markers_seen):
        return sighting.side_px
    return marker_side_px(used[4 * k : 4 * k + 4])


def _apply(h: NDArray[Any], pts: NDArray[Any]) -> NDArray[np.float64]:
    p = np.asarray(pts, np.float64).reshape(-1, 2)
    q = p @ h[:2, :2].T + h[:2, 2]
    w = p @ h[2, :2] + h[2, 2]
    return np.asarray(q / w[:, None], np.float64)


def _jacobian_det(h: Matrix, pts: NDArray[np.float64]) -> NDArray[np.float64]:
    """det of d(image)/d(mm) at each point (pixels² per mm²)."""
    p = np.column_stack([pts, np.ones(len(pts))])
    w = p @ h[2]
    return np.asarray(np.linalg.det(h) / w**3, np.float64)


def _local_scale(h: Matrix, pts: NDArray[np.float64]) -> NDArray[np.float64]:
    return np.asarray(np.sqrt(np.abs(_jacobian_det(h, pts))), np.float64)


# -- crops ----------------------------------------------------------------------------------


def tile_crop_mm(tile_mm: float, margin_mm: float = CROP_MARGIN_MM) -> float:
    """The side of a cell crop: the tile and the margin on every side."""
    return tile_mm + 2 * margin_mm


def crop_matrix(centre_mm: tuple[float, float], size_mm: float, px_per_mm: float) -> Matrix:
    """Crop pixel (u, v) -> area mm for a square crop (see the module docstring)."""
    n = max(4, round(size_mm * px_per_mm))
    s = size_mm / n
    cx, cy = centre_mm
    return np.array([[s, 0, cx - size_mm / 2 + s / 2], [0, s, cy - size_mm / 2 + s / 2], [0, 0, 1]])


def cell_crop(
    image: Image,
    pose: AreaPose,
    centre_mm: tuple[float, float],
    size_mm: float,
    px_per_mm: float = PX_PER_MM,
) -> Image:
    """A square of the area centred on `centre_mm`, north up, warped straight from the frame."""
    n = max(4, round(size_mm * px_per_mm))
    m = pose.homography @ crop_matrix(centre_mm, size_mm, px_per_mm)
    out = cv2.warpPerspective(
        image,
        m,
        (n, n),
        flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP,
        borderMode=cv2.BORDER_REPLICATE,
    )
    return np.asarray(out, np.uint8)


def cell_crops(
    image: Image,
    pose: AreaPose,
    centres_mm: Sequence[tuple[float, float]],
    size_mm: float,
    px_per_mm: float = PX_PER_MM,
) -> list[Image]:
    """`cell_crop` of every centre, each exactly as `cell_crop` cuts it.

    When the crops' pixel grids coincide (centres a whole number of crop pixels apart, as
    the cells of one grid are at the usual scales), the area is warped once over all of
    them and the crops are cut from that: the same sample points, one interpolation, one
    call instead of many. Otherwise each is warped alone.
    """
    if not centres_mm:
        return []
    n = max(4, round(size_mm * px_per_mm))
    s = size_mm / n
    centres = np.asarray(centres_mm, np.float64).reshape(-1, 2)
    steps = (centres - centres[0]) / s
    whole = np.round(steps)
    aligned = bool(np.all(np.abs(steps - whole) <= 1e-6))
    offsets = (whole - whole.min(axis=0)).astype(np.intp)  # (col, row) of each crop, px
    width, height = (int(v) + n for v in offsets.max(axis=0))
    # Crops far apart (a seat's storage) are cheaper alone than inside one large warp.
    if len(centres) == 1 or not aligned or width * height > 2 * n * n * len(centres):
        return [
            cell_crop(image, pose, (float(x), float(y)), size_mm, px_per_mm) for x, y in centres
        ]
    # The union shares the crops' pixel grid; its pixel (0, 0) lies at the least column and
    # row any crop starts at, counted from the first crop's.
    first = crop_matrix((float(centres[0, 0]), float(centres[0, 1])), size_mm, px_per_mm)
    shift = whole.min(axis=0)
    to_mm = first @ np.array([[1.0, 0.0, shift[0]], [0.0, 1.0, shift[1]], [0.0, 0.0, 1.0]])
    union = cv2.warpPerspective(
        image,
        pose.homography @ to_mm,
        (width, height),
        flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP,
        borderMode=cv2.BORDER_REPLICATE,
    )
    return [np.ascontiguousarray(union[v : v + n, u : u + n], np.uint8) for u, v in offsets]


def crops_visible(
    image_shape: Sequence[int],
    pose: AreaPose,
    centres_mm: Sequence[tuple[float, float]],
    size_mm: float,
) -> NDArray[np.bool_]:
    """`crop_visible` of every centre at once."""
    if not centres_mm:
        return np.zeros(0, bool)
    h = size_mm / 2
    square = np.array([(-h, -h), (h, -h), (h, h), (-h, h)], np.float64)
    centres = np.asarray(centres_mm, np.float64).reshape(-1, 1, 2)
    p = pose.project((centres + square).reshape(-1, 2)).reshape(-1, 4, 2)
    height, width = image_shape[:2]
    inside = (
        (p[..., 0] >= -0.5)
        & (p[..., 0] <= width - 0.5)
        & (p[..., 1] >= -0.5)
        & (p[..., 1] <= height - 0.5)
    )
    return np.asarray(inside.all(axis=1), bool)


def storage_size_mm(geometry: kit.SeatGeometry, margin_mm: float = CROP_MARGIN_MM) -> float:
    """The side of the storage crop: the slot (Pb) and the margin on every side."""
    return geometry.pitch + 2 * margin_mm


def storage_crop(
    image: Image,
    pose: AreaPose,
    px_per_mm: float = PX_PER_MM,
    margin_mm: float = CROP_MARGIN_MM,
) -> Image:
    """The crop of a seat's storage slot, seat north up."""
    geo = pose.geometry
    if not isinstance(geo, kit.SeatGeometry):
        raise TypeError("storage_crop needs a seat's pose")
    return cell_crop(image, pose, geo.storage_centre(), storage_size_mm(geo, margin_mm), px_per_mm)


def display_area(image: Image, pose: AreaPose, px_per_mm: float = PX_PER_MM) -> Image:
    """The whole display mat (grid and ship lane), north up, centred on the display centre."""
    geo = pose.geometry
    if not isinstance(geo, kit.DisplayGeometry):
        raise TypeError("display_area needs the display's pose")
    return cell_crop(image, pose, (0.0, 0.0), 2 * geo.half_extent, px_per_mm)


def area_pixel(
    point_mm: tuple[float, float],
    centre_mm: tuple[float, float],
    size_mm: float,
    px_per_mm: float,
) -> tuple[float, float]:
    """Where an area point lies in a crop (u, v), the inverse of the crop's pixel mapping."""
    m = crop_matrix(centre_mm, size_mm, px_per_mm)
    u, v = _apply(np.linalg.inv(m), np.asarray([point_mm], np.float64))[0]
    return float(u), float(v)


def picture_crop(
    picture: Image,
    extent_mm: tuple[float, float],
    centre_mm: tuple[float, float],
    size_mm: float,
    px_per_mm: float = PX_PER_MM,
    fill: tuple[int, int, int] | int | None = None,
) -> Image:
    """The same square cut from an upright flat picture spanning `extent_mm` (width, height)
    and centred on the area's origin (a pack's empty board picture): a reference that lines up
    pixel for pixel with `cell_crop`. Outside the picture: `fill`, or its edge repeated."""
    ph, pw = picture.shape[:2]
    width_mm, height_mm = extent_mm
    # area mm -> picture pixel (centres at whole numbers)
    to_pic = np.array(
        [[pw / width_mm, 0, pw / 2 - 0.5], [0, ph / height_mm, ph / 2 - 0.5], [0, 0, 1]]
    )
    n = max(4, round(size_mm * px_per_mm))
    m = to_pic @ crop_matrix(centre_mm, size_mm, px_per_mm)
    border = cv2.BORDER_REPLICATE if fill is None else cv2.BORDER_CONSTANT
    value: Any = 0 if fill is None else fill
    out = cv2.warpAffine(
        picture,
        m[:2],
        (n, n),
        flags=cv2.INTER_AREA | cv2.WARP_INVERSE_MAP,
        borderMode=border,
        borderValue=value,
    )
    return np.asarray(out, np.uint8)


def crop_visible(
    image_shape: Sequence[int], pose: AreaPose, centre_mm: tuple[float, float], size_mm: float
) -> bool:
    """True when a square of the area lies wholly inside the frame."""
    h = size_mm / 2
    cx, cy = centre_mm
    p = pose.project([(cx - h, cy - h), (cx + h, cy - h), (cx + h, cy + h), (cx - h, cy + h)])
    height, width = image_shape[:2]
    return bool(
        np.all(p[:, 0] >= -0.5)
        and np.all(p[:, 0] <= width - 0.5)
        and np.all(p[:, 1] >= -0.5)
        and np.all(p[:, 1] <= height - 0.5)
    )


def crop_in_picture(
    image_shape: Sequence[int],
    pose: AreaPose,
    centre_mm: tuple[float, float],
    size_mm: float,
    px_per_mm: float = PX_PER_MM,
) -> NDArray[np.bool_]:
    """Which pixels of `cell_crop`'s square come from inside the frame (n, n): the rest
    repeat the frame's edge."""
    n = max(4, round(size_mm * px_per_mm))
    m = pose.homography @ crop_matrix(centre_mm, size_mm, px_per_mm)
    v, u = np.mgrid[0:n, 0:n].astype(np.float64)
    p = np.tensordot(m, np.stack([u, v, np.ones_like(u)]), axes=1)
    x, y = p[0] / p[2], p[1] / p[2]
    height, width = image_shape[:2]
    inside = (p[2] > 0) & (x >= -0.5) & (x <= width - 0.5) & (y >= -0.5) & (y <= height - 0.5)
    return np.asarray(inside, bool)


def predicted_markers(
    pose: AreaPose, ids: Iterable[int] | None = None
) -> dict[int, NDArray[np.float64]]:
    """Where the pose puts each (or the given) marker's corners in the image."""
    centres = pose.geometry.marker_centres()
    chosen = centres if ids is None else {i: centres[i] for i in ids if i in centres}
    return {i: pose.project(kit.marker_corners(c)) for i, c in chosen.items()}
