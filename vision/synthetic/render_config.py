"""Tunables of the synthetic table: scene layout, object sizes, effect presets, truth thresholds.

Kit geometry (cells, markers, lane, storage) is not here: it comes only from vision.kit.
Lengths are millimetres on the table unless a name says `_px`.
"""

from __future__ import annotations

from vision import kit

# --- what docs/table-kit.md allows, used when drawing random scenes ---------------------------
TILE_OFFSET_MAX_MM = 4.0
TILE_TURN_MAX_DEG = 5.0
STICKER_OFFSET_MAX_MM = 3.0
STICKER_TURN_MAX_DEG = 2.0
SHIP_OFFSET_MAX_MM = 6.0
SHIP_TURN_MAX_DEG = 10.0

# --- scene layout ------------------------------------------------------------------------
#: Free table between the display's stickers and a seat, and between two seats side by side.
SEAT_GAP_MM = 30.0
#: Random nudge of a seat from its layout slot, and of its facing.
SEAT_NUDGE_MM = 8.0
SEAT_NUDGE_DEG = 5.0
#: White kept around a sticker's black square (≥ the kit's quiet zone).
STICKER_WHITE_MM = kit.MARKER_MARGIN_MM + 1.0
#: Cardboard seen around a board's printed grid.
BOARD_BORDER_MM = 3.0
#: Cardboard edge visible around a tile lying on the table.
TILE_EDGE_MM = 0.5
TILE_EDGE_BGR = (70, 85, 95)
#: The explorer ship's length along the lane (its picture's longer side).
SHIP_LENGTH_MM = 42.0

# --- clutter sizes -----------------------------------------------------------------------
HAND_WIDTH_MM = (80.0, 100.0)
# A hand put over a storage slot (`hand_over_storage`): this wide, its middle this far off.
STORAGE_HAND_MM = (60.0, 150.0)
STORAGE_HAND_OFF_MM = 30.0
CUP_DIAMETER_MM = (75.0, 95.0)
WOODEN_SHELL_MM = (16.0, 22.0)
PLAYER_SHIP_MM = (28.0, 36.0)
SKIN_BGR = ((150, 175, 225), (95, 130, 185), (60, 85, 130), (120, 160, 205))
PLAYER_BGR = ((40, 40, 200), (200, 90, 30), (40, 170, 60), (30, 200, 230), (160, 60, 150))
#: How much light clutter's soft shadow takes away where it falls (0..1).
CLUTTER_SHADOW_DARKNESS = 0.35

# --- camera ------------------------------------------------------------------------------
FRAME_PX = (2880, 1620)
FIT_MARGIN_PX = 30
#: Resolution of the wood texture drawn on the table plane before it is projected.
WOOD_PX_PER_MM = 1.0
# Table cloths (TableScene.table_top "cloth"): green felt, navy, grey, burgundy, beige.
CLOTH_BGR = ((45, 110, 40), (95, 55, 30), (120, 120, 118), (45, 35, 115), (150, 180, 200))
WOOD_MAX_PIXELS = 3_000_000

# --- truth -------------------------------------------------------------------------------
#: A cell counts as covered (the recogniser should answer unknown) when at least this
#: fraction of its tile is hidden, washed out by glare or outside the frame.
COVERED_FRACTION = 0.3
#: Glare at least this strong (0..1 of the way to white) washes a point out.
GLARE_WASHOUT = 0.6
#: A marker counts as hidden when this fraction of its black square is covered or washed out.
MARKER_HIDDEN_FRACTION = 0.05
#: The explorer ship counts as covered above this hidden fraction.
SHIP_COVERED_FRACTION = 0.4
#: Sample points per side of a tile (or marker, or ship) when measuring what is hidden.
TRUTH_SAMPLES = 9
#: Resolution divisor of the cover and light maps.
MAP_DOWNSCALE = 4
