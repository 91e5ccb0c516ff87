"""vision.reader.storage: the storage slot weighed against the table round it (bare tables, pale
arms)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from companion.reading import CellRead, TableRead
from vision import kit
from vision.box.pack import Pack
from vision.config import StorageConfig, VisionConfig
from vision.reader.read import read_table
from vision.reader.storage import (
    SlotSurface,
    bare_slots,
    kept_out,
    pale_rings,
    slot_surface,
    square_mm,
)
from vision.synthetic.render import CameraSpec, Effects, Rendered, random_camera, render_table
from vision.synthetic.render_config import SKIN_BGR
from vision.synthetic.scene import Clutter, TableScene, area_to_table, random_scene

CFG = StorageConfig()
TILE_MM = 45.0


@pytest.fixture(scope="module")
def bare_table(pack_ink: Pack) -> tuple[TableScene, CameraSpec, Rendered]:
    """An easy 5-seat table without storage cards: three empty slots, two with a tile."""
    rng = np.random.default_rng(0)
    scene = replace(random_scene(pack_ink.catalogue, rng, 5, "front", "easy"), storage_cards=False)
    camera = random_camera(rng, scene, pack_ink)
    return scene, camera, render_table(scene, pack_ink, camera, Effects.easy(), rng)


@pytest.mark.slow
def test_empty_storage_slots_on_a_table_without_cards_read_empty(
    pack_ink: Pack, bare_table: tuple[TableScene, CameraSpec, Rendered]
) -> None:
    scene, _camera, rendered = bare_table
    empty = [s.seat for s in scene.seats if s.storage is None]
    kept = {s.seat: s.storage.tile_id for s in scene.seats if s.storage is not None}
    assert len(empty) >= 2 and kept
    read = _storages(read_table(rendered.image, pack_ink))
    assert all(read[seat].empty for seat in empty)
    assert {seat: read[seat].tile for seat in kept} == kept
    # The cells' own reading knows an empty slot by the kit's white card: without this
    # stage those slots stay unknown.
    alone = _storages(
        read_table(
            rendered.image,
            pack_ink,
            config=replace(VisionConfig(), storage=StorageConfig(enabled=False)),
        )
    )
    assert all(alone[seat].unknown for seat in empty)


def _storages(read: TableRead) -> dict[int, CellRead]:
    out = {seat: s.storage for seat, s in read.seats.items() if s.storage is not None}
    assert len(out) == len(read.seats)
    return out


def _hand_over_storage(
    pack: Pack,
    scene: TableScene,
    camera: CameraSpec,
    seat: int,
    size_mm: float,
    skin: tuple[int, int, int],
    config: VisionConfig | None = None,
    effects: Effects | None = None,
) -> CellRead:
    """The storage slot of `seat` read with a hand over it and all round it."""
    s = scene.seat(seat)
    centre = kit.SeatGeometry(seat, 4, 4, pack.tile_mm).storage_centre()
    at = area_to_table(centre, s.origin_mm, s.facing_deg)
    hand = Clutter("hand", at, size_mm, 30.0, skin, reach_from_mm=(at[0] - 600.0, at[1] - 350.0))
    rendered = render_table(
        replace(scene, clutter=(hand,)),
        pack,
        camera,
        effects or Effects.easy(),
        np.random.default_rng(1),
    )
    assert rendered.occlusion[(seat, -1, 0)] > 0.9
    storage = read_table(rendered.image, pack, config=config).seats[seat].storage
    assert storage is not None
    return storage


@pytest.mark.slow
@pytest.mark.parametrize("size_mm", [70.0, 140.0])
@pytest.mark.parametrize("skin", SKIN_BGR)
def test_a_hand_over_a_storage_tile_on_the_bare_table_is_not_read_empty(
    pack_ink: Pack,
    bare_table: tuple[TableScene, CameraSpec, Rendered],
    size_mm: float,
    skin: tuple[int, int, int],
) -> None:
    scene, camera, _rendered = bare_table
    seat = next(s.seat for s in scene.seats if s.storage is not None)
    # A hand of the table's colour over the slot and all round it: only the table's grain,
    # which skin lacks, tells them apart.
    assert not _hand_over_storage(pack_ink, scene, camera, seat, size_mm, skin).empty


@pytest.mark.slow
def test_a_pale_hand_over_a_storage_card_and_all_round_it_is_not_read_empty(
    pack_ink: Pack, bare_table: tuple[TableScene, CameraSpec, Rendered]
) -> None:
    scene, camera, _rendered = bare_table
    carded = replace(scene, storage_cards=True)
    seat = [s.seat for s in scene.seats if s.storage is not None][-1]
    pale, lamp = SKIN_BGR[0], Effects.hard()
    assert not _hand_over_storage(pack_ink, carded, camera, seat, 140.0, pale, effects=lamp).empty
    # The card's white look alone takes the pale hand under a warm lamp for the card.
    alone = replace(VisionConfig(), storage=StorageConfig(min_empty_saturation=0.0))
    assert _hand_over_storage(pack_ink, carded, camera, seat, 140.0, pale, alone, lamp).empty


# -- the stage on drawn squares -----------------------------------------------------------


def _wood(
    rng: np.random.Generator,
    colour: tuple[float, float, float] = (60, 110, 170),
    grain: float = 18.0,
) -> np.ndarray:
    """A square of wooden table at CFG's scale: stripes of grain along x, some noise."""
    n = round(square_mm(TILE_MM, CFG) * CFG.px_per_mm)
    y = np.arange(n, dtype=np.float64)[:, None]
    stripes = np.sin(y * 1.9 + 2.0 * np.sin(np.arange(n)[None, :] / 23.0)) * grain
    shade = 1.0 + (stripes + rng.normal(0.0, 2.0, (n, n))) / 255.0
    out = np.asarray(colour, np.float64)[None, None, :] * shade[..., None]
    return np.clip(out, 0, 255).astype(np.uint8)


def _surfaces(squares: list[np.ndarray]) -> dict[int, SlotSurface | None]:
    kept = kept_out(kit.SeatGeometry(1, 4, 4, TILE_MM), CFG)
    return {i: slot_surface(sq, TILE_MM, kept, CFG) for i, sq in enumerate(squares)}


def _middle(square: np.ndarray, half_mm: float, colour: tuple[int, int, int]) -> np.ndarray:
    out = square.copy()
    c, h = out.shape[0] // 2, round(half_mm * CFG.px_per_mm)
    out[c - h : c + h, c - h : c + h] = colour
    return out


def test_a_slot_like_the_table_round_it_is_bare_and_a_tile_there_is_not() -> None:
    rng = np.random.default_rng(3)
    table = [_wood(rng) for _ in range(3)]
    assert bare_slots(_surfaces(table), CFG) == {0, 1, 2}
    tile = _middle(table[0], TILE_MM / 2, (140, 90, 40))  # a blue water tile
    # A tile of the table's own colour, flat: its missing grain gives it away.
    plain = _middle(table[1], TILE_MM / 2, (60, 110, 170))
    assert bare_slots(_surfaces([tile, plain, table[2]]), CFG) == {2}


def test_a_smooth_cover_over_the_whole_square_is_not_the_table() -> None:
    rng = np.random.default_rng(4)
    table = [_wood(rng) for _ in range(3)]
    skin = np.full_like(table[0], (95, 130, 185))
    skin = np.clip(skin + rng.normal(0.0, 2.0, skin.shape), 0, 255).astype(np.uint8)
    assert bare_slots(_surfaces([skin, *table[1:]]), CFG) == {1, 2}


def test_a_hand_over_all_of_a_plain_cloth_square_is_told_by_its_hue() -> None:
    rng = np.random.default_rng(7)
    # Green felt: no grain to tell skin by, so the table's hue must.
    felt = [_wood(rng, (70, 140, 60), grain=0.0) for _ in range(3)]
    assert bare_slots(_surfaces(felt), CFG) == {0, 1, 2}
    skin = np.full_like(felt[0], (95, 130, 185))
    skin = np.clip(skin + rng.normal(0.0, 2.0, skin.shape), 0, 255).astype(np.uint8)
    assert bare_slots(_surfaces([skin, *felt[1:]]), CFG) == {1, 2}
    any_hue = replace(CFG, max_hue_deg=180.0)
    kept = kept_out(kit.SeatGeometry(1, 4, 4, TILE_MM), CFG)
    squares = [skin, *felt[1:]]
    surfaces = {i: slot_surface(sq, TILE_MM, kept, any_hue) for i, sq in enumerate(squares)}
    assert 0 in bare_slots(surfaces, any_hue)


def test_a_grey_table_is_left_to_the_storage_card_and_one_seat_is_not_judged() -> None:
    rng = np.random.default_rng(5)
    grey = [_wood(rng, (150, 150, 150)) for _ in range(3)]
    assert bare_slots(_surfaces(grey), CFG) == set()
    # A faint tint's hue means little: a hand's ring may agree with it by chance.
    faint = [_wood(rng, (140, 170, 150)) for _ in range(3)]
    assert bare_slots(_surfaces(faint), CFG) == set()
    assert bare_slots(_surfaces([_wood(rng)]), CFG) == set()


def test_a_slot_not_wholly_in_the_picture_is_not_judged() -> None:
    square = _wood(np.random.default_rng(6))
    seen = np.ones(square.shape[:2], bool)
    kept = kept_out(kit.SeatGeometry(1, 4, 4, TILE_MM), CFG)
    assert slot_surface(square, TILE_MM, kept, CFG, seen) is not None
    seen[:, : square.shape[1] // 2 - 20] = False  # the frame ends inside the slot
    assert slot_surface(square, TILE_MM, kept, CFG, seen) is None
    with pytest.raises(ValueError, match="square colour image"):
        slot_surface(square[:, :-1], TILE_MM, kept, CFG)


def test_a_slot_read_empty_with_a_ring_far_paler_than_the_table_is_doubted() -> None:
    wood = np.array([-0.5, 0.05, 0.45])
    chromas = {1: wood, 2: wood * 1.1, 3: wood * 0.9, 4: wood * 0.15, 5: None}
    assert pale_rings(chromas, [1, 2, 4, 5], CFG) == {4}
    grey = {k: None if v is None else v * 0.05 for k, v in chromas.items()}
    assert pale_rings(grey, [1, 2, 4], CFG) == set()
    assert pale_rings({4: wood * 0.15}, [4], CFG) == set()  # nothing to compare with
