"""A camera lens that bends straight lines, and how to straighten its frames.

Everything else in vision/ takes the camera as a pinhole: one homography per area. A wide
lens (the Pi's wide camera module, a webcam) bends the table's straight lines outward from
the frame's centre (barrel distortion), which no homography follows: cells far from the
centre are cut millimetres off. One number describes it well enough here:

    straight = centre + (seen - centre) * (1 + k * r²)

where r is the seen point's distance from the frame's centre in half frame widths (so the
same k holds for every frame size of one camera). k > 0 is a wide lens's barrel, k < 0 a
pincushion, 0 a pinhole. `measure_lens` finds k from the kit's markers: the bend shrinks the
areas far from the frame's centre, which all lie on one table plane at the kit's scale;
`Lens.straighten` gives the frame a pinhole would have taken, on a canvas large enough to
keep all of it (the centre's scale unchanged).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import cv2
import numpy as np
from numpy.typing import NDArray

from companion.catalogue import BoardLayout
from vision.config import AreaConfig
from vision.reader.areas import plane_scales
from vision.reader.markers import MarkerSighting

Image = NDArray[np.uint8]
Points = NDArray[np.float64]

#: A bend smaller than this is within what one photo measures (stickers sit up to 3 mm off)
#: and costs a read little (docs/vision.md, "A lens that bends straight lines").
NEGLIGIBLE_K = 0.02
#: LensWatch speaks of a bend only from this much: one photo's measure may be 0.02 out.
NOTABLE_K = 0.04

#: The bends a lens may have here (a fisheye's are beyond one number), all of which
#: measure_lens searches, in coarse steps, then in fine steps near the best.
_SEARCH = (-0.3, 0.5)
_COARSE = 0.02
_STEP = 0.0025


@dataclass(frozen=True, slots=True)
class Lens:
    """A lens's bend `k` (see the module's docstring); Lens(0) changes nothing."""

    k: float = 0.0

    def __post_init__(self) -> None:
        if not math.isfinite(self.k) or not _SEARCH[0] <= self.k <= _SEARCH[1]:
            raise ValueError(
                f"a lens bend k must lie between {_SEARCH[0]:g} and {_SEARCH[1]:g}, not {self.k!r}"
            )

    def growth(self, width: int, height: int) -> float:
        """How much larger the straightened frame is than a seen one of this size: a
        barrel moves its corners outward; never smaller."""
        return 1.0 + max(self.k, 0.0) * (1.0 + (height / width) ** 2)

    def canvas(self, width: int, height: int) -> tuple[int, int]:
        """The straightened frame's size for a seen frame of this size (`growth`)."""
        grow = self.growth(width, height)
        return round(width * grow), round(height * grow)

    def straighten_points(self, points: Points, width: int, height: int) -> Points:
        """Seen image points (N, 2) of a width x height frame, in the straightened frame."""
        p = np.asarray(points, np.float64).reshape(-1, 2)
        cx, cy, half = _frame(width, height)
        centred = p - np.array([cx, cy])
        r2 = (centred * centred).sum(axis=1) / half**2
        cw, ch = self.canvas(width, height)
        out: Points = centred * (1.0 + self.k * r2)[:, None] + np.array(
            [cx + (cw - width) / 2, cy + (ch - height) / 2]
        )
        return out

    def straighten(self, image: Image) -> Image:
        """The frame a pinhole camera would have taken (see `canvas`); the same frame when
        k is 0."""
        if self.k == 0.0:
            return image
        height, width = image.shape[:2]
        fixed, fraction = _straightening_maps(width, height, self.k)
        out: Image = np.asarray(
            cv2.remap(image, fixed, fraction, cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT),
            np.uint8,
        )
        return out

    def bend(self, image: NDArray[Any]) -> NDArray[Any]:
        """The frame this lens gives of a straight (pinhole) view of the same size (any
        pixel type): what the renderer draws for a camera with this lens."""
        if self.k == 0.0:
            return image
        height, width = image.shape[:2]
        ys, xs = np.mgrid[0:height, 0:width].astype(np.float32)
        cx, cy, half = _frame(width, height)
        dx, dy = (xs - cx) / half, (ys - cy) / half
        grow = 1.0 + np.float32(self.k) * (dx * dx + dy * dy)
        out: NDArray[Any] = np.asarray(
            cv2.remap(
                image,
                cx + (xs - cx) * grow,
                cy + (ys - cy) * grow,
                cv2.INTER_LINEAR,
                borderMode=cv2.BORDER_REPLICATE,
            ),
            image.dtype,
        )
        return out


def _frame(width: int, height: int) -> tuple[float, float, float]:
    """The frame's centre (pixel centres counted from 0) and the unit of r: half its width."""
    return (width - 1) / 2, (height - 1) / 2, width / 2


@lru_cache(maxsize=4)
def _straightening_maps(
    width: int, height: int, k: float
) -> tuple[NDArray[np.int16], NDArray[np.uint16]]:
    """For every pixel of the straightened canvas, where the seen frame shows it (OpenCV's
    fixed-point maps: made once per frame size and lens). Canvas pixels no seen one gives
    (beyond a pincushion's reach) map outside the frame: the border's black."""
    cw, ch = Lens(k).canvas(width, height)
    cx, cy, half = _frame(width, height)
    # Seen radius -> straight radius, as a table (one pass over the canvas, little memory):
    # out to the frame's corners, while the straight radius still grows with the seen one.
    reach = math.hypot(1.0, height / width) + 0.05
    if k < 0:
        reach = min(reach, 0.999 / math.sqrt(-3.0 * k))
    seen = np.linspace(0.0, reach, 8193)
    straight = seen * (1.0 + k * seen**2)
    qx = ((np.arange(cw, dtype=np.float32) - np.float32((cw - width) / 2 + cx)) / np.float32(half))[
        None, :
    ]
    qy = (
        (np.arange(ch, dtype=np.float32) - np.float32((ch - height) / 2 + cy)) / np.float32(half)
    )[:, None]
    radius = np.sqrt(qx * qx + qy * qy)
    ratio = np.interp(radius, straight, seen / np.maximum(straight, 1e-9), right=np.nan).astype(
        np.float32
    )
    ratio[radius < 1e-6] = 1.0
    map_x = cx + qx * ratio * np.float32(half)
    map_y = cy + qy * ratio * np.float32(half)
    outside = ~np.isfinite(map_x) | ~np.isfinite(map_y)
    map_x[outside] = -1.0
    map_y[outside] = -1.0
    fixed, fraction = cv2.convertMaps(map_x, map_y, cv2.CV_16SC2)
    return np.asarray(fixed, np.int16), np.asarray(fraction, np.uint16)


@dataclass(frozen=True, slots=True)
class LensMeasure:
    """A bend measured from photos: k, the areas it rests on (beside each photo's
    reference), and how far (rms, per cent) their scales on the table are off the kit's as
    seen and once straightened."""

    k: float
    areas: int
    seen_off_pct: float
    straightened_off_pct: float


def measure_lens(
    photos: Sequence[tuple[Mapping[int, MarkerSighting], int, int]],
    tile_mm: float,
    seat_layouts: BoardLayout | Mapping[int, BoardLayout],
    config: AreaConfig | None = None,
) -> LensMeasure | None:
    """The bend k of the lens that took photos of the table, each given by its markers and
    its frame's width and height: the k whose straightened marker corners place every area
    on the one table plane at the kit's own scale (vision.reader.areas.plane_scales). A barrel
    shrinks the seats far from the frame's centre by several per cent, where stickers off
    their places by their 3 mm change an area's scale by one or two. None without a photo
    that shows two areas with three markers each. (The kit must be printed at 100 %: a
    sheet printed 2 % small reads as some 0.02 of bend.)"""

    def spread(k: float) -> tuple[float, int]:
        total, count = 0.0, 0
        lens = Lens(k)
        for markers, width, height in photos:
            straight = {
                i: MarkerSighting(i, lens.straighten_points(m.corners, width, height))
                for i, m in markers.items()
            }
            scales = plane_scales(straight, tile_mm, seat_layouts, config)
            if scales:
                # The reference's own stickers sit off too: all scales share a free factor.
                every = np.array([0.0, *scales])
                total += float(np.sum(np.square(every - every.mean())))
                count += len(scales)
        return total, count

    seen, areas = spread(0.0)
    if areas == 0:
        return None
    coarse = np.linspace(*_SEARCH, round((_SEARCH[1] - _SEARCH[0]) / _COARSE) + 1)
    at = float(coarse[int(np.argmin([spread(float(k))[0] for k in coarse]))])
    fine = np.clip(
        np.linspace(at - _COARSE, at + _COARSE, round(2 * _COARSE / _STEP) + 1), *_SEARCH
    )
    costs = np.array([spread(float(k))[0] for k in fine])
    best = int(np.argmin(costs))
    k = float(fine[best])
    if 0 < best < len(fine) - 1:
        y0, y1, y2 = costs[best - 1 : best + 2]
        denom = y0 - 2 * y1 + y2
        if denom > 0:
            k += _STEP * float(np.clip(0.5 * (y0 - y2) / denom, -0.5, 0.5))
    straightened = spread(k)[0]
    return LensMeasure(
        round(k, 4), areas, 100.0 * math.sqrt(seen / areas), 100.0 * math.sqrt(straightened / areas)
    )


class LensWatch:
    """Tells the table once, from the first read whose markers can tell, that the camera's
    lens bends straight lines more than its frames are straightened for (`lens_k`, the bend
    they are straightened by: a wide lens the set-up skipped `companion lens` for, or a
    bend set wrong). Later reads cost nothing."""

    def __init__(
        self,
        tile_mm: float,
        seat_layouts: BoardLayout | Mapping[int, BoardLayout],
        config: AreaConfig | None = None,
        lens_k: float = 0.0,
    ) -> None:
        self.tile_mm = tile_mm
        self.seat_layouts = seat_layouts
        self.config = config
        self.lens = Lens(lens_k)
        self.measured: LensMeasure | None = None

    def hint(self, markers: Mapping[int, MarkerSighting], width: int, height: int) -> str | None:
        """The sentence to show, once, given a read frame's markers and size; None until a
        read tells, and ever after."""
        if self.measured is not None:
            return None
        self.measured = measure_lens(
            [(markers, width, height)], self.tile_mm, self.seat_layouts, self.config
        )
        if self.measured is None or abs(self.measured.k) < NOTABLE_K:
            return None
        # What is left in a straightened frame is measured on its larger canvas: the bends
        # add up nearly, the left one scaled back to the seen frame's width.
        k = self.lens.k + self.measured.k / self.lens.growth(width, height) ** 2
        was = f" (it is set to {self.lens.k:.2f})" if self.lens.k else ""
        return (
            f"The camera's lens bends straight lines (about {k:.2f}): seats near the "
            f"picture's edges read worse. Set lens_k = {k:.2f} under [camera] in the "
            f"settings{was} (or measure it with `companion lens`) and restart."
        )
