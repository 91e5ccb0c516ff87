"""Learning the cell network (PyTorch; `./dev train`, never at run time).

One network embeds a cell's crop and a pack's pictures alike (`Embed`); a cell's answer
compares its crop's feature map with each candidate's (every tile picture in its four
rotations), with the empty board's look at that cell, and with what a crop alone tells of an
empty slot or a covering hand (`Head`). A new box needs no new learning: its pictures are
embedded once. Learning draws each step from one pack: its cells against its own pictures,
spoiled as a scanner or as teaching through the table camera would give them.

The embedding is exported to ONNX (read by OpenCV's dnn module on the Pi); the head's few
weights go beside it as JSON (vision/cellnet/model.py reads both).
"""

from __future__ import annotations

import argparse
import json
import math
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import torch
from torch import Tensor, nn

from companion.progress import terminal_progress
from vision.box.cache import cache_dir
from vision.cellnet.data import (
    COVERED,
    EMPTY,
    FINISHED_SEEDS,
    HELD_OUT,
    HELD_OUT_LOOKS,
    HELD_OUT_SHAPES,
    MIXED_SEEDS,
    SHAPED_SEEDS,
    PackCells,
    draw_cells,
    learning_seeds,
    look_alikes,
)
from vision.cellnet.geometry import FEATURE_CELLS, NET_PX, REF_WINDOW
from vision.cellnet.spoil import scanned_picture, spoil_crop, taught_picture

FEATURES = 32
DATA = Path(__file__).resolve().parents[1] / "data"
#: The held-out packs a network is measured on, each group apart: the name of its figures
#: (`evaluate`), the option setting how many of its packs are drawn, its seeds, its look.
HELD_OUT_GROUPS = (
    ("random", "--val-packs", HELD_OUT, "random_look"),
    ("looks", "--val-looks", HELD_OUT_LOOKS, "the other looks"),
    ("shapes", "--val-shapes", HELD_OUT_SHAPES, "shaped_look"),
)
#: Tiles whose pictures one learning step compares its cells with (a pack has some 40).
REF_TILES = 32
#: Each truth's tiles most alike in look (`look_alikes`) join a step's pictures: the hard
#: negatives (a palm more or less) are compared in every step.
LOOK_ALIKES = 2
#: The channels of the five 3 x 3 convolutions (`Embed`). Multiples of 8: OpenCV's dnn runs
#: other widths markedly slower on the same work.
WIDTHS = (16, 24, 32, 48, 64)
#: Where the five convolutions and their batch norms sit in `Embed.body`, and its 1 x 1
#: projection.
CONVS = (0, 3, 7, 10, 14)
PROJECTION = 17


class Embed(nn.Module):
    """(N, 3, NET_PX, NET_PX) BGR 0-255 -> (N, FEATURES, NET_PX / 8, NET_PX / 8). Brightness
    is divided out first."""

    def __init__(self, widths: tuple[int, ...] = WIDTHS) -> None:
        super().__init__()
        if len(widths) != len(CONVS) or min(widths) < 1:
            raise ValueError(f"an embedding takes {len(CONVS)} widths of at least 1, not {widths}")
        self.widths = tuple(widths)

        def block(a: int, b: int, stride: int = 1) -> list[nn.Module]:
            return [nn.Conv2d(a, b, 3, stride, 1, bias=False), nn.BatchNorm2d(b), nn.ReLU()]

        w = self.widths
        self.body = nn.Sequential(
            *block(3, w[0], 2),
            *block(w[0], w[1]),
            nn.MaxPool2d(2),
            *block(w[1], w[2]),
            *block(w[2], w[3]),
            nn.MaxPool2d(2),
            *block(w[3], w[4]),
            nn.Conv2d(w[4], FEATURES, 1),
        )

    def forward(self, x: Tensor) -> Tensor:
        x = x / 255.0
        level = x.mean(dim=(1, 2, 3), keepdim=True)
        return self.body(x / (level + 0.05) - 1.0)  # type: ignore[no-any-return]


def slimmed(embed: Embed, widths: tuple[int, ...]) -> Embed:
    """A narrower `Embed` cut from `embed`: each convolution keeps the channels whose batch
    norm scales them most (network slimming, Liu et al. 2017), and the next layer reads only
    those; learning goes on from there."""
    out = Embed(widths)
    kept_in = torch.arange(3)
    for at, width in zip(CONVS, widths, strict=True):
        conv, norm = embed.body[at], embed.body[at + 1]
        if width > conv.out_channels:
            raise ValueError(f"cannot widen a convolution of {conv.out_channels} to {width}")
        kept = norm.weight.detach().abs().argsort(descending=True)[:width].sort().values
        new_conv, new_norm = out.body[at], out.body[at + 1]
        new_conv.weight.data = conv.weight.data[kept][:, kept_in].clone()
        for name in ("weight", "bias", "running_mean", "running_var"):
            getattr(new_norm, name).data = getattr(norm, name).data[kept].clone()
        kept_in = kept
    projection = embed.body[PROJECTION]
    out.body[PROJECTION].weight.data = projection.weight.data[:, kept_in].clone()
    out.body[PROJECTION].bias.data = projection.bias.data.clone()
    return out


def distillation(student: Tensor, teacher: Tensor) -> Tensor:
    """1 less the mean cosine of each place's features between two embeddings' maps."""
    return 1.0 - (normalised(student) * normalised(teacher)).sum(dim=1).mean()


def normalised(f: Tensor) -> Tensor:
    return f / (f.norm(dim=1, keepdim=True) + 1e-6)


#: How sharply the comparison weighs a crop's worst-matching places (a missing palm is one
#: place of the tile's 36: the mean alone would hide it).
SHARPNESS = 10.0


def agreement(cos: Tensor, alpha: Tensor) -> Tensor:
    """A comparison's score from its cosines over the window's places (last axis): their
    mean less `alpha` times a soft maximum of their misfits."""
    misfit = 1.0 - cos
    worst = torch.logsumexp(SHARPNESS * misfit, dim=-1) - math.log(cos.shape[-1])
    return cos.mean(dim=-1) - alpha * worst / SHARPNESS


def shifted_scores(crops: Tensor, refs: Tensor, alpha: Tensor) -> Tensor:
    """(N, K): best over 3 x 3 shifts of the `agreement` between a crop's map and the middle
    (REF_WINDOW square) of each reference's map. Both (., D, FEATURE_CELLS, FEATURE_CELLS),
    normalised."""
    w = REF_WINDOW
    window = refs[:, :, 1 : 1 + w, 1 : 1 + w].flatten(2)  # (K, D, L)
    best: Tensor | None = None
    for dy in range(3):
        for dx in range(3):
            part = crops[:, :, dy : dy + w, dx : dx + w].flatten(2)  # (N, D, L)
            cos = torch.einsum("ndl,kdl->nkl", part, window)
            s = agreement(cos, alpha)
            best = s if best is None else torch.maximum(best, s)
    assert best is not None
    return best


def paired_scores(crops: Tensor, refs: Tensor, alpha: Tensor) -> Tensor:
    """(N,): `shifted_scores` of each crop against its own reference."""
    w = REF_WINDOW
    window = refs[:, :, 1 : 1 + w, 1 : 1 + w].flatten(2)
    best: Tensor | None = None
    for dy in range(3):
        for dx in range(3):
            part = crops[:, :, dy : dy + w, dx : dx + w].flatten(2)
            s = agreement((part * window).sum(dim=1), alpha)
            best = s if best is None else torch.maximum(best, s)
    assert best is not None
    return best


class Head(nn.Module):
    """Logits over [candidates..., empty board, empty, covered] for each crop."""

    def __init__(self) -> None:
        super().__init__()
        self.scale = nn.Parameter(torch.tensor(12.0))
        self.board_bias = nn.Parameter(torch.tensor(0.0))
        self.misfit = nn.Parameter(torch.tensor(0.5))  # softplus: alpha of `agreement`
        # empty and covered from the crop's pooled features, its best candidate and board
        # scores, and its kind (display, board, storage).
        self.aux = nn.Linear(FEATURES + 2 + 3, 2)

    def forward(
        self, crop_maps: Tensor, ref_maps: Tensor, board_maps: Tensor, kinds: Tensor
    ) -> Tensor:
        x = normalised(crop_maps)
        alpha = nn.functional.softplus(self.misfit)
        scores = shifted_scores(x, normalised(ref_maps), alpha)
        board = paired_scores(x, normalised(board_maps), alpha)
        is_board = kinds == 1
        pooled = crop_maps.mean(dim=(2, 3))
        kind = nn.functional.one_hot(kinds.long(), 3).float()
        aux = self.aux(
            torch.cat([pooled, scores.max(dim=1, keepdim=True).values, board[:, None], kind], 1)
        )
        board_logit = torch.where(
            is_board, self.scale * board + self.board_bias, torch.full_like(board, -1e4)
        )
        return torch.cat([self.scale * scores, board_logit[:, None], aux], 1)

    def to_json(self) -> dict[str, Any]:
        return {
            "scale": float(self.scale.detach()),
            "board_bias": float(self.board_bias.detach()),
            "misfit": float(nn.functional.softplus(self.misfit.detach())),
            "sharpness": SHARPNESS,
            "aux_weight": self.aux.weight.detach().tolist(),
            "aux_bias": self.aux.bias.detach().tolist(),
        }


@dataclass
class Batch:
    crops: Tensor
    kinds: Tensor
    boards: Tensor
    refs: Tensor
    positives: Tensor  # (N, K + 3) bool


def positives(cells: PackCells, idx: np.ndarray, tiles: np.ndarray | None = None) -> np.ndarray:
    """Which of [candidates..., empty board, empty, covered] each cell's truth allows (the
    candidates of `tiles` only, if given)."""
    k = cells.same.shape[0]
    keep = np.arange(k) if tiles is None else (tiles[:, None] * 4 + np.arange(4)).ravel()
    out = np.zeros((len(idx), len(keep) + 3), bool)
    k = len(keep)
    for row, i in enumerate(idx):
        label = int(cells.tiles[i])
        if label == COVERED:
            out[row, k + 2] = True
        elif label == EMPTY:
            out[row, k + 1] = True
            out[row, k] = cells.kinds[i] == 1
        else:
            out[row, :k] = cells.same[label * 4 + (int(cells.rotations[i]) // 90) % 4][keep]
    return out


def recoloured(images: np.ndarray, mix: np.ndarray | None) -> np.ndarray:
    """Images (..., 3) uint8 with their colours mixed by `mix` (3 x 3), as another box's art
    might be coloured; None leaves them as they are."""
    if mix is None:
        return images
    out = images.astype(np.float32) @ mix.T
    return np.asarray(np.clip(out + 0.5, 0, 255), np.uint8)


def random_mix(rng: np.random.Generator) -> np.ndarray | None:
    """Half the time, a random colour mixing: the channels shuffled and blended."""
    if rng.random() < 0.5:
        return None
    mix = np.eye(3)[rng.permutation(3)] + rng.normal(0.0, 0.2, (3, 3))
    return np.asarray(mix / np.abs(mix).sum(axis=1, keepdims=True).clip(0.5, None), np.float32)


def references(
    cells: PackCells,
    rng: np.random.Generator,
    taught: bool,
    tiles: np.ndarray | None = None,
    mix: np.ndarray | None = None,
) -> np.ndarray:
    """(4T, NET_PX, NET_PX, 3): the pictures of `tiles` (all the pack's if None) in their four
    rotations, as scanned or taught."""
    light = np.exp(rng.normal(0.0, 0.15, 3)).astype(np.float32) * float(np.exp(rng.normal(0, 0.2)))
    out: list[np.ndarray] = []
    chosen = range(len(cells.raw)) if tiles is None else tiles
    for t in chosen:
        raw = recoloured(cells.raw[int(t)], mix)
        if taught:
            picture = taught_picture(raw, cells.tile_mm, rng, light)
        else:
            picture = scanned_picture(raw, cells.tile_mm, rng)
        out.extend(np.ascontiguousarray(np.rot90(picture, -k)) for k in range(4))
    return np.stack(out)


def to_tensor(images: np.ndarray) -> Tensor:
    return torch.from_numpy(np.ascontiguousarray(images.transpose(0, 3, 1, 2))).float()


_LOOK_ALIKES: dict[str, np.ndarray] = {}


def pack_look_alikes(cells: PackCells) -> np.ndarray:
    """`look_alikes` of a pack's pictures, kept per pack while it is learnt from."""
    kept_ = _LOOK_ALIKES.get(cells.name)
    if kept_ is None or len(kept_) != len(cells.raw):
        if len(_LOOK_ALIKES) > 1000:
            _LOOK_ALIKES.clear()
        kept_ = _LOOK_ALIKES[cells.name] = look_alikes(cells.raw, cells.same, LOOK_ALIKES)
    return kept_


def make_batch(cells: PackCells, rng: np.random.Generator, size: int, spoil: bool) -> Batch:
    idx = rng.choice(len(cells.tiles), size=min(size, len(cells.tiles)), replace=False)
    mix = random_mix(rng)
    crops = recoloured(cells.crops[idx], mix)
    if spoil:
        crops = np.stack([spoil_crop(c, rng) for c in crops])
    # The truths' tiles, those most alike them (the hard negatives) and random others, up to
    # `REF_TILES` tiles.
    truth = np.unique(cells.tiles[idx][cells.tiles[idx] >= 0])
    alike = rng.permutation(np.setdiff1d(pack_look_alikes(cells)[truth].ravel(), truth))
    chosen = np.concatenate([truth, alike[: max(0, REF_TILES - len(truth))]])
    others = rng.permutation(np.setdiff1d(np.arange(len(cells.raw)), chosen))
    tiles = np.sort(np.concatenate([chosen, others[: max(0, REF_TILES - len(chosen))]]))
    refs = references(cells, rng, taught=bool(rng.random() < 0.6), tiles=tiles, mix=mix)
    return Batch(
        crops=to_tensor(crops),
        kinds=torch.from_numpy(cells.kinds[idx].astype(np.int64)),
        boards=to_tensor(recoloured(cells.boards[idx], mix)),
        refs=to_tensor(refs),
        positives=torch.from_numpy(positives(cells, idx, tiles)),
    )


def embedded(
    embed: Embed, crops: Tensor, boards: Tensor, kinds: Tensor, refs: Tensor
) -> tuple[Tensor, Tensor, Tensor]:
    """The maps of crops, board looks and pictures: one pass of the network over the crops,
    the board looks of the board cells (the others' are never weighed) and the pictures."""
    n = len(crops)
    on_board = kinds == 1
    maps = embed(torch.cat([crops, boards[on_board], refs]))
    m = int(on_board.sum())
    board_maps = torch.zeros_like(maps[:n])
    board_maps[on_board] = maps[n : n + m]
    return maps[:n], board_maps, maps[n + m :]


def loss_of(
    embed: Embed, head: Head, batch: Batch, teacher: Embed | None = None, distil: float = 0.0
) -> tuple[Tensor, Tensor]:
    """The step's loss (the negative log of the probability of every answer the truth allows,
    plus `distil` times the `distillation` from `teacher`'s maps of the same squares) and its
    share of cells named right."""
    crop_maps, board_maps, ref_maps = embedded(
        embed, batch.crops, batch.boards, batch.kinds, batch.refs
    )
    logits = head(crop_maps, ref_maps, board_maps, batch.kinds)
    log_p = logits.log_softmax(dim=1)
    pos = torch.logsumexp(log_p.masked_fill(~batch.positives, -1e4), dim=1)
    right = batch.positives.gather(1, logits.argmax(dim=1, keepdim=True)).float().mean()
    loss = -pos.mean()
    if teacher is not None and distil > 0.0:
        with torch.no_grad():
            taught = embedded(teacher, batch.crops, batch.boards, batch.kinds, batch.refs)
        on_board = batch.kinds == 1
        loss = loss + distil * distillation(
            torch.cat([crop_maps, board_maps[on_board], ref_maps]),
            torch.cat([taught[0], taught[1][on_board], taught[2]]),
        )
    return loss, right


def export(embed: Embed, head: Head, out: Path, card: dict[str, Any]) -> None:
    embed.eval()
    dummy = torch.zeros(2, 3, NET_PX, NET_PX)
    onnx_path = out / "cellnet.onnx"
    torch.onnx.export(
        embed,
        (dummy,),
        str(onnx_path),
        input_names=["crops"],
        output_names=["maps"],
        dynamic_axes={"crops": {0: "n"}, "maps": {0: "n"}},
        opset_version=13,
        dynamo=False,
    )
    meta = {
        "px": NET_PX,
        "features": FEATURES,
        "cells": FEATURE_CELLS,
        "window": REF_WINDOW,
        **head.to_json(),
    }
    (out / "cellnet.json").write_text(json.dumps({"head": meta, "card": card}, indent=1) + "\n")


def kept(cells: PackCells) -> PackCells:
    """A pack's cells as learning keeps them in memory: its pictures no larger than teaching
    or scanning ever makes them here (4 px/mm), the unspoilt squares left out."""
    side = round(4.0 * cells.tile_mm) + 8
    raw = tuple(
        picture
        if max(picture.shape[:2]) <= side
        else np.asarray(cv2.resize(picture, (side, side), interpolation=cv2.INTER_AREA), np.uint8)
        for picture in cells.raw
    )
    return replace(cells, raw=raw, pictures=cells.pictures[:0])


def _loaded(path: Path) -> PackCells:
    """A pack's learning cells as `kept`; ValueError when they were drawn at another side."""
    cells = kept(PackCells.load(path))
    if len(cells.crops) and cells.crops.shape[1] != NET_PX:
        raise ValueError(f"{path} holds cells of {cells.crops.shape[1]} px, not {NET_PX}")
    return cells


class ResidentPacks:
    """The learning packs, `size` of them in memory at a time (all of them would not fit: a
    pack's cells at 96 px take some 20 MB): a step draws one of the resident packs, and every
    `swap_every` steps the longest resident gives way to the next pack of a seeded order, so
    every pack is learnt from in turn."""

    def __init__(
        self, files: list[Path], size: int, swap_every: int, rng: np.random.Generator
    ) -> None:
        self.order = [files[int(i)] for i in rng.permutation(len(files))]
        self.size = min(size, len(files))
        self.swap_every = swap_every
        self.resident = [_loaded(p) for p in self.order[: self.size]]
        self.next = self.size % len(self.order)
        self.oldest = 0
        self.cells = 0

    def draw(self, step: int, rng: np.random.Generator) -> PackCells:
        if step and step % self.swap_every == 0 and len(self.order) > self.size:
            self.resident[self.oldest] = _loaded(self.order[self.next])
            self.oldest = (self.oldest + 1) % self.size
            self.next = (self.next + 1) % len(self.order)
        return self.resident[int(rng.integers(self.size))]


def write_check(embed: Embed, head: Head, cells: PackCells, out: Path, tiles: int = 4) -> None:
    """`cellnet-check.npz` beside the network: a few held-out cells, the pictures of `tiles`
    of their pack's tiles in four rotations, and the probabilities this learning's own code
    gives them, which the run-time reader (OpenCV's dnn and numpy) must give too
    (tests/vision/cellnet/test_check.py)."""
    embed.eval()
    rng = np.random.default_rng(1)
    chosen = np.arange(tiles)
    board = np.flatnonzero(cells.kinds == 1)[:6]
    idx = np.concatenate([np.flatnonzero(cells.kinds != 1)[:10], board])
    refs = references(cells, rng, taught=True, tiles=chosen)
    kinds = torch.from_numpy(cells.kinds[idx].astype(np.int64))
    with torch.no_grad():
        crop_maps, board_maps, ref_maps = embedded(
            embed, to_tensor(cells.crops[idx]), to_tensor(cells.boards[idx]), kinds, to_tensor(refs)
        )
        p = head(crop_maps, ref_maps, board_maps, kinds).softmax(dim=1).numpy()
    k = len(refs)
    same = cells.same[: 4 * tiles, : 4 * tiles]
    np.savez_compressed(
        out / "cellnet-check.npz",
        crops=cells.crops[idx],
        kinds=cells.kinds[idx],
        boards=cells.boards[idx],
        refs=refs,
        same=same,
        probabilities=p.astype(np.float32),
        candidates=np.array(k),
    )


def arguments() -> argparse.ArgumentParser:
    """`./dev train`'s options."""
    parser = argparse.ArgumentParser(
        prog="./dev train", description="draw the learning cells and learn the cell network"
    )
    parser.add_argument(
        "--data",
        type=Path,
        default=cache_dir() / f"cellnet-data-{NET_PX}",
        help="where the drawn cells are kept (a pack already drawn there is not drawn again)",
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=DATA,
        help="where the network (cellnet.onnx), its head and card (cellnet.json), its check "
        "(cellnet-check.npz) and its checkpoint (cellnet.pt) are written",
    )
    parser.add_argument(
        "--packs",
        type=int,
        default=MIXED_SEEDS.stop + len(FINISHED_SEEDS) + len(SHAPED_SEEDS),
        help="art packs to learn from (the first N of seeds 0-1499 and "
        f"{FINISHED_SEEDS.start}-{SHAPED_SEEDS.stop - 1})",
    )
    parser.add_argument("--tables", type=int, default=4, help="tables drawn with each pack")
    for group, option, seeds, look in HELD_OUT_GROUPS:
        parser.add_argument(
            option,
            dest=f"held_out_{group}",
            metavar="N",
            type=int,
            default=len(seeds),
            help=f"held-out packs in {look} to measure on (seeds from {seeds.start})",
        )
    parser.add_argument(
        "--evaluate",
        action="store_true",
        help="only measure --init's network on the held-out packs (drawing those missing into "
        "DATA/val; nothing is learnt and no network is written)",
    )
    parser.add_argument("--steps", type=int, default=4000, help="learning steps")
    parser.add_argument("--batch", type=int, default=64, help="cells a step")
    parser.add_argument("--seed", type=int, default=0, help="the learning's random seed")
    parser.add_argument(
        "--lr",
        type=float,
        default=2e-3,
        help="the learning rate at the first step (it falls to 0 on a cosine schedule)",
    )
    parser.add_argument(
        "--resident", type=int, default=200, help="learning packs held in memory at a time"
    )
    parser.add_argument(
        "--swap-every",
        type=int,
        default=4,
        help="steps between one resident pack giving way to the next",
    )
    parser.add_argument(
        "--init",
        type=Path,
        default=None,
        help="start from this checkpoint (a learning's checkpoint.pt or cellnet.pt, such as "
        "vision/data/cellnet.pt) instead of at random",
    )
    parser.add_argument(
        "--widths",
        default=None,
        help="the five convolutions' channels, comma-separated (default: --init's, else "
        f"{','.join(map(str, WIDTHS))}); narrower than --init's, the network is cut from it "
        "(`slimmed`) and learns to give its maps as well as the right answers",
    )
    parser.add_argument(
        "--distil",
        type=float,
        default=1.0,
        help="weight of the distillation from --init's network (only when --widths are "
        "narrower than its)",
    )
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = arguments()
    args = parser.parse_args(argv)
    if min(args.packs, args.resident, args.swap_every, args.steps) < 1:
        parser.error("--packs, --resident, --swap-every and --steps must be at least 1")
    try:
        held_out = held_out_seeds(args)
    except ValueError as exc:
        parser.error(str(exc))
    if args.evaluate and (args.init is None or args.widths is not None):
        parser.error(
            "--evaluate measures the network of --init as it is: give it, without --widths"
        )
    if args.packs > len(learning_seeds(args.packs)):
        parser.error(f"--packs: there are {len(learning_seeds(args.packs))} learning packs")
    if not (math.isfinite(args.lr) and 0 < args.lr <= 1):
        parser.error("--lr must be a number above 0 and at most 1")
    if not math.isfinite(args.distil) or args.distil < 0:
        parser.error("--distil must be a number of at least 0")
    torch.manual_seed(args.seed)  # a network started at random starts from the seed's weights
    try:
        embed, head, teacher = starting_network(args.init, args.widths)
    except (OSError, KeyError, RuntimeError, ValueError) as exc:
        parser.error(f"--init / --widths: {exc}")
    if teacher is not None:
        print(f"cut to widths {embed.widths} from {teacher.widths}", flush=True)
    rng = np.random.default_rng(args.seed)
    torch.set_num_threads(2)
    shown = terminal_progress("drawing held-out cells")
    try:
        vals = {
            group: [
                _loaded(p)
                for p in draw_cells(args.data / "val", seeds, args.tables, progress=shown)
            ]
            for group, seeds in held_out.items()
        }
    except ValueError as exc:
        parser.error(str(exc))
    if shown is not None:
        shown.finish()
    if args.evaluate:
        print(json.dumps(evaluate(embed, head, vals, args.seed)))
        return 0
    shown = terminal_progress("drawing learning cells")
    train_files = draw_cells(
        args.data / "train", learning_seeds(args.packs), args.tables, progress=shown
    )
    if shown is not None:
        shown.finish()
    try:
        packs = ResidentPacks(train_files, args.resident, args.swap_every, rng)
    except ValueError as exc:
        parser.error(str(exc))
    print(f"{len(train_files)} packs, {packs.size} in memory at a time", flush=True)
    params = [*embed.parameters(), *head.parameters()]
    opt = torch.optim.AdamW(params, lr=args.lr, weight_decay=1e-4)
    start = time.time()
    for step in range(args.steps):
        lr = args.lr * 0.5 * (1 + math.cos(math.pi * step / args.steps))
        for group in opt.param_groups:
            group["lr"] = lr
        embed.train()
        cells = packs.draw(step, rng)
        batch = make_batch(cells, rng, args.batch, spoil=True)
        loss, right = loss_of(embed, head, batch, teacher, args.distil)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % 50 == 0:
            print(
                f"step {step} loss {loss.item():.3f} right {right.item():.3f} "
                f"{time.time() - start:.0f}s",
                flush=True,
            )
        if (step + 1) % 500 == 0 and step + 1 < args.steps:
            args.out.mkdir(parents=True, exist_ok=True)
            export(embed, head, args.out, {"steps": step + 1, "partial": True})
            torch.save(checkpoint(embed, head), args.data / "checkpoint-partial.pt")
            print("val", evaluate(embed, head, vals, args.seed), flush=True)
    args.out.mkdir(parents=True, exist_ok=True)
    card = {
        "steps": args.steps,
        "batch": args.batch,
        "seed": args.seed,
        "lr": args.lr,
        "train_packs": len(train_files),
        "resident": packs.size,
        "swap_every": packs.swap_every,
        "widths": list(embed.widths),
        **({"distil": args.distil, "teacher_widths": list(teacher.widths)} if teacher else {}),
        "seconds": round(time.time() - start),
        "validation": evaluate(embed, head, vals, args.seed),
    }
    export(embed, head, args.out, card)
    write_check(embed, head, next(iter(vals.values()))[0], args.out)
    torch.save(checkpoint(embed, head), args.out / "cellnet.pt")
    torch.save(checkpoint(embed, head), args.data / "checkpoint.pt")
    return 0


def held_out_seeds(args: argparse.Namespace) -> dict[str, range]:
    """The seeds of each group of HELD_OUT_GROUPS `args` ask any of (their options' counts);
    ValueError for a count out of range, or none at all."""
    chosen: dict[str, range] = {}
    for group, option, seeds, _look in HELD_OUT_GROUPS:
        count = getattr(args, f"held_out_{group}")
        if not 0 <= count <= len(seeds):
            raise ValueError(f"{option} may be 0-{len(seeds)}")
        if count:
            chosen[group] = seeds[:count]
    if not chosen:
        raise ValueError("at least one held-out pack must be measured on")
    return chosen


def checkpoint(embed: Embed, head: Head) -> dict[str, Any]:
    """What a learning keeps to go on from (`--init`): the embedding's and head's weights."""
    return {"embed": embed.state_dict(), "head": head.state_dict()}


def starting_network(init: Path | None, widths: str | None) -> tuple[Embed, Head, Embed | None]:
    """The embedding and head a learning starts from, and the network it distils from: at
    random, or `init`'s checkpoint, cut to `widths` ("16,16,32,32,64") when they are narrower
    (its own network then the one distilled from). ValueError for widths it cannot take."""
    wanted = None if widths is None else tuple(int(w) for w in widths.split(","))
    if init is None:
        return Embed(wanted or WIDTHS), Head(), None
    state = torch.load(init)
    start = Embed(tuple(state["embed"][f"body.{at}.weight"].shape[0] for at in CONVS))
    start.load_state_dict(state["embed"])
    head = Head()
    head.load_state_dict(state["head"])
    if wanted is None or wanted == start.widths:
        return start, head, None
    return slimmed(start, wanted), head, start.eval()


def evaluate(
    embed: Embed, head: Head, vals: dict[str, list[PackCells]], seed: int
) -> dict[str, float]:
    """Share of held-out cells whose most likely answer is right, per group of packs ("random",
    "looks", "shapes") and kind of pack pictures ("scanned", "taught"): keys such as "looks
    taught"."""
    embed.eval()
    out: dict[str, float] = {}
    with torch.no_grad():
        for group, packs in vals.items():
            for taught in (False, True):
                rng = np.random.default_rng([seed, 7])
                right = total = 0.0
                for cells in packs:
                    refs = to_tensor(references(cells, rng, taught))
                    ref_maps = embed(refs)
                    for lo in range(0, len(cells.tiles), 128):
                        idx = np.arange(lo, min(lo + 128, len(cells.tiles)))
                        crops = to_tensor(cells.crops[idx])
                        boards = to_tensor(cells.boards[idx])
                        maps = embed(torch.cat([crops, boards]))
                        n = len(idx)
                        kinds = torch.from_numpy(cells.kinds[idx].astype(np.int64))
                        logits = head(maps[:n], ref_maps, maps[n:], kinds)
                        pos = torch.from_numpy(positives(cells, idx))
                        right += float(pos.gather(1, logits.argmax(1, keepdim=True)).sum())
                        total += n
                kind = "taught" if taught else "scanned"
                out[f"{group} {kind}"] = round(right / max(total, 1), 4)
    return out


if __name__ == "__main__":
    raise SystemExit(main())
