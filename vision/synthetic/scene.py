"""What lies on a table, as plain data: the exact truth a synthetic frame is rendered from.

Frames (docs/table-kit.md): every area (the display, each seat) has x to its east, y to its south,
origin at its centre, in millimetres. The table has a frame of its own, laid out the same way;
an area sits on the table at `origin_mm` with its north turned `facing_deg` clockwise from the
table's north (0: the area's north is the table's north; 180: upside down).

A tile's `rotation` is the clockwise angle that turns its upright picture into what is seen in
its area's frame; `offset_mm` and `turn_deg` are how far it lies off its cell's centre and
off square. Stickers (markers) may sit off their nominal place too (`stickers`).

Clutter (hands, cups, wooden shells, player ships) is part of the scene: it lies on the table
whatever the light. `random_scene` draws a plausible mid-game table; `add_clutter` adds
clutter to any scene.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Literal

import numpy as np

from companion.catalogue import BoardLayout, Catalogue
from companion.reading import EMPTY, CellRead, SeatRead, TableRead
from companion.tiles import ROTATIONS, Kind
from vision import kit
from vision.synthetic import render_config as cfg

Point = tuple[float, float]
BGR = tuple[int, int, int]
#: "display" or a seat number.
Area = str | int
#: (area, row, col); a seat's storage slot is (seat, STORAGE_ROW, 0).
CellKey = tuple[Area, int, int]
STORAGE_ROW = -1
DISPLAY = "display"
Difficulty = Literal["clean", "easy", "hard"]
DIFFICULTIES: tuple[Difficulty, ...] = ("clean", "easy", "hard")
CLUTTER_KINDS = ("hand", "cup", "shell", "player_ship")
TABLE_TOPS = ("wood", "cloth")


@dataclass(frozen=True, slots=True)
class PlacedTile:
    """A tile lying in a cell: its type, rotation and how far it lies off the cell's centre."""

    tile_id: str
    rotation: int = 0
    offset_mm: Point = (0.0, 0.0)
    turn_deg: float = 0.0

    def __post_init__(self) -> None:
        if self.rotation not in ROTATIONS:
            raise ValueError(f"rotation must be 0, 90, 180 or 270, not {self.rotation!r}")

    def read(self) -> CellRead:
        """What a perfect recogniser says about this tile."""
        return CellRead(self.tile_id, self.rotation, 1.0)


@dataclass(frozen=True, slots=True)
class Sticker:
    """How far a marker sticker sits off its nominal place, in its area's frame."""

    offset_mm: Point = (0.0, 0.0)
    turn_deg: float = 0.0


Grid = tuple[tuple[PlacedTile | None, ...], ...]


@dataclass(frozen=True, slots=True)
class SeatScene:
    """One seat's board on the table. `cells` has rows from seat north; None is an empty cell."""

    seat: int
    side: str = "front"
    cells: Grid = ()
    storage: PlacedTile | None = None
    origin_mm: Point = (0.0, 0.0)
    facing_deg: float = 0.0

    def __post_init__(self) -> None:
        if self.seat not in kit.SEATS:
            raise ValueError(f"seat must be 1..5, not {self.seat}")


@dataclass(frozen=True, slots=True)
class Clutter:
    """Something on the table that is not part of the game's state (table frame, mm).

    kind: "hand" (with its arm reaching in from `reach_from_mm`), "cup", "shell" (a wooden
    shell) or "player_ship" (a player's ship standing on a tile).
    """

    kind: str
    at_mm: Point
    size_mm: float
    angle_deg: float = 0.0
    colour: BGR = (128, 128, 128)
    reach_from_mm: Point | None = None

    def __post_init__(self) -> None:
        if self.kind not in CLUTTER_KINDS:
            raise ValueError(f"clutter kind must be one of {', '.join(CLUTTER_KINDS)}")


def _frozen_map(stickers: Mapping[int, Sticker]) -> Mapping[int, Sticker]:
    return MappingProxyType(dict(stickers))


@dataclass(frozen=True)
class TableScene:
    """The whole table: the display (4 x 4, None = empty slot), the ship, the seats, clutter."""

    display: Grid
    ship: int | None
    seats: tuple[SeatScene, ...] = ()
    clutter: tuple[Clutter, ...] = ()
    display_origin_mm: Point = (0.0, 0.0)
    display_facing_deg: float = 0.0
    ship_offset_mm: Point = (0.0, 0.0)
    ship_turn_deg: float = 0.0
    stickers: Mapping[int, Sticker] = field(default_factory=dict)
    table_seed: int = 0
    # A white storage card (the kit's) under each seat's storage slot; else the bare table.
    storage_cards: bool = True
    # The table top: "wood" (planks with grain) or "cloth" (one colour, a faint weave).
    table_top: str = "wood"

    def __post_init__(self) -> None:
        if len(self.display) != 4 or any(len(row) != 4 for row in self.display):
            raise ValueError("the display is 4 rows of 4 cells")
        if self.ship is not None and not 0 <= self.ship < kit.SHIP_POSITIONS:
            raise ValueError(f"ship position must be 0..15 or None, not {self.ship}")
        if self.table_top not in TABLE_TOPS:
            raise ValueError(f"table_top must be one of {', '.join(TABLE_TOPS)}")
        numbers = [s.seat for s in self.seats]
        if len(set(numbers)) != len(numbers):
            raise ValueError("a seat appears twice")
        object.__setattr__(self, "stickers", _frozen_map(self.stickers))

    def seat(self, number: int) -> SeatScene:
        for s in self.seats:
            if s.seat == number:
                return s
        raise KeyError(f"no seat {number} at this table")

    def sticker(self, marker_id: int) -> Sticker:
        """The sticker's misplacement (none when the scene does not say)."""
        return self.stickers.get(marker_id, Sticker())

    def truth(self, catalogue: Catalogue) -> TableRead:
        """What a perfect recogniser reads: every tile with confidence 1, empty cells empty."""
        display = tuple(
            tuple(EMPTY if t is None else t.read() for t in row) for row in self.display
        )
        seats: dict[int, SeatRead] = {}
        for s in self.seats:
            layout = catalogue.board(s.side)
            check_seat_cells(s, layout)
            cells = tuple(
                tuple(
                    None
                    if not layout.playable((r, c))
                    else (EMPTY if s.cells[r][c] is None else s.cells[r][c].read())  # type: ignore[union-attr]
                    for c in range(layout.cols)
                )
                for r in range(layout.rows)
            )
            storage = EMPTY if s.storage is None else s.storage.read()
            seats[s.seat] = SeatRead(cells, storage)
        return TableRead(display, self.ship, seats)

    def placed(self) -> list[tuple[CellKey, PlacedTile | None]]:
        """Every cell of the display, the boards and the storage slots, with what lies there."""
        out: list[tuple[CellKey, PlacedTile | None]] = []
        for r, row in enumerate(self.display):
            for c, tile in enumerate(row):
                out.append(((DISPLAY, r, c), tile))
        for s in self.seats:
            for r, row in enumerate(s.cells):
                for c, tile in enumerate(row):
                    out.append(((s.seat, r, c), tile))
            out.append(((s.seat, STORAGE_ROW, 0), s.storage))
        return out


def check_seat_cells(seat: SeatScene, layout: BoardLayout) -> None:
    """A seat's cells must match its board side's size, with nothing on non-playable cells."""
    if len(seat.cells) != layout.rows or any(len(row) != layout.cols for row in seat.cells):
        raise ValueError(
            f"seat {seat.seat}'s {layout.side} board has {layout.rows} rows of {layout.cols} cells"
        )
    for r, row in enumerate(seat.cells):
        for c, tile in enumerate(row):
            if tile is not None and not layout.playable((r, c)):
                raise ValueError(f"seat {seat.seat}: cell ({r}, {c}) is not playable")


def empty_seat(seat: int, layout: BoardLayout, **kwargs: object) -> SeatScene:
    """A seat with an empty board of `layout`."""
    cells: Grid = tuple((None,) * layout.cols for _ in range(layout.rows))
    return SeatScene(seat, layout.side, cells, **kwargs)  # type: ignore[arg-type]


def empty_display() -> Grid:
    return tuple((None,) * 4 for _ in range(4))


# --- where things lie on the table ------------------------------------------------------------


def display_reach_mm(tile_mm: float) -> float:
    """Radius around the display's centre that holds its active area and stickers."""
    geo = kit.DisplayGeometry(tile_mm)
    corner = max(abs(v) for v in next(iter(geo.marker_centres().values())))
    sticker_half = kit.MARKER_MM / 2 + cfg.STICKER_WHITE_MM
    return math.sqrt(2) * (corner + sticker_half) + cfg.STICKER_OFFSET_MAX_MM


def seat_extent(layout: BoardLayout, tile_mm: float) -> tuple[float, float, float, float]:
    """A seat's footprint in its own frame: (west, east, north, south) bounds, mm."""
    geo = kit.SeatGeometry(1, layout.rows, layout.cols, tile_mm)
    hx = layout.cols * geo.pitch / 2 + kit.BOARD_MARKER_OFFSET_MM + kit.MARKER_MM
    hy = layout.rows * geo.pitch / 2 + kit.BOARD_MARKER_OFFSET_MM + kit.MARKER_MM
    hx += cfg.STICKER_WHITE_MM
    hy += cfg.STICKER_WHITE_MM
    storage_x = geo.storage_centre()[0] - geo.pitch / 2 - kit.STORAGE_CARD_MARGIN_MM
    return (min(-hx, storage_x), hx, -hy, hy)


def turn(point: Point, degrees: float) -> Point:
    """Turn a point clockwise (as seen from above, y south) about the origin."""
    a = math.radians(degrees)
    x, y = point
    return (x * math.cos(a) - y * math.sin(a), x * math.sin(a) + y * math.cos(a))


def area_to_table(point: Point, origin: Point, facing_deg: float) -> Point:
    """A point of an area's frame on the table."""
    x, y = turn(point, facing_deg)
    return (x + origin[0], y + origin[1])


#: Layout slots: which slots a template for n seats uses.
_TEMPLATES: dict[int, tuple[tuple[str, ...], ...]] = {
    1: (("S",), ("N",), ("W",), ("E",)),
    2: (("W", "E"), ("S", "W"), ("N", "E"), ("S", "E")),
    3: (("S", "W", "E"), ("N", "W", "E")),
    4: (("W1", "W2", "E1", "E2"), ("N", "W1", "W2", "E"), ("S", "W", "E1", "E2")),
    5: (("N", "W1", "W2", "E1", "E2"), ("S", "W1", "W2", "E1", "E2")),
}


def seat_slots(
    n_seats: int, layout: BoardLayout, tile_mm: float, template: int = 0
) -> list[tuple[Point, float]]:
    """(origin, facing) of `n_seats` seats around a display at the table's centre.

    Seats face the display (their north points at it) from the north, south, west and east;
    two seats may share the west or the east side. The layouts keep the table wider than deep,
    like a 16:9 frame.
    """
    if n_seats not in _TEMPLATES:
        raise ValueError(f"a table has 1 to 5 seats, not {n_seats}")
    west, east, north, south = seat_extent(layout, tile_mm)
    depth = south - north
    near = display_reach_mm(tile_mm) + cfg.SEAT_GAP_MM
    centre = near + depth / 2  # from the display's centre to a facing seat's origin
    gap = cfg.SEAT_GAP_MM / 2
    slots: dict[str, tuple[Point, float]] = {
        "N": ((0.0, -centre), 180.0),
        "S": ((0.0, centre), 0.0),
        "W": ((-centre, 0.0), 90.0),
        "E": ((centre, 0.0), 270.0),
        # Facing east, a seat's west..east spans table y; facing west, it spans -y.
        "W1": ((-centre, -gap - east), 90.0),
        "W2": ((-centre, gap - west), 90.0),
        "E1": ((centre, -gap + west), 270.0),
        "E2": ((centre, gap + east), 270.0),
    }
    names = _TEMPLATES[n_seats][template % len(_TEMPLATES[n_seats])]
    return [slots[name] for name in names]


# --- random scenes -------------------------------------------------------------------------


def _in_disc(rng: np.random.Generator, radius: float) -> Point:
    r = radius * math.sqrt(float(rng.random()))
    a = float(rng.uniform(0, 2 * math.pi))
    return (r * math.cos(a), r * math.sin(a))


def _placed(
    tile_id: str, rotation: int, rng: np.random.Generator, difficulty: Difficulty
) -> PlacedTile:
    if difficulty == "clean":
        return PlacedTile(tile_id, rotation)
    share = 0.5 if difficulty == "easy" else 1.0
    offset = _in_disc(rng, cfg.TILE_OFFSET_MAX_MM * share)
    turn_deg = float(rng.uniform(-1, 1)) * cfg.TILE_TURN_MAX_DEG * share
    return PlacedTile(tile_id, rotation, offset, turn_deg)


def _half_width(tile: PlacedTile, tile_mm: float) -> float:
    """Half the width of a tile turned by its small turn (its rotation does not matter)."""
    a = math.radians(tile.turn_deg)
    return tile_mm / 2 * (abs(math.cos(a)) + abs(math.sin(a)))


def _within(x: float, y: float, radius: float) -> Point:
    """(x, y) pulled back into the disc of `radius` when it lies outside."""
    length = math.hypot(x, y)
    if length <= radius:
        return (x, y)
    return (x * radius / length, y * radius / length)


def _keep_apart(grid: list[list[PlacedTile | None]], pitch: float, tile_mm: float) -> None:
    """Nudge neighbouring tiles' offsets so no two tiles overlap (tiles push each other)."""
    rows, cols = len(grid), len(grid[0]) if grid else 0
    limit = cfg.TILE_OFFSET_MAX_MM
    for _ in range(6):
        moved = False
        for r in range(rows):
            for c in range(cols):
                a = grid[r][c]
                if a is None:
                    continue
                for dr, dc, axis in ((0, 1, 0), (1, 0, 1)):
                    if r + dr >= rows or c + dc >= cols:
                        continue
                    b = grid[r + dr][c + dc]
                    if b is None:
                        continue
                    reach = _half_width(a, tile_mm) + _half_width(b, tile_mm) + 0.3
                    room = pitch + b.offset_mm[axis] - a.offset_mm[axis]
                    if room >= reach:
                        continue
                    push = (reach - room) / 2
                    oa, ob = list(a.offset_mm), list(b.offset_mm)
                    oa[axis] -= push
                    ob[axis] += push
                    a = replace(a, offset_mm=_within(oa[0], oa[1], limit))
                    b = replace(b, offset_mm=_within(ob[0], ob[1], limit))
                    grid[r][c], grid[r + dr][c + dc] = a, b
                    moved = True
        if not moved:
            return


def random_scene(
    catalogue: Catalogue,
    rng: np.random.Generator,
    n_seats: int = 5,
    side: str = "front",
    difficulty: Difficulty = "easy",
) -> TableScene:
    """A plausible mid-game table drawn from the box's tiles.

    The display is full (late in a hard game a slot or two may be empty), boards are partly
    filled with palm tiles upright (palms point to their owner), other tiles at any rotation,
    some seats keep a tile in storage. Stickers sit up to 3 mm / 2° off; tiles up to 4 mm / 5°
    ("clean": exactly in place; "easy": half that). "hard" adds clutter (add_clutter).
    """
    if difficulty not in DIFFICULTIES:
        raise ValueError(f"difficulty must be one of {', '.join(DIFFICULTIES)}")
    layout = catalogue.board(side)
    if side == "atoll" and n_seats > 4:
        raise ValueError("the atoll side is for at most 4 players")
    tile_mm = catalogue.tile_mm
    bag = list(catalogue.tiles())
    rng.shuffle(bag)
    volcano = {t.id for t in catalogue if t.meaning.kind is Kind.VOLCANO}
    palms = {t.id for t in catalogue if t.meaning.palms > 0}

    def any_rotation() -> int:
        return int(rng.choice(ROTATIONS))

    # The display: 16 tiles from the stack (volcanoes included); late in a game, gaps.
    display_ids = bag[:16]
    bag = bag[16:]
    holes = int(rng.integers(0, 3)) if difficulty == "hard" and rng.random() < 0.2 else 0
    hole_at = set(rng.choice(16, size=holes, replace=False).tolist()) if holes else set()
    display_grid = [
        [
            None
            if r * 4 + c in hole_at
            else _placed(display_ids[r * 4 + c], any_rotation(), rng, difficulty)
            for c in range(4)
        ]
        for r in range(4)
    ]
    _keep_apart(display_grid, kit.DisplayGeometry(tile_mm).pitch, tile_mm)
    display = tuple(tuple(row) for row in display_grid)
    board_bag = [t for t in bag if t not in volcano]

    numbers = sorted(rng.choice(kit.SEATS, size=n_seats, replace=False).tolist())
    rng.shuffle(numbers)
    template = int(rng.integers(0, len(_TEMPLATES[n_seats])))
    slots = seat_slots(n_seats, layout, tile_mm, template)
    flip = 180.0 if rng.random() < 0.5 else 0.0
    seats: list[SeatScene] = []
    playable = list(layout.playable_cells)
    for number, (origin, facing) in zip(numbers, slots, strict=True):
        nudge = (0.0, 0.0) if difficulty == "clean" else _in_disc(rng, cfg.SEAT_NUDGE_MM)
        origin = turn((origin[0] + nudge[0], origin[1] + nudge[1]), flip)
        facing = (facing + flip + float(rng.uniform(-1, 1)) * cfg.SEAT_NUDGE_DEG) % 360
        filled = int(rng.integers(0, len(playable)))
        chosen = {playable[i] for i in rng.choice(len(playable), size=filled, replace=False)}
        cells: list[list[PlacedTile | None]] = [[None] * layout.cols for _ in range(layout.rows)]
        for r, c in sorted(chosen):
            tile_id = board_bag.pop()
            rotation = 0 if tile_id in palms else any_rotation()
            cells[r][c] = _placed(tile_id, rotation, rng, difficulty)
        _keep_apart(
            cells, kit.SeatGeometry(number, layout.rows, layout.cols, tile_mm).pitch, tile_mm
        )
        storage = None
        if rng.random() < 0.4:
            tile_id = board_bag.pop()
            storage = _placed(tile_id, 0 if tile_id in palms else any_rotation(), rng, difficulty)
        seats.append(
            SeatScene(number, side, tuple(tuple(row) for row in cells), storage, origin, facing)
        )

    stickers: dict[int, Sticker] = {}
    marker_ids = [0, 1, 2, 3] + [4 * n + k for n in numbers for k in range(4)]
    for marker_id in marker_ids:
        offset = _in_disc(rng, cfg.STICKER_OFFSET_MAX_MM)
        stickers[marker_id] = Sticker(offset, float(rng.uniform(-1, 1)) * cfg.STICKER_TURN_MAX_DEG)
    ship_share = 0.5 if difficulty != "hard" else 1.0
    scene = TableScene(
        display=display,
        ship=int(rng.integers(0, kit.SHIP_POSITIONS)),
        seats=tuple(seats),
        display_facing_deg=float(rng.uniform(0, 360)),
        ship_offset_mm=_in_disc(rng, cfg.SHIP_OFFSET_MAX_MM * ship_share),
        ship_turn_deg=float(rng.uniform(-1, 1)) * cfg.SHIP_TURN_MAX_DEG * ship_share,
        stickers=stickers,
        table_seed=int(rng.integers(0, 2**31)),
    )
    if difficulty == "hard":
        scene = add_clutter(scene, catalogue, rng)
    return scene


def _seat_cell_on_table(
    seat: SeatScene, cell: tuple[int, int], layout: BoardLayout, tile_mm: float
) -> Point:
    geo = kit.SeatGeometry(seat.seat, layout.rows, layout.cols, tile_mm)
    return area_to_table(geo.cell_centre(*cell), seat.origin_mm, seat.facing_deg)


def _cup(scene: TableScene, catalogue: Catalogue, rng: np.random.Generator) -> Clutter:
    """A cup beside a seat's board (or anywhere on the table without seats)."""
    tile_mm = catalogue.tile_mm
    base = scene.seats[int(rng.integers(len(scene.seats)))] if scene.seats else None
    if base is not None:
        layout = catalogue.board(base.side)
        west, east, _north, south = seat_extent(layout, tile_mm)
        corner = (east + 30.0, south - 20.0) if rng.random() < 0.5 else (west - 20.0, south + 25.0)
        at = area_to_table(corner, base.origin_mm, base.facing_deg)
    else:
        at = turn((330.0, 0.0), float(rng.uniform(0, 360)))
    tint = int(rng.integers(150, 250))
    colour = (tint, tint, tint) if rng.random() < 0.5 else (60, 60, int(rng.integers(120, 200)))
    return Clutter("cup", at, float(rng.uniform(*cfg.CUP_DIAMETER_MM)), 0.0, colour)


def _shell(
    scene: TableScene,
    catalogue: Catalogue,
    rng: np.random.Generator,
    anywhere_cell: Callable[[], Point],
) -> Clutter:
    """A wooden shell below a seat's board, now and then on a tile of it, else on any cell."""
    tile_mm = catalogue.tile_mm
    if scene.seats and rng.random() < 0.8:
        s = scene.seats[int(rng.integers(len(scene.seats)))]
        layout = catalogue.board(s.side)
        west, east, north, south = seat_extent(layout, tile_mm)
        local = (float(rng.uniform(west, east)), south + float(rng.uniform(5, 30)))
        if rng.random() < 0.2:  # now and then a shell lies on a tile
            local = (
                float(rng.uniform(west + 60, east - 40)),
                float(rng.uniform(north + 40, south - 40)),
            )
        at = area_to_table(local, s.origin_mm, s.facing_deg)
    else:
        at = anywhere_cell()
    tone = int(rng.integers(0, 40))
    return Clutter(
        "shell",
        at,
        float(rng.uniform(*cfg.WOODEN_SHELL_MM)),
        float(rng.uniform(0, 360)),
        (110 + tone, 170 + tone, 215),
    )


def add_clutter(
    scene: TableScene,
    catalogue: Catalogue,
    rng: np.random.Generator,
    *,
    hands: int | None = None,
    cups: int | None = None,
    shells: int | None = None,
    player_ships: bool = True,
) -> TableScene:
    """The scene with clutter added: a reaching hand, cups, wooden shells, player ships.

    Counts default to a random busy table (often one hand, sometimes a cup, a few shells).
    A player's ship stands on one of the tiles of their board.
    """
    tile_mm = catalogue.tile_mm
    items: list[Clutter] = list(scene.clutter)
    if hands is None:
        hands = int(rng.choice([0, 1, 1, 2], p=[0.3, 0.35, 0.2, 0.15]))
    if cups is None:
        cups = int(rng.random() < 0.35)
    if shells is None:
        shells = int(rng.integers(0, 9))

    def anywhere_cell() -> Point:
        areas: list[Point] = []
        geo = kit.DisplayGeometry(tile_mm)
        for r in range(4):
            for c in range(4):
                areas.append(
                    area_to_table(
                        geo.cell_centre(r, c), scene.display_origin_mm, scene.display_facing_deg
                    )
                )
        for s in scene.seats:
            layout = catalogue.board(s.side)
            for r, c in layout.playable_cells:
                areas.append(_seat_cell_on_table(s, (r, c), layout, tile_mm))
        return areas[int(rng.integers(len(areas)))]

    for _ in range(hands):
        target = anywhere_cell()
        # The arm comes in from a player's side of the table: from beyond a seat, or the edge.
        if scene.seats:
            s = scene.seats[int(rng.integers(len(scene.seats)))]
            behind = area_to_table((float(rng.uniform(-80, 80)), 450.0), s.origin_mm, s.facing_deg)
        else:
            behind = turn((0.0, 700.0), float(rng.uniform(0, 360)))
        jitter = _in_disc(rng, 15.0)
        at = (target[0] + jitter[0], target[1] + jitter[1])
        items.append(_reaching_hand(at, behind, cfg.HAND_WIDTH_MM, rng))
    for _ in range(cups):
        items.append(_cup(scene, catalogue, rng))
    for _ in range(shells):
        items.append(_shell(scene, catalogue, rng, anywhere_cell))
    if player_ships:
        for s in scene.seats:
            layout = catalogue.board(s.side)
            taken = [(r, c) for r, c in layout.playable_cells if s.cells[r][c] is not None]
            if not taken or rng.random() < 0.2:
                continue
            r, c = taken[int(rng.integers(len(taken)))]
            at = _seat_cell_on_table(s, (r, c), layout, tile_mm)
            shift = _in_disc(rng, 8.0)
            items.append(
                Clutter(
                    "player_ship",
                    (at[0] + shift[0], at[1] + shift[1]),
                    float(rng.uniform(*cfg.PLAYER_SHIP_MM)),
                    float(rng.uniform(0, 360)),
                    cfg.PLAYER_BGR[(s.seat - 1) % len(cfg.PLAYER_BGR)],
                )
            )
    return replace(scene, clutter=tuple(items))


def hand_over_storage(
    scene: TableScene, catalogue: Catalogue, rng: np.random.Generator
) -> TableScene:
    """The scene with one more hand, over one seat's storage slot (anywhere within
    STORAGE_HAND_OFF_MM of its centre, each way), its arm from beyond that seat: the case
    where a slot may be taken for the table round it."""
    if not scene.seats:
        return scene
    s = scene.seats[int(rng.integers(len(scene.seats)))]
    layout = catalogue.board(s.side)
    cx, cy = kit.SeatGeometry(s.seat, layout.rows, layout.cols, catalogue.tile_mm).storage_centre()
    off = rng.uniform(-cfg.STORAGE_HAND_OFF_MM, cfg.STORAGE_HAND_OFF_MM, 2)
    at = area_to_table((cx + float(off[0]), cy + float(off[1])), s.origin_mm, s.facing_deg)
    behind = area_to_table((float(rng.uniform(-300.0, 0.0)), 450.0), s.origin_mm, s.facing_deg)
    hand = _reaching_hand(at, behind, cfg.STORAGE_HAND_MM, rng)
    return replace(scene, clutter=(*scene.clutter, hand))


def _reaching_hand(
    at: Point, behind: Point, widths: tuple[float, float], rng: np.random.Generator
) -> Clutter:
    """A hand at `at`, its arm reaching in from `behind`: one of the renderer's skins, as
    wide as drawn from `widths` (the skin drawn first, then the width)."""
    angle = math.degrees(math.atan2(at[1] - behind[1], at[0] - behind[0]))
    skin = cfg.SKIN_BGR[int(rng.integers(len(cfg.SKIN_BGR)))]
    return Clutter("hand", at, float(rng.uniform(*widths)), angle, skin, behind)


def scene_points(scene: TableScene, catalogue: Catalogue) -> Sequence[Point]:
    """Corners of everything the camera must see (display mat, each seat), on the table."""
    tile_mm = catalogue.tile_mm
    geo = kit.DisplayGeometry(tile_mm)
    reach = geo.half_extent + cfg.STICKER_WHITE_MM
    points = [
        area_to_table((sx * reach, sy * reach), scene.display_origin_mm, scene.display_facing_deg)
        for sx, sy in ((-1, -1), (1, -1), (1, 1), (-1, 1))
    ]
    for s in scene.seats:
        west, east, north, south = seat_extent(catalogue.board(s.side), tile_mm)
        for corner in ((west, north), (east, north), (east, south), (west, south)):
            points.append(area_to_table(corner, s.origin_mm, s.facing_deg))
    return points


def keyed_cells(table: TableRead) -> Iterator[tuple[CellKey, CellRead | None]]:
    """Every cell of a read with its key: the display's, then each seat's board and storage."""
    for r, row in enumerate(table.display):
        for c, cell in enumerate(row):
            yield (DISPLAY, r, c), cell
    for seat, seat_read in table.seats.items():
        for r, row in enumerate(seat_read.cells):
            for c, cell in enumerate(row):
                yield (seat, r, c), cell
        yield (seat, STORAGE_ROW, 0), seat_read.storage


def hand_over_cell(
    scene: TableScene,
    catalogue: Catalogue,
    seat: int,
    cell: tuple[int, int],
    rng: np.random.Generator,
) -> TableScene:
    """The scene with one more hand, resting on `cell` of `seat`'s board, its arm from beyond
    that seat: a cell the camera cannot see."""
    s = next(x for x in scene.seats if x.seat == seat)
    layout = catalogue.board(s.side)
    at = _seat_cell_on_table(s, cell, layout, catalogue.tile_mm)
    behind = area_to_table((0.0, 450.0), s.origin_mm, s.facing_deg)
    hand = _reaching_hand(at, behind, cfg.HAND_WIDTH_MM, rng)
    return replace(scene, clutter=(*scene.clutter, hand))
