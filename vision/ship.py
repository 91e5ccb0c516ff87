"""Where the explorer ship stands in the ship lane: position 0..15 (docs/table-kit.md) or None.

The ship is taught by the pack's picture of it seen from above (docs/formats.md); its size on the
table is not known beforehand, nor its heading. The display's picture (north up, the mat's
active area, any scale) is shrunk to `ShipConfig.px_per_mm`. The lane is white paper with
thin grey lines, so at each of the 16 positions the window around the nominal ship centre is
scored by how much of the lane proper (clear of tiles lying over its inner line and of the
corner markers) is not paper; the fullest few that an arm does not spread over are searched
with the ship's picture laid on white with a margin of paper round it (sized from how much is
not paper, turned along its long axis) by normalised cross-correlation. The position is named
when the best match is good and clearly better than the best at any other position; if not,
the best two are searched again at every length (a hand beside the ship spoils the size
guess). Still nothing, or only a fair match, the windows passed over for an arm (but for
those it covers wholly) are searched at every length and heading: a very good match there
is the ship (beside the arm), and a fair match elsewhere must beat them too; otherwise None
(a hand over the lane, no ship, or a fingertip as like the ship as anything else).
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass
from functools import lru_cache

import cv2
import numpy as np
from numpy.typing import NDArray

from vision import kit
from vision.areas import AreaPose, display_area
from vision.config import ShipConfig, VisionConfig
from vision.pack import Pack
from vision.tilemodel import Image, TileModel

Float = NDArray[np.float32]

__all__ = ["ShipSighting", "locate_ship", "read_ship", "read_ship_in_frame"]


@dataclass(frozen=True, slots=True)
class ShipSighting:
    """The ship's position (None when not seen), the match score and the runner-up's."""

    position: int | None
    score: float
    runner_up: float
    scores: tuple[float, ...]  # best match per position (0 where not searched)


def read_ship(
    area: Image, model: TileModel, geometry: kit.DisplayGeometry, config: ShipConfig | None = None
) -> tuple[int | None, float]:
    """The ship's lane position in a picture of the display area (None when not seen or
    ambiguous) and a confidence 0..1.

    `area`: the display mat's active area, north up, square, side 2 * half_extent mm, centred
    on the display's centre (vision.areas.display_area), at any scale. For a whole camera
    frame and the display's pose, see read_ship_in_frame."""
    sighting = locate_ship(area, model.ship, geometry, config)
    if sighting.position is None:
        return None, 0.0
    return sighting.position, float(np.clip(sighting.score, 0.0, 1.0))


def read_ship_in_frame(
    frame: Image, display: AreaPose, pack: Pack, config: VisionConfig | None = None
) -> int | None:
    """The ship's position in a whole camera frame, given the display's pose."""
    config = config or VisionConfig()
    geometry = display.geometry
    if not isinstance(geometry, kit.DisplayGeometry):
        raise TypeError("read_ship_in_frame needs the display's pose")
    area = display_area(frame, display, config.ships.px_per_mm)
    return locate_ship(area, pack.ship, geometry, config.ships).position


def _over_white(ship: Image) -> tuple[Float, Float]:
    """The ship's picture laid on white (float BGR) and its opacity (0..1)."""
    if ship.ndim == 3 and ship.shape[2] == 4:
        alpha = ship[:, :, 3].astype(np.float32) / 255.0
        colour = ship[:, :, :3].astype(np.float32)
    else:
        alpha = np.ones(ship.shape[:2], np.float32)
        colour = ship.astype(np.float32).reshape(*ship.shape[:2], -1)[:, :, :3]
    laid = colour * alpha[:, :, None] + 255.0 * (1.0 - alpha[:, :, None])
    return laid.astype(np.float32), alpha


@lru_cache(maxsize=32)
def _laid(digest: bytes, ship_key: ShipKey) -> tuple[Float, Float, float]:
    """The ship (by digest) laid on white, its opacity and its mean opacity (made once)."""
    laid, alpha = _over_white(_SHIPS[digest])
    laid.flags.writeable = False  # shared by the cache
    alpha.flags.writeable = False
    return laid, alpha, float(alpha.mean())


@lru_cache(maxsize=64)
def _sized(digest: bytes, ship_key: ShipKey, length_px: int) -> tuple[Float, Float]:
    """The ship laid on white, longer side `length_px`, in the middle of a square of white
    wide enough to turn it, and its opacity there (one per length, shared by every turn)."""
    laid, alpha, _share = _laid(digest, ship_key)
    h, w = laid.shape[:2]
    scale = length_px / max(h, w)
    size = (max(2, round(w * scale)), max(2, round(h * scale)))
    laid = np.asarray(cv2.resize(laid, size, interpolation=cv2.INTER_AREA), np.float32)
    alpha = np.asarray(cv2.resize(alpha, size, interpolation=cv2.INTER_AREA), np.float32)
    side = math.ceil(math.hypot(*size)) | 1
    canvas = np.full((side, side, 3), 255.0, np.float32)
    mask = np.zeros((side, side), np.float32)
    y0, x0 = (side - size[1]) // 2, (side - size[0]) // 2
    canvas[y0 : y0 + size[1], x0 : x0 + size[0]] = laid
    mask[y0 : y0 + size[1], x0 : x0 + size[0]] = alpha
    canvas.flags.writeable = False  # shared by the cache
    mask.flags.writeable = False
    return canvas, mask


@lru_cache(maxsize=1024)
def _template(
    digest: bytes, ship_key: ShipKey, length_px: int, angle: float, around: int
) -> Float:
    """The ship laid on white, longer side `length_px`, turned `angle` degrees (OpenCV's
    sense), cut to the turned ship and `around` pixels of white round it."""
    canvas, mask = _sized(digest, ship_key, length_px)
    side = canvas.shape[0]
    m = cv2.getRotationMatrix2D(((side - 1) / 2, (side - 1) / 2), angle, 1.0)
    turned = cv2.warpAffine(canvas, m, (side, side), flags=cv2.INTER_LINEAR,
                            borderMode=cv2.BORDER_CONSTANT, borderValue=(255, 255, 255))
    cover = cv2.warpAffine(mask, m, (side, side), flags=cv2.INTER_LINEAR)
    rows = np.flatnonzero(cover.max(axis=1) > 0.05)
    cols = np.flatnonzero(cover.max(axis=0) > 0.05)
    turned = cv2.copyMakeBorder(turned, around, around, around, around, cv2.BORDER_CONSTANT,
                                value=(255, 255, 255))
    r0, r1 = int(rows[0]), int(rows[-1]) + 1 + 2 * around
    c0, c1 = int(cols[0]), int(cols[-1]) + 1 + 2 * around
    return np.ascontiguousarray(turned[r0:r1, c0:c1], np.float32)


ShipKey = tuple[int, ...]
_SHIPS: dict[bytes, Image] = {}


def _ship_digest(ship: Image) -> bytes:
    digest = hashlib.blake2b(ship.tobytes(), digest_size=16).digest()
    if digest not in _SHIPS:
        if len(_SHIPS) > 16:
            _SHIPS.clear()
            _laid.cache_clear()
            _sized.cache_clear()
            _template.cache_clear()
        _SHIPS[digest] = np.array(ship, copy=True)
    return digest


@lru_cache(maxsize=8)
def _lane_mask(n: int, ppm: float, inner: float, outer: float, half: float) -> Float:
    """1 on the lane band (between `inner` and `outer` mm from the centre), 0 elsewhere."""
    t = (np.arange(n) + 0.5) / ppm - half
    yy, xx = np.meshgrid(t, t, indexing="ij")
    ring = np.maximum(np.abs(xx), np.abs(yy))
    out: Float = ((ring > inner) & (ring < outer)).astype(np.float32)
    return out


@lru_cache(maxsize=8)
def _core_mask(n: int, ppm: float, inner: float, corner: float, half: float) -> Float:
    """1 on the lane from `inner` mm from the centre outwards, 0 on the corner squares
    (beyond `corner` both ways) and elsewhere."""
    t = (np.arange(n) + 0.5) / ppm - half
    yy, xx = np.meshgrid(t, t, indexing="ij")
    ring = np.maximum(np.abs(xx), np.abs(yy))
    square = np.minimum(np.abs(xx), np.abs(yy)) > corner
    out: Float = ((ring > inner) & ~square).astype(np.float32)
    return out


def _heading(ink: Float) -> float:
    """The direction (degrees, OpenCV's rotation sense, from the picture's up) of the long
    axis of what is not paper in a window (0..180)."""
    h, w = ink.shape
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float64)
    total = float(ink.sum())
    if total <= 0:
        return 0.0
    mx, my = float((ink * xx).sum()) / total, float((ink * yy).sum()) / total
    cxx = float((ink * (xx - mx) ** 2).sum())
    cyy = float((ink * (yy - my) ** 2).sum())
    cxy = float((ink * (xx - mx) * (yy - my)).sum())
    axis = 0.5 * math.degrees(math.atan2(2 * cxy, cxx - cyy))  # from +x, y down
    # The ship's picture is upright (long axis along y); OpenCV turns counter-clockwise, so
    # an axis at `axis` degrees clockwise from +x is the picture turned by -(axis - 90).
    return (90.0 - axis) % 180.0


def locate_ship(
    area: Image, ship: Image, geometry: kit.DisplayGeometry, config: ShipConfig | None = None
) -> ShipSighting:
    """Find the ship (`ship`: its picture, BGR or BGRA) in the display area picture."""
    cfg = config or ShipConfig()
    if area.ndim != 3 or area.shape[2] != 3 or area.shape[0] != area.shape[1]:
        raise ValueError(f"the display area must be a square colour picture, not {area.shape}")
    side_mm = 2 * geometry.half_extent
    ppm = cfg.px_per_mm
    n = max(16, round(side_mm * ppm))
    ppm = n / side_mm
    small = np.asarray(cv2.resize(area, (n, n), interpolation=cv2.INTER_AREA), np.float32)
    # The paper's local brightness (light and shadows vary across the mat): the brightest
    # nearby, smoothed. A pixel is "not paper" by how much darker or more colourful it is.
    # Per-channel slices: numpy reduces a short last axis slowly (same values as mean/max).
    b, g, r = small[:, :, 0], small[:, :, 1], small[:, :, 2]
    grey = (b + g + r) / 3
    brightest = np.maximum(np.maximum(b, g), r)
    reach = max(3, round(cfg.paper_reach_mm * ppm)) | 1
    paper = cv2.dilate(grey, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (reach, reach)))
    paper = cv2.GaussianBlur(paper, (0, 0), reach / 2)
    darker = np.clip((1.0 - grey / np.maximum(paper, 1.0) - cfg.paper_shade) / cfg.ink_shade, 0, 1)
    chroma = (brightest - np.minimum(np.minimum(b, g), r)) / np.maximum(brightest, 1.0)
    colour = np.clip((chroma - cfg.paper_chroma) / cfg.ink_chroma, 0.0, 1.0)
    ink = np.maximum(darker, colour)  # how much each pixel is not paper

    # Only the lane (and a little over its lines) counts: the grid's tiles are not the ship.
    ink = ink * _lane_mask(n, ppm, geometry.lane_inner - cfg.over_lines_mm,
                           geometry.half_extent + cfg.over_lines_mm, geometry.half_extent)
    # The ship's size and heading come from the lane itself, clear of tiles lying off their
    # place and of the corner squares (the markers): those would count as ship.
    lane_proper = _core_mask(n, ppm, geometry.lane_inner + cfg.tiles_reach_mm,
                             geometry.lane_inner, geometry.half_extent)
    core = ink * lane_proper
    along, across = cfg.window_mm / 2 * ppm, (kit.LANE_MM / 2 + cfg.over_lines_mm) * ppm
    boxes: list[tuple[int, int, int, int]] = []
    fullness = np.zeros(kit.SHIP_POSITIONS)
    spread = np.zeros(kit.SHIP_POSITIONS)
    lane = np.zeros(kit.SHIP_POSITIONS)  # mm² of lane proper in the window
    for p in range(kit.SHIP_POSITIONS):
        cx, cy = geometry.ship_centre(p)
        u = (cx + geometry.half_extent) * ppm - 0.5
        v = (cy + geometry.half_extent) * ppm - 0.5
        hx, hy = (along, across) if (p // 4) % 2 == 0 else (across, along)
        x0, x1 = max(0, round(u - hx)), min(n, round(u + hx) + 1)
        y0, y1 = max(0, round(v - hy)), min(n, round(v + hy) + 1)
        boxes.append((x0, y0, x1, y1))
        fullness[p] = float(core[y0:y1, x0:x1].sum()) / (ppm * ppm)  # mm² not paper
        spread[p] = float(np.count_nonzero(core[y0:y1, x0:x1] > cfg.spread_ink)) / (ppm * ppm)
        lane[p] = float(lane_proper[y0:y1, x0:x1].sum()) / (ppm * ppm)
    # A ship fills part of its window; an arm or a hand across the lane (however pale)
    # spreads over all of it.
    plausible = [int(p) for p in np.argsort(-fullness)
                 if fullness[p] >= cfg.min_area_mm2 and spread[p] <= cfg.max_area_mm2]
    order = plausible[: cfg.positions_searched]
    digest = _ship_digest(ship)
    key = tuple(ship.shape)
    laid, _alpha, ship_share = _laid(digest, key)
    h, w = laid.shape[:2]
    shortest, longest = cfg.min_length_mm * ppm, cfg.max_length_mm * ppm
    scores = np.zeros(kit.SHIP_POSITIONS)
    windows = {p: (small[y0:y1, x0:x1], core[y0:y1, x0:x1])
               for p, (x0, y0, x1, y1) in enumerate(boxes)}
    for p in order:
        # The ship's size from how much of the window is not paper (its picture's share of
        # opaque pixels gives its picture's area).
        area_px = fullness[p] * ppm * ppm
        length = math.sqrt(area_px / max(ship_share, 1e-3) * max(h, w) / min(h, w))
        lengths = [float(np.clip(length * f, shortest, longest)) for f in cfg.length_factors]
        scores[p] = _best_match(windows[p], digest, key, lengths, ppm, cfg)[0]
    position = _decide(scores, cfg)
    # Every length from the shortest to the longest, for the searches below.
    ladder = [min(shortest * cfg.length_ladder_step**i, longest)
              for i in range(cfg.lengths_again)]
    if position is None and ladder:
        # Something beside the ship (a hand, a shadow's edge) adds to what is not paper, so
        # the size guessed from it is too large: the best few are searched again at every
        # length.
        again = [int(p) for p in np.argsort(-scores)[: cfg.positions_again]
                 if scores[p] >= cfg.again_min_score]
        for p in again:
            scores[p] = max(scores[p], _best_match(windows[p], digest, key, ladder, ppm, cfg)[0])
        position = _decide(scores, cfg)
    # The windows passed over for an arm are searched when no position is clearly the
    # ship's, and when the one named matched below armed_min_score: the ship may stand
    # beside the arm, and what was named then is only the best of the rest (an arm's edge,
    # a fingertip).
    weak = position is None or scores[position] < cfg.armed_min_score
    if weak and ladder and cfg.armed_min_score <= 1.0:
        # The ship beside an arm or a hand: the arm's ink sets both the size guess and the
        # long axis, so these windows are searched at every length and every heading (every
        # other step, then the steps either side of the best), and a match there must be
        # far better than an arm's edge or a fingertip ever is.
        armed = [int(p) for p in np.argsort(-fullness)
                 if fullness[p] >= cfg.min_area_mm2 and spread[p] > cfg.max_area_mm2
                 and spread[p] <= cfg.armed_max_cover * lane[p]]
        step = cfg.angle_step_deg
        every = [i * 2 * step for i in range(round(180 / step))]
        armed_scores = np.zeros(kit.SHIP_POSITIONS)
        for p in armed[: cfg.positions_searched]:
            score, length, turn = _best_match(windows[p], digest, key, ladder, ppm, cfg, every)
            near = [(turn - step) % 360.0, (turn + step) % 360.0]
            armed_scores[p] = max(score, _best_match(windows[p], digest, key, [length], ppm,
                                                     cfg, near)[0])
        best = int(np.argmax(armed_scores))
        rivals = np.maximum(scores, armed_scores)
        rivals[best] = 0.0
        if (armed_scores[best] >= cfg.armed_min_score
                and armed_scores[best] - rivals.max() >= cfg.min_margin):
            position = best
        elif position is not None:
            # The position named must still beat the windows beside the arm.
            rivals = armed_scores.copy()
            rivals[position] = 0.0
            if scores[position] - rivals.max() < cfg.min_margin:
                position = None
        scores = np.maximum(scores, armed_scores)
    ranked = np.argsort(-scores)
    score, second = float(scores[ranked[0]]), float(scores[ranked[1]])
    return ShipSighting(position, score, second, tuple(float(s) for s in scores))


def _best_match(
    window: tuple[Float, Float], digest: bytes, key: ShipKey, lengths: list[float],
    ppm: float, cfg: ShipConfig, turns: list[float] | None = None,
) -> tuple[float, float, float]:
    """The best normalised cross-correlation of the ship's picture, at these lengths (px)
    and turned along the long axis of what is not paper (either way, give or take) or by
    `turns` (degrees), with the window (its colour picture and how much each pixel is not
    paper); and the length and the turn that gave it."""
    colour, ink = window
    step = cfg.angle_step_deg
    if turns is None:
        heading = _heading(ink)
        turns = sorted({(round((heading + half + d) / step) * step) % 360.0
                        for half in (0.0, 180.0) for d in cfg.heading_tries_deg})
    around = max(1, round(cfg.paper_around_mm * ppm))
    best = (-1.0, 0.0, 0.0)
    for length in lengths:
        px = max(4, 2 * round(length / 2))  # even lengths: templates are reused
        for turn in turns:
            tpl = _template(digest, key, px, turn, around)
            if tpl.shape[0] > colour.shape[0] or tpl.shape[1] > colour.shape[1]:
                continue
            score = float(cv2.matchTemplate(colour, tpl, cv2.TM_CCOEFF_NORMED).max())
            if score > best[0]:
                best = (score, length, turn)
    return best


def _decide(scores: NDArray[np.float64], cfg: ShipConfig) -> int | None:
    """The position whose match is good and clearly better than any other's, or None."""
    ranked = np.argsort(-scores)
    top, second = int(ranked[0]), float(scores[ranked[1]])
    if scores[top] < cfg.min_score or scores[top] - max(second, 0.0) < cfg.min_margin:
        return None
    return top
