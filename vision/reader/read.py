"""Reading the whole table from one frame: grey -> markers -> poses -> crops -> cells, ship.

`TableReader(pack).read(image)` is what `companion read` and the live companion use
(`read_table(image, pack)` reads the same in one thread); it returns the `companion read
--json` object (companion.reading.TableRead). Each stage is a pure
function of its inputs and vision.config: vision.reader.markers finds the markers,
vision.reader.areas places the display and the seats (and cuts the crops), vision.reader.recognise
names what lies in each cell (all crops in one batch, or shared out with worker processes when
there are cores for them: the seats' cells cut first and dealt out a cell at a time, the display's
read here, vision.reader.cellpool; the board cells read empty are then weighed against the whole
table's, vision.reader.recognise.doubt_odd_light) and vision.reader.ship finds the explorer ship in
the lane (in a second thread, beside the cells once the workers have theirs: it needs only the
display's pose).

What the camera cannot see is reported, never guessed: a display that cannot be placed
reads as 16 unknown cells and no ship (with a warning) while the seats still read; a seat
whose markers are not seen is absent; a cell outside the picture is unknown. A frame with
no marker of the kit at all raises TableNotFound.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Collection, Hashable, Mapping, Sequence
from concurrent.futures import Executor, Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from itertools import product
from pathlib import Path
from typing import Any

import cv2
import numpy as np
from numpy.typing import NDArray

from companion.catalogue import BoardLayout
from companion.errors import CompanionError
from companion.progress import terminal_progress
from companion.reading import EMPTY, UNKNOWN, CellRead, SeatRead, TableRead
from vision import kit
from vision.box.cache import cache_dir
from vision.box.judge import CellJudge, judge_for
from vision.box.lessons import CellLesson, Lessons
from vision.box.pack import Pack
from vision.box.tilemodel import TileModel, learn_pack
from vision.cellnet.calibrate import Calibration, calibration_for
from vision.cellnet.data import EMPTY as EMPTY_LABEL
from vision.cellnet.data import PackCells
from vision.cellnet.geometry import net_crop
from vision.cellnet.model import (
    BOARD_CELL,
    DISPLAY_CELL,
    STORAGE_CELL,
    BoxPictures,
    Head,
    box_pictures,
    cell_net,
)
from vision.config import CellConfig, ShipConfig, VisionConfig
from vision.reader.areas import (
    DISPLAY,
    AreaPose,
    area_geometries,
    area_name,
    cell_crop,
    cell_crops,
    crop_in_picture,
    crops_visible,
    from_one_marker,
    locate_all,
    picture_crop,
    place_seats_by_board,
    placed_by_board_notes,
    placed_by_lane_notes,
    predicted_markers,
    refine_areas,
    storage_size_mm,
    tile_crop_mm,
)
from vision.reader.cellpool import (
    CellWorkers,
    Part,
    deal_seats,
    one_blas_thread,
    read_part,
    worker_count,
)
from vision.reader.markers import MarkerSighting, detect_markers, recover_markers
from vision.reader.recognise import CellMatch, doubt_odd_light
from vision.reader.ship import (
    ShipModel,
    display_geometry,
    read_ship_in_frame,
    ship_area,
    ship_in_area,
    ship_model,
)
from vision.reader.storage import (
    bare_slots,
    kept_out,
    pale_rings,
    ring_chroma,
    slot_surface,
    square_mm,
)

Image = NDArray[np.uint8]


class TableNotFound(CompanionError):
    """Not one marker of the table kit is in the picture."""


class BadFrame(CompanionError):
    """The frame handed to the reader is not a picture it can read (shape, type, size)."""


@dataclass(frozen=True)
class TableView:
    """Where everything is in one frame: the markers, the areas' poses and what was missed.

    `timings` holds seconds per stage (grey, markers, areas, crops, cells, ship, storage:
    the storage slots weighed against the table round them); the ship
    is looked for beside the crops and cells (ReadConfig.ship_beside_cells), so its time
    overlaps theirs. `crops` is the time this process spent cutting (the workers read while
    it cuts its own part); `cells` the rest of the time until every cell was read."""

    markers: dict[int, MarkerSighting]
    display: AreaPose | None
    seats: dict[int, AreaPose]
    warnings: tuple[str, ...]
    shape: tuple[int, int]
    timings: dict[str, float] = field(default_factory=dict)
    # Every cell's match (the matcher's figures behind its read), by slot.
    matches: dict[Slot, CellMatch] = field(default_factory=dict)
    # Every cell's crop as it was read, by slot, and per area the cells not wholly in the
    # picture (vision.reader.incremental keeps the crops' looks).
    crops: dict[Slot, Image] = field(default_factory=dict)
    hidden: dict[Any, list[str]] = field(default_factory=dict)

    @property
    def poses(self) -> dict[Any, AreaPose]:
        """Every located area by key ("display" or seat number)."""
        out: dict[Any, AreaPose] = dict(self.seats)
        if self.display is not None:
            out[DISPLAY] = self.display
        return out


def check_frame(image: Any, config: VisionConfig | None = None) -> Image:
    """The frame as an 8-bit grey or BGR array, or BadFrame saying what is wrong."""
    config = config or VisionConfig()
    if not isinstance(image, np.ndarray):
        raise BadFrame(f"a frame must be an image array, not {type(image).__name__}")
    if image.dtype != np.uint8:
        raise BadFrame(f"a frame must hold 8-bit pixels, not {image.dtype}")
    if image.ndim == 3 and image.shape[2] == 4:
        image = np.ascontiguousarray(image[:, :, :3])
    if not (image.ndim == 2 or (image.ndim == 3 and image.shape[2] in (1, 3))):
        raise BadFrame(f"a frame must be grey or colour (rows, cols[, 3]), not shape {image.shape}")
    height, width = image.shape[:2]
    if height * width > config.read.max_pixels:
        raise BadFrame(
            f"a frame of {width} x {height} pixels is larger than "
            f"{config.read.max_pixels // 1_000_000} megapixels"
        )
    if min(height, width) < config.read.min_side_px:
        raise BadFrame(
            f"a frame of {width} x {height} pixels is too small to show the table kit "
            f"(at least {config.read.min_side_px} pixels a side)"
        )
    if image.ndim == 3 and image.shape[2] == 1:
        image = image[:, :, 0]
    return np.asarray(image, np.uint8)


def locate_table(
    image: Image,
    tile_mm: float,
    seat_layouts: BoardLayout | dict[int, BoardLayout],
    config: VisionConfig | None = None,
    *,
    boards: Image | Mapping[int, Image] | None = None,
    threads: Executor | None = None,
) -> TableView:
    """Find the kit's markers and place every area they show (TableNotFound if none).

    Given the board picture every seat uses (or one per seat), a seat of which one marker
    is seen is placed by it and its printed board (`place_seat_by_board`). `threads`, when
    given, look at parts of the frame beside this one."""
    config = config or VisionConfig()
    image = check_frame(image, config)
    timings: dict[str, float] = {}
    t0 = time.perf_counter()
    gray: Image = (
        image if image.ndim == 2 else np.asarray(cv2.cvtColor(image, cv2.COLOR_BGR2GRAY), np.uint8)
    )
    t1 = time.perf_counter()
    markers = detect_markers(gray, config.markers, threads)
    t2 = time.perf_counter()
    timings["grey"] = t1 - t0
    timings["markers"] = t2 - t1
    if not markers:
        raise TableNotFound("no markers of the table kit in the picture")
    # The areas from their markers alone first: the lane refinement (the costly part) is
    # done once, on the final markers.
    display, seats, warnings = locate_all(markers, tile_mm, seat_layouts, config.areas)
    # Look again, closely, where the areas say their missing markers must be; a marker
    # found again may place its area well enough to find more (a second round looks only
    # at the areas that gained one).
    looking: set[int] | None = None  # marker ids whose areas to look at (None: all)
    for _ in range(config.markers.recover_rounds):
        predictions = _expected_markers(markers, display, seats, tile_mm, seat_layouts, looking)
        more = recover_markers(gray, markers, predictions, config.markers) if predictions else {}
        looking = set(more) - set(markers)
        if not looking:
            break
        markers = more
        display, seats, warnings = locate_all(markers, tile_mm, seat_layouts, config.areas)
    display, seats = refine_areas(gray, display, seats, config.areas, markers=markers)
    warnings = placed_by_lane_notes(warnings, display)
    if boards is not None:
        seats = place_seats_by_board(
            gray, markers, display, seats, tile_mm, seat_layouts, boards, config.areas
        )
        warnings = placed_by_board_notes(warnings, seats)
    timings["areas"] = time.perf_counter() - t2
    shape = (int(gray.shape[0]), int(gray.shape[1]))
    return TableView(markers, display, seats, tuple(warnings), shape, timings)


def _expected_markers(
    markers: dict[int, MarkerSighting],
    display: AreaPose | None,
    seats: dict[int, AreaPose],
    tile_mm: float,
    seat_layouts: BoardLayout | dict[int, BoardLayout],
    gained: set[int] | None,
) -> dict[int, NDArray[np.float64]]:
    """Where the missing markers of the areas must be (id -> 4 x 2 image corners): as the
    located areas place them, and as an area with one marker seen places them roughly on
    the table plane the located areas give (`from_one_marker`). Given `gained`, only for the
    areas that own one of those marker ids."""
    located = [p for p in (display, *seats.values()) if p is not None]
    placed = {p.area for p in located}
    rough = [
        pose
        for area, geometry in area_geometries(tile_mm, seat_layouts)
        if area not in placed and (pose := from_one_marker(geometry, markers, located))
    ]
    out: dict[int, NDArray[np.float64]] = {}
    for pose in [*located, *rough]:
        ids = pose.geometry.marker_ids
        if len(pose.markers_seen) < 4 and (gained is None or gained & set(ids)):
            out.update(predicted_markers(pose, [i for i in ids if i not in markers]))
    return out


def read_table(
    image: Image,
    pack: Pack,
    *,
    side: str = "front",
    config: VisionConfig | None = None,
    lessons: Lessons | None = None,
) -> TableRead:
    """Everything the camera can tell about the table in one BGR (or grey) frame (`lessons`:
    what this table taught its judge, vision.box.lessons), read in this thread alone; a
    TableReader reads faster, with threads and worker processes of its own."""
    return read_table_view(image, pack, side=side, config=config, lessons=lessons)[0]


@dataclass(frozen=True, slots=True)
class BoxModels:
    """What a box's reads rest on, all learnt from its pack: the templates matched against
    the cells and the cells' judge (the matcher's: None when the cell network reads, and the
    judge None when it is turned off), the ship model, and the cell network's threshold for
    this box (config.read.recogniser "net"; None for the matcher)."""

    tiles: TileModel | None
    judge: CellJudge | None
    ship: ShipModel
    calibration: Calibration | None = None


def box_models(
    pack: Pack,
    config: VisionConfig,
    lessons: Lessons | None = None,
    progress: Callable[[int, int], None] | None = None,
    cache: Path | None = None,
) -> BoxModels:
    """The box's models, loaded from the cache directory (`cache`, by default
    vision.box.cache's) or learnt now and kept there (`progress`: tables drawn of all,
    while the judge learns or the network is calibrated); the judge revised by this
    table's `lessons`, or with the cell network, their crops joining its calibration."""
    cache = cache or cache_dir()
    if config.read.recogniser == "net":
        sampled = [] if lessons is None else [c for c in lessons.cells if c.sampled]
        calibration = net_calibration(pack, config, cache, progress, sampled)
        return BoxModels(None, None, ship_model(pack, config, cache), calibration)
    tiles = learn_pack(pack, config.crops.px_per_mm, config.cells)
    judge = judge_for(pack, tiles, config, progress, lessons=lessons, cache=cache)
    return BoxModels(tiles, judge, ship_model(pack, config, cache))


def net_calibration(
    pack: Pack,
    config: VisionConfig,
    cache: Path,
    progress: Callable[[int, int], None] | None = None,
    lessons: Sequence[CellLesson] = (),
) -> Calibration:
    """The cell network's calibration of the box with the settings of `config.read`, from
    the cache directory or made now (vision.cellnet.calibrate.calibration_for), `lessons`
    (a fair sample of the table's cells) joining it."""
    net = cell_net()
    box = box_pictures(net, pack)
    return calibration_for(
        net,
        box,
        pack,
        tables=config.read.net_tables,
        target=config.read.net_wrong_rate,
        confidence=config.read.net_confidence,
        cache=cache,
        progress=progress or terminal_progress(f"calibrating {pack.name}"),
        lessons=lesson_cells(lessons, pack, box, config) if lessons else None,
        fit_tables=config.read.net_fit_tables,
        ridge=config.read.net_metric_ridge,
        metric_steps=config.read.net_metric_steps,
    )


class TableReader:
    """Reads the tables of one box: the pack, its side, the config and the table's lessons,
    with what its reads share: the box's models (`models`: learnt or loaded at the first
    read that shows the kit, or by `prepare()`, from the cache directory `cache`), a thread
    pool and the cell worker processes. The pool and the workers start at the first read
    that wants them and stop at `close()` (or at the end of a `with` block)."""

    def __init__(
        self,
        pack: Pack,
        *,
        side: str = "front",
        config: VisionConfig | None = None,
        lessons: Lessons | None = None,
        cache: Path | None = None,
    ) -> None:
        self.pack = pack
        self.side = side
        self.config = config or VisionConfig()
        self.lessons = lessons
        self.cache = cache
        self._models: BoxModels | None = None
        self._learning = threading.Lock()
        self._lock = threading.Lock()
        self._threads: ThreadPoolExecutor | None = None
        self._workers: CellWorkers | None = None
        self._workers_started = False
        self._closed = False

    def __enter__(self) -> TableReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def prepare(self, progress: Callable[[int, int], None] | None = None) -> BoxModels:
        """Learn (or load) the box's models now rather than at the first read (`progress`:
        tables drawn of all, while the judge learns)."""
        with self._learning:
            if self._models is None:
                self._models = box_models(
                    self.pack, self.config, self.lessons, progress, self.cache
                )
            return self._models

    @property
    def models(self) -> BoxModels:
        """The box's models (learnt or loaded at first use, then kept by this reader)."""
        return self._models or self.prepare()

    def read(self, image: Image) -> TableRead:
        """The table in one BGR (or grey) frame."""
        return self.read_view(image)[0]

    def read_view(self, image: Image) -> tuple[TableRead, TableView]:
        """`read` and the TableView it rests on (poses for the motion gate, timings)."""
        return read_table_view(
            image,
            self.pack,
            side=self.side,
            config=self.config,
            lessons=self.lessons,
            threads=self.threads,
            workers=self.workers,
            models=lambda: self.models,
        )

    @property
    def threads(self) -> ThreadPoolExecutor:
        """Threads beside the reading one: parts of the frame's markers, the ship."""
        with self._lock:
            self._check_open()
            if self._threads is None:
                self._threads = ThreadPoolExecutor(4, thread_name_prefix="table-reader")
            return self._threads

    @property
    def workers(self) -> CellWorkers | None:
        """The cell worker processes (vision.reader.cellpool), or None when this process
        reads every cell: one core, `ReadConfig.cell_workers` 0, or workers that failed."""
        with self._lock:
            self._check_open()
            if not self._workers_started:
                self._workers_started = True
                count = worker_count(self.config)
                if count and self.pack.root.is_dir():
                    self._workers = CellWorkers(self.pack, self.config, count)
            workers = self._workers
        return workers if workers is not None and workers.alive else None

    def close(self) -> None:
        """Stop the threads and the worker processes (a later read is refused)."""
        with self._lock:
            self._closed = True
            threads, self._threads = self._threads, None
            workers, self._workers = self._workers, None
        if threads is not None:
            threads.shutdown(wait=True)
        if workers is not None:
            workers.close()

    def _check_open(self) -> None:
        if self._closed:
            raise RuntimeError("this TableReader is closed")


def read_table_view(
    image: Image,
    pack: Pack,
    *,
    side: str = "front",
    config: VisionConfig | None = None,
    lessons: Lessons | None = None,
    threads: Executor | None = None,
    workers: CellWorkers | None = None,
    models: BoxModels | Callable[[], BoxModels] | None = None,
) -> tuple[TableRead, TableView]:
    """`read_table` and the TableView it rests on (poses for the motion gate, timings);
    `threads` look at the frame's markers and the ship beside this thread, and `workers`
    read parts of the cells (both TableReader's), when given; `models` are the box's, or
    what gives them (learnt or loaded here when not given). They are asked for once the
    frame shows the kit (a frame without it is refused before a new box is learnt), with
    every BLAS thread, before the read holds BLAS to one."""
    config = config or VisionConfig()
    layout = pack.catalogue.board(side)
    with one_blas_thread():
        image = check_frame(image, config)
        view = locate_table(
            image, pack.tile_mm, layout, config, boards=pack.boards.get(side), threads=threads
        )
    if models is None:
        box = box_models(pack, config, lessons)
    else:
        box = models() if callable(models) else models
    with one_blas_thread():
        return _read_located(image, view, pack, side, layout, config, box, threads, workers)


def _read_located(
    image: Image,
    view: TableView,
    pack: Pack,
    side: str,
    layout: BoardLayout,
    config: VisionConfig,
    models: BoxModels,
    threads: Executor | None,
    workers: CellWorkers | None,
) -> tuple[TableRead, TableView]:
    tile_mm = pack.tile_mm
    timings = dict(view.timings)
    warnings = list(view.warnings)
    colour: Image = (
        image if image.ndim == 3 else np.asarray(cv2.cvtColor(image, cv2.COLOR_GRAY2BGR), np.uint8)
    )

    # The ship needs only the display's pose: it is looked for beside the cells, once any
    # worker processes have their crops (it would slow their cutting).
    beside = threads if config.read.ship_beside_cells else None
    ship_wait: Callable[[], tuple[int | None, float]] | None = None

    def look_for_ship() -> None:
        nonlocal ship_wait
        if view.display is not None and beside is not None:
            ship_wait = look_for_ship_beside(
                colour, view.display, pack, config, models.ship, beside, workers
            )

    t0 = time.perf_counter()
    if config.read.recogniser == "net":
        look_for_ship()
        crops, refs, slots, hidden = _crops(colour, view, pack, side, config)
        cutting, waited = time.perf_counter() - t0, 0.0
        reads = net_reads(crops, refs, slots, pack, config, net_threshold(models), net_head(models))
        matches: list[CellMatch] = []
        cut = dict(zip(slots, crops, strict=True))
    else:
        slots, matches, hidden, cutting, waited, cut = _cut_and_read(
            colour,
            view,
            tile_model(models, pack, config),
            pack,
            side,
            config,
            look_for_ship,
            workers,
        )
        reads = table_reads(matches, pack, config, models=models)
    timings["crops"] = cutting
    timings["cells"] = time.perf_counter() - t0 - cutting
    timings["waiting"] = waited

    ship: int | None = None
    timings["ship"] = 0.0
    if view.display is not None:
        ship, timings["ship"] = (
            ship_wait()
            if ship_wait is not None
            else _timed_ship(colour, view.display, pack, config, models.ship)
        )
    found: dict[tuple[Any, int, int], CellRead] = dict(zip(slots, reads, strict=True))
    t0 = time.perf_counter()
    found.update(
        storage_against_table(
            colour,
            view.seats,
            found,
            layout,
            tile_mm,
            config,
            [m.corners for m in view.markers.values()],
        )
    )
    timings["storage"] = time.perf_counter() - t0

    table = assemble_table(view, found, ship, hidden, layout, warnings)
    final = TableView(
        view.markers,
        view.display,
        view.seats,
        tuple(warnings),
        view.shape,
        timings,
        dict(zip(slots, matches, strict=True)) if matches else {},
        cut,
        {area: hidden[area] for area in (DISPLAY, *sorted(view.seats)) if area in hidden},
    )
    return table, final


def assemble_table(
    view: TableView,
    found: Mapping[tuple[Any, int, int], CellRead],
    ship: int | None,
    hidden: Mapping[Any, list[str]],
    layout: BoardLayout,
    warnings: list[str],
) -> TableRead:
    """The TableRead of a located table from its cells' answers by slot (area, row, col; a
    seat's storage is (seat, -1, 0)): unread cells unknown, and `warnings` added to with
    what was not read (cells outside the picture, the display, the ship)."""
    for area, cells in hidden.items():
        what = ", ".join(cells)
        warnings.append(f"{area_name(area)}: not wholly in the picture, unknown: {what}")
    if view.display is None:
        display_grid = tuple(tuple(UNKNOWN for _ in range(4)) for _ in range(4))
        warnings.append("display: not located; its cells are unknown and the ship unread")
    else:
        display_grid = tuple(
            tuple(found.get((DISPLAY, r, c), UNKNOWN) for c in range(4)) for r in range(4)
        )
        if ship is None:
            warnings.append("display: the explorer ship is not seen clearly")
    seats: dict[int, SeatRead] = {}
    for seat in sorted(view.seats):
        grid = tuple(
            tuple(
                found.get((seat, r, c), UNKNOWN) if layout.playable((r, c)) else None
                for c in range(layout.cols)
            )
            for r in range(layout.rows)
        )
        seats[seat] = SeatRead(grid, found.get((seat, -1, 0), UNKNOWN))
    return TableRead(display_grid, ship, seats, tuple(warnings))


Slot = tuple[Any, int, int]  # (area, row, col); a seat's storage is (seat, -1, 0)


@dataclass(frozen=True, slots=True)
class CellPlace:
    """Where a cell's crop is cut: its area's pose, its centre and side (mm, in the area) and
    its empty-board reference (board cells)."""

    slot: Slot
    pose: AreaPose
    centre_mm: tuple[float, float]
    crop_mm: float
    ref: Image | None


def cell_places(
    shape: Sequence[int],
    view: TableView,
    pack: Pack,
    side: str,
    config: VisionConfig,
    areas: Collection[Any] | None = None,
) -> tuple[list[CellPlace], dict[Any, list[str]]]:
    """Every cell whose crop lies wholly in a frame of `shape` (vision.reader.areas'
    contract), by area; and per area, the cells not wholly in it. Of the given areas only
    (DISPLAY, seat numbers), if any."""
    layout = pack.catalogue.board(side)
    tile_mm = pack.tile_mm
    margin = config.crops.crop_margin_mm
    size = tile_crop_mm(tile_mm, margin)
    places: list[CellPlace] = []
    hidden: dict[Any, list[str]] = {}

    def add(
        pose: AreaPose,
        keys: list[Slot],
        centres: list[tuple[float, float]],
        crop_mm: float,
        cell_refs: list[Image | None],
    ) -> None:
        # A tile lies up to 4 mm off its cell centre: all of that must be in the picture.
        seen = crops_visible(shape, pose, centres, tile_mm + 8.0)
        for key, centre, ref, visible in zip(keys, centres, cell_refs, seen, strict=True):
            if visible:
                places.append(CellPlace(key, pose, centre, crop_mm, ref))
            else:
                hidden.setdefault(key[0], []).append(
                    "storage" if key[1] < 0 else f"({key[1]}, {key[2]})"
                )

    if view.display is not None and (areas is None or DISPLAY in areas):
        geo = kit.DisplayGeometry(tile_mm)
        cells = list(product(range(4), range(4)))
        add(
            view.display,
            [(DISPLAY, r, c) for r, c in cells],
            [geo.cell_centre(r, c) for r, c in cells],
            size,
            [None] * len(cells),
        )
    board_refs = _board_references(pack, side, layout, size, config.crops.px_per_mm)
    playable = layout.playable_cells
    for seat, pose in sorted(view.seats.items()):
        if areas is not None and seat not in areas:
            continue
        sgeo = kit.SeatGeometry(seat, layout.rows, layout.cols, tile_mm)
        add(
            pose,
            [(seat, r, c) for r, c in playable],
            [sgeo.cell_centre(r, c) for r, c in playable],
            size,
            [board_refs.get(cell) for cell in playable],
        )
        add(pose, [(seat, -1, 0)], [sgeo.storage_centre()], storage_size_mm(sgeo, margin), [None])
    return places, hidden


def cut_cells(colour: Image, places: Sequence[CellPlace], config: VisionConfig) -> list[Image]:
    """The crop of every place, in order: one warp for each run of places of one area and
    size (vision.reader.areas.cell_crops)."""
    ppm = config.crops.px_per_mm
    crops: list[Image] = []
    start = 0
    while start < len(places):
        first = places[start]
        end = start + 1
        while (
            end < len(places)
            and places[end].pose is first.pose
            and places[end].crop_mm == first.crop_mm
        ):
            end += 1
        centres = [p.centre_mm for p in places[start:end]]
        crops.extend(cell_crops(colour, first.pose, centres, first.crop_mm, ppm))
        start = end
    return crops


def _crops(
    colour: Image,
    view: TableView,
    pack: Pack,
    side: str,
    config: VisionConfig,
    areas: Collection[Any] | None = None,
) -> tuple[list[Image], list[Image | None], list[Slot], dict[Any, list[str]]]:
    """Every cell crop wholly in the picture (`cell_places`, `cut_cells`), its empty-board
    reference (board cells) and its slot; and per area, the cells not wholly in it. Of the
    given areas only (DISPLAY, seat numbers), if any."""
    places, hidden = cell_places(colour.shape, view, pack, side, config, areas)
    crops = cut_cells(colour, places, config)
    return crops, [p.ref for p in places], [p.slot for p in places], hidden


_REFS: dict[tuple[int, str, float, float], tuple[Image, dict[tuple[int, int], Image]]] = {}


def _board_references(
    pack: Pack, side: str, layout: BoardLayout, size_mm: float, ppm: float
) -> dict[tuple[int, int], Image]:
    """The empty board picture cut like each cell crop (made once per picture and scale)."""
    board = pack.boards.get(side)
    if board is None:
        return {}
    key = (id(board), side, size_mm, ppm)
    cached = _REFS.get(key)
    if cached is not None and cached[0] is board:
        return cached[1]
    geo = kit.SeatGeometry(1, layout.rows, layout.cols, pack.tile_mm)
    extent = (layout.cols * geo.pitch, layout.rows * geo.pitch)
    refs = {
        cell: picture_crop(board, extent, geo.cell_centre(*cell), size_mm, ppm)
        for cell in layout.playable_cells
    }
    if len(_REFS) > 8:
        _REFS.clear()
    _REFS[key] = (board, refs)
    return refs


def _cut_and_read(
    colour: Image,
    view: TableView,
    model: TileModel,
    pack: Pack,
    side: str,
    config: VisionConfig,
    meanwhile: Callable[[], None] = lambda: None,
    workers: CellWorkers | None = None,
) -> tuple[list[Slot], list[CellMatch], dict[Any, list[str]], float, float, dict[Slot, Image]]:
    """Every cell crop cut (_crops) and read by vision.reader.recognise with `model`, the
    pack's templates at the crops' scale: shared out with worker processes when there are
    cores for them (vision.reader.cellpool). `meanwhile` is called once the workers have
    their crops (or at once), to start work beside this process's reading. Returns the
    slots, their reads, the cells not wholly in the picture by area, the time spent cutting
    here, the time spent waiting for the workers once this process's own cells were read,
    and the crops by slot.

    With workers, the seats' crops are cut first and dealt out a cell at a time (each part
    then holds some of every seat: a seat under hands costs more than an empty one); this
    process keeps the display's (one light group) and reads them while the workers read."""
    areas: list[Any] = ([DISPLAY] if view.display is not None else []) + sorted(view.seats)
    if not areas:
        return [], [], {}, 0.0, 0.0, {}
    workers = workers if len(areas) > 1 else None
    start = time.perf_counter()
    if workers is None:
        meanwhile()
        crops, refs, slots, hidden = _crops(colour, view, pack, side, config)
        cutting = time.perf_counter() - start
        matches = read_part(model, (crops, refs, _light_groups(slots)))
        cut = dict(zip(slots, crops, strict=True))
        return slots, weighed(matches, slots, model.config), hidden, cutting, 0.0, cut
    seats = [area for area in areas if area != DISPLAY]
    crops, refs, slots, hidden = _crops(colour, view, pack, side, config, seats)
    cutting = time.perf_counter() - start
    display = 16 if view.display is not None else 0  # the display's 4 x 4 cells, cut here
    dealt = deal_seats(len(slots), display, workers.workers, config.read.cells_here_weight)
    parts = dealt[:1] + [idx for idx in dealt[1:] if idx]
    mine: list[Slot] = []
    cut = dict(zip(slots, crops, strict=True))

    def here() -> Part:
        nonlocal cutting
        meanwhile()
        begin = time.perf_counter()
        got = _crops(colour, view, pack, side, config, [DISPLAY]) if display else None
        cutting += time.perf_counter() - begin
        own = parts[0]
        if got is not None:
            hidden.update(got[3])
            mine.extend(got[2])
            cut.update(zip(got[2], got[0], strict=True))
        mine.extend(slots[i] for i in own)
        part_crops = ([] if got is None else got[0]) + [crops[i] for i in own]
        part_refs = ([] if got is None else got[1]) + [refs[i] for i in own]
        return part_crops, part_refs, _light_groups(mine)

    def theirs(idx: list[int]) -> Callable[[], Part]:
        return lambda: part_of(crops, refs, slots, idx)

    part_reads = workers.read(
        [here, *(theirs(idx) for idx in parts[1:])], lambda part: read_part(model, part)
    )
    out_slots = mine + [slots[i] for idx in parts[1:] for i in idx]
    matches = [match for got in part_reads for match in got]
    matches = weighed(matches, out_slots, model.config)
    return out_slots, matches, hidden, cutting, workers.waited, cut


def net_reads(
    crops: Sequence[Image],
    refs: Sequence[Image | None],
    slots: Sequence[Slot],
    pack: Pack,
    config: VisionConfig,
    threshold: float,
    head: Head | None = None,
) -> list[CellRead]:
    """Every crop named by the cell network (vision.cellnet) against the pack's pictures, by
    the box's `head` (the network's if None), or unknown where its answer is less sure than
    `threshold` (both the box's calibration's)."""

    if not crops:
        return []
    net = cell_net()
    box = box_pictures(net, pack)
    ppm = config.crops.px_per_mm
    kinds = [
        DISPLAY_CELL if slot[0] == DISPLAY else STORAGE_CELL if slot[1] < 0 else BOARD_CELL
        for slot in slots
    ]
    px = box.px
    squares = [net_crop(c, c.shape[0] / ppm, pack.tile_mm, px) for c in crops]
    boards = [None if r is None else _net_look(r, ppm, pack.tile_mm, px) for r in refs]
    p = net.probabilities(squares, kinds, boards, box, head)
    return [read for read, _sure in net.answers(p, box, threshold)]


_NET_LOOKS: dict[tuple[int, float, float, int], tuple[Image, Image]] = {}


def _net_look(ref: Image, ppm: float, tile_mm: float, px: int) -> Image:
    """A board cell's empty look (`_board_references`: the same image at every read) as the
    network's square, made once per look and geometry."""
    key = (id(ref), ppm, tile_mm, px)
    kept = _NET_LOOKS.get(key)
    if kept is not None and kept[0] is ref:
        return kept[1]
    square = net_crop(ref, ref.shape[0] / ppm, tile_mm, px)
    if len(_NET_LOOKS) > 256:
        _NET_LOOKS.clear()
    _NET_LOOKS[key] = (ref, square)
    return square


def net_threshold(models: BoxModels) -> float:
    """The cell network's threshold for the box (1.0, naming nothing surely, uncalibrated)."""
    return 1.0 if models.calibration is None else models.calibration.threshold


def net_head(models: BoxModels) -> Head | None:
    """The box's own head of the cell network (None: the network's)."""
    return None if models.calibration is None else models.calibration.head


_KINDS = {"display": DISPLAY_CELL, "board": BOARD_CELL, "storage": STORAGE_CELL}


def lesson_cells(
    lessons: Sequence[CellLesson], pack: Pack, box: BoxPictures, config: VisionConfig
) -> PackCells:
    """A table's labelled crops (vision.box.lessons) as the network reads cells (`net_reads`:
    the same crop and board look) with their truths, for its calibration. A lesson of a tile
    the pack has no picture of is left out."""
    index = {t: i for i, t in enumerate(box.tile_ids)}
    ppm = config.crops.px_per_mm
    size = tile_crop_mm(pack.tile_mm, config.crops.crop_margin_mm)
    crops, boards, kinds, labels, turns = [], [], [], [], []
    for item in lessons:
        if item.truth.tile is not None and item.truth.tile not in index:
            continue
        if item.kind == "board" and item.side not in pack.catalogue.boards:
            continue
        square = net_crop(item.crop, item.crop_mm, pack.tile_mm, box.px)
        look = None
        if item.kind == "board":
            layout = pack.catalogue.board(item.side)
            look = _board_references(pack, item.side, layout, size, ppm).get(item.cell)
        crops.append(square)
        # As `graded` reads the rendered cells: a board cell's look, or a blank one.
        boards.append(
            np.zeros_like(square) if look is None else _net_look(look, ppm, pack.tile_mm, box.px)
        )
        kinds.append(_KINDS[item.kind])
        labels.append(EMPTY_LABEL if item.truth.tile is None else index[item.truth.tile])
        turns.append(item.truth.rotation % 360)
    none = np.zeros((0, 1, 1, 3), np.uint8)
    return PackCells(
        name=pack.name,
        tile_ids=box.tile_ids,
        crops=np.stack(crops) if crops else none,
        kinds=np.asarray(kinds, np.int8),
        boards=np.stack(boards) if boards else none,
        tiles=np.asarray(labels, np.int16),
        rotations=np.asarray(turns, np.int16),
        pictures=np.zeros((0, 2 * box.px, 2 * box.px, 3), np.uint8),
        raw=(),
        same=box.same,
        tables=np.zeros(len(crops), np.int16),
        tile_mm=pack.tile_mm,
    )


def tile_model(models: BoxModels, pack: Pack, config: VisionConfig) -> TileModel:
    """The matcher's templates of the box: the models' own, or learnt now (models made for
    the cell network hold none)."""
    if models.tiles is not None:
        return models.tiles
    return learn_pack(pack, config.crops.px_per_mm, config.cells)


def weighed(
    matches: Sequence[CellMatch], slots: Sequence[Slot], config: CellConfig
) -> list[CellMatch]:
    """A whole table's cell matches (one per slot: (area, row, col)) once the board cells read
    empty are weighed against the table's (doubt_odd_light)."""
    return doubt_odd_light(matches, [slot[0] for slot in slots], config)


def table_reads(
    matches: Sequence[CellMatch],
    pack: Pack,
    config: VisionConfig,
    lessons: Lessons | None = None,
    models: BoxModels | None = None,
) -> list[CellRead]:
    """The cells' answers: the box's learned judge (of `models`, or the pack's revised by
    this table's `lessons`) weighs each match (vision.box.judge), or, with the judge turned
    off, the matcher's own answers stand."""
    if not matches:
        return []
    if models is not None:
        model, judge = tile_model(models, pack, config), models.judge
    else:
        model = learn_pack(pack, config.crops.px_per_mm, config.cells)
        judge = judge_for(pack, model, config, lessons=lessons)
    if judge is None:
        return [match.read for match in matches]
    return judge.decide(matches, model, pack.catalogue)


def storage_against_table(
    colour: Image,
    seats: Mapping[int, AreaPose],
    reads: Mapping[Slot, CellRead],
    layout: BoardLayout,
    tile_mm: float,
    config: VisionConfig,
    markers: Sequence[NDArray[np.float64]] = (),
) -> dict[Slot, CellRead]:
    """The storage slots whose read the table round them changes (vision.reader.storage): one read
    empty whose surroundings are far paler than the table's is unknown (a pale arm over the
    slot and all round it, taken for the storage card); one read unknown that shows the bare
    table is empty (no card under it: the cells' reading cannot tell). Every seat's square
    is cut (what of it is in the picture): the others' are what each slot is judged
    against. `markers`: the corners (image px) of every marker seen, left out of the
    squares with the seats' own."""
    cfg = config.storage
    slots = {seat: (seat, -1, 0) for seat in seats if (seat, -1, 0) in reads}
    empty = [seat for seat, slot in slots.items() if reads[slot].empty]
    doubtful = [seat for seat, slot in slots.items() if reads[slot].unknown]
    if not cfg.enabled or len(seats) < 2 or not (empty or doubtful):
        return {}
    side = square_mm(tile_mm, cfg)
    ppm = cfg.px_per_mm if doubtful else cfg.ring_px_per_mm  # finer only to judge one bare
    corners = np.concatenate(markers) if len(markers) else None
    squares = {}  # seat -> its square, what of it is in the picture, what it leaves out
    for seat, pose in seats.items():
        sgeo = kit.SeatGeometry(seat, layout.rows, layout.cols, tile_mm)
        centre = sgeo.storage_centre()
        seen = (
            None
            if crops_visible(colour.shape, pose, [centre], side)[0]
            else crop_in_picture(colour.shape, pose, centre, side, ppm)
        )
        near = None if corners is None else pose.unproject(corners).reshape(-1, 4, 2)
        squares[seat] = (
            cell_crop(colour, pose, centre, side, ppm),
            seen,
            kept_out(sgeo, cfg, near),
        )

    out: dict[Slot, CellRead] = {}
    if empty:
        chromas = {
            seat: ring_chroma(square, tile_mm, kept, cfg, ppm, seen)
            for seat, (square, seen, kept) in squares.items()
        }
        pale = pale_rings(chromas, empty, cfg)
        out.update({slots[seat]: UNKNOWN for seat in empty if seat in pale})
    if doubtful:
        surfaces = {
            seat: slot_surface(square, tile_mm, kept, cfg, seen)
            for seat, (square, seen, kept) in squares.items()
        }
        bare = bare_slots(surfaces, cfg)
        out.update({slots[seat]: EMPTY for seat in doubtful if seat in bare})
    return out


def _light_groups(slots: Sequence[Slot]) -> list[Hashable | None]:
    """The display's cells lie on one paper under one light: together they tell glare."""
    return [DISPLAY if slot[0] == DISPLAY else None for slot in slots]


def part_of(
    crops: Sequence[Image], refs: Sequence[Image | None], slots: Sequence[Slot], idx: Sequence[int]
) -> Part:
    """The crops of `idx` as a part to read (vision.reader.cellpool)."""
    return (
        [crops[i] for i in idx],
        [refs[i] for i in idx],
        _light_groups([slots[i] for i in idx]),
    )


def look_for_ship_beside(
    image: Image,
    display: AreaPose,
    pack: Pack,
    config: VisionConfig,
    model: ShipModel,
    threads: Executor,
    workers: CellWorkers | None,
) -> Callable[[], tuple[int | None, float]]:
    """Start looking for the explorer ship beside this thread and give what waits for it
    (`_timed_ship`'s answer). In a cell worker when there are workers, after the parts
    already sent: a thread here would share this process's Python lock with the cells'
    reads, and slow them by about what it gains. Its area is cut in a thread (a warp,
    which leaves the lock free)."""
    if workers is None:
        return threads.submit(_timed_ship, image, display, pack, config, model).result

    def send() -> tuple[Future[tuple[int | None, float]] | None, tuple[Any, ...], float]:
        start = time.perf_counter()
        area = ship_area(image, display, config.ships)
        cutting = time.perf_counter() - start
        sent = (area, pack.ship, display_geometry(display), config.ships, model)
        return workers.submit(_timed_search, *sent), sent, cutting

    sending = threads.submit(send)

    def wait() -> tuple[int | None, float]:
        job, sent, cutting = sending.result()
        position, seconds = workers.result(job, _timed_search, *sent)
        return position, cutting + seconds

    return wait


def _timed_search(
    area: Image, ship: Image, geometry: kit.DisplayGeometry, cfg: ShipConfig, model: ShipModel
) -> tuple[int | None, float]:
    """`ship_in_area` and the seconds it took (what a cell worker is sent)."""
    start = time.perf_counter()
    return ship_in_area(area, ship, geometry, cfg, model), time.perf_counter() - start


def _timed_ship(
    image: Image, display: AreaPose, pack: Pack, config: VisionConfig, model: ShipModel
) -> tuple[int | None, float]:
    """The explorer ship's lane position (vision.reader.ship; None when not seen) and the seconds
    it took."""
    start = time.perf_counter()
    return read_ship_in_frame(image, display, pack, config, model), time.perf_counter() - start
