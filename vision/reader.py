"""Reading a whole table: markers → area poses → cell crops → tiles, the ship, the storage.

`read_table` is the pure pipeline `companion read` and the live companion use. A frame with
no marker of the kit raises TableNotFound; an area that cannot be placed is left out with a
warning (the display's cells then read unknown and the ship null).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import cv2
import numpy as np
from numpy.typing import NDArray

from companion.reading import UNKNOWN, CellRead, SeatRead, TableRead
from vision import kit
from vision.classify import CellConfig, TileModel
from vision.config import AreaConfig, MarkerConfig
from vision.locate import AreaPose, crop, locate, visible
from vision.markers import detect_markers
from vision.pack import Pack

Image = NDArray[np.uint8]


@dataclass(frozen=True, slots=True)
class ReaderConfig:
    """The thresholds of every stage of a read."""

    markers: MarkerConfig = field(default_factory=MarkerConfig)
    areas: AreaConfig = field(default_factory=AreaConfig)
    cells: CellConfig = field(default_factory=CellConfig)


_MODELS: dict[tuple[int, CellConfig], TileModel] = {}


def model_for(pack: Pack, config: CellConfig) -> TileModel:
    """The pack's learned model (made once per pack and config)."""
    key = (id(pack), config)
    model = _MODELS.get(key)
    if model is None or model.pack is not pack:
        model = _MODELS[key] = TileModel(pack, config)
    return model


def _cell(
    image: Image,
    pose: AreaPose,
    centre: tuple[float, float],
    model: TileModel,
    board: Image | None = None,
) -> CellRead:
    half = model.crop_mm / 2
    if not visible(image.shape, pose, centre, half):
        return UNKNOWN
    square = crop(image, pose, centre, model.crop_mm, model.config.px_per_mm)
    return model.read_cell(square, board=board)


def read_table(
    image: Image, pack: Pack, *, side: str = "front", config: ReaderConfig | None = None
) -> TableRead:
    """Everything the camera can tell about the table in one BGR frame."""
    config = config or ReaderConfig()
    model = model_for(pack, config.cells)
    layout = pack.catalogue.board(side)
    grey = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY) if image.ndim == 3 else image
    colour = image if image.ndim == 3 else cv2.cvtColor(image, cv2.COLOR_GRAY2BGR)
    markers = detect_markers(grey, config.markers)
    display_pose, seat_poses, warnings = locate(markers, pack.tile_mm, layout, config.areas)

    tile_mm = pack.tile_mm
    display_geo = kit.DisplayGeometry(tile_mm)
    ship: int | None = None
    if display_pose is None:
        display = tuple(tuple(UNKNOWN for _ in range(4)) for _ in range(4))
    else:
        display = tuple(
            tuple(
                _cell(colour, display_pose, display_geo.cell_centre(r, c), model) for c in range(4)
            )
            for r in range(4)
        )
        squares = []
        size = model.config.ship_square_mm
        for p in range(kit.SHIP_POSITIONS):
            centre = display_geo.ship_centre(p)
            squares.append(crop(colour, display_pose, centre, size, model.config.ship_px_per_mm))
        ship, _ = model.read_ship(squares)
        if ship is None:
            warnings.append("the explorer ship was not seen clearly")

    seats: dict[int, SeatRead] = {}
    for seat, pose in sorted(seat_poses.items()):
        geo = kit.SeatGeometry(seat, layout.rows, layout.cols, tile_mm)
        cells = tuple(
            tuple(
                _cell(colour, pose, geo.cell_centre(r, c), model, model.board_reference(side, r, c))
                if layout.playable((r, c))
                else None
                for c in range(layout.cols)
            )
            for r in range(layout.rows)
        )
        storage = _cell(colour, pose, geo.storage_centre(), model)
        seats[seat] = SeatRead(cells, storage)
    return TableRead(display, ship, seats, tuple(warnings))
