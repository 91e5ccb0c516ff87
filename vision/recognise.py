"""What lies in a cell: a tile (which, turned how, how sure), nothing, or unknown.

A cell crop (vision.areas: square, area north up, centred on the nominal cell centre, the
tile plus a margin, at the model's px_per_mm) is read in four steps:

1. Empty? The tile's square (less a thin rim) is compared with what the cell shows when
   empty: the white mat or storage card (no reference) or the pack's board picture cut the
   same way (`empty_reference`, compared at small shifts: a seat's pose may be a millimetre
   off). Surely empty when the light model (below) with the empty look explains all but
   the noise and the colour is the empty look's under some light.
2. Where is the tile? Coarse templates of every candidate (tile type x rotation) slide over
   a small copy of the crop, one matrix product for all crops read together; the best few
   candidates' pose templates (detail along the pack's main colour directions) fix the
   tile's place to a fraction of a pixel and its small turn.
3. Which tile? The tile's square is cut straight along the found pose. Every candidate is
   ranked by per-channel correlation at a medium scale; the best are fitted under the light
   model: per colour channel a gain and an offset, each varying linearly across the tile.
4. How sure? Blocks that the best fit leaves far more unexplained than the rest are hidden
   (a hand, a cup, a ship, glare): too many and the cell is unknown; otherwise the fits are
   redone without them. The best answer is named only when it explains the tile well, with
   enough of its contrast (not washed out) and plausible colours, and, against each close
   rival meaning something else, the evidence is clear: how much better it fits, in units of
   how much the rival would miss were the best exactly right (+1 exactly the best, -1
   exactly the rival), with the two far enough apart for the noise. Two candidates meaning
   the same thing, or the same picture turned alike (a symmetric picture), are not rivals.
   A cell that might be empty is empty unless a tile clearly beats the empty look.
   Otherwise unknown: a wrong answer is far worse than unknown.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import lru_cache

import cv2
import numpy as np
from numpy.typing import NDArray

from companion.reading import UNKNOWN, CellRead
from vision.config import CellConfig
from vision.tilemodel import (
    Float,
    Image,
    TileModel,
    design_terms,
    halve_features,
    invert_normal,
    light_basis,
    normal_inverse,
    normal_matrices,
    pose_features,
    unexplained,
)

__all__ = ["CellMatch", "match_cells", "read_cell", "read_cells"]

Mask = NDArray[np.bool_]


@dataclass(frozen=True, slots=True)
class CellMatch:
    """A cell's read with the figures behind it (for benchmarks and tuning)."""

    read: CellRead
    best: int | None = None  # candidate index of the best fit
    fit: float = 0.0  # share of the tile's pattern the best fit explains
    evidence: float = 0.0  # against the closest rival meaning something else
    hidden: float = 0.0  # share of blocks taken as covered
    empty_rms: float = float("inf")  # what the empty look leaves unexplained (grey levels)
    reason: str = ""
    rival: int | None = None  # candidate index of the closest rival weighed


def read_cell(crop: Image, model: TileModel, empty_reference: Image | None = None) -> CellRead:
    """Read one cell crop: a tile (id, rotation, confidence), empty, or unknown."""
    return match_cells([crop], model, [empty_reference])[0].read


def read_cells(
    crops: Sequence[Image],
    model: TileModel,
    empty_references: Sequence[Image | None] | None = None,
) -> list[CellRead]:
    """Read many cell crops at once: the same answers as read_cell, in less time."""
    return [m.read for m in match_cells(crops, model, empty_references)]


# --- helpers -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Square:
    """An n x n pixel square with its smooth-light basis (1, x, y) and that basis' pinv."""

    n: int
    basis: Float
    pinv: Float


@lru_cache(maxsize=16)
def _square(n: int) -> _Square:
    basis = light_basis(n)
    return _Square(n, basis, np.linalg.pinv(basis).astype(np.float32))


def _check_crop(crop: Image, what: str) -> None:
    if not isinstance(crop, np.ndarray) or crop.ndim != 3 or crop.shape[2] != 3:
        shape = getattr(crop, "shape", None)
        raise ValueError(f"{what} must be a colour picture (rows, cols, 3), not shape {shape}")
    if crop.shape[0] != crop.shape[1] or crop.shape[0] < 8:
        raise ValueError(f"{what} must be square and at least 8 px, not {crop.shape[:2]}")
    if crop.dtype != np.uint8:
        raise ValueError(f"{what} must have 8-bit pixels, not {crop.dtype}")


def _scaled(crop: Image, side: int) -> Float:
    small = cv2.resize(crop, (side, side), interpolation=cv2.INTER_AREA)
    out: Float = np.asarray(small, np.float32)
    return out


def _light_residual(x: Float, sq: _Square, keep: Mask | None = None) -> float:
    """Sum of squares the smooth light alone leaves of x (M, 3), over the kept pixels."""
    if keep is None:
        res = x - sq.basis @ (sq.pinv @ x)
    else:
        basis = sq.basis[keep]
        coef = np.linalg.solve(basis.T @ basis + np.eye(3) * 1e-6, basis.T @ x[keep])
        res = x[keep] - basis @ coef
    return float(np.einsum("mc,mc->", res, res))


def _predict(terms: Float, basis: Float, coef: NDArray[np.float64]) -> Float:
    """A candidate's fitted picture (M, 3) from its terms (3, 3, M) and coefficients (3, 6)."""
    gain = np.einsum("cjm,cj->mc", terms, coef[:, :3])
    out: Float = (gain + basis @ coef[:, 3:].T).astype(np.float32)
    return out


def _cut(fine: Float, n: int, shift: tuple[int, int] = (0, 0)) -> Float:
    """The n x n square of a fine crop, centred but for `shift` (x, y) pixels, as (n * n, 3)."""
    lo = (fine.shape[0] - n) // 2
    x0 = min(max(lo + shift[0], 0), fine.shape[1] - n)
    y0 = min(max(lo + shift[1], 0), fine.shape[0] - n)
    out: Float = np.ascontiguousarray(fine[y0 : y0 + n, x0 : x0 + n]).reshape(-1, 3)
    return out


def _registered(fine: Float, sq: _Square, ref: _Reference, reach: int) -> tuple[int, int]:
    """The shift (x, y), within `reach` pixels, at which the board picture best fits the
    crop: the seat's pose may put the crop a millimetre or two off the printed cell."""
    def best(shifts: list[tuple[int, int]]) -> tuple[int, int]:
        obs = np.stack([_cut(fine, sq.n, d) for d in shifts])
        count = len(shifts)
        terms = np.broadcast_to(ref.wide_terms, (count, *ref.wide_terms.shape[1:]))
        ninv = np.broadcast_to(ref.wide_ninv, (count, *ref.wide_ninv.shape[1:]))
        rss, _coef = unexplained(terms, ninv, sq.basis, obs)
        return shifts[int(np.argmin(rss))]

    # Across, then along (the printed outline's two directions fix the two shifts).
    dx, _ = best([(d, 0) for d in range(-reach, reach + 1)])
    return best([(dx, d) for d in range(-reach, reach + 1)])


@lru_cache(maxsize=16)
def _block_edges(n: int, blocks: int) -> tuple[NDArray[np.intp], Float]:
    """Where blocks start along a side, and each block's pixel count (blocks x blocks)."""
    edges = np.linspace(0, n, blocks + 1).round().astype(np.intp)
    sizes = np.diff(edges).astype(np.float32)
    return edges[:-1], np.outer(sizes, sizes)


def _block_sums(values: Float, n: int, blocks: int) -> Float:
    """Mean of an n x n map (given flat) over blocks x blocks blocks."""
    starts, counts = _block_edges(n, blocks)
    sums = np.add.reduceat(np.add.reduceat(values.reshape(n, n), starts, axis=0), starts, axis=1)
    out: Float = (sums / counts).astype(np.float32)
    return out


def _block_contrast(picture: Float, n: int, blocks: int) -> Float:
    """Per block: mean squared deviation from the block's own mean colour (channels summed)."""
    mean_sq = _block_sums((picture * picture).sum(axis=1), n, blocks)
    means = np.stack(
        [_block_sums(np.ascontiguousarray(picture[:, c]), n, blocks) for c in range(3)]
    )
    out: Float = np.maximum(mean_sq - (means * means).sum(axis=0), 0.0).astype(np.float32)
    return out


def _hidden_blocks(res: Float, n: int, cfg: CellConfig, predicted: Float | None = None) -> Mask:
    """Blocks that something covers: their residual is far above the typical block's (a low
    quantile, for a cover may be big) and, where the picture has detail of its own, above
    a share of that detail (blur and a slightly wrong place leave some of it unexplained;
    a cover leaves all of it and more)."""
    blocks = _block_sums(res, n, cfg.blocks)
    flat = blocks.ravel()
    rank = int(cfg.typical_quantile * (flat.size - 1))
    typical = float(np.partition(flat, rank)[rank])
    out: Mask = blocks > max(cfg.occluded_ratio * typical, cfg.occluded_floor)
    if predicted is not None and out.any():
        out &= blocks > cfg.occluded_detail * _block_contrast(predicted, n, cfg.blocks)
    return out


def _block_mask(hidden: Mask, n: int) -> Mask:
    """Pixels (n * n) kept when the hidden blocks are left out."""
    edges = np.linspace(0, n, hidden.shape[0] + 1).round().astype(int)
    sizes = np.diff(edges)
    out: Mask = np.repeat(np.repeat(~hidden, sizes, axis=0), sizes, axis=1).ravel()
    return out


def _colour_misfit(
    obs_mean: NDArray[np.floating], ref_mean: NDArray[np.floating], min_gain: float
) -> float:
    """How far a patch's mean colour is from the reference's under some light: the largest
    channel misfit as a share of the patch's mean brightness.

    The light may scale every channel alike and add white alike (glare): obs = a * ref + b,
    a >= 0 and b >= 0 (the best such pair)."""
    obs = np.asarray(obs_mean, np.float64)
    ref = np.asarray(ref_mean, np.float64)
    brightness = max(float(obs.mean()), 1.0)
    options = [(max(float(obs @ ref) / max(float(ref @ ref), 1.0), 0.0), 0.0)]
    if float(np.std(ref)) < 10.0:
        # A nearly grey reference cannot tell light from glare: any grey will do.
        options.append((0.0, max(float(obs.mean()), 0.0)))
    else:
        # A coloured one must show its colours: the light keeps at least min_gain of them.
        options = [(a, b) for a, b in options if a >= min_gain]
    spread = float(np.std(ref))
    if spread >= 1.0:
        a = float(np.mean((ref - ref.mean()) * (obs - obs.mean()))) / (spread * spread)
        b = float(obs.mean()) - a * float(ref.mean())
        if a >= (min_gain if spread >= 10.0 else 0.0) and b >= 0:
            options.append((a, b))
    if not options:
        return float("inf")
    return min(float(np.abs(obs - a * ref - b).max()) for a, b in options) / brightness


def _structure_gain(coef: NDArray[np.float64], energy: NDArray[np.floating]) -> float:
    """The fitted gain at the tile's centre, averaged over channels by their pattern energy."""
    w = np.asarray(energy, np.float64)
    return float((coef[:, 0] * w).sum() / max(float(w.sum()), 1e-9))


def _gain_spread(coef: NDArray[np.float64], energy: NDArray[np.floating]) -> float:
    """How unequally the light had to scale the channels (largest over smallest gain, over
    channels with a pattern worth weighing); infinite when such a gain is not positive."""
    e = np.asarray(energy, np.float64)
    gains = coef[e >= 0.25 * float(e.max()), 0]
    if gains.min() <= 0:
        return float("inf")
    return float(gains.max() / gains.min())


# --- step 1: empty -----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Reference:
    """A board cell's empty picture, prepared for one crop size: the wide square (tile and a
    little more) and the tile's inner square, each with its light-model terms."""

    wide: Float  # (Mw, 3)
    wide_terms: Float  # (1, 3, 3, Mw)
    wide_ninv: Float
    pattern: float  # per-pixel energy the light alone leaves of the wide square
    energy: Float  # the same per channel (3,)
    inner_terms: Float  # (1, 3, 3, M)


_REFERENCES: OrderedDict[tuple[int, int, bytes], _Reference] = OrderedDict()
_REFERENCES_KEPT = 512


def _reference(reference: Image, model: TileModel, side: int) -> _Reference:
    """The prepared empty picture (cached: the same board cells come back every frame)."""
    digest = hashlib.blake2b(reference.tobytes(), digest_size=16).digest()
    key = (id(model), side, digest + bytes(str(reference.shape), "ascii"))
    hit = _REFERENCES.get(key)
    if hit is not None:
        _REFERENCES.move_to_end(key)
        return hit
    cfg = model.config
    ref = _scaled(reference, side)
    if cfg.reference_blur_px > 0:
        ref = np.asarray(cv2.GaussianBlur(ref, (0, 0), cfg.reference_blur_px,
                                          borderType=cv2.BORDER_REPLICATE), np.float32)
    sq = _square(_wide_px(model))
    wide = _cut(ref, sq.n)
    wide_terms = design_terms(wide, sq.basis)[None]
    inner = _cut(ref, model.inner_px)
    prepared = _Reference(
        wide=wide,
        wide_terms=wide_terms,
        wide_ninv=normal_inverse(wide_terms, sq.basis),
        pattern=_light_residual(wide, sq) / len(wide),
        energy=np.einsum("mc,mc->c", light := wide - sq.basis @ (sq.pinv @ wide), light)
        / len(wide),
        inner_terms=design_terms(inner, model.basis)[None],
    )
    _REFERENCES[key] = prepared
    if len(_REFERENCES) > _REFERENCES_KEPT:
        _REFERENCES.popitem(last=False)
    return prepared


def _wide_px(model: TileModel) -> int:
    cfg = model.config
    return round((model.tile_mm + 2 * cfg.empty_extra_mm) * cfg.tile_px / model.tile_mm)


@dataclass(frozen=True, slots=True)
class _EmptyLook:
    """How well a cell's square fits what the cell shows when empty."""

    rms: float  # left unexplained by the empty look (grey levels), covered blocks left out
    rms_all: float  # the same over the whole square
    looks: bool  # colour (and the board's own pattern) as the empty look's under some light
    reference: _Reference | None  # None: the plain mat or card
    shift: tuple[int, int] = (0, 0)  # where the board picture fits best (fine px)
    gain: float = float("nan")  # how much of the board picture's contrast is seen

    def inner_fit(self, model: TileModel, picture: Float) -> float:
        """What the empty look leaves unexplained of a picture of the tile's inner square."""
        if self.reference is None:
            return _light_residual(picture, _square(model.inner_px))
        terms = self.reference.inner_terms
        rss, _coef = unexplained(terms, normal_inverse(terms, model.basis), model.basis, picture)
        return float(rss[0])


def _empty_residual(
    obs: Float, sq: _Square, ref: _Reference | None, keep: Mask | None
) -> tuple[Float, Float]:
    """The empty look fitted over the kept pixels: its picture (M, 3) and the per-pixel
    squared residual (M,)."""
    if ref is None:
        if keep is None:
            fitted = sq.basis @ (sq.pinv @ obs)
        else:
            coef, *_ = np.linalg.lstsq(sq.basis[keep], obs[keep], rcond=None)
            fitted = sq.basis @ coef
    else:
        if keep is None:
            ninv, xm = ref.wide_ninv, obs
        else:
            w = keep.astype(np.float32)
            ninv, xm = normal_inverse(ref.wide_terms, sq.basis, w), obs * w[:, None]
        _rss, coef = unexplained(ref.wide_terms, ninv, sq.basis, xm)
        fitted = _predict(ref.wide_terms[0], sq.basis, coef[0])
    res = obs - fitted
    return np.asarray(fitted, np.float32), (res * res).sum(axis=1).astype(np.float32)


def _empty_look(fine: Float, model: TileModel, ref: _Reference | None) -> _EmptyLook:
    """Compare the cell's square with the empty mat or card (no reference) or board cell.

    Blocks far worse than the rest (a hand, a shell over part of the cell) are left out when
    they are few; the cell is then judged on the rest."""
    cfg = model.config
    sq = _square(_wide_px(model))
    shift = (0, 0) if ref is None else _registered(fine, sq, ref, cfg.empty_shift_px)
    obs = _cut(fine, sq.n, shift)
    fitted, res = _empty_residual(obs, sq, ref, None)
    rms_all = float(np.sqrt(res.sum() / obs.size))
    hidden = _hidden_blocks(res, sq.n, cfg, fitted if ref is not None else None)
    keep: Mask | None = None
    if hidden.any() and hidden.mean() <= cfg.max_hidden:
        keep = _block_mask(hidden, sq.n)
        res = _empty_residual(obs, sq, ref, keep)[1][keep]
    kept_obs = obs if keep is None else obs[keep]
    rms = float(np.sqrt(res.sum() / (3 * len(res))))
    if ref is None:
        # The white mat or storage card: flat, grey under a plausible warm or cold cast, and
        # as bright as the paper around the tile's place (the brightest of the crop's rim).
        misfit = _colour_misfit(kept_obs.mean(axis=0), np.full(3, 255.0), cfg.min_gain)
        paper = _paper_white(fine, model)
        bright = float(kept_obs.mean()) >= cfg.empty_min_white * paper
        return _EmptyLook(rms, rms_all, misfit <= cfg.empty_max_cast and bright, None, shift)
    kept_ref = ref.wide if keep is None else ref.wide[keep]
    misfit = _colour_misfit(kept_obs.mean(axis=0), kept_ref.mean(axis=0), cfg.min_gain)
    looks = misfit <= cfg.empty_max_cast
    # A board picture with a pattern of its own must show it (not a flat thing over the
    # cell): some of its pattern's energy must be there (fine print is softened by the
    # lens, so less than a tile needs).
    _rss, coef = unexplained(ref.wide_terms, ref.wide_ninv, sq.basis, obs)
    gain = _structure_gain(coef[0], ref.energy)
    if ref.pattern >= cfg.empty_min_pattern**2:
        seen = _light_residual(obs, sq) / len(obs)
        looks = looks and seen >= cfg.empty_min_gain**2 * ref.pattern
    return _EmptyLook(rms, rms_all, looks, ref, shift, gain)


def _paper_white(fine: Float, model: TileModel) -> float:
    """How bright the paper is around the cell: a high quantile of the crop's rim beyond the
    tile's nominal square (neighbouring tiles may reach in, the gaps between them do not)."""
    side = fine.shape[0]
    n = round(model.config.tile_px)
    lo = max((side - n) // 2, 1)
    grey = fine.mean(axis=2)
    middle = grey[lo : side - lo]
    rim = np.concatenate([grey[:lo].ravel(), grey[side - lo :].ravel(),
                          middle[:, :lo].ravel(), middle[:, side - lo :].ravel()])
    rank = int(model.config.paper_quantile * (rim.size - 1))
    return float(np.partition(rim, rank)[rank])


def _empty(look: _EmptyLook, model: TileModel) -> CellMatch:
    cfg = model.config
    confidence = float(np.clip(1.5 - look.rms / cfg.empty_max_rms, 0.5, 1.0))
    return CellMatch(CellRead(empty=True, confidence=round(confidence, 4)), empty_rms=look.rms,
                     reason="empty")


# --- step 2: where the tile lies -----------------------------------------------------------


def _coarse_windows(
    crop: Image, model: TileModel, crop_mm: float
) -> tuple[Float, NDArray[np.float64]]:
    """Every coarse window of the crop, zero mean per channel and unit norm (P, D), and each
    window's tile centre offset from the crop's centre in mm (P, 2)."""
    cfg = model.config
    nc = cfg.coarse_tile_px
    side = max(nc, round(crop_mm * nc / model.tile_mm))
    planes = np.ascontiguousarray(_scaled(crop, side).transpose(2, 0, 1))
    b = model.rim_px(nc, cfg.coarse_border_mm)
    win = nc - 2 * b
    steps = side - win + 1
    views = np.lib.stride_tricks.sliding_window_view(planes, (win, win), axis=(1, 2))
    windows = views.transpose(1, 2, 0, 3, 4).reshape(steps * steps, 3, win * win)
    windows = windows - windows.mean(axis=2, keepdims=True)
    flat = windows.reshape(steps * steps, -1)
    flat = flat / np.maximum(np.linalg.norm(flat, axis=1, keepdims=True), 1e-3)
    pos = np.arange(steps, dtype=np.float64) + (win - 1) / 2 - (side - 1) / 2
    gy, gx = np.meshgrid(pos, pos, indexing="ij")
    offsets = np.stack([gx.ravel(), gy.ravel()], axis=1) * (crop_mm / side)
    return np.ascontiguousarray(flat, np.float32), offsets


def _parabola(a: float, b: float, c: float) -> float:
    """Vertex offset (-0.5..0.5) of a parabola through (-1, a), (0, b), (1, c)."""
    den = a - 2 * b + c
    if den >= 0:
        return 0.0
    return float(np.clip(0.5 * (a - c) / den, -0.5, 0.5))


@dataclass(frozen=True, slots=True)
class _Pose:
    centre: tuple[float, float]  # tile centre in fine-crop pixels
    angle: float  # degrees, counter-clockwise as seen (OpenCV's rotation sense)
    score: float


def _pose_windows(feats: Float, x0: int, y0: int, n_p: int, steps: int) -> tuple[Float, Float]:
    """Windows (steps², features) of the pose features from (x0, y0), and their norms."""
    region = feats[:, y0 : y0 + n_p + steps - 1, x0 : x0 + n_p + steps - 1]
    views = np.lib.stride_tricks.sliding_window_view(region, (n_p, n_p), axis=(1, 2))
    windows = views.transpose(1, 2, 0, 3, 4).reshape(steps * steps, -1)
    norms = np.sqrt(np.maximum(np.einsum("pf,pf->p", windows, windows), 1e-6))
    return np.ascontiguousarray(windows), norms.astype(np.float32)


def _find_pose(
    feats: Float, model: TileModel, ks: list[int], offsets: list[NDArray[np.float64]], scale: float
) -> tuple[int, _Pose]:
    """Which of candidates ks places the tile best, and where: each searched around its own
    coarse place at every turn; then the best one's sub-pixel place and turn."""
    cfg = model.config
    side = feats.shape[1]
    angles = cfg.pose_angles_deg
    n_p = round(np.sqrt(model.pose.shape[2] / feats.shape[0]))
    # First at half the scale: every candidate, every turn, around its coarse place.
    half = halve_features(feats)
    h_side, h_p = half.shape[1], n_p // 2
    r = max(1, cfg.pose_search_px // 2)
    steps = 2 * r + 1
    best: tuple[float, int, int, int] | None = None  # score, k, x, y (full scale)
    for k, offset in zip(ks, offsets, strict=True):
        cx = ((side - 1) / 2 + offset[0] * scale - (n_p - 1) / 2) / 2
        cy = ((side - 1) / 2 + offset[1] * scale - (n_p - 1) / 2) / 2
        x0 = min(max(round(cx) - r, 0), h_side - h_p - 2 * r)
        y0 = min(max(round(cy) - r, 0), h_side - h_p - 2 * r)
        windows, norms = _pose_windows(half, x0, y0, h_p, steps)
        scores = (windows @ model.pose_half[k].T).max(axis=1) / norms  # best turn per place
        p = int(np.argmax(scores))
        if best is None or scores[p] > best[0]:
            best = (float(scores[p]), k, 2 * (x0 + p % steps), 2 * (y0 + p // steps))
    assert best is not None
    _score, k, bx, by = best
    # Then at full scale, every turn around the best place, two pixels each way.
    n = 5
    x0 = min(max(bx - 2, 0), side - n_p - n + 1)
    y0 = min(max(by - 2, 0), side - n_p - n + 1)
    windows, norms = _pose_windows(feats, x0, y0, n_p, n)
    results = ((windows @ model.pose[k].T) / norms[:, None]).T.reshape(len(angles), n, n)
    a, iy, ix = np.unravel_index(int(np.argmax(results)), results.shape)
    res = results[a]
    dx = _parabola(res[iy, ix - 1], res[iy, ix], res[iy, ix + 1]) if 0 < ix < n - 1 else 0.0
    dy = _parabola(res[iy - 1, ix], res[iy, ix], res[iy + 1, ix]) if 0 < iy < n - 1 else 0.0
    angle = angles[a]
    if 0 < a < len(angles) - 1:
        step = (angles[a + 1] - angles[a - 1]) / 2
        angle += step * _parabola(results[a - 1, iy, ix], results[a, iy, ix],
                                  results[a + 1, iy, ix])
    centre = (x0 + ix + dx + (n_p - 1) / 2, y0 + iy + dy + (n_p - 1) / 2)
    return k, _Pose(centre, float(angle), float(res[iy, ix]))


def _aligned(fine: Float, model: TileModel, pose: _Pose, scale: float) -> Float:
    """The tile's inner square cut from the fine crop along the found pose: (M, 3)."""
    n_i = model.inner_px
    s = scale * model.tile_mm / model.config.tile_px  # fine-crop px per template px
    a = np.radians(pose.angle)
    rot = np.array([[np.cos(a), np.sin(a)], [-np.sin(a), np.cos(a)]]) * s
    half = (n_i - 1) / 2
    shift = np.array(pose.centre) - rot @ np.array([half, half])
    m = np.hstack([rot, shift[:, None]])
    patch = cv2.warpAffine(fine, m, (n_i, n_i), flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP,
                           borderMode=cv2.BORDER_REPLICATE)
    out: Float = np.asarray(patch, np.float32).reshape(-1, 3)
    return out


# --- steps 3 and 4: which tile, how sure ---------------------------------------------------


def _ranked(x: Float, model: TileModel) -> NDArray[np.intp]:
    """Every candidate ranked by per-channel correlation at the medium scale, best first."""
    n_i, m = model.inner_px, model.medium_px
    small = cv2.resize(x.reshape(n_i, n_i, 3), (m, m), interpolation=cv2.INTER_AREA)
    chans = np.asarray(small, np.float32).reshape(-1, 3).T
    chans = chans - chans.mean(axis=1, keepdims=True)
    dots = np.matmul(model.medium, chans.T)  # (K, 3, 3): every channel with every channel
    mine = dots[:, [0, 1, 2], [0, 1, 2]]
    explained = (np.maximum(mine, 0.0) ** 2).sum(axis=1)
    return np.argsort(-explained)


@dataclass(frozen=True, slots=True)
class _Fits:
    ks: list[int]
    rss: NDArray[np.float64]
    coef: NDArray[np.float64]
    base: float  # what the light alone leaves

    def best(self) -> int:
        return int(np.argmin(self.rss))

    @property
    def share(self) -> float:
        return float(1.0 - self.rss.min() / max(self.base, 1e-6))


def _masked_inverse(model: TileModel, ks: list[int], keep: Mask) -> Float:
    """Inverse normal matrices of candidates ks without the pixels left out: the full normal
    matrices less what the (few) hidden pixels add."""
    hidden = ~keep
    gram = model.gram[ks]
    if hidden.any():
        gram = gram - normal_matrices(np.ascontiguousarray(model.terms[ks][..., hidden]),
                                      model.basis[hidden])
    return invert_normal(gram)


def _fits(model: TileModel, ks: list[int], x: Float, keep: Mask | None) -> _Fits:
    terms = model.terms[ks]
    sq = _square(model.inner_px)
    if keep is None:
        rss, coef = unexplained(terms, model.normal_inv[ks], model.basis, x)
        return _Fits(ks, rss, coef, _light_residual(x, sq))
    rss, coef = unexplained(terms, _masked_inverse(model, ks, keep), model.basis,
                            x * keep[:, None])
    return _Fits(ks, rss, coef, _light_residual(x, sq, keep))


def _is_rival(model: TileModel, best: int, k: int) -> bool:
    return bool(model.groups[k] != model.groups[best] and not model.twins[best, k])


@dataclass(frozen=True, slots=True)
class _Verdict:
    match: CellMatch
    predicted: Float  # the best fit's picture of the tile's inner square (M, 3)
    rss: float  # what it leaves of the whole square
    others: list[int]  # candidates of the first fit, best first (the best one included)


def _covered(x: Float, fits: _Fits, model: TileModel) -> Mask:
    """Blocks none of the best-fitting few candidates explains (a detail one of them lacks,
    such as a garland, is not a cover when another candidate has it)."""
    cfg = model.config
    n_i = model.inner_px
    hidden: Mask | None = None
    for j in np.argsort(fits.rss)[: cfg.cover_witnesses]:
        predicted = _predict(model.terms[fits.ks[j]], model.basis, fits.coef[j])
        mine = _hidden_blocks(((x - predicted) ** 2).sum(axis=1), n_i, cfg, predicted)
        hidden = mine if hidden is None else hidden & mine
        if not hidden.any():
            break
    assert hidden is not None
    return hidden


def _decide(model: TileModel, x: Float, first: int) -> _Verdict:
    """Which candidate the straight-cut inner square x (M, 3) shows, and how sure."""
    cfg = model.config
    order = _ranked(x, model)
    shortlist = [int(k) for k in order[: cfg.shortlist]]
    if first not in shortlist:
        shortlist.append(first)
    fits = _fits(model, shortlist, x, None)
    others = [fits.ks[j] for j in np.argsort(fits.rss)]
    n_i = model.inner_px
    keep: Mask | None = None
    share_hidden = 0.0
    # Covered blocks: far more left unexplained than the typical block. The fit is redone
    # without them, for the closest few candidates (a big cover spoils the first fit).
    for _ in range(cfg.cover_passes):
        hidden = _covered(x, fits, model)
        share_hidden = float(hidden.mean())
        if share_hidden > cfg.max_hidden:
            break
        mask = _block_mask(hidden, n_i) if hidden.any() else None
        if (mask is None and keep is None) or (
            mask is not None and keep is not None and bool(np.array_equal(mask, keep))
        ):
            break
        keep = mask
        closest = [fits.ks[j] for j in np.argsort(fits.rss)[: cfg.refit]]
        fits = _fits(model, closest, x, keep)
    i = fits.best()
    best = fits.ks[i]
    predicted = _predict(model.terms[best], model.basis, fits.coef[i])
    whole = float(((x - predicted) ** 2).sum())

    def unknown(reason: str, evidence: float = 0.0, rival: int | None = None) -> _Verdict:
        match = CellMatch(UNKNOWN, best, fits.share, evidence, share_hidden, reason=reason,
                          rival=rival)
        return _Verdict(match, predicted, whole, others)

    if share_hidden > cfg.max_hidden:
        return unknown("covered")
    kept = x.shape[0] if keep is None else int(keep.sum())
    rms = float(np.sqrt(fits.rss[i] / (3 * kept)))
    faint_ok = rms <= cfg.max_fit_rms and keep is None  # a plain tile, nothing covering it
    if fits.share < cfg.min_fit_floor or (fits.share < cfg.min_fit and not faint_ok):
        return unknown("poor fit")
    if _structure_gain(fits.coef[i], model.energy[best]) < cfg.min_gain:
        return unknown("washed out")
    if _gain_spread(fits.coef[i], model.energy[best]) > cfg.max_gain_spread:
        return unknown("colours")
    rivals = sorted((j for j, k in enumerate(fits.ks) if _is_rival(model, best, k)),
                    key=lambda j: fits.rss[j])[: cfg.rivals]
    evidence, rival, separation = 1.0, None, float("inf")
    if rivals:
        # What each rival would miss were the best exactly right, and the noise per value.
        ks = [fits.ks[j] for j in rivals]
        terms = model.terms[ks]
        if keep is None:
            apart, _coef = unexplained(terms, model.normal_inv[ks], model.basis, predicted)
        else:
            apart, _coef = unexplained(terms, _masked_inverse(model, ks, keep), model.basis,
                                       predicted * keep[:, None])
        apart = np.maximum(apart, 1e-6)
        noise = max(float(np.sqrt(fits.rss[i] / max(3 * kept - 18, 1))), 1.0)
        ev = (fits.rss[rivals] - fits.rss[i]) / apart
        j = int(np.argmin(ev))
        evidence, rival = float(ev[j]), ks[j]
        separation = float(np.sqrt(apart.min()) / (2 * noise))
    if separation < cfg.min_separation:
        return unknown("faint", evidence, rival)
    if evidence < cfg.min_evidence:
        return unknown("doubtful", evidence, rival)
    confidence = min(evidence / cfg.full_evidence, max(fits.share / cfg.full_fit, 0.5), 1.0)
    confidence *= 1.0 - 0.5 * share_hidden
    read = CellRead(model.ids[best], model.rotations[best], round(float(max(confidence, 0.0)), 4))
    match = CellMatch(read, best, fits.share, evidence, share_hidden, reason="tile", rival=rival)
    return _Verdict(match, predicted, whole, others)


def _settle(verdict: _Verdict, look: _EmptyLook, empty_rss: float, model: TileModel) -> CellMatch:
    """Weigh the tile found against the empty look, when the cell might be empty."""
    cfg = model.config
    match = replace(verdict.match, empty_rms=look.rms)
    if not (look.looks and look.rms <= cfg.empty_max_rms):
        return match
    delta = empty_rss - verdict.rss  # how much more of the tile's square the tile explains
    if match.read.tile is not None:
        apart = look.inner_fit(model, verdict.predicted)  # what the empty look misses of it
        evidence = delta / max(apart, 1e-6)
        if evidence >= cfg.min_evidence:
            return match
        return replace(match, read=UNKNOWN, evidence=min(evidence, match.evidence),
                       reason="empty?")
    # No tile named. Empty when the board picture is seen at its full contrast (no tile's
    # glare would leave that), or when no tile explains clearly more than the empty look
    # and nothing looks like a tile at all; otherwise (a faint tile pattern) unknown.
    if look.gain >= cfg.empty_full_gain:
        return _empty(look, model)
    noise = max(min(empty_rss, verdict.rss) / verdict.predicted.size, 1.0)
    if delta <= cfg.empty_max_excess * noise and match.fit < cfg.min_fit_floor:
        return _empty(look, model)
    return match


@dataclass(frozen=True, slots=True)
class _Pending:
    index: int
    fine: Float
    scale: float  # fine-crop px per mm
    offsets: NDArray[np.float64]
    look: _EmptyLook


def _read_tile(job: _Pending, scores: Float, model: TileModel) -> CellMatch:
    cfg = model.config
    # The candidates that match best at their best coarse places each search the tile's
    # place; the best placed fixes it, with its turn.
    where = np.argmax(scores, axis=0)
    top = np.argsort(-scores[where, np.arange(scores.shape[1])])[: cfg.pose_candidates]
    tried = [int(k) for k in top]
    feats = pose_features(job.fine, model.pose_colours, cfg.pose_highpass_px)
    k, pose = _find_pose(feats, model, tried, [job.offsets[where[k]] for k in tried], job.scale)
    x = _aligned(job.fine, model, pose, job.scale)
    verdict = _decide(model, x, k)
    # The tile may be none of those that placed it (a wrong place fits everything worse):
    # when no tile is named, or a candidate that did not place it won, place it again with
    # the best-fitting ones that have not tried yet.
    retry = [c for c in verdict.others if c not in tried]
    if verdict.match.read.tile is not None:
        # A close rival that did not place the tile is given its own place too: a place
        # found by one picture flatters it against a slightly different other.
        rival = verdict.match.rival
        if verdict.match.best not in tried:
            retry = retry[:1]
        elif rival is not None and rival not in tried and (
            verdict.match.evidence < cfg.recheck_evidence
        ):
            retry = [rival]
        else:
            retry = []
    elif job.look.looks or verdict.match.fit < cfg.min_fit_floor:
        retry = []  # an empty cell, or nothing like a tile: no place will make it one
    for k2 in retry[: cfg.pose_retries]:
        tried.append(k2)
        _k, pose2 = _find_pose(feats, model, [k2], [job.offsets[where[k2]]], job.scale)
        x2 = _aligned(job.fine, model, pose2, job.scale)
        verdict2 = _decide(model, x2, k2)
        if verdict2.match.fit > verdict.match.fit:
            verdict, x = verdict2, x2
    if not (job.look.looks and job.look.rms <= cfg.empty_max_rms):
        return replace(verdict.match, empty_rms=job.look.rms)
    empty_rss = job.look.inner_fit(model, _cut(job.fine, model.inner_px, job.look.shift))
    return _settle(verdict, job.look, empty_rss, model)


def match_cells(
    crops: Sequence[Image],
    model: TileModel,
    empty_references: Sequence[Image | None] | None = None,
) -> list[CellMatch]:
    """Read cell crops and keep the figures behind each answer."""
    refs = list(empty_references) if empty_references is not None else [None] * len(crops)
    if len(refs) != len(crops):
        raise ValueError(f"{len(crops)} crops but {len(refs)} empty references")
    cfg = model.config
    out: list[CellMatch | None] = [None] * len(crops)
    pending: list[_Pending] = []
    windows: list[Float] = []
    for i, (crop, ref) in enumerate(zip(crops, refs, strict=True)):
        _check_crop(crop, "a cell crop")
        if ref is not None:
            _check_crop(ref, "an empty reference")
            if ref.shape != crop.shape:
                raise ValueError(f"an empty reference must match its crop's size {crop.shape[:2]}")
        crop_mm = crop.shape[0] / model.px_per_mm
        if crop_mm < model.tile_mm + 2 * cfg.empty_extra_mm:
            raise ValueError(
                f"a cell crop of {crop_mm:.0f} mm is too small for a {model.tile_mm:g} mm tile"
            )
        side = max(8, round(crop_mm * cfg.tile_px / model.tile_mm))
        fine = _scaled(crop, side)
        prepared = None if ref is None else _reference(ref, model, side)
        look = _empty_look(fine, model, prepared)
        sure = cfg.empty_sure_rms if ref is not None else cfg.mat_sure_rms
        if look.looks and look.rms_all <= sure:
            out[i] = _empty(look, model)
            continue
        flat, offsets = _coarse_windows(crop, model, crop_mm)
        windows.append(flat)
        pending.append(_Pending(i, fine, side / crop_mm, offsets, look))
    if pending:
        scores = np.concatenate(windows) @ model.coarse.T  # one product for every crop
        start = 0
        for job in pending:
            count = len(job.offsets)
            out[job.index] = _read_tile(job, scores[start : start + count], model)
            start += count
    return [m for m in out if m is not None]
