"""Teaching the explorer ship: its taught picture keeps the whole piece, thin ends included."""

from __future__ import annotations

import dataclasses

import cv2
import numpy as np
import pytest

from companion.catalogue import default_catalogue
from vision.box.pack import Pack, load_pack
from vision.box.teach import PictureView, StepKind, TeachSession
from vision.synthetic.artpacks import write_art_pack
from vision.synthetic.render import CameraSpec, Effects, render_table
from vision.synthetic.render_config import SHIP_LENGTH_MM
from vision.synthetic.scene import TableScene

EMPTY_DISPLAY = tuple(tuple([None] * 4) for _ in range(4))
# The table camera at play resolution (about 1.7 px/mm).
CAMERA = CameraSpec.tilted(12.0, 130.0, roll_deg=-20.0, size=(900, 760), px_per_mm=1.7)


def _ship_with_thin_ends() -> np.ndarray:
    """A dark hull whose pale wooden spars, 0.7 mm thick, reach 4 mm beyond it at both ends
    (BGRA)."""
    w, h = 600, 200
    mm = w / SHIP_LENGTH_MM
    ship = np.zeros((h, w, 4), np.uint8)
    spar = (150, 185, 215, 255)
    cv2.line(ship, (0, h // 2), (w - 1, h // 2), spar, round(0.7 * mm), cv2.LINE_8)
    hull = (w // 2 - round(4 * mm), 55)
    cv2.ellipse(ship, (w // 2, h // 2), hull, 0, 0, 360, (30, 30, 150, 255), -1)
    return ship


@pytest.fixture(scope="module")
def box(tmp_path_factory: pytest.TempPathFactory) -> Pack:
    catalogue = default_catalogue()
    subset = dataclasses.replace(catalogue, types=catalogue.types[:2])
    root = write_art_pack(tmp_path_factory.mktemp("ship") / "box", "lagoon", catalogue=subset)
    cv2.imwrite(str(root / "pieces" / "ship.png"), _ship_with_thin_ends())
    return load_pack(root)


def test_the_taught_ship_keeps_its_ends(box: Pack) -> None:
    session = TeachSession(box.catalogue, batch=2)
    session._taught = {t.id: box.tiles[t.id] for t in box.catalogue}
    assert session.step.kind is StepKind.SHIP
    frame = render_table(
        TableScene(EMPTY_DISPLAY, 1), box, CAMERA, Effects.easy(), np.random.default_rng(2)
    ).image
    view = session.look(frame)
    assert isinstance(view, PictureView) and view.kind is StepKind.SHIP
    opaque = view.picture[:, :, 3] > 127
    xs = np.nonzero(opaque.any(axis=0))[0]
    mm_per_px = view.size_mm[0] / view.picture.shape[1]
    length = (xs.max() - xs.min() + 1) * mm_per_px
    # The source ship's own opaque length, drawn SHIP_LENGTH_MM long along its longer side.
    alpha = box.ship[:, :, 3] > 127
    long_axis = 0 if box.ship.shape[1] >= box.ship.shape[0] else 1
    spans = np.nonzero(alpha.any(axis=long_axis))[0]
    true = (spans.max() - spans.min() + 1) * SHIP_LENGTH_MM / max(box.ship.shape[:2])
    assert length >= true - 1.0, f"the taught ship is {length:.1f} mm long, the piece {true:.1f}"
