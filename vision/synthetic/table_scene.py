"""A synthetic table that looks like a game state: the demo's camera renders this.

Tiles keep their small offsets and turns from render to render (they are keyed by where they
lie and what they are), like tiles that nobody touches on a real table. Wooden shells lie
beside each board, one per shell the player holds, and player ships stand on their tiles.
"""

from __future__ import annotations

import hashlib
import math

import numpy as np

from companion.state import GameState
from vision import kit
from vision.synthetic import render_config as cfg
from vision.synthetic.scene import (
    Clutter,
    PlacedTile,
    SeatScene,
    Sticker,
    TableScene,
    add_clutter,
    area_to_table,
    seat_slots,
)

#: How far tiles lie off their cells in the demo (half the table kit's allowance).
TILE_OFFSET_MM = 2.0
TILE_TURN_DEG = 2.5
SHELL_MM = 16.0


def _jitter(*key: object) -> np.random.Generator:
    digest = hashlib.blake2b(repr(key).encode(), digest_size=8).digest()
    return np.random.default_rng(int.from_bytes(digest, "little"))


def _lying(tile: str, rotation: int, *key: object) -> PlacedTile:
    rng = _jitter(tile, rotation, *key)
    angle = rng.uniform(0, 2 * math.pi)
    radius = TILE_OFFSET_MM * math.sqrt(rng.uniform())
    return PlacedTile(
        tile,
        rotation,
        (radius * math.cos(angle), radius * math.sin(angle)),
        float(rng.uniform(-TILE_TURN_DEG, TILE_TURN_DEG)),
    )


def scene_for_state(
    state: GameState,
    *,
    table_seed: int = 0,
    hands: int = 0,
    rng: np.random.Generator | None = None,
) -> TableScene:
    """The table as it would look in `state`, seats placed around the display by seat number
    order; `hands` reaching hands are added (for a frame taken while people still move)."""
    tile_mm = state.catalogue.tile_mm
    layout = state.layout
    by_seat = sorted(state.players, key=lambda p: p.seat)
    slots = seat_slots(len(by_seat), layout, tile_mm, template=table_seed)
    seats = []
    clutter: list[Clutter] = []
    for player, (origin, facing) in zip(by_seat, slots, strict=True):
        cells = tuple(
            tuple(
                None if p is None else _lying(p.tile, p.rotation, player.seat, r, c)
                for c, p in enumerate(row)
            )
            for r, row in enumerate(player.board)
        )
        storage = None
        if player.storage is not None:
            storage = _lying(player.storage, 0, player.seat, "storage")
        seat = SeatScene(player.seat, state.side, cells, storage, origin, facing)
        seats.append(seat)
        geo = kit.SeatGeometry(player.seat, layout.rows, layout.cols, tile_mm)
        # Wooden shells in a row east of the board, the player ship on its tile.
        east = layout.cols * geo.pitch / 2 + kit.MARKER_MM + 14
        for i in range(player.shells):
            local = (east + (i // 5) * (SHELL_MM + 3), (i % 5 - 2) * (SHELL_MM + 3))
            at = area_to_table(local, origin, facing)
            clutter.append(Clutter("shell", at, SHELL_MM, float(30 * i) % 360))
        if player.ship is not None:
            at = area_to_table(geo.cell_centre(*player.ship), origin, facing)
            clutter.append(Clutter("player_ship", at, tile_mm * 0.45, facing))
    display = tuple(
        tuple(
            None if t is None else _lying(t, _display_rotation(t, r, c), "display", r, c)
            for c, t in enumerate(row)
        )
        for r, row in enumerate(state.display)
    )
    stickers = {}
    for marker_id in [0, 1, 2, 3] + [4 * p.seat + k for p in by_seat for k in range(4)]:
        rng_s = _jitter("sticker", marker_id, table_seed)
        offset = rng_s.uniform(-1, 1, 2) * cfg.STICKER_OFFSET_MAX_MM / 2
        stickers[marker_id] = Sticker(
            (float(offset[0]), float(offset[1])), float(rng_s.uniform(-1, 1))
        )
    scene = TableScene(
        display=display,
        ship=state.ship,
        seats=tuple(seats),
        clutter=tuple(clutter),
        display_facing_deg=float(_jitter("facing", table_seed).uniform(0, 360)),
        stickers=stickers,
        table_seed=table_seed,
    )
    if hands:
        scene = add_clutter(
            scene,
            state.catalogue,
            rng or np.random.default_rng(table_seed),
            hands=hands,
            cups=0,
            shells=0,
            player_ships=False,
        )
    return scene


def _display_rotation(tile: str, r: int, c: int) -> int:
    """Display tiles lie whichever way they were dealt; a stable pseudo-random quarter turn."""
    return int(_jitter(tile, "dealt", r, c).integers(0, 4)) * 90
