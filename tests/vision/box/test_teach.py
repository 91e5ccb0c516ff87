"""Teaching a box: synthetic frames of a box nothing was tuned on become a pack that matches it.

`companion teach` (app/teach.py) is tested in tests/app/test_teach.py on the same frames
(`source` and `script`, which tests/app/conftest.py takes from here)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from pathlib import Path

import cv2
import numpy as np
import pytest

from companion.catalogue import default_catalogue
from companion.tiles import Kind, Meaning
from vision import kit
from vision.box.pack import Pack, load_pack
from vision.box.teach import (
    BatchView,
    CellAnswer,
    PictureView,
    StepKind,
    TeachError,
    TeachSession,
    describe,
)
from vision.reader.areas import locate_display
from vision.reader.markers import detect_markers
from vision.synthetic.artpacks import write_art_pack
from vision.synthetic.render import CameraSpec, Effects, render_table
from vision.synthetic.render_config import SHIP_LENGTH_MM
from vision.synthetic.scene import PlacedTile, TableScene, empty_seat

EMPTY_DISPLAY = tuple(tuple([None] * 4) for _ in range(4))
CAMERA = CameraSpec.tilted(15.0, 40.0, roll_deg=30.0)


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory) -> Pack:
    """The 'real box': six tile types of several kinds in the random art style."""
    catalogue = default_catalogue()
    subset = dataclasses.replace(catalogue, types=catalogue.types[::9])
    root = tmp_path_factory.mktemp("source") / "box"
    return load_pack(write_art_pack(root, "random", catalogue=subset, seed=5))


def _render(scene: TableScene, pack: Pack, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return render_table(scene, pack, CAMERA, Effects.easy(), rng).image


def _display(tiles: Mapping[tuple[int, int], PlacedTile]) -> TableScene:
    grid = [[tiles.get((r, c)) for c in range(4)] for r in range(4)]
    return TableScene(tuple(tuple(row) for row in grid), None)


def _lying(tile_id: str, col: int, rotation: int = 0) -> PlacedTile:
    # Off centre and off square as docs/table-kit.md allows; neighbours turn opposite ways so
    # they never touch.
    return PlacedTile(tile_id, rotation, (2.5, -2.0), 3.0 if col % 2 else -3.0)


@dataclasses.dataclass
class Script:
    """Frames for a whole teaching run and what the player answers."""

    frames: list[np.ndarray]
    first_plan: list[str]
    second_plan: list[str]


@pytest.fixture(scope="module")
def script(source: Pack) -> Script:
    ids = [t.id for t in source.catalogue]
    first = ids[:4]
    # Batch 1: a1 laid turned 90°, b1 and c1 swapped, d1 left empty.
    batch1 = {
        (0, 0): _lying(first[0], 0, rotation=90),
        (0, 1): _lying(first[2], 1),
        (0, 2): _lying(first[1], 2),
    }
    second = [i for i in ids if i not in first[:3]]
    batch2 = {(0, c): _lying(t, c) for c, t in enumerate(second)}
    seat = empty_seat(3, source.catalogue.board("front"), origin_mm=(0.0, 420.0), facing_deg=180.0)
    frames = [
        _render(_display(batch1), source, 1),
        _render(_display(batch2), source, 2),
        _render(TableScene(EMPTY_DISPLAY, 2), source, 3),
        _render(TableScene(EMPTY_DISPLAY, None, seats=(seat,)), source, 4),
    ]
    return Script(frames, first, second)


def _ncc(a: np.ndarray, b: np.ndarray, side: int = 64) -> float:
    a = cv2.resize(a, (side, side), interpolation=cv2.INTER_AREA).astype(float).ravel()
    b = cv2.resize(b, (side, side), interpolation=cv2.INTER_AREA).astype(float).ravel()
    a -= a.mean()
    b -= b.mean()
    return float(a @ b / np.sqrt((a @ a) * (b @ b)))


def _over_grey(bgra: np.ndarray) -> np.ndarray:
    """The opaque part of a BGRA picture, cropped to it, on grey."""
    ys, xs = np.nonzero(bgra[:, :, 3] > 127)
    bgra = bgra[ys.min() : ys.max() + 1, xs.min() : xs.max() + 1]
    alpha = bgra[:, :, 3:4].astype(float) / 255
    return (bgra[:, :, :3] * alpha + 128 * (1 - alpha)).astype(np.uint8)


def _teach(source: Pack, script: Script) -> tuple[TeachSession, tuple[float, float]]:
    """Teach the whole box from the script; returns the session and the ship's size (mm)."""
    session = TeachSession(source.catalogue, name="test box", batch=4)
    first = script.first_plan
    assert session.step.kind is StepKind.TILES
    assert str(session.progress) == "batch 1: 0 of 6 tile types taught"
    assert list(session.step.plan.values()) == first

    view = session.look(script.frames[0])
    assert isinstance(view, BatchView)
    seen = {cell for cell, cv in view.cells.items() if cv.occupied}
    assert seen == {(0, 0), (0, 1), (0, 2)}
    assert view.cells[(0, 3)].suggestion is None  # d1 was planned but left empty
    assert view.cells[(0, 0)].suggestion == CellAnswer(first[0])
    session.accept(
        view,
        {
            (0, 0): CellAnswer(first[0], 90),
            (0, 1): CellAnswer(first[2]),
            (0, 2): CellAnswer(first[1]),
        },
    )
    assert str(session.progress) == "batch 2: 3 of 6 tile types taught"
    assert list(session.step.plan.values()) == script.second_plan

    view = session.look(script.frames[1])
    assert isinstance(view, BatchView)
    session.accept(view)  # every suggestion right
    assert session.step.kind is StepKind.SHIP

    ship = session.look(script.frames[2])
    assert isinstance(ship, PictureView) and ship.kind is StepKind.SHIP
    session.accept(ship)
    board = session.look(script.frames[3])
    assert isinstance(board, PictureView) and board.kind is StepKind.BOARD
    assert board.seat == 3
    session.accept(board)
    assert session.step.kind is StepKind.DONE
    return session, ship.size_mm


def test_teaching_builds_a_pack_that_matches_the_box(
    source: Pack, script: Script, tmp_path: Path
) -> None:
    session, ship_mm = _teach(source, script)
    out = session.write(tmp_path / "taught")
    pack = load_pack(out)

    assert pack.name == "test box"
    assert [t.id for t in pack.catalogue] == [t.id for t in source.catalogue]
    for tile in source.catalogue:
        assert pack.catalogue[tile.id].meaning == tile.meaning
        assert pack.catalogue[tile.id].count == tile.count
        score = _ncc(pack.tiles[tile.id], source.tiles[tile.id])
        assert score > 0.9, f"{tile.id}: taught picture matches its tile only {score:.2f}"
    board = pack.boards["front"]
    assert _ncc(board, source.boards["front"]) > 0.9
    # The ship lay in the north lane, bow east: the source turned that way, at the taught
    # picture's scale, must hold the taught ship's opaque inside (pale tips may be lost
    # against the paper, so the hull is looked for rather than the whole outline compared).
    opaque = pack.ship[:, :, 3] > 127
    assert opaque.mean() > 0.3
    ys, xs = np.nonzero(opaque)
    assert np.ptp(xs) > 1.5 * np.ptp(ys)  # lying east-west, as it lay
    scale = pack.ship.shape[1] / ship_mm[0] * SHIP_LENGTH_MM / max(source.ship.shape[:2])
    turned = cv2.resize(
        np.rot90(source.ship, -1), None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA
    )
    turned = cv2.copyMakeBorder(
        _over_grey(turned), 20, 20, 20, 20, cv2.BORDER_CONSTANT, value=(128, 128, 128)
    )
    inside = cv2.erode(opaque.astype(np.uint8), np.ones((7, 7), np.uint8))
    ys, xs = np.nonzero(inside)
    box = np.s_[ys.min() : ys.max() + 1, xs.min() : xs.max() + 1]
    hull = np.ascontiguousarray(pack.ship[box][:, :, :3])
    match = cv2.matchTemplate(turned, hull, cv2.TM_CCOEFF_NORMED, mask=inside[box] * 255)
    assert np.nanmax(match) > 0.9
    assert sorted(p.name for p in tmp_path.iterdir()) == ["taught"]
    # Teaching again replaces the earlier pack whole; a folder of other things is refused.
    session.write(out)
    assert load_pack(out).name == "test box"
    (tmp_path / "photos").mkdir()
    (tmp_path / "photos" / "holiday.jpg").write_bytes(b"x")
    with pytest.raises(TeachError, match=r"holiday\.jpg"):
        session.write(tmp_path / "photos")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["photos", "taught"]


def test_answers_that_cannot_be_right_are_refused(source: Pack, script: Script) -> None:
    session = TeachSession(source.catalogue, batch=4)
    view = session.look(script.frames[0])
    assert isinstance(view, BatchView)
    first = script.first_plan
    with pytest.raises(TeachError, match="not a tile type"):
        session.accept(view, {(0, 0): CellAnswer("no-such-tile")})
    with pytest.raises(TeachError, match="two cells"):
        session.accept(view, {(0, 0): CellAnswer(first[1]), (0, 2): CellAnswer(first[1])})
    with pytest.raises(TeachError, match="0, 90, 180 or 270"):
        session.accept(view, {(0, 0): CellAnswer(first[0], 45)})
    assert session.taught == ()
    with pytest.raises(TeachError, match="not finished"):
        session.draft()


def test_a_frame_without_the_mat_is_refused_in_one_sentence(source: Pack) -> None:
    session = TeachSession(source.catalogue, batch=4)
    with pytest.raises(TeachError, match="display mat is not found"):
        session.look(np.full((600, 800, 3), 200, np.uint8))


def test_glare_on_a_tile_is_pointed_out(source: Pack, script: Script) -> None:
    frame: np.ndarray = script.frames[1].copy()
    markers = detect_markers(np.asarray(cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY), np.uint8))
    geometry = kit.DisplayGeometry(source.tile_mm)
    pose = locate_display(markers, geometry)
    centre = pose.project([geometry.cell_centre(0, 1)])[0]
    glare = np.zeros(frame.shape[:2], np.float32)
    radius = 15 * pose.px_per_mm()
    cv2.circle(glare, (round(centre[0]), round(centre[1])), round(radius), 1.0, -1)
    glare = np.asarray(cv2.GaussianBlur(glare, (0, 0), radius / 4), np.float32)[..., None]
    frame = (frame * (1 - glare) + 255 * glare).astype(np.uint8)
    view = TeachSession(source.catalogue, batch=4).look(frame)
    assert isinstance(view, BatchView)
    assert [w for w in view.warnings if w.startswith("b1:")], view.warnings
    assert not [w for w in view.warnings if w.startswith(("a1:", "c1:"))]


def test_descriptions_name_what_is_printed() -> None:
    meaning = Meaning(Kind.END, land="S", palms=2, huts=1)
    assert describe(meaning) == "end, land S, 2 palms, 1 hut"
    assert describe(Meaning(Kind.WATER, boats=1, lei="EW")) == "water, 1 boat, lei EW"


def test_the_taught_frames_become_the_tables_first_lessons(
    source: Pack, script: Script, tmp_path: Path
) -> None:
    from companion.reading import EMPTY, CellRead
    from vision.box.judge import EMPTY_CLASS, TILE
    from vision.box.lessons import LessonBook, teach_lessons

    session, _ship_mm = _teach(source, script)
    frames = session.frames
    assert len(frames) == 2  # the two tile batches
    first = script.first_plan
    truth = frames[0][1]
    assert truth[(0, 0)] == CellRead(first[0], 90)
    assert truth[(0, 1)] == CellRead(first[2]) and truth[(0, 2)] == CellRead(first[1])
    assert truth[(0, 3)] == EMPTY and truth[(3, 3)] == EMPTY
    pack = load_pack(session.write(tmp_path / "taught"))
    lessons = teach_lessons(frames, pack)
    tiles = [item for item in lessons if item.group and item.label == TILE]
    assert len(tiles) >= 4  # the tiles laid, each as the matcher proposed it
    assert sum(item.label == EMPTY_CLASS for item in lessons) >= 20
    book = LessonBook(tmp_path / "lessons", pack)
    assert book.add(lessons) == len(lessons)
    kept = book.load()
    assert kept is not None and len(kept) == len(lessons)
    # Each keeps its crop for the cell network, labelled with the confirmed truth.
    assert len(kept.cells) == len(lessons)
    assert {(c.kind, c.truth) for c in kept.cells} >= {("display", CellRead(first[0], 90))}
    assert sum(c.truth == EMPTY for c in kept.cells) >= 20
    # The pack's pictures were cut from these frames: no fair sample for its calibration.
    assert not any(c.sampled for c in kept.cells)
