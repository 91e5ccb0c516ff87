"""Teaching says which tile pictures are worth taking again, and why, one sentence each."""

from __future__ import annotations

import dataclasses

import cv2
import numpy as np
import pytest

from companion.catalogue import default_catalogue
from vision import kit
from vision.box.pack import Pack, load_pack
from vision.box.teach import BatchView, TeachSession
from vision.synthetic.artpacks import write_art_pack
from vision.synthetic.render import CameraSpec, Effects, render_table
from vision.synthetic.scene import PlacedTile, TableScene


def _camera(px_per_mm: float) -> CameraSpec:
    return CameraSpec.tilted(12.0, 130.0, roll_deg=-20.0, size=(900, 760), px_per_mm=px_per_mm)


@pytest.fixture(scope="module")
def box(tmp_path_factory: pytest.TempPathFactory) -> Pack:
    catalogue = default_catalogue()
    subset = dataclasses.replace(catalogue, types=catalogue.types[::9][:4])
    root = tmp_path_factory.mktemp("again") / "box"
    return load_pack(write_art_pack(root, "random", catalogue=subset, seed=5))


def _look(box: Pack, px_per_mm: float, effects: Effects) -> tuple[BatchView, np.ndarray]:
    ids = [t.id for t in box.catalogue]
    row = tuple(PlacedTile(ids[c], 0, (1.0, -1.0), 1.0 if c % 2 else -1.0) for c in range(4))
    empty = tuple([None] * 4)
    scene = TableScene((row, empty, empty, empty), None)
    rendered = render_table(scene, box, _camera(px_per_mm), effects, np.random.default_rng(1))
    view = TeachSession(box.catalogue, batch=4).look(rendered.image)
    assert isinstance(view, BatchView)
    return view, np.asarray(rendered.homographies["display"], np.float64)


def _again(view: BatchView) -> dict[str, str]:
    return {f"{'abcd'[c]}{r + 1}": cv.again for (r, c), cv in view.cells.items() if cv.again}


def test_a_good_picture_is_not_asked_for_again(box: Pack) -> None:
    view, _ = _look(box, 1.7, Effects.easy())
    assert sum(cv.found for cv in view.cells.values()) == 4
    assert _again(view) == {}
    assert not [w for w in view.warnings if "again" in w]


def test_too_small_and_blurred_pictures_are_asked_for_again(box: Pack) -> None:
    small, _ = _look(box, 1.2, Effects.easy())
    assert set(_again(small)) == {"a1", "b1", "c1", "d1"}
    assert all("too small" in why for why in _again(small).values())
    blurred, _ = _look(box, 1.7, Effects(blur_px=2.6, noise=2.0, jpeg_quality=90))
    assert len(_again(blurred)) >= 3 and all("blurred" in w for w in _again(blurred).values())
    sentences = [w for w in blurred.warnings if "worth taking again" in w]
    assert len(sentences) == len(_again(blurred))  # one sentence per picture


def test_a_hand_across_a_tiles_edge_is_pointed_out(box: Pack) -> None:
    # The same table with a hand (a skin-coloured patch) lying across b1's south edge.
    ids = [t.id for t in box.catalogue]
    row = tuple(PlacedTile(ids[c], 0, (1.0, -1.0), 1.0 if c % 2 else -1.0) for c in range(4))
    empty = tuple([None] * 4)
    scene = TableScene((row, empty, empty, empty), None)
    rendered = render_table(scene, box, _camera(1.7), Effects.easy(), np.random.default_rng(1))
    geo = kit.DisplayGeometry(box.tile_mm)
    cx, cy = geo.cell_centre(0, 1)
    hand = np.array(
        [[cx - 12, cy + 10, 1], [cx + 10, cy + 10, 1], [cx + 10, cy + 45, 1], [cx - 12, cy + 45, 1]]
    )
    h = np.asarray(rendered.homographies["display"], np.float64)
    q = hand @ h.T
    frame = rendered.image.copy()
    cv2.fillConvexPoly(frame, np.round(q[:, :2] / q[:, 2:]).astype(np.int32), (120, 150, 205))
    view = TeachSession(box.catalogue, batch=4).look(frame)
    assert isinstance(view, BatchView)
    again = _again(view)
    assert "b1" in again and "across its edge" in again["b1"]
    assert "a1" not in again and "d1" not in again
