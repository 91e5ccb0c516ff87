"""What lies in a cell: a tile (which, turned how, how sure), nothing, or unknown.

A cell crop (vision.reader.areas: square, area north up, centred on the nominal cell centre, the
tile plus a margin, at the model's px_per_mm) is read in four steps:

1. Empty? The tile's square (less a thin rim) is compared with what the cell shows when
   empty: the white mat or storage card (no reference) or the pack's board picture cut the
   same way (`empty_reference`, compared at small shifts: a seat's pose may be a millimetre
   off). Surely empty when the light model (below) with the empty look explains all but
   the noise and the colour is the empty look's under some light. Never empty when a
   plain cell lies partly in glare far whiter than the paper round its light group's cells
   (a lamp's reflection may wash a tile out altogether), nor when a board cell's own
   picture is not seen where nothing covers it (a plain tile or an arm lies over it).
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
   A cell that might be empty is empty unless a tile clearly beats the empty look; a tile
   named with covered blocks left out must beat the empty look the same way over the
   blocks neither takes as covered (or the cell is unknown).
   Otherwise unknown: a wrong answer is far worse than unknown.

The crops read together (a table's cells) go through steps 1 to 3 as stacked arrays (crops
of one size at once: the empty looks with their shift search, the coarse and pose searches,
the ranking); each crop then takes its own way through the fits of step 4, and a crop placed
again (step 2 by other candidates) or looked at again is read on its own.
"""

from __future__ import annotations

import math
from collections import OrderedDict
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any

import cv2
import numpy as np
from numpy.typing import NDArray

from companion.reading import UNKNOWN, CellRead
from vision.box.tilemodel import (
    Float,
    Image,
    TileModel,
    block_members,
    design_terms,
    fit_light,
    fit_light_many,
    fit_light_shared,
    halve_features_many,
    invert_normal,
    light_basis,
    normal_inverse,
    normal_matrices,
    pose_features_many,
)
from vision.config import CellConfig
from vision.reader.areas import parabola_vertex
from vision.reader.second_look import second_looks

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
    # Board cells read empty: the light the cell's colour asks of its board picture (its
    # mean colour over the picture's, per channel), and whether it was empty beyond doubt.
    light: tuple[float, float, float] | None = None
    sure: bool = False
    # Tiles named: the black the fitted light adds at the tile's centre (grey levels per
    # channel; a lamp's glare adds white, a cover taken for the tile's colours may not).
    veil: tuple[float, float, float] | None = None
    # The figures the learned judge (vision.box.judge) weighs: the tile candidate weighed last
    # (`proposal`, a candidate index, also when the read is empty or unknown), what its
    # fit measured (`tile_stats`, TILE_STATS) and what the empty look measured
    # (`look_stats`, LOOK_STATS).
    proposal: int | None = None
    tile_stats: tuple[float, ...] = ()
    look_stats: tuple[float, ...] = ()
    # Where the proposal was placed: the tile's centre (x, y, crop pixels) and its turn
    # (degrees, counter-clockwise as seen); and what a second look at the crop's scale
    # found (vision.reader.second_look.SECOND_STATS).
    pose: tuple[float, float, float] | None = None
    second_stats: tuple[float, ...] = ()


#: The names of CellMatch.tile_stats, in order: the light model's figures of the proposal
#: (step 4; hidden_apart: of what tells its picture from the rival's weighed by evidence,
#: the share lying in blocks left out as covered), then how it fits lit as the paper
#: round the cell is (_lit_misfits): its rms, its margin over the best candidate meaning
#: something else, whether it is the best so lit, and whether it was proposed so (the
#: matcher's own fit was poor).
TILE_STATS = (
    "fit",
    "rms",
    "hidden",
    "gain",
    "spread",
    "evidence",
    "separation",
    "hidden_apart",
    "lit_rms",
    "lit_margin",
    "lit_best",
    "by_light",
)
#: The names of CellMatch.look_stats, in order.
LOOK_STATS = (
    "rms",
    "rms_all",
    "looks",
    "board",
    "gain",
    "washed",
    "white",
    "tint",
    "explained",
    "explained_kept",
    "detail",
    "hidden",
    "veil",
)


def _look_stats(look: _EmptyLook) -> tuple[float, ...]:
    """An empty look's figures in LOOK_STATS order (nan where a figure does not apply)."""
    hidden = 0.0 if look.hidden is None else float(look.hidden.mean())
    return (
        look.rms,
        look.rms_all,
        float(look.looks),
        float(look.reference is not None),
        look.gain,
        float(look.washed),
        look.white,
        look.tint,
        look.explained,
        look.explained_kept,
        look.detail,
        hidden,
        look.veil,
    )


def doubt_odd_light(
    matches: Sequence[CellMatch], areas: Sequence[Hashable], config: CellConfig
) -> list[CellMatch]:
    """A table's cell matches with each board cell read empty (not beyond doubt) with part
    of it taken as covered made unknown when its colour asks its board picture for a light
    of another hue than the board cells empty beyond doubt show: those of its area
    (`areas`, one per match: a seat), or of the whole table's when its area has none. The
    cover may be most of the cell, the blocks left out the board: a hand's colour reads as
    the board washed out by glare. Then each tile named partly covered is weighed by the
    veil its fit asks for (`_doubt_odd_veils`). (The table's, not one crop's, figures:
    vision.reader.read weighs all its cells at once.)"""
    if len(areas) != len(matches):
        raise ValueError(f"{len(matches)} matches but {len(areas)} areas")
    sure: dict[Hashable, list[NDArray[np.float64]]] = {}
    for match, area in zip(matches, areas, strict=True):
        if match.sure and match.light is not None:
            sure.setdefault(area, []).append(np.log(match.light))
    medians = _area_medians(sure, 1)
    if medians is None:
        return _doubt_odd_veils(list(matches), areas, config)
    usual, table = medians
    out = []
    for match, area in zip(matches, areas, strict=True):
        if (
            match.light is not None
            and match.hidden > 0
            and not match.sure
            and match.read.empty
            and _hue_off(np.log(match.light), usual.get(area, table)) > config.empty_max_light_tint
        ):
            match = replace(match, read=UNKNOWN, reason="odd light")
        out.append(match)
    return _doubt_odd_veils(out, areas, config)


def _doubt_odd_veils(
    matches: list[CellMatch], areas: Sequence[Hashable], config: CellConfig
) -> list[CellMatch]:
    """doubt_odd_light's second half: each tile named with at least covered_share of its
    blocks left out as covered made unknown when the black its fitted light adds (`veil`)
    differs in hue by more than tile_max_veil_tint grey levels from what the tiles named
    with nothing left out show (fit at least tile_clean_fit; its area's, or the table's
    when its area has fewer than three). A lamp's glare veils a tile in white; a hand over
    most of a plain island, taken for its sand, asks for a veil of the skin's hue."""
    clean: dict[Hashable, list[NDArray[np.float64]]] = {}
    for match, area in zip(matches, areas, strict=True):
        if (
            match.veil is not None
            and match.read.tile is not None
            and match.hidden == 0
            and match.fit >= config.tile_clean_fit
        ):
            clean.setdefault(area, []).append(np.asarray(match.veil))
    medians = _area_medians(clean, 3)
    if medians is None:
        return matches
    usual, table = medians
    out = []
    for match, area in zip(matches, areas, strict=True):
        if (
            match.veil is not None
            and match.read.tile is not None
            and match.hidden >= config.covered_share
            and _hue_off(np.asarray(match.veil), usual.get(area, table)) > config.tile_max_veil_tint
        ):
            match = replace(match, read=UNKNOWN, reason="odd veil")
        out.append(match)
    return out


def _area_medians(
    values: dict[Hashable, list[NDArray[np.float64]]], least: int
) -> tuple[dict[Hashable, NDArray[np.float64]], NDArray[np.float64]] | None:
    """The per-channel median of each area's values (areas with at least `least` of them)
    and of all of them: what a cell is weighed against, its area's or else the table's.
    None when the whole table has fewer than `least`."""
    everyone = [v for vs in values.values() for v in vs]
    if len(everyone) < least:
        return None
    usual = {area: np.median(np.stack(v), axis=0) for area, v in values.items() if len(v) >= least}
    return usual, np.median(np.stack(everyone), axis=0)


def _hue_off(seen: NDArray[np.float64], usual: NDArray[np.float64]) -> float:
    """How far three channels' values are from the usual ones in hue: the largest
    channel's difference off the differences' mean."""
    off = seen - usual
    return float(np.abs(off - off.mean()).max())


def read_cell(crop: Image, model: TileModel, empty_reference: Image | None = None) -> CellRead:
    """Read one cell crop: a tile (id, rotation, confidence), empty, or unknown."""
    return match_cells([crop], model, [empty_reference])[0].read


def read_cells(
    crops: Sequence[Image],
    model: TileModel,
    empty_references: Sequence[Image | None] | None = None,
    *,
    light_groups: Sequence[Hashable | None] | None = None,
) -> list[CellRead]:
    """Read many cell crops at once: the same answers as read_cell, in less time.

    Plain crops (no empty reference) with the same `light_groups` entry lie on one paper
    under one light, like the display's cells: the paper seen round them all tells a cell
    in a lamp's glare, which may hide a tile, from an empty one."""
    return [m.read for m in match_cells(crops, model, empty_references, light_groups=light_groups)]


# --- helpers -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Square:
    """An n x n pixel square with its smooth-light basis (1, x, y) and that basis' pinv."""

    n: int
    basis: Float
    pinv: Float
    basis_t: Float  # basis.T, contiguous


@lru_cache(maxsize=16)
def _square(n: int) -> _Square:
    basis = light_basis(n)
    return _Square(
        n, basis, np.linalg.pinv(basis).astype(np.float32), np.ascontiguousarray(basis.T)
    )


def _check_crop(crop: Image, what: str) -> None:
    if not isinstance(crop, np.ndarray) or crop.ndim != 3 or crop.shape[2] != 3:
        shape = getattr(crop, "shape", None)
        raise ValueError(f"{what} must be a colour picture (rows, cols, 3), not shape {shape}")
    if crop.shape[0] != crop.shape[1] or crop.shape[0] < 8:
        raise ValueError(f"{what} must be square and at least 8 px, not {crop.shape[:2]}")
    if crop.dtype != np.uint8:
        raise ValueError(f"{what} must have 8-bit pixels, not {crop.dtype}")


def _scaled(crop: Image, side: int, quick: bool = False) -> Float:
    """A square crop resampled to side x side by area (each pixel the mean of what it covers).

    OpenCV's area resampling by a ratio that is not a whole number is slow (70 µs a 114 px
    crop to 61). `quick`: resampled linearly up to a whole multiple of the side first, then
    reduced by area (its fast path), in half the time; a little softer, which the coarse
    search does not mind (the fine crops, read at their limits, do)."""
    n = crop.shape[0]
    whole = -(-n // side)
    big: NDArray[Any] = crop
    if quick and whole > 1 and whole * side != n:
        big = cv2.resize(crop, (whole * side, whole * side), interpolation=cv2.INTER_LINEAR)
    small = cv2.resize(big, (side, side), interpolation=cv2.INTER_AREA)
    out: Float = np.asarray(small, np.float32)
    return out


def _light_residual(x: Float, sq: _Square, keep: Mask | None = None) -> float:
    """Sum of squares the smooth light alone leaves of x (3, M), over the kept pixels."""
    return float(_light_residuals_kept(x[None], sq, None if keep is None else keep[None])[0])


def _light_residuals_kept(xs: Float, sq: _Square, keep: Mask | None) -> NDArray[np.float64]:
    """_light_residual of many pictures xs (N, 3, M), each over its kept pixels keep (N, M)."""
    if keep is None:
        res = xs - np.matmul(np.matmul(xs, sq.pinv.T), sq.basis_t)
    else:
        kept = sq.basis_t * keep[:, None, :]  # (N, 3, M)
        coef = np.linalg.solve(
            np.matmul(kept, sq.basis) + np.eye(3) * 1e-6, np.matmul(kept, xs.transpose(0, 2, 1))
        )
        res = (xs - np.matmul(coef.transpose(0, 2, 1).astype(np.float32), sq.basis_t)) * (
            keep[:, None, :]
        )
    out: NDArray[np.float64] = np.array([float(np.einsum("cm,cm->", r, r)) for r in res])
    return out


def _predicted(model: TileModel, k: int, coef: NDArray[np.float64]) -> Float:
    """Candidate k's fitted picture of the inner square (3, M) from its coefficients (3, 6)."""
    out: Float = _predicted_many(model, np.array([k]), coef[None])[0]
    return out


def _predicted_many(model: TileModel, ks: NDArray[np.intp], coef: NDArray[np.float64]) -> Float:
    """_predicted of candidates ks (N,) with their coefficients (N, 3, 6): (N, 3, M)."""
    c = coef.astype(np.float32)
    basis_t = _square(model.inner_px).basis_t
    out: Float = model.channels_of(ks).transpose(1, 0, 2) * np.matmul(
        c[:, :, :3], basis_t
    ) + np.matmul(c[:, :, 3:], basis_t)
    return out


def _cut(fine: Float, n: int, shift: tuple[int, int] = (0, 0)) -> Float:
    """The n x n square of a fine crop, centred but for `shift` (x, y) pixels, as (n * n, 3)."""
    lo = (fine.shape[0] - n) // 2
    x0 = min(max(lo + shift[0], 0), fine.shape[1] - n)
    y0 = min(max(lo + shift[1], 0), fine.shape[0] - n)
    out: Float = np.ascontiguousarray(fine[y0 : y0 + n, x0 : x0 + n]).reshape(-1, 3)
    return out


@lru_cache(maxsize=16)
def _block_matrix(n: int, blocks: int) -> Float:
    """Per pixel of an n x n square (given flat), its share of its block's mean: (M, blocks²),
    so block means are one product."""
    member = block_members(n, blocks)
    sizes = np.bincount(member, minlength=blocks * blocks)
    out = np.zeros((n * n, blocks * blocks), np.float32)
    out[np.arange(n * n), member] = 1.0 / sizes[member]
    out.flags.writeable = False
    return out


def _block_means(maps: Float, n: int, blocks: int) -> Float:
    """Mean of n x n maps (..., n * n) over blocks x blocks blocks: (..., blocks, blocks)."""
    out: Float = (maps @ _block_matrix(n, blocks)).reshape(*maps.shape[:-1], blocks, blocks)
    return out


def _hidden_many(res: Float, n: int, cfg: CellConfig, predicted: Float | None) -> Mask:
    """Blocks that something covers in each square, from its residuals (N, M) and predicted
    picture (N, 3, M), if any: their residual is far above the typical block's (a low
    quantile, for a cover may be big) and, where the picture has detail of its own, above
    a share of that detail (blur and a slightly wrong place leave some of it unexplained; a
    cover leaves all of it and more). A block's detail is its mean squared deviation from
    its own mean colour. (N, blocks, blocks)."""
    count = len(res)
    blocks = _block_means(res, n, cfg.blocks)
    flat = blocks.reshape(count, -1)
    rank = int(cfg.typical_quantile * (flat.shape[1] - 1))
    typical = np.partition(flat, rank, axis=1)[:, rank]
    limit = np.maximum(cfg.occluded_ratio * typical, np.float32(cfg.occluded_floor))
    out: Mask = blocks > limit[:, None, None]
    if predicted is not None and out.any():
        p = predicted
        maps = np.concatenate(
            [p, (p[:, 0] * p[:, 0] + p[:, 1] * p[:, 1] + p[:, 2] * p[:, 2])[:, None]], axis=1
        )
        means = _block_means(maps, n, cfg.blocks)
        contrast = np.maximum(
            means[:, 3]
            - (means[:, 0] * means[:, 0] + means[:, 1] * means[:, 1] + means[:, 2] * means[:, 2]),
            0.0,
        )
        out &= blocks > cfg.occluded_detail * contrast
    return out


def _block_mask(hidden: Mask, n: int) -> Mask:
    """Pixels (n * n) kept when the hidden blocks (blocks x blocks) are left out."""
    out: Mask = ~hidden.ravel()[block_members(n, hidden.shape[0])]
    return out


def _colour_misfit(
    obs_mean: NDArray[np.floating], ref_mean: NDArray[np.floating], min_gain: float
) -> float:
    """How far a patch's mean colour is from the reference's under some light: the largest
    channel misfit as a share of the patch's mean brightness.

    The light may scale every channel alike and add white alike (glare): obs = a * ref + b,
    a >= 0 and b >= 0 (the best such pair). (Three numbers: plain floats are quicker.)"""
    obs = [float(v) for v in obs_mean]
    ref = [float(v) for v in ref_mean]
    obs_avg, ref_avg = sum(obs) / 3, sum(ref) / 3
    brightness = max(obs_avg, 1.0)
    spread = math.sqrt(sum((r - ref_avg) ** 2 for r in ref) / 3)
    dot = sum(o * r for o, r in zip(obs, ref, strict=True))
    options = [(max(dot / max(sum(r * r for r in ref), 1.0), 0.0), 0.0)]
    if spread < 10.0:
        # A nearly grey reference cannot tell light from glare: any grey will do.
        options.append((0.0, max(obs_avg, 0.0)))
    else:
        # A coloured one must show its colours: the light keeps at least min_gain of them.
        options = [(a, b) for a, b in options if a >= min_gain]
    if spread >= 1.0:
        a = sum((r - ref_avg) * (o - obs_avg) for o, r in zip(obs, ref, strict=True)) / 3
        a /= spread * spread
        b = obs_avg - a * ref_avg
        if a >= (min_gain if spread >= 10.0 else 0.0) and b >= 0:
            options.append((a, b))
    if not options:
        return float("inf")
    return (
        min(max(abs(o - a * r - b) for o, r in zip(obs, ref, strict=True)) for a, b in options)
        / brightness
    )


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
    wide_gram: NDArray[np.float64]  # (3, 6, 6): the normal matrices wide_ninv inverts
    pattern: float  # per-pixel energy the light alone leaves of the wide square
    energy: Float  # the same per channel (3,)
    inner_terms: Float  # (1, 3, 3, M)
    inner_ninv: Float
    inner_channels: Float  # (3, 1, M): inner_terms[0, :, 0]
    channels: Float  # the wide square per channel less its mean (3, Mw): wide_terms[0, :, 0]
    mean: NDArray[np.float32]  # the wide square's mean colour (3,)


# (model, side, picture's shape, a sample's hash, blur) -> (the picture, prepared)
_ReferenceKey = tuple[int, int, tuple[int, ...], int, float]
_REFERENCES: OrderedDict[_ReferenceKey, tuple[Image, _Reference]] = OrderedDict()
_REFERENCES_KEPT = 128  # a table needs one for each board cell and crop size (some 16), and as
# many blurred less for the second looks (_look_again)


def _reference(
    reference: Image, model: TileModel, side: int, blur: float | None = None
) -> _Reference:
    """The prepared empty picture, blurred like a camera's (`blur` px, by default the
    config's reference_blur_px); cached: the same board cells come back every frame (found
    by a sample of its pixels and proven by all of them, cheaper than hashing them all)."""
    cfg = model.config
    blur = cfg.reference_blur_px if blur is None else blur
    sample = hash(np.ascontiguousarray(reference[::5, ::5]).tobytes())
    key = (id(model), side, reference.shape, sample, blur)
    hit = _REFERENCES.get(key)
    if hit is not None and np.array_equal(hit[0], reference):
        _REFERENCES.move_to_end(key)
        return hit[1]
    ref = _scaled(reference, side)
    if blur > 0:
        ref = np.asarray(
            cv2.GaussianBlur(ref, (0, 0), blur, borderType=cv2.BORDER_REPLICATE), np.float32
        )
    sq = _square(_wide_px(model))
    wide = _cut(ref, sq.n)
    wide_terms = design_terms(wide, sq.basis)[None]
    inner = _cut(ref, model.inner_px)
    inner_terms = design_terms(inner, model.basis)[None]
    prepared = _Reference(
        wide=wide,
        wide_terms=wide_terms,
        wide_ninv=normal_inverse(wide_terms, sq.basis),
        wide_gram=normal_matrices(wide_terms, sq.basis)[0],
        pattern=_light_residual(np.ascontiguousarray(wide.T), sq) / len(wide),
        energy=np.einsum("mc,mc->c", light := wide - sq.basis @ (sq.pinv @ wide), light)
        / len(wide),
        inner_terms=inner_terms,
        inner_ninv=normal_inverse(inner_terms, model.basis),
        inner_channels=np.ascontiguousarray(inner_terms[0, :, 0][:, None]),
        channels=np.ascontiguousarray(wide_terms[0, :, 0]),
        mean=wide.mean(axis=0),
    )
    _REFERENCES[key] = (reference.copy(), prepared)
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
    washed: bool = False  # in glare (_in_glare): whiter than its paper, or under a veil
    paper: float = float("nan")  # plain cells: the paper seen round the cell (grey level)
    whitest: float = float("nan")  # plain cells: the brightest block of its square
    white: float = float("nan")  # plain cells: its brightness over the paper seen round it
    tint: float = 0.0  # plain cells: how far its hue is from the paper's seen round it
    hidden: Mask | None = None  # blocks left out as covered (blocks x blocks), if any
    light: tuple[float, float, float] | None = None  # board cells: seen colour over the board's
    fraction: tuple[float, float] = (0.0, 0.0)  # board cells: the best shift's sub-pixel part
    detail: float = float("nan")  # board cells: what the smooth light alone leaves (rms)
    detail_kept: float = float("nan")  # the same where nothing covers it (rms's pixels)

    @property
    def explained(self) -> float:
        """Board cells: the share of the square's detail (what the smooth light alone leaves)
        the board picture explains."""
        return 1.0 - (self.rms_all / max(self.detail, 1e-6)) ** 2

    @property
    def explained_kept(self) -> float:
        """Board cells: the share of the detail where nothing covers it (the blocks left
        out as covered left out) the board picture explains."""
        return 1.0 - (self.rms / max(self.detail_kept, 1e-6)) ** 2

    @property
    def veil(self) -> float:
        """Board cells: the brightness (grey levels) the board picture, at the contrast it
        is seen with, leaves unaccounted for: a lamp's glare laid over the cell."""
        if self.reference is None or self.light is None:
            return float("nan")
        return float(np.mean(self.reference.mean * (np.asarray(self.light) - self.gain)))

    def inner_fit(self, model: TileModel, picture: Float, keep: Mask | None = None) -> float:
        """What the empty look leaves unexplained of a picture (3, M) of the tile's inner
        square (over the kept pixels only, if given; many pictures at once: _inner_fits)."""
        if keep is None:
            return _inner_fits([self], [picture], model)[0]
        if self.reference is None:
            return _light_residual(picture, _square(model.inner_px), keep)
        ref = self.reference
        ninv = normal_inverse(ref.inner_terms, model.basis, keep.astype(np.float32))
        rss, _coef = fit_light(ref.inner_channels, ninv, model.basis_t, picture, keep)
        return float(rss[0])


def _empty_looks(
    fines: Sequence[Float],
    model: TileModel,
    refs: Sequence[_Reference | None],
    keep: bool = True,
) -> list[_EmptyLook]:
    """Compare each cell's square with the empty mat or card (no reference) or board cell;
    the cells of one crop size and kind at once (`keep`: the board pictures stacked for
    them are kept for the next frame).

    Blocks far worse than the rest (a hand, a shell over part of the cell) are left out when
    they are few; the cell is then judged on the rest."""
    out: list[_EmptyLook | None] = [None] * len(fines)
    groups: dict[tuple[int, bool], list[int]] = {}
    for i, (fine, ref) in enumerate(zip(fines, refs, strict=True)):
        groups.setdefault((fine.shape[0], ref is None), []).append(i)
    for (_side, plain), idx in groups.items():
        planes = np.ascontiguousarray(np.stack([fines[i] for i in idx]).transpose(0, 3, 1, 2))
        if plain:
            looks = _mat_looks(planes, model)
        else:
            looks = _board_looks(
                planes, model, [r for i in idx if (r := refs[i]) is not None], keep
            )
        for i, look in zip(idx, looks, strict=True):
            out[i] = look
    return [look for look in out if look is not None]


def _mat_looks(planes: Float, model: TileModel) -> list[_EmptyLook]:
    """_empty_looks of cells on the plain mat or card; planes (N, 3, side, side)."""
    cfg = model.config
    sq = _square(_wide_px(model))
    n, side = sq.n, planes.shape[2]
    lo = (side - n) // 2
    obs = np.ascontiguousarray(planes[:, :, lo : lo + n, lo : lo + n]).reshape(len(planes), 3, -1)
    fitted = np.matmul(np.matmul(obs, sq.pinv.T), sq.basis_t)
    res = _squared_residual(obs, fitted)
    hidden = _hidden_many(res, n, cfg, None)
    keeps = _keeps(hidden, n, cfg)
    kept_res = _masked_light(obs[list(keeps)], sq, np.array(list(keeps.values())))
    paper, paper_colour = _papers(planes, model)
    whitest = _block_means(obs.mean(axis=1), n, cfg.blocks).reshape(len(planes), -1).max(axis=1)
    looks = []
    for i in range(len(planes)):
        rms_all = rms = float(np.sqrt(res[i].sum() / (3 * res[i].size)))
        colour = obs[i].mean(axis=1)
        keep = keeps.get(i)
        if keep is not None:
            kept = kept_res[list(keeps).index(i)][keep]
            rms = float(np.sqrt(kept.sum() / (3 * len(kept))))
            colour = obs[i][:, keep].mean(axis=1)
        # The white mat or storage card: flat, grey under a plausible warm or cold cast, and
        # as bright as the paper around the tile's place (the brightest of the crop's rim).
        misfit = _colour_misfit(colour, np.full(3, 255.0), cfg.min_gain)
        white = float(colour.mean()) / max(float(paper[i]), 1.0)
        bright = white >= cfg.empty_min_white_alone
        tint = _tint(colour, paper_colour[i])
        looks.append(
            _EmptyLook(
                rms,
                rms_all,
                misfit <= cfg.empty_max_cast and bright,
                None,
                paper=float(paper[i]),
                whitest=float(whitest[i]),
                white=white,
                tint=tint,
                hidden=hidden[i] if hidden[i].any() else None,
            )
        )
    return looks


def _keeps(hidden: Mask, n: int, cfg: CellConfig) -> dict[int, Mask]:
    """The pixels kept (M,) of each square with a few (not too many) hidden blocks."""
    counts = np.count_nonzero(hidden.reshape(len(hidden), -1), axis=1)
    size = hidden[0].size if len(hidden) else 1
    return {
        int(i): _block_mask(hidden[i], n)
        for i in np.flatnonzero(counts)
        if counts[i] / size <= cfg.max_hidden
    }


def _masked_light(obs: Float, sq: _Square, keep: Mask) -> Float:
    """The smooth light fitted to squares obs (J, 3, M) over their kept pixels keep (J, M):
    the squared residual per pixel (J, M)."""
    if len(obs) == 0:
        return np.zeros((0, obs.shape[2]), np.float32)
    kept = sq.basis_t[None].astype(np.float64) * keep[:, None, :]  # (J, 3, M)
    coef = np.linalg.solve(kept @ sq.basis, kept @ obs.transpose(0, 2, 1))  # (J, 3 terms, 3)
    fitted = np.matmul(coef.transpose(0, 2, 1).astype(np.float32), sq.basis_t)
    return _squared_residual(obs, fitted)


@dataclass(frozen=True, slots=True)
class _Boards:
    """Board cells' prepared pictures stacked, to fit them all at once."""

    refs: tuple[_Reference, ...]
    channels: Float  # (N, 3, M)
    design: Float  # (N, 3, M, 6): per channel the template times each light term, and those
    ninv: Float  # (N, 3, 6, 6)
    gram: NDArray[np.float64]  # (N, 3, 6, 6)


_BOARDS: OrderedDict[tuple[int, ...], _Boards] = OrderedDict()
_BOARDS_KEPT = 2  # a stack is some 15 MB; a table's board cells come as one


def _boards(refs: Sequence[_Reference], sq: _Square, keep: bool = True) -> _Boards:
    """The stacked board pictures (cached when `keep`: a seat's cells come back every
    frame)."""
    key = tuple(id(r) for r in refs)
    hit = _BOARDS.get(key)
    if hit is not None and all(a is b for a, b in zip(hit.refs, refs, strict=True)):
        _BOARDS.move_to_end(key)
        return hit
    chans = np.stack([r.channels for r in refs])
    design = np.empty((*chans.shape, 6), np.float32)
    design[..., :3] = chans[..., None] * sq.basis
    design[..., 3:] = sq.basis
    boards = _Boards(
        tuple(refs),
        chans,
        design,
        np.stack([r.wide_ninv[0] for r in refs]),
        np.stack([r.wide_gram for r in refs]),
    )
    if not keep:
        return boards
    _BOARDS[key] = boards
    if len(_BOARDS) > _BOARDS_KEPT:
        _BOARDS.popitem(last=False)
    return boards


def _board_looks(
    planes: Float, model: TileModel, refs: list[_Reference], keep: bool = True
) -> list[_EmptyLook]:
    """_empty_looks of board cells, each with its prepared board picture; planes
    (N, 3, side, side)."""
    cfg = model.config
    sq = _square(_wide_px(model))
    count, n, side = len(planes), sq.n, planes.shape[2]
    boards = _boards(refs, sq, keep)
    lo = (side - n) // 2
    # Each cell's colour near the middle is taken out first: the fits below then weigh
    # small numbers (the light's offsets take any constant back).
    base = planes[:, :, lo : lo + n, lo : lo + n].mean(axis=(2, 3), dtype=np.float64)
    planes = planes - base.astype(np.float32)[:, :, None, None]
    cells = np.arange(count)
    steps = np.arange(-cfg.empty_shift_px, cfg.empty_shift_px + 1)

    def place(d: NDArray[np.int_]) -> NDArray[np.int_]:
        out: NDArray[np.int_] = np.clip(lo + d, 0, side - n)
        return out

    def fits(
        columns: Float, xs: NDArray[np.int_], ys: NDArray[np.int_]
    ) -> tuple[Float, Float, Float]:
        """The board fitted at each shift (xs, ys each (len(steps),)) of `columns` (the
        planes, or a band n wide of each): squares (N, 3, shifts, M) made by slicing."""
        squares = np.empty((count, 3, len(steps), n, n), np.float32)
        for k, (x, y) in enumerate(zip(xs, ys, strict=True)):
            squares[:, :, k] = columns[:, :, y : y + n, x : x + n]
        obs: Float = squares.reshape(count, 3, len(steps), n * n)
        rss, coef = _board_fit(boards, obs)
        return obs, rss, coef

    # The board picture is fitted at small shifts, across then along (the printed outline's
    # two directions fix the two shifts): a seat's pose may put the crop a millimetre off.
    _obs, rss_x, _coef = fits(planes, place(steps), place(np.zeros_like(steps)))
    best_x = np.argmin(rss_x, axis=1)
    dx = steps[best_x]
    band = np.lib.stride_tricks.sliding_window_view(planes, n, axis=3)[cells, :, :, place(dx)]
    obs, rss, coef = fits(band, np.zeros_like(steps), place(steps))
    best = np.argmin(rss, axis=1)
    dy = steps[best]
    fractions = [
        (_sub_step(rss_x[i], int(best_x[i])), _sub_step(rss[i], int(best[i]))) for i in range(count)
    ]
    obs, coef = obs[cells, :, best], coef[cells, best]
    fitted = boards.channels * np.matmul(coef[:, :, :3], sq.basis_t) + np.matmul(
        coef[:, :, 3:], sq.basis_t
    )
    res = _squared_residual(obs, fitted)
    hidden = _hidden_many(res, n, cfg, fitted)
    seen = (_light_residuals(obs, sq) / n / n).tolist()  # per pixel, the channels summed
    keeps = _keeps(hidden, n, cfg)
    kept_res, kept_coef = _masked_boards(
        obs[list(keeps)], boards, list(keeps), sq, np.array(list(keeps.values()))
    )
    if keeps:
        # How much of the board picture is seen where nothing covers it.
        coef = coef.copy()
        coef[list(keeps)] = kept_coef
    rms_all = np.sqrt(res.sum(axis=1) / (3 * res.shape[1])).tolist()
    # What the smooth light alone leaves over the pixels rms is taken over.
    seen_kept = list(seen)
    if keeps:
        left = _light_residuals_kept(obs[list(keeps)], sq, np.array(list(keeps.values())))
        for i, rss in zip(keeps, left, strict=True):
            seen_kept[i] = float(rss) / max(int(np.count_nonzero(keeps[i])), 1)
    colours = obs.mean(axis=2) + base
    energy = np.stack([ref.energy for ref in refs]).astype(np.float64)
    gains = ((coef[:, :, 0] * energy).sum(axis=1) / np.maximum(energy.sum(axis=1), 1e-9)).tolist()
    looks = []
    for i, ref in enumerate(refs):
        rms = rms_all[i]
        obs_mean: NDArray[np.floating] = colours[i]
        ref_mean: NDArray[np.floating] = ref.mean
        kept_pixels = keeps.get(i)
        if kept_pixels is not None:
            kept = kept_res[list(keeps).index(i)][kept_pixels]
            rms = float(np.sqrt(kept.sum() / (3 * len(kept))))
            weight = kept_pixels.astype(np.float32) / max(int(np.count_nonzero(kept_pixels)), 1)
            obs_mean = obs[i] @ weight + base[i]
            ref_mean = weight @ ref.wide
        misfit = _colour_misfit(obs_mean, ref_mean, cfg.min_gain)
        looks_empty = misfit <= cfg.empty_max_cast
        # A board picture with a pattern of its own must show it (not a flat thing over the
        # cell): some of its pattern's energy must be there (fine print is softened by the
        # lens, so less than a tile needs).
        # A pattern seen clearly and closely fitted over the whole square may be under a
        # stronger colour cast: no hand or tile shows the board's own pattern (only a plain
        # board needs its colour to tell it from a flat hand).
        if ref.pattern >= cfg.empty_min_pattern**2:
            shown = seen[i] >= cfg.empty_min_gain**2 * ref.pattern
            clear = rms_all[i] <= cfg.empty_sure_rms and gains[i] >= cfg.empty_board_doubt_gain
            looks_empty = shown and (
                looks_empty or (clear and misfit <= cfg.empty_max_cast_patterned)
            )
        light = np.maximum(obs_mean, 1.0) / np.maximum(ref_mean, 1.0)
        looks.append(
            _EmptyLook(
                rms,
                rms_all[i],
                bool(looks_empty),
                ref,
                (int(dx[i]), int(dy[i])),
                gains[i],
                hidden=hidden[i] if hidden[i].any() else None,
                light=(float(light[0]), float(light[1]), float(light[2])),
                fraction=fractions[i],
                detail=float(np.sqrt(seen[i] / 3)),
                detail_kept=float(np.sqrt(seen_kept[i] / 3)),
            )
        )
    return looks


def _sub_step(rss: Float, k: int) -> float:
    """Where between the shifts the least of rss (over shifts, least at k) lies (-0.5..0.5)."""
    if not 0 < k < len(rss) - 1:
        return 0.0
    return parabola_vertex(-float(rss[k - 1]), -float(rss[k]), -float(rss[k + 1]))


def _board_fit(boards: _Boards, obs: Float) -> tuple[Float, Float]:
    """The light model with each cell's board picture fitted to its pictures obs
    (N, 3, S, M) (of small mean): rss (N, S), coefficients (N, S, 3, 6)."""
    rhs = np.matmul(obs, boards.design)  # (N, 3, S, 6)
    coef = np.matmul(rhs, boards.ninv.transpose(0, 1, 3, 2))
    explained = np.einsum("ncsi,ncsi->ns", rhs, coef)
    total = np.einsum("ncsm,ncsm->ns", obs, obs)
    rss = np.maximum(total - explained, 0.0)
    return rss, coef.transpose(0, 2, 1, 3)


def _masked_boards(
    obs: Float, boards: _Boards, cells: list[int], sq: _Square, keep: Mask
) -> tuple[Float, Float]:
    """The board pictures of cells fitted to their squares obs (J, 3, M) over the kept
    pixels keep (J, M) only: the squared residual per pixel (J, M) and the coefficients
    (J, 3, 6)."""
    if not cells:
        return np.zeros((0, obs.shape[2]), np.float32), np.zeros((0, 3, 6), np.float32)
    chans, design = boards.channels[cells], boards.design[cells]
    hidden = (~keep).astype(np.float32)
    outer = (sq.basis[:, :, None] * sq.basis[:, None, :]).reshape(-1, 9)  # (M, 9)
    tt = np.matmul(chans * chans * hidden[:, None], outer)  # (J, 3, 9)
    tb = np.matmul(chans * hidden[:, None], outer)
    bb = hidden @ outer  # (J, 9)
    gram = boards.gram[cells].copy()
    j = len(cells)
    gram[:, :, :3, :3] -= tt.reshape(j, 3, 3, 3)
    gram[:, :, :3, 3:] -= tb.reshape(j, 3, 3, 3)
    gram[:, :, 3:, :3] -= tb.reshape(j, 3, 3, 3)
    gram[:, :, 3:, 3:] -= bb.reshape(j, 1, 3, 3)
    ninv = invert_normal(gram)
    weight = keep.astype(np.float32)[:, None]
    mean = (obs * weight).sum(axis=2) / weight.sum(axis=2)  # (J, 3)
    centred = (obs - mean[..., None]) * weight
    rhs = np.matmul(centred[:, :, None, :], design)[:, :, 0]  # (J, 3, 6)
    coef = np.matmul(ninv, rhs[..., None])[..., 0]
    coef[:, :, 3] += mean
    fitted = chans * np.matmul(coef[:, :, :3], sq.basis_t) + np.matmul(coef[:, :, 3:], sq.basis_t)
    return _squared_residual(obs, fitted), coef


def _squared_residual(obs: Float, fitted: Float) -> Float:
    """Per pixel, the squared residual summed over channels: (N, 3, M) -> (N, M)."""
    res = obs - fitted
    out: Float = res[:, 0] * res[:, 0] + res[:, 1] * res[:, 1] + res[:, 2] * res[:, 2]
    return out


def _light_residuals(x: Float, sq: _Square) -> NDArray[np.float64]:
    """_light_residual of many pictures x (N, 3, M)."""
    res = x - np.matmul(np.matmul(x, sq.pinv.T), sq.basis_t)
    out: NDArray[np.float64] = np.einsum("ncm,ncm->n", res, res).astype(np.float64)
    return out


def _papers(planes: Float, model: TileModel) -> tuple[NDArray[np.float32], Float]:
    """How bright the paper is around each cell (N, 3, side, side): a high quantile of the
    crop's rim beyond the tile's nominal square (neighbouring tiles may reach in, the gaps
    between them do not); and its colour, the mean of the rim at least that bright (N, 3)."""
    side = planes.shape[2]
    n = round(model.config.tile_px)
    lo = max((side - n) // 2, 1)
    count = len(planes)
    middle = planes[:, :, lo : side - lo]
    rim = np.concatenate(
        [
            planes[:, :, :lo].reshape(count, 3, -1),
            planes[:, :, side - lo :].reshape(count, 3, -1),
            middle[:, :, :, :lo].reshape(count, 3, -1),
            middle[:, :, :, side - lo :].reshape(count, 3, -1),
        ],
        axis=2,
    )
    grey = rim.mean(axis=1)
    rank = int(model.config.paper_quantile * (grey.shape[1] - 1))
    out: NDArray[np.float32] = np.partition(grey, rank, axis=1)[:, rank]
    bright = (grey >= out[:, None]).astype(np.float32)
    colour: Float = np.matmul(rim, bright[:, :, None])[:, :, 0] / bright.sum(axis=1)[:, None]
    return out, colour


def _tint(colour: NDArray[np.floating], paper: NDArray[np.floating]) -> float:
    """How far a colour's hue is from the paper's: the largest channel difference once each
    is divided by its mean (0 for the same hue at any brightness)."""
    a = np.asarray(colour, np.float64)
    b = np.asarray(paper, np.float64)
    return float(np.abs(a / max(float(a.mean()), 1.0) - b / max(float(b.mean()), 1.0)).max())


def _empty(look: _EmptyLook, model: TileModel, sure: bool = False) -> CellMatch:
    cfg = model.config
    confidence = float(np.clip(1.5 - look.rms / cfg.empty_max_rms, 0.5, 1.0))
    hidden = 0.0 if look.hidden is None else float(look.hidden.mean())
    return CellMatch(
        CellRead(empty=True, confidence=round(confidence, 4)),
        hidden=hidden,
        empty_rms=look.rms,
        reason="empty",
        light=look.light,
        sure=sure,
        look_stats=_look_stats(look),
    )


# --- step 2: where the tile lies -----------------------------------------------------------


def _coarse_windows(
    crops: Sequence[Image], model: TileModel, crop_mm: float
) -> tuple[Float, NDArray[np.float64]]:
    """Every coarse window of crops of one size, zero mean per channel and unit norm
    (N, P, D), and each window's tile centre offset from the crop's centre in mm (P, 2)."""
    cfg = model.config
    nc = cfg.coarse_tile_px
    side = max(nc, round(crop_mm * nc / model.tile_mm))
    planes = np.ascontiguousarray(
        np.stack([_scaled(c, side, quick=True) for c in crops]).transpose(0, 3, 1, 2)
    )
    b = model.rim_px(nc, cfg.coarse_border_mm)
    win = nc - 2 * b
    steps = side - win + 1
    views = np.lib.stride_tricks.sliding_window_view(planes, (win, win), axis=(2, 3))
    windows = views.transpose(0, 2, 3, 1, 4, 5).reshape(len(crops), steps * steps, 3, win * win)
    windows = windows - windows.mean(axis=3, keepdims=True)
    flat = windows.reshape(len(crops), steps * steps, -1)
    flat = flat / np.maximum(np.linalg.norm(flat, axis=2, keepdims=True), 1e-3)
    pos = np.arange(steps, dtype=np.float64) + (win - 1) / 2 - (side - 1) / 2
    gy, gx = np.meshgrid(pos, pos, indexing="ij")
    offsets = np.stack([gx.ravel(), gy.ravel()], axis=1) * (crop_mm / side)
    return np.ascontiguousarray(flat, np.float32), offsets


@dataclass(frozen=True, slots=True)
class _Pose:
    centre: tuple[float, float]  # tile centre in fine-crop pixels
    angle: float  # degrees, counter-clockwise as seen (OpenCV's rotation sense)
    score: float


def _pose_scores(
    feats: Float,
    x0: NDArray[np.intp],
    y0: NDArray[np.intp],
    n_p: int,
    steps: int,
    templates: Float,
) -> Float:
    """Normalised correlation of each crop's pose features (N, colours, h, w) with its own
    templates (N, T, n_p * colours * n_p) (TileModel.pose's layout) at the steps x steps
    places from its (x0, y0): (N, steps², T), each window's product over its norm.

    The windows are not copied out one by one (steps² copies of a template's size): in a
    copy of each crop's band ordered (x, row, colour, column), a window's rows lie side by
    side, so one place row's windows are a strided view, one product each."""
    count = len(feats)
    span = n_p + steps - 1
    crops = np.arange(count)[:, None]
    band = feats.transpose(0, 2, 1, 3)[crops, y0[:, None] + np.arange(span)]  # (N, span, c, w)
    cols = np.lib.stride_tricks.sliding_window_view(band, n_p, axis=3)  # (N, span, c, w', n_p)
    by_x = np.ascontiguousarray(cols[crops, :, :, x0[:, None] + np.arange(steps)])
    scores = np.empty((count, steps, steps, templates.shape[1]), np.float32)
    across = templates.transpose(0, 2, 1)  # (N, size, T): a view, the product takes it so
    for y in range(steps):
        windows = by_x[:, :, y : y + n_p].reshape(count, steps, -1)  # (N, steps, size)
        scores[:, y] = np.matmul(windows, across)
    # Each window's energy: its rows' sums, then a running sum along x.
    sq = np.einsum("nrcw,nrcw->nrw", band, band, dtype=np.float64)  # (N, span, w)
    rows = np.empty((count, steps, sq.shape[2]))
    rows[:, 0] = sq[:, :n_p].sum(axis=1)
    for y in range(1, steps):
        rows[:, y] = rows[:, y - 1] + sq[:, y + n_p - 1] - sq[:, y - 1]
    run = np.zeros((count, steps, sq.shape[2] + 1))
    run[:, :, 1:] = rows.cumsum(axis=2)
    at = (np.arange(count)[:, None, None], np.arange(steps)[:, None])
    gx = (x0[:, None] + np.arange(steps))[:, None, :]
    energy = run[(*at, gx + n_p)] - run[(*at, gx)]
    scores /= np.sqrt(np.maximum(energy, 1e-6)).astype(np.float32)[..., None]
    return scores.reshape(count, steps * steps, -1)


def _find_poses(
    feats: Float,
    half: Float,
    model: TileModel,
    ks: list[list[int]],
    offsets: list[list[NDArray[np.float64]]],
    scales: list[float],
) -> list[tuple[int, _Pose]]:
    """For each crop (pose features `feats` (N, colours, side, side), and `half` at half
    the scale), which of its candidates ks places the tile best, and where: each searched
    around its own coarse place at every turn on `half`; then the best one's sub-pixel
    place and turn on `feats`. All crops at once (as many candidates each)."""
    cfg = model.config
    count, side = len(feats), feats.shape[2]
    angles = cfg.pose_angles_deg
    turns = len(angles)
    n_p = round(np.sqrt(model.pose.shape[2] / feats.shape[1]))
    # First at half the scale: every candidate, every turn, around its coarse place. (All
    # places at once: the half-scale crop holds few.)
    h_side, h_p = half.shape[2], n_p // 2
    r = max(1, cfg.pose_search_px // 2)
    steps = 2 * r + 1
    places = h_side - h_p + 1
    zero = np.zeros(count, np.intp)
    tried = np.asarray(ks)  # (N, candidates)
    templates = model.pose_half[tried].reshape(count, -1, model.pose_half.shape[2])
    every = (
        _pose_scores(half, zero, zero, h_p, places, templates)
        .reshape(count, places, places, tried.shape[1], turns)
        .max(axis=4)
    )  # best turn per place
    # Each candidate's best place within r of its coarse place; the best candidate's wins.
    coarse = (
        (side - 1) / 2
        + np.asarray(offsets, np.float64) * np.asarray(scales, np.float64)[:, None, None]
        - (n_p - 1) / 2
    ) / 2
    lo = np.clip(np.round(coarse).astype(np.intp) - r, 0, h_side - h_p - 2 * r)  # (N, c, 2)
    grid = np.arange(steps)
    near = every[
        np.arange(count)[:, None, None, None],
        lo[..., 1, None, None] + grid[:, None],
        lo[..., 0, None, None] + grid,
        np.arange(tried.shape[1])[:, None, None],
    ]
    near = near.reshape(count, tried.shape[1], steps * steps)
    place = near.argmax(axis=2)  # (N, c)
    pick = np.take_along_axis(near, place[..., None], 2)[..., 0].argmax(axis=1)  # (N,)
    rows = np.arange(count)
    at = place[rows, pick]
    starts = [
        (int(k), int(x), int(y))
        for k, x, y in zip(
            tried[rows, pick],
            2 * (lo[rows, pick, 0] + at % steps),
            2 * (lo[rows, pick, 1] + at // steps),
            strict=True,
        )
    ]
    # Then at full scale, every turn around the best place, two pixels each way.
    n = 5
    chosen = [k for k, _x, _y in starts]
    x0s = np.array([min(max(x - 2, 0), side - n_p - n + 1) for _k, x, _y in starts])
    y0s = np.array([min(max(y - 2, 0), side - n_p - n + 1) for _k, _x, y in starts])
    every_turn = _pose_scores(feats, x0s, y0s, n_p, n, model.pose[chosen])
    out = []
    for c in range(count):
        results = every_turn[c].T.reshape(turns, n, n)
        a, iy, ix = np.unravel_index(int(np.argmax(results)), results.shape)
        res = results[a]
        dx = parabola_vertex(*res[iy, ix - 1 : ix + 2]) if 0 < ix < n - 1 else 0.0
        dy = parabola_vertex(*res[iy - 1 : iy + 2, ix]) if 0 < iy < n - 1 else 0.0
        angle = angles[a]
        if 0 < a < turns - 1:
            step = (angles[a + 1] - angles[a - 1]) / 2
            angle += step * parabola_vertex(
                results[a - 1, iy, ix], results[a, iy, ix], results[a + 1, iy, ix]
            )
        centre = (x0s[c] + ix + dx + (n_p - 1) / 2, y0s[c] + iy + dy + (n_p - 1) / 2)
        out.append(
            (
                chosen[c],
                _Pose((float(centre[0]), float(centre[1])), float(angle), float(res[iy, ix])),
            )
        )
    return out


def _aligned(fine: Float, model: TileModel, pose: _Pose, scale: float) -> Float:
    """The tile's inner square cut from the fine crop along the found pose: (n, n, 3)."""
    n_i = model.inner_px
    s = scale * model.tile_mm / model.config.tile_px  # fine-crop px per template px
    a = np.radians(pose.angle)
    rot = np.array([[np.cos(a), np.sin(a)], [-np.sin(a), np.cos(a)]]) * s
    half = (n_i - 1) / 2
    shift = np.array(pose.centre) - rot @ np.array([half, half])
    m = np.hstack([rot, shift[:, None]])
    patch = cv2.warpAffine(
        fine,
        m,
        (n_i, n_i),
        flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP,
        borderMode=cv2.BORDER_REPLICATE,
    )
    out: Float = np.asarray(patch, np.float32)
    return out


def _cut_squares(picture: Float, poses: NDArray[np.float64], step: float, n: int) -> Float:
    """n x n squares cut from a picture (h, w, 3) at many poses (P, 3: centre x, y in its
    pixels and turn in degrees, as _Pose), `step` picture pixels a square pixel apart, in
    one resampling: (P, 3, n * n) (as _aligned cuts one, channel first)."""
    a = np.radians(poses[:, 2])
    t = np.arange(n, dtype=np.float64) - (n - 1) / 2
    cos, sin = (np.cos(a) * step)[:, None] * t, (np.sin(a) * step)[:, None] * t  # (P, n)
    # A sample's place: what its column adds, what its row adds, then the centre.
    map_x = cos[:, None, :] + sin[:, :, None]
    map_x += poses[:, 0, None, None]
    map_y = cos[:, :, None] - sin[:, None, :]
    map_y += poses[:, 1, None, None]
    cut = cv2.remap(
        picture,
        map_x.astype(np.float32).reshape(-1, n),
        map_y.astype(np.float32).reshape(-1, n),
        cv2.INTER_LINEAR,
        borderMode=cv2.BORDER_REPLICATE,
    )
    out: Float = np.ascontiguousarray(
        np.asarray(cut, np.float32).reshape(len(poses), n * n, 3).transpose(0, 2, 1)
    )
    return out


def _misfits(model: TileModel, ks: NDArray[np.intp], xs: Float) -> NDArray[np.float64]:
    """What the light model with each candidate ks (S,) leaves of each square xs (P, 3, M),
    as a sum of squares (P, S)."""
    return fit_light_shared(model.channels_of(ks), model.normal_inv[ks], model.basis_t, xs)


def _place_by_fit(job: _Pending, ks: NDArray[np.intp], model: TileModel) -> tuple[int, _Pose]:
    """Where in a crop one of the candidates ks leaves least of the tile's inner square
    unexplained, and which one does: every place and turn a tile may lie at (place_step_px
    and place_step_deg apart), then finely round each candidate's best (_fit_poses).

    The pose templates hold on to what is drawn on a tile; a tile with little drawn on it
    (open water) gives them nothing to hold, and they may cut its square where its outline
    or a neighbour lies, which no candidate explains."""
    cfg = model.config
    step = model.tile_mm / cfg.tile_px * job.scale  # fine px per template px
    far = cfg.place_search_mm * job.scale
    places = np.arange(-far, far + 1e-9, cfg.place_step_px) + (job.fine.shape[0] - 1) / 2
    turns = np.arange(-cfg.place_search_deg, cfg.place_search_deg + 1e-9, cfg.place_step_deg)
    every = np.stack(np.meshgrid(places, places, turns, indexing="ij"), axis=-1)
    every = every.reshape(-1, 3)[:, [1, 0, 2]]
    rss = _misfits(model, ks, _cut_squares(job.fine, every, step, model.inner_px))
    near = np.array([cfg.place_step_px, cfg.place_step_px, cfg.place_step_deg])
    starts = every[np.argmin(rss, axis=0)]  # each candidate's best (S, 3)
    left, at = _fit_poses(job, ks.tolist(), starts, starts - near, starts + near, model)
    s = int(np.argmin(left))
    x, y, turn = at[s]
    return int(ks[s]), _Pose((float(x), float(y)), float(turn), 0.0)


# A pose step smaller than this each way (px, degrees) changes no fit that matters.
_SETTLED = 0.03


def _refine_by_fit(job: _Pending, ks: Sequence[int], pose: _Pose, model: TileModel) -> list[_Pose]:
    """Each candidate's own place and turn, fitted from `pose`: where its light model leaves
    least of the inner square (_fit_poses), anywhere a tile may lie (place_search_mm of the
    cell's centre, place_search_deg). A small detail (a palm, a garland) a pixel off where
    another picture placed the tile fits worse than no detail at all, and a tile the first
    place missed by more than a pixel or two is found where it lies."""
    cfg = model.config
    start = np.array([pose.centre[0], pose.centre[1], pose.angle])
    far = cfg.place_search_mm * job.scale
    middle = (job.fine.shape[0] - 1) / 2
    low = np.array([middle - far, middle - far, -cfg.place_search_deg])
    high = np.array([middle + far, middle + far, cfg.place_search_deg])
    count = len(ks)
    _rss, at = _fit_poses(
        job,
        ks,
        np.tile(start, (count, 1)),
        np.tile(low, (count, 1)),
        np.tile(high, (count, 1)),
        model,
    )
    return [_Pose((float(x), float(y)), float(turn), pose.score) for x, y, turn in at]


def _fit_poses(
    job: _Pending,
    ks: Sequence[int],
    starts: NDArray[np.float64],
    lows: NDArray[np.float64],
    highs: NDArray[np.float64],
    model: TileModel,
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """For each candidate ks[i], where, from the pose starts[i] and within lows[i] to
    highs[i] (x, y px, turn in degrees; widened to take in the start), its light model
    leaves least of the inner square; and what it leaves there: (C,) and (C, 3).

    Gauss-Newton on the pose with the light projected out (variable projection): each step
    cuts one square, takes its slope along x, y and the turn, and solves for the move that
    leaves least once the light is fitted again; a step that leaves more is taken shorter.
    Every candidate takes its own steps; the squares of all that still move are cut at once."""
    step = model.tile_mm / model.config.tile_px * job.scale  # fine px per template px
    n = model.inner_px
    designs = _light_design(model, ks)  # (C, 3, 6, M)
    inverses = model.normal_inv[np.asarray(ks, np.intp)]  # (C, 3, 6, 6)

    def misfits(
        which: NDArray[np.intp], poses: NDArray[np.float64]
    ) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
        """What the light models of candidates `which` leave at `poses`, the gradients and
        Gauss-Newton matrices over the pose."""
        stack = _squares_and_slopes(job.fine, poses, step, n)  # (B, 3, 4, M)
        design = designs[which]
        on_design = np.matmul(stack, design.transpose(0, 1, 3, 2))  # (B, 3, 4, 6)
        coef = np.matmul(inverses[which], on_design.transpose(0, 1, 3, 2))
        left = stack - np.matmul(coef.transpose(0, 1, 3, 2), design)  # the light projected out
        # Over the channels: the residual's sum of squares, its gradient, the normal matrix.
        products = np.matmul(left, left.transpose(0, 1, 3, 2)).sum(axis=1, dtype=np.float64)
        return products[:, 0, 0], products[:, 1:, 0], products[:, 1:, 1:]

    at = np.array(starts, np.float64).reshape(-1, 3)
    low, high = np.minimum(lows, at), np.maximum(highs, at)
    everyone = np.arange(len(at))
    rss, grad, normal = misfits(everyone, at)
    damping = np.full(len(at), 1e-3)
    moving = np.ones(len(at), bool)
    for _ in range(model.config.place_refine_steps):
        idx = everyone[moving]
        if not len(idx):
            break
        diagonal = np.diagonal(normal[idx], axis1=1, axis2=2) + 1e-9
        lhs = normal[idx] + damping[idx, None, None] * (diagonal[:, :, None] * np.eye(3))
        move = -np.linalg.solve(lhs, grad[idx][:, :, None])[:, :, 0]
        to = np.clip(at[idx] + move, low[idx], high[idx])
        settled = np.all(np.abs(to - at[idx]) < _SETTLED, axis=1)
        moving[idx[settled]] = False
        idx, to = idx[~settled], to[~settled]
        if not len(idx):
            break
        got_rss, got_grad, got_normal = misfits(idx, to)
        better = got_rss < rss[idx]
        took = idx[better]
        at[took], rss[took], grad[took], normal[took] = (
            to[better],
            got_rss[better],
            got_grad[better],
            got_normal[better],
        )
        damping[took] = np.maximum(damping[took] / 4, 1e-6)
        damping[idx[~better]] *= 8
    return rss, at


def _light_design(model: TileModel, ks: Sequence[int]) -> Float:
    """The light model of each candidate of ks per channel, a row per column of its design
    (C, 3, 6, M): the template times each light term, then the light terms alone (the order
    of TileModel.normal_inv). Rows, not columns: products with them run along memory."""
    light = model.basis_t  # (3, M)
    out = np.empty((len(ks), 3, 6, light.shape[1]), np.float32)
    out[:, :, :3] = model.channels_of(ks).transpose(1, 0, 2)[:, :, None, :] * light
    out[:, :, 3:] = light
    return out


def _squares_and_slopes(picture: Float, poses: NDArray[np.float64], step: float, n: int) -> Float:
    """The n x n squares cut at `poses` (P, 3: x, y, turn in degrees; as _cut_squares) and
    how each changes with its pose's x, y and turn (per degree): (P, 3 channels, 4, M)."""
    count = len(poses)
    big = _cut_squares(picture, poses, step, n + 2).reshape(count, 3, n + 2, n + 2)
    along = np.subtract(big[:, :, 1:-1, 2:], big[:, :, 1:-1, :-2])  # per square pixel across
    along /= 2
    down = np.subtract(big[:, :, 2:, 1:-1], big[:, :, :-2, 1:-1])  # and down
    down /= 2
    a = np.radians(poses[:, 2])
    cos = (np.cos(a) / step).astype(np.float32)[:, None, None, None]
    sin = (np.sin(a) / step).astype(np.float32)[:, None, None, None]
    t = np.arange(n, dtype=np.float32) - (n - 1) / 2
    out = np.empty((count, 3, 4, n, n), np.float32)
    out[:, :, 0] = big[:, :, 1:-1, 1:-1]
    # Each written in place: the slopes along x and y, and along the turn (per degree).
    np.multiply(cos, along, out=out[:, :, 1])
    out[:, :, 1] += sin * down
    np.multiply(cos, down, out=out[:, :, 2])
    out[:, :, 2] -= sin * along
    turn = np.multiply(along, t[:, None], out=out[:, :, 3])
    turn -= down * t[None, :]
    turn *= math.pi / 180
    return out.reshape(count, 3, 4, n * n)


def _better_fits(
    tries: list[tuple[int, int, Float, _Pose]],
    verdicts: list[_Verdict],
    poses: list[_Pose],
    model: TileModel,
    *,
    alike: bool = False,
) -> None:
    """Each try (a crop, the candidate that placed its tile, the square cut there, the
    place) decided; a better fit than the crop's verdict so far stands (in `verdicts`,
    `poses`): by the share of the pattern explained or, with `alike`, by what each leaves
    of the same blocks: all but those every one of them left out as covered (tries of
    siblings at nearly one place, where a block one try leaves out may be the palm another
    explains)."""
    if not tries:
        return
    squares = [square for _c, _k, square, _pose in tries]
    seconds = _decide(model, squares, [k for _c, k, _s, _p in tries], _ranks(squares, model))
    if not alike:
        for (c, _k, _square, pose), verdict in zip(tries, seconds, strict=True):
            if verdict.match.fit > verdicts[c].match.fit:
                verdicts[c] = verdict
                poses[c] = pose
        return
    by_crop: dict[int, list[tuple[_Verdict, _Pose]]] = {}
    for (c, _k, _square, pose), verdict in zip(tries, seconds, strict=True):
        by_crop.setdefault(c, [(verdicts[c], poses[c])]).append((verdict, pose))
    for c, options in by_crop.items():
        masks = [v.left_out for v, _pose in options if v.left_out is not None]
        keep = (
            _block_mask(np.logical_and.reduce(masks), model.inner_px)
            if len(masks) == len(options)
            else None
        )
        misses = [(v.x - v.predicted) ** 2 for v, _pose in options]
        left = [float(m.sum() if keep is None else m[:, keep].sum()) for m in misses]
        verdicts[c], poses[c] = options[int(np.argmin(left))]


def _siblings_near(verdict: _Verdict, model: TileModel) -> list[int]:
    """A contested square's best candidate, its rival and the other pictures of the same
    island that fitted best after them, place_refine_siblings pictures in all; those after
    the two in every turn that lies as the best does."""
    best, rival = verdict.match.best, verdict.match.rival
    assert best is not None and rival is not None
    ids = [model.ids[best], model.ids[rival]]
    for k in verdict.others:
        if len(ids) >= model.config.place_refine_siblings:
            break
        if model.shapes[k] == model.shapes[best] and model.ids[k] not in ids:
            ids.append(model.ids[k])
    # Every turn that lies alike: a middle piece's two (a palm at either end), a water
    # tile's or a lone island's four. The turn that fitted better first may be the one whose
    # detail lay off the tile's place as first cut.
    turns = [
        k
        for k in range(len(model.ids))
        if model.ids[k] in ids[2:] and model.shapes[k] == model.shapes[best]
    ]
    return [best, rival, *turns]


def _placed_by_fit(
    jobs: list[_Pending], verdicts: list[_Verdict], poses: list[_Pose], model: TileModel
) -> None:
    """A square no candidate fits, where the empty look fails too, may be cut at a wrong
    place: placed again by what fits (_place_by_fit). Then a tile named, or in doubt, with
    less than full_evidence against its closest rival, a sibling (the same island, another
    detail): it, the rival and the next siblings each placed by their own fit
    (_refine_by_fit). The better fit stands: for the siblings, by what each leaves of the
    same blocks."""
    cfg = model.config
    lost = [
        c
        for c, (job, verdict) in enumerate(zip(jobs, verdicts, strict=True))
        if verdict.match.read.tile is None
        and verdict.match.fit < cfg.min_fit
        and not (job.look.looks and job.look.rms <= cfg.empty_max_rms)
    ]
    if lost and cfg.place_by_fit > 0:
        plain = model.plainest[: cfg.place_plain].tolist()
        tries = []
        for c in lost:
            ks = list(dict.fromkeys(verdicts[c].others[: cfg.place_by_fit] + plain))
            k, pose = _place_by_fit(jobs[c], np.asarray(ks), model)
            tries.append((c, k, _aligned(jobs[c].fine, model, pose, jobs[c].scale), pose))
        _better_fits(tries, verdicts, poses, model)
    contested = [
        (c, _siblings_near(verdict, model))
        for c, verdict in enumerate(verdicts)
        if (match := verdict.match).rival is not None
        and match.best is not None
        and model.shapes[match.rival] == model.shapes[match.best]
        and match.evidence < cfg.full_evidence
        and (match.read.tile is not None or match.reason.startswith("doubtful"))
    ]
    if contested and cfg.place_refine:
        tries = [
            (c, k, _aligned(jobs[c].fine, model, pose, jobs[c].scale), pose)
            for c, ks in contested
            for k, pose in zip(ks, _refine_by_fit(jobs[c], ks, poses[c], model), strict=True)
        ]
        _better_fits(tries, verdicts, poses, model, alike=True)


# --- steps 3 and 4: which tile, how sure ---------------------------------------------------


@lru_cache(maxsize=8)
def _area_weights(n: int, m: int) -> Float:
    """OpenCV's area resampling from n to m pixels as a matrix (m, n): its weights found by
    resampling the identity (the 2-D resampling is this each way in turn)."""
    out: Float = np.asarray(
        cv2.resize(np.eye(n, dtype=np.float32), (n, m), interpolation=cv2.INTER_AREA), np.float32
    )
    out.flags.writeable = False
    return out


def _ranks(patches: Sequence[Float], model: TileModel) -> NDArray[np.intp]:
    """Every candidate ranked for each straight-cut inner square (n, n, 3) by per-channel
    correlation at the medium scale, best first: (N, K), one product for all squares."""
    m = model.medium_px
    squares = np.stack(patches)  # (N, n, n, 3)
    count, n = squares.shape[:2]
    # Resampled by area as OpenCV does, each way in turn: two products for all squares.
    weights = _area_weights(n, m)  # (m, n)
    rows = np.matmul(weights, squares.reshape(count, n, n * 3)).reshape(count, m, n, 3)
    small = np.matmul(rows.transpose(0, 1, 3, 2), weights.T)  # (N, m rows, 3, m cols)
    chans = np.ascontiguousarray(
        small.transpose(2, 0, 1, 3).reshape(3, count, m * m).transpose(0, 2, 1)
    )
    chans = chans - chans.mean(axis=1, keepdims=True)  # (3, m * m, N)
    mine = np.matmul(model.medium_channels, chans)  # (3, K, N): each channel with its own
    explained = (np.maximum(mine, 0.0) ** 2).sum(axis=0)
    out: NDArray[np.intp] = np.argsort(-explained.T, axis=1)
    return out


@dataclass(frozen=True, slots=True)
class _Fits:
    ks: NDArray[np.intp]  # the candidates fitted
    rss: NDArray[np.float64]
    coef: NDArray[np.float64]
    ninv: Float  # the inverse normal matrices used (for the same pixels)
    share: float  # of what the light alone leaves, what the best explains

    def best(self) -> int:
        return int(np.argmin(self.rss))


def _masked_inverses(model: TileModel, ks: NDArray[np.intp], hidden: Mask) -> Float:
    """Inverse normal matrices of each square's candidates ks (N, S) without its hidden
    blocks hidden (N, blocks, blocks), each with some: the full normal matrices less what
    those blocks add."""
    cells, blocks = np.nonzero(hidden.reshape(len(hidden), -1))
    gone = model.block_gram[ks[cells], :, blocks[:, None]]  # (hidden blocks, S, 3, 6, 6)
    starts = np.flatnonzero(np.r_[True, cells[1:] != cells[:-1]])
    gram = model.gram[ks] - np.add.reduceat(gone, starts, axis=0)
    return invert_normal(gram)


def _fits_many(
    model: TileModel, ks: NDArray[np.intp], xs: Float, hidden: Mask | None
) -> list[_Fits]:
    """Each square's candidates ks (N, S) fitted to it, xs (N, 3, M), without its hidden
    blocks (N, blocks, blocks), if given (each with some)."""
    n_i = model.inner_px
    if hidden is None:
        keep = None
        ninv = model.normal_inv[ks]
    else:
        keep = np.stack([_block_mask(h, n_i) for h in hidden])
        ninv = _masked_inverses(model, ks, hidden)
    rss, coef = fit_light_many(model.channels_of(ks), ninv, model.basis_t, xs, keep)
    base = _light_residuals_kept(xs, _square(n_i), keep)
    return [
        _Fits(ks[i], rss[i], coef[i], ninv[i], float(1.0 - rss[i].min() / max(base[i], 1e-6)))
        for i in range(len(ks))
    ]


def _fits(model: TileModel, ks: NDArray[np.intp], x: Float, hidden: Mask | None) -> _Fits:
    """Candidates ks fitted to x (3, M) without the hidden blocks."""
    if hidden is not None and not hidden.any():
        hidden = None
    return _fits_many(model, ks[None], x[None], None if hidden is None else hidden[None])[0]


# Squares fitted together: enough to share the many small calls' cost, few enough that
# their candidates' pictures (some 0.5 MB a square) stay in the cache. (Single squares took
# 8 % more of a hard table's time, all 80 at once 5 % more.)
_FITTED_TOGETHER = 8


def _fitted(
    model: TileModel, ks: list[NDArray[np.intp]], xs: Float, hidden: list[Mask | None]
) -> list[_Fits]:
    """_fits of many squares, up to _FITTED_TOGETHER of those with as many candidates and
    alike in having hidden blocks or not at once."""
    out: list[_Fits | None] = [None] * len(ks)
    batches: dict[tuple[int, bool], list[int]] = {}
    for i, (k, h) in enumerate(zip(ks, hidden, strict=True)):
        batches.setdefault((len(k), h is not None), []).append(i)
    chunks = [
        (key, idx[j : j + _FITTED_TOGETHER])
        for key, idx in batches.items()
        for j in range(0, len(idx), _FITTED_TOGETHER)
    ]
    for (_size, masked), idx in chunks:
        got = _fits_many(
            model,
            np.stack([ks[i] for i in idx]),
            xs[idx],
            np.stack([h for i in idx if (h := hidden[i]) is not None]) if masked else None,
        )
        for i, fits in zip(idx, got, strict=True):
            out[i] = fits
    return [f for f in out if f is not None]


@dataclass(frozen=True, slots=True)
class _Verdict:
    match: CellMatch
    predicted: Float  # the best fit's picture of the tile's inner square (3, M)
    rss: float  # what it leaves of the whole square
    others: list[int]  # candidates of the first fit, best first (the best one included)
    x: Float  # the square read (3, M)
    left_out: Mask | None  # blocks left out as covered (blocks x blocks), if any


def _covered(xs: Float, fits: Sequence[_Fits], model: TileModel) -> Mask:
    """Per square xs (N, 3, M), the blocks none of its best-fitting few candidates explains
    (a detail one of them lacks, such as a garland, is not a cover when another has it):
    (N, blocks, blocks)."""
    cfg = model.config
    orders = [np.argsort(f.rss) for f in fits]
    hidden: Mask | None = None
    for w in range(min(cfg.cover_witnesses, min(len(f.ks) for f in fits))):
        ks = np.array([f.ks[o[w]] for f, o in zip(fits, orders, strict=True)])
        predicted = _predicted_many(
            model, ks, np.stack([f.coef[o[w]] for f, o in zip(fits, orders, strict=True)])
        )
        res = xs - predicted
        mine = _hidden_many((res * res).sum(axis=1), model.inner_px, cfg, predicted)
        hidden = mine if hidden is None else hidden & mine
    assert hidden is not None
    return hidden


def _worst_blocks(xs: Float, fits: Sequence[_Fits], model: TileModel, share: float) -> Mask:
    """Per square xs (N, 3, M), the `share` of its blocks its best fit explains worst:
    (N, blocks, blocks)."""
    best = np.array([int(f.ks[f.best()]) for f in fits])
    predicted = _predicted_many(model, best, np.stack([f.coef[f.best()] for f in fits]))
    res = xs - predicted
    blocks = _block_means((res * res).sum(axis=1), model.inner_px, model.config.blocks)
    flat = blocks.reshape(len(xs), -1)
    worst = np.argsort(-flat, axis=1)[:, : round(share * flat.shape[1])]
    out: Mask = np.zeros(flat.shape, bool)
    np.put_along_axis(out, worst, True, axis=1)
    return out.reshape(blocks.shape)


def _refit_candidates(fits: _Fits, first: int, count: int) -> NDArray[np.intp]:
    """The `count` candidates of a square's fits fitting it best, for a refit without some of
    its blocks; the candidate that placed the tile (_decide fits it from the first) always
    among them: a plain tile under a cover fits worse than busier pictures while the cover
    is in the fit."""
    best: NDArray[np.intp] = fits.ks[np.argsort(fits.rss)[:count]]
    if first in best:
        return best
    out: NDArray[np.intp] = np.append(best[: count - 1], first)
    return out


def _decide(
    model: TileModel,
    patches: Sequence[Float],
    firsts: Sequence[int],
    orders: NDArray[np.intp],
    siblings: bool = True,
) -> list[_Verdict]:
    """Which candidate each straight-cut inner square (n, n, 3) shows, and how sure: given
    the candidate that placed it and all candidates ranked for it (_ranks). The squares'
    fits are made together, a step at a time (`siblings`: a tile named partly covered is
    decided again with its siblings fitted)."""
    cfg = model.config
    xs = np.ascontiguousarray(np.stack(patches).reshape(len(patches), -1, 3).transpose(0, 2, 1))
    shortlists = []
    for order, first in zip(orders, firsts, strict=True):
        shortlist = order[: cfg.shortlist]
        shortlists.append(shortlist if first in shortlist else np.append(shortlist, first))
    fits = _fitted(model, shortlists, xs, [None] * len(patches))
    others = [f.ks[np.argsort(f.rss)].tolist() for f in fits]
    left_out: list[Mask | None] = [None] * len(patches)  # the blocks each fit leaves out
    share_hidden = [0.0] * len(patches)
    # A cover big or colourful enough drags the light model of a first fit along (a red
    # player ship turns the tile red), and what is left unexplained is then everywhere: a
    # square that fits poorly starts again from the blocks its best fit explains best.
    poor = [i for i, f in enumerate(fits) if f.share < cfg.min_fit]
    if poor and cfg.cover_trim > 0:
        trims = _worst_blocks(xs[poor], [fits[i] for i in poor], model, cfg.cover_trim)
        refits = _fitted(
            model,
            [_refit_candidates(fits[i], firsts[i], cfg.refit) for i in poor],
            xs[poor],
            list(trims),
        )
        for i, f, trim in zip(poor, refits, trims, strict=True):
            fits[i], left_out[i] = f, trim
    # Covered blocks: far more left unexplained than the typical block. The fit is redone
    # without them, for the closest few candidates (a big cover spoils the first fit).
    looking = list(range(len(patches)))
    over: dict[int, Mask] = {}  # squares found more hidden than max_hidden: their blocks
    for _ in range(cfg.cover_passes):
        if not looking:
            break
        hidden = _covered(xs[looking], [fits[i] for i in looking], model)
        again = []
        for i, h in zip(looking, hidden, strict=True):
            share_hidden[i] = int(np.count_nonzero(h)) / h.size
            if share_hidden[i] > cfg.max_hidden:
                over[i] = h
                continue
            now, before = (h if h.any() else None), left_out[i]
            if (now is None and before is None) or (
                now is not None and before is not None and bool(np.array_equal(now, before))
            ):
                continue
            left_out[i] = now
            again.append(i)
        refitted = _fitted(
            model,
            [_refit_candidates(fits[i], firsts[i], cfg.refit) for i in again],
            xs[again],
            [left_out[i] for i in again],
        )
        for i, f in zip(again, refitted, strict=True):
            fits[i] = f
        looking = again
    spoiled = set(poor)
    verdicts = _verdicts(model, xs, fits, others, left_out, share_hidden, spoiled, cfg.max_hidden)
    # A compact cover (a player's ship and its shadow) may hide more blocks than max_hidden
    # while what is left still names the tile: those squares are fitted without all of
    # them, and a tile named so stands (an empty cell's look keeps max_hidden).
    more = [
        i
        for i, h in over.items()
        if share_hidden[i] <= cfg.max_hidden_named and verdicts[i].match.read.unknown
    ]
    if more:
        refits = _fitted(
            model,
            [_refit_candidates(fits[i], firsts[i], cfg.refit) for i in more],
            xs[more],
            [over[i] for i in more],
        )
        seconds = _verdicts(
            model,
            xs[more],
            refits,
            [others[i] for i in more],
            [over[i] for i in more],
            [share_hidden[i] for i in more],
            {j for j, i in enumerate(more) if i in spoiled},
            cfg.max_hidden_named,
        )
        for i, verdict in zip(more, seconds, strict=True):
            if verdict.match.read.tile is not None:
                verdicts[i] = verdict
    if siblings and cfg.siblings_when_covered > 0:
        _decide_with_siblings(model, patches, firsts, orders, fits, verdicts)
    return verdicts


def _decide_with_siblings(
    model: TileModel,
    patches: Sequence[Float],
    firsts: Sequence[int],
    orders: NDArray[np.intp],
    fits: Sequence[_Fits],
    verdicts: list[_Verdict],
) -> None:
    """Each tile named with blocks left out as covered decided again (in `verdicts`) with
    its siblings fitted too (the same island as it lies, another meaning: a hut, a shell
    more or less), the second decision standing when it differs. The blocks were chosen by
    the misfits of the candidates fitted, so a sibling not among them may differ from the
    tile named only there; fitted, it witnesses what a cover is."""
    cfg = model.config
    again: list[int] = []
    redo: list[NDArray[np.intp]] = []
    for i, verdict in enumerate(verdicts):
        best = verdict.match.best
        if verdict.left_out is None or verdict.match.read.tile is None or best is None:
            continue
        kin = np.flatnonzero(
            (model.shapes == model.shapes[best]) & (model.groups != model.groups[best])
        )
        kin = kin[~np.isin(kin, fits[i].ks)]
        if not kin.size:
            continue
        rank = np.empty_like(orders[i])
        rank[orders[i]] = np.arange(len(orders[i]))
        new = kin[np.argsort(rank[kin])][: cfg.siblings_when_covered]
        # The shortlist: the closest candidates fitted before, then the siblings.
        head = np.concatenate(
            [fits[i].ks[np.argsort(fits[i].rss)][: max(cfg.shortlist - len(new), 1)], new]
        ).astype(np.intp)
        again.append(i)
        redo.append(np.concatenate([head, orders[i][~np.isin(orders[i], head)]]))
    if not again:
        return
    seconds = _decide(
        model,
        [patches[i] for i in again],
        [firsts[i] for i in again],
        np.stack(redo),
        siblings=False,
    )
    for i, verdict in zip(again, seconds, strict=True):
        before, now = verdicts[i].match.read, verdict.match.read
        if (now.tile, now.rotation) != (before.tile, before.rotation):
            verdicts[i] = verdict


def _verdicts(
    model: TileModel,
    xs: Float,
    fits: Sequence[_Fits],
    others: Sequence[list[int]],
    left_out: Sequence[Mask | None],
    share_hidden: Sequence[float],
    spoiled: set[int],
    max_hidden: float,
) -> list[_Verdict]:
    """_verdict of each square from its final fits (`spoiled`: those whose first fit was
    poor, held to min_evidence_trimmed)."""
    cfg = model.config
    bests = np.array([int(f.ks[f.best()]) for f in fits])
    predicted = _predicted_many(model, bests, np.stack([f.coef[f.best()] for f in fits]))
    rivals = _rival_misses(model, fits, predicted, left_out)
    return [
        _verdict(
            model,
            xs[i],
            fits[i],
            others[i],
            left_out[i],
            share_hidden[i],
            predicted[i],
            cfg.min_evidence_trimmed if i in spoiled else cfg.min_evidence,
            rivals[i],
            max_hidden,
        )
        for i in range(len(fits))
    ]


def _rival_misses(
    model: TileModel, fits: Sequence[_Fits], predicted: Float, left_out: Sequence[Mask | None]
) -> list[tuple[list[int], NDArray[np.float64]]]:
    """Per square, its closest rivals (indices into its fits: candidates meaning something
    else than the best, nor its look-alike turn; best fitting first, at most cfg.rivals)
    and what each would miss were the best exactly right (its fitted picture `predicted`
    (N, 3, M)), over the square's kept pixels; squares of as many rivals fitted together."""
    cfg = model.config
    out: list[tuple[list[int], NDArray[np.float64]]] = []
    batches: dict[tuple[int, bool], list[int]] = {}
    for n, f in enumerate(fits):
        best = int(f.ks[f.best()])
        rivalling = (model.groups[f.ks] != model.groups[best]) & ~model.twins[best, f.ks]
        chosen = [int(j) for j in np.argsort(f.rss, kind="stable") if rivalling[j]][: cfg.rivals]
        out.append((chosen, np.zeros(0)))
        if chosen:
            batches.setdefault((len(chosen), left_out[n] is None), []).append(n)
    for (_count, whole), idx in batches.items():
        keep = (
            None
            if whole
            else np.stack(
                [_block_mask(h, model.inner_px) for n in idx if (h := left_out[n]) is not None]
            )
        )
        ks = np.stack([fits[n].ks[out[n][0]] for n in idx])
        rss, _coef = fit_light_many(
            model.channels_of(ks),
            np.stack([fits[n].ninv[out[n][0]] for n in idx]),
            model.basis_t,
            predicted[idx],
            keep,
        )
        for n, apart in zip(idx, rss, strict=True):
            out[n] = (out[n][0], apart)
    return out


def _hidden_apart(model: TileModel, best: int, rival: int, keep: Mask) -> float:
    """Of what tells two candidates' pictures apart (each less its mean), the share lying
    outside the kept pixels keep (M,): near 1, what would tell them apart is not seen."""
    d = model.channels[:, best] - model.channels[:, rival]  # (3, M)
    energy = np.einsum("cm,cm->m", d, d, dtype=np.float64)
    return float(energy[~keep].sum() / max(float(energy.sum()), 1e-9))


def _verdict(
    model: TileModel,
    x: Float,
    fits: _Fits,
    others: list[int],
    left_out: Mask | None,
    share_hidden: float,
    predicted: Float,
    min_evidence: float,
    rival_misses: tuple[list[int], NDArray[np.float64]],
    max_hidden: float,
) -> _Verdict:
    """A square's answer from its final fits (the best one's picture `predicted`): a tile
    when it fits well, clearly and unlike every rival meaning something else (by at least
    `min_evidence`; the rivals and what each misses of the best: _rival_misses)."""
    cfg = model.config
    keep = None if left_out is None else _block_mask(left_out, model.inner_px)
    i = fits.best()
    best = int(fits.ks[i])
    whole = float(((x - predicted) ** 2).sum())
    kept = x.shape[1] if keep is None else int(keep.sum())
    rms = float(np.sqrt(fits.rss[i] / (3 * kept)))
    gain = _structure_gain(fits.coef[i], model.energy[best])
    spread = _gain_spread(fits.coef[i], model.energy[best])
    rivals, misses = rival_misses
    evidence, rival, separation = 1.0, None, float("inf")
    if rivals:
        # What each rival would miss were the best exactly right, and the noise per value.
        ks = fits.ks[rivals]
        apart = np.maximum(misses, 1e-6)
        noise = max(float(np.sqrt(fits.rss[i] / max(3 * kept - 18, 1))), 1.0)
        ev = (fits.rss[rivals] - fits.rss[i]) / apart
        j = int(np.argmin(ev))
        evidence, rival = float(ev[j]), int(ks[j])
        separation = float(np.sqrt(apart.min()) / (2 * noise))
    hidden_apart = 0.0 if keep is None or rival is None else _hidden_apart(model, best, rival, keep)
    stats = (fits.share, rms, share_hidden, gain, spread, evidence, separation, hidden_apart)

    def unknown(reason: str, evidence: float = 0.0, rival: int | None = None) -> _Verdict:
        match = CellMatch(
            UNKNOWN,
            best,
            fits.share,
            evidence,
            share_hidden,
            reason=reason,
            rival=rival,
            proposal=best,
            tile_stats=stats,
        )
        return _Verdict(match, predicted, whole, others, x, left_out)

    if share_hidden > max_hidden:
        return unknown("covered")
    faint_ok = rms <= cfg.max_fit_rms and keep is None  # a plain tile, nothing covering it
    if fits.share < cfg.min_fit_floor or (fits.share < cfg.min_fit and not faint_ok):
        return unknown("poor fit")
    if share_hidden >= cfg.covered_share and fits.share < cfg.min_fit_covered:
        return unknown("poor fit, partly covered")
    if gain < cfg.min_gain:
        return unknown("washed out")
    if spread > cfg.max_gain_spread:
        return unknown("colours")
    if separation < cfg.min_separation:
        return unknown("faint", evidence, rival)
    if evidence < min_evidence:
        return unknown("doubtful", evidence, rival)
    if (
        share_hidden >= cfg.doubt_covered_share
        and fits.share < cfg.sure_fit_covered
        and evidence < cfg.sure_evidence_covered
    ):
        return unknown("doubtful, partly covered", evidence, rival)
    if left_out is not None and rivals:
        edge = _evidence_beside_cover(model, x, best, fits.ks[rivals], left_out)
        if edge < cfg.cover_edge_evidence:
            return unknown("doubtful beside a cover", min(edge, evidence), rival)
    confidence = min(evidence / cfg.full_evidence, max(fits.share / cfg.full_fit, 0.5), 1.0)
    confidence *= 1.0 - 0.5 * share_hidden
    read = CellRead(model.ids[best], model.rotations[best], round(float(max(confidence, 0.0)), 4))
    # The template enters the fit less its mean: its black is the offset less the gain
    # times that mean (at the centre).
    veil = fits.coef[i, :, 3] - fits.coef[i, :, 0] * model.template_means[best]
    match = CellMatch(
        read,
        best,
        fits.share,
        evidence,
        share_hidden,
        reason="tile",
        rival=rival,
        veil=(float(veil[0]), float(veil[1]), float(veil[2])),
        proposal=best,
        tile_stats=stats,
    )
    return _Verdict(match, predicted, whole, others, x, left_out)


def _beside(hidden: Mask) -> Mask:
    """The blocks hidden and those beside them (sharing a side): (blocks, blocks)."""
    out = hidden.copy()
    out[1:] |= hidden[:-1]
    out[:-1] |= hidden[1:]
    out[:, 1:] |= hidden[:, :-1]
    out[:, :-1] |= hidden[:, 1:]
    return out


def _evidence_beside_cover(
    model: TileModel, x: Float, best: int, rivals: NDArray[np.intp], hidden: Mask
) -> float:
    """The best candidate's evidence against its rivals (as in _verdict) over the square x
    (3, M) without its hidden blocks nor those beside them: the edge of a cover not caught
    as covered lies there, and may be all that favours the best."""
    grown = _beside(hidden)
    if grown.all():
        return -math.inf
    ks = np.concatenate([[best], rivals])
    fits = _fits(model, ks, x, grown)
    predicted = _predicted(model, best, fits.coef[0])
    keep = _block_mask(grown, model.inner_px)
    misses, _coef = fit_light_many(
        model.channels_of(ks[1:])[:, None],
        fits.ninv[1:][None],
        model.basis_t,
        predicted[None],
        keep[None],
    )
    apart = np.maximum(misses[0], 1e-6)
    return float(((fits.rss[1:] - fits.rss[0]) / apart).min())


def _settle(
    verdict: _Verdict, look: _EmptyLook, empty_rss: float, apart: float | None, model: TileModel
) -> CellMatch:
    """Weigh the tile found against the empty look, for a cell that might be empty (its look
    `looks` and leaves at most empty_max_rms: _read_tiles picks them): given what the empty
    look leaves of the square (empty_rss) and, when a tile is named, of the tile's fitted
    picture (apart: what it misses of the tile)."""
    cfg = model.config
    match = replace(verdict.match, empty_rms=look.rms)
    delta = empty_rss - verdict.rss  # how much more of the tile's square the tile explains
    if match.read.tile is not None:
        assert apart is not None
        evidence = delta / max(apart, 1e-6)
        if evidence >= cfg.min_evidence:
            return match
        return replace(match, read=UNKNOWN, evidence=min(evidence, match.evidence), reason="empty?")
    # No tile named. Never empty in glare that may wash a tile out, nor where the board's
    # own picture is not seen or barely explains what is left uncovered. Empty when the
    # board picture is seen at its full contrast (no tile's glare would leave that) and no
    # tile fitting well explains clearly more,
    # or when no tile explains clearly more than the empty look and nothing looks
    # like a tile at all; otherwise (a faint tile) unknown.
    if look.washed:
        return replace(match, reason="glare")
    if _board_unexplained(look, cfg):
        return replace(match, reason="board unexplained")
    noise = max(min(empty_rss, verdict.rss) / verdict.predicted.size, 1.0)
    faint = delta > cfg.empty_max_excess * noise  # some tile explains clearly more
    if look.gain >= cfg.empty_full_gain and not (
        cfg.full_gain_yields_to_tile and faint and match.fit >= cfg.min_fit
    ):
        return _empty(look, model)
    if not _board_seen(look, cfg):
        return replace(match, reason="board unseen")
    if not faint and match.fit < cfg.min_fit_floor:
        return _empty(look, model)
    return match


def _settle_covered(
    verdict: _Verdict, look: _EmptyLook, square: Float, model: TileModel
) -> CellMatch:
    """A tile named where covered blocks were left out must beat the empty look on the
    blocks neither takes as covered, as it would beat it were the tile exactly there (each
    fit alone leaves out its own blocks: compared over different pixels, a cover would
    favour either)."""
    cfg = model.config
    match = replace(verdict.match, empty_rms=look.rms)
    assert verdict.left_out is not None and match.best is not None
    both = verdict.left_out if look.hidden is None else verdict.left_out | look.hidden
    if np.count_nonzero(both) > cfg.max_hidden_named * both.size:
        return replace(match, read=UNKNOWN, reason="covered")
    keep = _block_mask(both, model.inner_px)
    fits = _fits(model, np.array([match.best]), verdict.x, both)
    empty_rss = look.inner_fit(model, square, keep)
    if empty_rss > cfg.empty_max_rms**2 * 3 * int(keep.sum()):
        return match  # the empty look explains the seen part far worse than any empty cell
    predicted = _predicted(model, match.best, fits.coef[0])
    apart = look.inner_fit(model, predicted, keep)  # what it misses of the tile
    evidence = (empty_rss - float(fits.rss[0])) / max(apart, 1e-6)
    if evidence >= cfg.min_evidence:
        return match
    return replace(match, read=UNKNOWN, evidence=min(evidence, match.evidence), reason="empty?")


@dataclass(frozen=True, slots=True)
class _Pending:
    fine: Float
    scale: float  # fine-crop px per mm
    offsets: NDArray[np.float64]
    look: _EmptyLook
    crop: Image  # the crop as cut (model.px_per_mm)
    board: Image | None  # its empty board picture, if a board cell


@dataclass(frozen=True, slots=True)
class _Placed:
    """Where a pending cell's tile was found: by which candidate, and its square cut there."""

    where: NDArray[np.intp]  # each candidate's best coarse window
    tried: list[int]  # the candidates that searched the place
    feats: Float  # the crop's pose features
    half: Float  # the same at half the scale
    first: int  # the candidate that placed it best
    patch: Float  # the tile's inner square cut along that place (n, n, 3)
    score: float  # how well it placed it (normalised correlation of the pose features)
    pose: _Pose  # the place itself


def _quarter_choices(
    jobs: list[_Pending], half: Float, model: TileModel, tried: list[list[int]], count: int
) -> list[tuple[list[int], list[NDArray[np.float64]]]]:
    """For crops of one size (pose features at half scale `half`), the `count` candidates
    not yet tried that place a tile best at a quarter of the scale (every place, every
    turn), each with where it does (the tile centre's offset from the crop's centre, mm).

    The coarse colour match misses the tile it should find in hard light (nearly half of
    the tiles hard tables left unknown were not in its best ten); this search, some 4.6 M
    products a crop, is for the crops where no tile was named."""
    quarter = halve_features_many(half)
    count_n, colours, q_side = quarter.shape[:3]
    size, turns, k_all = model.pose_quarter.shape
    q_p = round(np.sqrt(size / colours))
    places = q_side - q_p + 1
    # Every window of every crop, its values by row, colour, column as the templates', unit
    # norm; then one product with all the templates.
    views = np.lib.stride_tricks.sliding_window_view(quarter, (q_p, q_p), axis=(2, 3))
    windows = views.transpose(0, 2, 3, 4, 1, 5).reshape(count_n * places * places, size)
    windows = windows / np.maximum(np.linalg.norm(windows, axis=1, keepdims=True), 1e-3)
    scores = (windows @ model.pose_quarter.reshape(size, turns * k_all)).reshape(
        count_n, places * places * turns, k_all
    )
    best_at = scores.argmax(axis=1)  # (N, K): place * turns + turn
    best = np.take_along_axis(scores, best_at[:, None], axis=1)[:, 0]
    best_place = best_at // turns
    n_p = 4 * q_p  # the full-scale template's side
    out = []
    orders = np.argsort(-best, axis=1, kind="stable")
    for i, job in enumerate(jobs):
        seen = set(tried[i])
        top = [k for k in orders[i, : count + len(seen)].tolist() if k not in seen][:count]
        side = job.fine.shape[0]
        at = best_place[i, top]
        centres = np.stack([4 * (at % places), 4 * (at // places)], axis=1) + (n_p - 1) / 2
        offs = (centres - (side - 1) / 2) / job.scale
        out.append((top, [np.asarray(o, np.float64) for o in offs]))
    return out


def _place_all(
    jobs: list[_Pending],
    scores: list[Float],
    model: TileModel,
    count: int | None = None,
    features: list[tuple[Float, Float]] | None = None,
    exclude: list[list[int]] | None = None,
) -> list[_Placed]:
    """For each pending crop with its coarse scores: the candidates that match best at their
    best coarse places (`count` of them, pose_candidates unless given) each search the
    tile's place; the best placed fixes it, with its turn. Crops of one size at once; their
    pose features and halves, if given, as made before.

    With `exclude` (each crop's candidates tried already), the candidates are instead the
    `count` best by the quarter-scale pose search (_quarter_choices), searched round their
    own places there."""
    cfg = model.config
    count = cfg.pose_candidates if count is None else count
    out: list[_Placed | None] = [None] * len(jobs)
    by_side: dict[int, list[int]] = {}
    for i, job in enumerate(jobs):
        by_side.setdefault(job.fine.shape[0], []).append(i)
    for idx in by_side.values():
        wheres = [np.argmax(scores[i], axis=0) for i in idx]
        if features is None:
            feats = pose_features_many(
                np.stack([jobs[i].fine for i in idx]), model.pose_colours, cfg.pose_highpass_px
            )
            half = halve_features_many(feats)
        else:
            feats = np.stack([features[i][0] for i in idx])
            half = np.stack([features[i][1] for i in idx])
        if exclude is None:
            tried = [
                [int(k) for k in np.argsort(-scores[i][w, np.arange(len(w))])[:count]]
                for i, w in zip(idx, wheres, strict=True)
            ]
            offsets = [
                [jobs[i].offsets[w[k]] for k in t]
                for i, w, t in zip(idx, wheres, tried, strict=True)
            ]
        else:
            choices = _quarter_choices(
                [jobs[i] for i in idx], half, model, [exclude[i] for i in idx], count
            )
            tried = [c[0] for c in choices]
            offsets = [c[1] for c in choices]
        found = _find_poses(feats, half, model, tried, offsets, [jobs[i].scale for i in idx])
        for j, i in enumerate(idx):
            job = jobs[i]
            k, pose = found[j]
            out[i] = _Placed(
                wheres[j],
                tried[j],
                feats[j],
                half[j],
                k,
                _aligned(job.fine, model, pose, job.scale),
                pose.score,
                pose,
            )
    return [p for p in out if p is not None]


def _retries(job: _Pending, placed: _Placed, verdict: _Verdict, model: TileModel) -> list[int]:
    """Candidates that place the tile again after its first verdict (the better fit stands).

    The tile may be none of those that placed it (a wrong place fits everything worse):
    when no tile is named, or a candidate that did not place it won, it is placed again
    with the best-fitting ones that have not tried yet. A tile named with little evidence
    is placed again by its closest rival, even one that took part in the first search, and
    one left in doubt between two tiles by each of the two that did not place it: a thin
    detail (a boat's outline, a garland) the first place puts a pixel off fits worse than
    no detail at all."""
    cfg = model.config
    match = verdict.match
    if match.read.tile is not None:
        contested = (
            cfg.rival_recheck_evidence_covered
            if verdict.left_out is not None
            else cfg.rival_recheck_evidence
        )
        if match.rival is not None and match.evidence < contested:
            return [match.rival]
        if match.best in placed.tried:
            return []
        count = min(1, cfg.pose_retries)
    elif match.reason == "doubtful" and cfg.doubt_placed_by_both and match.best is not None:
        # In doubt between two tiles: each placed by its own picture.
        return [k for k in (match.best, match.rival) if k is not None and k != placed.first]
    elif job.look.looks or match.fit < cfg.min_fit_floor:
        return []  # an empty cell, or nothing like a tile: no place will make it one
    else:
        count = cfg.pose_retries
    return [c for c in verdict.others if c not in placed.tried][:count]


def _place_again(
    again: list[tuple[_Pending, _Placed, int]], model: TileModel
) -> list[tuple[Float, _Pose]]:
    """Each crop placed again by one more candidate: the tile's square cut there (n, n, 3),
    and the place. Crops of one size at once."""
    out: list[tuple[Float, _Pose] | None] = [None] * len(again)
    by_side: dict[int, list[int]] = {}
    for i, (job, _placed, _k) in enumerate(again):
        by_side.setdefault(job.fine.shape[0], []).append(i)
    for idx in by_side.values():
        found = _find_poses(
            np.stack([again[i][1].feats for i in idx]),
            np.stack([again[i][1].half for i in idx]),
            model,
            [[again[i][2]] for i in idx],
            [[again[i][0].offsets[again[i][1].where[again[i][2]]]] for i in idx],
            [again[i][0].scale for i in idx],
        )
        for i, (_k, pose) in zip(idx, found, strict=True):
            out[i] = (_aligned(again[i][0].fine, model, pose, again[i][0].scale), pose)
    return [x for x in out if x is not None]


def _paper_cast(job: _Pending, model: TileModel) -> NDArray[np.float64]:
    """The colour of the light on a cell, unit mean (3,): the paper seen round it over the
    paper it should be (white on the mat or card, the board picture's own round a board
    cell)."""
    seen = _papers(job.fine.transpose(2, 0, 1)[None], model)[1][0]
    if job.board is not None:
        board = _scaled(job.board, job.fine.shape[0])
        seen = seen / np.maximum(_papers(board.transpose(2, 0, 1)[None], model)[1][0], 1.0)
    seen = np.maximum(np.asarray(seen, np.float64), 1e-3)
    out: NDArray[np.float64] = seen / seen.mean()
    return out


def _lit_misfits(x: Float, cast: NDArray[np.float64], model: TileModel) -> NDArray[np.float64]:
    """What each candidate leaves of the square x (3, M), its colours lit by the light's
    colour `cast` at any brightness (one gain, not below 0) under a grey veil (one offset):
    the mean squared residual (K,). Unlike the light model of step 4, which fits each
    channel's gain apart, this keeps the tile's own colours: a plain blue tile is not a
    plain green one, nor a patterned tile seen at no contrast."""
    m = x.shape[1]
    n = 3 * m
    xs = np.ascontiguousarray(x, np.float32)
    per_channel = xs.sum(axis=1, dtype=np.float64)
    sx = float(per_channel.sum())
    sxx = float(np.einsum("cm,cm->", xs, xs, dtype=np.float64)) - sx * sx / n
    # Each candidate's product with the square per channel: its pattern (model.channels,
    # less its mean) by the square, plus its mean by the square's sum.
    dots = np.stack([model.channels[c] @ xs[c] for c in range(3)], axis=1).astype(np.float64)
    dots += model.template_means * per_channel
    sums = (model.template_means * (m * cast)).sum(axis=1)
    spp = model.fine_power @ (cast * cast) - sums * sums / n
    sxp = dots @ cast - sx * sums / n
    gain = np.where(spp > 1e-9, sxp / np.maximum(spp, 1e-9), 0.0)
    rss = np.where(gain > 0, sxx - gain * sxp, sxx)
    out: NDArray[np.float64] = np.maximum(rss, 0.0) / n
    return out


def _lit_stats(
    misfits: NDArray[np.float64], k: int, model: TileModel
) -> tuple[float, float, float]:
    """A candidate's lit rms, its margin over the best candidate meaning something else
    ((other - its) / (other + its), -1..1), and whether its meaning fits best lit."""
    other = misfits[model.groups != model.groups[k]]
    rival = float(other.min()) if other.size else float("inf")
    own = float(misfits[k])
    margin = 1.0 if not math.isfinite(rival) else (rival - own) / max(rival + own, 1e-9)
    best = float(model.groups[int(np.argmin(misfits))] == model.groups[k])
    return math.sqrt(own), margin, best


def _lit_proposal(
    match: CellMatch, x: Float, misfits: NDArray[np.float64], model: TileModel
) -> CellMatch:
    """The cell's proposal and its figures with the lit fit's: a tile the matcher found a
    poor fit for is proposed again as the candidate that fits best lit (a plain tile
    ranks low among patterned ones by pattern alone)."""
    k = match.proposal
    by_light = 0.0
    stats = match.tile_stats
    if match.read.unknown and match.reason == "poor fit":
        best = int(np.argmin(misfits))
        if k is None or model.groups[best] != model.groups[k]:
            fits = _fits(model, np.array([best]), x, None)
            rms = math.sqrt(float(fits.rss[0]) / x.size)
            gain = _structure_gain(fits.coef[0], model.energy[best])
            spread = _gain_spread(fits.coef[0], model.energy[best])
            stats = (fits.share, rms, 0.0, gain, spread, 0.0, 0.0, 0.0)
            k, by_light = best, 1.0
    if k is None or len(stats) < 8:
        return match
    return replace(
        match, proposal=k, tile_stats=(*stats[:8], *_lit_stats(misfits, k, model), by_light)
    )


def _read_tiles(jobs: list[_Pending], scores: list[Float], model: TileModel) -> list[CellMatch]:
    """Which tile each pending crop shows (with its coarse scores): placed, cut straight,
    ranked and fitted; placed again by other candidates when in doubt; weighed against the
    empty look."""
    cfg = model.config
    placed = _place_all(jobs, scores, model)
    orders = _ranks([p.patch for p in placed], model)
    verdicts = _decide(model, [p.patch for p in placed], [p.first for p in placed], orders)
    poses = [p.pose for p in placed]
    # A crop where no tile is named may hold one the coarse search ranked low (a hand over
    # part of it spoils the coarse match): the next best coarse candidates search its place
    # too; one that places it better is fitted there, and the better fit stands.
    doubtful = [c for c, verdict in enumerate(verdicts) if verdict.match.read.tile is None]
    if doubtful and cfg.pose_candidates_more:
        extra = _place_all(
            [jobs[c] for c in doubtful],
            [scores[c] for c in doubtful],
            model,
            count=cfg.pose_candidates_more,
            features=[(placed[c].feats, placed[c].half) for c in doubtful],
            exclude=[placed[c].tried for c in doubtful],
        )
        better = [
            (c, place.first, place.patch, place.pose)
            for c, place in zip(doubtful, extra, strict=True)
            if place.score > placed[c].score + cfg.place_margin
        ]
        for c, place in zip(doubtful, extra, strict=True):
            placed[c] = replace(placed[c], tried=placed[c].tried + place.tried)
        _better_fits(better, verdicts, poses, model)
    again = [
        (c, k)
        for c, (job, place, verdict) in enumerate(zip(jobs, placed, verdicts, strict=True))
        for k in _retries(job, place, verdict, model)
    ]
    if again:
        found = _place_again([(jobs[c], placed[c], k) for c, k in again], model)
        tries = [(c, k, patch, pose) for (c, k), (patch, pose) in zip(again, found, strict=True)]
        _better_fits(tries, verdicts, poses, model)

    _placed_by_fit(jobs, verdicts, poses, model)

    def square(c: int) -> Float:
        """The tile's square where the empty look fits best (3, M)."""
        return np.ascontiguousarray(_cut(jobs[c].fine, model.inner_px, jobs[c].look.shift).T)

    covered = {
        c
        for c, verdict in enumerate(verdicts)
        if verdict.left_out is not None and verdict.match.read.tile is not None
    }
    # Cells that might be empty: weighed against their empty look (_settle).
    settling = [
        c
        for c, job in enumerate(jobs)
        if c not in covered and job.look.looks and job.look.rms <= cfg.empty_max_rms
    ]
    named = [c for c in settling if verdicts[c].match.read.tile is not None]
    # What the empty look leaves of each square, and of the tile named (all at once).
    fitted = _inner_fits(
        [jobs[c].look for c in settling + named],
        [square(c) for c in settling] + [verdicts[c].predicted for c in named],
        model,
    )
    empty_rss = dict(zip(settling, fitted[: len(settling)], strict=True))
    apart = dict(zip(named, fitted[len(settling) :], strict=True))
    out = []
    for c, (job, verdict) in enumerate(zip(jobs, verdicts, strict=True)):
        if c in covered:
            settled = _settle_covered(verdict, job.look, square(c), model)
        elif c in empty_rss:
            settled = _settle(verdict, job.look, empty_rss[c], apart.get(c), model)
            if settled.read.empty and not _rim_seen(job.crop, job.board, model):
                settled = replace(settled, read=UNKNOWN, reason="board unseen at the edge")
        else:
            settled = replace(verdict.match, empty_rms=job.look.rms)
        settled = replace(
            settled,
            proposal=verdict.match.proposal,
            tile_stats=verdict.match.tile_stats,
            look_stats=_look_stats(job.look),
            pose=_crop_pose(poses[c], job),
        )
        misfits = _lit_misfits(verdict.x, _paper_cast(job, model), model)
        out.append(_lit_proposal(settled, verdict.x, misfits, model))
    return out


def _crop_pose(pose: _Pose, job: _Pending) -> tuple[float, float, float]:
    """A place found in the fine crop as CellMatch.pose: its centre in the crop's pixels."""
    f = job.crop.shape[0] / job.fine.shape[0]
    x, y = pose.centre
    return ((x + 0.5) * f - 0.5, (y + 0.5) * f - 0.5, pose.angle)


def _inner_fits(
    looks: Sequence[_EmptyLook], pictures: Sequence[Float], model: TileModel
) -> list[float]:
    """`_EmptyLook.inner_fit` of each picture (3, M) with its look over all its pixels, the
    looks of one kind (plain or board) fitted together."""
    out = [0.0] * len(looks)
    plain = [i for i, look in enumerate(looks) if look.reference is None]
    board = [i for i, look in enumerate(looks) if look.reference is not None]
    if plain:
        rss = _light_residuals_kept(
            np.stack([pictures[i] for i in plain]), _square(model.inner_px), None
        )
        for i, v in zip(plain, rss, strict=True):
            out[i] = float(v)
    if board:
        refs = [ref for i in board if (ref := looks[i].reference) is not None]
        rss, _coef = fit_light_many(
            np.concatenate([ref.inner_channels for ref in refs], axis=1)[:, :, None],
            np.stack([ref.inner_ninv for ref in refs]),
            model.basis_t,
            np.stack([pictures[i] for i in board]),
        )
        for i, v in zip(board, rss[:, 0], strict=True):
            out[i] = float(v)
    return out


def _look_again(
    fines: list[Float],
    looks: list[_EmptyLook],
    references: Sequence[Image | None],
    refs: Sequence[_Reference | None],
    model: TileModel,
) -> None:
    """Board cells the board picture nearly explains (empty_sure_rms to empty_again_rms),
    looked at again: moved by the sub-pixel part of their best shift (a printed line between
    the pixels), then against a sharper board picture (a camera sharper than the one
    assumed). The moved look replaces the first (and the moved crop its crop) when it
    explains more and sees more of the board picture's contrast (moving smooths the noise
    too); the sharper one when it leaves the cell beyond doubt (its contrast, fitted to a
    hand's edge, can look like the board's)."""
    cfg = model.config

    def again() -> list[int]:
        return [
            i
            for i, ref in enumerate(refs)
            if ref is not None and cfg.empty_sure_rms < looks[i].rms_all <= cfg.empty_again_rms
        ]

    moving = [i for i in again() if looks[i].fraction != (0.0, 0.0)]
    moved = []
    for i in moving:
        fx, fy = looks[i].fraction
        side = fines[i].shape[0]
        shift = np.array([[1.0, 0.0, fx], [0.0, 1.0, fy]])
        moved.append(
            np.asarray(
                cv2.warpAffine(
                    fines[i],
                    shift,
                    (side, side),
                    flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP,
                    borderMode=cv2.BORDER_REPLICATE,
                ),
                np.float32,
            )
        )
    if moving:
        second = _empty_looks(moved, model, [refs[i] for i in moving], keep=False)
        for i, fine, look in zip(moving, moved, second, strict=True):
            if (
                look.rms_all < looks[i].rms_all
                and look.gain >= looks[i].gain + cfg.empty_again_gain_rise
            ):
                fines[i], looks[i] = fine, look
    sharpening = again()
    if sharpening and cfg.reference_sharp_blur_px != cfg.reference_blur_px:
        sharp = [
            _reference(ref, model, fines[i].shape[0], cfg.reference_sharp_blur_px)
            for i in sharpening
            if (ref := references[i]) is not None
        ]
        second = _empty_looks([fines[i] for i in sharpening], model, sharp, keep=False)
        for i, look in zip(sharpening, second, strict=True):
            if look.rms_all <= min(cfg.empty_sure_rms, looks[i].rms_all):
                looks[i] = look


def _board_unexplained(look: _EmptyLook, cfg: CellConfig) -> bool:
    """True when, where nothing covers a board cell, its picture leaves detail well above
    the noise that the board picture hardly explains: a plain tile (water) lying over the
    board, its own edge and waves taken for the board's printed outline."""
    return (
        look.reference is not None
        and look.detail_kept > cfg.empty_detail_floor
        and look.explained_kept < cfg.empty_min_explained_kept
    )


def _board_seen(look: _EmptyLook, cfg: CellConfig) -> bool:
    """False when a board picture with a pattern of its own is not seen where nothing covers
    it (something flat lies over the cell: an arm, a plain tile); True for the plain mat."""
    ref = look.reference
    if ref is None or ref.pattern < cfg.empty_min_pattern**2:
        return True
    clean = look.rms_all <= cfg.empty_sure_rms
    if look.gain < cfg.empty_board_doubt_gain and look.explained < cfg.empty_board_min_explained:
        return False  # faint and explaining next to nothing: a flat arm, a washed-out tile
    return look.gain >= (cfg.empty_board_min_gain if clean else cfg.empty_board_doubt_gain)


def _rim_explained(crop: Image, board: Image | None, model: TileModel) -> float | None:
    """Board cells: how much of a band across the tile's edge the board picture (`board`,
    cut like the crop) explains, on the side of the cell that shows it best (under its own
    light per channel: a gain and an offset); None when the picture shows too little there
    on every side to tell. At the crop's own scale: a board's thin print is lost at the
    working scale's.

    The empty look judges the square inside the tile's place, where a board may be as
    plain as a plain tile lying on it; a tile hides what the board prints at its edge (a
    tile a few mm off leaves some of it on one side, with the tile's own edge beside it).
    An empty cell shows it on every side but where a hand or a neighbour's tile lies."""
    if board is None:
        return None
    cfg = model.config
    side = crop.shape[0]
    per_mm = model.px_per_mm
    centre = (side - 1) / 2
    half = model.tile_mm / 2
    near = max(round(centre - (half + cfg.empty_rim_outside_mm) * per_mm), 0)
    far = round(centre - (half - cfg.empty_rim_inside_mm) * per_mm)
    reach = round(cfg.empty_rim_search_mm * per_mm)
    # Each side's band: its rows, its columns (clear of the corners), the axis across it.
    bands = [
        ((near, far), (far, side - far), 0),
        ((side - far, side - near), (far, side - far), 0),
        ((far, side - far), (near, far), 1),
        ((far, side - far), (side - far, side - near), 1),
    ]
    # Channels first: numpy sums along a short last axis slowly.
    seen = np.ascontiguousarray(crop.transpose(2, 0, 1), np.float32)
    picture = np.ascontiguousarray(board.transpose(2, 0, 1), np.float32)
    best: float | None = None
    for (r0, r1), (c0, c1), across in bands:
        strip = picture[:, r0:r1, c0:c1].reshape(3, -1)
        strip = strip - strip.mean(axis=1, keepdims=True)
        detail = np.einsum("cp,cp->c", strip, strip)
        if float(detail.sum()) < cfg.empty_rim_min_detail**2 * strip.shape[1]:
            continue
        # The band at every shift across the edge (within the crop), all at once.
        lo, hi = (r0, r1) if across == 0 else (c0, c1)
        start, stop = max(lo - reach, 0), min(hi + reach, side)
        region = seen[:, start:stop, c0:c1] if across == 0 else seen[:, r0:r1, start:stop]
        windows = np.lib.stride_tricks.sliding_window_view(region, hi - lo, axis=1 + across)
        # (3, .., shifts, .., band's width) -> (shifts, 3, rows, columns) as the strip's.
        obs = np.moveaxis(windows, (1 + across, 3), (0, 2 + across))
        obs = np.ascontiguousarray(obs).reshape(len(obs), 3, -1)
        obs = obs - obs.mean(axis=2, keepdims=True)
        total = np.einsum("scp,scp->s", obs, obs)
        cross = np.einsum("cp,scp->sc", strip, obs)
        # Each channel's share the picture explains, at a gain that keeps its sign.
        shown = (np.maximum(cross, 0.0) ** 2 / np.maximum(detail, 1e-6)).sum(axis=1)
        share = float((shown / np.maximum(total, 1e-6)).max())
        best = share if best is None else max(best, share)
    return best


def _rim_seen(crop: Image, board: Image | None, model: TileModel) -> bool:
    """False when a board cell's picture along the tile's edge (_rim_explained) is seen on
    no side of the cell: something lies over all of it (a tile, an arm, a lamp's glare)."""
    explained = _rim_explained(crop, board, model)
    return explained is None or explained >= model.config.empty_rim_min_explained


def _in_glare(
    looks: Sequence[_EmptyLook], groups: Sequence[Hashable | None], cfg: CellConfig
) -> list[int]:
    """Plain cells of a light group with a block far whiter than the group's paper (the
    median of the paper seen round its cells), or white to clipping when that paper is
    already near white: a lamp's reflection there may hide a tile. A plain cell read alone
    (the storage card) has no paper to be whiter than: it is in glare when its square is
    white to clipping on the whole. A board cell is in glare under a veil brighter than
    board_glare_veil."""
    members: dict[Hashable, list[int]] = {}
    out: list[int] = []
    for i, (look, group) in enumerate(zip(looks, groups, strict=True)):
        if look.reference is None and group is not None:
            members.setdefault(group, []).append(i)
        elif look.reference is None:
            if look.white * look.paper >= cfg.glare_clip:
                out.append(i)
        elif look.veil > cfg.board_glare_veil:
            out.append(i)
    for idx in members.values():
        paper = float(np.median([looks[i].paper for i in idx]))
        # Paper this bright leaves no room to tell glare by how much whiter a cell is; but
        # white to clipping, a tile in a lamp's reflection looks like paper.
        whiter = (
            cfg.glare_clip
            if paper >= cfg.glare_max_paper
            else paper + cfg.glare_washout * (255.0 - paper)
        )
        # A cell whose own paper is white to clipping sits in a lamp's reflection: a tile
        # there is washed to that paper's white, whatever the rest of the display shows.
        out.extend(i for i in idx if looks[i].whitest >= whiter or looks[i].paper >= cfg.glare_clip)
    return out


def match_cells(
    crops: Sequence[Image],
    model: TileModel,
    empty_references: Sequence[Image | None] | None = None,
    *,
    light_groups: Sequence[Hashable | None] | None = None,
    wanted: int | None = None,
) -> list[CellMatch]:
    """Read cell crops and keep the figures behind each answer (read_cells' arguments).
    Given `wanted`, only the first `wanted` crops are read: the others only lend their looks
    to their light groups."""
    refs = list(empty_references) if empty_references is not None else [None] * len(crops)
    if len(refs) != len(crops):
        raise ValueError(f"{len(crops)} crops but {len(refs)} empty references")
    groups = list(light_groups) if light_groups is not None else [None] * len(crops)
    if len(groups) != len(crops):
        raise ValueError(f"{len(crops)} crops but {len(groups)} light groups")
    cfg = model.config
    out: list[CellMatch | None] = [None] * len(crops)
    fines: list[Float] = []
    prepared: list[_Reference | None] = []
    for crop, ref in zip(crops, refs, strict=True):
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
        fines.append(_scaled(crop, side))
        prepared.append(None if ref is None else _reference(ref, model, side))
    looks = _empty_looks(fines, model, prepared)
    _look_again(fines, looks, refs, prepared, model)
    for i in _in_glare(looks, groups, cfg):
        looks[i] = replace(looks[i], washed=True)
    for i, (look, group) in enumerate(zip(looks, groups, strict=True)):
        if (
            group is not None
            and look.reference is None
            and (look.white < cfg.empty_min_white or look.tint > cfg.empty_max_tint)
        ):
            looks[i] = replace(look, looks=False)
    waiting: dict[int, list[int]] = {}  # crops that may hold a tile, by size
    for i, (ref, look) in enumerate(zip(refs[:wanted], looks, strict=False)):
        sure = cfg.empty_sure_rms if ref is not None else cfg.mat_sure_rms
        if look.looks and look.rms_all <= sure and not look.washed and _board_seen(look, cfg):
            out[i] = _empty(look, model, sure=True)
        else:
            waiting.setdefault(crops[i].shape[0], []).append(i)
    pending: dict[int, tuple[_Pending, Float]] = {}
    for size, idx in waiting.items():
        crop_mm = size / model.px_per_mm
        flat, offsets = _coarse_windows([crops[i] for i in idx], model, crop_mm)
        # One product for every window of every crop of this size.
        scores = (flat.reshape(-1, flat.shape[2]) @ model.coarse.T).reshape(*flat.shape[:2], -1)
        for i, score in zip(idx, scores, strict=True):
            job = _Pending(
                fines[i], fines[i].shape[0] / crop_mm, offsets, looks[i], crops[i], refs[i]
            )
            pending[i] = (job, score)
    if pending:
        order = sorted(pending)
        reads = _read_tiles([pending[i][0] for i in order], [pending[i][1] for i in order], model)
        for i, read in zip(order, reads, strict=True):
            out[i] = read
    done = [(m, crop) for m, crop in zip(out, crops, strict=True) if m is not None]
    return second_looks([m for m, _ in done], [crop for _, crop in done], model)
