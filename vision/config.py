"""Every threshold and tunable of the vision pipeline, one frozen dataclass per stage.

`VisionConfig()` is the default the companion runs with; tests and benchmarks pass their
own. Lengths are millimetres on the table unless a name says `_px` (image pixels).
"""

from __future__ import annotations

import ast
from collections.abc import Sequence
from dataclasses import dataclass, field, fields, replace
from typing import Any

# A cell crop is the tile's square plus this much on every side, so a tile up to 4 mm off
# its cell centre (docs/table-kit.md) still lies wholly inside its crop.
CROP_MARGIN_MM = 6.0
# Rectified crops are made at this scale: a 45 mm tile becomes 90 px, never fewer pixels than
# the camera itself gives (at least 1.5 px/mm, docs/table-kit.md).
PX_PER_MM = 2.0


@dataclass(frozen=True, slots=True)
class MarkerConfig:
    """Finding the ArUco markers (vision.reader.markers)."""

    # The detector runs on a copy whose longer side is at most this; corners are then
    # refined on the full-resolution frame. 0 means: always detect at full resolution.
    detect_max_side_px: int = 1440
    # The first pass thresholds with one window size (px of that copy): quick, and enough
    # for markers of 20-60 px. Later passes use OpenCV's range of windows.
    fast_window_px: int = 11
    # ... on this many strips of that copy (across its shorter side), overlapping by this
    # many px, each in its own thread (OpenCV lets go of Python's lock while it looks): a
    # 30 mm marker is some 45 px there, so each lies wholly in one strip.
    fast_strips: int = 2
    fast_strip_overlap_px: int = 128
    # When the first pass finds nothing: the full range of windows, then a contrast-
    # enhanced (CLAHE) copy, then the full-resolution frame.
    fallback_passes: bool = True
    clahe_clip_limit: float = 3.0
    clahe_tile_grid: int = 8
    # recover_markers looks for a missing marker in a window this many marker sides wide
    # around the place the area's other markers predict for it, at full resolution.
    recover_window_sides: float = 2.5
    # A recovered marker must lie within this fraction of its side of the predicted place ...
    recover_max_offset: float = 0.6
    # ... and candidates smaller than this share of its predicted side are passed over early.
    recover_min_side_share: float = 0.5
    # Rounds of looking again: a marker found again may place its area well enough to find
    # its others (an area with one marker seen is placed only roughly at first).
    recover_rounds: int = 2
    # Markers the kit uses: 0-3 display, 4s..4s+3 seat s (s = 1..5).
    max_marker_id: int = 23
    # Sub-pixel corners from lines fitted to the four sides of the black square.
    edge_refine: bool = True
    edge_samples_per_side: int = 12
    # Search this far (in module widths of the marker, 1 module = side / 6) across a side.
    edge_search_modules: float = 0.5
    # A side whose line fit leaves this much scatter (px) keeps the detector's corners.
    edge_max_scatter_px: float = 0.8
    # A candidate smaller than this (side in px of the full frame) is ignored.
    min_side_px: float = 12.0


@dataclass(frozen=True, slots=True)
class AreaConfig:
    """Locating the display and the seats from their markers (vision.reader.areas)."""

    # A marker whose corners lie further than this from where the others put them is a
    # wrong sticker or a misplaced one: it is left out (stickers may sit 3 mm / 2° off).
    max_marker_error_mm: float = 7.0
    # Fit every area together with one table plane (all mats lie on one table) when at least
    # two areas are seen; each area is then a turn, shift and scale on that plane.
    joint_plane_fit: bool = True
    # An area whose corners the one-plane model misses by more than this (rms, mm) keeps its
    # own fit (a board propped up, a curved lens); stickers alone give about 2 mm.
    joint_max_rms_mm: float = 3.0
    # Standard deviation (mm) of a sticker's misplacement, weighing markers against lines.
    sticker_sigma_mm: float = 1.5
    # Plausibility: a located area's image scale must lie between these (px per mm) ...
    min_px_per_mm: float = 0.8
    max_px_per_mm: float = 40.0
    # ... and no marker may look more than this much larger/smaller than the fit predicts.
    max_marker_size_ratio: float = 1.35
    # The scale may not change across one area by more than this factor (a degenerate fit).
    max_scale_change: float = 2.0
    # Display: refine with the printed outline of the ship lane (its inner and outer square,
    # docs/table-kit.md), found as thin dark lines on the paper between the stickers. Kept only
    # when found clearly on every side and when it moves no cell centre further than
    # lane_max_shift_mm; otherwise the markers alone.
    lane_refine: bool = True
    # The outer square is searched first this far either side (nothing else is printed
    # near it); then both squares within lane_fine_search_mm (the cells' outlines lie 2 mm
    # inside the inner square).
    lane_search_mm: float = 6.0
    lane_fine_search_mm: float = 1.2
    lane_samples_per_line: int = 24
    # Each sample averages this many parallel profiles within ± this reach along its line.
    lane_profiles_per_sample: int = 7
    lane_profile_reach_mm: float = 2.5
    # Lines are sampled this far along from the middle of each side (stickers cover the ends).
    lane_sample_reach_mm: float = 86.0
    # A sample counts when its dip is this many times the profile's noise (MAD) and at
    # least lane_min_dip grey levels deep, with paper on both sides (step below this share).
    lane_min_snr: float = 4.0
    lane_min_dip: float = 3.0
    lane_max_step_share: float = 0.6
    lane_min_per_side: int = 8
    lane_min_sides: int = 3
    lane_max_shift_mm: float = 4.0
    # A display with one marker seen (a hand over the others) is placed on the table plane
    # a seat gives, turned by that marker, whose sticker may sit 2° off: some 10 mm at the
    # lane's far side, beyond the outline's search. So it is turned about the marker by each
    # of these angles, refined with the lane outline from each start, and kept where the
    # outline is found clearly on every side; the refined pose may move a cell centre this
    # far (mm) from its start, and must put the marker within max_marker_error_mm.
    one_marker_turns_deg: tuple[float, ...] = (-3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0)
    one_marker_max_shift_mm: float = 6.0
    # A seat with one marker seen is placed on the table plane by that marker, then by its
    # printed board: the detail (finer than board_detail_mm) of the pack's board picture
    # within board_band_mm of the lines between its cells (tiles cover the rest) matched
    # with the frame's at board_px_per_mm, turned about the marker up to board_turn_deg
    # (the sticker may sit 2° off; every board_coarse_turn_deg, then every
    # board_turn_step_deg near the best) and shifted up to board_shift_mm (then within
    # board_fine_shift_mm of the best shift). A match (normalised correlation, 0..1) below
    # board_min_match leaves the seat unread: a lower bar places more seats from one marker,
    # and more of them millimetres off.
    board_px_per_mm: float = 2.0
    board_detail_mm: float = 1.5
    board_turn_deg: float = 3.0
    board_coarse_turn_deg: float = 1.0
    board_turn_step_deg: float = 0.25
    board_shift_mm: float = 8.0
    board_fine_shift_mm: float = 2.0
    board_min_match: float = 0.2
    board_band_mm: float = 4.0
    # A display with one marker seen whose lane outline is not seen either (glare, an arm) is
    # placed by the tiles in its cells as a seat is by its board (the settings above), the
    # edges of 16 tile squares on white paper shifted by up to tiles_shift_mm (the marker
    # alone may put cells over 10 mm off). A match (normalised correlation, 0..1) below
    # tiles_min_match leaves it unread.
    tiles_shift_mm: float = 12.0
    tiles_min_match: float = 0.12
    # Line samples further than this from the fitted outline are outliers (mm).
    lane_outlier_mm: float = 0.8
    lane_line_sigma_mm: float = 0.25


@dataclass(frozen=True, slots=True)
class CropConfig:
    """Rectified crops handed to the tile recogniser (vision.reader.areas,
    vision.reader.recognise)."""

    px_per_mm: float = PX_PER_MM
    crop_margin_mm: float = CROP_MARGIN_MM


@dataclass(frozen=True, slots=True)
class MotionConfig:
    """The motion gate on the low-resolution grey stream (vision.reader.motion)."""

    # Frames are smoothed with a Gaussian of this sigma (px of the small frame) first.
    blur_sigma_px: float = 1.2
    # A pixel has changed when its grey value moved by more than this (0..255) ...
    pixel_threshold: int = 18
    # ... and the frame is moving when more than this fraction of its pixels changed.
    moving_fraction: float = 0.002
    # The table is still after this long without motion.
    still_seconds: float = 1.0
    # Changed pixels (against the last still frame) touching the frame's edge after motion
    # stopped are an arm still reaching in; the gate waits, but no longer than this.
    max_hand_wait_seconds: float = 6.0
    # changed_areas: an area changed when more than this many mm² of it changed.
    min_changed_mm2: float = 250.0
    # Areas are compared in a rectified copy at this scale (px per mm).
    compare_px_per_mm: float = 0.5


@dataclass(frozen=True, slots=True)
class ReadConfig:
    """Orchestration of a whole read (vision.reader.read)."""

    # Frames larger than this many pixels are refused (a decompression bomb, not a camera).
    max_pixels: int = 50_000_000
    # Images smaller than this on their shorter side cannot hold the kit at 1.5 px/mm.
    min_side_px: int = 200
    # Look for the ship while the cells are cut and read: in a cell worker process when
    # there are workers (a thread here would share Python's lock with the cells' reads),
    # else in a second thread (OpenCV and numpy let go of that lock while they work).
    ship_beside_cells: bool = True
    # Worker processes that read parts of the table's cells beside this one
    # (vision.reader.cellpool); None: one fewer than the cores, at most 2 (each holds its own copy
    # of the model); 0: read every cell in this process.
    cell_workers: int | None = None
    # With workers, this process reads the display's cells and enough of the seats' cells to
    # make this many times a worker's part (the workers share the rest alike). It also cuts
    # the crops, a worker also looks for the ship, and a worker's cells take longer a cell
    # (each is sent to it and back). `companion bench vision --set read.cells_here_weight=W` times a
    # read with another share.
    cells_here_weight: float = 1.1
    # What names each cell: "matcher" (vision.reader.recognise and the box's judge) or "net"
    # (the cell network, vision.cellnet: no judge to learn for a new box).
    recogniser: str = "matcher"
    # The cell network's one decision setting: the wrong-rate among the cells it names, held
    # with `net_confidence` on `net_tables` rendered tables of the box (vision.cellnet.calibrate).
    net_wrong_rate: float = 0.005
    net_confidence: float = 0.95
    net_tables: int = 40
    # The box's own head (vision.cellnet.adapt) is fitted on this many other rendered tables
    # of the box before the calibration (0: the network's own head).
    net_fit_tables: int = 40
    # The ridge of the box's metric (vision.cellnet.adapt.fit_metric), in units of the mean
    # eigenvalue of its crops' differences from their pictures: small whitens them almost
    # fully, large leaves the network's features almost as they are.
    net_metric_ridge: float = 0.3
    # Steps of learning the box's metric further from there, so that its renders' tiles
    # outscore their look-alikes (vision.cellnet.adapt.refine_metric; 0: closed form only).
    net_metric_steps: int = 150

    def __post_init__(self) -> None:
        if not 0 < self.net_metric_ridge < float("inf"):
            raise ValueError("read.net_metric_ridge must be a finite number above 0")
        if self.net_metric_steps < 0:
            raise ValueError("read.net_metric_steps must be 0 or more")


@dataclass(frozen=True, slots=True)
class StorageConfig:
    """A storage slot weighed against the table round it (vision.reader.storage): an unknown one
    that looks like the table is empty (no storage card under it), an empty one whose
    surroundings are far paler than the table is unknown.

    Chosen on rendered wooden tables without cards, with a hand put over one slot of each
    table (docs/vision.md, "The storage slot and the table round it")."""

    # Weigh the slots the cell reading read empty or left unknown at all.
    enabled: bool = True
    # The square cut round the slot is read at this scale, in blocks of this side (mm).
    px_per_mm: float = 2.0
    block_mm: float = 4.0
    # The slot is looked at as far as a tile in it may reach beyond its half side (4 mm off
    # and 5 degrees turned, docs/table-kit.md); the table round it from this much further out,
    # in a ring this wide.
    reach_mm: float = 6.0
    ring_gap_mm: float = 2.0
    ring_mm: float = 20.0
    # Kept clear of the seat's markers (their white margin, where a sticker may sit) and its
    # board by this much more.
    keep_clear_mm: float = 6.0
    # This share of the slot's blocks must each have a block of the ring within max_inside
    # of its colour (log units, the light's slope across the square fitted out first) ...
    inside_share: float = 0.9
    max_inside: float = 0.05
    # ... the ring's eight sectors must agree within this (an arm over part of it does not) ...
    max_sectors: float = 0.15
    # ... its colour keep the hue of at least half the other seats' rings within this angle
    # (of the log colour less its mean: skin is near a wooden table's hue, far from a green
    # cloth's) and at least this share of their saturation (a lamp's glare washes a tile
    # into the table's colour), on a table coloured at least this much (their median: a
    # faint tint's hue means little, and a white or grey table is the storage card's case,
    # the cell reading's) ...
    max_hue_deg: float = 8.0
    min_saturation: float = 0.5
    min_table_chroma: float = 0.15
    # ... no block of the slot be this white (glare to clipping) ...
    clip_grey: float = 235.0
    # ... and the slot and its ring keep this share of the table's fine texture (the detail
    # between two blurs, mm; the richest of the other seats' rings): skin is smooth.
    texture_fine_mm: float = 0.5
    texture_coarse_mm: float = 1.5
    min_texture: float = 0.6
    # A slot the cell reading read empty (by its white card, or a white table) is unknown
    # when the table round it, looked at in a square cut at this scale, keeps less than this
    # share of the other seats' rings' saturation: a pale arm or hand lies over the slot and
    # all round it; on a table coloured at least pale_table_chroma (on a white or grey one
    # saturation tells a pale arm nothing). Saturations are shares (0..1); chromas are the
    # length of the log colour less its mean.
    ring_px_per_mm: float = 1.0
    min_empty_saturation: float = 0.25
    pale_table_chroma: float = 0.08


@dataclass(frozen=True, slots=True)
class VisionConfig:
    """All stages' thresholds together."""

    markers: MarkerConfig = field(default_factory=MarkerConfig)
    areas: AreaConfig = field(default_factory=AreaConfig)
    crops: CropConfig = field(default_factory=CropConfig)
    motion: MotionConfig = field(default_factory=MotionConfig)
    read: ReadConfig = field(default_factory=ReadConfig)
    cells: CellConfig = field(default_factory=lambda: CellConfig())
    ships: ShipConfig = field(default_factory=lambda: ShipConfig())
    storage: StorageConfig = field(default_factory=StorageConfig)
    judge: JudgeConfig = field(default_factory=lambda: JudgeConfig())


@dataclass(frozen=True, slots=True)
class JudgeConfig:
    """How the judge is learnt (vision.box.judge)."""

    # Use the learned judge at all (False: the matcher's own cascade answers).
    enabled: bool = True
    # Rendered tables learnt from, dealt into this many folds: each fold's cells are weighed
    # by a network trained on the others' (calibration and thresholds use those weighings).
    tables: int = 60
    folds: int = 5
    # The thresholds keep wrong answers (a tile misnamed, a tile read empty, an empty cell
    # named) within this share of all cells learnt from, each weighed out of fold.
    wrong_rate: float = 0.001
    # Never answer below this probability, whatever the held-apart tables allow.
    least_threshold: float = 0.5
    # The network: hidden units, training steps, step size, weight decay. What one does is
    # measured by the out-of-fold log-loss and the share of cells answered on the learning
    # sets of several packs: `companion bench judge --set judge.NAME=VALUE` (docs/vision.md).
    hidden: int = 32
    steps: int = 300
    # The judge's probability is the mean of this many networks, each from its own random
    # start (one alone is sure of itself, each in its own way, where the tables are few).
    members: int = 3
    learning_rate: float = 0.03
    decay: float = 1e-4
    seed: int = 0
    # A table's lessons (vision.box.lessons) revise the judge for cells proposing a tile they are
    # about; the judge's own probability counts as this many lessons.
    lesson_prior: float = 10.0

    def __post_init__(self) -> None:
        for name in ("tables", "hidden", "steps", "members"):
            if getattr(self, name) < 1:
                raise ValueError(f"judge.{name} must be at least 1")
        if self.folds < 2:
            raise ValueError("judge.folds must be at least 2 (cells are weighed out of fold)")


@dataclass(frozen=True, slots=True)
class CellConfig:
    """Reading what lies in a cell (vision.box.tilemodel, vision.reader.recognise).

    Fits and shares are 0..1, evidence -1..1 (vision.reader.recognise), rms values grey levels
    (0..255). What one value does is measured by reading rendered tables with it changed:
    `companion bench vision --seed 7 --set cells.NAME=VALUE --csv FILE` (cells right,
    wrong, unknown and covered cells answered, per pack and difficulty; docs/vision.md).
    """

    # Working scale: a tile is matched at this many pixels a side (whatever the crop's scale).
    tile_px: int = 48
    # Templates (and crops) get this much Gaussian blur (px at tile_px), like a camera's.
    template_blur_px: float = 0.7
    # A rim this wide (mm) around the tile is left out of the match (its cut edge, a neighbour).
    border_mm: float = 2.0
    # Finding the tile in its crop: coarse templates of this many px a side, without a rim of
    # coarse_border_mm; then grey templates without pose_border_mm, turned by these angles.
    coarse_tile_px: int = 16
    coarse_border_mm: float = 0.0
    pose_border_mm: float = 0.0
    pose_angles_deg: tuple[float, ...] = (-5.0, -2.5, 0.0, 2.5, 5.0)
    # Pose templates keep detail finer than this (Gaussian sigma, px at tile_px): edges
    # fix a place and a turn, broad areas of colour do not.
    pose_highpass_px: float = 2.0
    # ... along this many of the pack's main colour directions.
    pose_colours: int = 2
    # Fine search around the coarse place, px at tile_px each way, with the pose templates
    # of this many of the best-ranked candidates (the best fit afterwards keeps its place).
    pose_search_px: int = 4
    pose_candidates: int = 3
    # A crop where no tile is named searches its place with this many more candidates: those
    # that place a tile best at a quarter of the scale (every place and turn of the crop),
    # for the coarse colour match often misses the right one in hard light or under a hand.
    # One that places the tile better (by place_margin) is fitted there.
    # (`companion bench vision --set cells.pose_candidates_more=0` reads without them.)
    pose_candidates_more: int = 5
    # A cell where no tile is named is placed again by up to this many more candidates
    # (the best-fitting that have not placed it yet).
    pose_retries: int = 1
    # ... but one in doubt between two tiles (the best fit and its closest rival, each well
    # fitted) is placed again by each of the two that did not place it: a thin detail one
    # has (a garland of dots, a shell) lies a pixel off where the other placed the tile, and
    # fits worse than no detail at all (the better fit stands). False
    # (`--set cells.doubt_placed_by_both=False`): as the other unnamed cells.
    doubt_placed_by_both: bool = True
    # A tile named with less evidence than this against its closest rival is placed again
    # by that rival (the better fit stands): a thin outline (a boat, a garland) a pixel off
    # where the other tile placed it fits worse than no detail at all, so a tile without it
    # may win. Placing again for every named tile changes almost nothing and costs time.
    rival_recheck_evidence: float = 0.75
    # ... and below this when blocks were left out as covered: the detail a tile lacks (a
    # boat) is unexplained by it and may be taken for a cover, and then the evidence against
    # the tile that has it is weighed without it.
    rival_recheck_evidence_covered: float = 0.9
    # "Places it better": its pose match (a normalised correlation) higher by this much. A
    # tile's own candidate at its place scores well above others'; fitting every slightly
    # better place costs time and names no more tiles.
    place_margin: float = 0.1
    # A square no candidate fits (by min_fit) where the empty look does not either is placed
    # again by what fits: this many of the best-fitting candidates and the place_plain
    # pictures least drawn on (a plain tile's square cut at a wrong place fits a busier
    # picture better than its own), over every place within place_search_mm of the crop's
    # centre and every turn within place_search_deg (a tile lies up to 4 mm and 5 degrees
    # off its cell, table-kit.md, and the area's markers place the cell a little off too),
    # place_step_px (px at tile_px) and place_step_deg apart, then finely. 0: never.
    place_by_fit: int = 3
    place_plain: int = 2
    place_search_mm: float = 6.0
    place_search_deg: float = 7.0
    place_step_px: float = 2.0
    place_step_deg: float = 2.0
    # A tile named, or in doubt, with less evidence than full_evidence against its closest
    # rival, a sibling: the two and the siblings that fitted best after them,
    # place_refine_siblings pictures in all (those after the two in every turn that lies
    # as the best does), are each placed by their own fit from where
    # the tile was placed, anywhere a tile may lie (place_search_mm, place_search_deg), in
    # at most place_refine_steps Gauss-Newton steps (each cuts one square). False: never.
    place_refine: bool = True
    place_refine_steps: int = 8
    place_refine_siblings: int = 3
    # Every candidate is ranked at medium_tile_px; the best `shortlist` are fitted finely.
    medium_tile_px: int = 24
    shortlist: int = 24
    # Two rotations of one picture that the light model tells apart by less than this
    # (1 - likeness) look the same: a symmetric picture, either answer is right.
    twin_likeness: float = 0.985
    # A tile is named when the light model with its template explains at least this share of
    # what the light alone does not (1 = perfectly) ...
    min_fit: float = 0.55
    # (or leaves at most this much unexplained, grey levels rms: a plain tile under noise,
    # as long as it explains at least min_fit_floor)
    max_fit_rms: float = 10.0
    min_fit_floor: float = 0.35
    # A tile partly hidden (at least covered_share of its blocks left out as covered) must
    # fit what is seen of it at least min_fit_covered: a hand over two thirds of a tile, of
    # which the cover search finds only a sixth, is explained in part by the plain stretch
    # of some other tile.
    covered_share: float = 0.12
    min_fit_covered: float = 0.75
    # ... and a tile with at least doubt_covered_share of its blocks left out as covered must
    # fit at least sure_fit_covered or beat its rivals by sure_evidence_covered: an arm over
    # nine tenths of a cell, of which the cover search finds a tenth, is fairly explained
    # by a plain tile (a skin-coloured island).
    doubt_covered_share: float = 0.1
    sure_fit_covered: float = 0.82
    sure_evidence_covered: float = 0.8
    # A tile named with blocks left out as covered must still beat its rivals by this much
    # with the blocks beside the cover (sharing a side) left out as well: the edge of a
    # cover not caught as covered (a finger's side, an arm's shadow) lies there, and may be
    # all that favours it (fingers over an island's end read as a whole island); a tile
    # named rightly beats its rivals so by far more. -inf
    # (`--set cells.cover_edge_evidence=-inf`): never asked.
    cover_edge_evidence: float = 0.3
    # The pattern must be seen with at least this share of its contrast (light times what
    # glare leaves); fainter is washed out (the renderer counts 60 % glare as hidden). A
    # lower bar names more tiles in hard light and answers more covered cells wrongly.
    min_gain: float = 0.25
    # Light tints the channels alike, give or take a colour cast: the fitted gains of the
    # channels may differ by at most this factor: a lamp's warm light under a camera
    # balanced for daylight scales red over blue by 2 and more.
    max_gain_spread: float = 2.5
    # ... and, against every rival meaning something else, the evidence (+1: exactly the
    # best, -1: exactly the rival, 0: half way) is at least this.
    min_evidence: float = 0.6
    # Rivals weighed by evidence (the best-fitting ones of other meanings).
    rivals: int = 4
    # ... and the two answers' expected fits must lie this many noise deviations apart
    # (a washed-out or faint tile cannot be told from anything).
    min_separation: float = 3.0
    # Occlusion: the fitted tile is cut into blocks x blocks; a block whose residual is above
    # occluded_ratio times the typical block's (the typical_quantile of all blocks) and
    # above occluded_floor (grey levels², 3 channels) is hidden; more than max_hidden of the
    # blocks hidden is a covered cell (unknown). Up to cover_passes fits find the hidden.
    blocks: int = 6
    occluded_ratio: float = 6.0
    typical_quantile: float = 0.3
    occluded_floor: float = 120.0
    occluded_detail: float = 0.8
    max_hidden: float = 0.45
    # A square found more hidden than that, up to max_hidden_named, is fitted once more
    # without all its hidden blocks, and a tile named so (by every test below, beating the
    # empty look over up to that share too) stands; an empty cell never is (its look keeps
    # max_hidden). A player's ship standing on a tile, turned across it, and its shadow
    # often touch more than 0.45 of the blocks (0.47-0.5 in the cells traced), and what is
    # left names the tile well.
    max_hidden_named: float = 0.6
    cover_passes: int = 3
    # A block is covered only if none of this many best-fitting candidates explains it.
    cover_witnesses: int = 1
    # Candidates refitted without the covered blocks (the closest by the first fit).
    refit: int = 16
    # A tile named with blocks left out as covered is decided again with up to this many
    # of its siblings (the same kind and land edges, another meaning) fitted too, when
    # they were not (0: never).
    siblings_when_covered: int = 12
    # A square fitting worse than min_fit is fitted again (by its `refit` closest
    # candidates) without this share of its blocks, those its best fit explains worst,
    # before the covered blocks are sought: a cover big or colourful enough drags the first
    # fit's light model along.
    cover_trim: float = 0.5
    # A tile named where the first fit was that poor must beat its rivals by this evidence,
    # not min_evidence: the cover that spoiled the first fit may hide what tells two tiles
    # apart.
    min_evidence_trimmed: float = 0.7
    # The empty display mat or storage card: within the tile's square, what the smooth light
    # leaves unexplained is at most this (grey levels, rms) ... (board cells: what the
    # board picture under the light model leaves). Below empty_sure_rms (mat_sure_rms for
    # the plain mat or card) no tile is sought;
    # up to empty_max_rms the best tile must beat the empty look by min_evidence.
    empty_sure_rms: float = 3.0
    mat_sure_rms: float = 2.5
    # The empty look is judged on the tile's square and this much more on every side (mm;
    # negative: less). A board's thin printed lines at the cell's edge match badly after
    # the camera's and the crop's resampling, so the square stops short of them.
    empty_extra_mm: float = -2.0
    empty_max_rms: float = 9.0
    # A board cell whose board picture leaves between empty_sure_rms and this is looked at
    # again (vision.reader.recognise._look_again): moved by a fraction of a pixel (its printed lines
    # may lie between the pixels), and against the board picture blurred only
    # reference_sharp_blur_px (a sharper camera than reference_blur_px assumes), taken when
    # that leaves at most empty_sure_rms (taken whenever it explained more, it would let a
    # tile under a hand pass as empty) ...
    empty_again_rms: float = 6.0
    reference_sharp_blur_px: float = 0.5
    # ... and the moved look counts when it sees the board picture with at least this much
    # more of its contrast (moving by a fraction also smooths the noise away).
    empty_again_gain_rise: float = 0.05
    # With no tile named, a cell that looks empty is empty unless some tile explains more
    # of it than the empty look by this many times the noise energy (a faint tile).
    empty_max_excess: float = 10.0
    # A board cell whose picture is seen (where nothing covers it) with at least this share
    # of its contrast is empty when no tile is named; below empty_board_min_gain it is never
    # empty: something lies over the board (a flat tile, an arm), and may hide a tile. A
    # cell the board picture does not explain down to empty_sure_rms (partly covered, or a
    # faint tile) must show it with at least empty_board_doubt_gain. (A fine printed texture
    # under a soft lens keeps some 0.2 of its contrast, so the clean case asks for less.)
    empty_full_gain: float = 0.6
    # ... unless a tile explains more of it than the empty look by empty_max_excess times
    # the noise energy and fits at least min_fit (a tile left unnamed for glare or doubt
    # alone): then it stays unknown. A nearly plain board's contrast is its thin cell
    # outline, which a tile's own edge can stand in for (a tile in glare or in doubt would
    # read empty at a full board gain; at min_fit_floor instead, empty cells under hands
    # would be lost).
    # False (`--set cells.full_gain_yields_to_tile=False`): empty at full gain whatever a
    # tile explains.
    full_gain_yields_to_tile: bool = True
    # A board cell that is not empty beyond doubt is never empty when, where nothing covers
    # it (the blocks left out as covered left out), the board picture explains less than
    # this share of the detail the smooth light leaves there, and that detail is more than
    # empty_detail_floor grey levels (rms; the floor lies above what a camera's sensor
    # noise alone leaves over a right empty cell). A plain water tile lying over the board
    # shows its own edge and waves, which the board's thin printed outline, seen at some
    # contrast beside them, does not explain. `--set cells.empty_min_explained_kept=-inf`
    # turns it off.
    empty_min_explained_kept: float = 0.25
    empty_detail_floor: float = 3.9
    empty_board_min_gain: float = 0.1
    empty_board_doubt_gain: float = 0.2
    # A cell showing the board that faintly (below empty_board_doubt_gain) must have
    # the board picture explain at least this share of its detail (what the smooth light
    # alone leaves): a flat pale arm's skin or a tile washed out by a lamp's glare, wholly
    # over the cell, shows a board's thin lines at 0.13-0.19 of their contrast by chance and
    # leaves only noise, of which the board explains little; an empty board cell's picture
    # explains more, but for cells grey with glare or dark in shadow.
    empty_board_min_explained: float = 0.1
    # A board cell read empty (not beyond doubt) must show its board picture along the
    # tile's edge (a band from empty_rim_inside_mm inside to empty_rim_outside_mm outside
    # it, searched empty_rim_search_mm across) on at least one side of the cell, where the
    # picture has some detail there (empty_rim_min_detail grey levels): the picture must
    # explain empty_rim_min_explained of what that side shows. A plain tile of the board's
    # own colour under a player ship, or a pale arm or a lamp's reflection over a tile,
    # leaves the square inside as plain as the board's; the board's print at the edge is
    # under it.
    empty_rim_inside_mm: float = 3.0
    empty_rim_outside_mm: float = 4.0
    empty_rim_search_mm: float = 1.5
    empty_rim_min_detail: float = 5.0
    empty_rim_min_explained: float = 0.08
    # A plain cell of a light group (the display's) must be at least this bright against the
    # paper seen around the tile's place (that rim's paper_quantile brightness, a share of
    # it): a pale plain tile in a lamp's glare or an arm over the cell is a little darker
    # (a hand's shadow over an empty cell makes it unknown). A plain cell read alone (the
    # storage card, whose crop's rim is not all card) needs only empty_min_white_alone,
    # for a lamp lights a card unevenly.
    empty_min_white: float = 0.9
    empty_min_white_alone: float = 0.78
    paper_quantile: float = 0.9
    # A plain cell of a light group must have the hue of the paper seen round it (the rim's
    # brightest tenth; hues compared as each channel over the colour's mean) give or take
    # this much: the same paper under the same light a few mm away. A pale tile in a
    # lamp's glare or a pale arm over a whole display cell is tinted beyond it. The storage
    # card, read alone, is not tested: a hand's bluish shadow over the card and not its rim
    # would tint an empty card as much.
    empty_max_tint: float = 0.02
    # Glare: cells read as one light group (the display's) share the paper seen round them
    # (the group's median). A block of a plain cell whiter than that paper by glare_washout
    # of the way to white is in a lamp's reflection, which may wash a tile out altogether:
    # such a cell is never empty. Paper at least glare_max_paper bright leaves no room to
    # tell glare, and the test is not made. A pale arm in the lamp's light over a whole
    # display cell, rim and all, looks like paper a fifth of the way whiter, so the bar
    # lies below that. Brightness is grey levels (0..255); glare_washout a share of the
    # way from the paper to white.
    glare_washout: float = 0.2
    glare_max_paper: float = 245.0
    # ... but where it is, a plain cell with a block at least glare_clip white is in glare:
    # white to clipping (grey levels), a tile in a lamp's reflection looks like paper. The
    # cost: a camera that clips the mat's paper itself leaves empty display cells unknown;
    # the mat should not be exposed to white. The storage card, read alone, is in glare
    # when its square is this white on the whole. And a plain cell of a group whose own
    # paper is this white is in glare, whatever its group's paper (a reflection over the
    # whole display). At glare_max_paper instead, a bright exposure's paper would leave
    # every empty display cell unknown.
    glare_clip: float = 250.0
    # A board cell is in glare (never empty) when the board picture, at the contrast it is
    # seen with, leaves more than this of its brightness unaccounted for (grey levels: a
    # lamp's reflection laid over it as a veil, or anything pale and flat: an arm). Under
    # such a veil a tile's picture is a faint copy whose edge, lying by the board's printed
    # outline, passes for the board.
    board_glare_veil: float = 160.0
    # The board picture is compared at every shift up to this many pixels (at tile_px) each
    # way: a seat's pose may put its crops a millimetre or two off the printed cells.
    empty_shift_px: int = 2
    # The board picture is blurred this much (px at tile_px) to look like a camera's.
    reference_blur_px: float = 1.0
    # ... and its mean colour is the reference's (grey for the mat) under some light that
    # scales and adds white to every channel alike, give or take this share of its
    # brightness (a warm or cold cast).
    empty_max_cast: float = 0.15
    # ... or of this share, for a board picture with a pattern of its own that is seen with
    # at least empty_board_doubt_gain of its contrast and explained over the whole square
    # down to empty_sure_rms (a patterned board under a warm lamp shifts further).
    empty_max_cast_patterned: float = 0.3
    # A board cell read empty after doubt, part of it taken as covered, is unknown when its
    # colour over its board picture's differs in hue by more than this from what the
    # table's board cells empty beyond doubt show (its seat's, else all seats'; natural log
    # of the per-channel ratios, the largest off their mean): a hand over most of the cell
    # reads as the board washed out by glare (vision.reader.recognise.doubt_odd_light).
    empty_max_light_tint: float = 0.5
    # A tile named with at least covered_share of its blocks left out as covered is unknown
    # when the black its fitted light adds differs in hue (grey levels, per channel off
    # their mean) by more than this from the tiles named with nothing left out and a fit of
    # at least tile_clean_fit (its area's, else the table's): a lamp's glare veils a tile in
    # white, but a hand over most of a plain island's end, taken for its sand, asks for a
    # veil of the skin's hue (vision.reader.recognise.doubt_odd_light).
    tile_max_veil_tint: float = 20.0
    tile_clean_fit: float = 0.8
    # A board picture whose square has a pattern of at least this rms (grey levels) must
    # show it with at least empty_min_gain of its energy, and its fitted contrast must reach
    # empty_board_min_gain, to be empty (even a faint texture is measured well over a cell;
    # only a truly plain board cannot tell a flat arm from itself).
    empty_min_pattern: float = 3.0
    empty_min_gain: float = 0.3
    # Confidence reaches 1 at this evidence and this fit.
    full_evidence: float = 0.9
    full_fit: float = 0.9


@dataclass(frozen=True, slots=True)
class ShipConfig:
    """Finding the explorer ship in the ship lane (vision.reader.ship): what is searched, and how
    the decision is learned from the pack's picture of the ship."""

    # The display is searched at this scale (px per mm), warped at twice that and reduced.
    px_per_mm: float = 0.8
    # The paper's brightness per channel is the brightest within this reach (mm), smoothed:
    # each pixel is divided by it (light level, colour cast and gradients cancel).
    paper_reach_mm: float = 30.0
    # The ship's picture is matched at lengths (its longer side) from shortest to longest
    # (mm), each length_step times the last, along the lane either way and turned these
    # many degrees off it; its centre up to centre_slack_mm from its nominal place.
    shortest_mm: float = 24.0
    longest_mm: float = 60.0
    length_step: float = 1.2
    turns_deg: tuple[float, ...] = (0.0,)
    centre_slack_mm: float = 8.0
    # The lane is read this far (mm) beyond the mat's active area (the ship may stand over
    # its outer line).
    beyond_mm: float = 12.0
    # Learning (vision.reader.ship.learn_ship): this many drawn display areas, this share of them
    # kept back to calibrate and to choose the threshold; on those the threshold keeps wrong
    # positions at most at wrong_rate of all areas.
    learn_areas: int = 360
    validation_share: float = 0.4
    wrong_rate: float = 0.01
    # The threshold on the belief never goes below this (two positions alike share it).
    least_threshold: float = 0.7


@dataclass(frozen=True, slots=True)
class TeachConfig:
    """Teaching a box from frames of the display mat (vision.box.teach; lengths in mm on the
    table)."""

    # Side of each stored tile picture (docs/formats.md asks for at least 128).
    picture_px: int = 256
    # Scale of the rectified mat in which tiles and the ship are found.
    work_px_per_mm: float = 4.0
    # A pixel is "not paper" when its colour lies this far (Euclidean, 0..441) from the
    # paper's colour expected there (fitted over the empty ship lane) ...
    paper_distance: float = 45.0
    # ... unless it is brighter paper of the same hue within this distance (a glare spot).
    hue_distance: float = 28.0
    # Paper of the same hue down to this fraction of its brightness is paper in shadow: a
    # tile's edges are measured where it is told from paper this way.
    shadow_ratio: float = 0.5
    # Printed outlines (≤ 0.5 mm) vanish under an opening of this size; tiles do not.
    line_removal_mm: float = 1.5
    # A cell holds a tile when this fraction of its inner square is not paper ...
    occupied_fraction: float = 0.35
    # ... where the inner square is the tile square shrunk by this on every side (a tile
    # lying 4 mm and 5° off still covers it).
    inner_shrink_mm: float = 8.0
    # A tile's square (always the kit's tile size) is searched with its centre up to this far
    # from its cell's centre, turned up to this many degrees (table-kit.md: 4 mm and 5°, and
    # the markers' own 3 mm).
    search_margin_mm: float = 5.0
    search_turn_deg: float = 6.0
    search_turn_step_deg: float = 0.5
    # The picture is smoothed this much before its edges are measured (a tile's outline
    # stays one edge through noise and JPEG).
    edge_smooth_mm: float = 0.3
    # Then each side of that square may move this far and turn this much on its own onto
    # the tile's outline: the markers (stickers up to 3 mm and 2° off) and an uncorrected lens
    # shear or scale the straightened mat a little.
    refine_mm: float = 1.0
    refine_turn_deg: float = 2.0
    # A found square counts only when at least this fraction of it is not paper.
    found_min_fill: float = 0.6
    # A tile picture with more than this fraction of pixels at or above this level in every
    # channel is washed out by glare (the player is told).
    glare_level: int = 250
    glare_fraction: float = 0.04
    # A tile picture is worth taking again when the frame has fewer pixels a millimetre
    # there than the table-kit asks for, ...
    least_px_per_mm: float = 1.5
    # ... when its outline is softer than this (mm: the sigma of a Gaussian blur that makes
    # the step to paper, measured across this much of each side, as gentle; a tile's printed
    # rim keeps it below the lens's own blur: on the renderer's frames at 1.7 px/mm its
    # hardest light measures up to 0.66, a lens blurring 1.4 mm 0.74 and more), ...
    blurred_mm: float = 0.75
    profile_mm: float = 3.0
    # ... or when more than this fraction of a band beyond one of its sides (from 1 mm, past
    # the kit's gap, to this far out), other tiles left out, holds something unlike paper.
    covered_edge_fraction: float = 0.3
    cover_band_mm: float = 6.0
    # The ship: the smallest plausible outline, and the paper kept around it.
    ship_min_area_mm2: float = 120.0
    ship_margin_mm: float = 3.0
    # Parts of the ship closer than this are one piece (pale bands look like paper).
    ship_join_mm: float = 5.0
    # An empty board picture is stored at this scale.
    board_px_per_mm: float = 4.0
    # A seat holds the board when its grid (less this rim) is this unlike the bare table
    # around the kit (0: the same colours, 1: none in common): more unlike than like.
    board_unlike_table: float = 0.5
    board_inset_mm: float = 5.0
    # Lane samples for the paper model: segments per side.
    lane_segments: int = 10


def with_settings(config: VisionConfig, settings: Sequence[str]) -> VisionConfig:
    """The config with settings "section.name=value" changed (e.g. "cells.min_gain=0.3"):
    for measuring what one threshold does with `companion bench vision --set`. A ValueError
    says, in one sentence, which setting is unknown or which value is of the wrong kind."""
    sections = {f.name for f in fields(VisionConfig)}
    for setting in settings:
        key, sep, text = setting.partition("=")
        section, dot, name = key.strip().partition(".")
        if not sep or not dot:
            raise ValueError(f"{setting!r} is not section.name=value (e.g. cells.min_gain=0.3)")
        if section not in sections:
            raise ValueError(f"{section!r} is not a section (known: {', '.join(sorted(sections))})")
        part = getattr(config, section)
        names = {f.name for f in fields(part)}
        if name not in names:
            raise ValueError(f"{section}.{name} is not a setting of {type(part).__name__}")
        declared = next(f for f in fields(part) if f.name == name)
        value = _setting_value(
            f"{section}.{name}", text.strip(), getattr(type(part)(), name), str(declared.type)
        )
        config = replace(config, **{section: replace(part, **{name: value})})
    return config


def _setting_value(name: str, text: str, default: Any, declared: str) -> Any:
    """`text` read as a value of the default's kind (a whole number is a float too), or as
    an optional number when the default is None (`declared`: the field's type, as written);
    `inf` and `-inf` are numbers (a bar never reached)."""
    kind = type(default)
    what = (
        "a number or None"
        if default is None
        else {
            float: "a number",
            int: "a whole number",
            bool: "True or False",
            tuple: "a tuple such as (1.0, 2.0)",
            str: "a quoted text",
        }.get(kind, kind.__name__)
    )
    try:
        value = float(text) if text.lower() in ("inf", "-inf", "+inf") else ast.literal_eval(text)
    except (ValueError, SyntaxError):
        raise ValueError(f"{name} takes {what}, not {text!r}") from None
    if default is None:  # an optional number (None: the setting's own default rule)
        if isinstance(value, int) and not isinstance(value, bool) and "float" in declared:
            return float(value)
        if value is None or (isinstance(value, int | float) and not isinstance(value, bool)):
            return value
        raise ValueError(f"{name} takes {what}, not {text!r}")
    if kind is float and isinstance(value, int) and not isinstance(value, bool):
        value = float(value)
    if type(value) is not kind:
        raise ValueError(f"{name} takes {what}, not {text!r}")
    return value
