"""The table kit's geometry (docs/table-kit.md), in millimetres on the table plane.

This is the one source of the kit's layout: the printable kit, the synthetic renderer and the
recogniser all read it from here. Every area (the display, each seat) has its own frame: x to
its east, y to its south, origin at its centre.
"""

from __future__ import annotations

from dataclasses import dataclass

Point = tuple[float, float]

MARKER_DICT = "DICT_4X4_50"
MARKER_MM = 30.0
MARKER_MARGIN_MM = 5.0
LANE_MM = 35.0
DISPLAY_GAP_MM = 4.0
BOARD_GAP_MM = 2.0
BOARD_MARKER_OFFSET_MM = 4.0
STORAGE_OFFSET_MM = 10.0
#: The display mat's only printing besides its markers: thin light-grey outlines.
MAT_OUTLINE_MM = 0.3
MAT_OUTLINE_GREY = 185
#: The storage card (printed with the kit, laid under a seat's storage slot): white, this much
#: wider than the slot each way, the slot's square outlined this thick in this grey.
STORAGE_CARD_MARGIN_MM = 6.0
STORAGE_OUTLINE_MM = 0.6
STORAGE_OUTLINE_GREY = 150
SEATS = (1, 2, 3, 4, 5)
SHIP_POSITIONS = 16
#: The camera (docs/table-kit.md): height above the table, tilt off vertical, least resolution.
CAMERA_HEIGHT_MM = (600.0, 1600.0)
CAMERA_TILT_MAX_DEG = 25.0
MIN_PX_PER_MM = 1.5


def marker_corners(centre: Point, side: float = MARKER_MM) -> tuple[Point, Point, Point, Point]:
    """A marker's corners in its area frame, in OpenCV's order: NW, NE, SE, SW."""
    x, y = centre
    h = side / 2
    return ((x - h, y - h), (x + h, y - h), (x + h, y + h), (x - h, y + h))


@dataclass(frozen=True, slots=True)
class DisplayGeometry:
    """The display mat: 4x4 cells, the ship lane around them and markers 0-3."""

    tile_mm: float = 45.0

    @property
    def pitch(self) -> float:
        return self.tile_mm + DISPLAY_GAP_MM

    @property
    def lane_inner(self) -> float:
        """Distance from the centre to the inner edge of the ship lane."""
        return 2 * self.pitch

    @property
    def half_extent(self) -> float:
        """Half the side of the mat's active area (grid plus lane)."""
        return 2 * self.pitch + LANE_MM

    def cell_centre(self, row: int, col: int) -> Point:
        return ((col - 1.5) * self.pitch, (row - 1.5) * self.pitch)

    @property
    def marker_ids(self) -> tuple[int, int, int, int]:
        return (0, 1, 2, 3)

    def marker_centres(self) -> dict[int, Point]:
        """Marker id → centre: 0 north-west, 1 north-east, 2 south-east, 3 south-west."""
        d = 2 * self.pitch + LANE_MM / 2
        return {0: (-d, -d), 1: (d, -d), 2: (d, d), 3: (-d, d)}

    def ship_centre(self, position: int) -> Point:
        """Centre of the explorer ship at position 0..15, clockwise from the north-west."""
        if not 0 <= position < SHIP_POSITIONS:
            raise ValueError(f"ship position must be 0..15, not {position}")
        side, k = divmod(position, 4)
        lane = 2 * self.pitch + LANE_MM / 2
        along = (k - 1.5) * self.pitch
        if side == 0:  # north, west to east
            return (along, -lane)
        if side == 1:  # east, north to south
            return (lane, along)
        if side == 2:  # south, east to west
            return (-along, lane)
        return (-lane, -along)  # west, south to north


@dataclass(frozen=True, slots=True)
class SeatGeometry:
    """One seat's player board: an R x C grid, markers 4s..4s+3 and the storage slot."""

    seat: int
    rows: int = 4
    cols: int = 4
    tile_mm: float = 45.0

    def __post_init__(self) -> None:
        if self.seat not in SEATS:
            raise ValueError(f"seat must be 1..5, not {self.seat}")

    @property
    def pitch(self) -> float:
        return self.tile_mm + BOARD_GAP_MM

    @property
    def marker_ids(self) -> tuple[int, int, int, int]:
        s = 4 * self.seat
        return (s, s + 1, s + 2, s + 3)

    def cell_centre(self, row: int, col: int) -> Point:
        return (
            (col - (self.cols - 1) / 2) * self.pitch,
            (row - (self.rows - 1) / 2) * self.pitch,
        )

    def marker_centres(self) -> dict[int, Point]:
        """Marker id → centre, just outside the grid's corners (NW, NE, SE, SW)."""
        dx = self.cols * self.pitch / 2 + MARKER_MM / 2 + BOARD_MARKER_OFFSET_MM
        dy = self.rows * self.pitch / 2 + MARKER_MM / 2 + BOARD_MARKER_OFFSET_MM
        a, b, c, d = self.marker_ids
        return {a: (-dx, -dy), b: (dx, -dy), c: (dx, dy), d: (-dx, dy)}

    def storage_centre(self) -> Point:
        """Centre of the storage slot, west of the bottom row."""
        return (
            -(self.cols / 2 + 1) * self.pitch - STORAGE_OFFSET_MM,
            (self.rows / 2 - 0.5) * self.pitch,
        )
