"""What a table teaches its own judge: cells labelled at this table, kept in the state dir.

The judge (vision.box.judge) is learnt from rendered tables; a real table's light, camera and
box differ from all of them. Two kinds of cells are labelled at the table itself:

- a **correction**: the host sets a cell of the last read to the tile or the emptiness that
  truly lies there (the cell's figures as the matcher measured them, labelled by the host);
- a **taught frame**: every tile of a batch laid on the display mat while teaching the box,
  and every empty cell of that frame, labelled by what the player confirmed.

Each is one line of `<state dir>/lessons/<pack digest>.jsonl` (the figures of
vision.box.judge.FEATURES, the label, the kind of cell: vision.box.judge.proposed_id, where it came
from), appended and synced like the journal's lines. At the next start the service hands
the book's lessons to the reader: for each kind of cell in them, the judge's probabilities
of cells of that kind are revised by what the table said (`CellJudge.taught`). A line
that cannot be read (a torn last line, figures of another judge version) is passed over.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import threading
from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from companion.catalogue import Catalogue
from companion.reading import CellRead, TableRead
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
    "CorrectionLessons",
    "LessonBook",
    "Lessons",
    "keep_teach_lessons",
    "lesson",
    "teach_lessons",
]

log = logging.getLogger(__name__)

LABELS = {TILE: "tile", EMPTY_CLASS: "empty", NEITHER: "neither"}
_CODES = {name: code for code, name in LABELS.items()}
#: The lessons' folder in a state dir (beside the game's journal and the taught packs).
LESSONS_DIR = "lessons"


@dataclass(frozen=True)
class Lessons:
    """Labelled cells of one table: figures (N, len(FEATURES)), labels, the tile id each
    cell's matcher proposed ("" for none), and their digest."""

    features: NDArray[np.float64]
    labels: NDArray[np.intp]
    groups: tuple[str, ...]
    digest: str

    def __len__(self) -> int:
        return int(self.labels.size)


@dataclass(frozen=True)
class Lesson:
    """One labelled cell."""

    features: tuple[float, ...]
    label: int
    group: str  # the kind of cell (vision.box.judge.proposed_id)
    source: str


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


class LessonBook:
    """The lessons one table keeps for one pack: `<directory>/<pack digest>.jsonl`."""

    def __init__(self, directory: Path, pack: Any) -> None:
        from vision.reader.cellpool import pack_digest

        self.path = Path(directory) / f"{pack_digest(pack)}.jsonl"

    def add(self, lessons: Iterable[Lesson]) -> int:
        """Append lessons (one synced write); returns how many. OSError when it cannot be
        written (a full disk): what was there before is kept whole."""
        lines = [
            json.dumps(
                {
                    "version": VERSION,
                    "label": LABELS[item.label],
                    "group": item.group,
                    "source": item.source,
                    "features": [round(v, 6) for v in item.features],
                }
            )
            + "\n"
            for item in lessons
        ]
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
        skipped = 0
        for line in text.splitlines():
            item = _parse(line)
            if item is None:
                skipped += 1
                continue
            rows.append(item[0])
            labels.append(item[1])
            groups.append(item[2])
        if skipped:
            log.warning(
                "lessons %s: %d lines passed over (torn, or of another judge version)",
                self.path,
                skipped,
            )
        if not rows:
            return None
        features = np.asarray(rows, np.float64)
        codes = np.asarray(labels, np.intp)
        digest = hashlib.blake2b(
            features.tobytes() + codes.tobytes() + "\n".join(groups).encode(), digest_size=8
        ).hexdigest()
        return Lessons(features, codes, tuple(groups), digest)


def _parse(line: str) -> tuple[list[float], int, str] | None:
    try:
        data = json.loads(line)
    except ValueError:
        return None
    if not isinstance(data, Mapping) or data.get("version") != VERSION:
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
    from dataclasses import replace

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
            match = view.matches.get(("display", row, col))
            if match is not None:
                item = lesson(match, cell, model, pack.catalogue, "teach")
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

    def __init__(self, book: LessonBook, pack: Any, config: Any = None) -> None:
        from vision.config import VisionConfig

        self.book = book
        self.pack = pack
        self.config = config or VisionConfig()
        self._reads: deque[tuple[TableRead, Mapping[tuple[Any, int, int], CellMatch]]] = deque(
            maxlen=self.KEPT_READS
        )
        self._lock = threading.Lock()  # reads come from the live loop, corrections from pages

    def seen(self, read: TableRead, matches: Mapping[tuple[Any, int, int], CellMatch]) -> None:
        """A read the host may correct, and the matches behind its cells."""
        with self._lock:
            self._reads.append((read, dict(matches)))

    def corrected(self, correction: Correction) -> bool:
        """Keep the lesson of a corrected cell; False when there is none to keep (the read
        is not one of those seen, the cell was not read, the answer is unknown, or the book
        cannot be written: logged)."""
        from vision.box.tilemodel import learn_pack

        with self._lock:
            matches = next((m for r, m in reversed(self._reads) if r is correction.before), None)
            if matches is None:
                return False
            self._reads.append((correction.after, matches))  # its other cells may be corrected
        match = matches.get((correction.area, correction.row, correction.col))
        if match is None:
            return False
        model = learn_pack(self.pack, self.config.crops.px_per_mm, self.config.cells)
        item = lesson(match, correction.cell, model, self.pack.catalogue, "correction")
        if item is None:
            return False
        try:
            self.book.add([item])
        except OSError as exc:
            log.warning("the correction's lesson could not be kept: %s", exc)
            return False
        return True
