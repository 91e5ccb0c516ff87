"""Teaching cuts each tile on its own square: tiles laid close (1-4 mm apart, as the kit allows)
whose drop shadows reach a neighbour, drawn by the project's renderer where the truth is exact."""

from __future__ import annotations

import dataclasses
import math

import cv2
import numpy as np
import pytest

from companion.catalogue import default_catalogue
from vision import kit
from vision.box.pack import Pack, load_pack
from vision.box.teach import BatchView, TeachSession
from vision.synthetic.artpacks import write_art_pack
from vision.synthetic.render import CameraSpec, Effects, render_table
from vision.synthetic.render_config import TILE_EDGE_MM
from vision.synthetic.scene import PlacedTile, TableScene

# About the table camera's scale when a box is taught at play resolution (1.6-1.7 px/mm).
CAMERA = CameraSpec.tilted(12.0, 130.0, roll_deg=-20.0, size=(900, 760), px_per_mm=1.7, lens_k=0.06)
# How far apart (mm, tile edge to tile edge) the tiles are laid: in each row from the west,
# in each column from the north (the kit's mat leaves 4 mm between cells, 3 mm once the tiles'
# own 0.5 mm edges are counted).
ROW_GAPS = ((1.5, 3.0, 1.0), (4.0, 1.0, 2.0), (1.0, 1.5, 3.5), (2.0, 1.0, 1.5))
COLUMN_GAPS = ((1.0, 2.5, 1.5), (3.0, 1.0, 4.0), (1.5, 1.5, 1.0), (2.0, 3.0, 1.0))
TURNS = (
    (0.5, -0.5, 0.0, 0.5),
    (-0.5, 0.0, 0.5, -0.5),
    (0.0, 0.5, -0.5, 0.0),
    (0.5, 0.0, 0.0, -0.5),
)


def _laid(gaps: tuple[float, ...]) -> list[float]:
    """Offsets off the cells' centres along a row or column that leave `gaps`, centred."""
    at = [0.0]
    for gap in gaps:
        at.append(at[-1] + gap - 3.0)
    mid = (max(at) + min(at)) / 2
    return [a - mid for a in at]


OFFSETS = tuple(
    tuple((_laid(ROW_GAPS[r])[c], _laid(COLUMN_GAPS[c])[r]) for c in range(4)) for r in range(4)
)
SHADOW_MM = (2.0, 2.0)  # the lamp in the north-west: shadows fall south-east
SHADOW_DARKNESS = 0.4  # the fraction of light the shadow takes from the paper


@pytest.fixture(scope="module")
def box(tmp_path_factory: pytest.TempPathFactory) -> Pack:
    """Sixteen tile types of a box nothing was tuned on."""
    catalogue = default_catalogue()
    subset = dataclasses.replace(catalogue, types=catalogue.types[1::2][:16])
    root = tmp_path_factory.mktemp("close") / "box"
    return load_pack(write_art_pack(root, "random", catalogue=subset, seed=11))


def _tile_corners(tile_mm: float, cell: tuple[int, int], grow_mm: float) -> np.ndarray:
    """The corners (display mm) of the tile laid in `cell`, grown by `grow_mm` on every side."""
    geo = kit.DisplayGeometry(tile_mm)
    cx, cy = geo.cell_centre(*cell)
    ox, oy = OFFSETS[cell[0]][cell[1]]
    t = math.radians(TURNS[cell[0]][cell[1]])
    half = tile_mm / 2 + grow_mm
    square = np.array([(-half, -half), (half, -half), (half, half), (-half, half)])
    turn = np.array([[math.cos(t), -math.sin(t)], [math.sin(t), math.cos(t)]])
    return np.asarray(square @ turn.T + (cx + ox, cy + oy), np.float64)


def _project(h: np.ndarray, points: np.ndarray) -> np.ndarray:
    p = np.column_stack([points, np.ones(len(points))]) @ h.T
    return np.asarray(p[:, :2] / p[:, 2:], np.float64)


def _gaps(tile_mm: float) -> list[float]:
    """The narrowest gap (mm) between each pair of neighbouring tiles as laid."""
    out = []
    for r in range(4):
        for c in range(4):
            for nr, nc in ((r, c + 1), (r + 1, c)):
                if nr < 4 and nc < 4:
                    a = _tile_corners(tile_mm, (r, c), TILE_EDGE_MM)
                    b = _tile_corners(tile_mm, (nr, nc), TILE_EDGE_MM)
                    axis = 0 if nc != c else 1
                    out.append(float(b[:, axis].min() - a[:, axis].max()))
    return out


def close_tiles_frame(pack: Pack, seed: int = 3) -> np.ndarray:
    """Sixteen tiles laid close on the mat, each casting a soft drop shadow south-east, seen
    by a tilted camera at about 1.7 px/mm with a little blur, noise and JPEG."""
    ids = [t.id for t in pack.catalogue]
    grid = tuple(
        tuple(PlacedTile(ids[4 * r + c], 0, OFFSETS[r][c], TURNS[r][c]) for c in range(4))
        for r in range(4)
    )
    rng = np.random.default_rng(seed)
    rendered = render_table(TableScene(grid, None), pack, CAMERA, Effects.none(), rng)
    h = np.asarray(rendered.homographies["display"], np.float64)
    size = rendered.image.shape[1::-1]
    px = float(np.mean(rendered.px_per_mm))
    tiles = np.zeros(size[::-1], np.float32)
    shadow = np.zeros(size[::-1], np.float32)
    for r in range(4):
        for c in range(4):
            for mask, shift in ((tiles, (0.0, 0.0)), (shadow, SHADOW_MM)):
                corners = _tile_corners(pack.tile_mm, (r, c), TILE_EDGE_MM) + shift
                poly = np.round(_project(h, corners) * 16).astype(np.int32)
                cv2.fillPoly(mask, [poly], 1.0, cv2.LINE_AA, 4)
    shadow = np.asarray(cv2.GaussianBlur(shadow, (0, 0), 0.5 * px), np.float32)
    shade = 1.0 - SHADOW_DARKNESS * shadow * (1.0 - np.clip(tiles, 0.0, 1.0))
    image = rendered.image.astype(np.float32) * shade[..., None]
    image = np.asarray(cv2.GaussianBlur(image, (0, 0), 0.7), np.float64)
    image += rng.normal(0.0, 2.0, image.shape)
    ok, data = cv2.imencode(".jpg", np.clip(image, 0, 255).astype(np.uint8))
    assert ok
    return np.asarray(cv2.imdecode(data, cv2.IMREAD_COLOR), np.uint8)


def edges_off_mm(taught: np.ndarray, true: np.ndarray, tile_mm: float) -> float:
    """How far (mm) the farthest edge of a taught tile picture lies from the tile's own edge:
    the taught picture fitted onto the tile's true picture (an affine fit of the two)."""
    n = 256
    a, b = (
        np.asarray(
            cv2.GaussianBlur(
                cv2.resize(
                    cv2.cvtColor(p, cv2.COLOR_BGR2GRAY), (n, n), interpolation=cv2.INTER_AREA
                ),
                (0, 0),
                1.5,
            ),
            np.float32,
        )
        for p in (taught, true)
    )
    warp = np.eye(2, 3, dtype=np.float32)
    criteria = (cv2.TERM_CRITERIA_EPS | cv2.TERM_CRITERIA_COUNT, 200, 1e-6)
    _, fitted = cv2.findTransformECC(b, a, warp, cv2.MOTION_AFFINE, criteria, None, 5)  # type: ignore[call-overload]
    warp = np.asarray(fitted, np.float32)
    back = cv2.invertAffineTransform(warp)  # taught picture px -> true picture px
    mids = np.array([[0, n / 2, 1], [n, n / 2, 1], [n / 2, 0, 1], [n / 2, n, 1]], np.float64)
    seen = mids @ np.asarray(back, np.float64).T
    off = np.abs(seen - mids[:, :2])[[0, 0, 1, 1], [0, 0, 1, 1]]
    return float(off.max() * tile_mm / n)


def test_close_tiles_with_shadows_are_cut_on_their_own_squares(box: Pack) -> None:
    gaps = _gaps(box.tile_mm)
    assert min(gaps) >= 0.5 and max(gaps) <= 4.0 + 1e-6
    assert sum(g < math.hypot(*SHADOW_MM) for g in gaps) >= 8  # shadows reach the neighbours
    frame = close_tiles_frame(box)
    session = TeachSession(box.catalogue, batch=16)
    view = session.look(frame)
    assert isinstance(view, BatchView)
    ids = [t.id for t in box.catalogue]
    off = {}
    for (r, c), cv in view.cells.items():
        assert cv.found, f"{r},{c}: the tile's square is not found"
        assert cv.again == "", f"{r},{c}: {cv.again}"  # a neighbour's shadow covers nothing
        off[ids[4 * r + c]] = edges_off_mm(cv.picture, box.tiles[ids[4 * r + c]], box.tile_mm)
    worst = max(off, key=lambda k: off[k])
    assert off[worst] <= 0.7, f"{worst}: an edge lies {off[worst]:.1f} mm off ({off})"
