"""Procedurally drawn tile packs: complete pack directories with art drawn from each tile's meaning.

The recogniser must never depend on one box's art, so it is always measured on several
clearly different styles (STYLES):

- ``lagoon``: flat bright vector colours, a turquoise sea with white wave arcs, sandy islands
  with a green interior, thick outlines, filled symbols (fan palms, gabled huts, scallops,
  red canoes with a sail).
- ``ink``: dark textured paper, water as thin wavy ink lines, hatched land, symbols as thin
  line drawings in cream and gold (frond palms, huts on stilts, snail shells, outriggers).
- ``random``: palette, textures, line weights and symbol shapes drawn from ``seed``, standing
  for "a box we have never seen".

Each tile is drawn from its meaning: a sea background; land shaped by kind and land edges
(single: an island inside; end: reaching one edge across its middle; middle: a band crossing
two opposite edges; volcano: an island with a mountain); palms (pointing north), huts,
shells and boats as many as the meaning says; half a flower garland (lei) on each lei edge.

Rotation must be defined from the picture alone, so no tile is drawn symmetric: land
outlines wobble, and wave marks, rocks and the symbols' places are drawn at random (seeded by
``seed`` and the tile id), so even plain water differs from itself turned 90, 180 or 270°.
"""

from __future__ import annotations

import colorsys
import os
import shutil
import tempfile
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import tomli_w
from numpy.typing import NDArray

from companion.catalogue import BoardLayout, Catalogue, default_catalogue
from companion.errors import DataError
from companion.tiles import EDGES, Kind, Meaning
from vision import kit

STYLES = ("lagoon", "ink", "random")

BGR = tuple[int, int, int]
Image = NDArray[np.uint8]
Points = NDArray[np.float64]

_OVERSAMPLE = 2  # drawn at twice the size and reduced, for smooth edges
_SHIFT = 4  # fixed-point bits for cv2 drawing calls
_LAND_EDGE_SPAN = (0.22, 0.78)  # where land meets a land edge (same on every tile, so islands join)
_GRID = 96  # resolution of the maps used to place symbols


def _u8(image: object) -> Image:
    """An OpenCV result as the uint8 array it is."""
    return np.asarray(image, np.uint8)


def _clip8(image: object) -> Image:
    """A float picture rounded and clipped to uint8."""
    return np.clip(np.round(np.asarray(image, np.float32)), 0, 255).astype(np.uint8)


def _hex(code: str) -> BGR:
    code = code.lstrip("#")
    r, g, b = (int(code[i : i + 2], 16) for i in (0, 2, 4))
    return (b, g, r)


@dataclass(frozen=True)
class Look:
    """Everything that makes one style: colours, textures, line weight and symbol shapes."""

    name: str
    sea: BGR
    sea_light: BGR  # shallow water around land
    water_mark: BGR
    water_pattern: str  # "arcs" | "lines" | "dots"
    paper_texture: float  # 0 = flat print, 1 = strongly textured paper
    sand: BGR
    land: BGR
    land_fill: str  # "flat" | "hatch" | "dots"
    hatch: BGR
    outline: BGR
    line: float  # line width as a fraction of the tile side
    ink: BGR  # outline of symbols
    filled: bool  # symbols filled with colour (True) or drawn as lines
    trunk: BGR
    leaf: BGR
    wall: BGR
    roof: BGR
    shell: BGR
    hull: BGR
    sail: BGR
    flower: BGR
    flower_centre: BGR
    rock: BGR
    mountain: BGR
    lava: BGR
    palm: str  # "fan" | "fronds" | "star", or one of SHAPED_PALMS
    hut: str  # "gable" | "stilts" | "dome", or one of SHAPED_HUTS
    shell_shape: str  # "fan" | "spiral" | "cone", or one of SHAPED_SHELLS
    boat: str  # "sail" | "outrigger" | "dhow"
    board_sea: BGR
    board_line: BGR
    ship_wood: BGR
    ship_deck: BGR
    ship_sail: BGR
    ship_alpha: bool  # ship.png with an alpha channel, or drawn on white paper
    symbol_scale: float = 1.0  # palms, huts, shells and boats drawn this much of their size
    finish: str = "print"  # how the drawn art is printed (FINISHES)


LAGOON = Look(
    name="lagoon",
    sea=_hex("#1fb2c9"),
    sea_light=_hex("#7fe0e0"),
    water_mark=_hex("#e6fbff"),
    water_pattern="arcs",
    paper_texture=0.0,
    sand=_hex("#f2d48a"),
    land=_hex("#5db548"),
    land_fill="flat",
    hatch=_hex("#3d8a32"),
    outline=_hex("#124650"),
    line=0.012,
    ink=_hex("#123c44"),
    filled=True,
    trunk=_hex("#8a5a28"),
    leaf=_hex("#1f8f33"),
    wall=_hex("#d69a52"),
    roof=_hex("#cf3d28"),
    shell=_hex("#f7b5c3"),
    hull=_hex("#c0282c"),
    sail=_hex("#fbfbf2"),
    flower=_hex("#ee4f97"),
    flower_centre=_hex("#ffd83d"),
    rock=_hex("#7d7468"),
    mountain=_hex("#6b5a4e"),
    lava=_hex("#ff5a14"),
    palm="fan",
    hut="gable",
    shell_shape="fan",
    boat="sail",
    board_sea=_hex("#1687a8"),
    board_line=_hex("#0c4c5e"),
    ship_wood=_hex("#9b5b2b"),
    ship_deck=_hex("#d9a566"),
    ship_sail=_hex("#f4f1e6"),
    ship_alpha=True,
)

INK = Look(
    name="ink",
    sea=_hex("#262b36"),
    sea_light=_hex("#2f3643"),
    water_mark=_hex("#7d93a8"),
    water_pattern="lines",
    paper_texture=1.0,
    sand=_hex("#3b3a3a"),
    land=_hex("#34312e"),
    land_fill="hatch",
    hatch=_hex("#d8c9a3"),
    outline=_hex("#e6d8b2"),
    line=0.006,
    ink=_hex("#ecd08a"),
    filled=False,
    trunk=_hex("#ecd08a"),
    leaf=_hex("#ecd08a"),
    wall=_hex("#ecd08a"),
    roof=_hex("#ecd08a"),
    shell=_hex("#f0e2c0"),
    hull=_hex("#ecd08a"),
    sail=_hex("#f0e2c0"),
    flower=_hex("#d9788a"),
    flower_centre=_hex("#f0e2c0"),
    rock=_hex("#9aa3ad"),
    mountain=_hex("#d8c9a3"),
    lava=_hex("#d0643c"),
    palm="fronds",
    hut="stilts",
    shell_shape="spiral",
    boat="outrigger",
    board_sea=_hex("#1c2029"),
    board_line=_hex("#8c7f63"),
    ship_wood=_hex("#4a3322"),
    ship_deck=_hex("#7a5a3c"),
    ship_sail=_hex("#f6f3ea"),
    ship_alpha=False,
)


def _hsv(h: float, s: float, v: float) -> BGR:
    r, g, b = colorsys.hsv_to_rgb(h % 1.0, min(max(s, 0.0), 1.0), min(max(v, 0.0), 1.0))
    return (round(b * 255), round(g * 255), round(r * 255))


def random_look(seed: int) -> Look:
    """A style drawn from `seed`: palette, textures, line weight and symbol shapes."""
    rng = np.random.default_rng([seed, 7331])
    hue = float(rng.random())
    # Symbols stand on sea and on land, so both grounds sit on the far side from the symbols:
    # light symbols on a darker sea and land, or dark symbols on a lighter sea and land.
    light = bool(rng.random() < 0.5)
    sym_v = 0.95 if light else 0.12
    sea_v = float(rng.uniform(0.25, 0.45) if light else rng.uniform(0.6, 0.8))
    land_v = sea_v + float(rng.choice([-1, 1])) * float(rng.uniform(0.18, 0.25))
    land_v = float(np.clip(land_v, 0.12, 0.6) if light else np.clip(land_v, 0.45, 0.98))
    if abs(land_v - sea_v) < 0.15:
        land_v = sea_v + (0.18 if land_v >= sea_v else -0.18)
    land_h = hue + rng.uniform(0.2, 0.8)
    filled = bool(rng.random() < 0.6)
    # Outlines of filled symbols contrast with the fill; line drawings contrast with the ground.
    ink_v = (0.08 if light else 0.95) if filled else (0.95 if light else 0.08)

    def sym(h: float) -> BGR:
        return _hsv(h, rng.uniform(0.4, 0.9), sym_v + rng.uniform(-0.05, 0.05))

    return Look(
        name="random",
        sea=_hsv(hue, rng.uniform(0.3, 0.9), sea_v),
        sea_light=_hsv(hue, rng.uniform(0.2, 0.5), sea_v + 0.12),
        water_mark=_hsv(hue, 0.2, min(1.0, sea_v + 0.35) if sea_v < 0.6 else sea_v - 0.35),
        water_pattern=str(rng.choice(["arcs", "lines", "dots"])),
        paper_texture=float(rng.choice([0.0, 0.4, 1.0])),
        sand=_hsv(land_h + 0.05, rng.uniform(0.2, 0.6), land_v + 0.08),
        land=_hsv(land_h, rng.uniform(0.3, 0.9), land_v),
        land_fill=str(rng.choice(["flat", "hatch", "dots"])),
        hatch=_hsv(land_h, 0.5, land_v + (0.25 if land_v < 0.5 else -0.25)),
        outline=_hsv(rng.random(), rng.uniform(0.0, 0.6), 0.9 if light else 0.1),
        line=float(rng.uniform(0.006, 0.018)),
        ink=_hsv(rng.random(), 0.3, ink_v),
        filled=filled,
        trunk=sym(rng.random()),
        leaf=sym(rng.random()),
        wall=sym(rng.random()),
        roof=sym(rng.random()),
        shell=sym(rng.random()),
        hull=sym(rng.random()),
        sail=sym(rng.random()),
        flower=_hsv(rng.random(), 0.7, 0.9),
        flower_centre=_hsv(rng.random(), 0.8, 0.3),
        rock=_hsv(rng.random(), 0.15, sea_v + (0.4 if light else -0.45)),
        mountain=_hsv(rng.random(), 0.3, 0.35 if not light else 0.75),
        lava=_hsv(rng.uniform(0.0, 0.08), 0.9, 0.95),
        palm=str(rng.choice(["fan", "fronds", "star"])),
        hut=str(rng.choice(["gable", "stilts", "dome"])),
        shell_shape=str(rng.choice(["fan", "spiral", "cone"])),
        boat=str(rng.choice(["sail", "outrigger", "dhow"])),
        board_sea=_hsv(hue, rng.uniform(0.3, 0.9), sea_v * 0.75),
        board_line=_hsv(hue, 0.3, 0.9 if sea_v < 0.5 else 0.15),
        ship_wood=_hsv(rng.uniform(0.02, 0.1), 0.7, rng.uniform(0.3, 0.6)),
        ship_deck=_hsv(rng.uniform(0.05, 0.12), 0.5, 0.75),
        ship_sail=_hsv(rng.random(), rng.uniform(0.0, 0.8), 0.9),
        ship_alpha=bool(rng.random() < 0.5),
    )


def varied_look(seed: int) -> Look:
    """`random_look(seed)` with its symbols drawn at 40-100 % of their size and, for half the
    seeds, standing out from their ground by little: each symbol's colour is its ground's
    (land for palms and huts, sea for boats and shells), lighter or darker by 0.06-0.3 of
    value, its hue a little off. Art nobody has seen may draw a small palm in a darker green
    on green land as well as a large one in ink on paper."""
    rng = np.random.default_rng([seed, 7332])
    look = replace(random_look(seed), symbol_scale=float(rng.uniform(0.4, 1.0)))
    if rng.random() < 0.5:
        return look

    def near(ground: BGR) -> BGR:
        b, g, r = (c / 255 for c in ground)
        h, sat, v = colorsys.rgb_to_hsv(r, g, b)
        shift = float(rng.uniform(0.06, 0.3)) * (1 if v < 0.5 else -1)
        return _hsv(h + rng.uniform(-0.08, 0.08), sat * rng.uniform(0.7, 1.3), v + shift)

    return replace(
        look,
        trunk=near(look.land),
        leaf=near(look.land),
        wall=near(look.land),
        roof=near(look.land),
        shell=near(look.sea),
        hull=near(look.sea),
        sail=near(look.sea),
    )


def line_look(seed: int) -> Look:
    """`random_look(seed)` drawn mostly in lines: symbols as line drawings in three packs of
    four (their colours stand out from the ground, as `random_look` makes them), lines of
    0.4-1.2 % of the side, land hatched or dotted more often than flat, textured paper, and
    symbols at 30-100 % of their size. Thin strokes are where one palm more or less is
    least seen."""
    rng = np.random.default_rng([seed, 7333])
    return replace(
        random_look(seed),
        filled=bool(rng.random() < 0.25),
        land_fill=str(rng.choice(["hatch", "dots", "flat"], p=[0.4, 0.3, 0.3])),
        paper_texture=float(rng.choice([0.4, 1.0])),
        line=float(rng.uniform(0.004, 0.012)),
        symbol_scale=float(rng.uniform(0.3, 1.0)),
    )


#: Symbols drawn in shapes only `shaped_look` gives: a palm as a round tree, a tuft of spikes
#: or a bare triangle; a hut as a tent, a flat-roofed block or a bare square; a shell as a
#: starfish, a ringed dot or a bare disc.
SHAPED_PALMS = ("round", "tuft", "triangle")
SHAPED_HUTS = ("tent", "block", "square")
SHAPED_SHELLS = ("starfish", "ringed", "disc")


def shaped_look(seed: int) -> Look:
    """One of `random_look`, `varied_look` and `line_look` (by the seed's remainder by 3)
    with its palms, huts and shells drawn in shapes none of them draws (SHAPED_PALMS,
    SHAPED_HUTS, SHAPED_SHELLS): another hand's art tells its tiles apart by symbols of its
    own."""
    look = (random_look, varied_look, line_look)[seed % 3](seed)
    rng = np.random.default_rng([seed, 7335])
    return replace(
        look,
        palm=str(rng.choice(SHAPED_PALMS)),
        hut=str(rng.choice(SHAPED_HUTS)),
        shell_shape=str(rng.choice(SHAPED_SHELLS)),
    )


#: How a pack's drawn art may reach its card: as drawn (`print`), or through one of the
#: others (`finished`): a painter's washes, a printer's halftone screen, a poster's few
#: flat colours, a soft washed-out print, or a woven texture under a mottled tint.
FINISHES = ("print", "painted", "halftone", "posterized", "soft", "woven")


def finished_look(seed: int) -> Look:
    """One of `random_look`, `varied_look` and `line_look` (by the seed's remainder by 3)
    printed in a finish other than `print` (FINISHES): art that reaches its card unlike the
    drawing, its small symbols merged into washes, screened into dots or flattened."""
    look = (random_look, varied_look, line_look)[seed % 3](seed)
    rng = np.random.default_rng([seed, 7334])
    return replace(look, finish=str(rng.choice(FINISHES[1:])))


def finished(image: Image, finish: str, rng: np.random.Generator) -> Image:
    """A drawn picture (BGR) as printed in `finish` (FINISHES); `print` leaves it as it is
    and draws no random numbers."""
    if finish == "print":
        return image
    h, w = image.shape[:2]
    side = float(min(h, w))
    if finish == "painted":
        sigma_s = float(np.clip(rng.uniform(0.08, 0.25) * side, 1.0, 200.0))
        return _u8(cv2.stylization(image, sigma_s=sigma_s, sigma_r=float(rng.uniform(0.25, 0.55))))
    if finish == "halftone":
        period = max(2.5, float(rng.uniform(0.02, 0.045)) * side)
        angle = float(rng.uniform(0.0, np.pi / 2))
        yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
        out = np.empty(image.shape, np.float32)
        for channel in range(3):
            a = angle + 0.26 * channel
            u = (xx * np.cos(a) + yy * np.sin(a)) / period
            v = (yy * np.cos(a) - xx * np.sin(a)) / period
            screen = (np.cos(2 * np.pi * u) + np.cos(2 * np.pi * v) + 2.0) / 4.0
            ink = 1.0 - image[..., channel].astype(np.float32) / 255.0
            out[..., channel] = np.where(screen < ink, 0.0, 255.0)
        return _clip8(cv2.GaussianBlur(out, (0, 0), 0.3 * period))
    if finish == "posterized":
        levels = int(rng.integers(3, 7))
        smooth = cv2.bilateralFilter(image, 9, float(rng.uniform(30.0, 80.0)), side / 40.0)
        step = 255.0 / (levels - 1)
        return _clip8(np.round(smooth.astype(np.float32) / step) * step)
    if finish == "soft":
        sigma = float(rng.uniform(0.01, 0.02)) * side
        blurred = cv2.GaussianBlur(image.astype(np.float32), (0, 0), sigma)
        fade = float(rng.uniform(0.0, 0.3))
        return _clip8(blurred * (1.0 - fade) + blurred.mean(axis=(0, 1)) * fade)
    if finish == "woven":
        period = max(3.0, float(rng.uniform(0.01, 0.03)) * side)
        yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
        weave = np.sin(2 * np.pi * xx / period) * np.sin(2 * np.pi * yy / period)
        strength = float(rng.uniform(0.06, 0.18))
        noise = rng.normal(0.0, 1.0, (h, w, 3)).astype(np.float32)
        tint = np.asarray(cv2.GaussianBlur(noise, (0, 0), side / 8.0), np.float32)
        tint *= float(rng.uniform(15.0, 35.0)) / max(float(np.abs(tint).max()), 1e-6)
        out = image.astype(np.float32) * (1.0 + strength * weave)[..., None] + tint
        return _clip8(out)
    raise ValueError(f"unknown finish {finish!r}; choose one of {', '.join(FINISHES)}")


def style_look(style: str, seed: int = 0) -> Look:
    """The Look of a named style (``random`` depends on `seed`)."""
    if style == "lagoon":
        return LAGOON
    if style == "ink":
        return INK
    if style == "random":
        return random_look(seed)
    raise DataError("", f"unknown art style {style!r}; choose one of {', '.join(STYLES)}")


# --- drawing helpers (coordinates are fractions of the picture's side) --------------------


class _Canvas:
    """An oversampled picture drawn in unit coordinates: (0, 0) north-west, (1, 1) south-east."""

    def __init__(self, width_px: int, height_px: int, colour: BGR) -> None:
        self.w = width_px * _OVERSAMPLE
        self.h = height_px * _OVERSAMPLE
        self.scale = float(self.w)  # unit length = picture width
        self.img: Image = np.empty((self.h, self.w, 3), np.uint8)
        self.img[:] = colour

    def twin(self, img: Image) -> _Canvas:
        """A canvas with the same geometry drawing into `img`."""
        other = object.__new__(_Canvas)
        other.w, other.h, other.scale, other.img = self.w, self.h, self.scale, img
        return other

    def pts(self, points: Points | Sequence[tuple[float, float]]) -> NDArray[np.int32]:
        arr = np.asarray(points, np.float64) * self.scale * (1 << _SHIFT)
        return np.round(arr).astype(np.int32).reshape(-1, 1, 2)

    def px(self, length: float) -> int:
        return max(1, round(length * self.scale))

    def fixed(self, value: float) -> int:
        return round(value * self.scale * (1 << _SHIFT))

    def poly(self, points: Points | Sequence[tuple[float, float]], colour: BGR) -> None:
        cv2.fillPoly(self.img, [self.pts(points)], colour, cv2.LINE_AA, _SHIFT)

    def lines(
        self,
        points: Points | Sequence[tuple[float, float]],
        colour: BGR,
        width: float,
        closed: bool = False,
    ) -> None:
        cv2.polylines(
            self.img, [self.pts(points)], closed, colour, self.px(width), cv2.LINE_AA, _SHIFT
        )

    def shape(
        self,
        points: Points | Sequence[tuple[float, float]],
        fill: BGR | None,
        edge: BGR,
        width: float,
    ) -> None:
        if fill is not None:
            self.poly(points, fill)
        if width > 0:
            self.lines(points, edge, width, closed=True)

    def disc(
        self, centre: tuple[float, float], radius: float, colour: BGR, width: float = -1
    ) -> None:
        thickness = -1 if width < 0 else self.px(width)
        c = (self.fixed(centre[0]), self.fixed(centre[1]))
        cv2.circle(self.img, c, self.fixed(radius), colour, thickness, cv2.LINE_AA, _SHIFT)

    def finish(self) -> Image:
        size = (self.w // _OVERSAMPLE, self.h // _OVERSAMPLE)
        return _u8(cv2.resize(self.img, size, interpolation=cv2.INTER_AREA))


def _ellipse_pts(
    centre: tuple[float, float],
    axes: tuple[float, float],
    angle_deg: float,
    start: float = 0.0,
    end: float = 360.0,
    n: int = 40,
) -> Points:
    t = np.radians(np.linspace(start, end, n))
    a = np.radians(angle_deg)
    x = axes[0] * np.cos(t)
    y = axes[1] * np.sin(t)
    return np.column_stack(
        [centre[0] + x * np.cos(a) - y * np.sin(a), centre[1] + x * np.sin(a) + y * np.cos(a)]
    )


def _bezier(
    p0: tuple[float, float], p1: tuple[float, float], p2: tuple[float, float], n: int = 16
) -> Points:
    t = np.linspace(0.0, 1.0, n)[:, None]
    a, b, c = (np.asarray(p, np.float64) for p in (p0, p1, p2))
    result: Points = (1 - t) ** 2 * a + 2 * (1 - t) * t * b + t**2 * c
    return result


def _turn_points(points: Points, quarter_turns: int) -> Points:
    """Turn unit-square points clockwise about the centre by 90° steps (y points south)."""
    p = np.asarray(points, np.float64) - 0.5
    for _ in range(quarter_turns % 4):
        p = np.column_stack([-p[:, 1], p[:, 0]])
    result: Points = p + 0.5
    return result


def _quarters_from_south(edge: str) -> int:
    """Clockwise quarter turns that carry the south edge onto `edge`."""
    return (EDGES.index(edge) - EDGES.index("S")) % 4


def _paper(canvas: _Canvas, look: Look, rng: np.random.Generator) -> None:
    """Give the whole picture a paper texture (blotches, grain and fibres)."""
    if look.paper_texture <= 0:
        return
    h, w = canvas.h, canvas.w
    blotch = cv2.resize(
        rng.standard_normal((6, 6), np.float32), (w, h), interpolation=cv2.INTER_CUBIC
    )
    grain = rng.standard_normal((h // 2, w // 2), np.float32)
    grain = np.asarray(cv2.resize(grain, (w, h), interpolation=cv2.INTER_LINEAR), np.float32)
    delta = cv2.addWeighted(blotch, 5.0 * look.paper_texture, grain, 4.0 * look.paper_texture, 0)
    canvas.img = _u8(cv2.add(canvas.img, cv2.merge([delta, delta, delta]), dtype=cv2.CV_8U))
    for _ in range(int(25 * look.paper_texture)):
        x, y = rng.random(2)
        a = rng.uniform(0, np.pi)
        length = rng.uniform(0.02, 0.08)
        end = (x + length * np.cos(a), y + length * np.sin(a))
        shade = 10 if rng.random() < 0.5 else -10
        colour = tuple(int(np.clip(c + shade, 0, 255)) for c in look.sea)
        canvas.lines([(x, y), end], (colour[0], colour[1], colour[2]), 0.002)


# --- land --------------------------------------------------------------------------------


def _blob(
    centre: tuple[float, float],
    radii: tuple[float, float],
    rng: np.random.Generator,
    wobble: float = 0.09,
) -> Points:
    t = np.linspace(0, 2 * np.pi, 90, endpoint=False)
    r = np.ones_like(t)
    for k in range(2, 6):
        r += rng.uniform(0, wobble / (k - 1)) * np.sin(k * t + rng.uniform(0, 2 * np.pi))
    return np.column_stack(
        [centre[0] + radii[0] * r * np.cos(t), centre[1] + radii[1] * r * np.sin(t)]
    )


def _land_polygons(meaning: Meaning, rng: np.random.Generator, symbols: int) -> list[Points]:
    """The land of a tile as polygons in unit coordinates (upright)."""
    lo, hi = _LAND_EDGE_SPAN
    if meaning.kind in (Kind.SINGLE, Kind.VOLCANO):
        base = 0.27 + 0.03 * min(symbols, 3)
        if meaning.kind is Kind.VOLCANO:
            base = 0.36
        centre = (0.5 + rng.uniform(-0.03, 0.03), 0.5 + rng.uniform(-0.03, 0.03))
        return [_blob(centre, (base * rng.uniform(0.95, 1.08), base * rng.uniform(0.9, 1.0)), rng)]
    if meaning.kind is Kind.END:
        # Drawn reaching the south edge, then turned onto the land edge.
        head = _blob((0.5 + rng.uniform(-0.04, 0.04), 0.5), (0.3, 0.26), rng, 0.07)
        neck = np.array([(lo, 0.62), (hi, 0.62), (hi, 1.05), (lo, 1.05)])
        q = _quarters_from_south(meaning.land)
        return [_turn_points(head, q), _turn_points(neck, q)]
    if meaning.kind is Kind.MIDDLE:
        v = np.linspace(-0.05, 1.05, 60)
        env = np.sin(np.clip(v, 0, 1) * np.pi)
        left = lo - 0.05 * env * np.sin(v * rng.uniform(5, 9) + rng.uniform(0, 6)) - 0.04 * env
        right = hi + 0.05 * env * np.sin(v * rng.uniform(5, 9) + rng.uniform(0, 6)) + 0.04 * env
        band = np.concatenate([np.column_stack([left, v]), np.column_stack([right, v])[::-1]])
        return [_turn_points(band, 0 if meaning.land == "NS" else 1)]
    return []


def _land_mask(canvas: _Canvas, polygons: list[Points]) -> NDArray[np.uint8]:
    mask = np.zeros((canvas.h, canvas.w), np.uint8)
    for poly in polygons:
        cv2.fillPoly(mask, [canvas.pts(poly)], 255, cv2.LINE_8, _SHIFT)
    if polygons:
        k = canvas.px(0.03) | 1
        mask = _u8(cv2.GaussianBlur(mask, (k, k), 0, borderType=cv2.BORDER_REPLICATE))
        mask = np.where(mask >= 128, 255, 0).astype(np.uint8)
    return mask


def _blend(canvas: _Canvas, mask: NDArray[np.uint8], colour: BGR) -> None:
    """Paint `colour` where `mask` is set, with a soft one-pixel edge."""
    soft = cv2.GaussianBlur(mask, (3, 3), 0).astype(np.float32) / 255.0
    flat = np.empty_like(canvas.img)
    flat[:] = colour
    canvas.img = _u8(cv2.blendLinear(flat, canvas.img, soft, 1.0 - soft))


def _layer(canvas: _Canvas, draw: Callable[[_Canvas], None], mask: NDArray[np.uint8]) -> None:
    """Draw onto a copy and keep the drawing only where `mask` is set."""
    layer = canvas.twin(canvas.img.copy())
    draw(layer)
    cv2.copyTo(layer.img, mask, canvas.img)


def _grow(mask: NDArray[np.uint8], by_px: int) -> NDArray[np.uint8]:
    """`mask` grown by `by_px` pixels (a round dilation)."""
    dist = cv2.distanceTransform(255 - mask, cv2.DIST_L2, 3)
    return np.where(dist <= by_px, 255, 0).astype(np.uint8)


def _outline(canvas: _Canvas, mask: NDArray[np.uint8], colour: BGR, width: float) -> None:
    pad = canvas.px(0.05)
    padded = cv2.copyMakeBorder(mask, pad, pad, pad, pad, cv2.BORDER_REPLICATE)
    contours, _ = cv2.findContours(padded, cv2.RETR_LIST, cv2.CHAIN_APPROX_NONE)
    shifted = [c - pad for c in contours]
    cv2.drawContours(canvas.img, shifted, -1, colour, canvas.px(width), cv2.LINE_AA)


def _water_marks(
    canvas: _Canvas, look: Look, water: NDArray[np.float32], rng: np.random.Generator
) -> None:
    """Wave arcs, ink lines or stipple in open water, placed at random (so no symmetry)."""
    grid = water.shape[0]
    spots = np.argwhere(water > 0.06)
    if look.water_pattern == "lines":
        layer_mask = _u8(cv2.resize((water > 0.01).astype(np.uint8) * 255, (canvas.w, canvas.h)))

        def draw(c: _Canvas) -> None:
            y = rng.uniform(0.02, 0.08)
            while y < 1.0:
                x = np.linspace(-0.02, 1.02, 40)
                amp, freq, ph = rng.uniform(0.004, 0.012), rng.uniform(14, 24), rng.uniform(0, 6)
                c.lines(
                    np.column_stack([x, y + amp * np.sin(freq * x + ph)]), look.water_mark, 0.004
                )
                y += rng.uniform(0.06, 0.13)

        _layer(canvas, draw, layer_mask)
        count = 3
    elif look.water_pattern == "dots":
        for _ in range(int(len(spots) * 0.05)):
            gy, gx = spots[rng.integers(len(spots))]
            canvas.disc(
                ((gx + rng.random()) / grid, (gy + rng.random()) / grid), 0.006, look.water_mark
            )
        count = 4
    else:
        count = int(rng.integers(5, 9))
    # A few wave arcs and a rock or two at random places make every tile's rotation defined.
    for _ in range(count):
        if len(spots) == 0:
            break
        gy, gx = spots[rng.integers(len(spots))]
        cx, cy = (gx + 0.5) / grid, (gy + 0.5) / grid
        size = rng.uniform(0.035, 0.06)
        arc = _ellipse_pts((cx, cy), (size, size * 0.45), 0, 200, 340, 12)
        canvas.lines(arc, look.water_mark, max(look.line, 0.008))
        canvas.lines(arc + np.array([size * 0.9, 0.0]), look.water_mark, max(look.line, 0.008))
    # A reef of rocks, and a fish where there is open water: no tile looks like itself turned.
    rocks = np.argwhere(water > 0.07)
    if len(rocks):
        gy, gx = rocks[rng.integers(len(rocks))]
        cx, cy = (gx + 0.5) / grid, (gy + 0.5) / grid
        heading = rng.uniform(0, 2 * np.pi)
        for k, r in enumerate((0.042, 0.03, 0.02)):
            off = (cx + 0.05 * k * np.cos(heading), cy + 0.05 * k * np.sin(heading))
            canvas.shape(_blob(off, (r, r * 0.8), rng, 0.2), look.rock, look.ink, look.line * 0.6)
    open_water = np.argwhere(water > 0.12)
    if len(open_water) > 0.15 * grid * grid:
        gy, gx = open_water[rng.integers(len(open_water))]
        cx, cy = (gx + 0.5) / grid, (gy + 0.5) / grid
        angle = rng.uniform(0, 360)
        body = _ellipse_pts((cx, cy), (0.065, 0.026), angle, n=20)
        a = np.radians(angle)
        tail_at = (cx - 0.065 * np.cos(a), cy - 0.065 * np.sin(a))
        side = np.array([-np.sin(a), np.cos(a)]) * 0.03
        back = np.array([np.cos(a), np.sin(a)]) * 0.035
        tail = [
            tail_at,
            tuple(np.array(tail_at) - back + side),
            tuple(np.array(tail_at) - back - side),
        ]
        canvas.shape(body, look.water_mark, look.ink, look.line * 0.5)
        canvas.shape(tail, look.water_mark, look.ink, look.line * 0.5)


# --- symbols -----------------------------------------------------------------------------


def _palm(
    canvas: _Canvas, look: Look, cx: float, cy: float, r: float, rng: np.random.Generator
) -> None:
    """A palm with its crown to the north: trunk from (cx, cy + r) up to the crown."""
    if look.palm in SHAPED_PALMS:
        _shaped_palm(canvas, look, cx, cy, r)
        return
    lean = rng.uniform(-0.25, 0.25) * r
    base = (cx + lean, cy + 0.95 * r)
    top = (cx - lean * 0.3, cy - 0.35 * r)
    trunk = _bezier(base, (cx + lean * 1.6, cy + 0.3 * r), top)
    w = look.line
    if look.filled:
        canvas.lines(trunk, look.ink, 0.16 * r + 2 * w)
        canvas.lines(trunk, look.trunk, 0.16 * r)
    else:
        canvas.lines(trunk, look.trunk, w * 1.2)
        for p in trunk[3::3]:
            canvas.lines(
                [(p[0] - 0.06 * r, p[1]), (p[0] + 0.06 * r, p[1] + 0.02 * r)], look.trunk, w
            )
    if look.palm == "fronds":
        for ang in (-165, -130, -90, -50, -15, 25, 155):
            a = np.radians(ang)
            tip = (top[0] + 0.75 * r * np.cos(a), top[1] + 0.75 * r * np.sin(a) + 0.25 * r)
            mid = (top[0] + 0.45 * r * np.cos(a), top[1] + 0.45 * r * np.sin(a) - 0.15 * r)
            curve = _bezier(top, mid, tip, 10)
            canvas.lines(curve, look.leaf, w * 1.3)
            for p in curve[2:-1:2]:
                canvas.lines([p, (p[0], p[1] + 0.09 * r)], look.leaf, w)
    elif look.palm == "star":
        t = np.linspace(0, 2 * np.pi, 15, endpoint=False)
        rad = np.where(np.arange(15) % 2 == 0, 0.62 * r, 0.26 * r)
        star = np.column_stack(
            [top[0] + rad * np.sin(t), top[1] - 0.05 * r - rad * np.cos(t) * 0.8]
        )
        canvas.shape(
            star, look.leaf if look.filled else None, look.ink if look.filled else look.leaf, w
        )
    else:  # "fan"
        for ang in (-175, -140, -105, -75, -40, -5, 160, 20):
            a = np.radians(ang)
            centre = (top[0] + 0.38 * r * np.cos(a), top[1] + 0.3 * r * np.sin(a))
            leaf = _ellipse_pts(centre, (0.4 * r, 0.12 * r), ang, n=24)
            canvas.shape(
                leaf, look.leaf if look.filled else None, look.ink if look.filled else look.leaf, w
            )
        for dx in (-0.08, 0.08):
            canvas.disc((top[0] + dx * r, top[1] + 0.12 * r), 0.07 * r, look.trunk)


def _shaped_palm(canvas: _Canvas, look: Look, cx: float, cy: float, r: float) -> None:
    w = look.line
    fill = look.leaf if look.filled else None
    edge = look.ink if look.filled else look.leaf
    if look.palm == "round":
        canvas.lines([(cx, cy + 0.95 * r), (cx, cy - 0.1 * r)], look.trunk, 0.14 * r + w)
        canvas.shape(_ellipse_pts((cx, cy - 0.35 * r), (0.55 * r, 0.5 * r), 0), fill, edge, w)
    elif look.palm == "tuft":
        root = (cx, cy + 0.15 * r)
        canvas.lines([(cx, cy + 0.95 * r), root], look.trunk, 0.12 * r + w)
        for ang in (-160, -125, -90, -55, -20):
            a = np.radians(ang)
            tip = (root[0] + 0.85 * r * np.cos(a), root[1] + 0.85 * r * np.sin(a))
            canvas.lines([root, tip], look.leaf, 0.08 * r + w)
    else:  # "triangle", pointing north
        mark = [(cx, cy - 0.8 * r), (cx + 0.7 * r, cy + 0.7 * r), (cx - 0.7 * r, cy + 0.7 * r)]
        canvas.shape(mark, fill, edge, w * (1.0 if look.filled else 1.6))


def _shaped_hut(canvas: _Canvas, look: Look, cx: float, cy: float, r: float) -> None:
    w = look.line
    fill_wall = look.wall if look.filled else None
    fill_roof = look.roof if look.filled else None
    edge = look.ink if look.filled else look.wall
    if look.hut == "tent":
        tent = [(cx - 0.85 * r, cy + 0.7 * r), (cx + 0.85 * r, cy + 0.7 * r), (cx, cy - 0.85 * r)]
        canvas.shape(tent, fill_roof, edge, w)
        canvas.lines([(cx, cy + 0.7 * r), (cx, cy + 0.05 * r)], edge, w * 1.4)
    elif look.hut == "block":
        body = [
            (cx - 0.7 * r, cy - 0.45 * r),
            (cx + 0.7 * r, cy - 0.45 * r),
            (cx + 0.7 * r, cy + 0.7 * r),
            (cx - 0.7 * r, cy + 0.7 * r),
        ]
        canvas.shape(body, fill_wall, edge, w)
        roof = [
            (cx - 0.85 * r, cy - 0.75 * r),
            (cx + 0.85 * r, cy - 0.75 * r),
            (cx + 0.85 * r, cy - 0.45 * r),
            (cx - 0.85 * r, cy - 0.45 * r),
        ]
        canvas.shape(roof, fill_roof, edge, w)
        canvas.disc((cx, cy + 0.15 * r), 0.18 * r, look.ink)
    else:  # "square"
        mark = [
            (cx - 0.6 * r, cy - 0.6 * r),
            (cx + 0.6 * r, cy - 0.6 * r),
            (cx + 0.6 * r, cy + 0.6 * r),
            (cx - 0.6 * r, cy + 0.6 * r),
        ]
        canvas.shape(mark, fill_wall, edge, w * (1.0 if look.filled else 1.6))


def _shaped_shell(canvas: _Canvas, look: Look, cx: float, cy: float, r: float) -> None:
    w = look.line * 0.8
    fill = look.shell if look.filled else None
    edge = look.ink if look.filled else look.shell
    if look.shell_shape == "starfish":
        t = np.linspace(0, 2 * np.pi, 10, endpoint=False)
        rad = np.where(np.arange(10) % 2 == 0, 0.9 * r, 0.38 * r)
        star = np.column_stack([cx + rad * np.sin(t), cy - rad * np.cos(t)])
        canvas.shape(star, fill, edge, w)
    elif look.shell_shape == "ringed":
        canvas.disc((cx, cy), 0.85 * r, edge, w * 1.2)
        canvas.disc((cx, cy), 0.45 * r, look.shell)
    else:  # "disc"
        if look.filled:
            canvas.disc((cx, cy), 0.6 * r, look.shell)
        canvas.disc((cx, cy), 0.6 * r, edge, w * 1.6)


def _hut(
    canvas: _Canvas, look: Look, cx: float, cy: float, r: float, rng: np.random.Generator
) -> None:
    if look.hut in SHAPED_HUTS:
        _shaped_hut(canvas, look, cx, cy, r)
        return
    w = look.line
    fill_wall = look.wall if look.filled else None
    fill_roof = look.roof if look.filled else None
    edge = look.ink if look.filled else look.wall
    if look.hut == "dome":
        dome = _ellipse_pts((cx, cy + 0.55 * r), (0.75 * r, 1.2 * r), 0, 180, 360, 30)
        canvas.shape(dome, fill_roof, edge, w)
        for k in (0.2, 0.5, 0.8):
            band = _ellipse_pts(
                (cx, cy + 0.55 * r),
                (0.75 * r * (1 - k * 0.6), 1.2 * r * (1 - k * 0.9)),
                0,
                190,
                350,
                16,
            )
            canvas.lines(band, edge, w * 0.7)
        canvas.shape(
            [
                (cx - 0.15 * r, cy + 0.55 * r),
                (cx - 0.15 * r, cy + 0.2 * r),
                (cx + 0.15 * r, cy + 0.2 * r),
                (cx + 0.15 * r, cy + 0.55 * r),
            ],
            look.ink,
            edge,
            w,
        )
        return
    body_top = cy - 0.05 * r
    body_bottom = cy + (0.45 if look.hut == "stilts" else 0.7) * r
    body = [
        (cx - 0.55 * r, body_top),
        (cx + 0.55 * r, body_top),
        (cx + 0.55 * r, body_bottom),
        (cx - 0.55 * r, body_bottom),
    ]
    canvas.shape(body, fill_wall, edge, w)
    roof = [
        (cx - 0.85 * r, body_top + 0.05 * r),
        (cx + 0.85 * r, body_top + 0.05 * r),
        (cx + rng.uniform(-0.1, 0.1) * r, cy - 0.85 * r),
    ]
    canvas.shape(roof, fill_roof, edge, w)
    if not look.filled:
        for k in np.linspace(0.2, 0.8, 4):
            canvas.lines(
                [
                    (cx - 0.85 * r * (1 - k), cy - 0.85 * r + k * 0.9 * r),
                    (cx + 0.85 * r * (1 - k), cy - 0.85 * r + k * 0.9 * r),
                ],
                edge,
                w * 0.7,
            )
    door = [
        (cx + 0.05 * r, body_bottom),
        (cx + 0.05 * r, body_bottom - 0.35 * r),
        (cx + 0.3 * r, body_bottom - 0.35 * r),
        (cx + 0.3 * r, body_bottom),
    ]
    canvas.shape(door, look.ink, edge, w * 0.7)
    if look.hut == "stilts":
        for dx in (-0.45, 0.0, 0.45):
            canvas.lines([(cx + dx * r, body_bottom), (cx + dx * r, cy + 0.85 * r)], edge, w * 1.2)


def _shell(
    canvas: _Canvas, look: Look, cx: float, cy: float, r: float, rng: np.random.Generator
) -> None:
    if look.shell_shape in SHAPED_SHELLS:
        _shaped_shell(canvas, look, cx, cy, r)
        return
    w = look.line * 0.8
    fill = look.shell if look.filled else None
    edge = look.ink if look.filled else look.shell
    if look.shell_shape == "spiral":
        t = np.linspace(0, 3.2 * np.pi, 60)
        rad = 0.85 * r * (1 - t / (3.6 * np.pi))
        spiral = np.column_stack([cx + rad * np.cos(t), cy + 0.8 * rad * np.sin(t)])
        canvas.shape(_ellipse_pts((cx, cy), (0.9 * r, 0.72 * r), 15), fill, edge, w)
        canvas.lines(spiral, edge, w)
    elif look.shell_shape == "cone":
        cone = [
            (cx - 0.3 * r, cy - 0.9 * r),
            (cx + 0.8 * r, cy + 0.5 * r),
            (cx - 0.1 * r, cy + 0.8 * r),
            (cx - 0.7 * r, cy + 0.2 * r),
        ]
        canvas.shape(cone, fill, edge, w)
        for k in (0.3, 0.55, 0.8):
            canvas.lines(
                [
                    (cx - 0.3 * r + k * 1.1 * r, cy - 0.9 * r + k * 1.4 * r),
                    (cx - 0.3 * r - k * 0.4 * r, cy - 0.9 * r + k * 1.1 * r),
                ],
                edge,
                w,
            )
    else:  # "fan"
        fan = _ellipse_pts((cx, cy + 0.45 * r), (0.95 * r, 1.15 * r), 0, 195, 345, 24)
        hinge = np.array([[cx, cy + 0.55 * r]])
        canvas.shape(np.vstack([hinge, fan]), fill, edge, w)
        for a in np.linspace(205, 335, 6):
            t = np.radians(a)
            canvas.lines(
                [
                    (cx, cy + 0.55 * r),
                    (cx + 0.85 * r * np.cos(t), cy + 0.45 * r + 1.05 * r * np.sin(t)),
                ],
                edge,
                w * 0.7,
            )
        canvas.shape(
            [
                (cx - 0.25 * r, cy + 0.5 * r),
                (cx + 0.25 * r, cy + 0.5 * r),
                (cx + 0.15 * r, cy + 0.8 * r),
                (cx - 0.15 * r, cy + 0.8 * r),
            ],
            fill,
            edge,
            w,
        )


def _boat(
    canvas: _Canvas, look: Look, cx: float, cy: float, r: float, rng: np.random.Generator
) -> None:
    w = look.line
    fill = look.hull if look.filled else None
    edge = look.ink if look.filled else look.hull
    bow = (
        1 if rng.random() < 0.5 else -1
    )  # which way the boat sails: part of the picture's asymmetry
    hull = np.vstack(
        [
            [(cx - r, cy + 0.05 * r), (cx + r, cy + 0.05 * r - 0.15 * r * bow)],
            _ellipse_pts((cx, cy + 0.05 * r), (0.85 * r, 0.35 * r), 0, 0, 180, 16)
            + np.array([0.1 * r * bow, 0]),
        ]
    )
    if look.boat == "outrigger":
        canvas.shape(_ellipse_pts((cx, cy + 0.15 * r), (r, 0.16 * r), 0), fill, edge, w)
        canvas.shape(_ellipse_pts((cx, cy + 0.75 * r), (0.7 * r, 0.08 * r), 0), fill, edge, w)
        for dx in (-0.4, 0.4):
            canvas.lines([(cx + dx * r, cy + 0.2 * r), (cx + dx * r, cy + 0.72 * r)], edge, w)
        canvas.lines(
            [(cx + 0.2 * r * bow, cy + 0.1 * r), (cx + 0.2 * r * bow, cy - 0.8 * r)], edge, w
        )
        canvas.shape(
            [
                (cx + 0.2 * r * bow, cy - 0.8 * r),
                (cx + 0.2 * r * bow, cy - 0.05 * r),
                (cx + 0.75 * r * bow, cy - 0.1 * r),
            ],
            look.sail if look.filled else None,
            edge,
            w,
        )
        return
    canvas.shape(hull, fill, edge, w)
    mast_x = cx + 0.1 * r * bow
    canvas.lines([(mast_x, cy + 0.05 * r), (mast_x, cy - 0.95 * r)], edge, w)
    if look.boat == "dhow":
        sail = [
            (mast_x - 0.7 * r * bow, cy - 0.1 * r),
            (mast_x + 0.1 * r * bow, cy - 1.0 * r),
            (mast_x + 0.6 * r * bow, cy - 0.2 * r),
        ]
    else:
        sail = [
            (mast_x, cy - 0.9 * r),
            (mast_x, cy - 0.1 * r),
            (mast_x + 0.7 * r * bow, cy - 0.1 * r),
        ]
    canvas.shape(sail, look.sail if look.filled else None, edge, w)


def _lei(canvas: _Canvas, look: Look, edge: str) -> None:
    """Half a flower garland, a half ring centred on the middle of `edge`."""
    q = _quarters_from_south(edge)
    ring = _ellipse_pts((0.5, 1.0), (0.17, 0.17), 0, 180, 360, 24)
    canvas.lines(_turn_points(ring, q), look.ink, look.line * 0.7)
    for a in np.linspace(190, 350, 6):
        t = np.radians(a)
        centre = np.array([[0.5 + 0.17 * np.cos(t), 1.0 + 0.17 * np.sin(t)]])
        ((fx, fy),) = _turn_points(centre, q)
        for p in range(5):
            pa = 2 * np.pi * p / 5 + a
            petal = (fx + 0.018 * np.cos(pa), fy + 0.018 * np.sin(pa))
            if look.filled:
                canvas.disc(petal, 0.014, look.flower)
            else:
                canvas.disc(petal, 0.012, look.flower, look.line * 0.8)
        canvas.disc((fx, fy), 0.009, look.flower_centre)


def _volcano(canvas: _Canvas, look: Look, rng: np.random.Generator) -> None:
    cx = 0.5 + rng.uniform(-0.03, 0.03)
    base, peak = 0.72, 0.3
    mountain = [(cx - 0.3, base), (cx - 0.08, peak), (cx + 0.07, peak + 0.01), (cx + 0.32, base)]
    fill = look.mountain if look.filled else None
    edge = look.ink if look.filled else look.mountain
    canvas.shape(mountain, fill, edge, look.line)
    if not look.filled:
        for k in np.linspace(0.1, 0.9, 7):
            x0 = cx - 0.3 + k * 0.2
            canvas.lines(
                [(x0, base - k * 0.05), (x0 + 0.12, base - k * 0.4)], look.mountain, look.line * 0.6
            )
    flow = _bezier((cx + 0.02, peak + 0.02), (cx + 0.2, 0.45), (cx + 0.12, 0.68), 14)
    canvas.lines(flow, look.lava, 0.03 if look.filled else look.line * 2)
    canvas.shape(
        _ellipse_pts((cx, peak + 0.005), (0.075, 0.02), 0), look.lava, edge, look.line * 0.6
    )
    for k in range(3):
        canvas.shape(
            _blob(
                (cx - 0.06 - 0.06 * k, peak - 0.07 - 0.06 * k),
                (0.04 + 0.01 * k, 0.03 + 0.008 * k),
                rng,
                0.15,
            ),
            look.rock if look.filled else None,
            look.rock if not look.filled else look.ink,
            look.line * 0.6,
        )


SymbolDrawer = Callable[[_Canvas, Look, float, float, float, np.random.Generator], None]
_SYMBOL_SIZE = {"palms": 0.17, "huts": 0.14, "shells": 0.11, "boats": 0.17}
_SYMBOL_COLOURS = ("ink", "trunk", "leaf", "wall", "roof", "shell", "hull", "sail", "lava")


def _place(
    room: NDArray[np.float32], want: float, rng: np.random.Generator
) -> tuple[float, float, float]:
    """Pick the roomiest spot (ties broken at random) and return (x, y, usable radius)."""
    grid = room.shape[0]
    noisy = room + rng.uniform(0, 0.01, room.shape).astype(np.float32)
    y, x = np.unravel_index(int(np.argmax(noisy)), room.shape)
    # Symbols keep at least 70% of their size even when crowded: counts must stay readable.
    radius = float(max(min(want, room[y, x]), 0.7 * want))
    cx, cy = (x + 0.5) / grid, (y + 0.5) / grid
    yy, xx = np.mgrid[0:grid, 0:grid]
    dist = np.hypot((xx + 0.5) / grid - cx, (yy + 0.5) / grid - cy).astype(np.float32)
    np.minimum(room, dist - radius - 0.02, out=room)
    return cx, cy, radius


def _room(mask: NDArray[np.uint8]) -> NDArray[np.float32]:
    """Distance (in tile sides) from each point of `mask` to its edge or the tile's edge."""
    small = cv2.resize(mask, (_GRID, _GRID), interpolation=cv2.INTER_AREA)
    binary = (small >= 128).astype(np.uint8)
    binary = _u8(cv2.copyMakeBorder(binary, 1, 1, 1, 1, cv2.BORDER_CONSTANT, value=0))
    dist = cv2.distanceTransform(binary, cv2.DIST_L2, 5)[1:-1, 1:-1]
    room: NDArray[np.float32] = (dist / _GRID).astype(np.float32)
    return room


def draw_tile(meaning: Meaning, look: Look, px: int, rng: np.random.Generator) -> Image:
    """The upright picture of a tile with `meaning`, px x px, BGR."""
    canvas = _Canvas(px, px, look.sea)
    _paper(canvas, look, rng)
    land_symbols = meaning.palms + meaning.huts
    land = _land_mask(canvas, _land_polygons(meaning, rng, land_symbols + meaning.shells))
    has_land = bool(land.any())
    water = 255 - land
    if has_land:
        shallow = _grow(land, canvas.px(0.045))
        _blend(canvas, shallow, look.sea_light)
    water_room = _room(water)
    # Keep the lei rings free of other marks.
    for edge in meaning.lei:
        q = _quarters_from_south(edge)
        ((ex, ey),) = _turn_points(np.array([[0.5, 1.0]]), q)
        yy, xx = np.mgrid[0:_GRID, 0:_GRID]
        near = np.hypot((xx + 0.5) / _GRID - ex, (yy + 0.5) / _GRID - ey) - 0.23
        np.minimum(water_room, near.astype(np.float32), out=water_room)
    _water_marks(canvas, look, water_room.copy(), rng)
    if has_land:
        if look.land_fill == "flat":
            _blend(canvas, land, look.sand)
            inner = 255 - _grow(255 - land, canvas.px(0.035))
            _blend(canvas, inner, look.land)
        else:
            _blend(canvas, land, look.land)
            spacing = 0.028 if look.land_fill == "hatch" else 0.035

            def fill(c: _Canvas) -> None:
                if look.land_fill == "hatch":
                    for k in np.arange(-1.0, 1.0, spacing):
                        c.lines(
                            [(k, 1.02), (k + 1.04, -0.02)], look.hatch, max(0.004, look.line * 0.6)
                        )
                else:
                    for y in np.arange(0.01, 1.0, spacing):
                        for x in np.arange(0.01 + (y * 37 % 1) * spacing, 1.0, spacing):
                            c.disc((x, y), 0.005, look.hatch)

            _layer(canvas, fill, land)
        _outline(canvas, land, look.outline, look.line * 1.2)
    if meaning.kind is Kind.VOLCANO:
        _volcano(canvas, look, rng)
    for edge in meaning.lei:
        _lei(canvas, look, edge)

    land_room = _room(land)
    if meaning.kind is Kind.VOLCANO:
        land_room[:] = -1
    drawers: dict[str, SymbolDrawer] = {
        "palms": _palm,
        "huts": _hut,
        "shells": _shell,
        "boats": _boat,
    }
    placed: list[tuple[str, float, float, float]] = []
    order = ["palms"] * meaning.palms + ["huts"] * meaning.huts
    order += ["boats"] * meaning.boats + ["shells"] * meaning.shells
    for name in order:
        want = _SYMBOL_SIZE[name] * look.symbol_scale
        on_land = name in ("palms", "huts") or (name == "shells" and water_room.max() < 0.07)
        room = land_room if on_land and has_land else water_room
        x, y, r = _place(room, want, rng)
        other = water_room if room is land_room else land_room
        yy, xx = np.mgrid[0:_GRID, 0:_GRID]
        dist = np.hypot((xx + 0.5) / _GRID - x, (yy + 0.5) / _GRID - y).astype(np.float32)
        np.minimum(other, dist - r - 0.02, out=other)
        placed.append((name, x, y, r))
    # Draw from north to south so lower symbols overlap the ones behind them.
    for name, x, y, r in sorted(placed, key=lambda p: p[2]):
        symbol_seed = int(rng.integers(2**32))
        if not look.filled:
            # Line drawings get a halo of the ground's colour so hatching does not swallow them.
            ground = (
                look.land if has_land and land[int(y * canvas.h), int(x * canvas.w)] else look.sea
            )
            halo = replace(
                look,
                filled=True,
                line=look.line * 4,
                **{colour: ground for colour in _SYMBOL_COLOURS},  # type: ignore[arg-type]
            )
            drawers[name](canvas, halo, x, y, r, np.random.default_rng(symbol_seed))
        drawers[name](canvas, look, x, y, r, np.random.default_rng(symbol_seed))
    return finished(canvas.finish(), look.finish, rng)


# --- ship and boards -----------------------------------------------------------------------


def draw_ship(look: Look, px: int) -> Image:
    """The explorer ship seen from above, bow to the north: BGRA or BGR on white paper."""
    width, height = px // 2, px
    paper = (255, 255, 255)
    canvas = _Canvas(width, height, paper)
    canvas.scale = float(canvas.h)  # unit = ship length; x spans 0..0.5
    cx = 0.25
    t = np.linspace(-1.0, 1.0, 41)
    half_beam = 0.16 * np.sqrt(np.clip(1 - t**2, 0, 1)) * np.where(t < 0, 1.0, 0.85) + 0.02
    ys = 0.5 + 0.46 * t
    hull = np.vstack(
        [np.column_stack([cx - half_beam, ys]), np.column_stack([cx + half_beam, ys])[::-1]]
    )
    canvas.shape(hull, look.ship_wood, _hex("#1b1410"), 0.012)
    deck = np.vstack(
        [
            np.column_stack([cx - half_beam * 0.7, ys]),
            np.column_stack([cx + half_beam * 0.7, ys])[::-1],
        ]
    )
    canvas.poly(deck[2:-2], look.ship_deck)
    for y in np.arange(0.14, 0.9, 0.05):
        canvas.lines([(cx - 0.09, y), (cx + 0.09, y)], look.ship_wood, 0.004)
    for y, span in ((0.36, 0.19), (0.62, 0.16)):
        sail = _ellipse_pts((cx, y), (span, 0.045), 0, 180, 360, 20)
        canvas.shape(
            np.vstack([sail, [(cx + span, y + 0.01), (cx - span, y + 0.01)]]),
            look.ship_sail,
            _hex("#1b1410"),
            0.006,
        )
        canvas.disc((cx, y + 0.01), 0.016, _hex("#3a2616"))
    canvas.shape(
        [(cx - 0.03, 0.05), (cx + 0.03, 0.05), (cx, 0.0)], look.ship_sail, _hex("#1b1410"), 0.004
    )  # pennant at the bow
    image = canvas.finish()
    if not look.ship_alpha:
        return image
    mask = np.zeros((canvas.h, canvas.w), np.uint8)
    cv2.fillPoly(mask, [canvas.pts(hull)], 255, cv2.LINE_AA, _SHIFT)
    cv2.fillPoly(
        mask,
        [canvas.pts([(cx - 0.03, 0.05), (cx + 0.03, 0.05), (cx, 0.0)])],
        255,
        cv2.LINE_AA,
        _SHIFT,
    )
    alpha = cv2.resize(mask, (width, height), interpolation=cv2.INTER_AREA)
    return np.dstack([image, alpha])


def draw_board(layout: BoardLayout, look: Look, cell_px: int, rng: np.random.Generator) -> Image:
    """The empty playing grid of one board side, cropped to the grid's outer edge, upright."""
    canvas = _Canvas(layout.cols * cell_px, layout.rows * cell_px, look.board_sea)
    canvas.scale = float(cell_px * _OVERSAMPLE)  # unit = one cell
    _paper(canvas, replace(look, sea=look.board_sea), rng)
    line = look.line * 2.5
    for r in range(layout.rows):
        for c in range(layout.cols):
            cell = [
                (c + 0.04, r + 0.04),
                (c + 0.96, r + 0.04),
                (c + 0.96, r + 0.96),
                (c + 0.04, r + 0.96),
            ]
            kind = layout.map[r][c]
            if kind == "#":
                canvas.shape(
                    _blob((c + 0.5, r + 0.5), (0.55, 0.5), rng, 0.1), look.sand, look.outline, line
                )
                for k in np.arange(0.1, 1.0, 0.12):
                    canvas.lines([(c + k, r + 0.2), (c + k - 0.1, r + 0.8)], look.hatch, line * 0.3)
            elif kind == "a":
                canvas.shape(cell, look.sea_light, look.board_line, line * 0.5)
            else:
                canvas.lines(cell, look.board_line, line * 0.5, closed=True)
            # a small wave mark somewhere in each cell, so empty cells are not all alike
            wx, wy = c + rng.uniform(0.2, 0.8), r + rng.uniform(0.2, 0.8)
            canvas.lines(
                _ellipse_pts((wx, wy), (0.08, 0.035), 0, 200, 340, 10), look.water_mark, line * 0.4
            )
    atoll = [
        (r, c) for r in range(layout.rows) for c in range(layout.cols) if layout.map[r][c] == "a"
    ]
    if atoll:
        rows = [r for r, _ in atoll]
        cols = [c for _, c in atoll]
        ring = _ellipse_pts(
            ((min(cols) + max(cols) + 1) / 2, (min(rows) + max(rows) + 1) / 2),
            ((max(cols) - min(cols) + 1) / 2 + 0.08, (max(rows) - min(rows) + 1) / 2 + 0.08),
            0,
        )
        canvas.lines(ring, look.sand, line * 2.5, closed=True)
    boat_cells = [(layout.rows - 1, 0), (0, layout.cols - 1), (layout.rows // 2, layout.cols // 2)]
    if atoll:
        boat_cells = [
            atoll[len(atoll) // 2],
            (0, layout.cols // 2),
            (layout.rows - 1, layout.cols // 2),
        ]
    boat_look = replace(look, line=look.line / 1.5)
    for r, c in boat_cells[: layout.printed_boats]:
        _boat(canvas, boat_look, c + 0.72, r + 0.78, 0.16, rng)
    canvas.lines(
        [(0.0, 0.0), (layout.cols, 0.0), (layout.cols, layout.rows), (0.0, layout.rows)],
        look.board_line,
        line,
        closed=True,
    )
    return finished(canvas.finish(), look.finish, rng)


# --- the pack directory --------------------------------------------------------------------


def _tile_rng(seed: int, style: str, tile_id: str) -> np.random.Generator:
    return np.random.default_rng([seed, STYLES.index(style), zlib.crc32(tile_id.encode())])


def _write_png(path: Path, image: Image) -> None:
    ok, data = cv2.imencode(".png", image)
    if not ok:
        raise DataError(str(path), "the picture could not be encoded as PNG")
    path.write_bytes(data.tobytes())


def write_art_pack(
    out_dir: str | Path,
    style: str,
    *,
    catalogue: Catalogue | None = None,
    px: int = 256,
    seed: int = 0,
    look: Look | None = None,
) -> Path:
    """Draw a complete tile pack in `style` (or in `look`, named `style`) for every tile type
    of `catalogue` into `out_dir`.

    `out_dir` must not exist or be empty; the pack appears there whole or not at all.
    Returns the pack directory.
    """
    look = look or style_look(style, seed)
    if px < 128:
        raise DataError(str(out_dir), f"pictures need at least 128 px a side, not {px}")
    catalogue = catalogue or default_catalogue()
    out = Path(out_dir)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise DataError(str(out), "already exists and is not an empty directory")
    out.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    try:
        _write_into(work, look, catalogue, px, seed, style)
        if out.exists():
            out.rmdir()
        os.replace(work, out)
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise
    return out


def _write_into(
    root: Path, look: Look, catalogue: Catalogue, px: int, seed: int, style: str
) -> None:
    for sub in ("tiles", "pieces", "boards"):
        (root / sub).mkdir()
    tiles: list[dict[str, Any]] = []
    for tile in catalogue:
        image = f"tiles/{tile.id}.png"
        _write_png(root / image, draw_tile(tile.meaning, look, px, _tile_rng(seed, style, tile.id)))
        entry: dict[str, Any] = {
            "id": tile.id,
            **tile.meaning.to_json(),
            "count": tile.count,
            "image": image,
        }
        tiles.append(entry)
    _write_png(root / "pieces/ship.png", draw_ship(look, px))
    boards: dict[str, Any] = {}
    pitch = kit.SeatGeometry(1, tile_mm=catalogue.tile_mm).pitch
    cell_px = round(0.75 * px * pitch / catalogue.tile_mm)
    for side, layout in catalogue.boards.items():
        image = f"boards/{side}.png"
        board_rng = _tile_rng(seed, style, f"board-{side}")
        _write_png(root / image, draw_board(layout, look, cell_px, board_rng))
        table = layout.to_json()
        table["image"] = image
        boards[side] = table
    doc: dict[str, Any] = {
        "name": f"synthetic {style} art" + (f" (seed {seed})" if style == "random" else ""),
        "tile_mm": catalogue.tile_mm,
        "tile": tiles,
        "ship": {"image": "pieces/ship.png"},
        "board": boards,
    }
    (root / "pack.toml").write_bytes(tomli_w.dumps(doc).encode("utf-8"))
