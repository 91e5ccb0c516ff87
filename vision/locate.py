"""Where each area of the table kit lies in the frame: one homography per area.

Every seen marker gives four corners whose places on the table are known (vision.kit), so an
area seen by two or more markers has a homography from its millimetre frame to the image,
fitted by least squares over all their corners (with RANSAC from three markers on, so one
sticker stuck far off its place is left out). Orientation comes from the marker ids, never
from the image's axes: the camera may look at the table at any angle, upside down included.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import cv2
import numpy as np
from numpy.typing import NDArray

from companion.catalogue import BoardLayout
from companion.errors import CompanionError
from vision import kit
from vision.config import AreaConfig
from vision.markers import MarkerSighting

Area = str | int
Matrix = NDArray[Any]
DISPLAY = "display"


class TableNotFound(CompanionError):
    """Not one marker of the table kit is in the picture."""


@dataclass(frozen=True, slots=True)
class AreaPose:
    """An area located in the frame: `homography` maps its mm frame to image pixels."""

    area: Area
    homography: Matrix
    markers_seen: int
    error_px: float

    def project(self, points_mm: NDArray[np.float64]) -> NDArray[np.float64]:
        """Image points of area points (N x 2 mm)."""
        pts = np.asarray(points_mm, np.float64).reshape(-1, 1, 2)
        out = np.asarray(cv2.perspectiveTransform(pts, self.homography), np.float64)
        return out.reshape(-1, 2)

    def px_per_mm(self, at_mm: tuple[float, float] = (0.0, 0.0)) -> float:
        """The image scale near a point of the area (geometric mean of the two axes)."""
        x, y = at_mm
        p = self.project(np.array([[x, y], [x + 1, y], [x, y + 1]], np.float64))
        dx = np.linalg.norm(p[1] - p[0])
        dy = np.linalg.norm(p[2] - p[0])
        return float(np.sqrt(dx * dy))


def _fit(
    area: Area,
    nominal: Mapping[int, tuple[float, float]],
    markers: Mapping[int, MarkerSighting],
    config: AreaConfig,
) -> tuple[AreaPose | None, str | None]:
    seen = [i for i in nominal if i in markers]
    name = "the display" if area == DISPLAY else f"seat {area}"
    if len(seen) < 2:
        if seen:
            return None, f"{name}: only 1 of 4 markers seen, not enough to place it"
        return None, None
    obj = np.array([c for i in seen for c in kit.marker_corners(nominal[i])], np.float64).reshape(
        -1, 2
    )
    img = np.concatenate([markers[i].corners for i in seen]).astype(np.float64).reshape(-1, 2)
    # From three markers on, a sticker far off its place is an outlier for RANSAC.
    if len(seen) >= 3:
        scale = np.median([markers[i].side_px for i in seen]) / kit.MARKER_MM
        threshold = max(2.0, config.max_marker_error_mm * scale)
        h, mask = cv2.findHomography(obj, img, cv2.RANSAC, threshold)
        if h is not None and mask is not None and mask.sum() >= 8:
            keep = mask.ravel().astype(bool)
            h, _ = cv2.findHomography(obj[keep], img[keep], 0)
    else:
        h, _ = cv2.findHomography(obj, img, 0)
    if h is None or not np.all(np.isfinite(h)):
        return None, f"{name}: its markers do not fit the table kit's layout"
    pose = AreaPose(area, h, len(seen), 0.0)
    error = float(np.sqrt(np.mean(np.sum((pose.project(obj) - img) ** 2, axis=1))))
    pose = AreaPose(area, h, len(seen), error)
    scale = pose.px_per_mm()
    if not config.min_px_per_mm <= scale <= config.max_px_per_mm:
        return None, f"{name}: its markers do not fit the table kit's layout"
    warning = None
    if len(seen) < 4:
        warning = f"{name}: {len(seen)} of 4 markers seen"
    return pose, warning


def locate(
    markers: Mapping[int, MarkerSighting],
    tile_mm: float,
    layout: BoardLayout,
    config: AreaConfig | None = None,
) -> tuple[AreaPose | None, dict[int, AreaPose], list[str]]:
    """The display's pose, each seen seat's pose, and warnings for what could not be placed."""
    config = config or AreaConfig()
    if not markers:
        raise TableNotFound("No marker of the table kit is in the picture.")
    warnings: list[str] = []
    display, warning = _fit(DISPLAY, kit.DisplayGeometry(tile_mm).marker_centres(), markers, config)
    if warning:
        warnings.append(warning)
    if display is None and not warning:
        warnings.append("the display: none of its markers seen")
    seats: dict[int, AreaPose] = {}
    for seat in kit.SEATS:
        geo = kit.SeatGeometry(seat, layout.rows, layout.cols, tile_mm)
        pose, warning = _fit(seat, geo.marker_centres(), markers, config)
        if warning:
            warnings.append(warning)
        if pose is not None:
            seats[seat] = pose
    return display, seats, warnings


def crop(
    image: NDArray[np.uint8],
    pose: AreaPose,
    centre_mm: tuple[float, float],
    size_mm: float,
    px_per_mm: float,
    turn_deg: float = 0.0,
) -> NDArray[np.uint8]:
    """A square of the area, north up, centred on `centre_mm`, warped straight from the frame
    (one interpolation); `turn_deg` turns the square clockwise in the area's frame."""
    n = max(4, round(size_mm * px_per_mm))
    half = size_mm / 2
    cx, cy = centre_mm
    s = size_mm / n
    # crop pixel (u, v) -> area mm (pixel centres at whole numbers)
    a = np.radians(turn_deg)
    ca, sa = np.cos(a), np.sin(a)
    to_mm = np.array(
        [
            [s * ca, -s * sa, cx + (-half + s / 2) * ca - (-half + s / 2) * sa],
            [s * sa, s * ca, cy + (-half + s / 2) * sa + (-half + s / 2) * ca],
            [0, 0, 1],
        ]
    )
    m = pose.homography @ to_mm
    out = cv2.warpPerspective(
        image,
        m,
        (n, n),
        flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP,
        borderMode=cv2.BORDER_REPLICATE,
    )
    return np.asarray(out, np.uint8)


def visible(
    image_shape: tuple[int, ...], pose: AreaPose, centre_mm: tuple[float, float], half_mm: float
) -> bool:
    """True when a square of the area lies wholly inside the frame."""
    cx, cy = centre_mm
    corners = np.array(
        [
            [cx - half_mm, cy - half_mm],
            [cx + half_mm, cy - half_mm],
            [cx + half_mm, cy + half_mm],
            [cx - half_mm, cy + half_mm],
        ]
    )
    p = pose.project(corners)
    h, w = image_shape[:2]
    return bool(
        np.all(p[:, 0] >= 0)
        and np.all(p[:, 0] < w)
        and np.all(p[:, 1] >= 0)
        and np.all(p[:, 1] < h)
    )
