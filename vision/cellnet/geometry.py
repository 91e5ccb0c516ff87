"""What the cell network sees: a cell's crop and a pack picture, each as a small square.

Both sides go through the same geometry, so a picture and a crop of the same tile line up:
the tile square plus `CROP_MARGIN_MM` each side (vision.reader.areas' crop contract), north
up, resized to `NET_PX` a side. A pack picture fills the tile square; its margin is `MARGIN_GREY`
(the network learns to take it for "whatever lies round a tile").
"""

from __future__ import annotations

import cv2
import numpy as np
from numpy.typing import NDArray

from vision.config import CROP_MARGIN_MM

__all__ = [
    "FEATURE_CELLS",
    "MARGIN_GREY",
    "NET_PX",
    "REF_WINDOW",
    "net_crop",
    "net_picture",
    "turned",
]

#: The network's input side (px): 96 px over tile + 2 margins (57 mm for a 45 mm tile), some
#: 1.7 px/mm, about what the kit's camera gives (1.5-4 px/mm): a palm keeps its few pixels.
NET_PX = 96
#: The feature map's side: the network halves its input three times.
FEATURE_CELLS = NET_PX // 8
#: The part of a picture's feature map compared with a crop's: its middle, the tile itself.
REF_WINDOW = FEATURE_CELLS - 2
MARGIN_GREY = 128


def net_crop(
    crop: NDArray[np.uint8], crop_mm: float, tile_mm: float, px: int = NET_PX
) -> NDArray[np.uint8]:
    """A cell crop (square, north up, `crop_mm` a side) as the network's input: its middle
    tile + 2 margins resized to `px` (a storage slot's larger crop is cut to it)."""
    side = crop.shape[0]
    want = (tile_mm + 2 * CROP_MARGIN_MM) / crop_mm * side
    if want < side - 1:
        lo = (side - want) / 2
        m = np.array([[px / want, 0, -lo * px / want], [0, px / want, -lo * px / want]])
        flags = cv2.INTER_AREA if want > px else cv2.INTER_LINEAR
        out = cv2.warpAffine(crop, m, (px, px), flags=flags, borderMode=cv2.BORDER_REPLICATE)
        return np.asarray(out, np.uint8)
    flags = cv2.INTER_AREA if side > px else cv2.INTER_LINEAR
    return np.asarray(cv2.resize(crop, (px, px), interpolation=flags), np.uint8)


def net_picture(picture: NDArray[np.uint8], tile_mm: float, px: int = NET_PX) -> NDArray[np.uint8]:
    """A pack's tile picture (upright, any size) laid in the network's crop geometry at `px`
    a side: the tile square in the middle, MARGIN_GREY round it."""
    inner = px * tile_mm / (tile_mm + 2 * CROP_MARGIN_MM)
    h, w = picture.shape[:2]
    lo = (px - inner) / 2
    m = np.array([[inner / w, 0, lo], [0, inner / h, lo]])
    flags = cv2.INTER_AREA if max(h, w) > inner else cv2.INTER_LINEAR
    grey = (MARGIN_GREY,) * 3
    out = cv2.warpAffine(
        picture, m, (px, px), flags=flags, borderMode=cv2.BORDER_CONSTANT, borderValue=grey
    )
    return np.asarray(out, np.uint8)


def turned(picture: NDArray[np.uint8], rotation: int) -> NDArray[np.uint8]:
    """A picture turned clockwise by `rotation` degrees (a multiple of 90), as a tile lying
    at that rotation is seen north up."""
    k = (rotation // 90) % 4
    return np.ascontiguousarray(np.rot90(picture, -k))
