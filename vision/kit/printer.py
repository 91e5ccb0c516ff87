"""The printable table kit (docs/table-kit.md): the display mat, seat marker sheets, a set-up guide.

Every page is first laid out once as a list of simple drawing items in millimetres on the
paper (lines, filled polygons, text); the same list is then drawn into a PDF (fpdf2) and, where
a raster is wanted, into a 300 dpi PNG (OpenCV), so both always agree. All kit geometry comes
from vision.kit; this module only decides where on the paper things go.
"""

from __future__ import annotations

import math
import os
import shutil
import struct
import tempfile
import unicodedata
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

import cv2
import numpy as np
from fpdf import FPDF

from companion.catalogue import BoardLayout, default_boards
from companion.errors import CompanionError
from vision import kit
from vision.kit import DisplayGeometry, Point, SeatGeometry

# Paper and print settings (portrait, millimetres).
A3_MM: tuple[float, float] = (297.0, 420.0)
A4_MM: tuple[float, float] = (210.0, 297.0)
PRINT_DPI = 300
#: What most printers cannot print near the paper's edge.
PRINT_MARGIN_MM = 8.0
SCALE_BAR_MM = 100.0
SCALE_BAR_HEIGHT_MM = 2.5
#: Space above the mat's active area for the title and the north arrow.
MAT_HEADER_MM = 40.0
#: Seat sheets: white kept beside each sticker's marker (≥ the kit's quiet zone), and the
#: extra strip on its north side that carries the "faces away from the player" note.
STICKER_WHITE_MM = kit.MARKER_MARGIN_MM + 1.0
STICKER_NOTE_MM = 7.0
CUT_DASH_MM = 2.0
HELVETICA_CAP_EM = 0.718
MM_PER_POINT = 25.4 / 72
#: Smallest tile side the kit prints (the pack format's lower limit).
MIN_TILE_MM = 20.0

Grey = int


class KitError(CompanionError):
    """The kit cannot be printed as asked (a tile size that does not fit the paper)."""


# --- drawing items -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Line:
    """A straight line, optionally dashed (dash = length of each dash and gap)."""

    a: Point
    b: Point
    width: float
    grey: Grey = 0
    dash: float = 0.0


@dataclass(frozen=True, slots=True)
class Fill:
    """A filled polygon."""

    points: tuple[Point, ...]
    grey: Grey = 0


@dataclass(frozen=True, slots=True)
class Text:
    """One line of text; `at` is the anchor on the baseline, `size` the capital height in mm."""

    at: Point
    text: str
    size: float
    align: str = "L"
    bold: bool = False
    grey: Grey = 0


Item = Line | Fill | Text


@dataclass
class Page:
    """One sheet of paper and what is printed on it (millimetres, origin top-left)."""

    name: str
    size: tuple[float, float]
    items: list[Item] = field(default_factory=list)

    def line(
        self, a: Point, b: Point, width: float = 0.3, grey: Grey = 0, dash: float = 0.0
    ) -> None:
        self.items.append(Line(a, b, width, grey, dash))

    def rect(self, x: float, y: float, w: float, h: float, grey: Grey = 0) -> None:
        """A filled axis-aligned rectangle with its top-left corner at (x, y)."""
        self.items.append(Fill(((x, y), (x + w, y), (x + w, y + h), (x, y + h)), grey))

    def outline(
        self,
        x: float,
        y: float,
        w: float,
        h: float,
        width: float = 0.3,
        grey: Grey = 0,
        dash: float = 0.0,
    ) -> None:
        corners = ((x, y), (x + w, y), (x + w, y + h), (x, y + h))
        for i in range(4):
            self.line(corners[i], corners[(i + 1) % 4], width, grey, dash)

    def text(
        self,
        at: Point,
        text: str,
        size: float = 3.0,
        align: str = "L",
        bold: bool = False,
        grey: Grey = 0,
    ) -> None:
        self.items.append(Text(at, text, size, align, bold, grey))

    def paragraph(
        self,
        x: float,
        y: float,
        width: float,
        text: str,
        size: float = 3.0,
        leading: float = 1.6,
        bold: bool = False,
    ) -> float:
        """Wrapped text from (x, y) (first baseline); returns the baseline after the last line."""
        for row in wrap(text, width, size, bold):
            self.text((x, y), row, size, bold=bold)
            y += size * leading
        return y

    def marker(self, marker_id: int, centre: Point, side: float = kit.MARKER_MM) -> None:
        """An ArUco marker, upright (its first corner north-west), as black rectangles."""
        bits = marker_bits(marker_id)
        n = bits.shape[0]
        cell = side / n
        x0 = centre[0] - side / 2
        y0 = centre[1] - side / 2
        for r in range(n):
            c = 0
            while c < n:
                if bits[r, c]:
                    start = c
                    while c < n and bits[r, c]:
                        c += 1
                    self.rect(x0 + start * cell, y0 + r * cell, (c - start) * cell, cell)
                else:
                    c += 1

    def arrow_up(self, tip: Point, length: float, grey: Grey = 0) -> None:
        """A filled arrow pointing to the top of the page with its tip at `tip`."""
        x, y = tip
        head = min(length * 0.55, length)
        w = length * 0.45
        self.items.append(Fill(((x, y), (x + w / 2, y + head), (x - w / 2, y + head)), grey))
        self.rect(x - w / 7, y + head - 0.01, w / 3.5, length - head, grey)


@cache
def _measure() -> FPDF:
    pdf = FPDF(unit="mm")
    pdf.add_page()
    return pdf


def text_width(text: str, size: float, bold: bool = False) -> float:
    """Width in mm of one line in Helvetica with capital height `size` mm."""
    pdf = _measure()
    pdf.set_font("Helvetica", "B" if bold else "", size=_points(size))
    return float(pdf.get_string_width(_pdf_text(text)))


def wrap(text: str, width: float, size: float, bold: bool = False) -> list[str]:
    """Break `text` into lines no wider than `width` mm."""
    rows: list[str] = []
    for word in text.split():
        if rows and text_width(f"{rows[-1]} {word}", size, bold) <= width:
            rows[-1] = f"{rows[-1]} {word}"
        else:
            rows.append(word)
    return rows


def _points(cap_mm: float) -> float:
    """Helvetica's font size in points for a capital height in mm."""
    return cap_mm / HELVETICA_CAP_EM / MM_PER_POINT


def marker_bits(marker_id: int) -> np.ndarray:
    """The marker's modules including its black border: True where the paper is black."""
    dictionary = cv2.aruco.getPredefinedDictionary(getattr(cv2.aruco, kit.MARKER_DICT))
    modules = dictionary.markerSize + 2
    image = cv2.aruco.generateImageMarker(dictionary, marker_id, modules)
    return np.asarray(image < 128)


# --- the display mat ----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class MatLayout:
    """Where the display's frame sits on the A3 page, and where the scale bar is."""

    tile_mm: float
    origin: Point  # page position of the display frame's origin (the mat's centre)
    scale_bar: tuple[Point, Point]  # left and right end of the bar's centre line

    def to_page(self, p: Point) -> Point:
        return (self.origin[0] + p[0], self.origin[1] + p[1])


def _quiet_overhang(geo: DisplayGeometry) -> float:
    """How far the markers' white surround reaches beyond the active area (mm, ≥ 0)."""
    reach = max(abs(c[0]) for c in geo.marker_centres().values())
    reach += kit.MARKER_MM / 2 + kit.MARKER_MARGIN_MM
    return max(0.0, reach - geo.half_extent)


def _mat_width(tile_mm: float) -> float:
    geo = DisplayGeometry(tile_mm)
    return 2 * (geo.half_extent + _quiet_overhang(geo)) + 2 * PRINT_MARGIN_MM


def largest_tile_mm() -> float:
    """The largest tile side whose display mat still fits A3 with the printer's margins."""
    lo, hi = MIN_TILE_MM, 200.0
    for _ in range(40):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if _mat_width(mid) <= A3_MM[0] else (lo, mid)
    return math.floor(lo * 10) / 10


def check_tile_mm(tile_mm: float) -> None:
    """Refuse a tile side whose mat does not fit A3 (KitError, one sentence)."""
    top = largest_tile_mm()
    if math.isfinite(tile_mm) and MIN_TILE_MM <= tile_mm <= top:
        return
    if math.isfinite(tile_mm) and tile_mm > top:
        side = 2 * DisplayGeometry(tile_mm).half_extent
        raise KitError(
            f"tile_mm {tile_mm:g} gives a display mat of {side:g} mm, which does not fit A3 "
            f"paper: choose a tile side from {MIN_TILE_MM:g} to {top:g} mm"
        )
    raise KitError(
        f"tile_mm {tile_mm:g} is not a tile size the kit can print: choose a tile "
        f"side from {MIN_TILE_MM:g} to {top:g} mm"
    )


def mat_layout(tile_mm: float = 45.0) -> MatLayout:
    """The display mat's placement on A3 portrait."""
    check_tile_mm(tile_mm)
    geo = DisplayGeometry(tile_mm)
    quiet = _quiet_overhang(geo)
    origin = (A3_MM[0] / 2, PRINT_MARGIN_MM + MAT_HEADER_MM + quiet + geo.half_extent)
    bar_y = origin[1] + geo.half_extent + quiet + 14.0
    left = A3_MM[0] / 2 - SCALE_BAR_MM / 2
    return MatLayout(tile_mm, origin, ((left, bar_y), (left + SCALE_BAR_MM, bar_y)))


def _marker_boxes(markers: Sequence[Point]) -> list[tuple[float, float, float, float]]:
    """The markers' black squares as boxes (x0, y0, x1, y1)."""
    h = kit.MARKER_MM / 2
    return [(x - h, y - h, x + h, y + h) for x, y in markers]


def clip_axis_line(
    a: Point, b: Point, boxes: Sequence[tuple[float, float, float, float]], clearance: float
) -> list[tuple[Point, Point]]:
    """Pieces of the horizontal or vertical segment a-b at least `clearance` from every box."""
    horizontal = a[1] == b[1]
    fixed = a[1] if horizontal else a[0]
    lo, hi = sorted((a[0], b[0]) if horizontal else (a[1], b[1]))
    cuts: list[tuple[float, float]] = []
    for x0, y0, x1, y1 in boxes:
        along0, along1, across0, across1 = (x0, x1, y0, y1) if horizontal else (y0, y1, x0, x1)
        off = max(across0 - fixed, 0.0, fixed - across1)
        if off >= clearance:
            continue
        reach = math.sqrt(clearance**2 - off**2)
        cuts.append((along0 - reach, along1 + reach))
    pieces: list[tuple[float, float]] = [(lo, hi)]
    for c0, c1 in cuts:
        nxt: list[tuple[float, float]] = []
        for p0, p1 in pieces:
            if c1 <= p0 or c0 >= p1:
                nxt.append((p0, p1))
                continue
            if c0 > p0:
                nxt.append((p0, c0))
            if c1 < p1:
                nxt.append((c1, p1))
        pieces = nxt
    out = []
    for p0, p1 in pieces:
        if p1 - p0 > 0.05:
            out.append(((p0, fixed), (p1, fixed)) if horizontal else ((fixed, p0), (fixed, p1)))
    return out


def _scale_bar(page: Page, left: Point, note: bool = True) -> None:
    x, y = left
    page.rect(x, y - SCALE_BAR_HEIGHT_MM / 2, SCALE_BAR_MM, SCALE_BAR_HEIGHT_MM)
    width = 0.25
    top = y - SCALE_BAR_HEIGHT_MM / 2
    for k in range(11):
        tick = 3.0 if k % 5 == 0 else 1.8
        # The end ticks stay inside the bar's length so they never lengthen it.
        tx = min(max(x + 10 * k, x + width / 2), x + SCALE_BAR_MM - width / 2)
        page.line((tx, top - tick), (tx, top - width), width)
    page.text((x - 2, y + 1.2), "0", 2.6, align="R")
    page.text((x + SCALE_BAR_MM + 2, y + 1.2), f"{SCALE_BAR_MM:g} mm", 2.6)
    if note:
        page.text(
            (x + SCALE_BAR_MM / 2, y + 8),
            f"This bar must measure {SCALE_BAR_MM:g} mm. If it does not, print again at "
            "100 % (actual size, no 'fit to page').",
            2.6,
            align="C",
            bold=True,
        )


def mat_page(tile_mm: float = 45.0) -> Page:
    """The display mat on A3: outlines, markers 0-3, and outside the active area a title,
    a north arrow, the scale bar and short instructions."""
    layout = mat_layout(tile_mm)
    geo = DisplayGeometry(tile_mm)
    page = Page("display-mat", A3_MM)
    at = layout.to_page
    markers = [at(c) for c in geo.marker_centres().values()]
    boxes = _marker_boxes(markers)
    clearance = kit.MARKER_MARGIN_MM + kit.MAT_OUTLINE_MM / 2 + 0.2

    def outline(cx: float, cy: float, half: float) -> None:
        corners = [
            at((cx - half, cy - half)),
            at((cx + half, cy - half)),
            at((cx + half, cy + half)),
            at((cx - half, cy + half)),
        ]
        for i in range(4):
            for a, b in clip_axis_line(corners[i], corners[(i + 1) % 4], boxes, clearance):
                page.line(a, b, kit.MAT_OUTLINE_MM, kit.MAT_OUTLINE_GREY)

    for r in range(4):
        for c in range(4):
            cx, cy = geo.cell_centre(r, c)
            outline(cx, cy, tile_mm / 2)
    outline(0.0, 0.0, geo.lane_inner)
    outline(0.0, 0.0, geo.half_extent)
    for marker_id, centre in geo.marker_centres().items():
        page.marker(marker_id, at(centre))

    # Outside the active area only.
    top = PRINT_MARGIN_MM
    page.text((A3_MM[0] / 2, top + 8), "Māori table companion: display mat", 6.0, "C", bold=True)
    page.text(
        (A3_MM[0] / 2, top + 16),
        f"tiles {tile_mm:g} mm - cell pitch {geo.pitch:g} mm - "
        f"active area {2 * geo.half_extent:g} mm square - markers 0-3",
        3.0,
        "C",
    )
    north = at((0.0, -geo.half_extent))
    arrow_tip = (north[0], top + 21.0)
    page.arrow_up(arrow_tip, 12.0)
    page.text((north[0] + 6, arrow_tip[1] + 8), "NORTH of the display", 3.2, bold=True)
    _scale_bar(page, layout.scale_bar[0])
    y = layout.scale_bar[0][1] + 20
    steps = (
        "Lay the mat flat in the middle of the table; north may point any way.",
        "The 16 display tiles go in the squares; the explorer ship moves in the band around them.",
        "Keep the four black markers flat, clean and uncovered.",
        "Full guide: setup-guide-A4.pdf (printing, stickers, camera, teaching your box).",
    )
    for i, step in enumerate(steps, 1):
        page.text((PRINT_MARGIN_MM + 20, y), f"{i}. {step}", 3.2)
        y += 6.0
    return page


# --- seat marker sheets --------------------------------------------------------------------

CORNERS = ("NW", "NE", "SE", "SW")


def _front(layouts: dict[str, BoardLayout]) -> BoardLayout:
    return layouts.get("front") or next(iter(layouts.values()))


def seat_page(
    seat: int, tile_mm: float = 45.0, layouts: dict[str, BoardLayout] | None = None
) -> Page:
    """Seat `seat`'s four marker stickers on A4 with cut lines and a placing diagram."""
    layouts = dict(layouts or default_boards())
    board = _front(layouts)
    geo = SeatGeometry(seat, board.rows, board.cols, tile_mm)
    page = Page(f"seat-{seat}-markers", A4_MM)
    W = A4_MM[0]
    m = PRINT_MARGIN_MM
    page.text((W / 2, m + 8), f"Māori table companion: seat {seat} markers", 5.5, "C", bold=True)
    page.text(
        (W / 2, m + 15),
        f"Markers {geo.marker_ids[0]}-{geo.marker_ids[3]}. Print at 100 %, cut along the "
        "dashed lines, stick them round seat {seat}'s board.".replace("{seat}", str(seat)),
        3.0,
        "C",
    )
    # Stickers in a 2 x 2 block that mirrors where they go: NW top left ... SW bottom left.
    w = kit.MARKER_MM + 2 * STICKER_WHITE_MM
    h = w + STICKER_NOTE_MM
    gap_x, gap_y = 36.0, 18.0
    x_left = W / 2 - gap_x / 2 - w
    y_top = m + 24
    places = {
        0: (x_left, y_top),
        1: (W / 2 + gap_x / 2, y_top),
        2: (W / 2 + gap_x / 2, y_top + h + gap_y),
        3: (x_left, y_top + h + gap_y),
    }
    for k, marker_id in enumerate(geo.marker_ids):
        x, y = places[k]
        page.outline(x, y, w, h, 0.25, 90, dash=CUT_DASH_MM)
        centre = (x + w / 2, y + STICKER_NOTE_MM + STICKER_WHITE_MM + kit.MARKER_MM / 2)
        page.marker(marker_id, centre)
        page.arrow_up((x + 4, y + 1.6), 4.2, 60)
        page.text((x + 6.5, y + 4.6), "this edge faces away from the player", 1.5, grey=60)
        page.text(
            (x + w / 2, y + h + 5),
            f"seat {seat} - {CORNERS[k]} corner - id {marker_id}",
            3.0,
            "C",
            bold=True,
        )
    # The placing diagram (scale 1 : 3), seat north up.
    y = y_top + 2 * h + gap_y + 16
    page.text(
        (m + 4, y),
        "Where the markers go (seen from the player's chair, seat north up)",
        3.4,
        bold=True,
    )
    scale = 1 / 3
    pitch = geo.pitch
    half_w = board.cols * pitch / 2
    half_h = board.rows * pitch / 2
    storage = geo.storage_centre()
    west = storage[0] - pitch / 2
    east = max(c[0] for c in geo.marker_centres().values()) + kit.MARKER_MM / 2
    left = m + 10 - west * scale
    centre_y = y + 12 + (half_h + kit.MARKER_MM + 4) * scale

    def at(p: Point) -> Point:
        return (left + p[0] * scale, centre_y + p[1] * scale)

    for r in range(board.rows):
        for c in range(board.cols):
            if board.playable((r, c)):
                cx, cy = geo.cell_centre(r, c)
                x0, y0 = at((cx - tile_mm / 2, cy - tile_mm / 2))
                page.outline(x0, y0, tile_mm * scale, tile_mm * scale, 0.2, 150)
    gx, gy = at((-half_w, -half_h))
    page.outline(gx, gy, 2 * half_w * scale, 2 * half_h * scale, 0.35, 0)
    sx, sy = at((storage[0] - pitch / 2, storage[1] - pitch / 2))
    page.outline(sx, sy, pitch * scale, pitch * scale, 0.3, 0, dash=1.0)
    page.text((sx + pitch * scale / 2, sy - 1.5), "storage", 2.4, "C")
    for k, (marker_id, mc) in enumerate(geo.marker_centres().items()):
        mx, my = at((mc[0] - kit.MARKER_MM / 2, mc[1] - kit.MARKER_MM / 2))
        page.rect(mx, my, kit.MARKER_MM * scale, kit.MARKER_MM * scale, 40)
        label_y = my - 1.2 if mc[1] < 0 else my + kit.MARKER_MM * scale + 3.2
        page.text(
            (mx + kit.MARKER_MM * scale / 2, label_y), f"{CORNERS[k]} ({marker_id})", 2.4, "C"
        )
    bottom = at((0, half_h + kit.MARKER_MM + 4))[1] + 6
    page.text((at((0, 0))[0], bottom), "the player sits here", 2.8, "C", bold=True)
    page.arrow_up((at((0, 0))[0], bottom + 1.5), 5.0)
    topmost = at((0, -half_h - kit.MARKER_MM - 4))[1]
    page.text((at((0, 0))[0], topmost - 1), "seat north", 2.4, "C")

    # The same in numbers, from vision.kit.
    tx = at((east, 0))[0] + 8
    ty = y + 12
    width = W - m - tx
    mx_, my_ = geo.marker_centres()[geo.marker_ids[1]]
    inner = mx_ - kit.MARKER_MM / 2 - half_w
    lines = [
        f"Board front side: {board.rows} x {board.cols} fields, {pitch:g} mm apart "
        f"(grid {2 * half_w:g} x {2 * half_h:g} mm).",
        f"Marker centres: {mx_:g} mm east and west and {abs(my_):g} mm north and south of the "
        f"grid's centre. So each marker's inner corner sits {inner:g} mm out from the grid's "
        "corner, both ways.",
        "Each marker upright: the edge marked 'faces away from the player' points away from "
        "the player (seat north). Stick it within 3 mm and 2 degrees.",
        f"Storage slot: a {pitch:g} mm square centred {abs(storage[0]):g} mm west and "
        f"{storage[1]:g} mm south of the grid's centre, left of the bottom row.",
    ]
    for side, other in sorted(layouts.items()):
        if other is board or (other.rows, other.cols) == (board.rows, board.cols):
            continue
        g2 = SeatGeometry(seat, other.rows, other.cols, tile_mm)
        ox, oy = g2.marker_centres()[g2.marker_ids[1]]
        lines.append(
            f"The {side} side ({other.rows} x {other.cols}) puts the marker centres {ox:g} mm "
            f"and {abs(oy):g} mm out: move them when you turn the board over."
        )
    for text in lines:
        ty = page.paragraph(tx, ty, width, text, 2.6, 1.55) + 2.0
    return page


# --- the storage cards ---------------------------------------------------------------------


def storage_page(tile_mm: float = 45.0) -> Page:
    """Five storage cards on A4 (one per seat), each the slot's square outlined on white
    with kit.STORAGE_CARD_MARGIN_MM of white round it, and cut lines."""
    geo = SeatGeometry(1, 4, 4, tile_mm)  # the slot is a pitch square whatever the board
    slot = geo.pitch
    card = slot + 2 * kit.STORAGE_CARD_MARGIN_MM
    page = Page("storage-cards", A4_MM)
    W = A4_MM[0]
    m = PRINT_MARGIN_MM
    page.text((W / 2, m + 8), "Māori table companion: storage cards", 5.5, "C", bold=True)
    page.paragraph(
        m + 12,
        m + 15,
        W - 2 * m - 24,
        "Print at 100 %, cut along the dashed lines and lay one card under each player's "
        f"storage slot, its {slot:g} mm square left of the board's bottom row where the marker "
        "sheet shows, before the south-west marker: that sticker's corner covers the card's "
        "corner nearest the board. A tile kept in storage lies in the square; the white round "
        "it lets the camera see an empty slot.",
        3.0,
        1.5,
    )
    gap_x, gap_y = 20.0, 14.0
    left = W / 2 - card - gap_x / 2
    top = m + 38
    for k in range(len(kit.SEATS)):
        x = left + (k % 2) * (card + gap_x)
        y = top + (k // 2) * (card + gap_y)
        page.outline(x, y, card, card, 0.25, 90, dash=CUT_DASH_MM)
        inner = kit.STORAGE_CARD_MARGIN_MM
        page.outline(
            x + inner, y + inner, slot, slot, kit.STORAGE_OUTLINE_MM, kit.STORAGE_OUTLINE_GREY
        )
        page.text((x + card / 2, y + card + 5), "storage card", 2.6, "C", grey=90)
    return page


# --- the set-up guide ----------------------------------------------------------------------


def guide_page(tile_mm: float = 45.0) -> Page:
    """A one-page A4 set-up guide."""
    geo = DisplayGeometry(tile_mm)
    page = Page("setup-guide", A4_MM)
    m = PRINT_MARGIN_MM + 6
    W = A4_MM[0]
    page.text((m, m + 6), "Māori table companion: setting up the table", 6.0, bold=True)
    y = m + 16.0
    low, high = kit.CAMERA_HEIGHT_MM
    steps = [
        (
            "Print at 100 %",
            "Print every PDF at actual size (100 %, no 'fit to page'): the display mat on A3, the "
            "marker sheets, the storage cards and this guide on A4.",
        ),
        (
            "Check the scale bar",
            f"Measure the black bar below (and the one on the mat) with a ruler: it must be "
            f"{SCALE_BAR_MM:g} mm long. If it is not, fix the printer settings and print again.",
        ),
        (
            "Lay the mat",
            f"Put the display mat flat in the middle of the table (active area "
            f"{2 * geo.half_extent:g} mm square). North may point any way; keep the four markers "
            "uncovered. Tape the corners if the paper curls.",
        ),
        (
            "Stick the markers",
            "Cut out each seat's four markers along the dashed lines and stick them round that "
            "player's board as the sheet's diagram shows: each marker's 'away from the player' "
            "edge away from the player, within 3 mm of its place. Only the seats in play need "
            "markers. Lay a storage card where each board's storage slot is (on a wooden or "
            "coloured table an empty slot is read without one, but less surely).",
        ),
        (
            "Place the camera",
            f"Fix the camera {low / 1000:g} to {high / 1000:g} m above the table looking down "
            f"(at most {kit.CAMERA_TILT_MAX_DEG:g} degrees off vertical) so it sees the mat and "
            f"every board. It needs at least {kit.MIN_PX_PER_MM:g} pixels per millimetre: "
            f"a picture {1920} pixels wide may show at most "
            f"{1920 / kit.MIN_PX_PER_MM / 1000:.2f} m of table across.",
        ),
        (
            "Teach the box",
            "Run: companion teach --out PACKDIR --frames PICTURES (companion teach --plan lists "
            "the steps). It asks you to lay up to 16 tile types at a time on the mat, upright, "
            "then the explorer ship alone, then an empty board inside one seat's markers, and "
            "to confirm or correct each tile's type. The pack teaches the camera your own copy.",
        ),
        (
            "Play",
            "Hands, cups and shells may be in view; the camera reports what it cannot see as "
            "unknown rather than guessing.",
        ),
    ]
    for i, (head, body) in enumerate(steps, 1):
        page.text((m, y), f"{i}. {head}", 3.9, bold=True)
        y = page.paragraph(m + 6, y + 7.0, W - 2 * m - 6, body, 3.3, 1.65) + 4.0
    _scale_bar(page, (W / 2 - SCALE_BAR_MM / 2, y + 8))
    return page


# --- drawing backends ----------------------------------------------------------------------


def _cp1252(ch: str) -> str:
    try:
        ch.encode("cp1252")
    except UnicodeEncodeError:
        return unicodedata.normalize("NFKD", ch).encode("ascii", "ignore").decode()
    return ch


def _pdf_text(text: str) -> str:
    """Text the PDF core fonts can show (cp1252); other letters lose their accents (a long
    vowel's macron is drawn over it: pdf_bytes)."""
    return "".join(_cp1252(ch) for ch in text)


def _ascii(text: str) -> str:
    return unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()


_MACRON = "\u0304"
#: Where a drawn macron sits, in capital heights above the baseline: over a small letter
#: (Helvetica's x-height is 0.73 capitals) and over a capital; and its stroke's thickness.
MACRON_SMALL = 0.98
MACRON_CAPITAL = 1.22
MACRON_STROKE = 0.1


def _with_macrons(text: str, plain: Callable[[str], str]) -> tuple[str, list[int]]:
    """`text` for a font without long vowels ("Māori" -> "Maori", other letters through
    `plain`), and where in it the letters stand that carry a macron, to be drawn over them."""
    out: list[str] = []
    marked: list[int] = []
    for ch in text:
        parts = unicodedata.normalize("NFD", ch)
        if len(parts) == 2 and parts[1] == _MACRON and parts[0].isascii():
            marked.append(len("".join(out)))
            out.append(parts[0])
        else:
            out.append(plain(ch))
    return "".join(out), marked


def _macron_height(letter: str, size: float) -> float:
    return size * (MACRON_CAPITAL if letter.isupper() else MACRON_SMALL)


def pdf_bytes(pages: Sequence[Page]) -> bytes:
    """The pages as one PDF document (vector, 1:1)."""
    pdf = FPDF(unit="mm", format=pages[0].size)
    pdf.set_auto_page_break(False)
    pdf.set_margins(0, 0, 0)
    pdf.set_creator("Māori table companion")
    pdf.set_title(pages[0].name)
    for page in pages:
        pdf.add_page(format=page.size)
        for item in page.items:
            if isinstance(item, Fill):
                pdf.set_fill_color(item.grey)
                xs = {p[0] for p in item.points}
                ys = {p[1] for p in item.points}
                if len(item.points) == 4 and len(xs) == 2 and len(ys) == 2:
                    pdf.rect(min(xs), min(ys), max(xs) - min(xs), max(ys) - min(ys), style="F")
                else:
                    pdf.polygon(list(item.points), style="F")
            elif isinstance(item, Line):
                pdf.set_draw_color(item.grey)
                pdf.set_line_width(item.width)
                pdf.set_dash_pattern(dash=item.dash, gap=item.dash)
                pdf.line(item.a[0], item.a[1], item.b[0], item.b[1])
                pdf.set_dash_pattern()
            else:
                pdf.set_font("Helvetica", "B" if item.bold else "", size=_points(item.size))
                pdf.set_text_color(item.grey)
                text, marked = _with_macrons(item.text, _cp1252)
                width = pdf.get_string_width(text)
                shift = {"L": 0.0, "C": width / 2, "R": width}[item.align]
                x, y = item.at[0] - shift, item.at[1]
                pdf.text(x, y, text)
                for i in marked:  # the core fonts have no long vowels: a bar over the letter
                    left = x + pdf.get_string_width(text[:i])
                    right = x + pdf.get_string_width(text[: i + 1])
                    inset = (right - left) * 0.12
                    bar = _macron_height(text[i], item.size)
                    pdf.set_draw_color(item.grey)
                    pdf.set_line_width(item.size * MACRON_STROKE * (1.3 if item.bold else 1.0))
                    pdf.line(left + inset, y - bar, right - inset, y - bar)
    return bytes(pdf.output())


def render_png(page: Page, dpi: float = PRINT_DPI) -> np.ndarray:
    """The page as a greyscale raster (uint8), 1 mm = dpi / 25.4 px; pixel (0, 0) covers the
    paper's top-left corner."""
    s = dpi / 25.4
    w, h = page.size
    image = np.full((round(h * s), round(w * s)), 255, np.uint8)
    for item in page.items:
        if isinstance(item, Fill):
            xs = sorted({p[0] for p in item.points})
            ys = sorted({p[1] for p in item.points})
            if len(item.points) == 4 and len(xs) == 2 and len(ys) == 2:
                x0, x1 = round(xs[0] * s), round(xs[1] * s)
                y0, y1 = round(ys[0] * s), round(ys[1] * s)
                image[y0:y1, x0:x1] = item.grey
            else:
                pts = np.array([[p[0] * s * 16 - 8, p[1] * s * 16 - 8] for p in item.points])
                cv2.fillPoly(
                    image, [pts.round().astype(np.int32)], int(item.grey), cv2.LINE_AA, shift=4
                )
        elif isinstance(item, Line):
            _raster_line(image, item, s)
        else:
            _raster_text(image, item, s)
    return image


def _raster_line(image: np.ndarray, item: Line, s: float) -> None:
    thickness = max(1, round(item.width * s))
    (ax, ay), (bx, by) = item.a, item.b
    length = math.hypot(bx - ax, by - ay)
    if item.dash > 0 and length > 0:
        pieces = []
        t = 0.0
        while t < length:
            t1 = min(t + item.dash, length)
            pieces.append((t / length, t1 / length))
            t += 2 * item.dash
    else:
        pieces = [(0.0, 1.0)]
    for t0, t1 in pieces:
        p = (round((ax + (bx - ax) * t0) * s - 0.5), round((ay + (by - ay) * t0) * s - 0.5))
        q = (round((ax + (bx - ax) * t1) * s - 0.5), round((ay + (by - ay) * t1) * s - 0.5))
        cv2.line(image, p, q, int(item.grey), thickness, cv2.LINE_8)


def _raster_text(image: np.ndarray, item: Text, s: float) -> None:
    font = cv2.FONT_HERSHEY_DUPLEX if item.bold else cv2.FONT_HERSHEY_SIMPLEX
    cap_px = item.size * s
    thickness = max(1, round(cap_px / (9 if item.bold else 14)))
    unit = cv2.getTextSize("H", font, 1.0, thickness)[0][1]
    scale = cap_px / unit
    text, marked = _with_macrons(item.text, _ascii)
    width = cv2.getTextSize(text, font, scale, thickness)[0][0]
    shift = {"L": 0.0, "C": width / 2, "R": float(width)}[item.align]
    org = (round(item.at[0] * s - shift), round(item.at[1] * s))
    cv2.putText(image, text, org, font, scale, int(item.grey), thickness, cv2.LINE_AA)
    for i in marked:  # Hershey fonts have no long vowels: a bar over the letter
        left, right = _letter_ink(text, i, font, scale, thickness)
        inset = max(thickness, round((right - left) * 0.15))
        y = round(org[1] - _macron_height(text[i], cap_px))
        ends = (org[0] + left + inset, y), (org[0] + right - inset, y)
        cv2.line(image, ends[0], ends[1], int(item.grey), thickness, cv2.LINE_AA)


def _letter_ink(text: str, i: int, font: int, scale: float, thickness: int) -> tuple[int, int]:
    """The first and last pixel column, from the text's origin, that letter `i` of `text` inks.

    Measured on the drawn letters, not from `getTextSize`'s advances: OpenCV releases place a
    Hershey letter differently within its advance."""
    (width, height), base = cv2.getTextSize(text, font, scale, thickness)
    pad = 2 * thickness + 2
    shape = (height + base + 2 * pad, width + 2 * pad + round(scale * 40))

    def ink(prefix: str) -> np.ndarray:
        scratch = np.zeros(shape, np.uint8)
        cv2.putText(scratch, prefix, (pad, pad + height), font, scale, 255, thickness, cv2.LINE_8)
        return scratch > 0

    columns = np.nonzero((ink(text[: i + 1]) & ~ink(text[:i])).any(axis=0))[0]
    if columns.size == 0:  # a letter with no ink of its own: its advance
        left = cv2.getTextSize(text[:i], font, scale, thickness)[0][0] if i else 0
        return left, cv2.getTextSize(text[: i + 1], font, scale, thickness)[0][0]
    return int(columns[0]) - pad, int(columns[-1]) - pad


def png_bytes(image: np.ndarray, dpi: float = PRINT_DPI) -> bytes:
    """PNG data carrying its print resolution (pHYs), so viewers print it 1:1."""
    ok, data = cv2.imencode(".png", image)
    if not ok:
        raise KitError("the PNG encoder failed")
    raw = data.tobytes()
    ppm = round(dpi / 0.0254)
    body = b"pHYs" + struct.pack(">IIB", ppm, ppm, 1)
    chunk = struct.pack(">I", 9) + body + struct.pack(">I", zlib.crc32(body) & 0xFFFFFFFF)
    end_of_ihdr = 8 + 8 + 13 + 4  # signature, IHDR length+type, IHDR data, CRC
    return raw[:end_of_ihdr] + chunk + raw[end_of_ihdr:]


# --- the whole kit -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class KitFile:
    """One file of the kit and a line for the README."""

    name: str
    about: str


def kit_files() -> list[KitFile]:
    """The files `companion kit` writes, in README order."""
    files = [
        KitFile("setup-guide-A4.pdf", "one-page set-up guide (A4): start here"),
        KitFile("display-mat-A3.pdf", "the display mat, A3, print at 100 %"),
        KitFile(f"display-mat-{PRINT_DPI}dpi.png", f"the same mat as a {PRINT_DPI} dpi picture"),
    ]
    for seat in kit.SEATS:
        files.append(
            KitFile(
                f"seat-{seat}-markers-A4.pdf",
                f"seat {seat}'s four marker stickers, A4, print at 100 %",
            )
        )
        files.append(
            KitFile(
                f"seat-{seat}-markers-{PRINT_DPI}dpi.png",
                f"the same sheet as a {PRINT_DPI} dpi picture",
            )
        )
    files.append(
        KitFile(
            "storage-cards-A4.pdf", "five storage cards, A4: one under each player's storage slot"
        )
    )
    files.append(
        KitFile(f"storage-cards-{PRINT_DPI}dpi.png", f"the same sheet as a {PRINT_DPI} dpi picture")
    )
    files.append(KitFile("README.txt", "this list"))
    return files


def _readme(tile_mm: float) -> str:
    lines = [
        "Māori table companion: printable table kit",
        f"Tile side {tile_mm:g} mm. Print every PDF at 100 % (actual size) and check that the "
        f"scale bar measures {SCALE_BAR_MM:g} mm.",
        "",
    ]
    lines += [f"{f.name:<28} {f.about}" for f in kit_files()]
    return "\n".join(lines) + "\n"


def _build(tile_mm: float) -> dict[str, bytes]:
    files: dict[str, bytes] = {}
    mat = mat_page(tile_mm)
    files["display-mat-A3.pdf"] = pdf_bytes([mat])
    files[f"display-mat-{PRINT_DPI}dpi.png"] = png_bytes(render_png(mat))
    layouts = default_boards()
    for seat in kit.SEATS:
        sheet = seat_page(seat, tile_mm, layouts)
        files[f"seat-{seat}-markers-A4.pdf"] = pdf_bytes([sheet])
        files[f"seat-{seat}-markers-{PRINT_DPI}dpi.png"] = png_bytes(render_png(sheet))
    cards = storage_page(tile_mm)
    files["storage-cards-A4.pdf"] = pdf_bytes([cards])
    files[f"storage-cards-{PRINT_DPI}dpi.png"] = png_bytes(render_png(cards))
    files["setup-guide-A4.pdf"] = pdf_bytes([guide_page(tile_mm)])
    files["README.txt"] = _readme(tile_mm).encode()
    return files


def write_kit(
    out_dir: str | Path, tile_mm: float = 45.0, progress: Callable[[str], None] | None = None
) -> list[Path]:
    """Write the whole kit into `out_dir` atomically; returns the files written.

    `out_dir` may be missing, empty, or hold an earlier kit (which is replaced); anything
    else is refused so no one's files are overwritten.
    """
    check_tile_mm(tile_mm)
    out = Path(out_dir)
    names = {f.name for f in kit_files()}
    if out.exists():
        if not out.is_dir():
            raise KitError(f"{out} is a file; give a folder for the kit")
        strangers = sorted(p.name for p in out.iterdir() if p.name not in names)
        if strangers:
            raise KitError(
                f"{out} already holds other files ({strangers[0]}); give a new or empty folder"
            )
    parent = out.absolute().parent
    if not parent.is_dir():
        raise KitError(f"{parent} does not exist")
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}-", dir=parent))
    try:
        for name, data in _build(tile_mm).items():
            (tmp / name).write_bytes(data)
            if progress:
                progress(name)
        os.chmod(tmp, 0o755)
        swap_into_place(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return [out / f.name for f in kit_files()]


def swap_into_place(tmp: Path, out: Path) -> None:
    """Rename `tmp` to `out`; an existing `out` is set aside first and removed after."""
    if not out.exists():
        os.replace(tmp, out)
        return
    old = tmp.with_name(tmp.name + "-old")
    os.replace(out, old)
    try:
        os.replace(tmp, out)
    except BaseException:
        os.replace(old, out)
        raise
    shutil.rmtree(old, ignore_errors=True)
