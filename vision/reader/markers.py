"""Finding the table kit's ArUco markers in a grey frame.

`detect_markers` runs OpenCV's ArucoDetector (dictionary vision.kit.MARKER_DICT) on a
reduced copy of the frame with one threshold window (quick), falls back to OpenCV's full
range of windows, a contrast-enhanced (CLAHE) copy and the full-resolution frame when that
finds nothing, and then places every corner to a fraction of a pixel by fitting straight
lines to the four sides of the marker's black square in the full frame (robust to blur and
to the half-pixel bias of the detector's own corners). `recover_markers` looks again, at
full resolution and enhanced, where an area's other markers say a missing one must be
(glare, a shadow, a finger on its edge). Pixel coordinates follow OpenCV: the centre of
pixel (x, y) is at (x, y).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from concurrent.futures import Executor
from dataclasses import dataclass
from functools import cache

import cv2
import numpy as np
from numpy.typing import NDArray

from vision import kit
from vision.config import MarkerConfig

FloatArray = NDArray[np.float64]
Gray = NDArray[np.uint8]

# The marker's black square is 6 modules wide (4 x 4 data bits and a 1-module border).
_MODULES = 6


@dataclass(frozen=True, slots=True, eq=False)
class MarkerSighting:
    """One marker seen in the frame.

    `corners` is a (4, 2) array of image points in the marker's own order: north-west,
    north-east, south-east, south-west (its printed top edge faces its area's north).
    `alternatives` holds further sightings of the same id elsewhere in the frame (a second
    copy of a sticker); which one belongs to the kit is decided from the area's geometry.
    """

    id: int
    corners: FloatArray
    refined: bool = False
    alternatives: tuple[FloatArray, ...] = ()

    @property
    def centre(self) -> FloatArray:
        """The intersection of the diagonals (the image of the square's centre)."""
        return _diagonal_intersection(self.corners)

    @property
    def side_px(self) -> float:
        """The mean length of the four sides in pixels."""
        return marker_side_px(self.corners)


def detect_markers(
    gray: Gray, config: MarkerConfig | None = None, threads: Executor | None = None
) -> dict[int, MarkerSighting]:
    """Every kit marker (ids 0..config.max_marker_id) seen in a grey frame, by id (the
    frame's strips looked at on `threads` beside this one when given)."""
    config = config or MarkerConfig()
    if gray.ndim != 2 or gray.dtype != np.uint8:
        raise ValueError("detect_markers needs a single-channel 8-bit grey frame")
    height, width = gray.shape
    found: dict[int, list[FloatArray]] = {}
    scale = 1.0
    if config.detect_max_side_px and max(height, width) > config.detect_max_side_px:
        scale = config.detect_max_side_px / max(height, width)
    small: Gray = (
        gray
        if scale == 1.0
        else np.asarray(
            cv2.resize(gray, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA), np.uint8
        )
    )
    for sightings in _detect_strips(small, 1.0 / scale, config, threads):
        _merge(found, sightings, config)
    if config.fallback_passes and not found:
        to_full = 1.0 / scale
        passes: list[tuple[Gray, float]] = [(small, to_full), (_enhance(small, config), to_full)]
        if scale < 1.0:
            passes += [(gray, 1.0), (_enhance(gray, config), 1.0)]
        for image, to_full in passes:
            _merge(found, _detect_once(image, to_full, _detector(0)), config)
            if found:
                break
    return _sightings(gray, found, config)


def recover_markers(
    gray: Gray,
    markers: Mapping[int, MarkerSighting],
    predicted: Mapping[int, FloatArray],
    config: MarkerConfig | None = None,
) -> dict[int, MarkerSighting]:
    """`markers` plus any missing marker found where `predicted` (id -> 4 x 2 corners) says.

    Each missing marker is looked for in a small window of the full-resolution frame, as it
    is and contrast-enhanced; only that id, near that place, is accepted.
    """
    config = config or MarkerConfig()
    out = dict(markers)
    height, width = gray.shape
    for marker_id, corners in predicted.items():
        if marker_id in out or not 0 <= marker_id <= config.max_marker_id:
            continue
        side = marker_side_px(corners)
        centre = corners.mean(axis=0)
        reach = config.recover_window_sides * side / 2
        x0, y0 = (int(max(0, np.floor(v - reach))) for v in centre)
        x1 = int(min(width, np.ceil(centre[0] + reach)))
        y1 = int(min(height, np.ceil(centre[1] + reach)))
        if x1 - x0 < side / 2 or y1 - y0 < side / 2:
            continue  # outside the frame
        window: Gray = np.ascontiguousarray(gray[y0:y1, x0:x1])
        # Enlarge tiny windows so a module spans a few pixels.
        zoom = max(1.0, 24.0 / max(side, 1.0))
        if zoom > 1.0:
            window = np.asarray(
                cv2.resize(window, None, fx=zoom, fy=zoom, interpolation=cv2.INTER_CUBIC), np.uint8
            )
        # Candidates much smaller than the marker are not it: leaving them out early keeps
        # the enhanced copy's noise (a hand over the sticker) from costing many milliseconds.
        min_perimeter = 4 * config.recover_min_side_share * side * zoom
        detector = _detector(0, _perimeter_rate(min_perimeter, max(window.shape)))
        for image in (window, _enhance(window, config)):
            hits = [
                pts / zoom + (0.5 / zoom - 0.5) + np.array([x0, y0])
                for i, pts in _detect_once(image, 1.0, detector)
                if i == marker_id
            ]
            hits = [
                h
                for h in hits
                if np.linalg.norm(h.mean(axis=0) - centre) <= config.recover_max_offset * side
            ]
            if hits:
                found = {marker_id: [hits[0]]}
                out.update(_sightings(gray, found, config))
                break
    return out


# -- detection passes --------------------------------------------------------------------


# OpenCV's own least marker perimeter, as a share of the image's longer side.
_MIN_PERIMETER_RATE = 0.03


def _perimeter_rate(perimeter_px: float, image_side_px: int) -> float:
    """A least perimeter as OpenCV's share of the image's longer side (rounded down to a
    hundredth, so that few detectors are made)."""
    rate = math.floor(100 * perimeter_px / max(image_side_px, 1)) / 100
    return max(_MIN_PERIMETER_RATE, rate)


@cache
def _detector(
    window_px: int, min_perimeter_rate: float = _MIN_PERIMETER_RATE, worker: int = 0
) -> cv2.aruco.ArucoDetector:
    """A detector thresholding with one window size, or OpenCV's range of them (0), that
    passes over candidates whose perimeter is below `min_perimeter_rate` of the image's
    longer side (`worker`: one detector per thread that uses them)."""
    dictionary = cv2.aruco.getPredefinedDictionary(getattr(cv2.aruco, kit.MARKER_DICT))
    params = cv2.aruco.DetectorParameters()
    params.minMarkerPerimeterRate = min_perimeter_rate
    # Corners are refined on the full frame by line fits (below); the detector's own
    # sub-pixel step would work on the reduced copy.
    params.cornerRefinementMethod = cv2.aruco.CORNER_REFINE_NONE
    if window_px:
        params.adaptiveThreshWinSizeMin = window_px
        params.adaptiveThreshWinSizeMax = window_px
    return cv2.aruco.ArucoDetector(dictionary, params)


def _detect_once(
    image: Gray, to_full: float, detector: cv2.aruco.ArucoDetector
) -> list[tuple[int, FloatArray]]:
    corners, ids, _rejected = detector.detectMarkers(image)
    id_list: list[int] = [] if ids is None else [int(i) for i in np.asarray(ids).ravel()]
    out: list[tuple[int, FloatArray]] = []
    for quad, marker_id in zip(corners, id_list, strict=True):
        pts = np.asarray(quad, dtype=np.float64).reshape(4, 2)
        # Map pixel centres of the reduced copy back to the full frame.
        pts = (pts + 0.5) * to_full - 0.5
        out.append((int(marker_id), pts))
    return out


def _detect_strips(
    image: Gray, to_full: float, config: MarkerConfig, threads: Executor | None
) -> list[list[tuple[int, FloatArray]]]:
    """The first pass (_detect_once with one window size) on overlapping strips of the
    image, on `threads` beside this one when given: the strips' sightings, in order."""
    height, width = image.shape
    strips = max(1, min(config.fast_strips, 4))
    across = width < height  # strips cut across the shorter side
    length = width if across else height
    edges = np.linspace(0, length, strips + 1).round().astype(int)
    half = config.fast_strip_overlap_px // 2
    jobs = []
    for k in range(strips):
        lo, hi = max(0, int(edges[k]) - half), min(length, int(edges[k + 1]) + half)
        strip = image[:, lo:hi] if across else image[lo:hi]
        jobs.append((k, lo, np.ascontiguousarray(strip)))

    def look(job: tuple[int, int, Gray]) -> list[tuple[int, FloatArray]]:
        k, lo, strip = job
        # Each thread its own detector (one is not safe to share while it looks).
        seen = _detect_once(strip, to_full, _detector(config.fast_window_px, worker=k))
        shift = np.array([lo, 0.0] if across else [0.0, lo]) * to_full
        return [(marker_id, corners + shift) for marker_id, corners in seen]

    if strips == 1 or threads is None:
        return [look(job) for job in jobs]
    others = [threads.submit(look, job) for job in jobs[1:]]
    return [look(jobs[0]), *(job.result() for job in others)]


def _enhance(gray: Gray, config: MarkerConfig) -> Gray:
    clahe = cv2.createCLAHE(
        clipLimit=config.clahe_clip_limit,
        tileGridSize=(config.clahe_tile_grid, config.clahe_tile_grid),
    )
    return np.asarray(clahe.apply(gray), dtype=np.uint8)


def _merge(
    found: dict[int, list[FloatArray]],
    new: Iterable[tuple[int, FloatArray]],
    config: MarkerConfig,
) -> None:
    for marker_id, corners in new:
        if not 0 <= marker_id <= config.max_marker_id:
            continue
        side = marker_side_px(corners)
        if side < config.min_side_px:
            continue
        known = found.setdefault(marker_id, [])
        centre = corners.mean(axis=0)
        if any(np.linalg.norm(k.mean(axis=0) - centre) < 0.5 * marker_side_px(k) for k in known):
            continue  # the same sticker seen again by another pass
        known.append(corners)


def _sightings(
    gray: Gray, found: Mapping[int, list[FloatArray]], config: MarkerConfig
) -> dict[int, MarkerSighting]:
    ids = sorted(found)
    quads = [q for i in ids for q in found[i]]
    refined: list[FloatArray | None] = (
        _refine_edges(gray, np.stack(quads), config)
        if quads and config.edge_refine
        else [None] * len(quads)
    )
    once = [marker_side_px(found[i][0]) for i in ids if len(found[i]) == 1]
    typical = float(np.median(once)) if once else None
    out: dict[int, MarkerSighting] = {}
    k = 0
    for marker_id in ids:
        options: list[tuple[FloatArray, bool]] = []
        for quad in found[marker_id]:
            better = refined[k]
            k += 1
            options.append((quad, False) if better is None else (better, True))
        (first, ok), *rest = _likeliest_first(options, typical)
        out[marker_id] = MarkerSighting(marker_id, first, ok, tuple(c for c, _ in rest))
    return out


def _likeliest_first(
    options: list[tuple[FloatArray, bool]], typical: float | None
) -> list[tuple[FloatArray, bool]]:
    """Sightings of one id, the one nearest the typical marker's size first: a player's
    board of 4 x 4 cells in its dark outline can pass for a marker many times a sticker's
    size, and whatever takes a marker's first sighting should take the sticker."""
    if len(options) < 2 or typical is None:
        return options
    return sorted(options, key=lambda o: abs(math.log(marker_side_px(o[0]) / typical)))


def marker_side_px(corners: FloatArray) -> float:
    """The mean length of a quad's four sides (4 x 2 image points) in pixels."""
    d = corners[[1, 2, 3, 0]] - corners
    return float(np.mean(np.hypot(d[:, 0], d[:, 1])))


# -- sub-pixel corners from the sides of the square ---------------------------------------


def _refine_edges(gray: Gray, quads: FloatArray, config: MarkerConfig) -> list[FloatArray | None]:
    """Corners of each quad (Q, 4, 2) as intersections of lines fitted to its four sides.

    Along each side, samples (away from the corners) look across the side for the rise from
    the black square to the white paper and place it to a fraction of a pixel; a line is
    fitted through them (total least squares, one round of outlier removal). A quad whose
    sides cannot all be fitted keeps the detector's corners (None).
    """
    q = len(quads)
    n = config.edge_samples_per_side
    step = 0.25
    sides = np.linalg.norm(np.roll(quads, -1, axis=1) - quads, axis=2).mean(axis=1)  # (Q,)
    reach = np.maximum(1.5, config.edge_search_modules * sides / _MODULES)  # (Q,)
    m = int(np.ceil(reach.max() / step))
    steps = np.arange(-m, m + 1) * step  # (M,)
    ts = np.linspace(0.15, 0.85, n)

    starts = quads
    ends = np.roll(quads, -1, axis=1)
    direction = ends - starts  # (Q, 4, 2)
    unit = direction / np.linalg.norm(direction, axis=2, keepdims=True)
    normal = np.stack([unit[..., 1], -unit[..., 0]], axis=2)
    centre = quads.mean(axis=1, keepdims=True)
    flip = np.sum(((starts + ends) / 2 - centre) * normal, axis=2) < 0
    normal[flip] *= -1  # outwards: from the black square to the white paper

    base = starts[:, :, None, :] + ts[None, None, :, None] * direction[:, :, None, :]  # Q,4,n,2
    # The profiles' points (Q, 4, n, M), x and y apart (a last axis of 2 is slow to sweep).
    xs, ys = (base[..., k, None] + steps * normal[:, :, None, None, k] for k in (0, 1))
    rows = q * 4 * n
    profile = _sample(gray, xs.reshape(rows, -1), ys.reshape(rows, -1))
    grad = np.diff(profile, axis=1)  # (rows, M - 1): positive from dark to bright
    # Only within each quad's own reach.
    mid = (steps[:-1] + steps[1:]) / 2
    within = np.abs(mid)[None, :] <= np.repeat(reach, 4 * n)[:, None]
    grad = np.where(within, grad, -np.inf)
    k = np.argmax(grad, axis=1)
    r = np.arange(rows)
    peak = grad[r, k]
    # The edge is the centroid of the rise where it is at least half its steepest, within
    # 3 px: unbiased for a blurred edge and for a sharp one (whose bilinear profile rises
    # evenly over a pixel, so the steepest step alone is ambiguous by half a pixel).
    half = round(3.0 / step)
    window = np.arange(-half, half + 1)
    cols = np.clip(k[:, None] + window[None, :], 0, grad.shape[1] - 1)
    g = grad[r[:, None], cols]
    g = np.where(np.isfinite(g), g, 0.0)
    g = np.where(g >= 0.5 * peak[:, None], g, 0.0)
    total = g.sum(axis=1)
    centroid = (g * mid[cols]).sum(axis=1) / np.where(total > 0, total, 1.0)
    inner = (k > 0) & (k < grad.shape[1] - 1) & np.isfinite(grad[r, np.maximum(k - 1, 0)])
    inner &= np.isfinite(grad[r, np.minimum(k + 1, grad.shape[1] - 1)])
    where = np.where(total > 0, centroid, mid[k])  # offset along the normal, px
    peak_q = peak.reshape(q, 4 * n)
    median = np.median(np.where(np.isfinite(peak_q), peak_q, 0.0), axis=1)
    strong = (peak_q > np.maximum(4.0, 0.35 * median)[:, None]).reshape(rows)
    good = (strong & inner).reshape(q, 4, n)
    edge = base + where.reshape(q, 4, n)[..., None] * normal[:, :, None, :]  # Q,4,n,2

    point, line_dir, spread = _fit_lines(edge, good)
    fitted = (spread <= config.edge_max_scatter_px) & (good.sum(axis=2) >= 4)  # (Q, 4)
    # Corner c joins side c - 1 (ending there) and side c (starting there).
    corners, found = _intersect_all(
        np.roll(point, 1, axis=1), np.roll(line_dir, 1, axis=1), point, line_dir
    )
    near = np.linalg.norm(corners - quads, axis=2) <= reach[:, None] + 1.0
    ok = (fitted & found & near).all(axis=1)
    return [corners[i] if ok[i] else None for i in range(q)]


def _sample(gray: Gray, x: FloatArray, y: FloatArray) -> FloatArray:
    """Bilinear samples of the frame at (x, y) (edges repeated), not rounded to grey levels."""
    h, w = gray.shape
    x = np.clip(x, 0, w - 1)
    y = np.clip(y, 0, h - 1)
    x0 = np.clip(np.floor(x).astype(np.intp), 0, max(w - 2, 0))
    y0 = np.clip(np.floor(y).astype(np.intp), 0, max(h - 2, 0))
    fx = x - x0
    fy = y - y0
    # The four neighbours by their index in the flattened frame (one gather each).
    flat = gray.reshape(-1)
    at = y0 * w + x0
    right = 1 if w > 1 else 0
    down = w if h > 1 else 0
    a = flat[at].astype(np.float64)
    b = flat[at + right].astype(np.float64)
    c = flat[at + down].astype(np.float64)
    d = flat[at + down + right].astype(np.float64)
    return np.asarray((a * (1 - fx) + b * fx) * (1 - fy) + (c * (1 - fx) + d * fx) * fy)


def _fit_lines(
    points: FloatArray, good: NDArray[np.bool_]
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Weighted total-least-squares lines through (..., n, 2) points: point, direction, rms.

    One round drops samples further than 2.5 times the rms (at least 0.3 px) and refits.
    """
    w = good.astype(np.float64)
    for round_ in range(2):
        total = np.maximum(w.sum(axis=-1), 1e-9)
        mean = (points * w[..., None]).sum(axis=-2) / total[..., None]
        d = points - mean[..., None, :]
        sxx = (w * d[..., 0] ** 2).sum(axis=-1) / total
        syy = (w * d[..., 1] ** 2).sum(axis=-1) / total
        sxy = (w * d[..., 0] * d[..., 1]).sum(axis=-1) / total
        angle = 0.5 * np.arctan2(2 * sxy, sxx - syy)
        direction = np.stack([np.cos(angle), np.sin(angle)], axis=-1)
        normal = np.stack([-direction[..., 1], direction[..., 0]], axis=-1)
        dist = (d * normal[..., None, :]).sum(axis=-1)
        spread = np.sqrt((w * dist**2).sum(axis=-1) / total)
        if round_ == 0:
            w = w * (np.abs(dist) <= np.maximum(2.5 * spread, 0.3)[..., None])
    return mean, direction, spread


def _intersect_all(
    p: FloatArray, u: FloatArray, q: FloatArray, v: FloatArray
) -> tuple[FloatArray, NDArray[np.bool_]]:
    """`_intersect` of many pairs of lines (..., 2): the points and whether each exists."""
    det = u[..., 0] * (-v[..., 1]) - (-v[..., 0]) * u[..., 1]
    found = np.abs(det) >= 1e-6
    rhs = q - p
    t = (rhs[..., 0] * (-v[..., 1]) - (-v[..., 0]) * rhs[..., 1]) / np.where(found, det, 1.0)
    return np.asarray(p + t[..., None] * u, np.float64), found


def _intersect(p: FloatArray, u: FloatArray, q: FloatArray, v: FloatArray) -> FloatArray | None:
    det = u[0] * (-v[1]) - (-v[0]) * u[1]
    if abs(det) < 1e-6:
        return None
    rhs = q - p
    t = (rhs[0] * (-v[1]) - (-v[0]) * rhs[1]) / det
    return np.asarray(p + t * u, dtype=np.float64)


def _diagonal_intersection(corners: FloatArray) -> FloatArray:
    a, b, c, d = corners
    p = _intersect(a, c - a, b, d - b)
    return np.asarray(corners.mean(axis=0), dtype=np.float64) if p is None else p
