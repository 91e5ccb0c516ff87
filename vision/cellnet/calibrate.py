"""A box's abstain threshold, set so that its wrong-rate holds with a stated confidence.

At a new box's first read the network reads random tables drawn with the box's own pictures
(vision.cellnet.data.draw_tables). Each cell's answer and how sure it is are compared with
the truth; the threshold is the least at which the wrong-rate among answered cells is at most
`target`, with `confidence`, by fixed-sequence testing (Learn then Test: thresholds from the
surest down, each tested at the full level, stopping at the first that fails). A test's
bound is Clopper-Pearson's upper bound on the rate, with the cells of one table counted as a
cluster: the count is shrunk by the design effect the tables' spread shows (never below 1).
The answers are the box's own head's (vision.cellnet.adapt: fitted on other tables of the
box's pictures, drawn with another seed), so the rate holds for it on tables it was not
fitted on. A table's lessons that are a fair sample of its cells (vision.box.lessons) join
the rendered cells as one more cluster (`Grades.joined`), read by the network when the box's
models are loaded; the cache keeps the renders' own calibration, head and cells.
"""

from __future__ import annotations

import hashlib
import json
import math
import multiprocessing
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from vision.box.cache import write_quietly
from vision.box.pack import Pack
from vision.cellnet.adapt import box_head, truth_candidate
from vision.cellnet.data import COVERED, EMPTY, PackCells, draw_tables
from vision.cellnet.model import BoxPictures, CellNet, Head

__all__ = [
    "Calibration",
    "Grades",
    "calibrated",
    "calibration_for",
    "choose_threshold",
    "design_effect",
    "graded_tables",
    "lesson_grades",
    "rendered_grades",
    "upper_bound",
]

VERSION = 5


@dataclass(frozen=True)
class Calibration:
    """The threshold and what it rests on: `cells` of `tables` tables, `answered` of them
    answered at the threshold with `wrong` wrong, and the wrong-rate's upper bound there
    (its counts divided by `design_effect`, the tables' clustering there); `head` the box's
    own head the answers were given by (None: the network's)."""

    threshold: float
    target: float
    confidence: float
    bound: float
    cells: int
    tables: int
    answered: int
    wrong: int
    design_effect: float = 1.0
    head: Head | None = field(default=None, compare=False)

    def to_json(self) -> str:
        fields = {k: v for k, v in asdict(self).items() if k != "head"}
        head = None if self.head is None else self.head.to_json()
        return json.dumps({"version": VERSION, **fields, "head": head})

    @classmethod
    def from_json(cls, text: str) -> Calibration:
        data = json.loads(text)
        if not isinstance(data, dict) or data.pop("version", None) != VERSION:
            raise ValueError("not a calibration of this version")
        head = data.pop("head", None)
        return cls(**data, head=None if head is None else Head.from_json(head))


def binomial_upper(wrong: float, n: float, confidence: float) -> float:
    """Clopper-Pearson's upper bound on a rate seen `wrong` times in `n` (both may be
    fractional after a design effect: `wrong` is rounded up, `n` down)."""
    k, m = math.ceil(wrong - 1e-9), math.floor(n + 1e-9)
    if m <= 0:
        return 1.0
    if k >= m:
        return 1.0
    alpha = 1.0 - confidence

    def cdf(p: float) -> float:  # P(X <= k) for X ~ Binomial(m, p), in log space
        if p <= 0.0:
            return 1.0
        if p >= 1.0:
            return 0.0
        terms = [
            math.lgamma(m + 1)
            - math.lgamma(i + 1)
            - math.lgamma(m - i + 1)
            + i * math.log(p)
            + (m - i) * math.log1p(-p)
            for i in range(k + 1)
        ]
        top = max(terms)
        return math.exp(top) * sum(math.exp(t - top) for t in terms)

    lo, hi = 0.0, 1.0
    for _ in range(60):
        mid = (lo + hi) / 2
        if cdf(mid) > alpha:
            lo = mid
        else:
            hi = mid
    return hi


def design_effect(wrong: NDArray[np.int64], answered: NDArray[np.int64]) -> float:
    """How much the tables' clustering widens the wrong-rate's variance, per-table counts
    given (cells of one table err together): the ratio estimator's variance over tables
    against the binomial one, never below 1 (1 with no wrong answer or one table)."""
    n = float(answered.sum())
    k = float(wrong.sum())
    tables = int((answered > 0).sum())
    if n <= 0 or k <= 0 or tables <= 1:
        return 1.0
    r = k / n
    resid = wrong - r * answered
    clustered = tables / (tables - 1) * float((resid**2).sum()) / n**2
    binomial = r * (1 - r) / n
    return max(1.0, clustered / binomial) if binomial > 0 else 1.0


def upper_bound(wrong: NDArray[np.int64], answered: NDArray[np.int64], confidence: float) -> float:
    """The upper bound on the wrong-rate of answered cells, per-table counts given: the
    binomial bound on counts shrunk by the tables' design effect."""
    n = float(answered.sum())
    if n <= 0:
        return 1.0
    deff = design_effect(wrong, answered)
    return binomial_upper(float(wrong.sum()) / deff, n / deff, confidence)


def choose_threshold(
    sure: NDArray[np.float64],
    wrong: NDArray[np.bool_],
    named: NDArray[np.bool_],
    tables: NDArray[np.int64],
    target: float,
    confidence: float,
    steps: int = 200,
) -> tuple[float, float, int, int]:
    """(threshold, bound, answered, wrong): the least threshold, tried from the surest down
    (from where enough cells are answered to hold `target` at all), before the first whose
    bound exceeds `target`. `named`: cells the network would answer
    at threshold 0 (not covered, not unknown); `wrong`: those answers that are wrong."""
    ids = np.unique(tables)
    index = np.searchsorted(ids, tables)
    levels: list[float] = []
    if named.any():
        levels = np.unique(np.quantile(sure[named], np.linspace(1.0, 0.0, steps))).tolist()
    best = (1.0 + 1e-9, 0.0, 0, 0)
    # Too few answered cells can hold no rate even with none wrong: the tests start where
    # they can pass (the count answered does not depend on the truth, so this is no peeking).
    least = math.ceil(math.log(1.0 - confidence) / math.log1p(-target))
    for t in sorted(levels, reverse=True):
        answered = named & (sure >= t)
        if int(answered.sum()) < least:
            continue
        per_answered = np.bincount(index[answered], minlength=len(ids)).astype(np.int64)
        per_wrong = np.bincount(index[answered & wrong], minlength=len(ids)).astype(np.int64)
        bound = upper_bound(per_wrong, per_answered, confidence)
        if bound > target:
            break
        best = (float(t), bound, int(answered.sum()), int((answered & wrong).sum()))
    return best


def graded(
    net: CellNet, box: BoxPictures, cells: PackCells, head: Head | None = None
) -> tuple[NDArray[np.float64], NDArray[np.bool_], NDArray[np.bool_]]:
    """Each cell's (how sure, answered wrongly, answered at all) as the network reads it
    with `head` (the network's own if None)."""
    p = net.probabilities(*cells.net_inputs(), box, head)
    answers = net.answers(p, box, threshold=0.0)
    candidate = {t: i for i, t in enumerate(box.tile_ids)}
    sure = np.zeros(len(answers))
    wrong = np.zeros(len(answers), bool)
    named = np.zeros(len(answers), bool)
    for i, (read, how_sure) in enumerate(answers):
        sure[i] = how_sure
        if read.unknown:
            continue
        named[i] = True
        label = int(cells.tiles[i])
        if label == COVERED:
            # Named at all, a covered cell must be named with what lies beneath it.
            if cells.beneath is None:
                wrong[i] = True
                continue
            label = int(cells.beneath[i])
        if label == EMPTY:
            wrong[i] = not read.empty
        elif read.empty or read.tile is None:
            wrong[i] = True
        else:
            truth = truth_candidate(candidate, cells, i, label)
            got = candidate[read.tile] * 4 + (read.rotation // 90) % 4
            wrong[i] = not box.same[truth, got]
    return sure, wrong, named


@dataclass(frozen=True)
class Grades:
    """Cells as the network read them (`graded`): how sure, answered wrongly, answered at
    all, and the cluster (table) each belongs to."""

    sure: NDArray[np.float64]
    wrong: NDArray[np.bool_]
    named: NDArray[np.bool_]
    tables: NDArray[np.int64]

    def __len__(self) -> int:
        return int(self.sure.size)

    def joined(self, lessons: Grades) -> Grades:
        """These cells and a table's lessons (`lesson_grades`) as one more cluster. The
        rendered tables are independent draws of camera, light and layout, each a cluster;
        the lessons of one table (of every frame) share
        one camera, one room and one box, so their frames are not independent of one
        another: together they are one draw, and counted as one cluster."""
        extra = int(self.tables.max()) + 1 if len(self) else 0
        return Grades(
            np.concatenate([self.sure, lessons.sure]),
            np.concatenate([self.wrong, lessons.wrong]),
            np.concatenate([self.named, lessons.named]),
            np.concatenate([self.tables, np.full(len(lessons), extra, np.int64)]),
        )

    def to_json(self) -> str:
        return json.dumps(
            {
                "version": VERSION,
                "sure": self.sure.tolist(),
                "wrong": np.flatnonzero(self.wrong).tolist(),
                "named": np.flatnonzero(self.named).tolist(),
                "tables": self.tables.tolist(),
            }
        )

    @classmethod
    def from_json(cls, text: str) -> Grades:
        data = json.loads(text)
        if not isinstance(data, dict) or data.get("version") != VERSION:
            raise ValueError("not graded cells of this version")
        sure = np.asarray(data["sure"], np.float64)
        tables = np.asarray(data["tables"], np.int64)
        if sure.ndim != 1 or tables.shape != sure.shape:
            raise ValueError("graded cells of unequal lengths")
        wrong = np.zeros(sure.size, bool)
        named = np.zeros(sure.size, bool)
        wrong[np.asarray(data["wrong"], np.intp)] = True
        named[np.asarray(data["named"], np.intp)] = True
        return cls(sure, wrong, named, tables)


def lesson_grades(
    net: CellNet, box: BoxPictures, cells: PackCells, head: Head | None = None
) -> Grades:
    """A table's lessons (their crops, board looks and truths as `cells`) graded by the
    network exactly as the rendered cells are (`graded`), all of one cluster (`Grades.joined`)."""
    if not len(cells.tiles):
        return Grades(np.zeros(0), np.zeros(0, bool), np.zeros(0, bool), np.zeros(0, np.int64))
    sure, wrong, named = graded(net, box, cells, head)
    return Grades(sure, wrong, named, np.zeros(len(sure), np.int64))


def rendered_grades(
    net: CellNet,
    box: BoxPictures,
    pack: Pack,
    tables: int,
    seed: int = 0,
    progress: Callable[[int, int], None] | None = None,
    head: Head | None = None,
) -> Grades:
    """The cells of `tables` random tables of the box's own pictures, graded (`graded`)
    with `head`."""
    return graded_tables(net, box, draw_tables(pack, tables, _rng(seed), net.px, progress), head)


def _rng(seed: int) -> np.random.Generator:
    """The calibration's tables' own random stream (the head's are drawn from another)."""
    return np.random.default_rng([seed, 20261207, 1])


def graded_tables(
    net: CellNet, box: BoxPictures, parts: Sequence[PackCells], head: Head | None = None
) -> Grades:
    """Drawn tables' cells graded (`graded`) with `head`, each table a cluster."""
    sure_parts, wrong_parts, named_parts, table_parts = [], [], [], []
    for i, part in enumerate(parts):
        if not len(part.tiles):
            continue
        s, w, n = graded(net, box, part, head)
        sure_parts.append(s)
        wrong_parts.append(w)
        named_parts.append(n)
        table_parts.append(np.full(len(s), i, np.int64))
    if not sure_parts:
        return Grades(np.zeros(0), np.zeros(0, bool), np.zeros(0, bool), np.zeros(0, np.int64))
    return Grades(
        np.concatenate(sure_parts),
        np.concatenate(wrong_parts),
        np.concatenate(named_parts),
        np.concatenate(table_parts),
    )


def calibrated(grades: Grades, target: float, confidence: float) -> Calibration:
    """The threshold `choose_threshold` sets on graded cells, and what it rests on."""
    if not len(grades):
        return Calibration(1.0, target, confidence, 1.0, 0, 0, 0, 0)
    sure, wrong, named = grades.sure, grades.wrong, grades.named
    ids, table = np.unique(grades.tables, return_inverse=True)
    threshold, bound, answered, wrong_count = choose_threshold(
        sure, wrong, named, table, target, confidence
    )
    chosen = named & (sure >= threshold)
    per_table = np.bincount(table[chosen], minlength=len(ids)).astype(np.int64)
    per_wrong = np.bincount(table[chosen & wrong], minlength=len(ids)).astype(np.int64)
    return Calibration(
        threshold=threshold,
        target=target,
        confidence=confidence,
        bound=bound,
        cells=len(sure),
        tables=len(ids),
        answered=answered,
        wrong=wrong_count,
        design_effect=design_effect(per_wrong, per_table),
    )


def calibration_for(
    net: CellNet,
    box: BoxPictures,
    pack: Pack,
    *,
    tables: int,
    target: float,
    confidence: float,
    cache: Path | None,
    progress: Callable[[int, int], None] | None = None,
    lessons: PackCells | None = None,
    fit_tables: int = 0,
    ridge: float,
    metric_steps: int = 0,
) -> Calibration:
    """The box's calibration, from the cache directory when it holds one for these pictures,
    this network and these settings, else made now and kept there (with the rendered cells'
    grades beside it): the box's own head fitted on `fit_tables` tables with its metric's
    `ridge` and `metric_steps` (none: the network's head), then the threshold on `tables`
    others. With a table's `lessons` (their cells, as vision.reader.read.lesson_cells gives
    them), the threshold is set again on the rendered cells and the lessons graded by the
    same head together (`Grades.joined`): what is kept stays the renders' own, and a new
    lesson costs only its own cells' reading."""
    key = _key(net, pack, tables, target, confidence, fit_tables, ridge, metric_steps)
    path = None if cache is None else cache / f"calibration-{key}.json"
    cells_path = None if cache is None else cache / f"calibration-{key}-cells.json"
    taught = lessons is not None and len(lessons.tiles) > 0
    made: Calibration | None = None
    if path is not None:
        try:
            made = Calibration.from_json(path.read_text(encoding="utf-8"))
        except (OSError, ValueError, TypeError, KeyError):
            made = None
    if made is not None and not taught:
        return made
    grades: Grades | None = None
    if made is not None and cells_path is not None:
        try:
            grades = Grades.from_json(cells_path.read_text(encoding="utf-8"))
        except (OSError, ValueError, TypeError, KeyError, IndexError):
            grades = None
    if made is None or grades is None:
        fitting = fit_tables if made is None else 0
        whole = fitting + tables

        def fitted(i: int, n: int) -> None:
            if progress:
                progress(i * fitting // max(n, 1), whole)

        def drawn(i: int, _n: int) -> None:
            if progress:
                progress(fitting + i, whole)

        head = made.head if made is not None else None
        if fitting:

            def fit() -> Head:
                return box_head(
                    net, box, pack, fitting, progress=fitted, ridge=ridge, metric_steps=metric_steps
                )

            head, parts = _fitted_beside_drawing(fit, pack, tables, net.px)
            drawn(tables, tables)
            grades = graded_tables(net, box, parts, head)
        else:
            grades = rendered_grades(net, box, pack, tables, progress=drawn, head=head)
        made = replace(calibrated(grades, target, confidence), head=head)
        if cells_path is not None:
            write_quietly(cells_path, grades.to_json())
        if path is not None:
            write_quietly(path, made.to_json())
    if lessons is not None and taught:
        joined = grades.joined(lesson_grades(net, box, lessons, made.head))
        return replace(calibrated(joined, target, confidence), head=made.head)
    return made


def _fitted_beside_drawing(
    fit: Callable[[], Head], pack: Pack, tables: int, px: int, seed: int = 0
) -> tuple[Head, list[PackCells]]:
    """`fit()`, and the calibration's `tables` (of `seed`) drawn meanwhile in another
    process: they do not depend on the head, and are the tables drawn here, so the
    threshold is the same. Drawn here after the fit when no process can be started or the
    other fails."""

    def here() -> list[PackCells]:
        return draw_tables(pack, tables, _rng(seed), px)

    try:
        pool = ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn"))
    except (OSError, RuntimeError):
        return fit(), here()
    try:
        try:
            later = pool.submit(draw_tables, pack, tables, _rng(seed), px)
        except (OSError, RuntimeError, AssertionError):  # AssertionError: a daemon's child
            return fit(), here()
        head = fit()
        try:
            return head, later.result()
        except Exception:  # whatever broke the other process, the tables are drawn here
            return head, here()
    finally:
        pool.shutdown(wait=False, cancel_futures=True)


def _key(net: CellNet, pack: Pack, *settings: Sequence[float] | float | int) -> str:
    digest = hashlib.blake2b(digest_size=16)
    digest.update(f"{VERSION} {net.digest} {pack.tile_mm!r} {settings!r}".encode())
    for name in sorted(pack.tiles):
        picture = np.ascontiguousarray(pack.tiles[name])
        digest.update(f"{name} {picture.shape}".encode())
        digest.update(picture.tobytes())
    for side in sorted(pack.boards):
        digest.update(np.ascontiguousarray(pack.boards[side]).tobytes())
    return digest.hexdigest()
