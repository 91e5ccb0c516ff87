"""What a camera and a lamp do to a picture, drawn at random for learning (numpy and OpenCV only).

`spoil_crop` spoils a cell crop beyond what the renderer already did (casts of any colour,
tone curves, brightness-dependent noise, a Bayer mosaic and its demosaic, flicker bands,
vignetting, blur, JPEG); `taught_picture` turns a pack's clean picture into what teaching
through the table camera gives (small, soft, noisy, under another light, cut a little off).
"""

from __future__ import annotations

import cv2
import numpy as np
from numpy.typing import NDArray

from vision.cellnet.geometry import NET_PX, net_picture

__all__ = ["scanned_picture", "spoil_crop", "taught_picture"]

Image = NDArray[np.uint8]


def _cast(rng: np.random.Generator, strength: float) -> NDArray[np.float32]:
    """Per-channel gains of a light of any colour."""
    return np.exp(rng.normal(0.0, strength, 3)).astype(np.float32)


def _tone(x: NDArray[np.float32], rng: np.random.Generator) -> NDArray[np.float32]:
    gamma = float(np.exp(rng.uniform(np.log(0.7), np.log(1.4))))
    return np.clip(x, 0.0, 1.0) ** gamma


def _jpeg(image: Image, quality: int) -> Image:
    ok, data = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, quality])
    return np.asarray(cv2.imdecode(data, cv2.IMREAD_COLOR), np.uint8) if ok else image


def _bayer(image: Image) -> Image:
    """Sampled through an RGGB colour filter and demosaiced again."""
    h, w = image.shape[:2]
    mosaic = np.empty((h, w), np.uint8)
    mosaic[0::2, 0::2] = image[0::2, 0::2, 2]
    mosaic[0::2, 1::2] = image[0::2, 1::2, 1]
    mosaic[1::2, 0::2] = image[1::2, 0::2, 1]
    mosaic[1::2, 1::2] = image[1::2, 1::2, 0]
    return np.asarray(cv2.cvtColor(mosaic, cv2.COLOR_BayerBG2BGR), np.uint8)


def spoil_crop(crop: Image, rng: np.random.Generator) -> Image:
    """A crop as another camera under another light might have given it."""
    x = crop.astype(np.float32) / 255.0
    x = x * _cast(rng, 0.12) * float(np.exp(rng.normal(0.0, 0.2)))
    if rng.random() < 0.5:
        x = _tone(x, rng)
    n = x.shape[0]
    yy, xx = np.mgrid[0:n, 0:n].astype(np.float32) / n - 0.5
    if rng.random() < 0.4:  # a slope of light or a vignette's edge across the cell
        a, b = rng.normal(0.0, 0.25, 2)
        x = x * (1.0 + a * xx + b * yy)[..., None]
    if rng.random() < 0.2:  # flicker bands of a mains-lit rolling shutter
        period = rng.uniform(0.3, 1.5)
        x = (
            x
            * (1.0 + rng.uniform(0.03, 0.12) * np.sin(2 * np.pi * (yy / period + rng.random())))[
                ..., None
            ]
        )
    if rng.random() < 0.3:
        sigma = float(rng.uniform(0.4, 1.3)) * n / 64  # 0.35-1.15 mm
        x = np.asarray(cv2.GaussianBlur(x, (0, 0), sigma), np.float32)
    if rng.random() < 0.5:  # shot noise grows with brightness, read noise does not
        shot = rng.uniform(0.0, 0.02)
        read = rng.uniform(0.0, 0.02)
        sigma = np.sqrt(read**2 + shot * np.clip(x, 0, None) / 8.0)
        x = x + rng.normal(0.0, 1.0, x.shape).astype(np.float32) * sigma
    out: Image = np.clip(x * 255.0 + 0.5, 0, 255).astype(np.uint8)
    if rng.random() < 0.15:
        out = _bayer(out)
    if rng.random() < 0.4:
        out = _jpeg(out, int(rng.integers(50, 96)))
    return out


def scanned_picture(
    raw: Image, tile_mm: float, rng: np.random.Generator, px: int = NET_PX
) -> Image:
    """A pack picture as a scanner gives it: sharp, its colours a little off."""
    x = raw.astype(np.float32) * _cast(rng, 0.04) * float(np.exp(rng.normal(0.0, 0.08)))
    return net_picture(np.clip(x, 0, 255).astype(np.uint8), tile_mm, px)


def taught_picture(
    raw: Image,
    tile_mm: float,
    rng: np.random.Generator,
    light: NDArray[np.float32],
    px: int = NET_PX,
) -> Image:
    """A pack picture as teaching through the table camera gives it: the tile at 1.5-4 px/mm,
    soft, noisy, JPEG, under `light` (per-channel gains shared by one teaching session), cut
    up to 4 % off its square and a degree or two askew."""
    side = max(8, round(tile_mm * float(rng.uniform(1.5, 4.0))))
    h, w = raw.shape[:2]
    shift = rng.uniform(-0.04, 0.04, 2) * side
    scale = float(rng.uniform(0.96, 1.04))
    angle = float(rng.uniform(-2.5, 2.5))
    m = np.array(cv2.getRotationMatrix2D((w / 2, h / 2), angle, scale * side / w), np.float64)
    m[:, 2] += np.array([side - w, side - h], np.float64) / 2 + shift
    small = cv2.warpAffine(
        raw, m, (side, side), flags=cv2.INTER_AREA, borderMode=cv2.BORDER_REFLECT
    )
    x = small.astype(np.float32) / 255.0 * light * _cast(rng, 0.03)
    x = np.asarray(cv2.GaussianBlur(x, (0, 0), float(rng.uniform(0.3, 1.2))), np.float32)
    x = x + rng.normal(0.0, rng.uniform(0.0, 0.03), x.shape).astype(np.float32)
    out: Image = np.clip(x * 255.0 + 0.5, 0, 255).astype(np.uint8)
    if rng.random() < 0.7:
        out = _jpeg(out, int(rng.integers(50, 96)))
    return net_picture(out, tile_mm, px)
