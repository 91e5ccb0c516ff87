"""The cell network at run time: OpenCV's dnn module runs the embedding, numpy the comparison.

`CellNet` owns the network (vision/data/cellnet.onnx) and its head (cellnet.json, written
beside it by vision.cellnet.train); `BoxPictures` is one pack's pictures embedded once (each
tile in its four rotations); `CellNet.probabilities` gives every crop's probabilities over
[candidates..., empty board, empty, covered], and `answers` turns them into cell reads.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from collections import OrderedDict
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import cache
from itertools import pairwise
from pathlib import Path

import cv2
import numpy as np
from numpy.typing import NDArray

from companion.catalogue import Catalogue
from companion.reading import EMPTY, UNKNOWN, CellRead
from vision.box.pack import Pack
from vision.cellnet.geometry import net_picture, turned

__all__ = [
    "BOARD_CELL",
    "DISPLAY_CELL",
    "STORAGE_CELL",
    "BoxPictures",
    "CellNet",
    "CellParts",
    "Head",
    "cell_net",
]

DATA = Path(__file__).resolve().parents[1] / "data"
DISPLAY_CELL, BOARD_CELL, STORAGE_CELL = 0, 1, 2
ROTATIONS = (0, 90, 180, 270)
#: The comparisons' sharpness at most (exp(sharpness) stays well within float32).
MAX_SHARPNESS = 80.0
#: Empty-board looks whose maps a network keeps (a box has at most some 20 board cells).
LOOKS_KEPT = 256

Image = NDArray[np.uint8]
Floats = NDArray[np.float32]


@dataclass(frozen=True)
class Head:
    """The few weights that turn the comparisons into logits: `scale` of the candidates' and
    the board's scores, `board_bias`, and the linear head (`aux_weight` (2, D + 5),
    `aux_bias` (2,)) giving the empty slot's and the covering hand's logits; `metric` (D, D),
    when given, maps each place's unit feature before crops and pictures are compared (it
    is re-normalised after). The network's own is learnt with it (no metric); a box's own
    is fitted on renders of its pictures (vision.cellnet.adapt)."""

    scale: float
    board_bias: float
    aux_weight: Floats
    aux_bias: Floats
    metric: Floats | None = None

    def to_json(self) -> dict[str, object]:
        return {
            "scale": self.scale,
            "board_bias": self.board_bias,
            "aux_weight": self.aux_weight.tolist(),
            "aux_bias": self.aux_bias.tolist(),
            "metric": None if self.metric is None else self.metric.tolist(),
        }

    @classmethod
    def from_json(cls, data: dict[str, object]) -> Head:
        weight = np.asarray(data["aux_weight"], np.float32)
        bias = np.asarray(data["aux_bias"], np.float32)
        if weight.ndim != 2 or weight.shape[0] != 2 or bias.shape != (2,):
            raise ValueError("not a head's weights")
        given = data.get("metric")
        metric = None if given is None else np.asarray(given, np.float32)
        features = weight.shape[1] - 5  # the linear head's input: the pooled map and 5 more
        if metric is not None and (
            metric.shape != (features, features)
            or not np.isfinite(metric).all()
            or np.abs(metric).max() > 1e3
        ):
            raise ValueError("not a head's weights")
        return cls(float(data["scale"]), float(data["board_bias"]), weight, bias, metric)  # type: ignore[arg-type]


@dataclass(frozen=True)
class CellParts:
    """What the network's comparisons give a batch of crops, before the head: `scores` (N,
    4T) against each candidate, `board` (N,) against the empty board's look (NaN where no
    look was given), `aux_in` (N, D + 5) the linear head's input."""

    scores: Floats
    board: Floats
    aux_in: Floats

    def logits(self, head: Head) -> Floats:
        """(N, 4T + 3) logits over [candidates..., empty board, empty, covered]."""
        board_logit = np.where(
            np.isnan(self.board), -1e4, head.scale * np.nan_to_num(self.board) + head.board_bias
        )
        aux = self.aux_in @ head.aux_weight.T + head.aux_bias
        return np.asarray(
            np.concatenate([head.scale * self.scores, board_logit[:, None], aux], axis=1),
            np.float32,
        )

    def probabilities(self, head: Head) -> Floats:
        logits = self.logits(head)
        logits -= logits.max(axis=1, keepdims=True)
        p = np.exp(logits)
        return np.asarray(p / p.sum(axis=1, keepdims=True), np.float32)


@dataclass(frozen=True)
class BoxPictures:
    """A pack's pictures as the network sees them: candidate i is tile `tile_ids[i // 4]` at
    ROTATIONS[i % 4]; `windows` (4T, D, w * w) their maps' middles, `same` (4T, 4T) the
    candidates that mean the same; `px` the side of the squares they are compared with."""

    tile_ids: tuple[str, ...]
    windows: Floats
    same: NDArray[np.bool_]
    px: int
    _measured: dict[bytes, Floats] = field(
        default_factory=dict, init=False, compare=False, repr=False
    )

    def measured(self, metric: Floats | None) -> Floats:
        """`windows` under a head's `metric` (kept per metric: a box reads with one head)."""
        if metric is None:
            return self.windows
        key = hashlib.blake2b(np.ascontiguousarray(metric).data, digest_size=16).digest()
        kept = self._measured.get(key)
        if kept is None:
            kept = _measure(self.windows, metric)
            if len(self._measured) >= 4:
                self._measured.clear()
            self._measured[key] = kept
        return kept


class CellNet:
    """The network and its head; one per process (`cell_net`). OpenCV's dnn nets are not
    safe to run from two threads at once: a lock keeps them apart."""

    def __init__(self, onnx: Path = DATA / "cellnet.onnx", head: Path = DATA / "cellnet.json"):
        self._net = cv2.dnn.readNetFromONNX(str(onnx))
        text = head.read_text(encoding="utf-8")
        meta = json.loads(text)
        #: Names this network's weights (what a box's calibration was made with).
        self.digest = hashlib.blake2b(onnx.read_bytes() + text.encode(), digest_size=8).hexdigest()
        h = meta["head"]
        self.card = meta.get("card", {})
        #: The side (px) of the squares the network takes (vision.cellnet.geometry).
        self.px = int(h["px"])
        self.features = int(h["features"])
        self.cells = int(h["cells"])
        self.window = int(h["window"])
        self.misfit = float(h["misfit"])
        self.sharpness = float(h["sharpness"])
        if not 0.0 < self.sharpness <= MAX_SHARPNESS:
            raise ValueError(f"a sharpness of {self.sharpness} is outside (0, {MAX_SHARPNESS}]")
        #: The head learnt with the network (a box may have its own: vision.cellnet.adapt).
        self.head = Head.from_json(h)
        self._lock = threading.Lock()
        self._looks: OrderedDict[bytes, Floats] = OrderedDict()
        self._looks_lock = threading.Lock()

    def maps(self, images: Sequence[Image], batch: int = 64) -> Floats:
        """(N, D, c, c) feature maps of `px` squares (BGR uint8)."""
        if not images:
            return np.zeros((0, self.features, self.cells, self.cells), np.float32)
        out = []
        for lo in range(0, len(images), batch):
            part = np.stack(images[lo : lo + batch]).astype(np.float32).transpose(0, 3, 1, 2)
            with self._lock:
                self._net.setInput(np.ascontiguousarray(part))
                out.append(np.array(self._net.forward(), np.float32))
        return np.concatenate(out)

    def look_maps(self, looks: Sequence[Image]) -> Floats:
        """(N, D, c, c) normalised maps of empty-board looks. A box's looks are the same
        squares at every read (cut from its board picture, not from the frame), so their
        maps are kept, by the squares' bytes, for the reads that follow."""
        keys = [
            hashlib.blake2b(np.ascontiguousarray(look).data, digest_size=16).digest()
            for look in looks
        ]
        if not keys:
            return np.zeros((0, self.features, self.cells, self.cells), np.float32)
        # Held through the embedding: the network runs one batch at a time anyway.
        with self._looks_lock:
            missing = {k: look for k, look in zip(keys, looks, strict=True) if k not in self._looks}
            if missing:
                made = _normalised(self.maps(list(missing.values())))
                self._looks.update(zip(missing, made, strict=True))
            for k in keys:
                self._looks.move_to_end(k)
            found = np.stack([self._looks[k] for k in keys])
            while len(self._looks) > LOOKS_KEPT:
                self._looks.popitem(last=False)
        return found

    def pictures(self, tiles: dict[str, Image], catalogue: Catalogue) -> BoxPictures:
        """Every tile picture of a pack embedded in its four rotations."""
        tile_ids = tuple(t.id for t in catalogue if t.id in tiles)
        squares = [
            turned(net_picture(np.asarray(tiles[t], np.uint8), catalogue.tile_mm, self.px), r)
            for t in tile_ids
            for r in ROTATIONS
        ]
        maps = _normalised(self.maps(squares))
        w = self.window
        windows = maps[:, :, 1 : 1 + w, 1 : 1 + w].reshape(len(squares), maps.shape[1], -1)
        meanings = [catalogue.meaning(t).rotated(r) for t in tile_ids for r in ROTATIONS]
        same = np.array([[a == b for b in meanings] for a in meanings], bool)
        return BoxPictures(tile_ids, np.ascontiguousarray(windows), same, self.px)

    def probabilities(
        self,
        crops: Sequence[Image],
        kinds: Sequence[int],
        boards: Sequence[Image | None],
        box: BoxPictures,
        head: Head | None = None,
    ) -> Floats:
        """(N, 4T + 3): each crop's probabilities over [candidates..., empty board, empty,
        covered], by `head` (the network's own if None). `crops` and `boards` (the empty
        board's look of a board cell, else None) are `px` squares in the network's geometry
        (vision.cellnet.geometry.net_crop)."""
        head = head or self.head
        return self.parts(crops, kinds, boards, box, head.metric).probabilities(head)

    def parts(
        self,
        crops: Sequence[Image],
        kinds: Sequence[int],
        boards: Sequence[Image | None],
        box: BoxPictures,
        metric: Floats | None = None,
        maps: Floats | None = None,
    ) -> CellParts:
        """The comparisons of `probabilities`, before the head, under a head's `metric`;
        `maps` are the crops' own (`maps(crops)`) when already made."""
        n = len(crops)
        on_board = [i for i in range(n) if kinds[i] == BOARD_CELL and boards[i] is not None]
        looks = [look for i in on_board if (look := boards[i]) is not None]
        crop_raw = self.maps(crops) if maps is None else maps
        x = _normalised(crop_raw)
        if metric is not None:
            x = _measure(x, metric)
        windows = box.measured(metric)
        scores = _shifted(x, windows, self.window, self.misfit, self.sharpness)
        board = np.full(n, np.nan, np.float32)
        if on_board:
            b = self.look_maps(looks)
            if metric is not None:
                b = _measure(b, metric)
            board[on_board] = _paired(x[on_board], b, self.window, self.misfit, self.sharpness)
        kind = np.eye(3, dtype=np.float32)[np.asarray(kinds, np.intp)]
        # A cell with no board look was learnt with a blank one: every place a misfit of 1.
        blank = _agreement(np.zeros((1, self.window**2), np.float32), self.misfit, self.sharpness)
        aux_in = np.concatenate(
            [
                crop_raw.mean(axis=(2, 3)),
                scores.max(axis=1, keepdims=True),
                np.where(np.isnan(board), blank[0], board)[:, None],
                kind,
            ],
            axis=1,
        )
        return CellParts(scores, board, np.asarray(aux_in, np.float32))

    def answers(
        self, probabilities: Floats, box: BoxPictures, threshold: float
    ) -> list[tuple[CellRead, float]]:
        """Each cell's answer and how sure: the most likely meaning (equal meanings' candidates
        summed; the two empties summed), unknown when covered is likelier or the answer's
        probability is below `threshold`. The probability is returned either way."""
        k = len(box.windows)
        out: list[tuple[CellRead, float]] = []
        for p in probabilities:
            tiles = p[:k]
            meaning = box.same @ tiles  # each candidate's meaning's total
            best = int(np.argmax(meaning))
            empty = float(p[k] + p[k + 1])
            covered = float(p[k + 2])
            if empty >= meaning[best] and empty >= covered:
                read, sure = EMPTY, empty
            elif covered >= meaning[best]:
                read, sure = UNKNOWN, float(meaning[best])
            else:
                sure = float(meaning[best])
                # The candidate of that meaning the network liked best names the rotation.
                pick = int(np.argmax(np.where(box.same[best], tiles, -1.0)))
                read = CellRead(box.tile_ids[pick // 4], ROTATIONS[pick % 4], sure)
            if sure < threshold and not read.unknown:
                read = UNKNOWN
            out.append((read, sure))
        return out


def _normalised(maps: Floats) -> Floats:
    norm = np.sqrt((maps * maps).sum(axis=1, keepdims=True)) + 1e-6
    return np.asarray(maps / norm, np.float32)


def _measure(maps: Floats, metric: Floats) -> Floats:
    """Unit features (N, D, ...) mapped by `metric` (D, D) and normalised again."""
    mapped = np.einsum("ed,nd...->ne...", metric, maps, optimize=True)
    return _normalised(np.asarray(mapped, np.float32))


def _agreement(cos: Floats, alpha: float, sharpness: float, axis: int = -1) -> Floats:
    """vision.cellnet.train.agreement: the cosines' mean (along `axis`) less `alpha` times a
    soft maximum of their misfits. The soft maximum of `sharpness * (1 - cos)` is
    `sharpness + log(mean(exp(-sharpness * cos)))`; cosines lie within [-1, 1], so the
    exponentials stay within float32 with no shift by their maximum while `sharpness` is at
    most MAX_SHARPNESS. `cos` is overwritten."""
    mean = cos.mean(axis=axis)
    cos *= -sharpness
    np.exp(cos, out=cos)
    soft = np.log(cos.mean(axis=axis))
    return np.asarray(mean - alpha * (1.0 + soft / sharpness), np.float32)


def _shifted(crops: Floats, windows: Floats, w: int, alpha: float, sharpness: float) -> Floats:
    """(N, K): best over 3 x 3 shifts of the agreement (`_agreement`) of a crop's map with
    each window (K, D, w * w); the candidates shared out among `_comparers` threads (numpy
    lets go of the interpreter in its products and exponentials). The crops are scaled by
    `-sharpness` before the products, so one pass of the products gives both the cosines'
    mean and their exponentials in place."""
    grid = np.ascontiguousarray(crops.transpose(2, 3, 0, 1)) * np.float32(-sharpness)
    k = len(windows)
    parts = min(_COMPARERS, max(1, k // 32))  # a part of fewer candidates gains little
    if parts == 1:
        return _shifted_part(grid, windows, w, alpha, sharpness)
    bounds = np.linspace(0, k, parts + 1).astype(int)
    done = _comparers().map(
        lambda span: _shifted_part(grid, windows[span[0] : span[1]], w, alpha, sharpness),
        pairwise(bounds),
    )
    return np.concatenate(list(done), axis=1)


def _shifted_part(grid: Floats, windows: Floats, w: int, alpha: float, sharpness: float) -> Floats:
    """`_shifted` of some candidates in one thread, the crops' maps laid out (c, c, N, D)
    and scaled by `-sharpness`."""
    n, d = grid.shape[2:]
    k, places = len(windows), w * w
    by_place = np.ascontiguousarray(windows.transpose(2, 1, 0))  # (L, D, K)
    scaled = np.empty((places, n, k), np.float32)  # -sharpness * cos, then its exponential
    best = np.full((n, k), -np.inf, np.float32)
    for dy in range(3):
        for dx in range(3):
            part = grid[dy : dy + w, dx : dx + w].reshape(places, n, d)
            np.matmul(part, by_place, out=scaled)
            mean = scaled.sum(axis=0) / np.float32(-sharpness * places)
            np.exp(scaled, out=scaled)
            soft = np.log(scaled.sum(axis=0) / np.float32(places))
            np.maximum(best, mean - alpha * (1.0 + soft / sharpness), out=best)
    return best


#: Threads the comparison is shared out among: the cores this process may run on, the Pi's
#: four at most.
_COMPARERS = max(1, min(4, len(os.sched_getaffinity(0))))


@cache
def _comparers() -> ThreadPoolExecutor:
    """The comparison's threads, started at the first comparison that shares its work."""
    return ThreadPoolExecutor(_COMPARERS, thread_name_prefix="cellnet-compare")


def _paired(crops: Floats, boards: Floats, w: int, alpha: float, sharpness: float) -> Floats:
    window = boards[:, :, 1 : 1 + w, 1 : 1 + w].reshape(len(boards), boards.shape[1], -1)
    best: Floats | None = None
    for dy in range(3):
        for dx in range(3):
            part = crops[:, :, dy : dy + w, dx : dx + w].reshape(len(crops), crops.shape[1], -1)
            s = _agreement((part * window).sum(axis=1), alpha, sharpness)
            best = s if best is None else np.maximum(best, s)
    assert best is not None
    return best


_BOXES: dict[int, tuple[object, BoxPictures]] = {}


def box_pictures(net: CellNet, pack: Pack) -> BoxPictures:
    """A pack's pictures embedded by `net`, kept per pack object."""
    kept = _BOXES.get(id(pack))
    if kept is not None and kept[0] is pack:
        return kept[1]
    box = net.pictures(dict(pack.tiles), pack.catalogue)
    if len(_BOXES) > 8:
        _BOXES.clear()
    _BOXES[id(pack)] = (pack, box)
    return box


@cache
def cell_net() -> CellNet:
    """The committed network, loaded once per process."""
    return CellNet()
