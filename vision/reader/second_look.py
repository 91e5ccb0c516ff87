"""A second, closer look at a tile told from its siblings by a small symbol.

The matcher (vision.reader.recognise) places and names tiles at `CellConfig.tile_px` a tile, where
a small palm, hut or shell is a few pixels: the best candidate is then often a *sibling*, a
tile whose picture differs from it only in a small area. This module looks again at the
crop's own scale (`CropConfig.px_per_mm`, about twice `tile_px`), at the proposed candidate
and its siblings only, along the place and turn the matcher found:

- **siblings** are found from the pack's pictures alone (`sibling_model`): of each other
  meaning, the candidate whose picture differs least from the proposal's, where the two
  differ in a small area only (more than `SIBLING_DIFFERENCE` of the pack's colour spread
  over `SIBLING_MIN_AREA` to `SIBLING_MAX_AREA` of the inner square); the
  `SIBLING_COUNT` nearest such;
- the tile's inner square is cut from the crop along the found pose (placed again a pixel
  each way where the proposal fits best) and each of those candidates is fitted under the
  light model (vision.box.tilemodel); as many blocks as the matcher took as covered, those
  none of them explains, are left out;
- the share of the square's detail the proposal explains, its evidence against the
  sibling that fits best (+1 exactly the proposal, -1 exactly the sibling), their
  separation in noise units and whether a sibling fits better go to the judge
  (`CellMatch.second_stats`, SECOND_STATS), which learns how far to trust them; the
  proposal stays the matcher's.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import TYPE_CHECKING

import cv2
import numpy as np
from numpy.typing import NDArray

from vision.box.pack import load_pack
from vision.box.tilemodel import (
    Float,
    Image,
    TileModel,
    block_members,
    design_terms,
    fit_light_many,
    fit_light_shared,
    light_basis,
    normal_inverse,
)

if TYPE_CHECKING:
    from vision.reader.recognise import CellMatch

__all__ = ["SECOND_STATS", "SiblingModel", "second_looks", "sibling_model"]

#: The names of CellMatch.second_stats, in order (all 0 for a proposal without a place):
#: whether the proposal has siblings, the share of the square's detail it explains
#: at the crop's scale, its evidence against the sibling that fits best (+1 exactly the
#: proposal, -1 exactly the sibling), their separation in noise units, and whether a
#: sibling fits better.
SECOND_STATS = ("siblings", "fit", "evidence", "separation", "beaten")

#: Siblings differ in at most this share of the tile's inner square ...
SIBLING_MAX_AREA = 0.10
#: ... and in at least this share (fewer pixels than this are the art's own noise).
SIBLING_MIN_AREA = 0.002
#: The nearest this many meanings are looked at again.
SIBLING_COUNT = 5
#: A pixel differs when the two pictures' colours are this far apart, in units of the
#: pack's own colour spread (the RMS distance of its pictures' pixels from their mean).
SIBLING_DIFFERENCE = 0.25
#: Pixels of the crop searched each way around the matcher's place.
SEARCH_PX = 1
#: The pictures get this much Gaussian blur (crop pixels), like a camera's.
TEMPLATE_BLUR_PX = 1.0


@dataclass(frozen=True, eq=False)
class SiblingModel:
    """A pack's candidates at the crop's scale, and each candidate's siblings."""

    n: int  # side of the inner square (crop pixels)
    scale: float  # crop pixels per template pixel
    siblings: tuple[tuple[int, ...], ...]
    channels: Float  # (3, K, M): each candidate's channels less their mean
    normal_inv: Float  # (K, 3, 6, 6)
    light: Float  # the light basis per term (3, M)
    light_pinv: Float  # its pseudo-inverse (M, 3)
    blocks: int


def _pictures(model: TileModel, side: int) -> list[Float]:
    """Each candidate's picture at `side` pixels a tile, turned as it lies: (side, side, 3)."""
    pack = load_pack(model.root)
    upright: dict[str, Float] = {}
    out = []
    for tile_id, rotation in zip(model.ids, model.rotations, strict=True):
        if tile_id not in upright:
            picture = np.asarray(pack.tiles[tile_id], np.uint8)
            small = cv2.resize(picture, (side, side), interpolation=cv2.INTER_AREA)
            upright[tile_id] = np.asarray(
                cv2.GaussianBlur(small, (0, 0), TEMPLATE_BLUR_PX, borderType=cv2.BORDER_REPLICATE),
                np.float32,
            )
        out.append(np.ascontiguousarray(np.rot90(upright[tile_id], k=-(rotation // 90))))
    return out


def _siblings(inner: Float, groups: NDArray[np.int32]) -> tuple[tuple[int, ...], ...]:
    """Per candidate, its siblings: of each meaning but its own, the candidate whose picture
    (K of (n, n, 3)) differs least from its own, where that is a small area; the
    SIBLING_COUNT nearest such. Measured at half the scale."""
    n = inner.shape[1]
    small = np.stack(
        [cv2.resize(p, (n // 2, n // 2), interpolation=cv2.INTER_AREA) for p in inner]
    ).reshape(len(inner), -1, 3)
    flat = small.reshape(-1, 3).astype(np.float64)
    spread = math.sqrt(float(((flat - flat.mean(axis=0)) ** 2).sum(axis=1).mean()))
    level = SIBLING_DIFFERENCE * max(spread, 1.0)
    planes = np.ascontiguousarray(small.transpose(2, 0, 1))  # (3, K, M)
    out: list[tuple[int, ...]] = []
    for i in range(len(small)):
        d = planes - planes[:, i : i + 1]
        apart = d[0] * d[0] + d[1] * d[1] + d[2] * d[2]  # squared distances (K, M)
        share = (apart > level * level).mean(axis=1)
        nearest: dict[int, int] = {}
        for j in np.argsort(share, kind="stable"):
            g = int(groups[j])
            if (
                g != groups[i]
                and g not in nearest
                and SIBLING_MIN_AREA <= share[j] <= SIBLING_MAX_AREA
            ):
                nearest[g] = int(j)
        out.append(tuple(list(nearest.values())[:SIBLING_COUNT]))
    return tuple(out)


@lru_cache(maxsize=4)
def sibling_model(model: TileModel) -> SiblingModel:
    """The pack of `model` at its crops' scale (`model.px_per_mm`), with siblings."""
    side = max(8, round(model.tile_mm * model.px_per_mm))
    rim = model.rim_px(side, model.config.border_mm)
    n = side - 2 * rim
    squares = np.stack([p[rim : side - rim, rim : side - rim] for p in _pictures(model, side)])
    inner = squares.reshape(len(squares), -1, 3)
    basis = light_basis(n)
    terms = np.ascontiguousarray(np.stack([design_terms(f, basis) for f in inner]))
    return SiblingModel(
        n=n,
        scale=model.tile_mm * model.px_per_mm / side,
        siblings=_siblings(squares, model.groups),
        channels=np.ascontiguousarray(terms[:, :, 0, :].transpose(1, 0, 2)),
        normal_inv=normal_inverse(terms, basis),
        light=np.ascontiguousarray(basis.T),
        light_pinv=np.linalg.pinv(basis.T).astype(np.float32),
        blocks=model.config.blocks,
    )


def _cut(crop: Image, pose: tuple[float, float, float], n: int, scale: float) -> Float:
    """The tile's inner square and SEARCH_PX around it, cut straight from the crop along the
    pose (centre x, y in crop pixels, turn in degrees): (n + 2r, n + 2r, 3)."""
    side = n + 2 * SEARCH_PX
    a = math.radians(pose[2])
    rot = np.array([[math.cos(a), math.sin(a)], [-math.sin(a), math.cos(a)]]) * scale
    half = (side - 1) / 2
    shift = np.array(pose[:2]) - rot @ np.array([half, half])
    m = np.hstack([rot, shift[:, None]])
    out: Float = np.asarray(
        cv2.warpAffine(
            crop,
            m,
            (side, side),
            flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP,
            borderMode=cv2.BORDER_REPLICATE,
        ),
        np.float32,
    )
    return out


def _predictions(sib: SiblingModel, ks: Sequence[int], coef: NDArray[np.float64]) -> Float:
    """Each candidate's fitted picture (S, 3, M) from its light coefficients (S, 3, 6)."""
    ch = np.take(sib.channels, list(ks), axis=1).transpose(1, 0, 2)  # (S, 3, M)
    light = sib.light.astype(np.float64)
    fitted = np.matmul(coef[..., :3], light)  # the gain, then times the picture (in place)
    fitted *= ch
    fitted += np.matmul(coef[..., 3:], light)
    out: Float = fitted.astype(np.float32)
    return out


@dataclass(frozen=True, slots=True)
class Look:
    """What the second look found: the candidate that fits best; the share of the square's
    detail the first candidate (the proposal) explains; its evidence against the sibling
    that fits best, and their separation in noise units."""

    best: int
    fit: float
    evidence: float
    separation: float


def look(
    crop: Image,
    pose: tuple[float, float, float],
    ks: Sequence[int],
    sib: SiblingModel,
    hidden: float = 0.0,
) -> Look:
    """How the first of the candidates `ks` (the proposal, the others its siblings) fares
    against the others in the crop at its own scale, near the pose, with the share
    `hidden` of its blocks taken as covered."""
    n, r = sib.n, SEARCH_PX
    steps = 2 * r + 1
    wide = _cut(crop, pose, n, sib.scale)
    # Every window, channel first (P, 3, M), in one copy: (y, x, channel, row, column).
    windows = np.lib.stride_tricks.sliding_window_view(wide, (n, n), axis=(0, 1))
    xs = np.ascontiguousarray(windows).reshape(steps * steps, 3, n * n)
    kk = list(ks)
    # The place: where the proposal fits best (its siblings share its outline).
    rss = fit_light_shared(sib.channels[:, kk[:1]], sib.normal_inv[kk[:1]], sib.light, xs)
    x = xs[int(np.argmin(rss[:, 0]))]  # (3, M)
    _rss, coef = fit_light_many(
        np.ascontiguousarray(sib.channels[:, None, kk]),
        sib.normal_inv[kk][None],
        sib.light,
        x[None],
    )
    pred = _predictions(sib, kk, coef[0])
    resid = ((x[None] - pred) ** 2).sum(axis=1)  # (S, M)
    member = block_members(n, sib.blocks)
    blocks = sib.blocks * sib.blocks
    # One count for every candidate: candidate s's blocks numbered from s * blocks on.
    members = (member + blocks * np.arange(len(kk))[:, None]).ravel()
    per_block = np.bincount(members, resid.ravel(), minlength=len(kk) * blocks).reshape(
        len(kk), blocks
    )
    # As many blocks as the matcher took as covered: those none of the candidates explains.
    least = per_block.min(axis=0)
    kept = np.ones(len(least), bool)
    covered = min(round(hidden * len(least)), len(least) - 1)
    if covered > 0:
        kept[np.argsort(least)[len(least) - covered :]] = False
    score = per_block[:, kept].sum(axis=1)
    # The share of the square's detail (what the light alone leaves) the proposal explains.
    plain = x - (x @ sib.light_pinv) @ sib.light
    detail = float(np.bincount(member, (plain**2).sum(axis=0), minlength=sib.blocks**2)[kept].sum())
    fit = 1.0 - float(score[0]) / max(detail, 1e-6)
    if len(kk) < 2:
        return Look(kk[0], fit, 0.0, 0.0)
    o = 1 + int(np.argmin(score[1:]))  # the sibling that fits best
    # What that sibling would miss were the proposal exactly right, over the kept pixels.
    keep_px = kept[member]
    miss_rss, _ = fit_light_many(
        np.ascontiguousarray(sib.channels[:, [kk[o]]][:, :, None]),
        sib.normal_inv[[kk[o]]][None],
        sib.light,
        pred[0][None],
    )
    miss = float(miss_rss[0, 0]) * max(float(keep_px.mean()), 1e-3)
    noise = float(min(score[0], score[o])) / max(int(keep_px.sum()) * 3, 1)
    evidence = float(score[o] - score[0]) / max(miss, 1e-6)
    separation = math.sqrt(miss / max(noise, 1e-6))
    return Look(kk[int(np.argmin(score))], fit, evidence, separation)


def second_looks(
    matches: Sequence[CellMatch], crops: Sequence[Image], model: TileModel
) -> list[CellMatch]:
    """Each match with its second look (SECOND_STATS) where its proposal has a place."""
    sib = sibling_model(model)
    out = []
    for match, crop in zip(matches, crops, strict=True):
        k = match.proposal
        if k is None or match.pose is None:
            out.append(replace(match, second_stats=(0.0,) * len(SECOND_STATS)))
            continue
        seen = look(crop, match.pose, (k, *sib.siblings[k]), sib, match.hidden)
        has = float(bool(sib.siblings[k]))
        stats = (has, seen.fit, seen.evidence, seen.separation, float(seen.best != k))
        out.append(replace(match, second_stats=stats))
    return out
