"""Cells read together (a table's crops: mat, board and storage cells of two sizes, empty,
covered and holding tiles) get the same answers as each cell read on its own, in order."""

from __future__ import annotations

import cv2
import numpy as np
import pytest
from numpy.typing import NDArray

from tests.vision.reader.test_recognise import lay_tile, photograph
from vision import kit
from vision.box.pack import Pack
from vision.box.tilemodel import learn_pack
from vision.config import PX_PER_MM
from vision.reader.areas import picture_crop, tile_crop_mm
from vision.reader.recognise import match_cells, read_cell, read_cells

Image = NDArray[np.uint8]


def _table_crops(pack: Pack, rng: np.random.Generator) -> tuple[list[Image], list[Image | None]]:
    layout = pack.catalogue.board("front")
    geo = kit.SeatGeometry(1, layout.rows, layout.cols, pack.tile_mm)
    extent = (layout.cols * geo.pitch, layout.rows * geo.pitch)
    size = tile_crop_mm(pack.tile_mm)
    names = [t.id for t in pack.catalogue][:6]
    crops: list[Image] = []
    refs: list[Image | None] = []
    for i, name in enumerate(names):  # display cells: tiles, turned and a little off
        laid = lay_tile(pack.tiles[name], rotation=90 * (i % 4), offset=(0.8, -1.2), turn=1.5)
        crops.append(photograph(laid, rng, gain=(0.95, 1.0, 1.05), gradient=0.3))
        refs.append(None)
    crops.append(photograph(lay_tile(None), rng))  # an empty display cell
    refs.append(None)
    covered = lay_tile(pack.tiles[names[0]])
    n = covered.shape[0]
    cv2.rectangle(covered, (0, int(n * 0.3)), (n, int(n * 0.7)), (95, 130, 185), -1)
    crops.append(photograph(covered, rng))  # an arm across a tile
    refs.append(None)
    for r, c in [(0, 0), (1, 2), (2, 1), (3, 3)]:  # board cells: empty, or with a tile
        ref = picture_crop(pack.boards["front"], extent, geo.cell_centre(r, c), size, PX_PER_MM)
        crops.append(photograph(ref.astype(np.float32), rng, gain=(0.9, 0.95, 1.05)))
        refs.append(ref)
        laid = lay_tile(
            pack.tiles[names[r]], rotation=90 * c, offset=(1.0, -1.5), turn=2.0, background=ref
        )
        crops.append(photograph(laid, rng))
        refs.append(ref)
    # Storage cards: their crops are a little bigger (a wider margin).
    for picture in (None, pack.tiles[names[1]]):
        crop = photograph(lay_tile(picture, offset=(-1.0, 0.5)), rng)
        crops.append(np.pad(crop, ((3, 3), (3, 3), (0, 0)), mode="edge"))
        refs.append(None)
    return crops, refs


@pytest.mark.parametrize("style", ["ink", "random"])
def test_cells_read_together_read_as_alone(style: str, pack_ink: Pack, pack_random: Pack) -> None:
    pack = {"ink": pack_ink, "random": pack_random}[style]
    model = learn_pack(pack, PX_PER_MM)
    crops, refs = _table_crops(pack, np.random.default_rng(21))
    together = read_cells(crops, model, refs)
    alone = [read_cell(crop, model, ref) for crop, ref in zip(crops, refs, strict=True)]
    assert len(together) == len(crops)
    for a, b in zip(together, alone, strict=True):
        assert (a.tile, a.rotation, a.empty) == (b.tile, b.rotation, b.empty)
        assert a.confidence == pytest.approx(b.confidence, abs=2e-3)
    # The table is not trivial: tiles, empty cells and an unknown among them.
    assert any(r.tile for r in together) and any(r.empty for r in together)


def test_cells_wanted_read_as_with_the_rest(pack_ink: Pack) -> None:
    """Cells past `wanted` only lend their looks: the cells read get the answers they get
    when every cell is read."""
    model = learn_pack(pack_ink, PX_PER_MM)
    crops, refs = _table_crops(pack_ink, np.random.default_rng(22))
    groups = ["display" if ref is None else None for ref in refs]
    every = match_cells(crops, model, refs, light_groups=groups)
    some = match_cells(crops, model, refs, light_groups=groups, wanted=5)
    assert len(some) == 5
    for a, b in zip(some, every, strict=False):
        assert a.read == b.read
