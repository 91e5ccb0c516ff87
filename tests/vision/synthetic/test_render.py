"""The synthetic table renderer: its truth must be exact, whatever the camera and the seats."""

from __future__ import annotations

import math
from dataclasses import replace

import cv2
import numpy as np
import pytest

from companion.catalogue import default_catalogue
from vision import kit
from vision.box.pack import Pack
from vision.synthetic import render
from vision.synthetic.render import (
    CameraSpec,
    Effects,
    Rendered,
    apply,
    random_camera,
    render_table,
)
from vision.synthetic.scene import (
    DISPLAY,
    Clutter,
    PlacedTile,
    SeatScene,
    TableScene,
    area_to_table,
    display_reach_mm,
    empty_display,
    empty_seat,
    hand_over_storage,
    random_scene,
    seat_extent,
    turn,
)


def _detector() -> cv2.aruco.ArucoDetector:
    params = cv2.aruco.DetectorParameters()
    params.cornerRefinementMethod = cv2.aruco.CORNER_REFINE_SUBPIX
    dictionary = cv2.aruco.getPredefinedDictionary(cv2.aruco.DICT_4X4_50)
    return cv2.aruco.ArucoDetector(dictionary, params)


def _detect(image: np.ndarray) -> dict[int, np.ndarray]:
    corners, ids, _ = _detector().detectMarkers(cv2.cvtColor(image, cv2.COLOR_BGR2GRAY))
    if ids is None:
        return {}
    return {
        int(i): c.reshape(4, 2).astype(np.float64)
        for c, i in zip(corners, ids.ravel(), strict=True)
    }


def _sticker_corners_mm(
    scene: TableScene, marker_id: int, centre: tuple[float, float]
) -> np.ndarray:
    """Where a sticker's black square really is in its area's frame (nominal plus jitter)."""
    sticker = scene.sticker(marker_id)
    out = []
    for x, y in kit.marker_corners(centre):
        dx, dy = turn((x - centre[0], y - centre[1]), sticker.turn_deg)
        out.append((centre[0] + dx + sticker.offset_mm[0], centre[1] + dy + sticker.offset_mm[1]))
    return np.array(out)


def _nominal_centres(
    scene: TableScene, pack: Pack
) -> dict[int, tuple[tuple[float, float], int | str]]:
    out: dict[int, tuple[tuple[float, float], int | str]] = {}
    for marker_id, centre in kit.DisplayGeometry(pack.tile_mm).marker_centres().items():
        out[marker_id] = (centre, DISPLAY)
    for seat in scene.seats:
        layout = pack.catalogue.board(seat.side)
        geo = kit.SeatGeometry(seat.seat, layout.rows, layout.cols, pack.tile_mm)
        for marker_id, centre in geo.marker_centres().items():
            out[marker_id] = (centre, seat.seat)
    return out


def _check_markers(rendered: Rendered, scene: TableScene, pack: Pack) -> None:
    found = _detect(rendered.image)
    expected = _nominal_centres(scene, pack)
    assert set(found) == set(expected), "every sticker of the kit is seen, and nothing else"
    least_ppm = rendered.px_per_mm[0]
    for marker_id, corners in found.items():
        # The image corners the truth records...
        assert np.abs(corners - rendered.marker_corners[marker_id]).max() < 1.5
        # ...and, warped back with the area's homography, the kit's place plus the jitter.
        centre, area = expected[marker_id]
        back = apply(np.asarray(np.linalg.inv(rendered.homographies[area]), np.float64), corners)
        error_mm = np.hypot(*(back - _sticker_corners_mm(scene, marker_id, centre)).T).max()
        assert error_mm * least_ppm < 1.5, f"marker {marker_id} is {error_mm:.2f} mm off"


def _crop(
    rendered: Rendered, area: int | str, centre: tuple[float, float], tile_mm: float, px: int = 64
) -> np.ndarray:
    """The square of a tile's cell, warped back to an upright top view of the area."""
    mm_per_px = tile_mm / px
    to_area = np.array(
        [
            [mm_per_px, 0, centre[0] - tile_mm / 2 + mm_per_px / 2],
            [0, mm_per_px, centre[1] - tile_mm / 2 + mm_per_px / 2],
            [0, 0, 1.0],
        ]
    )
    h = rendered.homographies[area] @ to_area
    crop = cv2.warpPerspective(
        rendered.image, h, (px, px), flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP
    )
    return crop.astype(np.float32)


def _seen_rotation(pack: Pack, tile_id: str, crop: np.ndarray) -> tuple[int, float]:
    """The rotation whose turned picture best matches the crop, and how far ahead it is."""
    picture = cv2.resize(pack.tiles[tile_id], crop.shape[:2][::-1], interpolation=cv2.INTER_AREA)
    inner = slice(6, -6)
    errors = {}
    for rotation in (0, 90, 180, 270):
        turned = np.rot90(picture, -rotation // 90).astype(np.float32)
        errors[rotation] = float(np.abs(turned[inner, inner] - crop[inner, inner]).mean())
    best = min(errors, key=errors.__getitem__)
    runner_up = min(v for k, v in errors.items() if k != best)
    return best, runner_up - errors[best]


def test_markers_sit_where_truth_and_homographies_say(pack_lagoon: Pack) -> None:
    rng = np.random.default_rng(4)
    scene = random_scene(pack_lagoon.catalogue, rng, 5, "front", "easy")
    rendered = render_table(
        scene, pack_lagoon, random_camera(rng, scene, pack_lagoon), Effects.easy(), rng
    )
    assert rendered.px_per_mm[0] >= kit.MIN_PX_PER_MM
    assert rendered.hidden_markers == frozenset()
    _check_markers(rendered, scene, pack_lagoon)


def test_tilted_camera_gives_real_perspective_and_exact_markers(pack_ink: Pack) -> None:
    rng = np.random.default_rng(8)
    scene = random_scene(pack_ink.catalogue, rng, 2, "atoll", "easy")
    camera = CameraSpec(height_mm=650.0, tilt_deg=25.0, tilt_towards_deg=70.0, roll_deg=130.0)
    rendered = render_table(scene, pack_ink, camera, Effects.none(), rng)
    # Perspective: the display's far side looks shorter than its near side.
    h = rendered.homographies[DISPLAY]
    edges = [
        apply(h, [a, b])
        for a, b in (
            ((-100, -100), (100, -100)),
            ((-100, 100), (100, 100)),
            ((-100, -100), (-100, 100)),
            ((100, -100), (100, 100)),
        )
    ]
    lengths = [float(np.hypot(*(e[1] - e[0]))) for e in edges]
    assert max(lengths) / min(lengths) > 1.05
    _check_markers(rendered, scene, pack_ink)


def test_rotation_in_truth_is_the_clockwise_turn_of_the_upright_picture(pack_lagoon: Pack) -> None:
    catalogue = pack_lagoon.catalogue
    display = [list(row) for row in empty_display()]
    for c, rotation in enumerate((0, 90, 180, 270)):
        display[0][c] = PlacedTile("end-n-palm1-hut", rotation)
        display[2][c] = PlacedTile("water-boat", (rotation + 90) % 360, (2.0, -1.5), 3.0)
    scene = TableScene(
        display=tuple(tuple(r) for r in display),
        ship=5,
        display_facing_deg=37.0,
    )
    camera = CameraSpec(height_mm=900.0, tilt_deg=15.0, tilt_towards_deg=200.0, roll_deg=-65.0)
    rendered = render_table(scene, pack_lagoon, camera, Effects.easy(), np.random.default_rng(1))
    geo = kit.DisplayGeometry(catalogue.tile_mm)
    for r in (0, 2):
        for c in range(4):
            truth = rendered.truth.display[r][c]
            assert truth is not None and truth.tile is not None
            centre = geo.cell_centre(r, c)
            if r == 2:  # follow the tile's small shift so the comparison is fair
                centre = (centre[0] + 2.0, centre[1] - 1.5)
            seen, margin = _seen_rotation(
                pack_lagoon, truth.tile, _crop(rendered, DISPLAY, centre, catalogue.tile_mm)
            )
            assert seen == truth.rotation and margin > 3, (r, c, seen, truth.rotation)
    middle = rendered.truth.display[1][1]
    assert middle is not None and middle.empty


@pytest.mark.parametrize("pack_name", ["pack_ink", "pack_random"])
def test_seats_facing_any_way_keep_cells_from_seat_north(
    request: pytest.FixtureRequest, pack_name: str
) -> None:
    pack: Pack = request.getfixturevalue(pack_name)
    layout = pack.catalogue.board("front")
    west, east, north, south = seat_extent(layout, pack.tile_mm)
    seats = []
    facings = {1: 0.0, 2: 90.0, 3: 180.0, 4: 270.0, 5: 33.0}
    spots = {1: (0, 420), 2: (-470, 0), 3: (0, -420), 4: (470, 0), 5: (-470, 420)}
    for number, facing in facings.items():
        seat = empty_seat(number, layout, origin_mm=spots[number], facing_deg=facing)
        cells = [list(row) for row in seat.cells]
        cells[0][0] = PlacedTile("end-s-palm2-hut")
        cells[3][2] = PlacedTile("water-boat", 270)
        seats.append(
            replace(
                seat, cells=tuple(tuple(r) for r in cells), storage=PlacedTile("middle-boat", 90)
            )
        )
    scene = TableScene(
        display=empty_display(), ship=None, seats=tuple(seats), display_facing_deg=200.0
    )
    rendered = render_table(
        scene, pack, CameraSpec(roll_deg=20.0), Effects.none(), np.random.default_rng(2)
    )
    assert rendered.px_per_mm[0] >= 1.0
    for number in facings:
        read = rendered.truth.seats[number].cells
        assert read[0][0] is not None and read[0][0].tile == "end-s-palm2-hut"
        assert read[3][2] is not None and (read[3][2].tile, read[3][2].rotation) == (
            "water-boat",
            270,
        )
        assert read[1][1] is not None and read[1][1].empty
        geo = kit.SeatGeometry(number, layout.rows, layout.cols, pack.tile_mm)
        for (r, c), (tile_id, rotation) in {
            (0, 0): ("end-s-palm2-hut", 0),
            (3, 2): ("water-boat", 270),
        }.items():
            crop = _crop(rendered, number, geo.cell_centre(r, c), pack.tile_mm)
            assert _seen_rotation(pack, tile_id, crop)[0] == rotation, (number, r, c)
        crop = _crop(rendered, number, geo.storage_centre(), pack.tile_mm)
        assert _seen_rotation(pack, "middle-boat", crop)[0] == 90
    assert north < 0 < south and west < 0 < east


@pytest.mark.slow
def test_same_seed_renders_the_same_frame(pack_random: Pack) -> None:
    def frame(seed: int) -> np.ndarray:
        rng = np.random.default_rng(seed)
        scene = random_scene(pack_random.catalogue, rng, 3, "front", "hard")
        return render_table(
            scene, pack_random, random_camera(rng, scene, pack_random), Effects.hard(), rng
        ).image

    first = frame(21)
    assert np.array_equal(first, frame(21))
    other = frame(22)
    assert first.shape != other.shape or not np.array_equal(first, other)


def test_a_camera_that_stays_draws_the_table_top_once_and_never_draws_on_it(
    pack_lagoon: Pack, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Frames of one table from one camera share its table top: drawn once, and what one
    frame draws over it (a hand) is not in the next."""
    rng = np.random.default_rng(8)
    busy = random_scene(pack_lagoon.catalogue, rng, 3, "front", "hard")
    calm = replace(busy, clutter=())
    camera = random_camera(rng, busy, pack_lagoon)

    def frame(scene: TableScene) -> np.ndarray:
        return render_table(
            scene, pack_lagoon, camera, Effects.none(), np.random.default_rng(1)
        ).image

    render._TOPS.clear()
    fresh = frame(calm)

    def never(camera: object, seed: int) -> np.ndarray:
        raise AssertionError("the table top was drawn again")

    monkeypatch.setattr(render, "_wood", never)
    monkeypatch.setattr(render, "_cloth", never)
    assert busy.clutter, "a hard table has hands or pieces lying about"
    assert not np.array_equal(frame(busy), fresh)
    assert np.array_equal(frame(calm), fresh)
    # Another table, or the camera moved, is another top.
    monkeypatch.undo()
    other_table = replace(calm, table_seed=calm.table_seed + 1)
    moved = replace(camera, roll_deg=camera.roll_deg + 1.0)
    cached = [frame(other_table), render_table(calm, pack_lagoon, moved, Effects.none()).image]
    render._TOPS.clear()
    assert np.array_equal(cached[0], frame(other_table))
    render._TOPS.clear()
    assert np.array_equal(cached[1], render_table(calm, pack_lagoon, moved, Effects.none()).image)
    assert not np.array_equal(cached[0], fresh)


@pytest.mark.slow
def test_rendering_frame_after_frame_with_one_pack_keeps_no_more_pictures(
    pack_random: Pack,
) -> None:
    # The demo renders a frame per turn all evening: the renderer's picture cache must not
    # take a new entry per frame (it once kept a fresh copy of the ship picture every time).
    from vision.synthetic.render import _SPRITES

    rng = np.random.default_rng(5)
    scene = random_scene(pack_random.catalogue, rng, 3, "front", "easy")
    camera = random_camera(rng, scene, pack_random)
    render_table(scene, pack_random, camera, Effects.easy(), rng)
    kept = len(_SPRITES._cache)
    for _ in range(3):
        render_table(scene, pack_random, camera, Effects.easy(), rng)
    assert len(_SPRITES._cache) == kept


def test_hand_over_a_cell_is_covered_but_truth_keeps_the_tile(pack_lagoon: Pack) -> None:
    rng = np.random.default_rng(5)
    scene = random_scene(pack_lagoon.catalogue, rng, 2, "front", "clean")
    geo = kit.DisplayGeometry(pack_lagoon.tile_mm)
    x, y = turn(geo.cell_centre(1, 2), scene.display_facing_deg)
    hand = Clutter(
        "hand", (x, y), 95.0, 30.0, (150, 175, 225), reach_from_mm=(x - 600.0, y - 350.0)
    )
    scene = replace(scene, clutter=(hand,))
    rendered = render_table(scene, pack_lagoon, CameraSpec(), Effects.none(), rng)
    assert (DISPLAY, 1, 2) in rendered.covered
    assert rendered.occlusion[(DISPLAY, 1, 2)] > 0.9
    assert rendered.truth.display[1][2] == scene.display[1][2].read()  # type: ignore[union-attr]
    far = [k for k in rendered.occlusion if k[0] != DISPLAY]
    assert far and not any(k in rendered.covered for k in far)
    centre = apply(rendered.homographies[DISPLAY], [geo.cell_centre(1, 2)])[0]
    skin = rendered.image[int(centre[1]), int(centre[0])].astype(int)
    assert np.abs(skin - np.array([150, 175, 225])).max() < 40, "the hand is drawn where it covers"


def test_hard_frames_record_their_damage(pack_ink: Pack) -> None:
    rng = np.random.default_rng(9)
    scene = random_scene(pack_ink.catalogue, rng, 5, "front", "hard")
    effects = replace(Effects.hard(), glare_spots=12, glare_strength=1.0)
    rendered = render_table(scene, pack_ink, random_camera(rng, scene, pack_ink), effects, rng)
    assert rendered.image.shape == (1620, 2880, 3) and rendered.image.dtype == np.uint8
    assert rendered.jpeg_quality == 70
    assert rendered.px_per_mm[0] >= kit.MIN_PX_PER_MM
    assert rendered.truth == scene.truth(pack_ink.catalogue)
    assert rendered.covered, "a dozen full-strength glare spots wash some cell out"
    assert all(0.0 <= v <= 1.0 for v in rendered.occlusion.values())
    assert set(rendered.homographies) == {DISPLAY, *(s.seat for s in scene.seats)}


def test_a_cameras_sharpening_steepens_edges_and_leaves_the_rest_alone(pack_ink: Pack) -> None:
    """Sharpening adds detail (the frame's Laplacian energy) around the drawn edges; the
    frame's mean light stays; 0 draws the very frame drawn without it."""
    scene = random_scene(pack_ink.catalogue, np.random.default_rng(4), 3, "front", "easy")

    def frame(sharpen: float) -> np.ndarray:
        effects = replace(Effects.none(), blur_px=1.0, sharpen=sharpen)
        rng = np.random.default_rng(5)
        camera = random_camera(np.random.default_rng(6), scene, pack_ink)
        return render_table(scene, pack_ink, camera, effects, rng).image

    def detail(image: np.ndarray) -> float:
        grey = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
        return float(np.mean(cv2.Laplacian(grey, cv2.CV_32F) ** 2))

    soft, sharp = frame(0.0), frame(1.0)
    assert np.array_equal(
        soft,
        render_table(
            scene,
            pack_ink,
            random_camera(np.random.default_rng(6), scene, pack_ink),
            replace(Effects.none(), blur_px=1.0),
            np.random.default_rng(5),
        ).image,
    )
    assert detail(sharp) > 1.5 * detail(soft)
    assert abs(float(sharp.mean()) - float(soft.mean())) < 1.0


def test_a_raised_plane_is_seen_nearer_the_camera() -> None:
    """Straight down from 1 m, a point raised 10 mm is seen 1000 / 990 as far from the
    frame's middle; raised 0 it stays put."""
    camera = render.fit_camera(
        CameraSpec(height_mm=1000.0, px_per_mm=2.0, look_at_mm=(0.0, 0.0)), [(0.0, 0.0)]
    )
    middle = camera.project([(0.0, 0.0)])[0]
    seen = camera.project([(100.0, 40.0)])[0]
    assert np.allclose(apply(camera.raised(0.0), [seen])[0], seen)
    lifted = apply(camera.raised(10.0), [seen])[0]
    assert np.allclose(lifted - middle, (seen - middle) * 1000.0 / 990.0, atol=1e-6)


def test_card_tiles_stand_lift_cast_shadows_and_leave_the_truth(pack_ink: Pack) -> None:
    """Thick tiles seen from a tilted camera show side walls below their lifted tops and
    darken what lies round them; flat tiles with no print faults draw the very frame of the
    default effects (no random number is drawn for them)."""
    scene = random_scene(pack_ink.catalogue, np.random.default_rng(4), 2, "front", "clean")
    camera = CameraSpec.tilted(25.0, 0.0, px_per_mm=3.0, look_at_mm=scene.display_origin_mm)

    def frame(effects: Effects) -> Rendered:
        return render_table(scene, pack_ink, camera, effects, np.random.default_rng(5))

    flat = frame(Effects.none())
    zero = Effects(tile_height_mm=0.0, tile_shadow=0.0, print_jitter=0.0, tile_wear=0.0)
    assert np.array_equal(frame(zero).image, flat.image)
    card = frame(Effects(tile_height_mm=2.5, tile_shadow=0.5, print_jitter=0.05, tile_wear=0.5))
    assert card.truth == flat.truth and card.homographies.keys() == flat.homographies.keys()
    # The mat's paper between the display's cells lies in the tiles' shadows and walls.
    gap = apply(card.homographies[DISPLAY], [(0.0, 0.0)])[0].round().astype(int)
    x, y = int(gap[0]), int(gap[1])
    patch = (slice(y - 2, y + 3), slice(x - 2, x + 3))
    assert card.image[patch].mean() < flat.image[patch].mean() - 20
    assert not np.array_equal(card.image, flat.image)


def test_random_scenes_follow_the_box_and_the_rules(pack_lagoon: Pack) -> None:
    catalogue = pack_lagoon.catalogue
    for seed in range(6):
        rng = np.random.default_rng(seed)
        side = "atoll" if seed % 3 == 0 else "front"
        scene = random_scene(catalogue, rng, 4 if side == "atoll" else 5, side, "hard")
        used: dict[str, int] = {}
        for (area, _r, _c), tile in scene.placed():
            if tile is None:
                continue
            used[tile.tile_id] = used.get(tile.tile_id, 0) + 1
            meaning = catalogue.meaning(tile.tile_id)
            if area != DISPLAY:
                assert meaning.kind.value != "volcano", "volcanoes never reach a board"
                if meaning.palms:
                    assert tile.rotation == 0, "palms point to their owner"
            assert math.hypot(*tile.offset_mm) <= 4.0 + 1e-9 and abs(tile.turn_deg) <= 5.0
        for tile_id, count in used.items():
            assert count <= catalogue[tile_id].count
        for sticker in scene.stickers.values():
            assert math.hypot(*sticker.offset_mm) <= 3.0 + 1e-9 and abs(sticker.turn_deg) <= 2.0
        scene.truth(catalogue)  # boards have the side's size
    with pytest.raises(ValueError, match="atoll"):
        random_scene(catalogue, np.random.default_rng(0), 5, "atoll")


def test_truth_has_the_read_json_shape(pack_lagoon: Pack) -> None:
    scene = random_scene(default_catalogue(), np.random.default_rng(3), 2, "atoll", "easy")
    data = scene.truth(pack_lagoon.catalogue).to_json()
    assert len(data["display"]["cells"]) == 4 and all(len(r) == 4 for r in data["display"]["cells"])
    assert set(data["seats"]) == {str(s.seat) for s in scene.seats}
    for seat in data["seats"].values():
        assert len(seat["cells"]) == 5 and seat["cells"][0][0] is None  # not playable on the atoll
        assert "storage" in seat
    assert isinstance(SeatScene(1).cells, tuple)


def _footprint(seat: SeatScene, pack: Pack) -> np.ndarray:
    west, east, north, south = seat_extent(pack.catalogue.board(seat.side), pack.tile_mm)
    corners = [(west, north), (east, north), (east, south), (west, south)]
    return np.array([area_to_table(p, seat.origin_mm, seat.facing_deg) for p in corners])


def _apart(a: np.ndarray, b: np.ndarray) -> bool:
    """Two convex polygons do not overlap (a separating axis exists)."""
    for poly in (a, b):
        for i in range(len(poly)):
            edge = poly[(i + 1) % len(poly)] - poly[i]
            axis = np.array([-edge[1], edge[0]])
            pa, pb = a @ axis, b @ axis
            if pa.max() <= pb.min() or pb.max() <= pa.min():
                return True
    return False


def _distance_to_polygon(point: np.ndarray, poly: np.ndarray) -> float:
    best = math.inf
    for i in range(len(poly)):
        p, q = poly[i], poly[(i + 1) % len(poly)]
        t = np.clip(np.dot(point - p, q - p) / np.dot(q - p, q - p), 0, 1)
        best = min(best, float(np.hypot(*(point - (p + t * (q - p))))))
    return best


@pytest.mark.parametrize("side", ["front", "atoll"])
def test_random_seats_never_overlap_each_other_or_the_display(pack_lagoon: Pack, side: str) -> None:
    reach = display_reach_mm(pack_lagoon.tile_mm)
    for n_seats in range(1, 5 if side == "atoll" else 6):
        for seed in range(8):
            scene = random_scene(
                pack_lagoon.catalogue, np.random.default_rng(seed), n_seats, side, "hard"
            )
            prints = [_footprint(s, pack_lagoon) for s in scene.seats]
            for i, a in enumerate(prints):
                assert _distance_to_polygon(np.zeros(2), a) > reach, "a seat on the display"
                for b in prints[i + 1 :]:
                    assert _apart(a, b), f"{n_seats} seats overlap (seed {seed})"


def test_without_storage_cards_an_empty_slot_shows_the_bare_table(pack_lagoon: Pack) -> None:
    layout = pack_lagoon.catalogue.board("front")
    seat = empty_seat(1, layout, origin_mm=(0, 420), facing_deg=0.0)
    scene = TableScene(display=empty_display(), ship=None, seats=(seat,))
    geo = kit.SeatGeometry(1, layout.rows, layout.cols, pack_lagoon.tile_mm)
    slot = {}
    for cards in (True, False):
        rendered = render_table(
            replace(scene, storage_cards=cards),
            pack_lagoon,
            CameraSpec(),
            Effects.none(),
            np.random.default_rng(2),
        )
        slot[cards] = _crop(rendered, 1, geo.storage_centre(), pack_lagoon.tile_mm)
    assert slot[True].mean(axis=(0, 1)).min() > 200, "the kit's white card"
    assert slot[False].mean(axis=(0, 1)).min() < 150, "the wooden table"


def test_a_hand_put_over_a_storage_slot_covers_it(pack_lagoon: Pack) -> None:
    covered = 0
    for seed in range(4):
        rng = np.random.default_rng(seed)
        scene = random_scene(pack_lagoon.catalogue, rng, 3, "front", "clean")
        with_hand = hand_over_storage(scene, pack_lagoon.catalogue, rng)
        assert len(with_hand.clutter) == len(scene.clutter) + 1
        rendered = render_table(with_hand, pack_lagoon, CameraSpec(), Effects.none(), rng)
        hidden = [rendered.occlusion.get((s.seat, -1, 0), 0.0) for s in scene.seats]
        covered += max(hidden) > 0.3
    assert covered >= 3


def test_a_cloth_table_is_one_even_colour_where_wood_has_grain(pack_lagoon: Pack) -> None:
    layout = pack_lagoon.catalogue.board("front")
    seat = empty_seat(1, layout, origin_mm=(0, 420), facing_deg=0.0)
    scene = TableScene(display=empty_display(), ship=None, seats=(seat,), storage_cards=False)
    geo = kit.SeatGeometry(1, layout.rows, layout.cols, pack_lagoon.tile_mm)
    spread = {}
    for top in ("wood", "cloth"):
        rendered = render_table(
            replace(scene, table_top=top),
            pack_lagoon,
            CameraSpec(),
            Effects.none(),
            np.random.default_rng(2),
        )
        slot = _crop(rendered, 1, geo.storage_centre(), pack_lagoon.tile_mm)
        spread[top] = float(slot.astype(float).mean(axis=2).std())
    assert spread["cloth"] < spread["wood"]
    with pytest.raises(ValueError, match="table_top"):
        replace(scene, table_top="glass")
