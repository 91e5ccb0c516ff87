"""Where the explorer ship stands in the ship lane: position 0..15 (docs/table-kit.md) or None.

The ship is known only by the pack's picture of it seen from above (docs/formats.md): any size,
any colours, its length on the table not given. The decision is learned from that picture
(`learn_ship`): display areas are drawn with the ship pasted at random lane positions (off its
place by up to 6 mm, along the lane either way, a few degrees askew, 25 to 60 mm long),
beside tiles of the pack lying over the lane's inner line, shells, hands and arms, shadows,
glare, colour casts, blur, noise and JPEG; a quarter of them with no ship at all. At each of
the 16 positions a few features are measured (`_sight`): the best normalised cross-correlation of
the ship's picture over lengths and both headings along the lane near the position, its
margin over the best at any other position, how much of the lane there is not paper, how much
of that lies beyond the matched ship and right round it (a finger runs on into its hand), and
how far the matched colours are from the ship's. A logistic regression turns them into
P(ship here); as a table has one ship, the belief that it is at a position and nowhere else is
that position's odds over one plus the sum of all positions' odds (two positions alike share
it). The threshold on the best position's belief is chosen on drawn areas kept back from the
fit, so that a wrong position stays rare. A hand over the ship, no ship, or two alike: None.

The learned `ShipModel` is small (a few numbers) and serialises to JSON; `ship_model` keeps
it per pack object, and as a file in a cache directory when asked.
"""

from __future__ import annotations

import hashlib
import json
import math
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from functools import lru_cache
from pathlib import Path

import cv2
import numpy as np
from numpy.typing import NDArray

from companion.progress import terminal_progress
from vision import kit
from vision.box.cache import cache_dir, write_quietly
from vision.box.pack import Pack
from vision.box.tilemodel import Image, TileModel
from vision.config import ShipConfig, VisionConfig
from vision.reader.areas import AreaPose, cell_crop

Float = NDArray[np.float32]
Floats = NDArray[np.float64]

__all__ = [
    "FEATURES",
    "ShipModel",
    "ShipSighting",
    "display_geometry",
    "learn_ship",
    "locate_ship",
    "read_ship",
    "read_ship_in_frame",
    "ship_area",
    "ship_in_area",
    "ship_model",
]

#: What is measured at each position (the model adds match² and match × margin).
FEATURES = ("match", "margin", "ink", "spread", "beyond", "colour", "tone", "ring")
MODEL_VERSION = 1
#: The ring round the matched ship (mm from its outline) where a finger runs on into a hand.
RING_MM = (2.5, 8.0)
#: The ship's picture counts as seen when less than this share of it is hidden, and as
#: hidden from this share on (in between, naming it or None are both right).
SEEN_HIDDEN = 0.15
HIDDEN = 0.4


@dataclass(frozen=True, slots=True)
class ShipSighting:
    """The ship's position (None when not seen), the belief it is there and the
    runner-up's."""

    position: int | None
    score: float
    runner_up: float
    scores: tuple[float, ...]  # P(the ship is here, nowhere else) per position


@dataclass(frozen=True, slots=True)
class ShipModel:
    """P(ship at a position) from its features: a logistic regression over standardised
    features, and the threshold on the best position's belief (`posterior`) for naming it. The
    figures are those of the areas kept back from the fit: expected calibration error of
    P(ship here) over every position, and of the belief in each area's best position."""

    ship_digest: str
    tile_mm: float
    px_per_mm: float
    mean: tuple[float, ...]
    scale: tuple[float, ...]
    weights: tuple[float, ...]
    bias: float
    threshold: float
    calibration_error: float
    belief_calibration_error: float
    found_rate: float
    wrong_rate: float
    validation_areas: int

    def probabilities(self, features: Floats) -> Floats:
        """P(ship here) for each row of `features` (columns as FEATURES)."""
        x = (_expand(features) - np.asarray(self.mean)) / np.asarray(self.scale)
        z = x @ np.asarray(self.weights) + self.bias
        out: Floats = 1.0 / (1.0 + np.exp(-np.clip(z, -40.0, 40.0)))
        return out

    def posterior(self, features: Floats) -> Floats:
        """P(the ship is here and nowhere else) per position: the table has one ship, so
        each position's odds over one plus the sum of every position's (two positions that
        both look like the ship share the belief)."""
        p = np.clip(self.probabilities(features), 0.0, 1.0 - 1e-12)
        odds = p / (1.0 - p)
        out: Floats = odds / (1.0 + odds.sum())
        return out

    def to_json(self) -> str:
        return json.dumps({"version": MODEL_VERSION, **asdict(self)}, sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> ShipModel:
        """The model from `to_json`'s text; ValueError naming what is wrong."""
        try:
            doc = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ValueError(f"a ship model must be JSON: {exc}") from None
        if not isinstance(doc, dict) or doc.get("version") != MODEL_VERSION:
            raise ValueError(f"a ship model must be a version {MODEL_VERSION} object")
        width = len(_expand(np.zeros((1, len(FEATURES))))[0])
        try:
            model = cls(
                ship_digest=str(doc["ship_digest"]),
                tile_mm=float(doc["tile_mm"]),
                px_per_mm=float(doc["px_per_mm"]),
                mean=tuple(float(v) for v in doc["mean"]),
                scale=tuple(float(v) for v in doc["scale"]),
                weights=tuple(float(v) for v in doc["weights"]),
                bias=float(doc["bias"]),
                threshold=float(doc["threshold"]),
                calibration_error=float(doc["calibration_error"]),
                belief_calibration_error=float(doc["belief_calibration_error"]),
                found_rate=float(doc["found_rate"]),
                wrong_rate=float(doc["wrong_rate"]),
                validation_areas=int(doc["validation_areas"]),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"a ship model lacks or garbles {exc}") from None
        if not len(model.mean) == len(model.scale) == len(model.weights) == width:
            raise ValueError(f"a ship model needs {width} weights, means and scales")
        return model


def _expand(features: Floats) -> Floats:
    """The model's inputs: the features, match² and match × margin."""
    f = np.asarray(features, np.float64).reshape(-1, len(FEATURES))
    out: Floats = np.column_stack([f, f[:, 0] ** 2, f[:, 0] * f[:, 1]])
    return out


# ---------------------------------------------------------------------------------------------
# Finding


def read_ship(
    area: Image, model: TileModel, geometry: kit.DisplayGeometry, config: ShipConfig | None = None
) -> tuple[int | None, float]:
    """The ship's lane position in a picture of the display area (None when not seen or
    ambiguous) and the belief that it is there (0..1).

    `area`: the display mat's active area, north up, square, side 2 * half_extent mm, centred
    on the display's centre (vision.reader.areas.display_area), at any scale. For a whole camera
    frame and the display's pose, see read_ship_in_frame."""
    sighting = locate_ship(area, model.ship, geometry, config)
    if sighting.position is None:
        return None, 0.0
    return sighting.position, sighting.score


def read_ship_in_frame(
    frame: Image,
    display: AreaPose,
    pack: Pack,
    config: VisionConfig | None = None,
    model: ShipModel | None = None,
) -> int | None:
    """The ship's position in a whole camera frame, given the display's pose (the model
    learned from `pack` on first use when not given)."""
    config = config or VisionConfig()
    geometry = display_geometry(display)
    model = model or _pack_model(pack, config.ships)
    area = ship_area(frame, display, config.ships)
    return ship_in_area(area, pack.ship, geometry, config.ships, model)


def ship_area(frame: Image, display: AreaPose, cfg: ShipConfig) -> Image:
    """The picture `ship_in_area` searches: the display's active area and cfg.beyond_mm
    round it, north up, at cfg.px_per_mm (warped at twice the scale and reduced: every
    frame pixel counts, no aliasing)."""
    side = 2 * (display_geometry(display).half_extent + cfg.beyond_mm)
    n = _side_px(side, cfg.px_per_mm)
    fine = cell_crop(frame, display, (0.0, 0.0), side, 2 * n / side)
    return np.asarray(cv2.resize(fine, (n, n), interpolation=cv2.INTER_AREA), np.uint8)


def ship_in_area(
    area: Image, ship: Image, geometry: kit.DisplayGeometry, cfg: ShipConfig, model: ShipModel
) -> int | None:
    """The ship's position in a `ship_area` picture (`ship`: the pack's picture of it), or
    None. Its arguments and answer pickle: a cell worker process may run it."""
    return _decide(_sight(area, ship, geometry, cfg), model).position


def display_geometry(display: AreaPose) -> kit.DisplayGeometry:
    """The display's geometry (TypeError for another area's pose)."""
    if not isinstance(display.geometry, kit.DisplayGeometry):
        raise TypeError("the ship is looked for with the display's pose")
    return display.geometry


def locate_ship(
    area: Image,
    ship: Image,
    geometry: kit.DisplayGeometry,
    config: ShipConfig | None = None,
    model: ShipModel | None = None,
) -> ShipSighting:
    """Find the ship (`ship`: its picture, BGR or BGRA) in the display area picture (the
    active area, north up, any scale); the model is learned from the picture alone when
    not given."""
    cfg = config or ShipConfig()
    if area.ndim != 3 or area.shape[2] != 3 or area.shape[0] != area.shape[1]:
        raise ValueError(f"the display area must be a square colour picture, not {area.shape}")
    model = model or _picture_model(ship, geometry.tile_mm, cfg)
    n = _side_px(2 * geometry.half_extent, cfg.px_per_mm)
    small = np.asarray(cv2.resize(area, (n, n), interpolation=cv2.INTER_AREA), np.uint8)
    pad = round(cfg.beyond_mm * n / (2 * geometry.half_extent))
    small = np.asarray(
        cv2.copyMakeBorder(small, pad, pad, pad, pad, cv2.BORDER_REPLICATE), np.uint8
    )
    return _decide(_sight(small, ship, geometry, cfg), model)


def _side_px(side_mm: float, px_per_mm: float) -> int:
    return max(32, round(side_mm * px_per_mm))


def _decide(features: Floats, model: ShipModel) -> ShipSighting:
    """The best position when its belief reaches the model's threshold, else None."""
    p = model.posterior(features)
    ranked = np.argsort(-p, kind="stable")
    best = int(ranked[0])
    position = best if p[best] >= model.threshold else None
    return ShipSighting(position, float(p[best]), float(p[ranked[1]]), tuple(float(v) for v in p))


@dataclass(frozen=True, slots=True)
class _Template:
    colour: Float  # the ship laid on white, paper = 1
    mask: Float  # its opacity
    means: Float  # its mean colour (3,) where opaque


def _ship_layers(ship: Image) -> tuple[Float, Float]:
    """The ship's picture laid on white (float BGR, paper = 1) and its opacity, turned so
    that its longer side runs across (x)."""
    if ship.ndim == 3 and ship.shape[2] == 4:
        alpha = ship[:, :, 3].astype(np.float32) / 255.0
    else:
        alpha = np.ones(ship.shape[:2], np.float32)
    colour = ship.reshape(*ship.shape[:2], -1)[:, :, :3].astype(np.float32) / 255.0
    if colour.shape[2] == 1:
        colour = np.repeat(colour, 3, axis=2)
    # Cut to what is opaque and not white (a picture may come with opaque white round it).
    laid = colour * alpha[:, :, None] + (1.0 - alpha[:, :, None])
    shown = (alpha > 0.2) & (laid.min(axis=2) < 0.96)
    if not shown.any():
        shown = alpha > 0.2
    rows = np.flatnonzero(shown.any(axis=1))
    cols = np.flatnonzero(shown.any(axis=0))
    if len(rows) == 0:
        raise ValueError("the ship's picture is wholly transparent")
    alpha = alpha[rows[0] : rows[-1] + 1, cols[0] : cols[-1] + 1]
    colour = colour[rows[0] : rows[-1] + 1, cols[0] : cols[-1] + 1]
    if alpha.shape[0] > alpha.shape[1]:
        alpha, colour = np.rot90(alpha), np.rot90(colour)
    laid = colour * alpha[:, :, None] + (1.0 - alpha[:, :, None])
    return np.ascontiguousarray(laid, np.float32), np.ascontiguousarray(alpha, np.float32)


def _aspect(alpha: Float) -> float:
    return float(alpha.shape[1]) / max(1, int(alpha.shape[0]))


def _turned(
    colour: Float, alpha: Float, length_px: float, degrees: float, around: int
) -> _Template:
    """The ship laid on white, its longer side `length_px`, turned `degrees` (clockwise as
    seen), cut to the turned ship and `around` px of paper round it."""
    h, w = alpha.shape
    s = length_px / w
    side = math.ceil(math.hypot(w * s, h * s)) + 2 * around + 2
    m = cv2.getRotationMatrix2D(((w - 1) / 2, (h - 1) / 2), -degrees, s)
    m[:, 2] += ((side - 1) / 2 - (w - 1) / 2, (side - 1) / 2 - (h - 1) / 2)
    inter = cv2.INTER_AREA if s < 1 else cv2.INTER_LINEAR
    turned = cv2.warpAffine(
        colour,
        m,
        (side, side),
        flags=inter,
        borderMode=cv2.BORDER_CONSTANT,
        borderValue=(1.0, 1.0, 1.0),
    )
    cover = cv2.warpAffine(alpha, m, (side, side), flags=inter)
    rows = np.flatnonzero(cover.max(axis=1) > 0.2)
    cols = np.flatnonzero(cover.max(axis=0) > 0.2)
    r0, r1 = max(0, int(rows[0]) - around), min(side, int(rows[-1]) + 1 + around)
    c0, c1 = max(0, int(cols[0]) - around), min(side, int(cols[-1]) + 1 + around)
    colour_t = np.ascontiguousarray(turned[r0:r1, c0:c1], np.float32)
    mask_t = np.ascontiguousarray(cover[r0:r1, c0:c1], np.float32)
    solid = mask_t > 0.5
    means = colour_t[solid].mean(axis=0) if solid.any() else colour_t.reshape(-1, 3).mean(0)
    return _Template(colour_t, mask_t, np.asarray(means, np.float32))


_SHIPS: dict[str, Image] = {}
_SHIPS_LOCK = threading.Lock()


def _digest(ship: Image) -> str:
    digest = hashlib.blake2b(ship.tobytes(), digest_size=12)
    digest.update(str(ship.shape).encode())
    key = digest.hexdigest()
    with _SHIPS_LOCK:
        if key not in _SHIPS:
            if len(_SHIPS) > 8:
                _SHIPS.clear()
                _templates.cache_clear()
                _projected.cache_clear()
                _colour_axis.cache_clear()
            _SHIPS[key] = np.array(ship, copy=True)
    return key


def _lengths(cfg: ShipConfig) -> list[float]:
    out = [cfg.shortest_mm]
    while out[-1] * cfg.length_step < cfg.longest_mm * 1.02:
        out.append(out[-1] * cfg.length_step)
    return out


@lru_cache(maxsize=16)
def _templates(key: str, ppm: float, cfg: ShipConfig) -> tuple[_Template, ...]:
    """The ship's pictures to match in a lane running across: every length, either way
    along, turned a little; also across the lane when the ship is about as wide as long
    (read-only: every search shares them)."""
    colour, alpha = _ship_layers(_SHIPS[key])
    headings = [0.0, 180.0]
    if _aspect(alpha) < 1.3:
        headings += [90.0, 270.0]
    around = max(1, round(2.0 * ppm))
    out = tuple(
        _turned(colour, alpha, length * ppm, heading + turn, around)
        for length in _lengths(cfg)
        for heading in headings
        for turn in cfg.turns_deg
    )
    for template in out:
        for picture in (template.colour, template.mask, template.means):
            picture.flags.writeable = False
    return out


def _normalised(area: Image, ppm: float, cfg: ShipConfig) -> tuple[Float, Float]:
    """The area divided by the paper's colour nearby (paper = 1 in every channel, whatever
    the light), and how much each pixel is not paper (0..1)."""
    small = area.astype(np.float32)
    # The brightest nearby, found on a picture a quarter the size (the same, much faster).
    m = max(8, area.shape[0] // 4)
    coarse = cv2.resize(small, (m, m), interpolation=cv2.INTER_AREA)
    f = m / area.shape[0]
    reach = max(3, round(cfg.paper_reach_mm * ppm * f)) | 1
    kernel = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (reach, reach))
    paper = cv2.GaussianBlur(cv2.dilate(coarse, kernel), (0, 0), reach / 2)
    paper = cv2.resize(paper, area.shape[1::-1], interpolation=cv2.INTER_LINEAR)
    norm = np.minimum(small / np.maximum(paper, 8.0), 1.5).astype(np.float32)
    b, g, r = norm[:, :, 0], norm[:, :, 1], norm[:, :, 2]
    grey = (b + g + r) / 3
    top = np.maximum(np.maximum(b, g), r)
    chroma = (top - np.minimum(np.minimum(b, g), r)) / np.maximum(top, 0.05)
    ink = np.maximum(np.clip((0.92 - grey) / 0.25, 0, 1), np.clip((chroma - 0.1) / 0.25, 0, 1))
    return norm, ink.astype(np.float32)


def _sight(area: Image, ship: Image, geometry: kit.DisplayGeometry, cfg: ShipConfig) -> Floats:
    """The features (16 positions x FEATURES) in an area picture covering the active area
    and cfg.beyond_mm round it, north up, at about cfg.px_per_mm."""
    n = area.shape[0]
    outer = geometry.half_extent + cfg.beyond_mm
    ppm = n / (2 * outer)
    norm, ink = _normalised(area, ppm, cfg)
    key = _digest(ship)
    templates = _templates(key, round(ppm, 4), cfg)
    axis = _colour_axis(key)
    inner, half, pitch = geometry.lane_inner, geometry.half_extent, geometry.pitch
    middle = inner + kit.LANE_MM / 2
    slack = cfg.centre_slack_mm * ppm
    # The band searched on each side, turned north (np.rot90 turns counter-clockwise: side
    # 1, east, comes to the north, and so on, each with its positions running west to
    # east): rows as far as the tallest picture reaches from the centres allowed; the
    # four stacked.
    rows = min(n, round((outer - inner + cfg.centre_slack_mm) * ppm))
    strips = [(np.rot90(norm, k=side)[:rows], np.rot90(ink, k=side)[:rows]) for side in range(4)]
    cy = (outer - middle) * ppm - 0.5
    tallest = max(tpl.mask.shape[0] for tpl in templates)
    r0 = math.floor(cy - slack - tallest / 2) - 1
    r1 = math.ceil(cy + slack + tallest / 2) + 2
    band = r1 - r0
    stack = np.ones((4 * band, n), np.float32)
    for side, (s_norm, _ink) in enumerate(strips):
        a, b = max(0, r0), min(rows, r1)
        stack[side * band + a - r0 : side * band + b - r0] = s_norm[a:b] @ axis
    # Lane proper: clear of tiles lying over the inner line (5 mm), to the mat's edge.
    lane0, lane1 = round((outer - half) * ppm), round((outer - inner - 5.0) * ppm)
    best = np.full(kit.SHIP_POSITIONS, -1.0)
    where: list[tuple[int, int, int]] = [(0, 0, 0)] * kit.SHIP_POSITIONS
    pictures = _projected(key, round(ppm, 4), cfg)
    for t, (tpl, picture) in enumerate(zip(templates, pictures, strict=True)):
        th, tw = tpl.mask.shape
        if th > band or tw > n:
            continue
        result = cv2.matchTemplate(stack, picture, cv2.TM_CCOEFF_NORMED)
        # Top rows (in the band) of the picture centred within the slack, wholly in the band.
        i0 = max(0, round(cy - slack - (th - 1) / 2) - r0)
        i1 = min(band - th + 1, round(cy + slack - (th - 1) / 2) + 1 - r0)
        if i1 <= i0:
            continue
        # Those rows of every side's band at once: (side, row, column).
        sides = np.stack([result[side * band + i0 : side * band + i1] for side in range(4)])
        for k in range(4):
            cx = (outer + (k - 1.5) * pitch) * ppm - 0.5
            j0 = max(0, round(cx - slack - (tw - 1) / 2))
            j1 = min(result.shape[1], round(cx + slack - (tw - 1) / 2) + 1)
            if j1 <= j0:
                continue
            windows = sides[:, :, j0:j1].reshape(4, -1)
            ats = windows.argmax(axis=1)
            scores = windows[np.arange(4), ats]
            for side in range(4):
                p, at, score = side * 4 + k, int(ats[side]), float(scores[side])
                if np.isfinite(score) and score > best[p]:
                    best[p] = score
                    where[p] = (t, r0 + i0 + at // (j1 - j0), j0 + at % (j1 - j0))
    features = np.zeros((kit.SHIP_POSITIONS, len(FEATURES)))
    near_kernel = _disc(RING_MM[1] * ppm)
    touch_kernel = _disc(RING_MM[0] * ppm)
    reach = near_kernel.shape[0] // 2
    first, second = np.sort(best)[::-1][:2]
    for p in range(kit.SHIP_POSITIONS):
        side, k = divmod(p, 4)
        s_norm, s_ink = strips[side]
        cx = (outer + (k - 1.5) * pitch) * ppm
        x0, x1 = max(0, round(cx - pitch / 2 * ppm)), min(n, round(cx + pitch / 2 * ppm))
        lane_ink = s_ink[lane0:lane1, x0:x1]
        features[p, 0] = best[p]
        features[p, 1] = best[p] - (second if best[p] == first else first)  # the others' best
        features[p, 2] = float(lane_ink.mean())
        features[p, 3] = float(np.mean(lane_ink > 0.5))
        t, i, j = where[p]
        tpl = templates[t]
        # The matched picture's rows and columns that lie in the strip.
        a, b = max(i, 0), min(i + tpl.mask.shape[0], rows)
        c, d = j, min(j + tpl.mask.shape[1], n)
        mask = tpl.mask[a - i : b - i, : d - c]
        foot = np.zeros(s_ink.shape, bool)
        foot[a:b, c:d] = mask > 0.1
        outside = ~foot[lane0:lane1, x0:x1]
        features[p, 4] = float(lane_ink[outside].mean()) if outside.any() else 0.0
        solid = mask > 0.5
        patch = s_norm[a:b, c:d]
        seen = patch[solid].mean(axis=0) if solid.any() else np.ones(3)
        want = tpl.means.astype(np.float64)
        # The colours where the ship matched against the ship's, every channel (glare adds
        # white and the light scales: neither changes the correlation).
        features[p, 5] = _correlation(patch[solid], tpl.colour[a - i : b - i, : d - c][solid])
        features[p, 6] = abs(math.log(max(seen.mean(), 0.05) / max(want.mean(), 0.05)))
        # A ship stands apart; a finger or a thumb runs on into its hand. (Worked out in
        # the lane's rows within the ring's reach of the picture: nothing beyond is near.)
        y0, y1 = max(lane0, a - reach), min(lane1, b + reach)
        u0, u1 = max(0, c - reach), min(n, d + reach)
        if y1 > y0 and u1 > u0:
            box = foot[max(0, y0 - reach) : y1 + reach, u0:u1].view(np.uint8)
            top = y0 - max(0, y0 - reach)
            near = cv2.dilate(box, near_kernel) > 0
            near &= ~(cv2.dilate(box, touch_kernel) > 0)
            ink_near = s_ink[y0:y1, u0:u1][near[top : top + y1 - y0]]
            if ink_near.size:
                features[p, 7] = float(np.mean(ink_near > 0.5))
    return features


def _correlation(seen: Float, want: Float) -> float:
    """The correlation of two sets of colours (pixels x channels), all channels at once."""
    x = want.astype(np.float64).ravel()
    y = seen.astype(np.float64).ravel()
    if x.size < 6:
        return 0.0
    x = x - x.mean()
    y = y - y.mean()
    scale = math.sqrt(float(x @ x) * float(y @ y))
    return float(x @ y) / scale if scale > 1e-12 else 0.0


def _disc(radius_px: float) -> NDArray[np.uint8]:
    side = 2 * max(1, round(radius_px)) + 1
    return np.asarray(cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (side, side)), np.uint8)


@lru_cache(maxsize=16)
def _projected(key: str, ppm: float, cfg: ShipConfig) -> tuple[Float, ...]:
    """`_templates`' pictures projected onto `_colour_axis` (what is matched; read-only)."""
    axis = _colour_axis(key)
    out = tuple(np.ascontiguousarray(tpl.colour @ axis) for tpl in _templates(key, ppm, cfg))
    for picture in out:
        picture.flags.writeable = False
    return out


@lru_cache(maxsize=16)
def _colour_axis(key: str) -> Float:
    """The colour direction (3,) along which the ship's picture on paper varies most: the
    search is made on the pictures projected onto it (read-only)."""
    colour, alpha = _ship_layers(_SHIPS[key])
    pixels = colour.reshape(-1, 3).astype(np.float64)
    weights = np.ones(len(pixels))
    # As much paper round the ship as ship: the ship against paper is what counts.
    paper = max(1.0, float(alpha.sum()))
    pixels = np.vstack([pixels, np.ones((1, 3))])
    weights = np.append(weights, paper)
    mean = (pixels * weights[:, None]).sum(axis=0) / weights.sum()
    centred = pixels - mean
    cov = (centred * weights[:, None]).T @ centred / weights.sum()
    _values, vectors = np.linalg.eigh(cov)
    axis = vectors[:, -1]
    if axis.sum() < 0:
        axis = -axis
    axis = axis + 0.15 * np.ones(3) / math.sqrt(3)  # a little of the brightness, always
    out: Float = (axis / np.linalg.norm(axis)).astype(np.float32)
    out.flags.writeable = False
    return out


# ---------------------------------------------------------------------------------------------
# Learning


_MODELS: dict[tuple[int, ShipConfig], tuple[object, ShipModel]] = {}
_MODELS_LOCK = threading.Lock()


def _pack_model(pack: Pack, cfg: ShipConfig) -> ShipModel:
    """The model learned from this pack object (learned once, then kept here and in the
    cache directory, vision.box.cache)."""
    return ship_model(pack, VisionConfig(ships=cfg), cache_dir())


def ship_model(
    pack: Pack, config: VisionConfig | None = None, cache: Path | None = None
) -> ShipModel:
    """The pack's ship model, learned on first use and kept for this pack object (which
    read_ship_in_frame then uses). With `cache`, a directory, the model is also kept there
    as JSON under a name made from the pack's pictures and the ship config, and read back
    from there by any later process (a file that cannot be read or written is passed over)."""
    cfg = (config or VisionConfig()).ships
    key = (id(pack), cfg)
    with _MODELS_LOCK:
        hit = _MODELS.get(key)
        if hit is not None and hit[0] is pack:
            return hit[1]
        model = None
        path = cache / f"ship-{_pack_key(pack, cfg)}.json" if cache is not None else None
        if path is not None:
            try:
                model = ShipModel.from_json(path.read_text(encoding="utf-8"))
            except (OSError, ValueError, UnicodeDecodeError):
                model = None
        if model is None:
            shown = terminal_progress(f"learning {pack.name}")
            model = learn_ship(
                pack, VisionConfig(ships=cfg), progress=None if shown is None else shown.note
            )
            if shown is not None:
                shown.finish()
            if path is not None:
                write_quietly(path, model.to_json())
        if len(_MODELS) > 8:
            _MODELS.clear()
        _MODELS[key] = (pack, model)
    return model


def _pack_key(pack: Pack, cfg: ShipConfig) -> str:
    """A name for what the model is learned from: the pictures, the tile size, the config."""
    digest = hashlib.blake2b(digest_size=16)
    digest.update(f"{MODEL_VERSION} {pack.tile_mm!r} {cfg!r}".encode())
    for picture in [pack.ship, *(pack.tiles[k] for k in sorted(pack.tiles))]:
        digest.update(str(picture.shape).encode())
        digest.update(np.ascontiguousarray(picture).tobytes())
    return digest.hexdigest()


@lru_cache(maxsize=8)
def _learned_from_picture(key: str, tile_mm: float, cfg: ShipConfig) -> ShipModel:
    return _learn(_SHIPS[key], [], tile_mm, cfg, 0, None)


def _picture_model(ship: Image, tile_mm: float, cfg: ShipConfig) -> ShipModel:
    """The model learned from the ship's picture alone (tiles drawn at random beside it)."""
    key = _digest(ship)
    with _MODELS_LOCK:
        return _learned_from_picture(key, tile_mm, cfg)


def learn_ship(
    pack: Pack,
    config: VisionConfig | None = None,
    seed: int = 0,
    progress: Callable[[str], None] | None = None,
) -> ShipModel:
    """Learn where a pack's ship is from drawn display areas (deterministic given the pack,
    the config and `seed`)."""
    cfg = (config or VisionConfig()).ships
    tiles = [pack.tiles[k] for k in sorted(pack.tiles)]
    return _learn(pack.ship, tiles, pack.tile_mm, cfg, seed, progress)


@dataclass(frozen=True, slots=True)
class _Drawn:
    features: Floats  # (16, FEATURES)
    position: int | None
    state: str  # "seen", "partly" (part hidden), "hidden", "none"


def _learn(
    ship: Image,
    tiles: Sequence[Image],
    tile_mm: float,
    cfg: ShipConfig,
    seed: int,
    progress: Callable[[str], None] | None,
) -> ShipModel:
    geometry = kit.DisplayGeometry(tile_mm)
    artist = _Artist(ship, tiles, geometry, cfg)
    count = max(20, cfg.learn_areas)
    seeds = np.random.SeedSequence([seed, 0x5817]).spawn(count)

    def one(i: int) -> _Drawn:
        rng = np.random.default_rng(seeds[i])
        area, position, state = artist.draw(rng)
        return _Drawn(_sight(area, ship, geometry, cfg), position, state)

    drawn: list[_Drawn] = []
    with ThreadPoolExecutor(max_workers=2) as pool:
        for i, d in enumerate(pool.map(one, range(count))):
            drawn.append(d)
            if progress and (i + 1) % 60 == 0:
                progress(f"ship: {i + 1}/{count} drawn areas measured")
    split = count - max(10, round(count * cfg.validation_share))
    fit, held = drawn[:split], drawn[split:]
    x_fit, y_fit = _samples(fit)
    mean = _expand(x_fit).mean(axis=0)
    scale = np.maximum(_expand(x_fit).std(axis=0), 1e-6)
    weights, bias = _logistic((_expand(x_fit) - mean) / scale, y_fit)
    model = ShipModel(
        ship_digest=_digest(ship),
        tile_mm=tile_mm,
        px_per_mm=cfg.px_per_mm,
        mean=tuple(float(v) for v in mean),
        scale=tuple(float(v) for v in scale),
        weights=tuple(float(v) for v in weights),
        bias=float(bias),
        threshold=1.0,
        calibration_error=0.0,
        belief_calibration_error=0.0,
        found_rate=0.0,
        wrong_rate=0.0,
        validation_areas=len(held),
    )
    best = [
        (int(np.argmax(pr)), float(np.max(pr)))
        for pr in (model.posterior(d.features) for d in held)
    ]
    threshold, found, wrong = _threshold(best, held, cfg)
    x_held, y_held = _samples(held)
    ece = calibration_error(model.probabilities(x_held), y_held)
    # The belief in each kept-back area's best position against whether the ship is there.
    beliefs = np.array([prob for _, prob in best])
    there = np.array(
        [p == d.position and d.state == "seen" for (p, _), d in zip(best, held, strict=True)],
        np.float64,
    )
    kept = np.array(
        [
            not (p == d.position and d.state == "partly")
            for (p, _), d in zip(best, held, strict=True)
        ]
    )
    belief_ece = calibration_error(beliefs[kept], there[kept])
    return ShipModel(
        **{
            **asdict(model),
            "threshold": threshold,
            "calibration_error": ece,
            "belief_calibration_error": belief_ece,
            "found_rate": found,
            "wrong_rate": wrong,
        }
    )


def _samples(drawn: Sequence[_Drawn]) -> tuple[Floats, Floats]:
    """Every position of the drawn areas as a sample: 1 where the ship is seen; a ship
    partly hidden is left out (either answer is right there)."""
    xs, ys = [], []
    for d in drawn:
        for p in range(kit.SHIP_POSITIONS):
            if p == d.position and d.state == "partly":
                continue
            xs.append(d.features[p])
            ys.append(1.0 if p == d.position and d.state == "seen" else 0.0)
    return np.asarray(xs, np.float64), np.asarray(ys, np.float64)


def _logistic(x: Floats, y: Floats, ridge: float = 1e-3, rounds: int = 30) -> tuple[Floats, float]:
    """Logistic regression by Newton's method (a little ridge on the weights)."""
    a = np.column_stack([x, np.ones(len(x))])
    w = np.zeros(a.shape[1])
    penalty = np.full(a.shape[1], ridge * len(x))
    penalty[-1] = 0.0
    for _ in range(rounds):
        p = 1.0 / (1.0 + np.exp(-np.clip(a @ w, -40, 40)))
        grad = a.T @ (p - y) + penalty * w
        hess = (a * (p * (1 - p))[:, None]).T @ a + np.diag(penalty + 1e-9)
        step = np.linalg.solve(hess, grad)
        w -= step
        if float(np.abs(step).max()) < 1e-7:
            break
    return w[:-1], float(w[-1])


def calibration_error(p: Floats, y: Floats, bins: int = 10) -> float:
    """Expected calibration error: the mean |observed rate - probability| over equal-width
    bins of probability, weighted by how many fall in each."""
    edges = np.minimum((np.asarray(p) * bins).astype(int), bins - 1)
    total = 0.0
    for b in range(bins):
        inside = edges == b
        if inside.any():
            total += float(inside.sum()) * abs(float(y[inside].mean()) - float(p[inside].mean()))
    return total / max(1, len(p))


def _threshold(
    best: Sequence[tuple[int, float]], held: Sequence[_Drawn], cfg: ShipConfig
) -> tuple[float, float, float]:
    """The least threshold (not below cfg.least_threshold) at which the kept-back areas
    named wrongly stay within cfg.wrong_rate; with the share of seen ships found and the
    share of areas named wrongly there."""
    seen = sum(d.state == "seen" for d in held)

    def rates(t: float) -> tuple[float, float]:
        found = wrong = 0
        for (p, prob), d in zip(best, held, strict=True):
            if prob < t:
                continue
            right = p == d.position and d.state in ("seen", "partly")
            found += right and d.state == "seen"
            wrong += not right
        return found / max(1, seen), wrong / max(1, len(held))

    candidates = sorted({prob for _, prob in best if prob >= cfg.least_threshold})
    for t in [cfg.least_threshold, *candidates]:
        found, wrong = rates(t)
        if wrong <= cfg.wrong_rate:
            return float(t), found, wrong
    top = max((prob for _, prob in best), default=1.0)
    return float(np.nextafter(top, 2.0)), 0.0, 0.0


# ---------------------------------------------------------------------------------------------
# Drawing display areas to learn from


#: The ship is drawn this long (its picture's longer side, mm), at most DRAWN_WIDTH_MM wide
#: (it stands in the 35 mm lane).
DRAWN_LENGTH_MM = (25.0, 60.0)
DRAWN_WIDTH_MM = 33.0
#: Pictures are drawn at this many times the finder's scale, then reduced.
_DRAWN_SCALE = 1.5
SKIN_HSV = ((5.0, 28.0), (0.2, 0.65), (0.25, 0.95))  # hue (degrees), saturation, value


class _Artist:
    """Draws display areas (the active area and cfg.beyond_mm round it) as the camera and
    read_ship_in_frame would see them, at the finder's scale."""

    def __init__(
        self, ship: Image, tiles: Sequence[Image], geometry: kit.DisplayGeometry, cfg: ShipConfig
    ) -> None:
        self.geometry = geometry
        self.cfg = cfg
        self.outer = geometry.half_extent + cfg.beyond_mm
        self.n = _side_px(2 * self.outer, cfg.px_per_mm)
        self.q = _DRAWN_SCALE * self.n / (2 * self.outer)
        colour, alpha = _ship_layers(ship)
        self.ship_colour = colour * 255.0
        self.ship_alpha = alpha
        tile_px = max(8, round(geometry.tile_mm * self.q))
        self.tiles = [
            np.asarray(
                cv2.resize(
                    np.ascontiguousarray(t[:, :, :3]),
                    (tile_px, tile_px),
                    interpolation=cv2.INTER_AREA,
                ),
                np.float32,
            )
            for t in tiles
        ]

    def px(self, x_mm: float, y_mm: float) -> tuple[float, float]:
        return (x_mm + self.outer) * self.q - 0.5, (y_mm + self.outer) * self.q - 0.5

    def draw(self, rng: np.random.Generator) -> tuple[Image, int | None, str]:
        geo = self.geometry
        m = round(_DRAWN_SCALE * self.n)
        canvas = np.empty((m, m, 3), np.float32)
        canvas[:] = _table_colour(rng)
        paper = np.clip(rng.uniform(215, 255) + rng.normal(0, 5, 3), 150, 255)
        edge = geo.half_extent + rng.uniform(2.0, self.cfg.beyond_mm + 4.0)
        a, b = self.px(-edge, -edge), self.px(edge, edge)
        cv2.rectangle(canvas, _pt(a), _pt(b), paper.tolist(), -1)
        canvas += rng.uniform(0.5, 3.0) * rng.standard_normal((m, m, 1), np.float32)
        self._lines(canvas, rng)
        self._markers(canvas, rng)
        self._tiles(canvas, rng)
        position: int | None = None
        ship_mask: NDArray[np.bool_] | None = None
        if rng.random() < 0.75:
            position = int(rng.integers(0, kit.SHIP_POSITIONS))
            ship_mask = self._ship(canvas, rng, position)
        for _ in range(int(rng.integers(0, 4)) if rng.random() < 0.5 else 0):
            self._shell(canvas, rng)
        hand = np.zeros((m, m), np.uint8)
        hands = 0 if rng.random() < 0.55 else (1 if rng.random() < 0.85 else 2)
        for _ in range(hands):
            self._hand(canvas, hand, rng, position)
        state = "none"
        if ship_mask is not None:
            hidden = float(np.mean(hand[ship_mask] > 0)) if ship_mask.any() else 1.0
            state = "seen" if hidden < SEEN_HIDDEN else "hidden" if hidden >= HIDDEN else "partly"
        focus = None if position is None else _pt(self.px(*geo.ship_centre(position)))
        _light(canvas, rng, focus)
        return _camera(canvas, rng, self.n), position, state

    def _lines(self, canvas: Float, rng: np.random.Generator) -> None:
        geo = self.geometry
        grey = [float(rng.uniform(140, 225))] * 3
        width = max(1, round(0.4 * self.q))
        squares = [(0.0, 0.0, geo.lane_inner), (0.0, 0.0, geo.half_extent)]
        squares += [(*geo.cell_centre(r, c), geo.tile_mm / 2) for r in range(4) for c in range(4)]
        for x, y, h in squares:
            cv2.rectangle(
                canvas, _pt(self.px(x - h, y - h)), _pt(self.px(x + h, y + h)), grey, width
            )

    def _markers(self, canvas: Float, rng: np.random.Generator) -> None:
        cells = 6
        for x, y in self.geometry.marker_centres().values():
            x += rng.uniform(-3, 3)
            y += rng.uniform(-3, 3)
            bits = np.ones((cells, cells), np.float32) * 20.0
            bits[1:-1, 1:-1] = np.where(rng.random((4, 4)) < 0.5, 20.0, 235.0)
            picture = np.repeat(bits[:, :, None], 3, axis=2)
            self._paste(
                canvas,
                picture,
                None,
                x,
                y,
                kit.MARKER_MM / cells,
                float(rng.uniform(-2, 2)),
                nearest=True,
            )

    def _tiles(self, canvas: Float, rng: np.random.Generator) -> None:
        geo = self.geometry
        for r in range(4):
            for c in range(4):
                edge = r in (0, 3) or c in (0, 3)
                if not edge or rng.random() < 0.15:
                    continue
                if self.tiles:
                    picture = self.tiles[int(rng.integers(0, len(self.tiles)))]
                else:
                    picture = _random_tile(rng, self.tiles_px())
                picture = np.ascontiguousarray(np.rot90(picture, k=int(rng.integers(0, 4))))
                x, y = geo.cell_centre(r, c)
                x += rng.uniform(-4, 4)
                y += rng.uniform(-4, 4)
                if rng.random() < 0.3:  # pushed out over the lane's inner line
                    push = rng.uniform(3, 9)
                    x += push * ((c == 3) - (c == 0))
                    y += push * ((r == 3) - (r == 0))
                self._paste(
                    canvas,
                    picture,
                    None,
                    x,
                    y,
                    geo.tile_mm / picture.shape[1],
                    float(rng.uniform(-5, 5)),
                )

    def tiles_px(self) -> int:
        return max(8, round(self.geometry.tile_mm * self.q))

    def _ship(self, canvas: Float, rng: np.random.Generator, position: int) -> NDArray[np.bool_]:
        geo = self.geometry
        h, w = self.ship_alpha.shape
        shortest, longest = DRAWN_LENGTH_MM
        top = min(longest, max(shortest + 1.0, DRAWN_WIDTH_MM * w / h))
        length = float(np.exp(rng.uniform(math.log(shortest), math.log(top))))
        cx, cy = geo.ship_centre(position)
        cx += rng.uniform(-6, 6)
        cy += rng.uniform(-6, 6)
        along = 0.0 if (position // 4) % 2 == 0 else 90.0
        heading = along + 180.0 * int(rng.integers(0, 2)) + float(np.clip(rng.normal(0, 3), -8, 8))
        # The piece is not its picture: its print or paint differs a little.
        colour = self.ship_colour * rng.uniform(0.85, 1.08, 3).astype(np.float32)
        colour = np.clip(colour, 0, 255)
        if rng.random() < 0.5:  # its shadow
            shade = np.zeros(canvas.shape[:2], np.float32)
            self._paste(
                shade[:, :, None],
                np.ones((h, w, 1), np.float32),
                self.ship_alpha,
                cx + rng.uniform(-4, 4),
                cy + rng.uniform(-4, 4),
                length / w,
                heading,
            )
            shade = np.asarray(
                cv2.GaussianBlur(shade, (0, 0), rng.uniform(1, 3) * self.q), np.float32
            )
            canvas *= 1.0 - rng.uniform(0.15, 0.45) * shade[:, :, None]
        mask = np.zeros(canvas.shape[:2], np.float32)
        self._paste(canvas, colour, self.ship_alpha, cx, cy, length / w, heading, cover=mask)
        return mask > 0.5

    def _shell(self, canvas: Float, rng: np.random.Generator) -> None:
        geo = self.geometry
        p = int(rng.integers(0, kit.SHIP_POSITIONS))
        x, y = geo.ship_centre(p)
        x += rng.uniform(-35, 35)
        y += rng.uniform(-25, 25)
        axes = (rng.uniform(4, 7) * self.q, rng.uniform(3, 5) * self.q)
        colour = np.clip(rng.uniform(190, 250) + rng.normal(0, 10, 3), 120, 255).tolist()
        centre = _pt(self.px(x, y))
        size = (round(axes[0]), round(axes[1]))
        angle = float(rng.uniform(0, 180))
        cv2.ellipse(canvas, centre, size, angle, 0, 360, colour, -1, cv2.LINE_AA)
        rim = [c * rng.uniform(0.6, 0.85) for c in colour]
        cv2.ellipse(
            canvas, centre, size, angle, 0, 360, rim, max(1, round(0.6 * self.q)), cv2.LINE_AA
        )

    def _hand(
        self,
        canvas: Float,
        cover: NDArray[np.uint8],
        rng: np.random.Generator,
        position: int | None,
    ) -> None:
        """A hand reaching into the lane (over or beside the ship half the time), its arm
        out over the mat's edge, perhaps in a sleeve; its shadow beneath."""
        geo, q = self.geometry, self.q
        target = (
            position
            if position is not None and rng.random() < 0.6
            else int(rng.integers(0, kit.SHIP_POSITIONS))
        )
        cx, cy = geo.ship_centre(target)
        side = target // 4
        inward = np.array([(0.0, 1.0), (-1.0, 0.0), (0.0, -1.0), (1.0, 0.0)][side])
        along = np.array((inward[1], -inward[0]))
        palm = np.array((cx, cy)) + along * rng.normal(0, 30) + inward * rng.uniform(-15, 45)
        turn = math.radians(rng.uniform(-60, 60))
        reach = inward * math.cos(turn) + along * math.sin(turn)  # the fingers' way
        shape = np.zeros(canvas.shape[:2], np.uint8)
        width = rng.uniform(40, 55)
        pp = _pt(self.px(*palm))
        cv2.ellipse(
            shape,
            pp,
            (round(width / 2 * q), round(rng.uniform(24, 30) * q)),
            math.degrees(math.atan2(reach[1], reach[0])) + 90,
            0,
            360,
            255,
            -1,
        )
        fingers = int(rng.integers(0, 5)) + 1
        for f in range(fingers):
            spread = (f - (fingers - 1) / 2) * rng.uniform(8, 12)
            base = palm + reach * 18 + np.array((reach[1], -reach[0])) * spread
            tip = base + reach * rng.uniform(20, 45)
            cv2.line(
                shape,
                _pt(self.px(*base)),
                _pt(self.px(*tip)),
                255,
                max(2, round(rng.uniform(12, 18) * q)),
            )
        if rng.random() < 0.7:  # the thumb, out to one side
            way = math.radians(rng.uniform(50, 100) * (1 if rng.random() < 0.5 else -1))
            out = reach * math.cos(way) + np.array((reach[1], -reach[0])) * math.sin(way)
            base = palm + out * width / 2 - reach * 5
            tip = base + out * rng.uniform(20, 40)
            cv2.line(
                shape,
                _pt(self.px(*base)),
                _pt(self.px(*tip)),
                255,
                max(2, round(rng.uniform(14, 20) * q)),
            )
        arm_end = palm - reach * 400
        arm = np.zeros_like(shape)
        cv2.line(arm, pp, _pt(self.px(*arm_end)), 255, max(2, round(rng.uniform(50, 75) * q)))
        skin = _hsv_bgr(
            rng.uniform(*SKIN_HSV[0]), rng.uniform(*SKIN_HSV[1]), rng.uniform(*SKIN_HSV[2])
        )
        body = np.maximum(shape, arm)
        shadow = np.asarray(
            cv2.GaussianBlur(body.astype(np.float32) / 255.0, (0, 0), rng.uniform(4, 12) * q),
            np.float32,
        )
        shift = rng.uniform(-15, 15, 2) * q
        move = np.array([[1, 0, shift[0]], [0, 1, shift[1]]], np.float32)
        shadow = np.asarray(cv2.warpAffine(shadow, move, shadow.shape[::-1]), np.float32)
        canvas *= 1.0 - rng.uniform(0.1, 0.4) * shadow[:, :, None]
        shade = cv2.GaussianBlur(body.astype(np.float32) / 255.0, (0, 0), 6 * q)
        lit = np.asarray(skin, np.float32) * (0.75 + 0.25 * shade[:, :, None])
        canvas[body > 0] = lit[body > 0]
        if rng.random() < 0.6:
            sleeve = np.zeros_like(shape)
            start = palm - reach * rng.uniform(60, 120)
            cv2.line(
                sleeve,
                _pt(self.px(*start)),
                _pt(self.px(*arm_end)),
                255,
                max(2, round(rng.uniform(70, 90) * q)),
            )
            canvas[sleeve > 0] = _hsv_bgr(
                rng.uniform(0, 360), rng.uniform(0, 0.8), rng.uniform(0.15, 0.95)
            )
            body = np.maximum(body, sleeve)
        canvas += 4.0 * rng.standard_normal(canvas.shape, np.float32) * (body[:, :, None] > 0)
        np.maximum(cover, body, out=cover)

    def _paste(
        self,
        canvas: Float,
        picture: Float,
        alpha: Float | None,
        x_mm: float,
        y_mm: float,
        mm_per_px: float,
        degrees: float,
        *,
        nearest: bool = False,
        cover: Float | None = None,
    ) -> None:
        """Lay a picture centred on (x_mm, y_mm), `mm_per_px` a picture pixel, turned
        `degrees` clockwise as seen; `cover` takes its opacity."""
        h, w = picture.shape[:2]
        s = mm_per_px * self.q
        u, v = self.px(x_mm, y_mm)
        reach = math.hypot(w, h) * s / 2 + 2
        m_side = canvas.shape[0]
        x0, y0 = max(0, math.floor(u - reach)), max(0, math.floor(v - reach))
        x1, y1 = min(m_side, math.ceil(u + reach)), min(m_side, math.ceil(v + reach))
        if x1 <= x0 or y1 <= y0:
            return
        mat = cv2.getRotationMatrix2D(((w - 1) / 2, (h - 1) / 2), -degrees, s)
        mat[:, 2] += (u - x0 - (w - 1) / 2, v - y0 - (h - 1) / 2)
        size = (x1 - x0, y1 - y0)
        flags = cv2.INTER_NEAREST if nearest else (cv2.INTER_AREA if s < 1 else cv2.INTER_LINEAR)
        colour = cv2.warpAffine(picture, mat, size, flags=flags)
        colour = colour.reshape(size[1], size[0], -1)
        opaque = np.ones((h, w), np.float32) if alpha is None else alpha
        a = cv2.warpAffine(opaque, mat, size, flags=cv2.INTER_LINEAR)[:, :, None]
        roi = canvas[y0:y1, x0:x1]
        roi[:] = roi * (1.0 - a) + colour * a
        if cover is not None:
            cover[y0:y1, x0:x1] = np.maximum(cover[y0:y1, x0:x1], a[:, :, 0])


def _pt(p: tuple[float, float]) -> tuple[int, int]:
    return round(p[0]), round(p[1])


def _hsv_bgr(h: float, s: float, v: float) -> tuple[float, float, float]:
    pixel = np.array([[[round(h / 2) % 180, round(s * 255), round(v * 255)]]], np.uint8)
    b, g, r = cv2.cvtColor(pixel, cv2.COLOR_HSV2BGR)[0, 0]
    return float(b), float(g), float(r)


def _table_colour(rng: np.random.Generator) -> list[float]:
    if rng.random() < 0.5:  # wood
        return list(_hsv_bgr(rng.uniform(18, 38), rng.uniform(0.35, 0.7), rng.uniform(0.3, 0.8)))
    return list(_hsv_bgr(rng.uniform(0, 360), rng.uniform(0, 0.6), rng.uniform(0.1, 0.9)))


def _random_tile(rng: np.random.Generator, px: int) -> Float:
    """A tile of no pack: blotches of a few colours."""
    cells = int(rng.integers(3, 7))
    colours = rng.uniform(20, 230, (cells, cells, 3)).astype(np.float32)
    return np.asarray(cv2.resize(colours, (px, px), interpolation=cv2.INTER_CUBIC), np.float32)


def _light(canvas: Float, rng: np.random.Generator, focus: tuple[int, int] | None = None) -> None:
    """Light level, colour cast, a gradient, perhaps a soft shadow and a glare spot (near
    `focus`, a pixel, half the time)."""
    m = canvas.shape[0]
    t = np.linspace(-1.0, 1.0, m, dtype=np.float32)
    angle = rng.uniform(0, 2 * math.pi)
    ramp = math.cos(angle) * t[None, :] + math.sin(angle) * t[:, None]
    gain = rng.uniform(0.5, 1.15) * (1.0 + rng.uniform(0, 0.3) * ramp)
    if rng.random() < 0.3:
        blob = np.zeros((m, m), np.float32)
        centre = (int(rng.integers(0, m)), int(rng.integers(0, m)))
        axes = (int(rng.integers(m // 10, m // 3)), int(rng.integers(m // 10, m // 3)))
        cv2.ellipse(blob, centre, axes, float(rng.uniform(0, 180)), 0, 360, 1.0, -1)
        blob = np.asarray(cv2.GaussianBlur(blob, (0, 0), rng.uniform(0.01, 0.05) * m), np.float32)
        gain = gain * (1.0 - rng.uniform(0.15, 0.45) * blob)
    cast = rng.uniform(0.82, 1.15, 3).astype(np.float32)
    canvas *= gain[:, :, None] * cast
    if rng.random() < 0.4:
        glare = np.zeros((m, m), np.float32)
        centre = (int(rng.integers(0, m)), int(rng.integers(0, m)))
        if focus is not None and rng.random() < 0.5:  # over the ship, give or take
            centre = (
                focus[0] + int(rng.integers(-m // 12, m // 12 + 1)),
                focus[1] + int(rng.integers(-m // 12, m // 12 + 1)),
            )
        cv2.circle(glare, centre, int(rng.integers(m // 30, m // 8)), 1.0, -1)
        glare = np.asarray(cv2.GaussianBlur(glare, (0, 0), rng.uniform(0.01, 0.04) * m), np.float32)
        canvas += rng.uniform(40, 130) * glare[:, :, None]


def _camera(canvas: Float, rng: np.random.Generator, n: int) -> Image:
    """Blur, sensor noise and JPEG, then reduced to the finder's scale."""
    out = np.asarray(cv2.GaussianBlur(canvas, (0, 0), rng.uniform(0.3, 1.6)), np.float32)
    out += rng.uniform(1, 6) * rng.standard_normal(out.shape, np.float32)
    pixels = np.clip(out + 0.5, 0, 255).astype(np.uint8)
    ok, data = cv2.imencode(".jpg", pixels, [cv2.IMWRITE_JPEG_QUALITY, int(rng.integers(35, 96))])
    if ok:
        pixels = cv2.imdecode(data, cv2.IMREAD_COLOR)
    return np.asarray(cv2.resize(pixels, (n, n), interpolation=cv2.INTER_AREA), np.uint8)
