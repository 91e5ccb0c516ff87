"""The learned judge: for each cell, tile, empty or unknown, with a calibrated probability.

The cell matcher (vision.reader.recognise) measures each cell: the tile candidate that fits best
(its fit, contrast, colours, the evidence against its closest rival meaning something else,
the share of it taken as covered) and how well the empty look explains it; its own cascade
of rules adds a first answer. The judge weighs all of these at once. It is learnt per tile
pack, from the pack alone: the pack's pictures are laid out on rendered tables
(vision.synthetic.render) under randomised light, glare, shadow, blur, noise, JPEG, camera tilt and
scale, hands and arms, tiles off their place; every cell of those tables is read by the matcher and
labelled by the renderer's truth:

- TILE: the candidate weighed last means what lies there;
- EMPTY: the cell is empty;
- NEITHER: anything else (another tile, or a tile the candidate misnames).

A few small networks (one hidden layer, numpy; `JudgeConfig.members`, each from its own
random start) learn P(TILE), P(EMPTY), P(NEITHER) from the figures, and the judge's
probability is their mean: one network alone is sure of itself wherever the tables it learnt
from are few (a cell drawn by another hand), each in its own way, and their mean is not. The
tables are dealt into folds; every cell is also weighed by networks that never saw its table,
and on those out-of-fold weighings a temperature is fitted (calibration, its
expected calibration error kept in the judge's report) and two thresholds are chosen, each
the least that keeps the wrong answers within half of `JudgeConfig.wrong_rate` of the cells:
one for cells the matcher answered (the judge may withdraw that answer, never change it), one
for cells it left unknown (the judge may name them tile or empty). The answer's probability
is the read's confidence; below its threshold the cell is unknown.

A judge is cached on disk per pack content and settings (cache_dir), so only the first read
of a new box pays for learning.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import tempfile
import zipfile
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray
from threadpoolctl import ThreadpoolController

from companion.catalogue import Catalogue
from companion.progress import terminal_progress
from companion.reading import UNKNOWN, CellRead
from companion.tiles import Kind
from vision.box.cache import cache_dir
from vision.box.tilemodel import TileModel
from vision.config import JudgeConfig, ReadConfig
from vision.reader.recognise import LOOK_STATS, TILE_STATS, CellMatch
from vision.reader.second_look import SECOND_STATS

if TYPE_CHECKING:
    from vision.box.lessons import Lessons

Float = NDArray[np.float64]

_BLAS = ThreadpoolController()

__all__ = ["CellJudge", "JudgeConfig", "cell_features", "judge_for", "learn_judge"]

TILE, EMPTY_CLASS, NEITHER = 0, 1, 2
_KINDS = (Kind.WATER, Kind.SINGLE, Kind.END, Kind.MIDDLE, Kind.VOLCANO)
_FIRST = ("tile", "empty", "unknown")
#: The figures' version (FEATURES, the labels): bumped whenever they change; lessons and
#: learnt cells of another version are passed over.
VERSION = 9
#: The judge's own version (its networks, how they are fitted): a cached judge of another
#: is fitted again from the learnt cells.
JUDGE_VERSION = 2


@dataclass
class CellJudge:
    """A learnt judge: feature scaling, its networks' weights (one row per network),
    temperature and thresholds."""

    mean: Float
    scale: Float
    w1: Float  # (networks, features, hidden)
    b1: Float  # (networks, hidden)
    w2: Float  # (networks, hidden, 3)
    b2: Float  # (networks, 3)
    temperature: float
    threshold: float  # for a cell the matcher answered
    threshold_unknown: float  # for a cell the matcher left unknown
    report: dict[str, float] = field(default_factory=dict)
    # What a table taught (vision.box.lessons): per proposed tile id ("" for none), how many of
    # its lessons were TILE, EMPTY and NEITHER; and how many lessons the judge's own
    # probability counts as (CellJudge.taught).
    taught_counts: dict[str, tuple[int, int, int]] = field(default_factory=dict)
    lesson_prior: float = 0.0

    def probabilities(self, features: Float, groups: Sequence[str] | None = None) -> Float:
        """P(TILE), P(EMPTY), P(NEITHER) per row of features (N, F); with the cells'
        `groups` (proposed tile ids), as this table's lessons revise them."""
        p = _mean_probabilities(_logits(self, features), self.temperature)
        if groups is None or not self.taught_counts:
            return p
        s = self.lesson_prior
        for i, group in enumerate(groups):
            counts = self.taught_counts.get(group)
            if counts is not None:
                p[i] = (np.asarray(counts, np.float64) + s * p[i]) / (sum(counts) + s)
        return p

    def taught(self, lessons: Lessons, prior: float) -> CellJudge:
        """This judge as a table's lessons revise it: for a cell of a kind (proposed_id) the
        table has lessons about, each class's probability becomes (n + prior * p) /
        (N + prior), n of the N lessons about that kind of that class, p the judge's own
        probability (the judge counts as `prior` lessons). The thresholds stay those that
        hold the wrong-rate on the rendered tables, so one correction of a tile named wrongly
        makes the reader leave that kind of cell to the host, and only many confirmations
        let it name a tile it doubted."""
        counts: dict[str, tuple[int, int, int]] = {}
        for group in sorted(set(lessons.groups)):
            inside = np.array([g == group for g in lessons.groups])
            n = np.bincount(lessons.labels[inside], minlength=3)[:3]
            counts[group] = (int(n[0]), int(n[1]), int(n[2]))
        return replace(
            self,
            taught_counts=counts,
            lesson_prior=prior,
            report={**self.report, "lessons": float(len(lessons))},
        )

    def decide(
        self, matches: Sequence[CellMatch], model: TileModel, catalogue: Catalogue
    ) -> list[CellRead]:
        """Each match's answer: its tile or empty when the judge is sure enough, else unknown."""
        if not matches:
            return []
        kinds = candidate_kinds(model, catalogue)
        x = np.stack([cell_features(m, kinds) for m in matches])
        answer, confidence, threshold = self._answers(x, [proposed_id(m, model) for m in matches])
        out: list[CellRead] = []
        for match, a, c, t in zip(matches, answer, confidence, threshold, strict=True):
            if c < t:
                out.append(UNKNOWN)
            elif a == TILE and match.proposal is not None:
                k = match.proposal
                out.append(CellRead(model.ids[k], model.rotations[k], round(float(c), 4)))
            else:
                out.append(CellRead(empty=True, confidence=round(float(c), 4)))
        return out

    def _answers(
        self, x: Float, groups: Sequence[str] | None = None
    ) -> tuple[NDArray[np.intp], Float, Float]:
        """Per cell the answer weighed, its probability and the threshold it must reach."""
        answer, confidence, answered = _choose(self.probabilities(x, groups), x)
        threshold = np.where(answered, self.threshold, self.threshold_unknown)
        return answer, confidence, threshold

    def to_json(self) -> dict[str, Any]:
        return {
            "version": VERSION,
            "judge_version": JUDGE_VERSION,
            "mean": self.mean.tolist(),
            "scale": self.scale.tolist(),
            "w1": self.w1.tolist(),
            "b1": self.b1.tolist(),
            "w2": self.w2.tolist(),
            "b2": self.b2.tolist(),
            "temperature": self.temperature,
            "threshold": self.threshold,
            "threshold_unknown": self.threshold_unknown,
            "report": self.report,
        }

    @classmethod
    def from_json(cls, data: Any) -> CellJudge:
        """The judge `to_json` wrote; ValueError for anything else (another version, weights
        that do not fit the features, figures that are not finite numbers)."""
        if not isinstance(data, dict):
            raise ValueError("a judge is a JSON object")
        if data.get("version") != VERSION or data.get("judge_version") != JUDGE_VERSION:
            raise ValueError("a judge of another version")
        w = {k: np.asarray(data[k], np.float64) for k in ("mean", "scale", "w1", "b1", "w2", "b2")}
        if not all(np.isfinite(v).all() for v in w.values()):
            raise ValueError("a judge with weights that are not finite numbers")
        judge = cls(
            w["mean"],
            w["scale"],
            w["w1"],
            w["b1"],
            w["w2"],
            w["b2"],
            temperature=float(data["temperature"]),
            threshold=float(data["threshold"]),
            threshold_unknown=float(data["threshold_unknown"]),
            report=dict(data.get("report", {})),
        )
        members, hidden = judge.b1.shape if judge.b1.ndim == 2 else (0, 0)
        if (
            judge.mean.shape != (len(FEATURES),)
            or judge.scale.shape != (len(FEATURES),)
            or judge.w1.shape != (members, len(FEATURES), hidden)
            or judge.w2.shape != (members, hidden, 3)
            or judge.b2.shape != (members, 3)
            or members == 0
        ):
            raise ValueError("a judge whose weights do not fit its features")
        if not (judge.scale > 0).all() or not 0 < judge.temperature < math.inf:
            raise ValueError("a judge with a scale or temperature that is not positive")
        if not (0 <= judge.threshold <= 1 and 0 <= judge.threshold_unknown <= 1):
            raise ValueError("a judge whose thresholds are not probabilities")
        return judge


# --- features ----------------------------------------------------------------------------


def _feature_names() -> tuple[str, ...]:
    names = [f"first_{a}" for a in _FIRST] + ["proposed"]
    names += [f"tile_{s}" for s in TILE_STATS] + [f"look_{s}" for s in LOOK_STATS]
    names += [f"look_{s}_missing" for s in ("gain", "white", "explained", "detail", "veil")]
    names += ["sure", "covered_share"] + [f"kind_{k.value}" for k in _KINDS]
    names += [f"second_{s}" for s in SECOND_STATS]
    return tuple(names)


FEATURES = _feature_names()


def _finite(x: float, low: float, high: float) -> float:
    if math.isnan(x):
        return 0.0
    return min(max(x, low), high)


def _log(x: float) -> float:
    return math.log1p(_finite(x, 0.0, 1e6))


def proposed_id(match: CellMatch, model: TileModel) -> str:
    """The kind of cell a lesson is about: the tile id the matcher proposed ("" for none)
    and its first answer (a cell it read empty is not a tile it named)."""
    read = match.read
    first = "tile" if read.tile is not None else "empty" if read.empty else "unknown"
    return f"{'' if match.proposal is None else model.ids[match.proposal]}|{first}"


def candidate_kinds(model: TileModel, catalogue: Catalogue) -> tuple[Kind, ...]:
    """The kind of tile each of the model's candidates is."""
    return tuple(catalogue.meaning(tile_id).kind for tile_id in model.ids)


def cell_features(match: CellMatch, kinds: Sequence[Kind]) -> Float:
    """The figures the judge weighs for one cell, in FEATURES order (`kinds`: each
    candidate's kind of tile, candidate_kinds)."""
    read = match.read
    first = [float(read.tile is not None), float(read.empty), float(read.unknown)]
    tile = match.tile_stats or (0.0,) * len(TILE_STATS)
    (
        fit,
        rms,
        hidden,
        gain,
        spread,
        evidence,
        separation,
        hidden_apart,
        lit_rms,
        lit_margin,
        lit_best,
        by_light,
    ) = tile
    tile_f = [
        _finite(fit, -1, 1),
        _log(rms),
        _finite(hidden, 0, 1),
        _finite(gain, -2, 3),
        _log(spread if spread > 0 else 1e6),
        _finite(evidence, -5, 5),
        _log(separation),
        _finite(hidden_apart, 0, 1),
        _log(lit_rms),
        _finite(lit_margin, -1, 1),
        _finite(lit_best, 0, 1),
        _finite(by_light, 0, 1),
    ]
    look = match.look_stats or (math.nan,) * len(LOOK_STATS)
    (
        l_rms,
        l_rms_all,
        looks,
        board,
        l_gain,
        washed,
        white,
        tint,
        explained,
        explained_kept,
        detail,
        l_hidden,
        veil,
    ) = look
    look_f = [
        _log(l_rms),
        _log(l_rms_all),
        _finite(looks, 0, 1),
        _finite(board, 0, 1),
        _finite(l_gain, -2, 3),
        _finite(washed, 0, 1),
        _finite(white, -100, 100) / 50,
        _finite(tint, 0, 2),
        _finite(explained, -2, 1),
        _finite(explained_kept, -2, 1),
        _log(detail),
        _finite(l_hidden, 0, 1),
        _finite(veil, -100, 100) / 50,
    ]
    missing = [float(math.isnan(v)) for v in (l_gain, white, explained, detail, veil)]
    kind_f = [0.0] * len(_KINDS)
    if match.proposal is not None:
        kind_f[_KINDS.index(kinds[match.proposal])] = 1.0
    flags = [float(match.proposal is not None)]
    cover = [float(match.sure), _finite(match.hidden, 0, 1)]
    siblings, s_fit, s_evidence, s_separation, beaten = match.second_stats or (
        (0.0,) * len(SECOND_STATS)
    )
    second = [
        _finite(siblings, 0, 1),
        _finite(s_fit, -1, 1),
        _finite(s_evidence, -5, 5),
        _log(s_separation),
        _finite(beaten, 0, 1),
    ]
    return np.array(
        [*first, *flags, *tile_f, *look_f, *missing, *cover, *kind_f, *second], np.float64
    )


# --- the network ---------------------------------------------------------------------------


def _softmax(z: Float) -> Float:
    z = z - z.max(axis=-1, keepdims=True)
    e = np.exp(z)
    out: Float = e / e.sum(axis=-1, keepdims=True)
    return out


def _logits(judge: CellJudge, features: Float) -> Float:
    """Each network's logits for each row of features: (networks, N, 3)."""
    x = (features - judge.mean) / judge.scale
    h = np.maximum(x @ judge.w1 + judge.b1[:, None, :], 0.0)
    out: Float = h @ judge.w2 + judge.b2[:, None, :]
    return out


def _mean_probabilities(logits: Float, temperature: float) -> Float:
    """The networks' probabilities at this temperature, averaged: (N, 3)."""
    out: Float = _softmax(logits / temperature).mean(axis=0)
    return out


def _train(x: Float, y: NDArray[np.intp], cfg: JudgeConfig) -> CellJudge:
    """`cfg.members` softmax networks, each from its own random start, fitted together by
    Adam on the whole set (each cell weighed alike: the probabilities keep the classes' own
    frequencies)."""
    rng = np.random.default_rng(cfg.seed)
    mean = x.mean(axis=0)
    scale = x.std(axis=0)
    scale[scale < 1e-6] = 1.0
    # Single precision: the products are small and a learning step twice as fast.
    xs = ((x - mean) / scale).astype(np.float32)
    n, f = xs.shape
    h, count = cfg.hidden, cfg.members
    starts = [
        (rng.normal(0, math.sqrt(2 / f), (f, h)), rng.normal(0, math.sqrt(1 / h), (h, 3)))
        for _ in range(count)
    ]  # each network's start in turn: the first is the one a judge of one network has
    params: dict[str, NDArray[Any]] = {
        "w1": np.stack([w1 for w1, _w2 in starts]).astype(np.float32),
        "b1": np.zeros((count, h), np.float32),
        "w2": np.stack([w2 for _w1, w2 in starts]).astype(np.float32),
        "b2": np.zeros((count, 3), np.float32),
    }
    weights = np.full(n, 1.0 / n, np.float32)
    onehot = np.eye(3, dtype=np.float32)[y]
    m = {k: np.zeros_like(v) for k, v in params.items()}
    v = {k: np.zeros_like(p) for k, p in params.items()}
    b1, b2, eps = 0.9, 0.999, 1e-8
    for step in range(1, cfg.steps + 1):
        pre = xs @ params["w1"] + params["b1"][:, None, :]  # (networks, N, hidden)
        hid = np.maximum(pre, 0.0)
        p = _softmax(hid @ params["w2"] + params["b2"][:, None, :])
        d_out = (p - onehot) * weights[:, None]
        grads = {
            "w2": hid.transpose(0, 2, 1) @ d_out + cfg.decay * params["w2"],
            "b2": d_out.sum(axis=1),
        }
        d_hid = (d_out @ params["w2"].transpose(0, 2, 1)) * (pre > 0)
        grads["w1"] = xs.T @ d_hid + cfg.decay * params["w1"]
        grads["b1"] = d_hid.sum(axis=1)
        for k in params:
            m[k] = b1 * m[k] + (1 - b1) * grads[k]
            v[k] = b2 * v[k] + (1 - b2) * grads[k] ** 2
            m_hat = m[k] / (1 - b1**step)
            v_hat = v[k] / (1 - b2**step)
            params[k] = params[k] - cfg.learning_rate * m_hat / (np.sqrt(v_hat) + eps)
    w = {k: params[k].astype(np.float64) for k in ("w1", "b1", "w2", "b2")}
    return CellJudge(
        mean,
        scale,
        w["w1"],
        w["b1"],
        w["w2"],
        w["b2"],
        temperature=1.0,
        threshold=1.0,
        threshold_unknown=1.0,
    )


def _log_loss(p: Float, y: NDArray[np.intp]) -> float:
    """The mean negative log-likelihood of the labels y under probabilities p (N, 3)."""
    return float(-np.log(np.maximum(p[np.arange(len(y)), y], 1e-12)).mean())


def _fit_temperature(logits: Float, y: NDArray[np.intp]) -> float:
    """The temperature that minimises the negative log-likelihood of the networks' mean
    probabilities given their logits (networks, N, 3)."""
    best, best_t = math.inf, 1.0
    for t in np.exp(np.linspace(math.log(0.25), math.log(8.0), 61)):
        nll = _log_loss(_mean_probabilities(logits, t), y)
        if nll < best:
            best, best_t = nll, float(t)
    return best_t


def _choose(p: Float, x: Float) -> tuple[NDArray[np.intp], Float, NDArray[np.bool_]]:
    """Per cell the answer weighed (TILE or EMPTY_CLASS) given the probabilities `p`, its
    probability, and whether the matcher answered the cell: the matcher's own answer where
    it gave one (the judge may only withdraw it), else the likelier of tile and empty."""
    first_tile = x[:, FEATURES.index("first_tile")] > 0.5
    first_empty = x[:, FEATURES.index("first_empty")] > 0.5
    proposed = x[:, FEATURES.index("proposed")] > 0.5
    tile_p = np.where(proposed, p[:, TILE], -1.0)
    free = np.where(tile_p >= p[:, EMPTY_CLASS], TILE, EMPTY_CLASS)
    answer = np.where(first_tile, TILE, np.where(first_empty, EMPTY_CLASS, free))
    confidence = np.where(answer == TILE, tile_p, p[:, EMPTY_CLASS])
    return answer.astype(np.intp), confidence, first_tile | first_empty


def calibration_error(confidence: Float, right: NDArray[np.bool_], bins: int = 10) -> float:
    """Expected calibration error of answers given with these confidences."""
    if confidence.size == 0:
        return 0.0
    edges = np.linspace(0.0, 1.0, bins + 1)
    which = np.clip(np.digitize(confidence, edges[1:-1]), 0, bins - 1)
    total = 0.0
    for b in range(bins):
        inside = which == b
        if inside.any():
            total += inside.mean() * abs(
                float(right[inside].mean()) - float(confidence[inside].mean())
            )
    return total


def _threshold(confidence: Float, right: NDArray[np.bool_], cells: int, cfg: JudgeConfig) -> float:
    """The least threshold that answers no more wrong cells than wrong_rate of `cells` (every
    cell weighed out of fold, of both kinds): just above the surest wrong answer beyond that
    share."""
    allowed = math.floor(cfg.wrong_rate * cells)
    wrong = np.sort(confidence[~right])[::-1]
    if wrong.size <= allowed:
        return cfg.least_threshold
    return max(float(np.nextafter(wrong[allowed], np.inf)), cfg.least_threshold)


# --- learning from rendered tables --------------------------------------------------------


@dataclass
class Examples:
    """Cells read on rendered tables: features, labels, and the table each came from."""

    features: list[Float] = field(default_factory=list)
    labels: list[int] = field(default_factory=list)
    tables: list[int] = field(default_factory=list)

    def arrays(self) -> tuple[Float, NDArray[np.intp], NDArray[np.intp]]:
        return (
            np.stack(self.features),
            np.asarray(self.labels, np.intp),
            np.asarray(self.tables, np.intp),
        )


def label(match: CellMatch, truth: CellRead, model: TileModel, catalogue: Catalogue) -> int:
    """TILE, EMPTY_CLASS or NEITHER for a match whose cell truly holds `truth`."""
    if truth.empty:
        return EMPTY_CLASS
    if truth.tile is not None and match.proposal is not None:
        k = match.proposal
        got = catalogue.meaning(model.ids[k]).rotated(model.rotations[k])
        if got == catalogue.meaning(truth.tile).rotated(truth.rotation or 0):
            return TILE
    return NEITHER


def fit_judge(examples: Examples, cfg: JudgeConfig) -> CellJudge:
    """Learn the judge from labelled cells, weighing every cell out of fold.

    The tables are dealt into `cfg.folds` folds; each fold's cells are weighed by a network
    trained on the other folds' tables. On those out-of-fold logits one temperature is
    fitted (calibration) and the two thresholds are chosen (every cell counts, so one rare
    mistake does not decide). The judge itself is then trained on every table."""
    x, y, tables = examples.arrays()
    with _BLAS.limit(limits=1, user_api="blas"):  # small products: one thread is fastest
        return _fit(x, y, tables, cfg)


def _fit(x: Float, y: NDArray[np.intp], tables: NDArray[np.intp], cfg: JudgeConfig) -> CellJudge:
    ids = np.unique(tables)
    rng = np.random.default_rng(cfg.seed)
    rng.shuffle(ids)
    fold_of = {int(t): i % cfg.folds for i, t in enumerate(ids)}
    fold = np.array([fold_of[int(t)] for t in tables])
    logits = np.zeros((cfg.members, len(y), 3))
    folds = [inside for k in range(cfg.folds) if (inside := fold == k).any() and not inside.all()]
    # The fits are independent, their products single-threaded: one thread per core.
    with ThreadPoolExecutor(max_workers=max(1, min(os.cpu_count() or 1, len(folds) + 1))) as pool:
        whole = pool.submit(_train, x, y, cfg)
        held = [pool.submit(_train, x[~inside], y[~inside], cfg) for inside in folds]
        for inside, fitted in zip(folds, held, strict=True):
            logits[:, inside] = _logits(fitted.result(), x[inside])
        judge = whole.result()
    judge.temperature = _fit_temperature(logits, y)
    p = _mean_probabilities(logits, judge.temperature)
    answer, confidence, answered = _choose(p, x)
    right = answer == y
    # Half the wrong answers allowed go to each kind of cell (answered by the matcher or not).
    half = replace(cfg, wrong_rate=cfg.wrong_rate / 2)
    judge.threshold = _threshold(confidence[answered], right[answered], len(y), half)
    judge.threshold_unknown = _threshold(confidence[~answered], right[~answered], len(y), half)
    kept = confidence >= np.where(answered, judge.threshold, judge.threshold_unknown)
    judge.report = {
        "cells": float(len(y)),
        "log_loss": _log_loss(p, y),
        "ece": calibration_error(confidence, right),
        "threshold": judge.threshold,
        "threshold_unknown": judge.threshold_unknown,
        "answered": float(kept.mean()),
        "wrong": float((kept & ~right).mean()),
    }
    return judge


def learn_judge(
    pack: Any,
    model: TileModel,
    config: Any,
    cfg: JudgeConfig,
    progress: Callable[[int, int], None] | None = None,
) -> CellJudge:
    """Render `cfg.tables` random tables with the pack, read their cells with the matcher and
    learn the judge from them (deterministic for a pack and settings)."""
    return fit_judge(learning_set(pack, model, config, cfg, progress), cfg)


def learning_set(
    pack: Any,
    model: TileModel,
    config: Any,
    cfg: JudgeConfig,
    progress: Callable[[int, int], None] | None = None,
) -> Examples:
    """The cells of `cfg.tables` random tables drawn with the pack, read by the matcher and
    labelled by the renderer's truth."""
    from vision.box.learning import rendered_tables

    examples = Examples()
    kinds = candidate_kinds(model, pack.catalogue)
    for index, (matches, truths) in enumerate(
        rendered_tables(pack, config, cfg.tables, cfg.seed, progress)
    ):
        for match, truth in zip(matches, truths, strict=True):
            examples.features.append(cell_features(match, kinds))
            examples.labels.append(label(match, truth, model, pack.catalogue))
            examples.tables.append(index)
    return examples


# --- the cache -----------------------------------------------------------------------------


def learnt_settings(config: Any) -> Any:
    """The settings a judge is learnt under: `config` less what cannot change it (the
    lessons' prior, and how a read shares out its work: worker processes, the ship's thread;
    the learning tables are read in one process, and shared out or not a read gives the
    same answers)."""
    read = ReadConfig()
    return replace(
        config,
        judge=replace(config.judge, enabled=True, lesson_prior=0.0),
        read=replace(
            config.read,
            cell_workers=read.cell_workers,
            ship_beside_cells=read.ship_beside_cells,
            cells_here_weight=read.cells_here_weight,
        ),
    )


def judge_key(pack: Any, config: Any) -> str:
    """What a judge depends on: the pack's pictures and meanings, the versions and every
    setting (learnt_settings)."""
    return _key(pack, "judge", VERSION, JUDGE_VERSION, learnt_settings(config))


def learning_key(pack: Any, config: Any) -> str:
    """What a learning set depends on: the pack, the figures' version and what draws it (the
    tables drawn, their seed and every setting but the judge's own)."""
    learnt = learnt_settings(config)
    drawn = (learnt.judge.tables, learnt.judge.seed)
    return _key(pack, "cells", VERSION, drawn, replace(learnt, judge=None))


def _key(pack: Any, *parts: object) -> str:
    """A digest of the pack's pictures and meanings and of `parts`."""
    from vision.reader.cellpool import pack_digest

    h = hashlib.blake2b(digest_size=16)
    h.update(pack_digest(pack).encode())
    for tile in pack.catalogue:
        h.update(repr((tile.id, tile.meaning)).encode())
    h.update(repr(parts).encode())
    return h.hexdigest()


_MEMORY: dict[str, CellJudge] = {}


def judge_for(
    pack: Any,
    model: TileModel,
    config: Any,
    progress: Callable[[int, int], None] | None = None,
    lessons: Lessons | None = None,
    cache: Path | None = None,
) -> CellJudge | None:
    """The pack's judge: from memory, from the cache directory (`cache`, by default
    vision.box.cache's), or learnt now and kept (the
    rendered tables' cells are kept beside it: a judge that cannot be read is fitted again
    without drawing them again); with a table's `lessons` (vision.box.lessons), shifted by them.

    None when the judge is turned off. A cache that cannot be written is passed over (the
    judge is then learnt again by the next process)."""
    cfg: JudgeConfig = config.judge
    if not cfg.enabled:
        return None
    key = judge_key(pack, config)
    if lessons is not None and len(lessons):
        name = f"{key}-{lessons.digest}"
        if name not in _MEMORY:
            base = judge_for(pack, model, config, progress, cache=cache)
            assert base is not None
            _MEMORY[name] = base.taught(lessons, cfg.lesson_prior)
        return _MEMORY[name]
    hit = _MEMORY.get(key)
    if hit is not None:
        return hit
    cache = cache or cache_dir()
    path = cache / f"judge-{key}.json"
    try:
        judge = CellJudge.from_json(json.loads(path.read_text()))
    except (OSError, ValueError, KeyError, TypeError, RecursionError):
        judge = None
    if judge is None:
        judge = fit_judge(learning_examples(pack, model, config, progress, cache), cfg)
        _store(path, lambda out: out.write(json.dumps(judge.to_json()).encode()))
    _MEMORY[key] = judge
    return judge


def learning_examples(
    pack: Any,
    model: TileModel,
    config: Any,
    progress: Callable[[int, int], None] | None = None,
    cache: Path | None = None,
) -> Examples:
    """The pack's learning set: from the cache directory, or drawn now and kept there. It is
    keyed by what draws it (learning_key), so a judge learnt with other network settings
    is fitted on the same cells without drawing them again."""
    key = learning_key(pack, config)
    return _cached_learning_set(
        (cache or cache_dir()) / f"learning-{key}.npz",
        lambda: learning_set(
            pack,
            model,
            config,
            config.judge,
            progress or terminal_progress(f"learning {pack.name}"),
        ),
    )


def _cached_learning_set(path: Path, learn: Callable[[], Examples]) -> Examples:
    try:
        with np.load(path) as data:
            x, y, t = data["x"], data["y"], data["tables"]
        if (
            x.ndim == 2
            and x.shape[1] == len(FEATURES)
            and y.ndim == t.ndim == 1
            and 0 < len(x) == len(y) == len(t)
            and np.isfinite(x).all()
            and np.isin(y, (TILE, EMPTY_CLASS, NEITHER)).all()
        ):
            return Examples(list(x), [int(v) for v in y], [int(v) for v in t])
    except (OSError, EOFError, ValueError, KeyError, TypeError, zipfile.BadZipFile):
        pass  # none kept, or damaged (an empty file too): drawn again
    examples = learn()
    x, y, t = examples.arrays()
    _store(path, lambda out: np.savez(out, x=x, y=y, tables=t))
    return examples


def _store(path: Path, write: Callable[[Any], None]) -> None:
    """Write a cache file beside its final name, then rename it there (never half a file)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.stem}-", dir=path.parent)
    except OSError:
        return
    try:
        with os.fdopen(fd, "wb") as out:
            write(out)
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, path)
    except OSError:
        Path(tmp).unlink(missing_ok=True)
