"""Teaching a box: build a tile pack (docs/formats.md) from camera frames of the printed kit.

The player lays up to 16 tile types at a time on the display mat, one per cell, upright
(palms to the mat's north). Each tile is found in its cell (it may lie a few millimetres
and degrees off), cut straight from the frame through the mat's markers and stored upright;
its meaning comes from the catalogue, the player confirming or correcting the type (and,
for a tile laid turned, its rotation) cell by cell. Then the explorer ship alone on the mat
and an empty board beside one seat's markers. Nothing is written until the very end, and
then the whole pack appears at once.

This module holds the logic only (`TeachSession`), so a terminal flow (app.teach)
and a phone flow can share it.
"""

from __future__ import annotations

import itertools
import math
import os
import shutil
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import tomli_w
from numpy.typing import NDArray

from companion.catalogue import Catalogue, TileType
from companion.errors import CompanionError
from companion.reading import EMPTY, CellRead
from companion.tiles import ROTATIONS, Meaning
from vision import kit
from vision.box.pack import PACK_FILE
from vision.config import TeachConfig, VisionConfig
from vision.kit.printer import swap_into_place
from vision.reader.areas import (
    AreaPose,
    BoardNotFound,
    DisplayNotFound,
    crop_matrix,
    locate_display,
    locate_seat,
)
from vision.reader.markers import detect_markers

Image = NDArray[np.uint8]
Matrix = NDArray[np.float64]
Cell = tuple[int, int]
CELLS: tuple[Cell, ...] = tuple((r, c) for r in range(4) for c in range(4))


class TeachError(CompanionError):
    """A frame or an answer cannot be used (one sentence for the player)."""


class StepKind(StrEnum):
    TILES = "tiles"
    SHIP = "ship"
    BOARD = "board"
    DONE = "done"


@dataclass(frozen=True, slots=True)
class Step:
    """What the player is asked to do next."""

    kind: StepKind
    instructions: str
    batch: int = 0  # 1-based batch number for TILES
    plan: Mapping[Cell, str] = field(default_factory=dict)  # cell -> suggested tile id
    side: str = ""  # board side for BOARD


@dataclass(frozen=True, slots=True)
class CellAnswer:
    """A cell's tile type and how it lies: `rotation` turns the upright tile into what is seen."""

    tile_id: str
    rotation: int = 0


@dataclass(frozen=True, slots=True)
class CellView:
    """One display cell as seen: whether a tile lies there, its picture as laid (display north
    up), and the type the session suggests (None: empty)."""

    cell: Cell
    occupied: bool
    picture: Image
    suggestion: CellAnswer | None
    found: bool  # the tile's own edges were found (else the nominal square is used)
    again: str = ""  # why this picture is worth taking again ("" when it is good)


@dataclass(frozen=True, slots=True)
class BatchView:
    """A frame of one batch, ready for the player's answers."""

    batch: int
    cells: Mapping[Cell, CellView]
    warnings: tuple[str, ...] = ()
    frame: Image | None = None  # the frame the cells were cut from


@dataclass(frozen=True, slots=True)
class PictureView:
    """The ship (BGRA, paper clear) or an empty board (BGR) cut from a frame."""

    kind: StepKind
    picture: Image
    size_mm: tuple[float, float]
    side: str = ""
    seat: int = 0
    warnings: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Progress:
    batch: int
    taught: int
    total: int

    def __str__(self) -> str:
        return f"batch {self.batch}: {self.taught} of {self.total} tile types taught"


def describe(meaning: Meaning) -> str:
    """A short description of a tile, e.g. "end, land S, 2 palms, 1 hut"."""
    parts = [meaning.kind.value]
    if meaning.land:
        parts.append(f"land {meaning.land}")
    for name in ("palms", "huts", "shells", "boats"):
        n = getattr(meaning, name)
        if n:
            parts.append(f"{n} {name if n > 1 else name[:-1]}")
    if meaning.lei:
        parts.append(f"lei {meaning.lei}")
    return ", ".join(parts)


# --- finding things on the mat ---------------------------------------------------------------


def _bgr(frame: Image) -> Image:
    if frame.ndim == 2:
        return np.asarray(cv2.cvtColor(frame, cv2.COLOR_GRAY2BGR), np.uint8)
    if frame.ndim == 3 and frame.shape[2] == 4:
        return np.asarray(cv2.cvtColor(frame, cv2.COLOR_BGRA2BGR), np.uint8)
    if frame.ndim == 3 and frame.shape[2] == 3:
        return frame
    raise TeachError("a frame must be a grey or colour picture")


def _grey(frame: Image) -> Image:
    return np.asarray(cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY), np.uint8)


def _warp(frame: Image, m: Matrix, size: tuple[int, int]) -> Image:
    """Warp `frame` so output pixel (u, v) shows frame point m @ (u, v, 1)."""
    out = cv2.warpPerspective(
        frame,
        m,
        size,
        flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP,
        borderMode=cv2.BORDER_REPLICATE,
    )
    return np.asarray(out, np.uint8)


def _picture_matrix(n: int, side_mm: tuple[float, float]) -> Matrix:
    """Picture pixel (u, v) of an n-wide picture -> mm, centred on 0, for a w x h mm extent."""
    w, h = side_mm
    rows = round(n * h / w)
    return np.array(
        [[w / n, 0, -w / 2 + w / n / 2], [0, h / rows, -h / 2 + h / rows / 2], [0, 0, 1]]
    )


@dataclass
class _Mat:
    """The display located in a frame and rectified at the working scale."""

    frame: Image
    pose: AreaPose
    geometry: kit.DisplayGeometry
    view: Image  # the whole active area, north up
    to_mm: Matrix  # view pixel -> display mm
    foreground: NDArray[np.bool_]  # not paper (outlines removed)
    foreground_raw: NDArray[np.bool_]  # not paper, outlines and thin parts kept
    px: float  # view px per mm
    unlike_paper: NDArray[np.float32]  # how each pixel differs from paper, shadows alike


def _paper_model(view: Image, to_mm: Matrix, geo: kit.DisplayGeometry, segments: int) -> Image:
    """The paper's colour everywhere on the mat, fitted (a + bx + cy per channel) to the
    median colours of the empty ship lane, leaving out segments that hold something."""
    from_mm = np.linalg.inv(to_mm)
    inner, outer = geo.lane_inner, geo.half_extent
    mid = (inner + outer) / 2
    half_band = (outer - inner) / 2 - 3.0
    span = inner  # the lane beside the grid, not its marker corners
    samples: list[tuple[float, float, NDArray[np.float64]]] = []
    edges = np.linspace(-span, span, segments + 1)
    for side in range(4):
        for a, b in itertools.pairwise(edges):
            along0, along1 = a + 1.0, b - 1.0
            if side == 0:
                box = (along0, -mid - half_band, along1, -mid + half_band)
            elif side == 1:
                box = (mid - half_band, along0, mid + half_band, along1)
            elif side == 2:
                box = (along0, mid - half_band, along1, mid + half_band)
            else:
                box = (-mid - half_band, along0, -mid + half_band, along1)
            p0 = from_mm @ np.array([box[0], box[1], 1.0])
            p1 = from_mm @ np.array([box[2], box[3], 1.0])
            x0, y0 = (round(v) for v in p0[:2])
            x1, y1 = (round(v) for v in p1[:2])
            patch = view[max(y0, 0) : max(y1, 0), max(x0, 0) : max(x1, 0)].reshape(-1, 3)
            if len(patch):
                cx, cy = (box[0] + box[2]) / 2, (box[1] + box[3]) / 2
                samples.append((cx, cy, np.median(patch, axis=0)))
    if not samples:
        raise TeachError("the mat's ship lane is not in view")
    xs = np.array([[1.0, s[0], s[1]] for s in samples])
    colours = np.array([s[2] for s in samples])
    keep = np.ones(len(samples), bool)
    coef = np.zeros((3, 3))
    for _ in range(3):
        coef, *_ = np.linalg.lstsq(xs[keep], colours[keep], rcond=None)
        resid = np.linalg.norm(colours - xs @ coef, axis=1)
        scale = max(float(np.median(resid[keep])) * 3.0, 6.0)
        new_keep = resid <= scale
        if new_keep.sum() < 6 or np.array_equal(new_keep, keep):
            break
        keep = new_keep
    h, w = view.shape[:2]
    u, v = np.meshgrid(np.arange(w, dtype=np.float64), np.arange(h, dtype=np.float64))
    mx = to_mm[0, 0] * u + to_mm[0, 2]
    my = to_mm[1, 1] * v + to_mm[1, 2]
    paper = coef[0][None, None, :] + mx[..., None] * coef[1] + my[..., None] * coef[2]
    return np.asarray(np.clip(paper, 0, 255), np.uint8)


def _not_paper(view: Image, paper: Image, cfg: TeachConfig) -> Image:
    """1 where a pixel is not the mat's paper (`paper`: its expected colour): its colour lies
    far from the paper's, except brighter paper of the same hue (a glare spot)."""
    pixel = view.astype(np.float32)
    ref = paper.astype(np.float32) + 1.0
    scale = np.sum(pixel * ref, axis=2) / np.sum(ref * ref, axis=2)
    same_hue = np.linalg.norm(pixel - scale[..., None] * ref, axis=2) <= cfg.hue_distance
    far = np.linalg.norm(pixel - ref, axis=2) > cfg.paper_distance
    return np.asarray(far & ~(same_hue & (scale > 1.0)), np.uint8)


def _unlike_paper(view: Image, paper: Image, cfg: TeachConfig) -> NDArray[np.float32]:
    """How each pixel differs from the mat's paper in a way light does not change: its colour
    off the paper's hue (3 channels) and how far it is darker than paper in shadow (1). Paper
    in shadow or glare is zero everywhere, so only what lies on the paper has edges."""
    pixel = view.astype(np.float32)
    ref = paper.astype(np.float32) + 1.0
    scale = np.sum(pixel * ref, axis=2) / np.sum(ref * ref, axis=2)
    hue = pixel - scale[..., None] * ref
    dark = np.clip(cfg.shadow_ratio - scale, 0.0, None) * 255.0
    return np.dstack([hue, dark]).astype(np.float32)


def _locate_mat(frame: Image, tile_mm: float, reading: VisionConfig, cfg: TeachConfig) -> _Mat:
    frame = _bgr(frame)
    markers = detect_markers(_grey(frame), reading.markers)
    geo = kit.DisplayGeometry(tile_mm)
    try:
        pose = locate_display(markers, geo, reading.areas)
    except DisplayNotFound as exc:
        raise TeachError(f"the display mat is not found ({exc.message})") from None
    side = 2 * geo.half_extent
    to_mm = crop_matrix((0.0, 0.0), side, cfg.work_px_per_mm)
    n = max(4, round(side * cfg.work_px_per_mm))
    view = _warp(frame, pose.homography @ to_mm, (n, n))
    paper = _paper_model(view, to_mm, geo, cfg.lane_segments)
    k = max(3, round(cfg.line_removal_mm * cfg.work_px_per_mm) | 1)
    raw = _not_paper(view, paper, cfg)
    foreground = cv2.morphologyEx(raw, cv2.MORPH_OPEN, np.ones((k, k), np.uint8)).astype(bool)
    unlike = _unlike_paper(view, paper, cfg)
    return _Mat(frame, pose, geo, view, to_mm, foreground, raw.astype(bool), n / side, unlike)


@dataclass(frozen=True)
class _Square:
    """Where a tile lies in its cell: `to_mm` maps tile mm (origin at the tile's centre, axes
    along its edges) to display mm; `found` when a tile lies there; `fill`, the fraction of
    the square that is not paper."""

    to_mm: Matrix
    found: bool
    fill: float = 0.0


def _find_tile(mat: _Mat, centre_mm: tuple[float, float], cfg: TeachConfig) -> _Square:
    """The tile square near `centre_mm`.

    The square has the tile's own size (the kit's `tile_mm`, never grown or shrunk) and lies
    where the table-kit lets a tile lie: its centre up to `search_margin_mm` off the cell's
    centre, up to `search_turn_deg` off square. Of those places it is the one whose four
    sides lie on the strongest edges of the picture: a tile's outline is an edge all round
    (against paper, a thin gap, a neighbour's rim), while a shadow's far edge is soft and a
    square stretched to it would leave the opposite side on bare paper. A tile counts as
    found when most of that square is not paper.
    """
    tile = mat.geometry.tile_mm
    nominal = np.array([[1.0, 0, centre_mm[0]], [0, 1.0, centre_mm[1]], [0, 0, 1]])
    n = round(tile * mat.px)
    half = tile / 2 + cfg.search_margin_mm + 2.0
    from_mm = np.linalg.inv(mat.to_mm)
    (x0, y0), (x1, y1) = (
        (from_mm @ np.array([centre_mm[0] + d, centre_mm[1] + d, 1.0]))[:2] for d in (-half, half)
    )
    x0i, y0i = max(0, math.floor(x0)), max(0, math.floor(y0))
    x1i = min(mat.view.shape[1], math.ceil(x1) + 1)
    y1i = min(mat.view.shape[0], math.ceil(y1) + 1)
    if min(y1i - y0i, x1i - x0i) <= n + 2:
        return _Square(nominal, False)
    centre_px = from_mm @ np.array([centre_mm[0], centre_mm[1], 1.0])
    window = mat.unlike_paper[y0i:y1i, x0i:x1i]
    sigma = cfg.edge_smooth_mm * mat.px
    window = np.asarray(cv2.GaussianBlur(window, (0, 0), sigma), np.float32)
    to_window = _fit_square(window, n, (centre_px[0] - x0i, centre_px[1] - y0i), mat.px, cfg)
    if to_window is None:
        return _Square(nominal, False)
    window_to_view = np.array([[1.0, 0, x0i], [0, 1.0, y0i], [0, 0, 1]])
    m: Matrix = mat.to_mm @ window_to_view @ to_window
    fill = _fill(mat.foreground, from_mm @ m, tile, n)
    return _Square(m, fill >= cfg.found_min_fill, fill)


def _fill(mask: NDArray[np.bool_], tile_to_view: Matrix, tile_mm: float, n: int) -> float:
    """The fraction of the tile square (tile mm -> view px: `tile_to_view`) where `mask` is set."""
    inside = cv2.warpPerspective(
        mask.astype(np.uint8),
        tile_to_view @ _picture_matrix(n, (tile_mm, tile_mm)),
        (n, n),
        flags=cv2.INTER_NEAREST | cv2.WARP_INVERSE_MAP,
        borderMode=cv2.BORDER_CONSTANT,
        borderValue=0,
    )
    return float(np.mean(inside))


def _fit_square(
    window: NDArray[np.float32], n: int, nominal: tuple[float, float], px: float, cfg: TeachConfig
) -> Matrix | None:
    """The n-px square whose sides lie on the strongest edges of `window` (a colour picture),
    as tile mm -> window px (see `_find_tile`); None when no place is allowed."""
    h, w = window.shape[:2]
    wc = ((w - 1) / 2, (h - 1) / 2)
    reach = cfg.search_margin_mm * px
    steps = round(cfg.search_turn_deg / cfg.search_turn_step_deg)
    best: tuple[float, int, NDArray[np.float64], int, int] | None = None
    scores: list[float] = []
    for k in range(-steps, steps + 1):
        rot = cv2.getRotationMatrix2D(wc, k * cfg.search_turn_step_deg, 1.0)
        turned = np.asarray(cv2.warpAffine(window, rot, (w, h)), np.float32)
        score = _side_edges(_edge_maps(turned), n)
        # score[y, x]: the square with top-left pixel (x + 1, y + 1); its centre, unturned.
        ys, xs = np.mgrid[0 : score.shape[0], 0 : score.shape[1]].astype(np.float64)
        bx, by = xs + 1 + (n - 1) / 2, ys + 1 + (n - 1) / 2
        inv = cv2.invertAffineTransform(rot)
        ox = inv[0, 0] * bx + inv[0, 1] * by + inv[0, 2] - nominal[0]
        oy = inv[1, 0] * bx + inv[1, 1] * by + inv[1, 2] - nominal[1]
        allowed = np.where(np.hypot(ox, oy) <= reach, score, -np.inf)
        i = int(np.argmax(allowed))
        y, x = divmod(i, score.shape[1])
        scores.append(float(allowed[y, x]))
        if np.isfinite(scores[-1]) and (best is None or scores[-1] > best[0]):
            best = (scores[-1], k, allowed, y, x)
    if best is None:
        return None
    _, k, score, y, x = best
    # Between pixels: the peaks of parabolas through the best and its neighbours.
    dy = _peak(score[y - 1, x], score[y, x], score[y + 1, x]) if 0 < y < score.shape[0] - 1 else 0
    dx = _peak(score[y, x - 1], score[y, x], score[y, x + 1]) if 0 < x < score.shape[1] - 1 else 0
    rot = cv2.getRotationMatrix2D(wc, k * cfg.search_turn_step_deg, 1.0)
    maps = _edge_maps(np.asarray(cv2.warpAffine(window, rot, (w, h)), np.float32))
    west, north = x + dx + 0.5, y + dy + 0.5
    corners = _refine_sides(maps, (west, west + n, north, north + n), px, cfg)
    inv = cv2.invertAffineTransform(rot)
    corners = corners @ inv[:, :2].T + inv[:, 2]
    half = n / px / 2
    square = np.array([(-half, -half), (half, -half), (half, half), (-half, half)], np.float32)
    m = cv2.getPerspectiveTransform(square, np.asarray(corners, np.float32))
    return np.asarray(m, np.float64)


def _peak(before: float, at: float, after: float) -> float:
    """Where, within half a step of the middle, a parabola through three values peaks."""
    if not (np.isfinite(before) and np.isfinite(after)):
        return 0.0
    bend = before - 2 * at + after
    return float(np.clip(0.5 * (before - after) / bend, -0.5, 0.5)) if bend < 0 else 0.0


def _edge_maps(turned: NDArray[np.float32]) -> tuple[NDArray[np.float32], ...]:
    """How strongly each place of `turned` (how each pixel differs from paper, see
    `_unlike_paper`) is a west, east, north or south side of a tile: an edge counts twice
    where it leads out of the tile towards paper (a tile's own outline) and not at all where
    it leads from paper into something (a neighbour's outline seen across the gap). West and
    east maps: [y, i] between columns i and i + 1; north and south: [j, x] between rows j and
    j + 1."""
    unlike = np.abs(turned).sum(axis=2)
    east_step = np.abs(np.diff(turned, axis=1)).sum(axis=2)
    south_step = np.abs(np.diff(turned, axis=0)).sum(axis=2)
    east_rise = np.diff(unlike, axis=1)  # > 0: less like paper towards the east
    south_rise = np.diff(unlike, axis=0)
    return tuple(
        np.asarray(m, np.float32)
        for m in (
            east_step + east_rise,
            east_step - east_rise,
            south_step + south_rise,
            south_step - south_rise,
        )
    )


def _side_edges(maps: tuple[NDArray[np.float32], ...], n: int) -> NDArray[np.float64]:
    """For every n x n square, the strength of the edges its four sides lie on (`maps`:
    `_edge_maps`): entry (y, x) is the square whose top-left pixel is (x + 1, y + 1)."""
    west_map, east_map, north_map, south_map = maps

    def along_columns(edge: NDArray[np.float32]) -> NDArray[np.float64]:
        c = np.vstack([np.zeros((1, edge.shape[1])), np.cumsum(edge, axis=0, dtype=np.float64)])
        return np.asarray(c[n:] - c[:-n], np.float64)  # [y, i]: edge i over rows y .. y + n - 1

    def along_rows(edge: NDArray[np.float32]) -> NDArray[np.float64]:
        c = np.hstack([np.zeros((edge.shape[0], 1)), np.cumsum(edge, axis=1, dtype=np.float64)])
        return np.asarray(c[:, n:] - c[:, :-n], np.float64)  # [j, x]: over columns x .. x + n - 1

    h, w = north_map.shape[0] + 1, west_map.shape[1] + 1
    rows, cols = h - n - 1, w - n - 1  # squares with a pixel of room on every side
    ys, xs = slice(1, 1 + rows), slice(1, 1 + cols)
    # West side: between columns x and x + 1; east: between columns x + n and x + n + 1.
    west = along_columns(west_map)[ys, 0:cols]
    east = along_columns(east_map)[ys, n : n + cols]
    north = along_rows(north_map)[0:rows, xs]
    south = along_rows(south_map)[n : n + rows, xs]
    return np.asarray(west + east + north + south, np.float64)


def _refine_sides(
    maps: tuple[NDArray[np.float32], ...],
    sides: tuple[float, float, float, float],
    px: float,
    cfg: TeachConfig,
) -> NDArray[np.float64]:
    """Each side of a found square (`sides`: x of west and east, y of north and south, in
    the turned window) moved and turned on its own, within `refine_mm` and `refine_turn_deg`,
    onto the strongest edge there: a view that the markers' or the lens's small errors
    shear or scale a little keeps the tile's own outline. The corners NW, NE, SE, SW."""
    west, east, north, south = sides
    reach = cfg.refine_mm * px
    offsets = np.arange(-reach, reach + 1e-9, 0.5)
    turns = np.tan(np.radians(np.arange(-cfg.refine_turn_deg, cfg.refine_turn_deg + 1e-9, 0.25)))
    lines = []  # (at, slope): across = at + slope * (along - middle)
    for k, at in enumerate(sides):
        lo, hi = (north, south) if k < 2 else (west, east)
        span = hi - lo
        along = np.linspace(lo + 0.1 * span, hi - 0.1 * span, max(8, round(0.8 * span)))
        middle = (lo + hi) / 2
        o, t = np.meshgrid(offsets, turns)
        across = at + o.ravel()[:, None] + t.ravel()[:, None] * (along - middle)[None, :]
        # Map index i is the boundary at i + 0.5.
        if k < 2:
            mx, my = across - 0.5, np.broadcast_to(along, across.shape)
        else:
            mx, my = np.broadcast_to(along, across.shape), across - 0.5
        strength = cv2.remap(
            maps[k],
            np.ascontiguousarray(mx, np.float32),
            np.ascontiguousarray(my, np.float32),
            cv2.INTER_LINEAR,
            borderMode=cv2.BORDER_CONSTANT,
            borderValue=0.0,
        )
        i = int(np.argmax(np.asarray(strength, np.float64).mean(axis=1)))
        lines.append((at + float(o.ravel()[i]), float(t.ravel()[i]), middle))

    def meet(upright: tuple[float, float, float], level: tuple[float, float, float]) -> list[float]:
        # x = a + b (y - my) and y = c + d (x - mx)
        a, b, my = upright
        c, d, mx = level
        y = (c + d * (a - b * my - mx)) / (1 - d * b)
        return [a + b * (y - my), y]

    w_line, e_line, n_line, s_line = lines
    return np.array(
        [meet(w_line, n_line), meet(e_line, n_line), meet(e_line, s_line), meet(w_line, s_line)],
        np.float64,
    )


def _tile_picture(mat: _Mat, tile_to_mm: Matrix, cfg: TeachConfig) -> Image:
    """The tile square as laid (display north up), cut straight from the frame."""
    tile = mat.geometry.tile_mm
    n = cfg.picture_px
    m = mat.pose.homography @ tile_to_mm @ _picture_matrix(n, (tile, tile))
    return _warp(mat.frame, m, (n, n))


def _washed_out(picture: Image, cfg: TeachConfig) -> bool:
    """True when a good part of a tile picture is blown out to white (glare)."""
    return float(np.mean(np.min(picture, axis=2) >= cfg.glare_level)) > cfg.glare_fraction


def _worth_again(
    mat: _Mat, square: Matrix, others: Sequence[Matrix], picture: Image, cfg: TeachConfig
) -> str:
    """Why a found tile's picture is worth taking again, as the end of a sentence ("" when it
    is good): too small in the frame, blurred, cut by glare or partly covered."""
    frame_px = mat.pose.px_per_mm(tuple(square[:2, 2] / square[2, 2]))
    if frame_px < cfg.least_px_per_mm:
        return (
            f"it is too small, {frame_px:.1f} pixels a millimetre where the kit asks for "
            f"{cfg.least_px_per_mm:g} (bring the camera closer)"
        )
    blur = _blur_mm(mat, square, cfg)
    if blur is not None and blur > cfg.blurred_mm:
        return f"it is blurred, its edges {blur:.1f} mm soft (focus the camera on the mat)"
    if _washed_out(picture, cfg):
        return "glare washes part of it out (softer light gives a better picture)"
    if _covered_edge(mat, square, others, cfg) > cfg.covered_edge_fraction:
        return "something lies across its edge (a hand, a piece: clear it away)"
    return ""


def _side_profiles(mat: _Mat, square: Matrix, cfg: TeachConfig) -> list[NDArray[np.float64]]:
    """How unlike paper the view is across each side of a tile square, averaged along the
    side's middle: from `profile_mm` inside to `profile_mm` outside, every 0.1 mm."""
    tile = mat.geometry.tile_mm
    reach = cfg.profile_mm
    depth = np.arange(-reach, reach + 1e-9, 0.1)
    along = np.linspace(-0.3 * tile, 0.3 * tile, 24)
    unlike = np.linalg.norm(mat.unlike_paper, axis=2).astype(np.float32)
    from_mm = np.linalg.inv(mat.to_mm) @ square
    out = []
    for nx, ny in ((-1, 0), (1, 0), (0, -1), (0, 1)):
        d, a = np.meshgrid(tile / 2 + depth, along)
        x = nx * d + (ny != 0) * a
        y = ny * d + (nx != 0) * a
        p = np.stack([x.ravel(), y.ravel(), np.ones(x.size)])
        q = from_mm @ p
        mx = (q[0] / q[2]).reshape(x.shape).astype(np.float32)
        my = (q[1] / q[2]).reshape(x.shape).astype(np.float32)
        samples = cv2.remap(unlike, mx, my, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
        out.append(np.asarray(samples, np.float64).mean(axis=0))
    return out


def _blur_mm(mat: _Mat, square: Matrix, cfg: TeachConfig) -> float | None:
    """How soft a tile's outline is: the Gaussian blur (sigma, mm) that makes a step as high
    as the one across its sides as gentle as it is, from the sides with paper beyond them;
    None when no side has."""
    sigmas = []
    for profile in _side_profiles(mat, square, cfg):
        n = len(profile)
        inside = float(np.median(profile[: n // 4]))
        outside = float(np.median(profile[-n // 4 :]))
        step = inside - outside
        if step < cfg.hue_distance or outside > cfg.hue_distance:
            continue  # no clean step to paper on this side (a neighbour, a pale edge)
        slope = float(np.max(-np.diff(profile))) / 0.1
        if slope > 0:
            sigmas.append(step / (math.sqrt(2 * math.pi) * slope))
    return float(np.median(sigmas)) if sigmas else None


def _covered_edge(mat: _Mat, square: Matrix, others: Sequence[Matrix], cfg: TeachConfig) -> float:
    """The largest fraction of a band beyond one side of a tile (past the kit's gap) that
    holds something unlike paper, other tiles' squares left out: a hand or a piece across
    the tile's edge (a shadow is paper)."""
    tile = mat.geometry.tile_mm
    unlike = np.linalg.norm(mat.unlike_paper, axis=2) > cfg.hue_distance
    free = np.ones(unlike.shape, np.uint8)
    from_mm = np.linalg.inv(mat.to_mm)
    half = tile / 2 + 0.5
    corners = np.array([[-half, -half, 1], [half, -half, 1], [half, half, 1], [-half, half, 1]])
    for other in others:
        q = (from_mm @ other @ corners.T).T
        cv2.fillConvexPoly(free, np.round(q[:, :2] / q[:, 2:]).astype(np.int32), 0)
    worst = 0.0
    lo, hi = tile / 2 + 1.0, tile / 2 + cfg.cover_band_mm
    along = np.linspace(-0.45 * tile, 0.45 * tile, 40)
    for nx, ny in ((-1, 0), (1, 0), (0, -1), (0, 1)):
        d, a = np.meshgrid(np.linspace(lo, hi, 8), along)
        x = nx * d + (ny != 0) * a
        y = ny * d + (nx != 0) * a
        q = from_mm @ square @ np.stack([x.ravel(), y.ravel(), np.ones(x.size)])
        px = np.clip(np.round(q[0] / q[2]).astype(int), 0, unlike.shape[1] - 1)
        py = np.clip(np.round(q[1] / q[2]).astype(int), 0, unlike.shape[0] - 1)
        keep = free[py, px] > 0
        if keep.sum() >= 0.25 * keep.size:
            worst = max(worst, float(unlike[py, px][keep].mean()))
    return worst


def _occupied(mat: _Mat, centre: tuple[float, float], cfg: TeachConfig) -> bool:
    half = mat.geometry.tile_mm / 2 - cfg.inner_shrink_mm
    from_mm = np.linalg.inv(mat.to_mm)
    (x0, y0), (x1, y1) = (
        (from_mm @ np.array([centre[0] + d, centre[1] + d, 1.0]))[:2] for d in (-half, half)
    )
    inner = mat.foreground[round(y0) : round(y1), round(x0) : round(x1)]
    return bool(inner.size) and float(inner.mean()) >= cfg.occupied_fraction


def _ship_picture(mat: _Mat, cfg: TeachConfig) -> tuple[Image, tuple[float, float]]:
    """The largest thing on the mat outside the markers: BGRA, its outline opaque."""
    mask = mat.foreground.astype(np.uint8)
    from_mm = np.linalg.inv(mat.to_mm)
    keep_out = kit.MARKER_MM / 2 + kit.MARKER_MARGIN_MM
    for centre in mat.geometry.marker_centres().values():
        (x0, y0), (x1, y1) = (
            (from_mm @ np.array([centre[0] + d, centre[1] + d, 1.0]))[:2]
            for d in (-keep_out, keep_out)
        )
        mask[max(0, int(y0)) : max(0, int(y1) + 1), max(0, int(x0)) : max(0, int(x1) + 1)] = 0
    # Pale parts of the piece (a white sail across it) look like paper: join what lies close.
    k = max(3, round(cfg.ship_join_mm * mat.px) | 1)
    disc = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (k, k))
    mask = np.asarray(cv2.morphologyEx(mask, cv2.MORPH_CLOSE, disc), np.uint8)
    count, labels, stats, _ = cv2.connectedComponentsWithStats(mask, connectivity=8)
    if count <= 1:
        raise TeachError("nothing is seen on the mat: lay the explorer ship on it")
    biggest = 1 + int(np.argmax(stats[1:, cv2.CC_STAT_AREA]))
    area_mm2 = stats[biggest, cv2.CC_STAT_AREA] / mat.px**2
    if area_mm2 < cfg.ship_min_area_mm2:
        raise TeachError("nothing ship-sized is seen on the mat: lay the explorer ship on it")
    body = (labels == biggest).astype(np.uint8)
    contours, _ = cv2.findContours(body, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
    _, _, angle = cv2.minAreaRect(max(contours, key=cv2.contourArea))
    # Square the ship to the mat's axes by its body (thin parts would tilt the box): turn by
    # at most 45° either way, never a quarter.
    while angle > 45.0:
        angle -= 90.0
    while angle <= -45.0:
        angle += 90.0
    blob = _whole_piece(body, mat, cfg)
    # The whole piece's extent along the body's axes.
    t = math.radians(angle)
    ys, xs = np.nonzero(blob)
    along = xs * math.cos(t) + ys * math.sin(t)
    across = -xs * math.sin(t) + ys * math.cos(t)
    rect_w = float(along.max() - along.min() + 1)
    rect_h = float(across.max() - across.min() + 1)
    mid_along = (along.max() + along.min()) / 2
    mid_across = (across.max() + across.min()) / 2
    cx = mid_along * math.cos(t) - mid_across * math.sin(t)
    cy = mid_along * math.sin(t) + mid_across * math.cos(t)
    margin = cfg.ship_margin_mm * mat.px
    width_mm = (rect_w + 2 * margin) / mat.px
    height_mm = (rect_h + 2 * margin) / mat.px
    scale = cfg.picture_px / max(width_mm, height_mm)
    out_w = max(64, round(width_mm * scale))
    out_h = max(64, round(height_mm * scale))
    centre = mat.to_mm @ np.array([cx, cy, 1.0])
    c, s = math.cos(t), math.sin(t)
    # ship picture px -> display mm (turned by `angle`, as the blob lies)
    ship_to_mm = np.array([[c, -s, centre[0]], [s, c, centre[1]], [0, 0, 1]]) @ np.array(
        [
            [width_mm / out_w, 0, -width_mm / 2 + width_mm / out_w / 2],
            [0, height_mm / out_h, -height_mm / 2 + height_mm / out_h / 2],
            [0, 0, 1],
        ]
    )
    colour = _warp(mat.frame, mat.pose.homography @ ship_to_mm, (out_w, out_h))
    mask_m = np.linalg.inv(mat.to_mm) @ ship_to_mm
    alpha = cv2.warpPerspective(
        blob * 255,
        mask_m,
        (out_w, out_h),
        flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP,
        borderMode=cv2.BORDER_CONSTANT,
        borderValue=0,
    )
    holes = _fill_holes(alpha > 127)
    alpha = np.where(holes, 255, 0).astype(np.uint8)
    return np.dstack([colour, alpha]), (width_mm, height_mm)


def _whole_piece(blob: NDArray[np.uint8], mat: _Mat, cfg: TeachConfig) -> NDArray[np.uint8]:
    """The ship's blob grown back into its thin parts (a spar, a sail's tip) that the mask's
    opening cut off: into every pixel of the unopened mask within `ship_join_mm` of it and
    connected to it, the mat's printed outlines (where the kit prints them) excepted."""
    lines = np.zeros(blob.shape, np.uint8)
    from_mm = np.linalg.inv(mat.to_mm)
    geo = mat.geometry
    squares = [(0.0, 0.0, geo.lane_inner), (0.0, 0.0, geo.half_extent)]
    squares += [(*geo.cell_centre(r, c), geo.tile_mm / 2) for r, c in CELLS]
    width = max(1, round(cfg.line_removal_mm * mat.px))
    for cx, cy, half in squares:
        corners = (
            np.array(
                [
                    [cx - half, cy - half, 1],
                    [cx + half, cy - half, 1],
                    [cx + half, cy + half, 1],
                    [cx - half, cy + half, 1],
                ]
            )
            @ from_mm.T
        )
        cv2.polylines(lines, [np.round(corners[:, :2]).astype(np.int32)], True, 1, width)
    grow = (mat.foreground_raw & (lines == 0)).astype(np.uint8) | blob
    step = np.ones((3, 3), np.uint8)
    for _ in range(max(1, round(cfg.ship_join_mm * mat.px))):
        grown = np.asarray(cv2.dilate(blob, step), np.uint8) & grow
        if np.array_equal(grown, blob):
            break
        blob = grown
    return blob


def _fill_holes(mask: NDArray[np.bool_]) -> NDArray[np.bool_]:
    """`mask` with every region it encloses filled in (a white sail stays part of the ship)."""
    padded = np.pad(mask.astype(np.uint8), 1)
    flood = padded.copy()
    ff = np.zeros((flood.shape[0] + 2, flood.shape[1] + 2), np.uint8)
    cv2.floodFill(flood, ff, (0, 0), 1)
    enclosed = (flood == 0)[1:-1, 1:-1]
    return np.asarray(mask | enclosed, np.bool_)


def _board_grid(frame: Image, pose: AreaPose, geo: kit.SeatGeometry, cfg: TeachConfig) -> Image:
    """A seat's board grid, its rim left out, straightened at 1 px/mm."""
    inset = cfg.board_inset_mm
    w = round(geo.cols * geo.pitch - 2 * inset)
    h = round(geo.rows * geo.pitch - 2 * inset)
    return _warp(frame, pose.homography @ _picture_matrix(w, (float(w), float(h))), (w, h))


def _bare_table(
    frame: Image, poses: Sequence[AreaPose], tile_mm: float, vision: VisionConfig
) -> Image | None:
    """The frame's pixels outside the display mat and every seat's area (their outlines with
    a margin): the bare table, as an N x 1 picture; None when too little of it is seen."""
    keep = np.full(frame.shape[:2], 255, np.uint8)
    areas: list[NDArray[np.float64]] = [pose.project(pose.outline_mm()) for pose in poses]
    markers = detect_markers(_grey(frame), vision.markers)
    try:
        display = locate_display(markers, kit.DisplayGeometry(tile_mm), vision.areas)
        areas.append(display.project(display.outline_mm()))
    except DisplayNotFound:
        pass
    for outline in areas:
        cv2.fillConvexPoly(keep, np.round(outline).astype(np.int32), 0)
    margin = max(3, round(0.02 * max(frame.shape[:2])))
    keep = np.asarray(cv2.erode(keep, np.ones((margin, margin), np.uint8)), np.uint8)
    table = frame[keep > 0]
    if len(table) < 0.05 * keep.size:
        return None
    return np.ascontiguousarray(table.reshape(-1, 1, 3))


def _histogram_distance(a: Image, b: Image) -> float:
    """How unlike two pictures' colours are: 0 the same, 1 nothing in common (the
    Bhattacharyya distance of their hue-saturation histograms)."""

    def histogram(picture: Image) -> NDArray[np.float32]:
        hsv = cv2.cvtColor(picture, cv2.COLOR_BGR2HSV)
        hist = cv2.calcHist([hsv], [0, 1], None, [18, 8], [0, 180, 0, 256])
        return np.asarray(cv2.normalize(hist, None, 1.0, 0.0, cv2.NORM_L1), np.float32)

    return float(cv2.compareHist(histogram(a), histogram(b), cv2.HISTCMP_BHATTACHARYYA))


# --- the session -------------------------------------------------------------------------------


@dataclass(frozen=True)
class PackDraft:
    """Everything a pack holds, in memory: ready to write."""

    name: str
    tile_mm: float
    tiles: Mapping[str, tuple[TileType, Image]]
    ship: Image
    boards: Mapping[str, Image]
    catalogue: Catalogue


class TeachSession:
    """Guides the teaching of one box: batches of tiles, then the ship, then empty boards.

    Drive it with `step` (what to ask), `look(frame)` (analyse a frame for that step) and
    `accept(view, answers)` (the player's confirmation); `stop_tiles()` ends the tile batches
    early; `skip()` passes an optional board side; `draft()` / `write(out_dir)` at the end.
    """

    def __init__(
        self,
        catalogue: Catalogue,
        *,
        name: str = "my box",
        batch: int = 16,
        board_sides: Sequence[str] = ("front",),
        tile_mm: float | None = None,
        config: TeachConfig | None = None,
        vision: VisionConfig | None = None,
    ) -> None:
        if not 1 <= batch <= 16:
            raise TeachError(f"a batch holds 1 to 16 tiles, not {batch}")
        if "front" not in board_sides:
            raise TeachError("the front side of the board must be taught")
        for side in board_sides:
            catalogue.board(side)  # a DataError names a side the box has no layout for
        self.catalogue = catalogue
        self.name = name
        self.batch_size = batch
        self.board_sides = tuple(board_sides)
        self.tile_mm = float(tile_mm if tile_mm is not None else catalogue.tile_mm)
        self.config = config or TeachConfig()
        self.vision = vision or VisionConfig()
        self._taught: dict[str, Image] = {}
        self._batch = 1
        self._tiles_done = False
        self._ship: Image | None = None
        self._boards: dict[str, Image] = {}
        self._skipped: set[str] = set()
        self._frames: list[tuple[Image, dict[Cell, CellRead]]] = []

    # progress ------------------------------------------------------------------------------

    @property
    def progress(self) -> Progress:
        return Progress(self._batch, len(self._taught), len(self.catalogue.types))

    @property
    def taught(self) -> tuple[str, ...]:
        return tuple(t.id for t in self.catalogue if t.id in self._taught)

    @property
    def missing(self) -> tuple[str, ...]:
        """Tile types not taught yet, in catalogue order."""
        return tuple(t.id for t in self.catalogue if t.id not in self._taught)

    def plan(self) -> dict[Cell, str]:
        """The tile types to lay for the next batch: cell (row, col) -> tile id."""
        return dict(zip(CELLS, self.missing[: self.batch_size], strict=False))

    @property
    def step(self) -> Step:
        if not self._tiles_done and self.missing:
            plan = self.plan()
            return Step(
                StepKind.TILES,
                f"Batch {self._batch}: lay these {len(plan)} tile types on the display mat, "
                "one per cell, upright (palms pointing to the mat's north), then take a picture.",
                batch=self._batch,
                plan=plan,
            )
        if self._ship is None:
            return Step(
                StepKind.SHIP,
                "Clear the mat and lay the explorer ship on it alone, in the lane on the north "
                "side with its bow pointing east, then take a picture.",
            )
        for side in self.board_sides:
            if side not in self._boards and side not in self._skipped:
                layout = self.catalogue.board(side)
                return Step(
                    StepKind.BOARD,
                    f"Lay an empty player board, {side} side up ({layout.rows} x {layout.cols}), "
                    "inside one seat's four markers, then take a picture.",
                    side=side,
                )
        return Step(StepKind.DONE, "Everything is taught: write the pack.")

    # frames --------------------------------------------------------------------------------

    def look(self, frame: Image) -> BatchView | PictureView:
        """Analyse a frame for the current step (TeachError when it cannot be used)."""
        step = self.step
        if step.kind is StepKind.TILES:
            return self._look_batch(frame, step)
        if step.kind is StepKind.SHIP:
            mat = _locate_mat(frame, self.tile_mm, self.vision, self.config)
            picture, size = _ship_picture(mat, self.config)
            return PictureView(StepKind.SHIP, picture, size)
        if step.kind is StepKind.BOARD:
            return self._look_board(frame, step.side)
        raise TeachError("everything is taught already: no more pictures are needed")

    def _look_batch(self, frame: Image, step: Step) -> BatchView:
        mat = _locate_mat(frame, self.tile_mm, self.vision, self.config)
        cells: dict[Cell, CellView] = {}
        squares = {c: _find_tile(mat, mat.geometry.cell_centre(*c), self.config) for c in CELLS}
        found_squares = [q.to_mm for q in squares.values() if q.found]
        for cell, square in squares.items():
            centre = mat.geometry.cell_centre(*cell)
            occupied = square.found or _occupied(mat, centre, self.config)
            picture = _tile_picture(mat, square.to_mm, self.config)
            planned = step.plan.get(cell)
            # Only a tile whose four edges were found gets the planned type by default; a
            # shadow or a tile seen unclearly waits for the player's answer.
            suggestion = CellAnswer(planned) if square.found and planned else None
            again = ""
            if square.found:
                others = [m for m in found_squares if m is not square.to_mm]
                again = _worth_again(mat, square.to_mm, others, picture, self.config)
            cells[cell] = CellView(cell, occupied, picture, suggestion, square.found, again)
        warnings = []
        clear = sum(v.found for v in cells.values())
        if clear != len(step.plan):
            warnings.append(f"{clear} tiles seen clearly on the mat, {len(step.plan)} asked for")
        for cell, view in cells.items():
            if view.occupied and not view.found:
                warnings.append(
                    f"{cell_name(cell)}: something lies there but its edges are "
                    "not clear; name its type to keep it"
                )
            elif view.again:
                warnings.append(
                    f"{cell_name(cell)}: this picture is worth taking again: {view.again}"
                )
        return BatchView(step.batch, cells, tuple(warnings), _bgr(frame))

    def _look_board(self, frame: Image, side: str) -> PictureView:
        frame = _bgr(frame)
        layout = self.catalogue.board(side)
        markers = detect_markers(_grey(frame), self.vision.markers)
        poses: list[tuple[int, AreaPose]] = []
        for seat in kit.SEATS:
            geo = kit.SeatGeometry(seat, layout.rows, layout.cols, self.tile_mm)
            if not any(i in markers for i in geo.marker_ids):
                continue
            try:
                poses.append((seat, locate_seat(markers, geo, self.vision.areas)))
            except BoardNotFound:
                continue
        if not poses:
            raise TeachError(
                "no seat's markers are seen well enough: lay the board inside a seat's four markers"
            )
        seat, pose = self._board_seat(frame, poses, layout.rows, layout.cols)
        geo = kit.SeatGeometry(seat, layout.rows, layout.cols, self.tile_mm)
        size = (layout.cols * geo.pitch, layout.rows * geo.pitch)
        n = max(128, round(size[0] * self.config.board_px_per_mm))
        m = pose.homography @ _picture_matrix(n, size)
        rows = round(n * size[1] / size[0])
        picture = _warp(frame, m, (n, rows))
        return PictureView(StepKind.BOARD, picture, size, side, seat)

    def _board_seat(
        self, frame: Image, poses: list[tuple[int, AreaPose]], rows: int, cols: int
    ) -> tuple[int, AreaPose]:
        """The seat the board lies in: of the seats whose markers are seen, the one whose
        grid looks least like the bare table around the kit (colour histograms); asks (a
        TeachError) when no seat, or more than one, holds something unlike the table."""
        table = _bare_table(frame, [pose for _, pose in poses], self.tile_mm, self.vision)
        if table is None:
            return poses[0] if len(poses) == 1 else self._ask_for_one_seat(poses)
        unlike = []
        for seat, pose in poses:
            geo = kit.SeatGeometry(seat, rows, cols, self.tile_mm)
            grid = _board_grid(frame, pose, geo, self.config)
            unlike.append((_histogram_distance(grid, table), seat, pose))
        boards = [u for u in unlike if u[0] >= self.config.board_unlike_table]
        if len(boards) == 1:
            return boards[0][1], boards[0][2]
        if not boards:
            raise TeachError(
                "no board is seen inside a seat's markers (seat "
                + ", ".join(str(s) for _, s, _ in unlike)
                + " looks like the bare table): lay the empty board inside one seat's markers"
            )
        return self._ask_for_one_seat([(s, p) for _, s, p in boards])

    @staticmethod
    def _ask_for_one_seat(poses: list[tuple[int, AreaPose]]) -> tuple[int, AreaPose]:
        seats = " and ".join(str(s) for s, _ in poses)
        raise TeachError(
            f"something lies at seats {seats}: leave the empty board at one seat only and "
            "take the picture again"
        )

    # answers -------------------------------------------------------------------------------

    def accept(
        self, view: BatchView | PictureView, answers: Mapping[Cell, CellAnswer | None] | None = None
    ) -> None:
        """Keep what `view` shows. For a batch, `answers` overrides the suggestions per cell
        (None: nothing there, leave it out)."""
        step = self.step
        if isinstance(view, BatchView):
            if step.kind is not StepKind.TILES or view.batch != step.batch:
                raise TeachError("this picture belongs to another step")
            self._accept_batch(view, answers or {})
        elif view.kind is StepKind.SHIP and step.kind is StepKind.SHIP:
            self._ship = view.picture
        elif view.kind is StepKind.BOARD and step.kind is StepKind.BOARD and view.side == step.side:
            self._boards[view.side] = view.picture
        else:
            raise TeachError("this picture belongs to another step")

    def _accept_batch(self, view: BatchView, answers: Mapping[Cell, CellAnswer | None]) -> None:
        unknown_cells = [c for c in answers if c not in view.cells]
        if unknown_cells:
            raise TeachError(f"there is no display cell {unknown_cells[0]}")
        chosen: dict[Cell, CellAnswer] = {}
        for cell, cv in view.cells.items():
            answer = answers.get(cell, cv.suggestion)
            if answer is None:
                continue
            if answer.tile_id not in self.catalogue:
                raise TeachError(f"{answer.tile_id!r} is not a tile type of {self.catalogue.name}")
            if answer.rotation not in ROTATIONS:
                raise TeachError(f"rotation must be 0, 90, 180 or 270, not {answer.rotation}")
            chosen[cell] = answer
        ids = [a.tile_id for a in chosen.values()]
        twice = next((i for i in ids if ids.count(i) > 1), None)
        if twice is not None:
            cells = [c for c, a in chosen.items() if a.tile_id == twice]
            raise TeachError(
                f"{twice} is given for two cells ({_cell_name(cells[0])} and "
                f"{_cell_name(cells[1])}); lay one copy of each type"
            )
        for cell, answer in chosen.items():
            picture = view.cells[cell].picture
            self._taught[answer.tile_id] = np.ascontiguousarray(
                np.rot90(picture, k=answer.rotation // 90)
            )
        if view.frame is not None:
            truth = {cell: CellRead(a.tile_id, a.rotation) for cell, a in chosen.items()}
            truth.update(
                {
                    cell: EMPTY
                    for cell, cv in view.cells.items()
                    if cell not in chosen and not cv.occupied
                }
            )
            self._frames.append((view.frame, truth))
        self._batch += 1

    @property
    def frames(self) -> list[tuple[Image, dict[Cell, CellRead]]]:
        """The accepted batch frames, each with what lies in its display cells (the tiles
        confirmed, and empty where nothing lies): a table's lessons (vision.box.lessons)."""
        return list(self._frames)

    def stop_tiles(self) -> None:
        """End the tile batches now; untaught types are left out of the pack."""
        if not self._taught:
            raise TeachError("teach at least one tile before moving on")
        self._tiles_done = True

    def skip(self) -> None:
        """Leave out the current board side (any side but the front)."""
        step = self.step
        if step.kind is not StepKind.BOARD or step.side == "front":
            raise TeachError("only an optional board side can be skipped")
        self._skipped.add(step.side)

    # the pack ------------------------------------------------------------------------------

    def draft(self) -> PackDraft:
        """The pack as taught (TeachError while a step is still open)."""
        step = self.step
        if step.kind is not StepKind.DONE:
            raise TeachError(f"teaching is not finished: {step.instructions}")
        assert self._ship is not None
        tiles = {t.id: (t, self._taught[t.id]) for t in self.catalogue if t.id in self._taught}
        return PackDraft(
            self.name, self.tile_mm, tiles, self._ship, dict(self._boards), self.catalogue
        )

    def write(self, out_dir: str | Path) -> Path:
        """Write the pack (docs/formats.md) into `out_dir`, whole or not at all."""
        return write_pack(self.draft(), out_dir)


def _cell_name(cell: Cell) -> str:
    """A display cell as the player sees it: column a-d from west, row 1-4 from north."""
    return f"{'abcd'[cell[1]]}{cell[0] + 1}"


def cell_name(cell: Cell) -> str:
    """A display cell's short name, e.g. (2, 1) -> "b3"."""
    return _cell_name(cell)


def pack_document(draft: PackDraft) -> dict[str, Any]:
    """pack.toml's content for a draft."""
    doc: dict[str, Any] = {"name": draft.name, "tile_mm": _number(draft.tile_mm)}
    doc["tile"] = [
        {"id": t.id, **t.meaning.to_json(), "count": t.count, "image": f"tiles/{t.id}.png"}
        for t, _ in draft.tiles.values()
    ]
    doc["ship"] = {"image": "pieces/ship.png"}
    doc["board"] = {}
    for side in draft.boards:
        table = draft.catalogue.board(side).to_json()
        table["image"] = f"boards/{side}.png"
        doc["board"][side] = table
    return doc


def _number(value: float) -> int | float:
    return int(value) if float(value).is_integer() else value


def _png(path: Path, image: Image) -> None:
    ok, data = cv2.imencode(".png", image)
    if not ok:
        raise TeachError(f"{path.name} could not be encoded")
    path.write_bytes(data.tobytes())


PACK_DIRS = ("tiles", "pieces", "boards")


def check_out_dir(out_dir: str | Path) -> Path:
    """Refuse an output folder that holds anything but an earlier pack (checked before a
    session starts and again before writing)."""
    out = Path(out_dir)
    if out.exists():
        if not out.is_dir():
            raise TeachError(f"{out} is a file; give a folder for the pack")
        strangers = sorted(p.name for p in out.iterdir() if p.name not in (PACK_FILE, *PACK_DIRS))
        if strangers:
            raise TeachError(
                f"{out} already holds other files ({strangers[0]}); give a new or empty folder"
            )
    parent = out.absolute().parent
    if not parent.is_dir():
        raise TeachError(f"{parent} does not exist")
    return out


def write_pack(draft: PackDraft, out_dir: str | Path) -> Path:
    """Write `draft` as a tile pack directory; an earlier pack there is replaced."""
    out = check_out_dir(out_dir)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}-", dir=out.absolute().parent))
    try:
        for sub in PACK_DIRS:
            (tmp / sub).mkdir()
        for tile_type, picture in draft.tiles.values():
            _png(tmp / "tiles" / f"{tile_type.id}.png", picture)
        _png(tmp / "pieces" / "ship.png", draft.ship)
        for side, picture in draft.boards.items():
            _png(tmp / "boards" / f"{side}.png", picture)
        (tmp / PACK_FILE).write_text(tomli_w.dumps(pack_document(draft)), "utf-8")
        os.chmod(tmp, 0o755)
        swap_into_place(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return out
