"""Teaching the empty board: the picture is taken from the seat the board lies in, whichever
other seats' markers the table shows."""

from __future__ import annotations

import dataclasses

import cv2
import numpy as np
import pytest

from companion.catalogue import default_catalogue
from vision.box.pack import Pack, load_pack
from vision.box.teach import PictureView, StepKind, TeachError, TeachSession
from vision.synthetic.artpacks import write_art_pack
from vision.synthetic.render import CameraSpec, Effects, Rendered, render_table
from vision.synthetic.render_config import BOARD_BORDER_MM
from vision.synthetic.scene import TableScene, empty_seat

EMPTY_DISPLAY = tuple(tuple([None] * 4) for _ in range(4))
CAMERA = CameraSpec.tilted(10.0, 200.0, size=(2000, 760), px_per_mm=1.6, look_at_mm=(0.0, 0.0))
SEAT_PLACES = {1: ((430.0, 0.0), 270.0), 3: ((-430.0, 0.0), 90.0)}


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory) -> Pack:
    """A box of a few tile types in the random art style, with its front board."""
    catalogue = default_catalogue()
    subset = dataclasses.replace(catalogue, types=catalogue.types[::9])
    root = tmp_path_factory.mktemp("boards") / "box"
    return load_pack(write_art_pack(root, "random", catalogue=subset, seed=8))


def _render(source: Pack, seats: tuple[int, ...]) -> Rendered:
    layout = source.catalogue.board("front")
    scene = TableScene(
        EMPTY_DISPLAY,
        None,
        seats=tuple(
            empty_seat(s, layout, origin_mm=SEAT_PLACES[s][0], facing_deg=SEAT_PLACES[s][1])
            for s in seats
        ),
    )
    return render_table(scene, source, CAMERA, Effects.easy(), np.random.default_rng(7))


def _bare_seats(source: Pack, bare: tuple[int, ...]) -> np.ndarray:
    """Seats 1 and 3's markers on the table, the empty board at the seats not in `bare`: the
    frame with both boards, each bare seat's board area taken from a frame of the same table
    without any board (the markers, just outside, stay)."""
    both = _render(source, (1, 3))
    frame = both.image.copy()
    layout = source.catalogue.board("front")
    reach = BOARD_BORDER_MM + 0.5
    half_w = layout.cols * (source.tile_mm + 2) / 2 + reach
    half_h = layout.rows * (source.tile_mm + 2) / 2 + reach
    corners = np.array([[-half_w, -half_h], [half_w, -half_h], [half_w, half_h], [-half_w, half_h]])
    for seat in bare:
        without = _render(source, tuple(s for s in (1, 3) if s != seat)).image
        h = np.asarray(both.homographies[seat], np.float64)
        p = np.column_stack([corners, np.ones(4)]) @ h.T
        mask = np.zeros(frame.shape[:2], np.uint8)
        cv2.fillConvexPoly(mask, np.round(p[:, :2] / p[:, 2:]).astype(np.int32), 1)
        frame = np.where(mask[..., None] > 0, without, frame)
    return np.asarray(frame, np.uint8)


def _board_step(source: Pack) -> TeachSession:
    """A session at its board step (the tiles and the ship taught from the source's own
    pictures)."""
    session = TeachSession(source.catalogue, batch=4)
    session._taught = {t.id: source.tiles[t.id] for t in source.catalogue}
    session._ship = source.ship
    assert session.step.kind is StepKind.BOARD
    return session


@pytest.mark.parametrize(("bare", "board"), [(1, 3), (3, 1)])
def test_the_board_is_taken_from_the_seat_it_lies_in(source: Pack, bare: int, board: int) -> None:
    view = _board_step(source).look(_bare_seats(source, (bare,)))
    assert isinstance(view, PictureView) and view.kind is StepKind.BOARD
    assert view.seat == board
    assert not view.warnings


def test_two_boards_or_none_are_asked_about(source: Pack) -> None:
    session = _board_step(source)
    with pytest.raises(TeachError, match="seats 1 and 3"):
        session.look(_render(source, (1, 3)).image)
    with pytest.raises(TeachError, match="no board is seen"):
        session.look(_bare_seats(source, (1, 3)))
