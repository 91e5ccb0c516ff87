"""What the recogniser learns from a tile pack: matching templates for every tile and turn.

`learn_pack(pack, px_per_mm)` looks at every tile type's upright picture and precomputes,
for each of its four rotations (a "candidate"), what reading a cell needs (vision.reader.recognise):

- coarse templates (a few pixels per centimetre, colour, zero mean per channel) that slide
  over a small copy of a crop to find where a tile lies and which candidates are worth a
  closer look;
- grey pose templates turned a few degrees each way, to fix the tile's place to a fraction
  of a pixel and its small turn;
- medium templates (zero mean, unit norm per channel) that rank every candidate cheaply once
  the tile is cut out straight;
- fine templates of the tile's inner square with the light model's precomputed normal
  matrices: per colour channel a gain and an offset, each allowed to vary linearly across
  the tile (uneven light, a warm cast, the edge of a glare), so the best few candidates are
  fitted exactly with a few small matrix products (`fit_light`), also without some blocks of
  the square (what each block adds to the normal matrices is kept too);
- which rotations of a picture look the same (a symmetric picture: any of them is right),
  which candidates mean the same thing (equal rotated meanings are the same answer), and
  each candidate's nearest rival meaning something else, with how distinct the two are
  (the confidence of a read is measured against such rivals).

Nothing here assumes colours or art: everything is learnt from the pack's pictures. Models
are cached per pack directory, crop scale and config, and rebuilt when a file of the pack
changes (modification time).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property, lru_cache
from pathlib import Path

import cv2
import numpy as np
from numpy.typing import NDArray

from companion.tiles import ROTATIONS, Meaning
from vision.box.pack import Pack
from vision.config import CellConfig

Float = NDArray[np.float32]
Image = NDArray[np.uint8]


def light_basis(n: int) -> Float:
    """The smooth light terms over an n x n patch: 1, x and y (x, y in -1..1), as (n*n, 3)."""
    t = np.linspace(-1.0, 1.0, n, dtype=np.float32)
    yy, xx = np.meshgrid(t, t, indexing="ij")
    out: Float = np.stack([np.ones(n * n, np.float32), xx.ravel(), yy.ravel()], axis=1)
    return out


def design_terms(patch: Float, basis: Float) -> Float:
    """Template terms of the light model per channel: (3 channels, 3 terms, pixels).

    A channel is explained as (g0 + g1 x + g2 y) * template + (o0 + o1 x + o2 y); the
    template enters less its mean (the same model, better conditioned).
    """
    flat = patch.reshape(-1, 3).T  # (3, M)
    flat = flat - flat.mean(axis=1, keepdims=True)
    out: Float = np.ascontiguousarray(flat[:, None, :] * basis.T[None, :, :], np.float32)
    return out


def normal_matrices(terms: Float, basis: Float) -> NDArray[np.float64]:
    """Normal matrices (..., 3 channels, 6, 6) of the light model over the given pixels.

    `terms` is (..., 3, 3, M) and `basis` (M, 3) for the same M pixels."""
    lead = terms.shape[:-2]
    light = np.broadcast_to(basis.T, (*lead, 3, basis.shape[0]))
    full = np.concatenate([terms, light], axis=-2)  # (..., 3, 6, M)
    out: NDArray[np.float64] = np.matmul(full, np.swapaxes(full, -1, -2)).astype(np.float64)
    return out


def normal_inverse(terms: Float, basis: Float, weights: Float | None = None) -> Float:
    """Inverse normal matrices (..., 3 channels, 6, 6) of the light model.

    `terms` is (..., 3, 3, M); `weights` (M,) of 0/1 leaves pixels out of the fit.
    """
    if weights is None:
        return invert_normal(normal_matrices(terms, basis))
    keep = np.asarray(weights) > 0
    return invert_normal(normal_matrices(np.ascontiguousarray(terms[..., keep]), basis[keep]))


def invert_normal(gram: NDArray[np.float64]) -> Float:
    """Inverse of normal matrices, scaled to unit diagonal first for conditioning."""
    diag = np.sqrt(np.maximum(np.diagonal(gram, axis1=-2, axis2=-1), 1e-9))
    scale = diag[..., :, None] * diag[..., None, :]
    # A flat template channel makes its gain terms collinear with the offsets: such
    # directions are left out rather than inverted.
    normed = gram / scale + np.eye(6) * 1e-6
    out: Float = (np.linalg.inv(normed) / scale).astype(np.float32)
    return out


@dataclass(frozen=True, eq=False)
class TileModel:
    """A pack's tiles as the recogniser matches them (see the module docstring).

    Candidates are (tile id, rotation) pairs, indexed 0..K-1 in `ids` / `rotations`.
    """

    root: Path
    tile_mm: float
    px_per_mm: float
    config: CellConfig
    ids: tuple[str, ...]
    rotations: tuple[int, ...]
    #: Candidates with the same number mean the same thing (equal rotated meanings).
    groups: NDArray[np.int32]
    #: twins[i, j]: i and j are the same picture in turns that look alike (symmetric art).
    twins: NDArray[np.bool_]
    #: Candidates with the same number have the same kind and land edges as they lie (the
    #: same island's outline): siblings, told apart by what is drawn on the island.
    shapes: NDArray[np.int32]
    #: Coarse templates (K, 3 * c * c), zero mean per channel, unit norm.
    coarse: Float
    #: Pose templates (K, angles, p * colours * p): each unit norm, its values ordered by row,
    #: colour, column (as vision.reader.recognise lays the crops' windows out), along the pack's
    #: main colour directions `pose_colours` (colours, 3).
    pose: Float
    pose_colours: Float
    #: The same at half the scale (K, angles, (p/2) * colours * (p/2)), for a quick first search.
    pose_half: Float
    #: And at a quarter, to rank every candidate by where it places the tile when the coarse
    #: match has missed it: ((p/4) * colours * (p/4), angles, K), for one product with many
    #: windows whose best turn and place per candidate is then a reduction along one axis.
    pose_quarter: Float
    #: Medium templates (K, 3, m * m), zero mean and unit norm per channel.
    medium: Float
    #: Fine inner squares (K, M, 3), light-model terms (K, 3, 3, M), inverse normals (K, 3, 6, 6).
    fine: Float
    terms: Float
    #: The same templates per channel less their mean (3, K, M): the light terms factored
    #: out (terms[k, c, j] = channels[c, k] * basis[:, j]), for products over many candidates.
    channels: Float
    #: Medium templates per channel (3, K, m * m), for ranking many crops in one product.
    medium_channels: Float
    normal_inv: Float
    gram: NDArray[np.float64]  # the normal matrices themselves (K, 3, 6, 6)
    #: What each of the config's blocks x blocks blocks of the inner square adds to them
    #: (K, 3, blocks², 6, 6): a fit without some blocks (a cover) subtracts theirs.
    block_gram: NDArray[np.float64]
    basis: Float
    basis_pinv: Float
    #: Pattern energy per channel of each candidate's fine picture (K, 3): what the light
    #: alone does not explain, per pixel.
    energy: Float
    #: Each candidate's most alike candidate meaning something else, and how much of its
    #: picture that rival leaves unexplained (0: identical, 1: nothing in common).
    nearest_rival: NDArray[np.int32]
    distinctness: Float
    #: The explorer ship's picture as the pack gives it (BGRA or BGR on white).
    ship: Image

    def channels_of(self, ks: Sequence[int] | NDArray[np.intp]) -> Float:
        """`channels` of the candidates ks (any shape): (3, *shape, M). A copy, made by
        np.take: in half the time an index array takes."""
        out: Float = np.take(self.channels, ks, axis=1)
        return out

    @property
    def candidates(self) -> int:
        return len(self.ids)

    @cached_property
    def inner_px(self) -> int:
        """Side of the fine inner square."""
        return round(math.sqrt(self.fine.shape[1]))

    @cached_property
    def template_means(self) -> NDArray[np.float64]:
        """Each candidate's mean colour over its fine inner square (K, 3)."""
        out: NDArray[np.float64] = self.fine.mean(axis=1, dtype=np.float64)
        return out

    @cached_property
    def fine_power(self) -> NDArray[np.float64]:
        """Each candidate's sum of squares per channel over its fine inner square (K, 3)."""
        out: NDArray[np.float64] = np.einsum("kmc,kmc->kc", self.fine, self.fine, dtype=np.float64)
        return out

    @cached_property
    def basis_t(self) -> Float:
        """The light basis per term (3, M), contiguous."""
        out: Float = np.ascontiguousarray(self.basis.T)
        return out

    @cached_property
    def medium_px(self) -> int:
        return round(math.sqrt(self.medium.shape[2]))

    @cached_property
    def plainest(self) -> NDArray[np.intp]:
        """One candidate per picture (its first turn), the least drawn on first: by what
        the light alone leaves of its fine inner square (energy)."""
        first = np.array([i for i, r in enumerate(self.rotations) if r == self.rotations[0]])
        out: NDArray[np.intp] = first[np.argsort(self.energy[first].sum(axis=1), kind="stable")]
        return out

    def rim_px(self, n: int, border_mm: float) -> int:
        """Pixels of rim cut from each side of an n-pixel tile."""
        return _rim(n, border_mm, self.tile_mm)


def _rim(n: int, border_mm: float, tile_mm: float) -> int:
    return max(0, round(border_mm * n / tile_mm))


def _turned(image: NDArray[np.generic], rotation: int) -> NDArray[np.generic]:
    """The picture turned `rotation` degrees clockwise as seen (y pointing down)."""
    return np.ascontiguousarray(np.rot90(image, k=-(rotation // 90)))


def _resized(picture: Image, n: int) -> Float:
    out: Float = np.asarray(cv2.resize(picture, (n, n), interpolation=cv2.INTER_AREA), np.float32)
    return out


def _zero_mean_unit(channels: Float) -> Float:
    """(3, M) -> zero mean and unit norm per channel (a flat channel stays zero)."""
    centred = channels - channels.mean(axis=1, keepdims=True)
    norm = np.linalg.norm(centred, axis=1, keepdims=True)
    out: Float = np.where(norm > 1e-3, centred / np.maximum(norm, 1e-3), 0.0).astype(np.float32)
    return out


def _coarse_template(picture: Image, config: CellConfig, tile_mm: float) -> Float:
    n = config.coarse_tile_px
    small = _resized(picture, n)
    b = _rim(n, config.coarse_border_mm, tile_mm)
    inner = small[b : n - b, b : n - b].transpose(2, 0, 1).reshape(3, -1)
    flat = (inner - inner.mean(axis=1, keepdims=True)).ravel()
    out: Float = (flat / max(float(np.linalg.norm(flat)), 1e-3)).astype(np.float32)
    return out


def _pose_colours(tiles: list[Float], count: int) -> Float:
    """The pack's `count` colour directions along which its pictures vary most (count, 3)."""
    flat = np.concatenate([t.reshape(-1, 3) for t in tiles]).astype(np.float64)
    flat -= flat.mean(axis=0)
    _vals, vecs = np.linalg.eigh(flat.T @ flat + np.eye(3) * 1e-6)
    out: Float = vecs[:, ::-1][:, :count].T.astype(np.float32)
    return out


def pose_features(picture: Float, colours: Float, sigma: float) -> Float:
    """Grey pictures along the pack's main colour directions, less their blur: (count, h, w)."""
    out: Float = pose_features_many(picture[None], colours, sigma)[0]
    return out


def pose_features_many(pictures: Float, colours: Float, sigma: float) -> Float:
    """pose_features of many pictures of one size (N, h, w, 3): (N, count, h, w)."""
    count, h, w = pictures.shape[:3]
    grey = (pictures.reshape(-1, 3) @ colours.T.astype(np.float32)).reshape(count, h, w, -1)
    if sigma > 0:
        grey -= np.stack(
            [
                np.asarray(
                    cv2.GaussianBlur(g, (0, 0), sigma, borderType=cv2.BORDER_REPLICATE), np.float32
                ).reshape(g.shape)
                for g in grey
            ]
        )
    out: Float = np.ascontiguousarray(grey.transpose(0, 3, 1, 2))
    return out


def _pose_templates(tile: Float, colours: Float, config: CellConfig, tile_mm: float) -> Float:
    """Pose templates (angles, features): the tile's pose features turned by each angle,
    unit norm."""
    n = tile.shape[0]
    b = _rim(n, config.pose_border_mm, tile_mm)
    centre = ((n - 1) / 2, (n - 1) / 2)
    out = []
    for angle in config.pose_angles_deg:
        m = cv2.getRotationMatrix2D(centre, angle, 1.0)
        turned = np.asarray(
            cv2.warpAffine(
                tile, m, (n, n), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE
            ),
            np.float32,
        )
        feats = pose_features(turned, colours, config.pose_highpass_px)[:, b : n - b, b : n - b]
        flat = feats.ravel()
        out.append(flat / max(float(np.linalg.norm(flat)), 1e-3))
    result: Float = np.stack(out).astype(np.float32)
    return result


def halve_features(feats: Float) -> Float:
    """Pose features (colours, h, w) at half the scale."""
    out: Float = halve_features_many(feats[None])[0]
    return out


def halve_features_many(feats: Float) -> Float:
    """halve_features of many crops' features of one size (N, colours, h, w)."""
    colours, h, w = feats.shape[1:]
    planes = np.ascontiguousarray(feats.transpose(0, 2, 3, 1))  # (N, h, w, colours)
    out: Float = np.stack(
        [
            np.asarray(
                cv2.resize(f, (w // 2, h // 2), interpolation=cv2.INTER_AREA), np.float32
            ).reshape(h // 2, w // 2, colours)
            for f in planes
        ]
    ).transpose(0, 3, 1, 2)
    return np.ascontiguousarray(out)


def _halved(pose: Float, colours: int) -> Float:
    """Pose templates (K, A, colours * p²) at half the scale, unit norm."""
    k, a, size = pose.shape
    p = round(math.sqrt(size / colours))
    images = pose.reshape(k * a, colours, p, p)
    small = halve_features_many(images).reshape(k, a, -1)
    norms = np.linalg.norm(small, axis=2, keepdims=True)
    out: Float = (small / np.maximum(norms, 1e-6)).astype(np.float32)
    return out


def _by_rows(pose: Float, colours: int) -> Float:
    """Pose templates (K, A, colours * p²) with each template's values ordered by row,
    colour, column (TileModel.pose)."""
    k, a, size = pose.shape
    p = round(math.sqrt(size / colours))
    out: Float = np.ascontiguousarray(
        pose.reshape(k, a, colours, p, p).transpose(0, 1, 3, 2, 4).reshape(k, a, size), np.float32
    )
    return out


def unexplained(
    terms: Float, ninv: Float, basis: Float, x: Float
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Fit candidates' light models to pictures: residual sums of squares and coefficients.

    terms (S, 3, 3, M) and ninv (S, 3, 6, 6) of S candidates; x (M, 3) one picture (masked
    pixels zeroed, with ninv made for the same mask) or (S, M, 3) one picture per candidate.
    Returns rss (S,) and coefficients (S, 3, 6).
    """
    xt = np.swapaxes(x, -1, -2)[..., None]  # (3, M, 1) or (S, 3, M, 1)
    prod = np.matmul(terms, xt)[..., 0]  # (S, 3, 3)
    shared = np.matmul(basis.T, xt)[..., 0]  # (3, 3) or (S, 3, 3)
    shared = np.broadcast_to(shared, prod.shape)
    rhs = np.concatenate([prod, shared], axis=-1)  # (S, 3, 6)
    coef = np.matmul(ninv, rhs[..., None])[..., 0]
    explained = np.einsum("sci,sci->s", rhs, coef)
    total = np.einsum("...mc,...mc->...", x, x)
    rss = np.maximum(total - explained, 0.0)
    return rss.astype(np.float64), coef.astype(np.float64)


def fit_light(
    channels: Float, ninv: Float, light: Float, x: Float, keep: NDArray[np.bool_] | None = None
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """`unexplained` for S candidates given by their channels (3, S, M) (see TileModel), of
    one picture x given per channel (3, M), over the kept pixels (ninv made for the same);
    `light` is the light basis per term (3, M) (basis.T). Returns rss (S,) and coefficients
    (S, 3, 6), with a third of the arithmetic and no copy of the candidates' terms."""
    rss, coef = fit_light_many(
        channels[:, None], ninv[None], light, x[None], None if keep is None else keep[None]
    )
    return rss[0], coef[0]


def fit_light_many(
    channels: Float, ninv: Float, light: Float, x: Float, keep: NDArray[np.bool_] | None = None
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """fit_light of N pictures x (N, 3, M) at once, each with its own S candidates: channels
    (3, N, S, M), ninv (N, S, 3, 6, 6), kept pixels keep (N, M). Returns rss (N, S) and
    coefficients (N, S, 3, 6).

    Each picture's mean colour is taken out first (the offsets explain it exactly): the
    residual is then not a small difference of two big sums."""
    count, size = ninv.shape[:2]
    x = np.ascontiguousarray(x)  # pixels of a channel side by side: strided, every sum is slow
    if keep is None:
        mean = np.add.reduce(x, axis=2, dtype=np.float64) / x.shape[2]  # (N, 3)
        xt = x - mean.astype(np.float32)[:, :, None]
    else:
        weight = keep.astype(np.float32)
        mean = (
            np.matmul(x, weight[:, :, None])[:, :, 0].astype(np.float64)
            / np.maximum(weight.sum(axis=1, dtype=np.float64), 1.0)[:, None]
        )
        xt = (x - mean.astype(np.float32)[:, :, None]) * weight[:, None, :]
    y = xt[:, :, None, :] * light  # (N, 3, 3, M): every channel times every light term
    rhs = np.empty((count, size, 3, 6), np.float32)
    rhs[..., :3] = np.matmul(channels.transpose(1, 0, 2, 3), y.transpose(0, 1, 3, 2)).transpose(
        0, 2, 1, 3
    )
    rhs[..., 3:] = y.sum(axis=3)[:, None]
    coef = np.matmul(ninv, rhs[..., None])[..., 0].astype(np.float64)
    explained = np.einsum("nsci,nsci->ns", rhs, coef)
    total = np.array([float(np.dot(flat, flat)) for flat in xt.reshape(count, -1)])
    rss = np.maximum(total[:, None] - explained, 0.0)
    coef[..., 3] += mean[:, None, :]
    return rss, coef


def fit_light_shared(channels: Float, ninv: Float, light: Float, x: Float) -> NDArray[np.float64]:
    """fit_light_many's rss when every picture has the same S candidates: channels
    (3, S, M), ninv (S, 3, 6, 6), pictures x (N, 3, M); rss (N, S). Each candidate's
    channel times each light term is made once, and its products with every picture are
    one matrix product a channel (no picture times every light term)."""
    count, size = len(x), len(ninv)
    x = np.ascontiguousarray(x)
    mean = np.add.reduce(x, axis=2, dtype=np.float64) / x.shape[2]  # (N, 3)
    xt = x - mean.astype(np.float32)[:, :, None]
    terms = channels[:, :, None, :] * light[None, None]  # (3, S, 3, M)
    rhs = np.empty((count, size, 3, 6), np.float32)
    for c in range(3):
        rhs[:, :, c, :3] = (xt[:, c] @ terms[c].reshape(size * 3, -1).T).reshape(count, size, 3)
        rhs[:, :, c, 3:] = (xt[:, c] @ light.T)[:, None]
    coef = np.matmul(ninv[None], rhs[..., None])[..., 0].astype(np.float64)
    explained = np.einsum("nsci,nsci->ns", rhs, coef)
    flat = xt.reshape(count, -1)
    total = np.einsum("ij,ij->i", flat, flat, dtype=np.float64)
    return np.asarray(np.maximum(total[:, None] - explained, 0.0), np.float64)


@lru_cache(maxsize=16)
def block_members(n: int, blocks: int) -> NDArray[np.intp]:
    """The block (row-major, of blocks x blocks) each pixel of an n x n square lies in,
    given flat (M,): blocks as even as whole pixels allow. (Read-only.)"""
    edges = np.linspace(0, n, blocks + 1).round().astype(np.intp)
    band = np.repeat(np.arange(blocks), np.diff(edges))  # each row's (column's) block
    out: NDArray[np.intp] = (band[:, None] * blocks + band[None, :]).ravel()
    out.flags.writeable = False
    return out


def block_normals(channels: Float, basis: Float, n: int, blocks: int) -> NDArray[np.float64]:
    """normal_matrices of candidates over each block (block_members) of their n x n square,
    from their channels (3, K, M): (K, 3, blocks², 6, 6). A pixel adds (t, 1)(t, 1)' x b b'
    for its template value t and light terms b."""
    member = block_members(n, blocks)
    b = basis.astype(np.float64)
    outer = (b[:, :, None] * b[:, None, :]).reshape(-1, 9)
    by_block = np.zeros((len(member), blocks * blocks, 9))
    by_block[np.arange(len(member)), member] = outer  # (M, blocks², 9)
    spread = by_block.reshape(len(member), -1)
    k = channels.shape[1]
    ch = channels.astype(np.float64).reshape(3 * k, -1)
    tt = (ch * ch) @ spread  # (3K, blocks² * 9)
    tb = ch @ spread
    shape = (3, k, blocks * blocks, 3, 3)
    out = np.empty((k, 3, blocks * blocks, 6, 6))
    out[..., :3, :3] = tt.reshape(shape).transpose(1, 0, 2, 3, 4)
    out[..., :3, 3:] = out[..., 3:, :3] = tb.reshape(shape).transpose(1, 0, 2, 3, 4)
    out[..., 3:, 3:] = spread.sum(axis=0).reshape(blocks * blocks, 3, 3)
    return out


def _twins_and_rivals(
    ids: tuple[str, ...],
    groups: NDArray[np.int32],
    fine: Float,
    terms: Float,
    ninv: Float,
    basis: Float,
    medium: Float,
    threshold: float,
) -> tuple[NDArray[np.bool_], NDArray[np.int32], Float]:
    k = len(ids)
    # What the light alone leaves of each picture.
    light = fine - np.matmul(basis, np.linalg.pinv(basis) @ fine)
    spread = np.maximum(np.einsum("kmc,kmc->k", light, light), 1e-6)
    twins = np.eye(k, dtype=bool)
    for i in range(k):
        same = [j for j in range(k) if ids[j] == ids[i] and j != i]
        if not same:
            continue
        rss, _ = unexplained(terms[same], ninv[same], basis, fine[i])
        for j, r in zip(same, rss, strict=True):
            if 1.0 - r / spread[i] >= threshold:
                twins[i, j] = True
    twins &= twins.T
    # Nearest rival by the medium templates' per-channel correlation.
    flat = medium.reshape(k, -1)
    like = (flat @ flat.T) / 3.0
    other = (groups[:, None] != groups[None, :]) & ~twins
    like = np.where(other, like, -np.inf)
    nearest = np.argmax(like, axis=1).astype(np.int32)
    distinct = np.empty(k, np.float32)
    for i in range(k):
        j = int(nearest[i])
        rss, _ = unexplained(terms[j : j + 1], ninv[j : j + 1], basis, fine[i])
        distinct[i] = float(np.clip(rss[0] / spread[i], 0.0, 1.0))
    return twins, nearest, distinct


def _pattern_energy(fine: Float, basis: Float) -> Float:
    light = fine - np.matmul(basis, np.linalg.pinv(basis) @ fine)
    out: Float = (np.einsum("kmc,kmc->kc", light, light) / fine.shape[1]).astype(np.float32)
    return out


def _build(pack: Pack, px_per_mm: float, config: CellConfig) -> TileModel:
    tile_mm = pack.tile_mm
    n = config.tile_px
    b = _rim(n, config.border_mm, tile_mm)
    nm = config.medium_tile_px
    bm = _rim(nm, config.border_mm, tile_mm)
    ids: list[str] = []
    rotations: list[int] = []
    meanings: list[Meaning] = []
    fine, coarse, turned_tiles, medium = [], [], [], []
    for tile in pack.catalogue:
        picture = np.asarray(pack.tiles[tile.id], np.uint8)
        upright = _resized(picture, n)
        if config.template_blur_px > 0:
            upright = np.asarray(
                cv2.GaussianBlur(
                    upright, (0, 0), config.template_blur_px, borderType=cv2.BORDER_REPLICATE
                ),
                np.float32,
            )
        upright_medium = _resized(picture, nm)
        for rotation in ROTATIONS:
            turned = np.asarray(_turned(upright, rotation), np.float32)
            ids.append(tile.id)
            rotations.append(rotation)
            meanings.append(tile.meaning.rotated(rotation))
            fine.append(turned[b : n - b, b : n - b].reshape(-1, 3))
            coarse.append(_coarse_template(np.asarray(_turned(picture, rotation)), config, tile_mm))
            turned_tiles.append(turned)
            mid = np.asarray(_turned(upright_medium, rotation), np.float32)
            mid = mid[bm : nm - bm, bm : nm - bm]
            medium.append(_zero_mean_unit(mid.reshape(-1, 3).T))
    colours = _pose_colours(turned_tiles[::4], config.pose_colours)
    pose = [_pose_templates(t, colours, config, tile_mm) for t in turned_tiles]
    half = _halved(np.stack(pose).astype(np.float32), config.pose_colours)
    fine_arr = np.ascontiguousarray(np.stack(fine), np.float32)
    inner = n - 2 * b
    basis = light_basis(inner)
    terms = np.ascontiguousarray(np.stack([design_terms(f, basis) for f in fine_arr]))
    gram = normal_matrices(terms, basis)
    ninv = invert_normal(gram)
    channels = np.ascontiguousarray(terms[:, :, 0, :].transpose(1, 0, 2))
    medium_arr = np.ascontiguousarray(np.stack(medium), np.float32)
    group_of: dict[Meaning, int] = {}
    groups = np.array([group_of.setdefault(m, len(group_of)) for m in meanings], np.int32)
    shape_of: dict[tuple[object, str], int] = {}
    shapes = np.array(
        [shape_of.setdefault((m.kind, m.land), len(shape_of)) for m in meanings], np.int32
    )
    ids_t = tuple(ids)
    twins, nearest, distinct = _twins_and_rivals(
        ids_t, groups, fine_arr, terms, ninv, basis, medium_arr, config.twin_likeness
    )
    return TileModel(
        root=pack.root,
        tile_mm=tile_mm,
        px_per_mm=float(px_per_mm),
        config=config,
        ids=ids_t,
        rotations=tuple(rotations),
        groups=groups,
        twins=twins,
        shapes=shapes,
        coarse=np.ascontiguousarray(np.stack(coarse), np.float32),
        pose=_by_rows(np.stack(pose).astype(np.float32), config.pose_colours),
        pose_colours=colours,
        pose_half=_by_rows(half, config.pose_colours),
        pose_quarter=np.ascontiguousarray(
            _by_rows(_halved(half, config.pose_colours), config.pose_colours).transpose(2, 1, 0)
        ),
        medium=medium_arr,
        fine=fine_arr,
        terms=terms,
        channels=channels,
        medium_channels=np.ascontiguousarray(medium_arr.transpose(1, 0, 2)),
        normal_inv=ninv,
        gram=gram,
        block_gram=block_normals(channels, basis, inner, config.blocks),
        basis=basis,
        basis_pinv=np.linalg.pinv(basis).astype(np.float32),
        energy=_pattern_energy(fine_arr, basis),
        nearest_rival=nearest,
        distinctness=distinct,
        ship=np.asarray(pack.ship, np.uint8),
    )


_CACHE: dict[tuple[str, float, CellConfig], tuple[float, TileModel]] = {}


def _pack_mtime(root: Path) -> float:
    """The newest modification time among the pack's files."""
    try:
        return max(p.stat().st_mtime for p in root.rglob("*") if p.is_file())
    except (OSError, ValueError):
        return math.nan


def learn_pack(pack: Pack, px_per_mm: float, config: CellConfig | None = None) -> TileModel:
    """Learn a pack's tiles for crops made at `px_per_mm`; cached by pack root and mtime."""
    if not px_per_mm > 0:
        raise ValueError(f"px_per_mm must be positive, not {px_per_mm!r}")
    config = config or CellConfig()
    key = (str(pack.root.resolve()), float(px_per_mm), config)
    mtime = _pack_mtime(pack.root)
    hit = _CACHE.get(key)
    if hit is not None and hit[0] == mtime and not math.isnan(mtime):
        return hit[1]
    model = _build(pack, px_per_mm, config)
    _CACHE[key] = (mtime, model)
    return model
