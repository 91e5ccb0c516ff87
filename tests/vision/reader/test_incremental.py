"""Reading only what changed (vision.reader.incremental): the gate never takes a changed cell for an
unchanged one on rendered turns, a moved table and a forgotten read make whole reads, and a
read of what changed has the form of a whole read."""

from __future__ import annotations

import random
import re
from concurrent.futures import ThreadPoolExecutor
from itertools import combinations

import cv2
import numpy as np
import pytest

from app.bench.changes import _content, run_gate, turns
from companion.bots import GreedyPlayer
from companion.game import Seat, new_game
from companion.reading import TableRead
from companion.rules import rules_for
from companion.state import GameState
from vision.box.pack import Pack
from vision.config import JudgeConfig, VisionConfig
from vision.reader.incremental import (
    ChangeConfig,
    IncrementalReader,
    _cell_reads,
    _dft_side,
    difference,
    differences,
    kept_look,
    look_of,
    marker_patches,
    shift,
    table_moved,
)
from vision.reader.read import Slot
from vision.synthetic import table_scene
from vision.synthetic.render import CameraSpec, Effects, render_table
from vision.synthetic.scene import scene_points
from vision.synthetic.table_scene import scene_for_state

pytestmark = pytest.mark.slow


PAPER = (240, 244, 246)


def _on_paper(picture: np.ndarray, margin_mm: float, tile_mm: float) -> np.ndarray:
    """A tile's picture on paper, margin_mm round it."""
    m = max(1, round(picture.shape[0] * margin_mm / tile_mm))
    tile = np.ascontiguousarray(picture[:, :, :3])
    return cv2.copyMakeBorder(tile, m, m, m, m, cv2.BORDER_CONSTANT, value=PAPER)


@pytest.mark.parametrize("style", ["lagoon", "ink", "random"])
def test_no_two_tiles_nor_a_tile_and_paper_look_alike_and_light_alone_changes_nothing(
    style: str, request: pytest.FixtureRequest
) -> None:
    pack: Pack = request.getfixturevalue(f"pack_{style}")
    cfg = ChangeConfig()
    pictures = dict(pack.tiles)
    side = next(iter(pictures.values())).shape[0]
    # A plain tile, one colour edge to edge, shows on paper by its cut edge alone.
    pictures["plain"] = np.full((side, side, 3), (150, 90, 30), np.uint8)
    pictures["paper"] = np.full((side, side, 3), PAPER, np.uint8)  # an empty cell
    border = cfg.look_border_mm  # the look: the tile and its border
    looks = {t: look_of(_on_paper(p, border, pack.tile_mm), cfg) for t, p in pictures.items()}
    least = min(difference(looks[a], looks[b], cfg) for a, b in combinations(sorted(looks), 2))
    assert least > 3 * cfg.threshold
    n = cfg.look_px
    ramp = np.linspace(0.8, 1.1, n, dtype=np.float32)[None, :, None]
    for look in looks.values():
        lit = look * np.float32(0.7) * ramp + np.float32(25.0)  # dimmer, warmer to one side
        assert difference(look, lit, cfg) < cfg.threshold


def test_a_marker_patch_that_did_not_move_shows_no_shift() -> None:
    rng = np.random.default_rng(4)
    for least in range(40, 90):
        side = _dft_side(least)
        assert side >= least
        patch = cv2.GaussianBlur(rng.uniform(0, 255, (side, _dft_side(side + 6))), (0, 0), 2)
        patch = patch.astype(np.float32)
        frame = np.zeros((side + 20, side + 40), np.uint8)
        frame[10 : 10 + side, 12 : 12 + patch.shape[1]] = np.round(patch).astype(np.uint8)
        still = np.round(patch).astype(np.float32)
        dx, dy, response = shift(still, (12, 10), frame)
        assert abs(dx) < 1e-3 and abs(dy) < 1e-3 and response > 0.5


def test_a_kept_marker_patch_is_the_same_after_every_read() -> None:
    rng = np.random.default_rng(5)
    side = _dft_side(60)
    picture = cv2.GaussianBlur(rng.uniform(0, 255, (side + 40, side + 40)), (0, 0), 2)
    frame = np.round(picture).astype(np.uint8)
    patch = frame[20 : 20 + side, 20 : 20 + side].astype(np.float32)
    kept = patch.copy()
    moved = np.roll(frame, (1, 2), axis=(0, 1))  # 2 px right, 1 px down
    first = shift(patch, (20, 20), moved)
    for _ in range(5):
        assert shift(patch, (20, 20), moved) == first
    np.testing.assert_array_equal(patch, kept)
    assert first[0] == pytest.approx(2.0, abs=0.5) and first[1] == pytest.approx(1.0, abs=0.5)


def _lstsq_difference(a: np.ndarray, b: np.ndarray, cfg: ChangeConfig) -> float:
    """`difference` worked out one channel at a time with numpy.linalg.lstsq (float64)."""
    n, m, channels = a.shape
    v, u = np.mgrid[0:n, 0:m].astype(np.float64)
    u = (u - (m - 1) / 2).ravel() / m
    v = (v - (n - 1) / 2).ravel() / n
    worst = 0.0
    for p, q in ((a, b), (b, a)):
        res = np.empty((n * m, channels), np.float32)
        for k in range(channels):
            x, y = p[:, :, k].ravel().astype(np.float64), q[:, :, k].ravel().astype(np.float64)
            design = np.stack([x, x * u, x * v, np.ones_like(x), u, v], axis=1)
            coef, *_ = np.linalg.lstsq(design, y, rcond=None)
            res[:, k] = y - design @ coef
        r = (res * res).mean(axis=1).reshape(n, m)
        s = (n // cfg.block_px) * cfg.block_px
        k = cfg.block_px
        worst = max(worst, float(r[:s, :s].reshape(s // k, k, s // k, k).mean(axis=(1, 3)).max()))
    return float(np.sqrt(worst))


def test_looks_compared_at_once_as_one_by_one() -> None:
    cfg = ChangeConfig()
    rng = np.random.default_rng(3)
    shape = (cfg.look_px, cfg.look_px, 3)
    a = [rng.uniform(0, 255, shape).astype(np.float32) for _ in range(6)]
    b = [a[0] * 0.8 + 9, rng.uniform(0, 255, shape), a[2] + rng.normal(0, 2, shape)]
    flat = np.float32(140) + rng.normal(0, 0.5, shape).astype(np.float32)
    a += [flat]
    b += [a[3].copy(), a[4] * 0.9, a[5] + 30 * (rng.uniform(size=shape) > 0.95), flat * 1.1]
    # A look of one colour (an empty mat) explains only a light across the cell.
    a.append(np.full(shape, 7, np.float32))
    b.append(rng.uniform(0, 255, shape))
    b = [np.asarray(x, np.float32) for x in b]
    got = differences(a, b, cfg)
    assert len(got) == len(a)
    for x, y, d in zip(a, b, got, strict=True):
        assert d == pytest.approx(_lstsq_difference(x, y, cfg), rel=1e-4, abs=1e-3)
        assert d == pytest.approx(difference(x, y, cfg), rel=1e-6)
    assert differences([], [], cfg) == []


def test_more_looks_than_are_fitted_at_once_compare_as_one_by_one() -> None:
    cfg = ChangeConfig()
    rng = np.random.default_rng(8)
    shape = (cfg.look_px, cfg.look_px, 3)
    a = [rng.uniform(0, 255, shape).astype(np.float32) for _ in range(61)]
    b = [np.asarray(x * rng.uniform(0.7, 1.2) + rng.normal(0, 3, shape), np.float32) for x in a]
    b[40] = rng.uniform(0, 255, shape).astype(np.float32)  # a changed cell past the first fits
    got = differences(a, b, cfg)
    assert got == pytest.approx([difference(x, y, cfg) for x, y in zip(a, b, strict=True)])
    assert got[40] > 10 * max(got[:40] + got[41:])


def test_an_unchanged_cells_kept_look_is_the_mean_of_its_last_looks_and_less_noisy() -> None:
    cfg = ChangeConfig()
    rng = np.random.default_rng(4)
    truth = rng.uniform(0, 255, (cfg.look_px, cfg.look_px, 3)).astype(np.float32)

    def seen() -> np.ndarray:
        return np.asarray(truth + rng.normal(0, 3, truth.shape), np.float32)

    looks = [seen() for _ in range(cfg.look_frames + 4)]
    kept, frames = looks[0], 1
    for n, look in enumerate(looks[1:], start=2):
        kept, frames = kept_look(kept, frames, look, cfg)
        assert frames == min(n, cfg.look_frames)
        if n <= cfg.look_frames:
            assert np.allclose(kept, np.mean(looks[:n], axis=0), atol=1e-3)
    assert frames == cfg.look_frames
    assert np.std(kept - truth) < 0.5 * np.std(looks[0] - truth)
    # A new look differs less from the kept mean than from one look alone; a changed cell
    # differs as much from either.
    new = [seen() for _ in range(20)]
    assert np.mean(differences([kept] * 20, new, cfg)) < 0.85 * np.mean(
        differences([looks[0]] * 20, new, cfg)
    )
    other = rng.uniform(0, 255, truth.shape).astype(np.float32)
    assert difference(kept, other, cfg) > 10 * cfg.threshold


@pytest.mark.parametrize("seed", [5, 6])
def test_a_changed_cell_is_never_taken_as_unchanged_on_rendered_turns(
    pack_lagoon: Pack, seed: int
) -> None:
    count = run_gate(pack_lagoon, turns(pack_lagoon, 10, seed), ChangeConfig(), None, False)
    assert count.changed > 0, "the turns changed cells"
    assert count.missed == 0, count.misses


def _game(pack: Pack) -> tuple[GameState, CameraSpec]:
    seats = [Seat("Aroha", 1), Seat("Tama", 2), Seat("Mere", 3)]
    world = new_game(seats, seed=9, ship=4, catalogue=pack.catalogue)
    points = np.asarray(scene_points(scene_for_state(world, table_seed=9), pack.catalogue))
    centre = (float(points[:, 0].mean()), float(points[:, 1].mean()))
    span = float(np.ptp(points, axis=0).max())
    return world, CameraSpec.overhead(
        roll_deg=20.0, px_per_mm=0.85 * 2880 / span, look_at_mm=centre
    )


def _frame(
    pack: Pack, world: GameState, spec: CameraSpec, seed: int
) -> tuple[np.ndarray, TableRead]:
    rendered = render_table(
        scene_for_state(world, table_seed=9),
        pack,
        spec,
        Effects.easy(),
        np.random.default_rng(seed),
    )
    return rendered.image, rendered.truth


def _cells(read: TableRead, slots: list[Slot]) -> dict[Slot, object]:
    return dict(_cell_reads(read, slots))


def test_only_changed_cells_are_read_again_and_a_moved_table_is_read_whole(
    pack_lagoon: Pack, monkeypatch: pytest.MonkeyPatch
) -> None:
    pack = pack_lagoon
    # Tiles lie square on their cells: one laid off its place by more than the gap less
    # look_border_mm reaches into its neighbour's look (which is then read again).
    monkeypatch.setattr(table_scene, "TILE_OFFSET_MM", 0.0)
    monkeypatch.setattr(table_scene, "TILE_TURN_DEG", 0.0)
    world, spec = _game(pack)
    rules = rules_for(world.variant, world.matching)
    # The matcher's own answers (no learned judge): what is tested is which cells are read.
    reader = IncrementalReader(pack, config=VisionConfig(judge=JudgeConfig(enabled=False)))
    image, truth0 = _frame(pack, world, spec, 1)
    first = reader(image)
    assert reader.report.kind == "whole" and reader.report.why == "no accepted read"
    reader.accepted()

    rules.apply(world, GreedyPlayer(random.Random(3)).choose(rules, world))
    image, truth1 = _frame(pack, world, spec, 1)  # the same light and noise
    then = reader.read_turn(image, [1, 2, 3])
    assert reader.report.kind == "changes"
    slots = _every_slot(first)
    before, after = _cells(truth0, slots), _cells(truth1, slots)
    changed = {s for s in slots if _content(before[s]) != _content(after[s])}
    assert changed, "the turn changed cells"
    # Under the same light only the changed cells are read again, and those the accepted
    # read left unknown: a tile laid on a board, or in the display, lies in its neighbours'
    # crops, not in their looks.
    assert reader.view is not None
    cut = set(reader.view.crops)  # the cells wholly in the picture
    unknown = {s for s, cell in _cell_reads(first, slots).items() if cell.unknown and s in cut}
    assert set(reader.report.reread) == changed | unknown
    laid = [s for s in changed if s[0] != "display" and s[1] >= 0]
    assert laid, "the turn laid a tile on a board"
    # The same form as a whole read: the same seats, grids and ship field; what was not
    # read again is what the accepted read said.
    assert sorted(then.seats) == sorted(first.seats)
    # The ship moved, and is looked for again (in a cell worker when there is one).
    assert truth1.ship != truth0.ship and then.ship == truth1.ship
    assert [len(row) for row in then.display] == [len(row) for row in first.display]
    kept, now = _cells(first, slots), _cells(then, slots)
    for slot in set(slots) - set(reader.report.reread):
        assert now[slot] == kept[slot]

    reader.accepted()
    assert spec.look_at_mm is not None
    x, y = spec.look_at_mm
    moved = CameraSpec.overhead(roll_deg=20.0, px_per_mm=spec.px_per_mm, look_at_mm=(x + 8.0, y))
    image, _ = _frame(pack, world, moved, 3)
    reader(image)
    assert reader.report.kind == "whole" and "moved" in reader.report.why

    reader.accepted()
    reader.forget()
    reader(image)
    assert reader.report.kind == "whole" and reader.report.why == "no accepted read"


def _every_slot(read: TableRead) -> list[Slot]:
    out: list[Slot] = [("display", r, c) for r in range(4) for c in range(4)]
    for seat, seat_read in read.seats.items():
        out += [
            (seat, r, c)
            for r, row in enumerate(seat_read.cells)
            for c, cell in enumerate(row)
            if cell is not None
        ]
        out.append((seat, -1, 0))
    return out


def test_the_markers_looked_for_in_threads_tell_what_they_tell_one_by_one(
    pack_lagoon: Pack,
) -> None:
    world, spec = _game(pack_lagoon)
    image, _ = _frame(pack_lagoon, world, spec, 1)
    with IncrementalReader(pack_lagoon) as reader:
        reader(image)
        view = reader.view
    assert view is not None
    cfg = ChangeConfig()
    grey = np.asarray(cv2.cvtColor(image, cv2.COLOR_BGR2GRAY), np.uint8)
    patches = marker_patches(grey, view, cfg)
    shaken = np.roll(image, (1, 2), axis=(0, 1))  # the camera shaken 2 px right, 1 px down
    covered = image.copy()
    first = next(iter(patches))  # a hand over a marker
    (x0, y0), side = patches[first][1], patches[first][0].shape[0]
    covered[y0 : y0 + side, x0 : x0 + side] = 0
    with ThreadPoolExecutor(2) as threads:
        for frame in (image, shaken, covered, np.roll(image, 9, axis=1)):
            alone = table_moved(patches, frame, view, cfg)
            assert table_moved(patches, frame, view, cfg, threads) == alone
    why, offsets = table_moved(patches, shaken, view, cfg)
    assert why is None and set(offsets) == set(view.poses)
    for dx, dy in offsets.values():
        assert dx == pytest.approx(2.0, abs=0.1) and dy == pytest.approx(1.0, abs=0.1)
    why = str(table_moved(patches, np.roll(image, 9, axis=1), view, cfg)[0])
    moved = re.fullmatch(r"marker \d+ moved ([\d.]+) px", why)
    assert moved is not None and float(moved[1]) == pytest.approx(9.0, abs=0.2)
