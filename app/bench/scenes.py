"""How well tables photographed or drawn elsewhere are read: folders of scenes with truth.

A scenes folder holds `pack/` (its tile pack, docs/formats.md) and `sets/<name>/NN.jpg`, each
with `NN.json`, its truth:
`{"display": {"cells": [[CELL x4] x4], "ship": P}, "seats": {"S": {"cells": [[CELL x4] x4],
"storage": CELL}}, "min_px_per_mm": F}`, CELL `{"tile": ID, "rotation": DEG}` or
`{"empty": true}`, with `"occluded": SHARE` when something covers that share of the cell.

Each set is read in-process (one vision.reader.read.TableReader for the set, on the decoded
JPEG) and judged cell by cell as the development set's check.py judges `companion read`:

- a tile is right when its meaning is (kind, land and lei turned by the rotation, palms,
  huts, shells, boats; a volcano alike in any rotation), an empty cell when read empty;
- a cell is covered from COVERED_SHARE hidden: read unknown it is right, named wrongly it
  is the worst mistake (covered and wrong);
- a cell the read leaves out (a seat not seen, a cell off its board, a failed read) is an
  abstention; a seat read that is not on the table counts as 16 wrong cells;
- the storage slot is judged where both the truth and the read have one;
- the ship is right when the read names its truth (over every scene).

`cells` counts every judged cell (covered ones too): the share wrong and abstained is of
those, as check.py gives it. The answered cells' confidences, with right or wrong, give the
expected calibration error (vision.box.judge.calibration_error) over cells not covered.
The read's time is set beside decoding the JPEG file's bytes (cv2.imdecode), each the
fastest of app.bench.rendered.TIMED_RUNS runs on the frame; the figure is the median of each
frame's read_ms / decode_ms. Mistakes are counted, never listed: the scenes measure, they
are not for looking at cell by cell.
"""

from __future__ import annotations

import csv
import json
import statistics
import time
import tomllib
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from app.bench import rendered as bench
from companion.errors import CompanionError, DataError
from companion.reading import CellRead, TableRead
from vision.box.pack import Pack, load_pack
from vision.config import VisionConfig
from vision.reader.read import TableReader
from vision.synthetic.scene import DISPLAY

#: A cell hidden by at least this share counts as covered (check.py).
COVERED_SHARE = 0.15
#: A seat read that is not on the table counts as this many wrong cells (check.py).
PHANTOM_SEAT_CELLS = 16
#: Rows and columns judged on the display and on each seat's board.
GRID = 4
_TURN = {"N": "E", "E": "S", "S": "W", "W": "N"}

Meaning = tuple[Any, ...]
Tiles = Mapping[str, Mapping[str, Any]]


def _turn(edges: str, rotation: int) -> str:
    for _ in range((rotation // 90) % 4):
        edges = "".join(_TURN[e] for e in edges)
    return "".join(sorted(edges))


def meaning(tiles: Tiles, tile: str | None, rotation: int) -> Meaning | None:
    """What a tile at a rotation means (None for an id not in the pack)."""
    entry = tiles.get(tile) if tile is not None else None
    if entry is None:
        return None
    kind = entry.get("kind")
    if kind == "volcano":
        return ("volcano",)
    # The keys a pack may leave out take formats.md's defaults.
    return (
        kind,
        _turn(str(entry.get("land", "")), rotation),
        entry.get("palms", 0),
        entry.get("huts", 0),
        entry.get("shells", 0),
        entry.get("boats", 0),
        _turn(str(entry.get("lei", "")), rotation),
    )


def pack_tiles(pack_dir: Path) -> tuple[str, dict[str, dict[str, Any]]]:
    """The pack's name and its tiles by id, as its pack.toml gives them."""
    path = pack_dir / "pack.toml"
    try:
        data = tomllib.loads(path.read_text())
        return str(data.get("name", pack_dir.name)), {str(t["id"]): t for t in data["tile"]}
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError, KeyError, TypeError) as e:
        raise DataError(str(path), f"not a pack's tile list ({e})") from None


@dataclass
class SetTally:
    """What one set of scenes came to."""

    scenes: int = 0
    right: int = 0
    wrong: int = 0
    abstained: int = 0
    doubted: int = 0  # abstained cells the matcher proposed rightly: the judge's doubt
    # the other abstained cells with a proposal, by how it differs from the truth (`miss`)
    misses: Counter[str] = field(default_factory=Counter)
    # ... and by the matcher's reason for leaving them unknown (CellMatch.reason)
    miss_reasons: Counter[str] = field(default_factory=Counter)
    covered_unknown: int = 0
    covered_wrong: int = 0
    perfect: int = 0
    ship_right: int = 0
    seats_missed: int = 0
    phantom_seats: int = 0
    failed_reads: int = 0
    # the answered cells not covered: confidence, and whether the answer was right
    confidences: list[float] = field(default_factory=list)
    answered_right: list[bool] = field(default_factory=list)
    read_ms: list[float] = field(default_factory=list)  # each frame's fastest
    decode_ms: list[float] = field(default_factory=list)

    @property
    def cells(self) -> int:
        return self.right + self.wrong + self.abstained + self.covered_unknown

    def line(self, name: str) -> str:
        """One line of figures, as check.py prints them."""
        n = max(1, self.cells)
        return (
            f"{name}: {self.cells} cells, {self.wrong} wrong ({self.wrong / n:.2%}), "
            f"{self.abstained} abstained ({self.abstained / n:.2%}; the matcher's proposal "
            f"right in {self.doubted}), "
            f"{self.covered_unknown} covered and unknown, {self.covered_wrong} covered and "
            f"wrong; {self.perfect}/{self.scenes} scenes perfect; ship {self.ship_right}/"
            f"{self.scenes}; seats missed {self.seats_missed}, phantom {self.phantom_seats}; "
            f"failed reads {self.failed_reads}"
        )

    def misses_line(self, most: int = 6) -> str:
        """The matcher's commonest misses, as `miss` names them."""
        shown = self.misses.most_common(most)
        rest = sum(self.misses.values()) - sum(n for _what, n in shown)
        line = "; ".join(f"{n} {what}" for what, n in shown) or "none"
        line = f"{line}; {rest} more" if rest else line
        if not self.miss_reasons:
            return line
        why = ", ".join(f"{n} {reason}" for reason, n in self.miss_reasons.most_common())
        return f"{line} (the matcher's reasons: {why})"


_COUNTED = ("palms", "huts", "shells", "boats")


def miss(truth: Mapping[str, Any], proposed: CellRead, tiles: Tiles) -> str:
    """How a wrong proposal differs from the truth, in the tiles' own words: "a tile on an
    empty cell", "empty" (an empty proposal on a tile), "another turn" (the very tile),
    "another island" (kind or land, or a tile the pack lacks), or the
    symbols it has more or fewer of ("a lei half more", "palms fewer and huts more", ...)."""
    if "tile" not in truth:
        return "a tile on an empty cell"
    if proposed.tile is None:
        return "empty"
    if proposed.tile == truth["tile"]:
        return "another turn"
    got = meaning(tiles, proposed.tile, proposed.rotation)
    want = meaning(tiles, truth["tile"], int(truth.get("rotation", 0)))
    if got is None or want is None or got[:2] != want[:2] or len(got) < 7:
        return "another island"
    parts = [
        f"{name} {'more' if a > b else 'fewer'}"
        for name, a, b in zip(_COUNTED, got[2:6], want[2:6], strict=True)
        if a != b
    ]
    if got[6] != want[6]:
        parts.append(
            "a lei half more"
            if len(got[6]) > len(want[6])
            else "a lei half fewer"
            if len(got[6]) < len(want[6])
            else "a lei half elsewhere"
        )
    return " and ".join(parts) or "the same"


def _names(truth: Mapping[str, Any], got: CellRead, tiles: Tiles) -> bool:
    """Whether a read (not unknown) names what the truth holds."""
    if "tile" in truth:
        return got.tile is not None and meaning(tiles, got.tile, got.rotation) == meaning(
            tiles, truth["tile"], int(truth.get("rotation", 0))
        )
    return got.empty


def judge_cell(
    truth: Mapping[str, Any],
    got: CellRead | None,
    tiles: Tiles,
    tally: SetTally,
    proposed: CellRead | None = None,
    reason: str = "",
) -> None:
    """Add one cell, its truth against its read (None: not read), to the tally
    (`proposed`: the tile the matcher proposed there, if any; `reason`: why the matcher
    left it unknown, if it did)."""
    covered = float(truth.get("occluded", 0)) >= COVERED_SHARE
    if got is None:
        tally.abstained += 1
        return
    if got.unknown:
        if covered:
            tally.covered_unknown += 1
        else:
            tally.abstained += 1
            if proposed is not None and _names(truth, proposed, tiles):
                tally.doubted += 1
            elif proposed is not None:
                tally.misses[miss(truth, proposed, tiles)] += 1
                if reason:
                    tally.miss_reasons[reason] += 1
        return
    ok = _names(truth, got, tiles)
    if ok:
        tally.right += 1
    else:
        tally.wrong += 1
        tally.covered_wrong += covered
    if not covered:
        tally.confidences.append(float(got.confidence))
        tally.answered_right.append(ok)


def _at(grid: tuple[tuple[CellRead | None, ...], ...], r: int, c: int) -> CellRead | None:
    return grid[r][c] if r < len(grid) and c < len(grid[r]) else None


def score_scene(
    truth: Mapping[str, Any],
    read: TableRead | None,
    tiles: Tiles,
    tally: SetTally,
    proposed: Mapping[Any, CellRead | None] | None = None,
    reasons: Mapping[Any, str] | None = None,
) -> None:
    """Add one scene, its truth against its read (None: the read failed), to the tally
    (`proposed`: the matcher's proposals by slot, app.bench.rendered.proposals; `reasons`:
    the matcher's reasons by slot)."""
    by_name = {(str(k[0]), k[1], k[2]): p for k, p in (proposed or {}).items()}
    why = {(str(k[0]), k[1], k[2]): r for k, r in (reasons or {}).items()}
    tally.scenes += 1
    before = tally.wrong + tally.abstained
    display = read.display if read is not None else ()
    for r in range(GRID):
        for c in range(GRID):
            judge_cell(
                truth["display"]["cells"][r][c],
                _at(display, r, c),
                tiles,
                tally,
                by_name.get((DISPLAY, r, c)),
                why.get((DISPLAY, r, c), ""),
            )
    if read is not None and read.ship == truth["display"].get("ship"):
        tally.ship_right += 1
    seats = {str(s): seat for s, seat in read.seats.items()} if read is not None else {}
    for name, seat_truth in truth["seats"].items():
        seat = seats.get(name)
        if seat is None:
            tally.seats_missed += 1
        cells = seat.cells if seat is not None else ()
        for r in range(GRID):
            for c in range(GRID):
                judge_cell(
                    seat_truth["cells"][r][c],
                    _at(cells, r, c),
                    tiles,
                    tally,
                    by_name.get((name, r, c)),
                    why.get((name, r, c), ""),
                )
        if "storage" in seat_truth and seat is not None and seat.storage is not None:
            judge_cell(
                seat_truth["storage"],
                seat.storage,
                tiles,
                tally,
                by_name.get((name, -1, 0)),
                why.get((name, -1, 0), ""),
            )
    for name in seats:
        if name not in truth["seats"]:
            tally.phantom_seats += 1
            tally.wrong += PHANTOM_SEAT_CELLS
    tally.perfect += tally.wrong + tally.abstained == before


def _grid_ok(grid: object) -> bool:
    return (
        isinstance(grid, list)
        and len(grid) == GRID
        and all(
            isinstance(row, list)
            and len(row) == GRID
            and all(isinstance(cell, dict) for cell in row)
            for row in grid
        )
    )


def load_truth(path: Path) -> dict[str, Any]:
    """One scene's truth, checked to have the shape judged (DataError naming the file)."""
    try:
        data = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, ValueError) as e:
        raise DataError(str(path), f"not a scene's truth ({e})") from None
    ok = (
        isinstance(data, dict)
        and isinstance(data.get("display"), dict)
        and _grid_ok(data["display"].get("cells"))
        and isinstance(data.get("seats"), dict)
        and all(
            isinstance(s, dict)
            and _grid_ok(s.get("cells"))
            and isinstance(s.get("storage", {}), dict)
            for s in data["seats"].values()
        )
    )
    if not ok:
        raise DataError(
            str(path),
            "a scene's truth needs display.cells (4 x 4 cells) and seats, each with cells (4 x 4)",
        )
    truth: dict[str, Any] = data
    return truth


@dataclass(frozen=True)
class ScenesFolder:
    """A folder of scenes: its pack's name and tiles and, per set name, its (photo, truth)
    pairs."""

    root: Path
    pack_name: str
    tiles: dict[str, dict[str, Any]]
    sets: dict[str, list[tuple[Path, dict[str, Any]]]]

    @property
    def name(self) -> str:
        return self.root.resolve().name


def open_scenes(root: Path) -> ScenesFolder:
    """Check a scenes folder and load its truths (DataError: one sentence naming what is
    missing or malformed)."""
    if not (root / "pack" / "pack.toml").is_file():
        raise DataError(str(root), "no pack/pack.toml: not a scenes folder")
    pack_name, tiles = pack_tiles(root / "pack")
    folders = sorted(p for p in (root / "sets").glob("*") if p.is_dir())
    sets: dict[str, list[tuple[Path, dict[str, Any]]]] = {}
    for folder in folders:
        photos = sorted(folder.glob("*.jpg"))
        for photo in photos:
            if not photo.with_suffix(".json").is_file():
                raise DataError(str(photo), "has no truth beside it (the same name, .json)")
        if photos:
            sets[folder.name] = [(p, load_truth(p.with_suffix(".json"))) for p in photos]
    if not sets:
        raise DataError(str(root), "no sets/<name>/NN.jpg with NN.json: not a scenes folder")
    return ScenesFolder(root, pack_name, tiles, sets)


def _decode(data: np.ndarray[Any, Any]) -> tuple[np.ndarray[Any, Any] | None, float]:
    """The frame decoded from JPEG bytes and the fastest of TIMED_RUNS decodes, in ms."""
    best = float("inf")
    frame = None
    for _ in range(bench.TIMED_RUNS):
        start = time.perf_counter()
        frame = cv2.imdecode(data, cv2.IMREAD_COLOR)
        best = min(best, time.perf_counter() - start)
    return frame, 1000.0 * best


def read_set(
    scenes: list[tuple[Path, dict[str, Any]]],
    pack: Pack,
    tiles: Tiles,
    config: VisionConfig | None = None,
    progress: Callable[[str], None] | None = None,
) -> SetTally:
    """Read and judge each photo against its truth (one TableReader for the set); a read
    that finds no table is a failed read, every cell unknown."""
    config = config or VisionConfig()
    tally = SetTally()
    with TableReader(pack, config=config) as reader:
        for i, (photo, truth) in enumerate(scenes):
            _read_scene(reader, photo, truth, tiles, tally)
            if progress:
                progress(f"{photo.parent.name}: scene {i + 1}/{len(scenes)}")
    return tally


def _read_scene(
    reader: TableReader, photo: Path, truth: dict[str, Any], tiles: Tiles, tally: SetTally
) -> None:
    """One photo read (the first of TIMED_RUNS reads judged, the fastest timed) and judged."""
    try:
        data = np.frombuffer(photo.read_bytes(), np.uint8)
    except OSError as e:
        raise DataError(str(photo), f"cannot be read ({e.strerror})") from None
    frame, decode = _decode(data)
    if frame is None:
        raise DataError(str(photo), "cannot be decoded as a JPEG photo")
    times: list[float] = []
    read: TableRead | None = None
    proposed: dict[Any, CellRead | None] = {}
    reasons: dict[Any, str] = {}
    for run in range(bench.TIMED_RUNS):
        start = time.perf_counter()
        try:
            got, view = reader.read_view(frame)
        except CompanionError:
            got, view = None, None
        times.append(1000.0 * (time.perf_counter() - start))
        if run == 0:
            read = got
            if view is not None:
                proposed = bench.proposals(view, reader.models.tiles)
                reasons = bench.reasons(view)
    tally.failed_reads += read is None
    tally.decode_ms.append(decode)
    tally.read_ms.append(min(times))
    score_scene(truth, read, tiles, tally, proposed, reasons)


def bench_scenes(
    folder: ScenesFolder,
    config: VisionConfig | None = None,
    progress: Callable[[str], None] | None = None,
) -> dict[str, SetTally]:
    """Read and judge every set of a scenes folder, its pack loaded once."""
    pack = load_pack(folder.root / "pack")
    return {
        name: read_set(scenes, pack, folder.tiles, config, progress)
        for name, scenes in folder.sets.items()
    }


# --- one row per set, rendered or photographed, side by side ------------------------------


@dataclass(frozen=True)
class Row:
    """One set's figures (rendered: the visible cells; scenes: every judged cell)."""

    source: str
    pack: str
    set: str
    scenes: int
    cells: int
    wrong: int
    abstained: int
    doubted: int  # abstained cells the matcher proposed rightly
    covered_wrong: int
    ship_right: int
    ship_scenes: int
    answered: int
    ece: float
    read_ms: float
    decode_ms: float
    read_over_decode: float

    @property
    def wrong_pct(self) -> float:
        return 100.0 * self.wrong / self.cells if self.cells else float("nan")

    @property
    def abstained_pct(self) -> float:
        return 100.0 * self.abstained / self.cells if self.cells else float("nan")

    @property
    def doubted_pct(self) -> float:
        return 100.0 * self.doubted / self.cells if self.cells else float("nan")

    @property
    def ship_pct(self) -> float:
        return 100.0 * self.ship_right / self.ship_scenes if self.ship_scenes else float("nan")


def _median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def _ratio(read_ms: list[float], decode_ms: list[float]) -> float:
    return _median([r / d for r, d in zip(read_ms, decode_ms, strict=True) if d > 0])


def _ece(confidences: list[float], right: list[bool]) -> float:
    from vision.box.judge import calibration_error

    return calibration_error(
        np.asarray(confidences, dtype=np.float64), np.asarray(right, dtype=np.bool_)
    )


def rendered_row(pack: str, difficulty: str, tally: bench.Tally) -> Row:
    """A rendered difficulty's row (its cells: the visible ones, as app.bench.rendered counts)."""
    return Row(
        "rendered",
        pack,
        difficulty,
        tally.scenes,
        tally.visible,
        tally.wrong,
        tally.abstained,
        tally.doubted,
        tally.covered_wrong,
        tally.ship_right,
        tally.ship_scenes,
        len(tally.confidences),
        _ece(tally.confidences, tally.answered_right),
        _median(tally.read_ms),
        _median(tally.decode_ms),
        _ratio(tally.read_ms, tally.decode_ms),
    )


def scenes_row(source: str, pack: str, name: str, tally: SetTally) -> Row:
    """A set of scenes' row (its cells: every judged cell, as check.py counts)."""
    return Row(
        source,
        pack,
        name,
        tally.scenes,
        tally.cells,
        tally.wrong,
        tally.abstained,
        tally.doubted,
        tally.covered_wrong,
        tally.ship_right,
        tally.scenes,
        len(tally.confidences),
        _ece(tally.confidences, tally.answered_right),
        _median(tally.read_ms),
        _median(tally.decode_ms),
        _ratio(tally.read_ms, tally.decode_ms),
    )


def rows_table(rows: list[Row]) -> str:
    """The rows side by side, one line each (the names' columns as wide as the longest)."""
    src = max([len("source"), *(len(r.source) for r in rows)])
    pack = max([len("pack"), *(len(r.pack) for r in rows)])
    name = max([len("set"), *(len(r.set) for r in rows)])
    head = (
        f"{'source':<{src}} {'pack':<{pack}} {'set':<{name}} {'scenes':>6} {'cells':>6} "
        f"{'wrong %':>8} {'abst. %':>8} {'doubt %':>8} {'cov.wrong':>9} {'ship %':>7} {'ECE':>6} "
        f"{'read/decode':>11}"
    )
    lines = [head]
    for r in rows:
        lines.append(
            f"{r.source:<{src}} {r.pack:<{pack}} {r.set:<{name}} {r.scenes:>6} {r.cells:>6} "
            f"{r.wrong_pct:>8.2f} {r.abstained_pct:>8.2f} {r.doubted_pct:>8.2f} "
            f"{r.covered_wrong:>9} "
            f"{r.ship_pct:>7.1f} {r.ece:>6.3f} {r.read_over_decode:>10.1f}x"
        )
    return "\n".join(lines)


CSV_FIELDS = (
    "source",
    "pack",
    "set",
    "scenes",
    "cells",
    "wrong",
    "wrong_pct",
    "abstained",
    "abstained_pct",
    "doubted",
    "doubted_pct",
    "covered_wrong",
    "ship_right",
    "ship_scenes",
    "ship_pct",
    "answered",
    "ece",
    "read_ms",
    "decode_ms",
    "read_over_decode",
)


def write_csv(rows: list[Row], path: Path) -> None:
    """One line per row, with a header (written beside, then renamed: never half a file)."""
    tmp = path.with_name(f".{path.name}.tmp")
    with tmp.open("w", newline="") as out:
        writer = csv.writer(out)
        writer.writerow(CSV_FIELDS)
        for r in rows:
            writer.writerow(
                [
                    r.source,
                    r.pack,
                    r.set,
                    r.scenes,
                    r.cells,
                    r.wrong,
                    f"{r.wrong_pct:.4f}",
                    r.abstained,
                    f"{r.abstained_pct:.4f}",
                    r.doubted,
                    f"{r.doubted_pct:.4f}",
                    r.covered_wrong,
                    r.ship_right,
                    r.ship_scenes,
                    f"{r.ship_pct:.2f}",
                    r.answered,
                    f"{r.ece:.4f}",
                    f"{r.read_ms:.1f}",
                    f"{r.decode_ms:.2f}",
                    f"{r.read_over_decode:.2f}",
                ]
            )
    tmp.replace(path)
