"""Finding the explorer ship in the ship lane with a finder learned from the pack's picture."""

from __future__ import annotations

import json
import math
import pickle
from dataclasses import replace
from pathlib import Path

import cv2
import numpy as np
import pytest
from numpy.typing import NDArray

from vision import kit
from vision.box.pack import Pack, load_pack
from vision.config import ShipConfig, VisionConfig
from vision.reader import ship as ship_module
from vision.reader.areas import AreaPose
from vision.reader.ship import (
    FEATURES,
    ShipModel,
    display_geometry,
    learn_ship,
    locate_ship,
    read_ship_in_frame,
    ship_area,
    ship_in_area,
    ship_model,
)
from vision.synthetic.artpacks import write_art_pack
from vision.synthetic.render import CameraSpec, Effects, render_table
from vision.synthetic.scene import DISPLAY, Clutter, area_to_table, random_scene

#: A random-style pack nothing was tuned on.
FRESH_SEED = 4729
PPM = 2.0
SHIP_MM = 42.0
SKIN = (120, 150, 205)
#: Learning from few drawn areas, for the tests of learning itself.
QUICK = VisionConfig(ships=ShipConfig(learn_areas=40))


@pytest.fixture(scope="module")
def fresh_pack(tmp_path_factory: pytest.TempPathFactory) -> Pack:
    root: Path = tmp_path_factory.mktemp("fresh-ship-pack")
    return load_pack(write_art_pack(root / "random", "random", seed=FRESH_SEED))


@pytest.fixture(scope="module")
def fresh_model(fresh_pack: Pack) -> ShipModel:
    return learn_ship(fresh_pack)


def rendered_ship(
    pack: Pack, model: ShipModel, seed: int, ship: int | None, hand: bool = False
) -> tuple[int | None, bool]:
    """The ship read from a rendered table (the display's true pose) with the ship at
    `ship`, perhaps a hand over it; and whether the renderer counts the ship as hidden."""
    rng = np.random.default_rng(seed)
    scene = random_scene(pack.catalogue, rng, 1, "front", "easy")
    scene = replace(scene, ship=ship, clutter=(), seats=())
    if hand and ship is not None:
        geo = kit.DisplayGeometry(pack.tile_mm)
        x, y = geo.ship_centre(ship)
        at = area_to_table((x, y), scene.display_origin_mm, scene.display_facing_deg)
        # The arm reaches in from beyond the mat.
        out = area_to_table((x * 4, y * 4), scene.display_origin_mm, scene.display_facing_deg)
        angle = math.degrees(math.atan2(at[1] - out[1], at[0] - out[0]))
        scene = replace(scene, clutter=(Clutter("hand", at, 95.0, angle, SKIN, out),))
    rendered = render_table(scene, pack, CameraSpec.overhead(), Effects.easy(), rng)
    geometry = kit.DisplayGeometry(pack.tile_mm)
    display = AreaPose(DISPLAY, rendered.homographies[DISPLAY], (0, 1, 2, 3), 0.0, geometry)
    got = read_ship_in_frame(rendered.image, display, pack, VisionConfig(), model)
    return got, rendered.ship_covered


@pytest.mark.slow
@pytest.mark.parametrize(("seed", "ship"), [(1, 0), (2, 6), (3, 9), (4, 15)])
def test_the_ship_is_found_on_rendered_tables_of_a_fresh_pack(
    fresh_pack: Pack, fresh_model: ShipModel, seed: int, ship: int
) -> None:
    got, covered = rendered_ship(fresh_pack, fresh_model, seed, ship)
    assert not covered
    assert got == ship


def test_the_search_a_cell_worker_is_sent_finds_what_the_frame_shows(
    fresh_pack: Pack, fresh_model: ShipModel
) -> None:
    rng = np.random.default_rng(2)
    scene = replace(random_scene(fresh_pack.catalogue, rng, 1, "front", "easy"), ship=6)
    rendered = render_table(scene, fresh_pack, CameraSpec.overhead(), Effects.easy(), rng)
    display = AreaPose(
        DISPLAY,
        rendered.homographies[DISPLAY],
        (0, 1, 2, 3),
        0.0,
        kit.DisplayGeometry(fresh_pack.tile_mm),
    )
    cfg = ShipConfig()
    sent = (ship_area(rendered.image, display, cfg), fresh_pack.ship, display_geometry(display))
    area, ship, geometry = pickle.loads(pickle.dumps(sent))
    got = ship_in_area(area, ship, geometry, cfg, fresh_model)
    assert got == read_ship_in_frame(rendered.image, display, fresh_pack, model=fresh_model) == 6
    seat = replace(display, geometry=kit.SeatGeometry(1, tile_mm=fresh_pack.tile_mm))
    with pytest.raises(TypeError, match="display"):
        ship_area(rendered.image, seat, cfg)


def test_no_ship_on_a_rendered_table_is_none(fresh_pack: Pack, fresh_model: ShipModel) -> None:
    assert rendered_ship(fresh_pack, fresh_model, 5, None) == (None, False)


@pytest.mark.parametrize(("seed", "ship"), [(6, 2), (7, 13)])
def test_a_hand_over_the_ship_is_none(
    fresh_pack: Pack, fresh_model: ShipModel, seed: int, ship: int
) -> None:
    got, covered = rendered_ship(fresh_pack, fresh_model, seed, ship, hand=True)
    assert covered
    assert got is None


def test_the_model_found_the_ships_kept_back_from_learning(fresh_model: ShipModel) -> None:
    assert fresh_model.found_rate >= 0.95
    assert fresh_model.wrong_rate <= ShipConfig().wrong_rate
    assert 0.0 <= fresh_model.calibration_error < 0.05
    assert 0.0 <= fresh_model.belief_calibration_error < 0.05
    assert ShipConfig().least_threshold <= fresh_model.threshold <= 1.0


@pytest.mark.slow
def test_learning_is_deterministic(pack_ink: Pack) -> None:
    assert learn_ship(pack_ink, QUICK).to_json() == learn_ship(pack_ink, QUICK).to_json()
    assert learn_ship(pack_ink, QUICK, seed=1) != learn_ship(pack_ink, QUICK)


@pytest.mark.slow
def test_the_model_round_trips_through_json(pack_ink: Pack) -> None:
    model = ship_model(pack_ink, QUICK)
    assert ship_model(pack_ink, QUICK) is model  # learned once per pack object
    again = ShipModel.from_json(model.to_json())
    assert again == model
    features = np.random.default_rng(0).uniform(-1, 1, (kit.SHIP_POSITIONS, len(FEATURES)))
    assert np.array_equal(again.probabilities(features), model.probabilities(features))


@pytest.mark.parametrize(
    ("text", "complaint"),
    [
        ("not json", "must be JSON"),
        ('{"version": 99}', "version 1"),
        ('{"version": 1, "threshold": 0.5}', "lacks or garbles"),
    ],
)
def test_a_garbled_model_is_refused(text: str, complaint: str) -> None:
    with pytest.raises(ValueError, match=complaint):
        ShipModel.from_json(text)


@pytest.mark.slow
def test_a_model_with_too_few_weights_is_refused(pack_ink: Pack) -> None:
    doc = json.loads(ship_model(pack_ink, QUICK).to_json())
    doc["weights"] = doc["weights"][:-1]
    with pytest.raises(ValueError, match="weights"):
        ShipModel.from_json(json.dumps(doc))


@pytest.mark.slow
def test_the_model_is_kept_in_a_cache_and_read_back_from_it(
    pack_dirs: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    model = ship_model(load_pack(pack_dirs["ink"]), QUICK, tmp_path)
    kept = list(tmp_path.glob("ship-*.json"))
    assert len(kept) == 1

    def no_learning(*args: object, **kwargs: object) -> ShipModel:
        raise AssertionError("learned again")

    monkeypatch.setattr(ship_module, "learn_ship", no_learning)
    assert ship_model(load_pack(pack_dirs["ink"]), QUICK, tmp_path) == model
    # Another config is another model; a garbled file is learned again and rewritten.
    monkeypatch.undo()
    kept[0].write_text("{", encoding="utf-8")
    assert ship_model(load_pack(pack_dirs["ink"]), QUICK, tmp_path) == model
    assert ShipModel.from_json(kept[0].read_text(encoding="utf-8")) == model


def test_opaque_white_round_the_ship_picture_is_not_ship(pack_ink: Pack) -> None:
    """A ship picture on an opaque white square reads as the ship alone, its longer side
    across."""
    ship = pack_ink.ship
    h, w = ship.shape[:2]
    square = np.full((2 * h, 2 * h, 4), 255, np.uint8)
    square[h // 2 : h // 2 + h, h : h + w] = ship
    square[h // 2 : h // 2 + h, h : h + w, 3] = 255  # white where the ship is transparent
    alone = ship_module._ship_layers(ship)[1].shape
    padded = ship_module._ship_layers(square)[1].shape
    assert padded[1] > padded[0]
    assert abs(padded[0] - alone[0]) <= 2 and abs(padded[1] - alone[1]) <= 2


def mat(geo: kit.DisplayGeometry) -> NDArray[np.float32]:
    """The display mat's active area at PPM px/mm: white paper, thin grey outlines."""
    n = round(2 * geo.half_extent * PPM)
    img = np.full((n, n, 3), (244, 247, 248), np.float32)
    c = (n - 1) / 2
    for half in (geo.lane_inner, geo.half_extent - 0.5):
        h = half * PPM
        cv2.rectangle(
            img, (round(c - h), round(c - h)), (round(c + h), round(c + h)), (185, 185, 185), 1
        )
    return img


def put_ship(
    img: NDArray[np.float32],
    ship: NDArray[np.uint8],
    geo: kit.DisplayGeometry,
    position: int,
    heading: float,
    offset: tuple[float, float],
) -> None:
    """Lay the ship's picture (BGRA) at a lane position, turned `heading` degrees clockwise,
    `offset` mm off the nominal centre."""
    h, w = ship.shape[:2]
    scale = SHIP_MM / max(h, w) * PPM
    cx, cy = geo.ship_centre(position)
    n = img.shape[0]
    u = (cx + offset[0] + geo.half_extent) * PPM - 0.5
    v = (cy + offset[1] + geo.half_extent) * PPM - 0.5
    m = cv2.getRotationMatrix2D(((w - 1) / 2, (h - 1) / 2), -heading, scale)
    m[:, 2] += (u - (w - 1) / 2, v - (h - 1) / 2)
    colour = ship[:, :, :3].astype(np.float32)
    alpha = ship[:, :, 3].astype(np.float32) / 255.0
    warped = cv2.warpAffine(colour, m, (n, n), flags=cv2.INTER_AREA)
    cover = cv2.warpAffine(alpha, m, (n, n), flags=cv2.INTER_LINEAR)[:, :, None]
    img[:] = img * (1 - cover) + warped * cover


def camera(img: NDArray[np.float32], rng: np.random.Generator) -> NDArray[np.uint8]:
    out = cv2.GaussianBlur(img, (0, 0), 0.8) + rng.normal(0, 3.0, img.shape)
    return np.clip(out + 0.5, 0, 255).astype(np.uint8)


def test_the_ship_is_found_at_every_position_either_way_along(
    fresh_pack: Pack, fresh_model: ShipModel
) -> None:
    geo = kit.DisplayGeometry(fresh_pack.tile_mm)
    rng = np.random.default_rng(1)
    for position in range(kit.SHIP_POSITIONS):
        area = mat(geo)
        along = ((position // 4) + 1) % 4 * 90.0 + (180.0 if position % 3 == 0 else 0.0)
        heading = along + float(rng.uniform(-5, 5))
        offset = (float(rng.uniform(-5, 5)), float(rng.uniform(-5, 5)))
        put_ship(area, fresh_pack.ship, geo, position, heading, offset)
        sighting = locate_ship(camera(area, rng), fresh_pack.ship, geo, model=fresh_model)
        assert sighting.position == position, (position, sighting)
        assert sighting.score >= fresh_model.threshold


def test_two_ships_alike_are_none(fresh_pack: Pack, fresh_model: ShipModel) -> None:
    """Two ships in the lane (a second box's, say): no position is clearly the ship's."""
    geo = kit.DisplayGeometry(fresh_pack.tile_mm)
    area = mat(geo)
    put_ship(area, fresh_pack.ship, geo, 2, 90.0, (0.0, 0.0))
    put_ship(area, fresh_pack.ship, geo, 10, 270.0, (0.0, 0.0))
    sighting = locate_ship(
        camera(area, np.random.default_rng(5)), fresh_pack.ship, geo, model=fresh_model
    )
    assert sighting.position is None


def test_a_hand_alone_in_the_lane_is_not_the_ship(fresh_pack: Pack, fresh_model: ShipModel) -> None:
    geo = kit.DisplayGeometry(fresh_pack.tile_mm)
    area = mat(geo)
    n = area.shape[0]
    cx, cy = geo.ship_centre(5)
    u, v = ((cx + geo.half_extent) * PPM, (cy + geo.half_extent) * PPM)
    cv2.ellipse(
        area,
        (round(u), round(v)),
        (round(22 * PPM), round(30 * PPM)),
        20,
        0,
        360,
        (150, 175, 225),
        -1,
    )
    cv2.rectangle(
        area, (round(u), round(v - 25 * PPM)), (n, round(v + 25 * PPM)), (150, 175, 225), -1
    )
    sighting = locate_ship(
        camera(area, np.random.default_rng(4)), fresh_pack.ship, geo, model=fresh_model
    )
    assert sighting.position is None


def test_the_pictures_every_search_shares_are_read_only(pack_ink: Pack) -> None:
    key = ship_module._digest(pack_ink.ship)
    cfg = ShipConfig()
    templates = ship_module._templates(key, 0.8, cfg)
    shared = [ship_module._colour_axis(key), *ship_module._projected(key, 0.8, cfg)]
    shared += [p for t in templates for p in (t.colour, t.mask, t.means)]
    assert templates and all(not picture.flags.writeable for picture in shared)
    with pytest.raises(ValueError):
        templates[0].colour[0, 0, 0] = 0.0
