"""Reading only what changed since the last accepted read of the table.

`IncrementalReader` is what the live loop reads turns with. Its first read, and every read
after `forget()` (a refused or doubtful turn, a correction, an undo, a new game), is a whole
read (vision.reader.read). Once the tracker records the turn that read showed, `accepted()` keeps,
for every cell, its accepted reading, its matcher figures and its *look*: the tile's own
square and a thin border round it (its cut edge), warped with the whole read's poses to a
small colour picture (`table_looks`); the rest of the crop's margin, where a neighbour's tile
lies, is not part of it. The next read then checks that the table has not moved (each
marker's patch found again where it was, `shift`), takes every cell's look with the same
poses, and cuts and sends through the recogniser (the matcher and its judge, or the cell
network: ReadConfig.recogniser) only the cells whose look changed
(`difference` above ChangeConfig.threshold) or whose accepted reading is unknown; the others
keep their accepted reading and confidence, and their kept look becomes the mean of their
looks over the last reads (`kept_look`: the frame's noise is drawn anew each time). The
explorer ship is looked for on every read (it moves every turn). A marker moved, or too few
of an area's markers found again, and the read is a whole one.

The threshold is a measured figure: `companion bench changes --csv FILE` renders game turns
with glare, hands and camera shake, counts changed cells taken as unchanged and writes every
compared cell's difference, changed or not, to the CSV (docs/live.md).
"""

from __future__ import annotations

import time
from collections.abc import Collection, Mapping, Sequence
from concurrent.futures import Executor
from dataclasses import dataclass, field
from dataclasses import replace as dc_replace
from functools import lru_cache
from typing import Any

import cv2
import numpy as np
from numpy.typing import NDArray

from companion.reading import UNKNOWN, CellRead, TableRead
from vision.box.lessons import Lessons
from vision.box.pack import Pack
from vision.box.tilemodel import TileModel
from vision.config import VisionConfig
from vision.reader.areas import DISPLAY, AreaPose, area_name, cell_crop
from vision.reader.cellpool import Part, deal_seats, one_blas_thread
from vision.reader.read import (
    CellPlace,
    Slot,
    TableReader,
    TableView,
    assemble_table,
    cell_places,
    check_frame,
    cut_cells,
    look_for_ship_beside,
    net_head,
    net_reads,
    net_threshold,
    part_of,
    storage_against_table,
    table_reads,
    tile_model,
    weighed,
)
from vision.reader.recognise import CellMatch, match_cells

Image = NDArray[np.uint8]
Look = NDArray[np.float32]
Looks = NDArray[np.float32]  # a stack of looks (N, n, m, channels)


@dataclass(frozen=True, slots=True)
class ChangeConfig:
    """When a cell counts as unchanged and the table as unmoved (vision.reader.incremental)."""

    # A cell's look: the tile's own square and this much round it (mm: its cut edge, so
    # that a plain tile on plain paper still shows; the rest of the crop's margin holds the
    # neighbours, the gaps and the ship's lane, and a change there is not this cell's),
    # look_px a side, colour, each pixel the mean of look_oversample x look_oversample
    # samples of the frame.
    look_border_mm: float = 0.5
    look_px: int = 18
    look_oversample: int = 4
    # The difference is the worst block of this many look pixels a side.
    block_px: int = 3
    # An unchanged cell's look is compared as the mean of its looks in up to this many
    # reads (`kept_look`): the noise of the look it is compared with falls by their number.
    look_frames: int = 8
    # A cell whose look differs by more than this (grey levels, `difference`) is read
    # again: a third of the least difference of a changed cell over 2000 rendered turns
    # (`companion bench changes`, docs/live.md), for a missed change is far worse than a read.
    threshold: float = 3.0
    # A marker's patch (this many px round its corners) is found again by phase correlation.
    marker_margin_px: int = 12
    # The camera shaken: an area whose markers all moved alike (each within
    # marker_tolerance_px of their mean shift) by at most marker_shift_px is read with its
    # pose moved by that shift; more, or unlike, and the table moved (a whole read).
    marker_shift_px: float = 6.0
    marker_tolerance_px: float = 1.0
    # A patch found with a correlation peak below this is not found (a hand over it).
    marker_least_response: float = 0.3
    # An area is checked when at least this many of its markers are found again.
    markers_per_area: int = 2
    # Display cells read again are read with the looks of this many unchanged display cells
    # beside them (they are not read themselves): the display's cells together tell a lamp's
    # glare.
    display_companions: int = 3


@dataclass(frozen=True, slots=True)
class ReadReport:
    """How the last read was made: "whole" (and why) or "changes" (which cells were read)."""

    kind: str
    why: str = ""
    reread: tuple[Slot, ...] = ()
    cells: int = 0
    seconds: float = 0.0
    timings: dict[str, float] = field(default_factory=dict)


@dataclass(slots=True)
class _Base:
    """What a read leaves for the next: poses, markers, and per cell its look and answer."""

    view: TableView
    shape: tuple[int, ...]
    reads: dict[Slot, CellRead]
    matches: dict[Slot, CellMatch]
    looks: dict[Slot, Look]
    hidden: dict[Any, list[str]]
    patches: dict[int, tuple[NDArray[np.float32], tuple[int, int]]]
    # How many reads' looks each cell's look is the mean of (`kept_look`); 1 when absent.
    frames: dict[Slot, int] = field(default_factory=dict)
    # Each cell's crop as it was last read (a host's correction of it becomes a lesson).
    crops: dict[Slot, Image] = field(default_factory=dict)


def tile_share(tile_mm: float, margin_mm: float, config: ChangeConfig) -> float:
    """The share of a crop's side (a tile and margin_mm on every side) its look covers."""
    return min(1.0, (tile_mm + 2 * config.look_border_mm) / (tile_mm + 2 * margin_mm))


def look_of(picture: Image, config: ChangeConfig) -> Look:
    """The look of a square picture of a look's area: shrunk to look_px a side (INTER_AREA),
    float colour."""
    n = config.look_px
    small = cv2.resize(picture, (n, n), interpolation=cv2.INTER_AREA)
    if small.ndim == 2:
        small = small[:, :, None]
    return np.asarray(small, np.float32)


def table_looks(
    colour: Image, places: Sequence[CellPlace], config: ChangeConfig, share: float
) -> dict[Slot, Look]:
    """Every place's look: the centred `share` of its crop (`tile_share`), warped from the
    frame at look_oversample times look_px a side and shrunk (`look_of`)."""
    size = config.look_oversample * config.look_px
    out: dict[Slot, Look] = {}
    for p in places:
        side = share * p.crop_mm
        out[p.slot] = look_of(cell_crop(colour, p.pose, p.centre_mm, side, size / side), config)
    return out


_PAIRS_AT_ONCE = 24


@lru_cache(maxsize=4)
def _light_terms(n: int, m: int) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """The terms a lamp's light varies by across a look of n x m pixels (1, across, down),
    as rows (3, M), and their products two by two as columns (M, 9); read-only."""
    v, u = np.mgrid[0:n, 0:m].astype(np.float64)
    rows = np.stack([np.ones(n * m), (u - (m - 1) / 2).ravel() / m, (v - (n - 1) / 2).ravel() / n])
    pairs = np.ascontiguousarray((rows[:, None, :] * rows[None, :, :]).reshape(9, -1).T)
    for out in (rows, pairs):
        out.flags.writeable = False
    return rows, pairs


def _fitted_residuals(a: Looks, b: Looks) -> NDArray[np.float64]:
    """Each pair's squared residual per pixel, summed over the channels, after the best
    light that maps one look onto the other, per channel: a gain and an offset that each
    vary linearly across the cell (a lamp's light falls off smoothly; a tile's picture does
    not). Both ways round: out (2, N, n, m), [0] b fitted from a, [1] a from b. `a` and `b`
    are stacks of looks (N, n, m, channels). Every least-squares fit at once, through the
    normal matrices (built from sums over the look's light terms)."""
    count, n, m, channels = a.shape
    rows, pairs = _light_terms(n, m)
    size = n * m

    def by_channel(looks: Looks) -> NDArray[np.float64]:
        flat = looks.reshape(count, size, channels).transpose(0, 2, 1)
        return np.ascontiguousarray(flat, np.float64).reshape(-1, size)  # (N * C, M)

    x, y = by_channel(a), by_channel(b)
    scratch = np.multiply(x, y)
    both = scratch @ pairs[:, :3]
    sums = []  # each look's sums of its squares and of itself by the light terms' pairs
    for look in (x, y):
        np.multiply(look, look, out=scratch)
        sums.append((scratch @ pairs, look @ pairs))
    out = np.empty((2, count * channels, size))
    for k, (src, dst) in enumerate(((x, y), (y, x))):
        (squares, own), (_, other) = sums[k], sums[1 - k]
        # The design's columns are the look times each light term, then the terms alone.
        gram = np.empty((count * channels, 6, 6))
        gram[:, :3, :3] = squares.reshape(-1, 3, 3)
        gram[:, :3, 3:] = gram[:, 3:, :3] = own.reshape(-1, 3, 3)
        gram[:, 3:, 3:] = rows @ rows.T
        rhs = np.concatenate([both, other[:, :3]], axis=1)
        # A whisker of ridge keeps a singular system (a look of one colour) solvable: it
        # picks the least coefficients, as a least-squares solver would, and leaves the
        # residual.
        gram += 1e-12 * np.trace(gram, axis1=1, axis2=2)[:, None, None] * np.eye(6)
        coef = np.linalg.solve(gram, rhs[..., None])[..., 0]  # (N * C, 6)
        res = np.matmul(coef[:, :3], rows, out=out[k])
        res *= src
        res += coef[:, 3:] @ rows
        np.subtract(dst, res, out=res)
        np.square(res, out=res)
    summed: NDArray[np.float64] = out.reshape(2, count, channels, size).sum(axis=2)
    return summed.reshape(2, count, n, m)


def differences(a: Sequence[Look], b: Sequence[Look], config: ChangeConfig) -> list[float]:
    """How much each pair of looks of one cell differs, light aside: the residual (grey
    levels, RMS over the channels) after fitting the light (`_fitted_residuals`), in the
    worst block of block_px a side; either way round (a plain look fits anything at gain
    0), the larger."""
    if not len(a):
        return []
    first, second = np.stack(a), np.stack(b)
    count, side, _, channels = first.shape
    k = config.block_px
    n = (side // k) * k
    worst = np.empty(count)
    # A few pairs at a time: their working arrays stay in the processor's cache.
    for i in range(0, count, _PAIRS_AT_ONCE):
        part = slice(i, i + _PAIRS_AT_ONCE)
        r = _fitted_residuals(first[part], second[part])
        # Blocks summed down, then across (quicker than one sum over two axes).
        down = r[:, :, :n, :n].reshape(2, r.shape[1], n // k, k, n).sum(axis=3)
        blocks = down.reshape(2, r.shape[1], -1, k).sum(axis=3)
        worst[part] = blocks.max(axis=(0, 2))
    return [float(np.sqrt(w / (channels * k * k))) for w in worst]


def difference(a: Look, b: Look, config: ChangeConfig) -> float:
    """How much two looks of one cell differ, light aside (`differences`)."""
    return differences([a], [b], config)[0]


def gate(
    kept: Sequence[Look], seen: Sequence[Look], config: ChangeConfig
) -> tuple[list[float], list[bool]]:
    """The gate of a read of what changed, for each cell: how much its look `seen` differs
    from its kept look (`differences`), and whether it is read again (by more than
    ChangeConfig.threshold: a cell not read again keeps its accepted reading)."""
    apart = differences(kept, seen, config)
    return apart, [d > config.threshold for d in apart]


def kept_look(kept: Look, frames: int, seen: Look, config: ChangeConfig) -> tuple[Look, int]:
    """An unchanged cell's kept look (the mean of `frames` reads' looks) once `seen` again:
    the mean of its last looks, up to ChangeConfig.look_frames of them, and their number.
    The frame's noise is drawn anew in every frame, so the mean's falls by their number; a
    change is still measured against looks of before it."""
    frames = min(frames + 1, config.look_frames)
    return np.asarray(kept + (seen - kept) / frames, np.float32), frames


def marker_patches(
    grey: Image, view: TableView, config: ChangeConfig
) -> dict[int, tuple[NDArray[np.float32], tuple[int, int]]]:
    """Each seen marker's patch (its corners' box and a margin, float; grown to a size
    `_dft_side` gives) and its top-left."""
    out: dict[int, tuple[NDArray[np.float32], tuple[int, int]]] = {}
    h, w = grey.shape[:2]
    m = config.marker_margin_px
    for marker_id, sighting in view.markers.items():
        c = np.asarray(sighting.corners, np.float64)
        x0, y0 = int(np.floor(c[:, 0].min())) - m, int(np.floor(c[:, 1].min())) - m
        x1, y1 = int(np.ceil(c[:, 0].max())) + m, int(np.ceil(c[:, 1].max())) + m
        x1, y1 = x0 + _dft_side(x1 - x0), y0 + _dft_side(y1 - y0)
        if x0 < 0 or y0 < 0 or x1 > w or y1 > h:
            continue
        out[marker_id] = (grey[y0:y1, x0:x1].astype(np.float32), (x0, y0))
    return out


def _dft_side(least: int) -> int:
    """The least even side from `least` on that the DFT takes as it is: OpenCV's phase
    correlation finds a shift of half a pixel between two equal patches of a side it pads
    to an odd size (45, 75, 81, ...)."""
    side = max(2, least)
    while side % 2 or cv2.getOptimalDFTSize(side) != side:
        side += 1
    return side


def shift(
    patch: NDArray[np.float32], corner: tuple[int, int], image: Image
) -> tuple[float, float, float]:
    """How far (px, x and y) the patch moved in `image` (grey, or colour: only the patch's
    window is made grey), and the correlation peak saying how sure that is."""
    x0, y0 = corner
    ph, pw = patch.shape
    window = image[y0 : y0 + ph, x0 : x0 + pw]
    if window.ndim == 3:
        window = np.asarray(cv2.cvtColor(np.ascontiguousarray(window), cv2.COLOR_BGR2GRAY))
    now = window.astype(np.float32)
    if now.shape != patch.shape:
        return 0.0, 0.0, 0.0
    # Both windowed here: given the window, OpenCV multiplies its inputs by it in place
    # when their size needs no padding (as `_dft_side` makes it), and would wear the kept
    # patch away read after read.
    hanning = _hanning(pw, ph)
    now *= hanning
    (dx, dy), response = cv2.phaseCorrelate(patch * hanning, now)
    return float(dx), float(dy), float(response)


@lru_cache(maxsize=32)
def _hanning(width: int, height: int) -> NDArray[np.float32]:
    """The window phase correlation weighs a patch's pixels by (read-only)."""
    out = np.asarray(cv2.createHanningWindow((width, height), cv2.CV_32F), np.float32)
    out.flags.writeable = False
    return out


def table_moved(
    base: Mapping[int, tuple[NDArray[np.float32], tuple[int, int]]],
    image: Image,
    view: TableView,
    config: ChangeConfig,
    threads: Executor | None = None,
) -> tuple[str | None, dict[Any, tuple[float, float]]]:
    """Why the poses of `view` no longer hold for `image` (grey or colour; a sentence, or
    None), and each area's shift (px): the camera shaken a little moves all of an area's
    markers alike. With `threads`, half the markers are looked for in one of them."""
    items = list(base.items())
    half = len(items) // 2 if threads is not None else 0

    def shifts(part: Sequence[tuple[int, Any]]) -> list[tuple[float, float, float]]:
        return [shift(patch, corner, image) for _, (patch, corner) in part]

    theirs = threads.submit(shifts, items[:half]) if threads is not None else None
    mine = shifts(items[half:])
    found: dict[Any, list[tuple[float, float]]] = {}
    got = (theirs.result() if theirs is not None else []) + mine
    for (marker_id, _), (dx, dy, response) in zip(items, got, strict=True):
        if response < config.marker_least_response:
            continue
        if np.hypot(dx, dy) > config.marker_shift_px:
            return f"marker {marker_id} moved {np.hypot(dx, dy):.1f} px", {}
        area = DISPLAY if marker_id < 4 else marker_id // 4
        found.setdefault(area, []).append((dx, dy))
    offsets: dict[Any, tuple[float, float]] = {}
    for area in view.poses:
        seen = np.asarray(found.get(area, []), np.float64).reshape(-1, 2)
        if len(seen) < config.markers_per_area:
            why = f"{area_name(area)}: fewer than {config.markers_per_area} markers found again"
            return why, {}
        mean = seen.mean(axis=0)
        spread = float(np.hypot(*(seen - mean).T).max())
        if spread > config.marker_tolerance_px:
            return f"{area_name(area)}: its markers moved unlike ({spread:.1f} px)", {}
        offsets[area] = (float(mean[0]), float(mean[1]))
    return None, offsets


def shifted(view: TableView, offsets: Mapping[Any, tuple[float, float]]) -> TableView:
    """The view with each area's pose moved by its offset (px)."""

    def move(pose: AreaPose) -> AreaPose:
        dx, dy = offsets.get(pose.area, (0.0, 0.0))
        t = np.array([[1.0, 0.0, dx], [0.0, 1.0, dy], [0.0, 0.0, 1.0]])
        return dc_replace(pose, homography=t @ pose.homography)

    display = None if view.display is None else move(view.display)
    seats = {seat: move(pose) for seat, pose in view.seats.items()}
    return dc_replace(view, display=display, seats=seats)


class IncrementalReader:
    """Reads turns: a whole read first, then only the cells that changed (module docstring).

    Call it with a frame (or `read_turn`); `accepted()` once the read's turn is recorded,
    `forget()` when anything else happened. `report` says how the last read was made. Its
    TableReader (`tables`) holds the threads and worker processes: `close()` stops them."""

    def __init__(
        self,
        pack: Pack,
        *,
        side: str = "front",
        config: VisionConfig | None = None,
        changes: ChangeConfig | None = None,
        lessons: Lessons | None = None,
    ) -> None:
        self.pack = pack
        self.side = side
        self.lessons = lessons  # what this table taught its judge (vision.box.lessons)
        self.config = config or VisionConfig()
        self.changes = changes or ChangeConfig()
        self.tables = TableReader(pack, side=side, config=self.config, lessons=lessons)
        self.report = ReadReport("none")
        self.view: TableView | None = None  # the last whole read's view (markers, poses)
        self._base: _Base | None = None
        self._pending: _Base | None = None
        self._offsets: dict[Any, tuple[float, float]] = {}
        self._share = tile_share(pack.tile_mm, self.config.crops.crop_margin_mm, self.changes)

    def __call__(self, image: Image) -> TableRead:
        return self.read_turn(image)

    def __enter__(self) -> IncrementalReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Stop the reader's threads and worker processes."""
        self.tables.close()

    def accepted(self) -> None:
        """The last read's turn was recorded: the next read compares against it."""
        if self._pending is not None:
            self._base = self._pending
        self._pending = None

    def forget(self) -> None:
        """The next read is a whole one."""
        self._base = None
        self._pending = None

    @property
    def matches(self) -> Mapping[Slot, CellMatch]:
        """The matcher's figures behind the last read's cells (a host's correction of one
        of them becomes a lesson, vision.box.lessons)."""
        last = self._pending or self._base
        return {} if last is None else last.matches

    @property
    def crops(self) -> Mapping[Slot, Image]:
        """The crops the last read's cells were read from (a cell not read again keeps the
        crop it was read from): a host's correction of one becomes a lesson."""
        last = self._pending or self._base
        return {} if last is None else last.crops

    def read_turn(self, image: Image, seats: Collection[int] = ()) -> TableRead:
        """The table in `image`: only what changed since the accepted read, else whole. A
        seat of `seats` the accepted read did not place makes it a whole read."""
        start = time.perf_counter()
        self.tables.prepare()  # with every BLAS thread, before the read holds BLAS to one
        with one_blas_thread():
            return self._read_turn(image, seats, start)

    def _read_turn(self, image: Image, seats: Collection[int], start: float) -> TableRead:
        image = check_frame(image, self.config)
        colour: Image = (
            image
            if image.ndim == 3
            else np.asarray(cv2.cvtColor(image, cv2.COLOR_GRAY2BGR), np.uint8)
        )
        base = self._base
        why = "no accepted read" if base is None else self._whole_because(colour, base, seats)
        if base is None or why is not None:
            table = self._whole(colour)
            self.report = ReadReport(
                "whole",
                why or "",
                cells=len(self._pending.reads) if self._pending else 0,
                seconds=time.perf_counter() - start,
            )
            return table
        return self._changes(colour, base, start)

    # ------------------------------------------------------------ whole reads

    def _whole_because(self, colour: Image, base: _Base, seats: Collection[int]) -> str | None:
        if colour.shape != base.shape:
            return "the frame's size changed"
        if base.view.display is None:
            return "the display was not placed at the accepted read"
        missing = [s for s in seats if s not in base.view.seats]
        if missing:
            return f"seat {missing[0]} was not placed at the accepted read"
        why, self._offsets = table_moved(
            base.patches, colour, base.view, self.changes, self.tables.threads
        )
        return why

    def _whole(self, colour: Image) -> TableRead:
        table, view = self.tables.read_view(colour)
        self.view = view
        reads = _cell_reads(table, list(view.crops))
        grey = np.asarray(cv2.cvtColor(colour, cv2.COLOR_BGR2GRAY), np.uint8)
        places, _hidden = cell_places(colour.shape, view, self.pack, self.side, self.config)
        self._pending = _Base(
            view,
            colour.shape,
            reads,
            dict(view.matches),
            table_looks(colour, places, self.changes, self._share),
            dict(view.hidden),
            marker_patches(grey, view, self.changes),
            crops=dict(view.crops),
        )
        return table

    # ------------------------------------------------------------ reading what changed

    def _read_again(
        self,
        model: TileModel,
        crops: Sequence[Image],
        refs: Sequence[Image | None],
        slots: Sequence[Slot],
        reread: Sequence[int],
        companions: Sequence[int],
    ) -> dict[Slot, CellMatch]:
        """The matches of the cells read again, in `reread`'s order: the display's (with
        their companions' looks) read here, the seats' shared with the cell workers when the
        whole read has them (vision.reader.cellpool; as in a whole read, a seat's cell is read alone
        and the display's together)."""
        shown = [i for i in reread if slots[i][0] == DISPLAY]
        seats = [i for i in reread if slots[i][0] != DISPLAY]
        workers = self.tables.workers if seats else None
        if workers is None:
            shown, seats = list(reread), []
        parts: list[list[int]] = [[]]
        if workers is not None:
            weight = self.config.read.cells_here_weight
            dealt = deal_seats(len(seats), len(shown), workers.workers, weight)
            parts = [[seats[k] for k in idx] for idx in dealt]
        mine = shown + parts[0]
        first = part_of(crops, refs, slots, mine + list(companions))

        def read(part: Part) -> list[CellMatch]:
            wanted = len(mine) if part is first else None
            return match_cells(part[0], model, part[1], light_groups=part[2], wanted=wanted)

        if workers is None:
            got = [read(first)]
            order = mine
        else:
            others = [idx for idx in parts[1:] if idx]
            got = workers.read(
                [
                    lambda: first,
                    *(lambda idx=idx: part_of(crops, refs, slots, idx) for idx in others),
                ],
                read,
            )
            order = mine + [i for idx in others for i in idx]
        found = dict(zip(order, [m for part in got for m in part], strict=True))
        return {slots[i]: found[i] for i in reread}

    def _changes(self, colour: Image, base: _Base, start: float) -> TableRead:
        config, pack, cfg, models = self.config, self.pack, self.changes, self.tables.models
        timings: dict[str, float] = {"check": time.perf_counter() - start}
        view = shifted(base.view, self._offsets)
        ship_wait = (
            look_for_ship_beside(
                colour,
                view.display,
                pack,
                config,
                models.ship,
                self.tables.threads,
                self.tables.workers,
            )
            if view.display is not None
            else None
        )
        t0 = time.perf_counter()
        places, _hidden = cell_places(colour.shape, view, pack, self.side, config)
        slots = [p.slot for p in places]
        looks = table_looks(colour, places, cfg, self._share)
        compared = [
            i
            for i, slot in enumerate(slots)
            if slot in base.looks and not base.reads.get(slot, UNKNOWN).unknown
        ]
        _, different = gate(
            [base.looks[slots[i]] for i in compared], [looks[slots[i]] for i in compared], cfg
        )
        alike = {i for i, d in zip(compared, different, strict=True) if not d}
        reread = [i for i in range(len(slots)) if i not in alike]
        timings["looks"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        fresh = [slots[i] for i in reread]
        fresh_matches: dict[Slot, CellMatch] = {}
        if config.read.recogniser == "net":
            # The network reads each cell by itself: only the cells read again are cut.
            cut = [places[i] for i in reread]
            crops = cut_cells(colour, cut, config)
            answers = net_reads(
                crops,
                [p.ref for p in cut],
                fresh,
                pack,
                config,
                net_threshold(models),
                net_head(models),
            )
        else:
            model = tile_model(models, pack, config)
            # Only the cells read again, and their display companions, are cut.
            needed = reread + _companions(slots, reread, cfg.display_companions)
            cut = [places[i] for i in needed]
            crops = cut_cells(colour, cut, config)
            new_matches = self._read_again(
                model,
                crops,
                [p.ref for p in cut],
                [p.slot for p in cut],
                range(len(reread)),
                range(len(reread), len(needed)),
            )
            # Board cells read empty are weighed against the whole table's (as a whole read
            # does): the accepted matches stand in for the cells not read again.
            matches = {**base.matches, **new_matches}
            order = list(matches)
            weighed_all = dict(
                zip(order, weighed([matches[s] for s in order], order, model.config), strict=True)
            )
            fresh_matches = {s: weighed_all[s] for s in fresh}
            answers = table_reads([fresh_matches[s] for s in fresh], pack, config, models=models)
        reads = {**base.reads, **dict(zip(fresh, answers, strict=True))}
        timings["cells"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        stored = [s for s in fresh if s[1] < 0]
        if stored:
            layout = pack.catalogue.board(self.side)
            again = storage_against_table(
                colour,
                view.seats,
                reads,
                layout,
                pack.tile_mm,
                config,
                [m.corners for m in view.markers.values()],
            )
            reads.update({s: r for s, r in again.items() if s in stored})
        timings["storage"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        ship = ship_wait()[0] if ship_wait is not None else None
        timings["ship wait"] = time.perf_counter() - t0
        kept_looks, frames = dict(base.looks), dict(base.frames)
        for i in alike:
            slot = slots[i]
            kept_looks[slot], frames[slot] = kept_look(
                kept_looks[slot], frames.get(slot, 1), looks[slot], cfg
            )
        for slot in fresh:
            kept_looks[slot], frames[slot] = looks[slot], 1
        self._pending = _Base(
            base.view,
            base.shape,
            reads,
            {**base.matches, **fresh_matches},
            kept_looks,
            base.hidden,
            base.patches,
            frames,
            # The cells read again are cut first (the display companions' crops follow).
            {**base.crops, **dict(zip(fresh, crops, strict=False))},
        )
        table = _table(view, reads, ship, base.hidden, pack, self.side)
        self.report = ReadReport(
            "changes",
            reread=tuple(fresh),
            cells=len(slots),
            seconds=time.perf_counter() - start,
            timings=timings,
        )
        return table


def _companions(slots: Sequence[Slot], reread: Sequence[int], count: int) -> list[int]:
    """Unchanged display cells to read beside the display cells read again (spread out)."""
    if count <= 0 or not any(slots[i][0] == DISPLAY for i in reread):
        return []
    chosen = set(reread)
    others = [i for i, slot in enumerate(slots) if slot[0] == DISPLAY and i not in chosen]
    if len(others) <= count:
        return others
    step = len(others) / count
    return [others[int(k * step)] for k in range(count)]


def _cell_reads(table: TableRead, slots: Sequence[Slot]) -> dict[Slot, CellRead]:
    """The answer a whole read gave each cut slot."""
    out: dict[Slot, CellRead] = {}
    for slot in slots:
        area, r, c = slot
        if area == DISPLAY:
            cell = table.display[r][c]
        elif r < 0:
            cell = table.seats[area].storage
        else:
            cell = table.seats[area].cells[r][c]
        out[slot] = UNKNOWN if cell is None else cell
    return out


def _table(
    view: TableView,
    reads: Mapping[Slot, CellRead],
    ship: int | None,
    hidden: Mapping[Any, list[str]],
    pack: Pack,
    side: str,
) -> TableRead:
    """A TableRead as vision.reader.read.read_table_view builds it, from per-slot answers."""
    # The whole read's own warnings about cells and the ship are made again.
    warnings = [
        w
        for w in view.warnings
        if "not wholly in the picture" not in w and "explorer ship" not in w
    ]
    return assemble_table(view, reads, ship, hidden, pack.catalogue.board(side), warnings)
