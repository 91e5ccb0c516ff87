"""What lies in a cell, and where the explorer ship stands: learned from a pack's pictures.

A `TileModel` holds, for every tile type of a pack and each of its four rotations, a
light-normalised template at the matching scale and a small descriptor. A cell crop (area
north up, centred on the nominal cell centre, with a margin for a tile lying a few mm off) is
normalised per colour channel (which cancels the colour and strength of the light), a short
list of candidates is found by descriptor, and each is matched by normalised cross-
correlation over every shift the margin allows. The answer is the best match when it is
good enough and clearly better than the best match that would mean something else; a cell
that shows no tile is empty when it looks like the empty mat or board; anything else
(a hand, a cup, glare, a doubt) is unknown.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import cv2
import numpy as np
from numpy.typing import NDArray

from companion.reading import EMPTY, UNKNOWN, CellRead
from vision import kit
from vision.pack import Pack

Image = NDArray[np.uint8]
Float = NDArray[np.float32]


@dataclass(frozen=True, slots=True)
class CellConfig:
    """Thresholds of the cell and ship recognisers (chosen on rendered scenes; see docs)."""

    # Crops are matched at this scale (a 45 mm tile is 90 px).
    px_per_mm: float = 2.0
    # Crop margin around the tile (table-kit: tiles lie up to 4 mm off their cell centre).
    margin_mm: float = 6.0
    # Crops and templates are blurred by this much (px at the matching scale) first.
    soften_sigma_px: float = 1.0
    # Descriptor grid (cells per side) for the short list, and its length.
    descriptor_grid: int = 8
    # ... computed at shifts of up to this many px (at half the matching scale) each way.
    descriptor_shift_px: int = 4
    shortlist: int = 5
    # A tile is named when its correlation is at least this ...
    min_score: float = 0.45
    # ... beats the best match meaning something else by at least this much ...
    min_margin: float = 0.02
    # ... and, where the two differ, looks like it rather than the rival by this much
    # (+1: exactly like it; -1: exactly like the rival).
    min_evidence: float = 0.35
    # Rivals checked by evidence: the best of the short list, and each candidate's nearest
    # look-alikes meaning something else (found when the pack is learned).
    rivals: int = 4
    lookalikes: int = 3
    # Occlusion: residual (sum over the 3 standardised channels) averaged over a window of
    # this many px above which a place does not look like the tile; a square with more than
    # `max_occluded` of such places is unknown (covered or glared out).
    occlusion_window_px: int = 9
    occlusion_residual: float = 2.6
    max_occluded: float = 0.12
    # The score and evidence at which the confidence reaches 1.
    full_score: float = 0.85
    full_evidence: float = 0.9
    # Empty surfaces (the display mat, a storage slot): grey spread and colour saturation
    # of the tile's square at most these (0..255).
    empty_max_std: float = 12.0
    empty_max_saturation: float = 50.0
    # ... and its channels within this share of their mean of each other (paper is grey;
    # a washed-out tile keeps a tint).
    empty_max_tint: float = 0.12
    # A square with more than `max_glare` of its pixels at `glare_level` or brighter is
    # glared out: never called empty.
    glare_level: int = 250
    max_glare: float = 0.02
    # An empty board cell: chromaticity within this of the board picture's, and a grey
    # spread within this factor of the picture's (plus empty_max_std).
    board_max_chroma: float = 0.035
    # A board picture whose cell has at least this grey spread is matched as a template.
    textured_board_std: float = 6.0
    board_std_factor: float = 1.6
    # The ship: a lane position holds the ship when this fraction of its square is "ink"
    # (darker or more coloured than the paper) and at least `ship_ratio` times the next.
    ship_min_ink: float = 0.06
    ship_ratio: float = 2.0
    ship_square_mm: float = 32.0
    ship_px_per_mm: float = 1.5


def _normalise(image: NDArray[Any], floor: float = 4.0) -> Float:
    """Per channel zero mean, unit spread: the light's colour and strength cancel out.
    `floor` keeps a flat channel (grey levels 0..255) from being blown up into noise."""
    f = image.astype(np.float32)
    mean, std = cv2.meanStdDev(f)
    mean = mean.reshape(-1).astype(np.float32)
    std = np.maximum(std.reshape(-1), floor).astype(np.float32)
    return np.asarray((f - mean) / std, np.float32)


def _correlation(a: Float, b: Float) -> float:
    """Normalised cross-correlation of two equally sized patches."""
    a = a - a.mean()
    b = b - b.mean()
    return float((a * b).sum() / max(float(np.sqrt((a * a).sum() * (b * b).sum())), 1e-6))


def _evidence(patch: Float, best: Float, rival: Float) -> float:
    """Where the two candidates differ, how much the patch looks like `best` rather than
    `rival`: +1 exactly like best, -1 exactly like rival (a linear discriminant)."""
    d = best - rival
    energy = float((d * d).sum())
    if energy < 1e-6:
        return 0.0
    return float(((patch - (best + rival) / 2) * d).sum() / (energy / 2))


EMPTY_CLASS = ("", None)


@dataclass(frozen=True, slots=True)
class Match:
    """The best candidate for a crop (key None: the empty board), its correlation, the best
    rival's correlation at the same place, and the evidence against the rivals."""

    key: tuple[str, int] | None
    score: float
    rival: float
    evidence: float
    # The share of the tile's square that does not look like the best candidate at all
    # (a hand, a cup, glare): large blobs of big residuals.
    occluded: float = 0.0


_ROTATE = {90: cv2.ROTATE_90_CLOCKWISE, 180: cv2.ROTATE_180, 270: cv2.ROTATE_90_COUNTERCLOCKWISE}


def turned(picture: Image, rotation: int) -> Image:
    """The upright picture turned `rotation` degrees clockwise."""
    return (
        picture if rotation == 0 else np.asarray(cv2.rotate(picture, _ROTATE[rotation]), np.uint8)
    )


class TileModel:
    """Everything the recogniser learned from one pack, at one scale."""

    def __init__(self, pack: Pack, config: CellConfig | None = None) -> None:
        self.pack = pack
        self.config = config = config or CellConfig()
        self.tile_px = max(16, round(pack.tile_mm * config.px_per_mm))
        self.margin_px = round(config.margin_mm * config.px_per_mm)
        self.coarse_px = max(8, self.tile_px // 2)
        keys: list[tuple[str, int]] = []
        classes: list[tuple[str, Any]] = []
        templates: list[Float] = []
        coarse: list[Float] = []
        descriptors: list[Float] = []
        g = config.descriptor_grid
        for tile in pack.catalogue:
            picture = pack.tiles[tile.id][:, :, :3]
            small = cv2.resize(picture, (self.tile_px, self.tile_px), interpolation=cv2.INTER_AREA)
            for rotation in (0, 90, 180, 270):
                template = _normalise(self._soften(turned(np.asarray(small, np.uint8), rotation)))
                keys.append((tile.id, rotation))
                classes.append((tile.id, tile.meaning.rotated(rotation)))
                templates.append(template)
                coarse.append(self._half(template))
                descriptors.append(self._describe(template, g))
        self.keys = keys
        self.classes = classes
        self.templates = templates
        self.coarse = coarse
        self.descriptors = np.stack(descriptors)
        # For each (type, rotation), the look-alikes that mean something else: whatever the
        # short list holds, a name is only given when the crop beats these too.
        similarity = self.descriptors @ self.descriptors.T
        self.lookalikes: list[list[int]] = []
        for i, row in enumerate(similarity):
            others = [int(j) for j in np.argsort(-row) if classes[int(j)] != classes[i]]
            self.lookalikes.append(others[: config.lookalikes])
        self.boards = {
            side: cv2.resize(
                picture[:, :, :3],
                (
                    round(pack.catalogue.board(side).cols * self.board_pitch_mm * config.px_per_mm),
                    round(pack.catalogue.board(side).rows * self.board_pitch_mm * config.px_per_mm),
                ),
                interpolation=cv2.INTER_AREA,
            )
            for side, picture in pack.boards.items()
        }

    @property
    def board_pitch_mm(self) -> float:
        return self.pack.tile_mm + kit.BOARD_GAP_MM

    def _soften(self, image: Image) -> Image:
        """Blur away detail finer than any camera at the table resolves (paper grain,
        hatching), in crops and templates alike."""
        sigma = self.config.soften_sigma_px
        if sigma <= 0:
            return image
        return np.asarray(cv2.GaussianBlur(image, (0, 0), sigma), np.uint8)

    def _half(self, image: Float) -> Float:
        h, w = image.shape[:2]
        size = (max(1, w // 2), max(1, h // 2))
        return np.asarray(cv2.resize(image, size, interpolation=cv2.INTER_AREA), np.float32)

    @staticmethod
    def _describe(normalised: Float, grid: int) -> Float:
        # Standardise the grid itself: a crop's own standardisation includes its margin.
        small = cv2.resize(normalised, (grid, grid), interpolation=cv2.INTER_AREA).reshape(-1, 3)
        small = (small - small.mean(axis=0)) / np.maximum(small.std(axis=0), 0.05)
        d = small.reshape(-1)
        return np.asarray(d / max(float(np.linalg.norm(d)), 1e-6), np.float32)

    @property
    def crop_mm(self) -> float:
        return self.pack.tile_mm + 2 * self.config.margin_mm

    def board_reference(self, side: str, row: int, col: int) -> Image | None:
        """The empty board picture's square for one cell (tile-sized, at the matching scale)."""
        picture = self.boards.get(side)
        if picture is None:
            return None
        pitch = self.board_pitch_mm * self.config.px_per_mm
        cx = (col + 0.5) * pitch
        cy = (row + 0.5) * pitch
        half = self.tile_px / 2
        x0, y0 = round(cx - half), round(cy - half)
        patch = picture[max(0, y0) : y0 + self.tile_px, max(0, x0) : x0 + self.tile_px]
        return np.asarray(patch, np.uint8) if patch.size else None

    # ------------------------------------------------------------ one cell

    def match(self, crop: Image, board: Image | None = None) -> Match | None:
        """The best tile (or the empty board) for a crop, its rivals, and the evidence."""
        cfg = self.config
        m, tp = self.margin_px, self.tile_px
        if crop.shape[0] < tp + 2 or crop.shape[1] < tp + 2:
            return None
        norm = _normalise(self._soften(crop))
        small = self._half(norm)
        cm, cp = m // 2, self.coarse_px
        # Describe the square at a few shifts: the tile may lie a few mm off its cell.
        reach = min(cm, cfg.descriptor_shift_px)
        steps = range(-reach, reach + 1, max(1, reach)) if reach else range(1)
        descs = np.stack(
            [
                self._describe(
                    small[cm + dy : cm + dy + cp, cm + dx : cm + dx + cp], cfg.descriptor_grid
                )
                for dy in steps
                for dx in steps
            ],
            axis=1,
        )
        order = np.argsort(-(self.descriptors @ descs).max(axis=1))
        shortlist = [int(i) for i in order[: cfg.shortlist]]
        first = self.classes[shortlist[0]]
        if all(self.classes[i] == first for i in shortlist):
            shortlist += [int(i) for i in order[cfg.shortlist :] if self.classes[i] != first][:2]
        templates = self.templates
        coarse_templates = self.coarse
        classes: list[Any] = self.classes
        empty = self._board_template(board)
        if empty is not None:
            # The empty board is one more candidate, matched like a tile.
            templates = [*templates, empty]
            coarse_templates = [*coarse_templates, self._half(empty)]
            classes = [*classes, EMPTY_CLASS]
            shortlist.append(len(templates) - 1)
        coarse: list[tuple[float, int, tuple[int, int]]] = []
        for i in shortlist:
            result = cv2.matchTemplate(small, coarse_templates[i], cv2.TM_CCOEFF_NORMED)
            _, score, _, loc = cv2.minMaxLoc(result)
            coarse.append((float(score), i, (int(loc[0]), int(loc[1]))))
        coarse.sort(reverse=True)
        _, k, (lx, ly) = coarse[0]
        # Refine the best at full scale around where the coarse match put it.
        x0, y0 = max(0, 2 * lx - 3), max(0, 2 * ly - 3)
        window = norm[y0 : y0 + tp + 6, x0 : x0 + tp + 6]
        if window.shape[0] < tp or window.shape[1] < tp:
            return None
        result = cv2.matchTemplate(window, templates[k], cv2.TM_CCOEFF_NORMED)
        _, best, _, loc = cv2.minMaxLoc(result)
        x, y = x0 + loc[0], y0 + loc[1]
        patch = _normalise(norm[y : y + tp, x : x + tp], floor=0.05)
        rivals = [i for _, i, _ in coarse if classes[i] != classes[k]][: cfg.rivals]
        if k < len(self.lookalikes):
            rivals += [i for i in self.lookalikes[k] if i not in rivals]
        rival = max((_correlation(patch, templates[i]) for i in rivals), default=-1.0)
        evidence = min((_evidence(patch, templates[k], templates[i]) for i in rivals), default=1.0)
        key = None if classes[k] == EMPTY_CLASS else self.keys[k]
        return Match(key, float(best), rival, evidence, self._occluded(patch, templates[k]))

    def _occluded(self, patch: Float, template: Float) -> float:
        """Share of the square whose residual against the template is large in blobs."""
        cfg = self.config
        residual = np.abs(patch - template).sum(axis=2)
        smooth = cv2.blur(residual, (cfg.occlusion_window_px, cfg.occlusion_window_px))
        return float((smooth > cfg.occlusion_residual).mean())

    def _board_template(self, board: Image | None) -> Float | None:
        if board is None or board.shape[0] < self.tile_px or board.shape[1] < self.tile_px:
            return None
        grey = cv2.cvtColor(board, cv2.COLOR_BGR2GRAY)
        if float(grey.std()) < self.config.textured_board_std:
            return None  # a plain board: told apart by _looks_empty
        return _normalise(self._soften(board[: self.tile_px, : self.tile_px]))

    def read_cell(self, crop: Image, *, board: Image | None = None) -> CellRead:
        """Tile, empty or unknown for one crop; `board` is the empty board's square for a
        board cell (None for the display mat and storage slots)."""
        cfg = self.config
        found = self.match(crop, board)
        if found is None:
            return UNKNOWN
        margin = found.score - max(found.rival, 0.0)
        if (
            found.score >= cfg.min_score
            and margin >= cfg.min_margin
            and found.evidence >= cfg.min_evidence
            and found.occluded <= cfg.max_occluded
        ):
            if found.key is None:
                return EMPTY
            confidence = min(
                1.0,
                0.5
                + 0.25 * min(1.0, (found.score - cfg.min_score) / (cfg.full_score - cfg.min_score))
                + 0.25
                * min(
                    1.0,
                    (found.evidence - cfg.min_evidence) / (cfg.full_evidence - cfg.min_evidence),
                ),
            )
            tile, rotation = found.key
            return CellRead(tile, rotation, round(confidence, 4))
        m, tp = self.margin_px, self.tile_px
        if self._board_template(board) is None and self._looks_empty(
            crop[m : m + tp, m : m + tp], board
        ):
            return EMPTY
        return UNKNOWN

    def _looks_empty(self, square: Image, board: Image | None) -> bool:
        cfg = self.config
        grey = cv2.cvtColor(square, cv2.COLOR_BGR2GRAY)
        if float((square.max(axis=2) >= cfg.glare_level).mean()) > cfg.max_glare:
            return False  # washed out: whatever lies there cannot be seen
        if board is None:
            hsv = cv2.cvtColor(square, cv2.COLOR_BGR2HSV)
            means = square.reshape(-1, 3).astype(np.float32).mean(axis=0)
            tint = float((means.max() - means.min()) / max(float(means.mean()), 1.0))
            return bool(
                float(grey.std()) <= cfg.empty_max_std
                and float(hsv[:, :, 1].mean()) <= cfg.empty_max_saturation
                and tint <= cfg.empty_max_tint
            )
        if board.shape[:2] != square.shape[:2]:
            board = np.asarray(cv2.resize(board, (square.shape[1], square.shape[0])), np.uint8)
        seen = square.reshape(-1, 3).astype(np.float32).mean(axis=0)
        want = board.reshape(-1, 3).astype(np.float32).mean(axis=0)
        chroma = np.abs(seen / max(seen.sum(), 1.0) - want / max(want.sum(), 1.0)).max()
        ref_std = float(cv2.cvtColor(board, cv2.COLOR_BGR2GRAY).std())
        # Compare spreads relative to brightness, so dim light does not look emptier.
        scale = max(float(grey.mean()), 1.0) / max(float(want.mean()), 1.0)
        spread_ok = (
            float(grey.std())
            <= cfg.board_std_factor * ref_std * max(scale, 0.3) + cfg.empty_max_std
        )
        return bool(chroma <= cfg.board_max_chroma and spread_ok)

    # ------------------------------------------------------------ the ship

    def read_ship(self, squares: list[Image]) -> tuple[int | None, float]:
        """The ship's position from the 16 lane squares (in position order), or None."""
        cfg = self.config
        greys = [cv2.cvtColor(s, cv2.COLOR_BGR2GRAY) for s in squares]
        paper = float(np.percentile(np.concatenate([g.ravel() for g in greys]), 90))
        inks = []
        for square, grey in zip(squares, greys, strict=True):
            hsv = cv2.cvtColor(square, cv2.COLOR_BGR2HSV)
            ink = (grey < 0.72 * paper) | (hsv[:, :, 1] > 70)
            inks.append(float(ink.mean()))
        order = np.argsort(inks)[::-1]
        first, second = inks[order[0]], inks[order[1]]
        if first < cfg.ship_min_ink or first < cfg.ship_ratio * max(second, 0.01):
            return None, 0.0
        confidence = min(1.0, 0.5 + 0.5 * (first / max(second, 0.01) - cfg.ship_ratio) / 4)
        return int(order[0]), round(confidence, 4)


def read_cells(crops: list[Image], model: TileModel, refs: list[Image | None]) -> list[CellRead]:
    """Read many crops (vision.read's contract: `refs` are the empty board picture cut like
    each crop, None for the display mat and the storage slots)."""
    m, tp = model.margin_px, model.tile_px
    out = []
    for crop_image, ref in zip(crops, refs, strict=True):
        board = None if ref is None else ref[m : m + tp, m : m + tp]
        out.append(model.read_cell(crop_image, board=board))
    return out
