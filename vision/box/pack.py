"""Load a tile pack (docs/formats.md): pack.toml and the pictures that teach the recogniser a box.

A pack is read, never written: loading checks every picture and reports the first problem as
one sentence naming pack.toml or the picture. Tile meanings come from the catalogue parser
(companion.catalogue); this module adds the pictures and their checks.

Pictures, as loaded:
- tiles: upright face of each tile type, BGR uint8, square (a scan a pixel or two off square
  is resized to square; anything further off is an error).
- ship: the explorer ship seen from above, BGRA uint8. A picture with an alpha channel keeps
  it. A picture without one is taken to be the piece photographed or drawn on white paper:
  near-white pixels connected to the picture's border become transparent (alpha 0), all
  else is opaque (alpha 255), so white details inside the ship (a sail) stay.
- boards: "front" (required) and "atoll" (when the pack has that side) -> the empty playing
  grid, BGR uint8, cropped to the grid's outer edge, upright; its aspect must match cols x rows.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path, PurePosixPath, PureWindowsPath
from types import MappingProxyType

import cv2
import numpy as np

from companion.catalogue import Catalogue, load_catalogue
from companion.errors import DataError
from vision.reader.picture import (
    MAX_PICTURE_PIXELS,
    PictureRefused,
    check_picture,
    decode,
    decoded_bytes,
)

PACK_FILE = "pack.toml"
MIN_PICTURE_PX = 128
#: The most pixels a side of a tile's or the ship's picture may have: a 45 mm tile scanned
#: at 600 dpi is 1063 px a side, and 1600 px hold 67 mm at 600 dpi (the recogniser
#: compares cells of a few hundred px). A larger picture is refused from its header.
MAX_TILE_PX = 1600
#: All of a pack's pictures together may decode to at most this many bytes (at their own
#: bit depth and channels, `vision.reader.picture.decoded_bytes`), and one picture file may
#: be at most this big: a pack of small files each declaring a picture just under the
#: limits of one picture would otherwise fill the Pi's memory at every start.
MAX_PACK_BYTES = 400_000_000
MAX_PICTURE_BYTES = 100_000_000
#: How far off square a tile picture may be (fraction of its side) before it is refused.
SQUARE_TOLERANCE = 0.02
#: How far a board picture's aspect may differ from cols:rows (fraction).
BOARD_ASPECT_TOLERANCE = 0.03
#: A ship picture without alpha: pixels whose every channel is at least this are "paper".
SHIP_PAPER_LEVEL = 235


class PackError(DataError):
    """A tile pack is missing, unreadable or inconsistent."""


@dataclass(frozen=True)
class Pack:
    """One physical box as the recogniser learns it: meanings and pictures."""

    root: Path
    catalogue: Catalogue
    tiles: Mapping[str, np.ndarray]
    ship: np.ndarray
    boards: Mapping[str, np.ndarray]

    @property
    def tile_mm(self) -> float:
        """Side of a tile in millimetres."""
        return self.catalogue.tile_mm

    @property
    def name(self) -> str:
        return self.catalogue.name

    def __reduce__(self) -> tuple[object, tuple[object, ...]]:
        """Pickled with its mappings as plain dicts (another process draws tables of a box)."""
        values = {f.name: getattr(self, f.name) for f in fields(self)}
        plain = {k: dict(v) if isinstance(v, Mapping) else v for k, v in values.items()}
        return _unpickled, (plain,)


def _unpickled(values: dict[str, object]) -> Pack:
    """A pickled Pack again, its mappings read-only as load_pack makes them."""
    kept = {k: MappingProxyType(v) if isinstance(v, dict) else v for k, v in values.items()}
    return Pack(**kept)  # type: ignore[arg-type]


def _safe_path(root: Path, relative: str, what: str, source: str) -> Path:
    """Resolve a picture path from pack.toml, refusing anything outside the pack directory."""
    if not relative.strip():
        raise PackError(source, f"{what} has an empty image path")
    if not relative.isprintable():
        raise PackError(source, f"{what} image {relative!r} has a control character in its path")
    if (
        PurePosixPath(relative).is_absolute()
        or PureWindowsPath(relative).is_absolute()
        or PureWindowsPath(relative).drive
    ):
        raise PackError(
            source, f"{what} image {relative!r} must be a path inside the pack, not absolute"
        )
    parts = PurePosixPath(relative.replace("\\", "/")).parts
    if ".." in parts:
        raise PackError(source, f"{what} image {relative!r} must not leave the pack directory")
    path = root / Path(*parts)
    try:
        inside = path.resolve().is_relative_to(root.resolve())
    except OSError:
        inside = False
    if not inside:
        raise PackError(source, f"{what} image {relative!r} leads outside the pack directory")
    return path


@dataclass
class _Budget:
    """The bytes a pack's pictures may still decode to, all together (MAX_PACK_BYTES)."""

    left: int = field(default_factory=lambda: MAX_PACK_BYTES)

    def take(self, cost: int, what: str, source: str) -> None:
        if cost > self.left:
            raise PackError(
                source,
                f"{what} picture takes the pack's pictures past {MAX_PACK_BYTES // 1_000_000} "
                "MB decoded in all; make the pictures smaller",
            )
        self.left -= cost


def _read_picture(
    path: Path, what: str, budget: _Budget, max_side: int | None = None
) -> np.ndarray:
    """Decode a PNG or JPEG picture as 8-bit, keeping its channels; one sentence on any
    problem. The file's size and the header (size, at most `max_side` px a side, and bytes
    decoded) are checked before decoding (vision.reader.picture)."""
    source = str(path)
    try:
        if path.is_file() and path.stat().st_size > MAX_PICTURE_BYTES:
            raise PackError(
                source,
                f"{what} picture is a file of over {MAX_PICTURE_BYTES // 1_000_000} MB; "
                "a pack picture is smaller",
            )
        data = path.read_bytes()
    except FileNotFoundError:
        raise PackError(source, f"{what} picture is missing") from None
    except IsADirectoryError:
        raise PackError(source, f"{what} picture is a directory, not a picture file") from None
    except OSError as exc:
        raise PackError(source, f"{what} picture cannot be read ({exc.strerror or exc})") from None
    try:
        check_picture(data, MAX_PICTURE_PIXELS, max_side=max_side)
    except PictureRefused as exc:
        raise PackError(source, f"{what} picture {exc}") from None
    cost = decoded_bytes(data)
    assert cost is not None  # check_picture read the header
    budget.take(cost, what, source)
    image = decode(data, cv2.IMREAD_UNCHANGED)
    if image is None:
        raise PackError(
            source, f"{what} picture is not a readable image (empty, damaged or not a picture)"
        )
    if image.dtype == np.uint16:
        image = (image // 257).astype(np.uint8)
    elif image.dtype != np.uint8:
        raise PackError(source, f"{what} picture has unsupported pixel type {image.dtype}")
    if image.ndim == 2:
        image = cv2.cvtColor(image, cv2.COLOR_GRAY2BGR)
    if image.ndim != 3 or image.shape[2] not in (3, 4):
        raise PackError(source, f"{what} picture must have grey, colour or colour+alpha pixels")
    return image


def _over_white(image: np.ndarray) -> np.ndarray:
    """Drop an alpha channel by laying the picture on white paper."""
    if image.shape[2] == 3:
        return image
    alpha = image[:, :, 3:4].astype(np.float32) / 255.0
    flat = image[:, :, :3].astype(np.float32) * alpha + 255.0 * (1.0 - alpha)
    out: np.ndarray = np.clip(flat + 0.5, 0, 255).astype(np.uint8)
    return out


def _check_size(image: np.ndarray, what: str, source: str, minimum: int = MIN_PICTURE_PX) -> None:
    h, w = image.shape[:2]
    if min(h, w) < minimum:
        raise PackError(
            source, f"{what} picture is {w} x {h} px; it must be at least {minimum} px a side"
        )


def _tile_picture(path: Path, tile_id: str, budget: _Budget) -> np.ndarray:
    source, what = str(path), f"tile {tile_id!r}"
    image = _over_white(_read_picture(path, what, budget, MAX_TILE_PX))
    h, w = image.shape[:2]
    if abs(w - h) > SQUARE_TOLERANCE * max(w, h):
        raise PackError(source, f"{what} picture is {w} x {h} px; it must be square")
    _check_size(image, what, source)
    if w != h:
        side = max(w, h)
        image = cv2.resize(image, (side, side), interpolation=cv2.INTER_LINEAR)
    return image


def ship_alpha_from_paper(image: np.ndarray) -> np.ndarray:
    """BGRA ship picture from a BGR one on white paper: paper touching the border is clear."""
    paper = np.all(image >= SHIP_PAPER_LEVEL, axis=2).astype(np.uint8)
    _count, labels = cv2.connectedComponents(paper, connectivity=4)
    border = np.unique(np.concatenate([labels[0, :], labels[-1, :], labels[:, 0], labels[:, -1]]))
    outside = np.isin(labels, border[border > 0]) & (paper > 0)
    alpha = np.where(outside, 0, 255).astype(np.uint8)
    return np.dstack([image, alpha])


def _ship_picture(path: Path, budget: _Budget) -> np.ndarray:
    source, what = str(path), "ship"
    image = _read_picture(path, what, budget, MAX_TILE_PX)
    # The ship is smaller than a tile: its picture needs half a tile picture's minimum.
    _check_size(image, what, source, MIN_PICTURE_PX // 2)
    rgba = image.copy() if image.shape[2] == 4 else ship_alpha_from_paper(image)
    if not np.any(rgba[:, :, 3] > 0):
        raise PackError(source, "ship picture shows no ship (it is all transparent or all white)")
    return rgba


def _board_picture(path: Path, side: str, rows: int, cols: int, budget: _Budget) -> np.ndarray:
    source, what = str(path), f"{side} board"
    # A board cell needs no more pixels than a tile's picture.
    image = _over_white(_read_picture(path, what, budget, max(rows, cols) * MAX_TILE_PX))
    _check_size(image, what, source)
    h, w = image.shape[:2]
    expected = cols / rows
    if abs((w / h) / expected - 1.0) > BOARD_ASPECT_TOLERANCE:
        raise PackError(
            source,
            f"{what} picture is {w} x {h} px, but a grid of {cols} columns by {rows} rows "
            f"needs a width:height of {cols}:{rows}",
        )
    return image


def _frozen(image: np.ndarray) -> np.ndarray:
    image = np.ascontiguousarray(image)
    image.setflags(write=False)
    return image


def load_pack(path: str | Path) -> Pack:
    """Read and check a tile pack directory; raises PackError with one sentence on a problem."""
    root = Path(path)
    if not root.exists():
        raise PackError(str(root), "no such tile pack directory")
    if not root.is_dir():
        raise PackError(str(root), "a tile pack must be a directory holding pack.toml")
    toml = root / PACK_FILE
    if not toml.is_file():
        raise PackError(str(toml), "no pack.toml in this tile pack directory")
    try:
        catalogue = load_catalogue(root, require_images=True)
    except PackError:
        raise
    except DataError as exc:
        raise PackError(exc.source, exc.problem) from None
    source = str(toml)

    budget = _Budget()
    tiles: dict[str, np.ndarray] = {}
    for tile in catalogue:
        assert tile.image is not None  # require_images=True guarantees it
        file = _safe_path(root, tile.image, f"tile {tile.id!r}", source)
        tiles[tile.id] = _frozen(_tile_picture(file, tile.id, budget))

    assert catalogue.ship_image is not None
    ship_file = _safe_path(root, catalogue.ship_image, "[ship]", source)
    ship = _frozen(_ship_picture(ship_file, budget))

    boards: dict[str, np.ndarray] = {}
    for side, layout in catalogue.boards.items():
        if layout.image is None:
            if side == "front":
                raise PackError(
                    source,
                    "[board.front] needs image = the picture of the board's empty front grid",
                )
            continue
        file = _safe_path(root, layout.image, f"[board.{side}]", source)
        boards[side] = _frozen(_board_picture(file, side, layout.rows, layout.cols, budget))

    return Pack(
        root=root,
        catalogue=catalogue,
        tiles=MappingProxyType(tiles),
        ship=ship,
        boards=MappingProxyType(boards),
    )
