"""A storage slot weighed against the table round it.

The cell reading (vision.reader.recognise) knows an empty slot by the white storage card the kit
prints. docs/table-kit.md promises nothing under the slot, and that look fails two ways: on a
table without cards it leaves every empty slot unknown, and a pale arm over a card and all
round it is as white as the card. Here the square round the slot is looked at, in blocks of
a few mm (their mean log colour), and its *ring*, the table beyond where a tile in the slot
could reach.

A slot left unknown is the bare table, so empty (`bare_slots`), when

- each block of the slot (as far as a tile in it could reach) finds its colour among the
  blocks of the ring, once the light's slope across the square is fitted out of both
  (`SlotSurface.inside`: a tile's art, edge or shadow does not);
- the ring is one surface all round: its eight sectors agree (`sectors`: an arm or a hand
  over part of it does not);
- the ring keeps the colour the other seats' rings show: their hue, and their saturation
  (a lamp's glare washes a tile towards the table's own colour, and the table with it);
- the slot and its ring keep the table's fine texture (a wooden table's grain: a hand or
  an arm over all of the square, which the first two cannot see, is smooth);
- no block of the slot is white to clipping.

A slot read empty is doubted (`pale_rings`) when its ring is far paler than the other
seats' rings: a pale arm lies over the card and the table round it.

One pure function per step: `square_mm` (what to cut), `kept_out` (what of the seat to
leave out: its markers and board, other markers seen), `slot_surface` and `ring_chroma`
(the figures of one square), `bare_slots` and `pale_rings` (which slots of one frame).
vision.reader.read cuts the squares (`storage_against_table`).
"""

from __future__ import annotations

import math
from collections.abc import Collection, Hashable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import TypeVar

import cv2
import numpy as np
from numpy.typing import NDArray

from vision import kit
from vision.config import StorageConfig

Image = NDArray[np.uint8]
#: A slot's key (a seat number in vision.reader.read).
Key = TypeVar("Key", bound=Hashable)
#: Rectangles in mm from the slot's centre, seat north up: (x0, y0, x1, y1) a row (N, 4).
Rects = NDArray[np.float64]

_SECTORS = 8
_MIN_SECTOR_BLOCKS = 3
_MIN_SECTORS = 5


@dataclass(frozen=True, slots=True)
class SlotSurface:
    """What the square round one storage slot shows (`slot_surface`)."""

    inside: float  # the slot's blocks' distance from the ring's colours (at inside_share)
    sectors: float  # how far the ring's sectors' colours disagree (log units)
    chroma: NDArray[np.float64]  # the ring's median log colour less its mean (3,)
    clipped: bool  # a block of the slot white to clipping
    texture_inside: float  # the slot's fine detail (median block, grey levels)
    texture_ring: float  # the ring's

    @property
    def saturation(self) -> float:
        """How coloured the ring is (0 for a grey table)."""
        return float(np.linalg.norm(self.chroma))


def _outer_mm(tile_mm: float, cfg: StorageConfig) -> float:
    return tile_mm / 2 + cfg.reach_mm + cfg.ring_gap_mm + cfg.ring_mm


def square_mm(tile_mm: float, cfg: StorageConfig) -> float:
    """The side of the square cut round the slot: the ring's outer edge, an odd number of
    whole blocks (one block sits on the slot's centre)."""
    half_blocks = math.ceil(_outer_mm(tile_mm, cfg) / cfg.block_mm - 0.5)
    return (2 * half_blocks + 1) * cfg.block_mm


def kept_out(
    geometry: kit.SeatGeometry,
    cfg: StorageConfig,
    markers_mm: NDArray[np.float64] | None = None,
) -> Rects:
    """The seat's markers (with their white margin) and its board's grid, and any other
    marker seen (their corners in the seat's mm, (N, 4, 2), `markers_mm`: a neighbour's
    sticker may lie near the slot), each with keep_clear_mm more, in mm from the storage
    slot's centre: rectangles (x0, y0, x1, y1), one a row."""
    sx, sy = geometry.storage_centre()
    half = kit.MARKER_MM / 2 + kit.MARKER_MARGIN_MM + cfg.keep_clear_mm
    centres = np.asarray(list(geometry.marker_centres().values()), np.float64)
    own = np.hstack([centres - half, centres + half])
    gw = geometry.cols * geometry.pitch / 2 + cfg.keep_clear_mm
    gh = geometry.rows * geometry.pitch / 2 + cfg.keep_clear_mm
    board = np.array([[-gw, -gh, gw, gh]])
    parts = [own, board]
    if markers_mm is not None and len(markers_mm):
        edge = kit.MARKER_MARGIN_MM + cfg.keep_clear_mm
        seen = np.asarray(markers_mm, np.float64).reshape(-1, 4, 2)
        parts.append(np.hstack([seen.min(axis=1) - edge, seen.max(axis=1) + edge]))
    out: Rects = np.vstack(parts) - np.array([sx, sy, sx, sy])
    return out


@dataclass(frozen=True, slots=True)
class _Blocks:
    """A square cut round a slot, in blocks: each block's mean log colour (N, 3), its
    place, and whether it may be judged (seen, not kept out)."""

    colour: NDArray[np.float32]
    x: NDArray[np.float64]
    y: NDArray[np.float64]
    r: NDArray[np.float64]  # distance from the slot's centre along the larger axis (mm)
    sector: NDArray[np.float64]
    free: NDArray[np.bool_]
    slot_seen: bool  # every block as far as a tile in the slot could reach is in the picture
    cut: NDArray[np.float32]  # the square cut to whole blocks (BGR)
    count: int


def _blocks(
    square: Image,
    tile_mm: float,
    kept: Rects,
    cfg: StorageConfig,
    px_per_mm: float,
    seen: NDArray[np.bool_] | None,
) -> _Blocks:
    if square.ndim != 3 or square.shape[2] != 3 or square.shape[0] != square.shape[1]:
        raise ValueError("a storage square must be a square colour image")
    if seen is not None and seen.shape != square.shape[:2]:
        raise ValueError("the seen mask must be the storage square's size")
    b = max(1, round(cfg.block_mm * px_per_mm))
    count = square.shape[0] // b
    if count < 3:
        raise ValueError("a storage square must hold at least 3 blocks a side")
    start = (square.shape[0] - count * b) // 2
    cut = square[start : start + count * b, start : start + count * b].astype(np.float32)
    # Block means: OpenCV's area resampling by a whole factor is exactly that, and quick.
    colour = _block_means(np.log(np.maximum(cut, 2.0)), count).reshape(-1, 3)
    x, y, r, sector = _block_places(count, b / px_per_mm)
    free = np.ones(len(x), bool)
    if seen is not None:
        shown = seen[start : start + count * b, start : start + count * b]
        free = shown.reshape(count, b, count, b).all(axis=(1, 3)).ravel()
    slot_seen = bool(free[r <= tile_mm / 2 + cfg.reach_mm].all())
    if len(kept):
        rects = np.asarray(kept, np.float64)[:, None, :]  # (rects, 1, 4)
        margin = b / px_per_mm / 2
        hit = (
            (x > rects[..., 0] - margin)
            & (x < rects[..., 2] + margin)
            & (y > rects[..., 1] - margin)
            & (y < rects[..., 3] + margin)
        )
        free &= ~hit.any(axis=0)
    return _Blocks(colour, x, y, r, sector, free, slot_seen, cut, count)


def _ring(
    blocks: _Blocks, tile_mm: float, cfg: StorageConfig
) -> tuple[NDArray[np.bool_], list[NDArray[np.bool_]]] | None:
    """The ring's blocks and its sectors seen well enough to judge by (each a mask of the
    blocks), or None when too few of them are."""
    reach = tile_mm / 2 + cfg.reach_mm
    ring = (
        blocks.free & (blocks.r >= reach + cfg.ring_gap_mm) & (blocks.r <= _outer_mm(tile_mm, cfg))
    )
    sectors = [ring & (blocks.sector == s) for s in range(_SECTORS)]
    sectors = [m for m in sectors if np.count_nonzero(m) >= _MIN_SECTOR_BLOCKS]
    return (ring, sectors) if len(sectors) >= _MIN_SECTORS else None


def _chroma(colour: NDArray[np.float32]) -> NDArray[np.float64]:
    """The median log colour of blocks less its mean."""
    table = np.median(colour, axis=0).astype(np.float64)
    out: NDArray[np.float64] = table - table.mean()
    return out


def ring_chroma(
    square: Image,
    tile_mm: float,
    kept: Rects,
    cfg: StorageConfig,
    px_per_mm: float,
    seen: NDArray[np.bool_] | None = None,
) -> NDArray[np.float64] | None:
    """The colour of the table round a slot alone (`SlotSurface.chroma`), from a square cut
    at any scale (`square_mm` a side, px_per_mm): None when too little of the ring is seen."""
    blocks = _blocks(square, tile_mm, kept, cfg, px_per_mm, seen)
    found = _ring(blocks, tile_mm, cfg)
    return None if found is None else _chroma(blocks.colour[found[0]])


def slot_surface(
    square: Image,
    tile_mm: float,
    kept: Rects,
    cfg: StorageConfig,
    seen: NDArray[np.bool_] | None = None,
) -> SlotSurface | None:
    """The figures of the square cut round a storage slot (BGR, seat north up, at
    cfg.px_per_mm, `square_mm` a side), leaving out the blocks in `kept` (`kept_out`) and
    any block with a pixel not `seen` (outside the frame), if given. None when too little
    of the ring is left to judge by, or the slot is not wholly seen."""
    blocks = _blocks(square, tile_mm, kept, cfg, cfg.px_per_mm, seen)
    found = _ring(blocks, tile_mm, cfg)
    inside = blocks.free & (blocks.r <= tile_mm / 2 + cfg.reach_mm)
    if found is None or not blocks.slot_seen or not inside.any():
        return None
    ring, sectors = found
    colour = blocks.colour
    cut = blocks.cut
    grey = (cut[..., 0] + cut[..., 1] + cut[..., 2]) / 3.0
    fine, coarse = (
        cv2.GaussianBlur(grey, (0, 0), mm * cfg.px_per_mm)
        for mm in (cfg.texture_fine_mm, cfg.texture_coarse_mm)
    )
    detail = _block_means(np.abs(fine - coarse), blocks.count).ravel()
    # The light's slope across the square (a plane in log colour), fitted on the ring.
    design = np.column_stack([np.ones(len(blocks.x)), blocks.x, blocks.y])
    coef, *_ = np.linalg.lstsq(design[ring], colour[ring], rcond=None)
    flat = colour - design @ coef
    medians = np.array([np.median(flat[sector], axis=0) for sector in sectors])
    disagree = float(np.abs(medians[:, None] - medians[None]).max())
    mine, round_it = flat[inside].T, flat[ring].T
    gaps = [np.abs(mine[c][:, None] - round_it[c][None]) for c in range(3)]
    nearest = np.maximum(np.maximum(gaps[0], gaps[1]), gaps[2]).min(axis=1)
    share = float(np.quantile(nearest, cfg.inside_share))
    clipped = bool((colour[inside].min(axis=1) >= math.log(cfg.clip_grey)).any())
    return SlotSurface(
        share,
        disagree,
        _chroma(colour[ring]),
        clipped,
        float(np.median(detail[inside])),
        float(np.median(detail[ring])),
    )


@lru_cache(maxsize=4)
def _block_places(count: int, step_mm: float) -> tuple[NDArray[np.float64], ...]:
    """Each block's centre (x, y, mm from the square's centre, row by row), its distance
    from the centre along the larger axis, and its sector (0 east, counting clockwise)."""
    at = (np.arange(count) - (count - 1) / 2) * step_mm
    y, x = (g.ravel() for g in np.meshgrid(at, at, indexing="ij"))
    r = np.maximum(np.abs(x), np.abs(y))
    sector = np.floor(
        (np.degrees(np.arctan2(y, x)) + 360.0 + 180.0 / _SECTORS) % 360.0 / (360.0 / _SECTORS)
    )
    for a in (x, y, r, sector):
        a.flags.writeable = False
    return x, y, r, sector


def _block_means(values: NDArray[np.float32], count: int) -> NDArray[np.float32]:
    """Means of count x count square blocks of an image (one or more channels)."""
    out: NDArray[np.float32] = np.asarray(
        cv2.resize(values, (count, count), interpolation=cv2.INTER_AREA), np.float32
    )
    return out


def _hue_angle(a: SlotSurface, b: SlotSurface) -> float:
    """Degrees between two rings' hues (their chroma vectors)."""
    norms = float(np.linalg.norm(a.chroma) * np.linalg.norm(b.chroma))
    cosine = float(a.chroma @ b.chroma) / max(norms, 1e-9)
    return math.degrees(math.acos(min(max(cosine, -1.0), 1.0)))


def bare_slots(surfaces: Mapping[Key, SlotSurface | None], cfg: StorageConfig) -> set[Key]:
    """The slots of one frame (by key; None: not judged) that show the bare table: judged
    against the other slots' rings (at least one), on a coloured table only: of the same
    hue as at least half of them, as saturated as their median, as richly textured as the
    richest (a hand or an arm over a ring, or glare, only smooths it)."""
    out: set[Key] = set()
    for key, surface in surfaces.items():
        if surface is None:
            continue
        others = [s for k, s in surfaces.items() if k != key and s is not None]
        if not others:
            continue
        colour = float(np.median([s.saturation for s in others]))
        texture = max(s.texture_ring for s in others)
        if colour < cfg.min_table_chroma:
            continue
        alike = sum(_hue_angle(surface, s) <= cfg.max_hue_deg for s in others)
        if (
            surface.inside <= cfg.max_inside
            and surface.sectors <= cfg.max_sectors
            and 2 * alike >= len(others)
            and surface.saturation >= cfg.min_saturation * colour
            and not surface.clipped
            and min(surface.texture_inside, surface.texture_ring) >= cfg.min_texture * texture
        ):
            out.add(key)
    return out


def pale_rings(
    chromas: Mapping[Key, NDArray[np.float64] | None],
    empty: Collection[Key],
    cfg: StorageConfig,
) -> set[Key]:
    """Of the slots read empty (`empty`), those whose ring (`ring_chroma`; None: not seen)
    is far paler than the other slots' rings, on a coloured table: a pale arm or hand over
    the slot and all round it, which the storage card's white look takes for the card."""
    out: set[Key] = set()
    for key in empty:
        mine = chromas.get(key)
        others = [
            float(np.linalg.norm(c)) for k, c in chromas.items() if k != key and c is not None
        ]
        if mine is None or not others:
            continue
        table = float(np.median(others))
        if table >= cfg.pale_table_chroma and (
            float(np.linalg.norm(mine)) < cfg.min_empty_saturation * table
        ):
            out.add(key)
    return out
