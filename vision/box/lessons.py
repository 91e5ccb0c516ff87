"""What a table teaches its own judge: cells labelled at this table, kept in the state dir.

The judge (vision.box.judge) is learnt from rendered tables; a real table's light, camera and
box differ from all of them. Two kinds of cells are labelled at the table itself:

- a **correction**: the host sets a cell of the last read to the tile or the emptiness that
  truly lies there (the cell's figures as the matcher measured them, labelled by the host);
- a **taught frame**: every tile of a batch laid on the display mat while teaching the box,
  and every empty cell of that frame, labelled by what the player confirmed.

Each is one line of `<state dir>/lessons/<pack digest>.jsonl` (the figures of
vision.box.judge.FEATURES, the label, the kind of cell: vision.box.judge.proposed_id, where it came
from; and for the cell network, `CellLesson`: the cell's crop as the reader cut it, a PNG,
where it lies and its truth), appended and synced like the journal's lines. A cell read by the
network has no matcher figures: its line holds the crop alone. At the next start the service
hands the book's lessons to the reader: for each kind of cell in them, the judge's
probabilities of cells of that kind are revised by what the table said (`CellJudge.taught`);
with the cell network, crops that are a fair sample of the table's cells join the box's
calibration (vision.cellnet.calibrate; `SAMPLED_SOURCES`: none yet). A
line that cannot be read (a torn last line, figures of another judge version) is passed over,
its crop kept when that can be read.
"""

from __future__ import annotations

import base64
import hashlib
import json
import logging
import os
import threading
from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import cv2
import numpy as np
from numpy.typing import NDArray

from companion.catalogue import Catalogue
from companion.reading import EMPTY, CellRead, TableRead
from companion.session import Correction
from vision.box.judge import (
    EMPTY_CLASS,
    FEATURES,
    NEITHER,
    TILE,
    VERSION,
    candidate_kinds,
    cell_features,
    label,
    proposed_id,
)
from vision.box.tilemodel import TileModel
from vision.reader.recognise import CellMatch

__all__ = [
    "CellLesson",
    "CorrectionLessons",
    "LessonBook",
    "Lessons",
    "cell_lesson",
    "keep_teach_lessons",
    "labelled",
    "lesson",
    "teach_lessons",
]

log = logging.getLogger(__name__)

LABELS = {TILE: "tile", EMPTY_CLASS: "empty", NEITHER: "neither"}
_CODES = {name: code for code, name in LABELS.items()}
#: The lessons' folder in a state dir (beside the game's journal and the taught packs).
LESSONS_DIR = "lessons"
#: The version of a line's crop (`CellLesson`), apart from the judge's figures' VERSION.
CELL_VERSION = 1
#: Where a cell lies, as the cell network tells cells apart.
CELL_KINDS = ("display", "board", "storage")
#: The sources whose cells are a fair sample of the table's cells for the box's calibration:
#: every labelled cell of a frame, kept whether the reader named it right or not, its tiles'
#: pictures taken from other frames. None is yet: a correction is there because the reader
#: was wrong (or unsure), so its cells would overstate the wrong-rate; a taught frame gave
#: the pack the very pictures its cells would be compared with, so they would understate
#: it. Both are kept with their crops, not counted.
SAMPLED_SOURCES: frozenset[str] = frozenset()

Slot = tuple[Any, int, int]  # (area, row, col); a seat's storage is (seat, -1, 0)


@dataclass(frozen=True)
class CellLesson:
    """A labelled cell as the cell network reads it: its crop as the reader cut it (square,
    north up, `crop_mm` a side), its kind (CELL_KINDS), for a board cell its (row, col) on
    the board's `side` (the empty board's look there is cut from the pack), and its truth
    (a tile and its rotation, or empty); `sampled` when its source is one of
    SAMPLED_SOURCES (it may join the box's calibration)."""

    crop: NDArray[np.uint8]
    crop_mm: float
    kind: str
    cell: tuple[int, int]
    side: str
    truth: CellRead
    sampled: bool


@dataclass(frozen=True)
class Lessons:
    """Labelled cells of one table: for the judge, figures (N, len(FEATURES)), labels and
    the tile id each cell's matcher proposed ("" for none; its length is theirs); for the
    cell network, the labelled crops (`cells`); and a digest of all of them."""

    features: NDArray[np.float64]
    labels: NDArray[np.intp]
    groups: tuple[str, ...]
    digest: str
    cells: tuple[CellLesson, ...] = ()

    def __len__(self) -> int:
        return int(self.labels.size)


@dataclass(frozen=True)
class Lesson:
    """One labelled cell: the matcher's figures with the judge's label and kind of cell
    (None when the matcher did not read it), and its crop for the cell network (None when
    it was not kept)."""

    features: tuple[float, ...] | None
    label: int
    group: str  # the kind of cell (vision.box.judge.proposed_id)
    source: str
    cell: CellLesson | None = None


def cell_lesson(
    crop: NDArray[np.uint8],
    slot: Slot,
    truth: CellRead,
    side: str,
    px_per_mm: float,
    source: str,
) -> CellLesson | None:
    """The crop of `slot` (cut at `px_per_mm`) labelled `truth` by `source`; None for an
    unknown truth."""
    if truth.unknown:
        return None
    area, row, col = slot
    kind = "display" if area == "display" else "storage" if row < 0 else "board"
    at = (row, col) if kind == "board" else (0, 0)
    crop = np.ascontiguousarray(crop, np.uint8)
    sampled = source in SAMPLED_SOURCES
    return CellLesson(crop, crop.shape[0] / px_per_mm, kind, at, side, truth, sampled)


def lesson(
    match: CellMatch, truth: CellRead, model: TileModel, catalogue: Catalogue, source: str
) -> Lesson | None:
    """The lesson of a cell the matcher measured as `match` and that truly holds `truth`
    (a tile or empty); None for an unknown truth."""
    if truth.unknown:
        return None
    features = cell_features(match, candidate_kinds(model, catalogue))
    return Lesson(
        tuple(float(v) for v in features),
        label(match, truth, model, catalogue),
        proposed_id(match, model),
        source,
    )


def labelled(
    match: CellMatch | None,
    crop: NDArray[np.uint8] | None,
    slot: Slot,
    truth: CellRead,
    model: TileModel | None,
    catalogue: Catalogue,
    source: str,
    side: str,
    px_per_mm: float,
) -> Lesson | None:
    """The lesson of a cell truly holding `truth`, from what its read left: the matcher's
    `match` (with its `model`) for the judge, its `crop` for the cell network; None when
    neither is there or the truth is unknown."""
    cell = None if crop is None else cell_lesson(crop, slot, truth, side, px_per_mm, source)
    item = (
        None if match is None or model is None else lesson(match, truth, model, catalogue, source)
    )
    if item is not None:
        return replace(item, cell=cell)
    if cell is not None:
        return Lesson(None, NEITHER, "", source, cell)
    return None


class LessonBook:
    """The lessons one table keeps for one pack: `<directory>/<pack digest>.jsonl`."""

    def __init__(self, directory: Path, pack: Any) -> None:
        from vision.reader.cellpool import pack_digest

        self.path = Path(directory) / f"{pack_digest(pack)}.jsonl"

    def add(self, lessons: Iterable[Lesson]) -> int:
        """Append lessons (one synced write); returns how many. OSError when it cannot be
        written (a full disk): what was there before is kept whole."""
        lines = [json.dumps(_line(item)) + "\n" for item in lessons]
        if not lines:
            return 0
        self.path.parent.mkdir(parents=True, exist_ok=True)
        data = "".join(lines).encode()
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o644)
        try:
            size = os.fstat(fd).st_size
            if size and os.pread(fd, 1, size - 1) != b"\n":
                data = b"\n" + data  # a line torn by a crash stays apart from these
            try:
                written = os.write(fd, data)
                if written != len(data):
                    raise OSError(f"only {written} of {len(data)} bytes written")
                os.fsync(fd)
            except OSError:
                os.ftruncate(fd, size)
                raise
        finally:
            os.close(fd)
        return len(lines)

    def load(self) -> Lessons | None:
        """The lessons kept so far, or None when there are none."""
        try:
            text = self.path.read_text(errors="replace")
        except FileNotFoundError:
            return None
        except OSError as exc:
            log.warning("lessons %s cannot be read: %s", self.path, exc)
            return None
        rows: list[list[float]] = []
        labels: list[int] = []
        groups: list[str] = []
        cells: list[CellLesson] = []
        skipped = 0
        digest = hashlib.blake2b(digest_size=8)
        for line in text.splitlines():
            try:
                data = json.loads(line)
            except ValueError:
                data = None
            if not isinstance(data, Mapping):
                skipped += 1
                continue
            item = _parse(data)
            cell = _parse_cell(data.get("cell"), data.get("source"))
            if item is None and cell is None:
                skipped += 1
            elif item is not None:
                rows.append(item[0])
                labels.append(item[1])
                groups.append(item[2])
            if cell is not None:
                cells.append(cell)
                digest.update(line.encode())
        if skipped:
            log.warning(
                "lessons %s: %d lines passed over (torn, or of another judge version)",
                self.path,
                skipped,
            )
        if not rows and not cells:
            return None
        features = np.asarray(rows, np.float64).reshape(len(rows), len(FEATURES))
        codes = np.asarray(labels, np.intp)
        digest.update(features.tobytes() + codes.tobytes() + "\n".join(groups).encode())
        return Lessons(features, codes, tuple(groups), digest.hexdigest(), tuple(cells))


def _line(item: Lesson) -> dict[str, Any]:
    """A lesson's line in the book."""
    out: dict[str, Any] = {"source": item.source}
    if item.features is not None:
        out.update(
            version=VERSION,
            label=LABELS[item.label],
            group=item.group,
            features=[round(v, 6) for v in item.features],
        )
    cell = item.cell
    if cell is not None:
        ok, png = cv2.imencode(".png", cell.crop)
        if not ok:
            raise OSError("a lesson's crop could not be written as a PNG")
        out["cell"] = {
            "version": CELL_VERSION,
            "crop": base64.b64encode(png.tobytes()).decode("ascii"),
            "crop_mm": round(cell.crop_mm, 6),
            "kind": cell.kind,
            "row": cell.cell[0],
            "col": cell.cell[1],
            "side": cell.side,
            "tile": cell.truth.tile,
            "rotation": cell.truth.rotation,
        }
    return out


def _parse_cell(data: Any, source: Any) -> CellLesson | None:
    """A line's crop (`_line`) labelled by `source`, or None when it has none or it cannot
    be read."""
    if not isinstance(data, Mapping) or data.get("version") != CELL_VERSION:
        return None
    try:
        png = np.frombuffer(base64.b64decode(data["crop"], validate=True), np.uint8)
        crop = cv2.imdecode(png, cv2.IMREAD_COLOR) if png.size else None
        crop_mm, kind = float(data["crop_mm"]), data["kind"]
        row, col, side, tile = int(data["row"]), int(data["col"]), data["side"], data["tile"]
        rotation = int(data["rotation"])
    except (KeyError, TypeError, ValueError):
        return None
    if crop is None or crop.ndim != 3 or crop.shape[0] != crop.shape[1] or not crop.size:
        return None
    if kind not in CELL_KINDS or not isinstance(side, str) or not np.isfinite(crop_mm):
        return None
    if crop_mm <= 0 or rotation % 90:
        return None
    if tile is None:
        truth = EMPTY
    elif isinstance(tile, str) and tile:
        truth = CellRead(tile, rotation % 360, 1.0)
    else:
        return None
    sampled = isinstance(source, str) and source in SAMPLED_SOURCES
    return CellLesson(np.asarray(crop, np.uint8), crop_mm, kind, (row, col), side, truth, sampled)


def _parse(data: Mapping[str, Any]) -> tuple[list[float], int, str] | None:
    """A line's figures for the judge, or None when it has none of this judge version."""
    if data.get("version") != VERSION:
        return None
    code = _CODES.get(data.get("label"))  # type: ignore[arg-type]
    features = data.get("features")
    group = data.get("group")
    if code is None or not isinstance(group, str):
        return None
    if not isinstance(features, list) or len(features) != len(FEATURES):
        return None
    if not all(isinstance(v, int | float) and np.isfinite(v) for v in features):
        return None
    return [float(v) for v in features], code, group


def teach_lessons(
    frames: Sequence[tuple[Any, Mapping[tuple[int, int], CellRead]]],
    pack: Any,
    config: Any = None,
) -> list[Lesson]:
    """The lessons of taught frames: each frame with what lies in its display cells (a
    tile and its rotation, or empty; cells left out are not labelled), read by the matcher
    with the pack that was taught from them."""
    from vision.box.tilemodel import learn_pack
    from vision.config import VisionConfig
    from vision.reader.read import TableNotFound, read_table_view

    config = config or VisionConfig()
    plain = replace(
        config,
        judge=replace(config.judge, enabled=False),
        read=replace(config.read, cell_workers=0),
    )
    model = learn_pack(pack, config.crops.px_per_mm, config.cells)
    out: list[Lesson] = []
    for frame, truth in frames:
        try:
            _read, view = read_table_view(frame, pack, config=plain)
        except TableNotFound:
            continue
        for (row, col), cell in truth.items():
            slot = ("display", row, col)
            item = labelled(
                view.matches.get(slot),
                view.crops.get(slot),
                slot,
                cell,
                model,
                pack.catalogue,
                "teach",
                "front",
                config.crops.px_per_mm,
            )
            if item is not None:
                out.append(item)
    return out


def keep_teach_lessons(
    frames: Sequence[tuple[Any, Mapping[tuple[int, int], CellRead]]],
    pack_dir: Path,
    lessons_dir: Path,
) -> int:
    """teach_lessons of the pack in `pack_dir`, added to its book in `lessons_dir`; how many."""
    from vision.box.pack import load_pack

    pack = load_pack(pack_dir)
    return LessonBook(lessons_dir, pack).add(teach_lessons(frames, pack))


class CorrectionLessons:
    """Turns the host's corrections into lessons: keeps the matches of the last reads
    (`seen`) and, for a corrected cell of one of those reads, adds its lesson to the book."""

    #: Reads whose matches are kept: a correction may come after a newer read.
    KEPT_READS = 4

    def __init__(
        self, book: LessonBook, pack: Any, config: Any = None, side: str = "front"
    ) -> None:
        from vision.config import VisionConfig

        self.book = book
        self.pack = pack
        self.config = config or VisionConfig()
        self.side = side
        self._reads: deque[
            tuple[TableRead, Mapping[Slot, CellMatch], Mapping[Slot, NDArray[np.uint8]]]
        ] = deque(maxlen=self.KEPT_READS)
        self._lock = threading.Lock()  # reads come from the live loop, corrections from pages

    def seen(
        self,
        read: TableRead,
        matches: Mapping[Slot, CellMatch],
        crops: Mapping[Slot, NDArray[np.uint8]] | None = None,
    ) -> None:
        """A read the host may correct, the matches behind its cells (none when the cell
        network read them) and their crops (vision.reader.read.TableView.crops)."""
        with self._lock:
            self._reads.append((read, dict(matches), dict(crops or {})))

    def corrected(self, correction: Correction) -> bool:
        """Keep the lesson of a corrected cell; False when there is none to keep (the read
        is not one of those seen, the cell was not read, the answer is unknown, or the book
        cannot be written: logged)."""
        from vision.box.tilemodel import learn_pack

        with self._lock:
            seen = next(
                (kept for kept in reversed(self._reads) if kept[0] is correction.before), None
            )
            if seen is None:
                return False
            # Its other cells may be corrected.
            self._reads.append((correction.after, seen[1], seen[2]))
        slot = (correction.area, correction.row, correction.col)
        match, crop = seen[1].get(slot), seen[2].get(slot)
        model = (
            None
            if match is None
            else learn_pack(self.pack, self.config.crops.px_per_mm, self.config.cells)
        )
        item = labelled(
            match,
            crop,
            slot,
            correction.cell,
            model,
            self.pack.catalogue,
            "correction",
            self.side,
            self.config.crops.px_per_mm,
        )
        if item is None:
            return False
        try:
            self.book.add([item])
        except OSError as exc:
            log.warning("the correction's lesson could not be kept: %s", exc)
            return False
        return True
