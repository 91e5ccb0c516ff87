"""The cell network's learning cells: random art packs laid out and photographed by the renderer.

Each pack (`vision.synthetic.artpacks`, style "random" with its own seed: other colours,
other art, another board) is laid out on random tables (`vision.synthetic.scene`) and
photographed by a random camera under random light (`vision.box.learning.random_effects`);
the reader's own steps place the areas and cut the crops (`locate_table`, `cell_places`,
`cut_cells`), so the network learns the crops it will be handed, errors of placement
included. A cell's label is the renderer's truth: the tile and its rotation, empty, or
covered (hidden enough that the reader should not answer).

Nothing here reads ../shared/vision-devset: the packs, tables and cameras are the project's.
"""

from __future__ import annotations

import multiprocessing
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

import cv2
import numpy as np
from numpy.typing import NDArray

from companion.catalogue import Catalogue, default_catalogue
from vision.box.pack import Pack
from vision.cellnet.geometry import NET_PX, net_crop, net_picture
from vision.config import VisionConfig

if TYPE_CHECKING:
    from vision.synthetic.artpacks import Look

__all__ = [
    "COVERED",
    "EMPTY",
    "PackCells",
    "candidates",
    "draw_box_cells",
    "draw_cells",
    "draw_pack_cells",
    "draw_tables",
    "learning_seeds",
    "look_alikes",
    "pack_look",
]

#: Labels that are not a tile.
EMPTY = -1
COVERED = -2
ROTATIONS = (0, 90, 180, 270)
#: Packs of these seeds are drawn in `varied_look` (symbols smaller, and some barely standing
#: out from their ground), of LINE_SEEDS in `line_look` (symbols mostly as thin line
#: drawings), of MIXED_SEEDS in the three looks in turn (`random_look`, `varied_look`,
#: `line_look` by the seed's remainder by 3), of FINISHED_SEEDS in `finished_look` (the three
#: looks in turn, printed painted, halftone, posterized, soft or woven), of SHAPED_SEEDS and
#: HELD_OUT_SHAPES in `shaped_look` (the three looks in turn, their palms, huts and shells
#: in shapes of their own), of HELD_OUT_LOOKS in `varied_look`, `line_look` and
#: `finished_look` in turn, three seeds at a time (so that the finished ones, whose look
#: beneath follows the seed's remainder by 3, are of all three), all others in
#: `random_look` (the held-out packs of HELD_OUT among them). Benchmarks draw random pack
#: 1000 + their seed (app.bench.rendered): a benchmark of the network takes a seed of
#: 500-999, whose packs (1500-1999) the learning skips (`learning_seeds`).
VARIED_SEEDS = range(600, 900)
LINE_SEEDS = range(900, 1200)
MIXED_SEEDS = range(1200, 1500)
FINISHED_SEEDS = range(2000, 2600)
SHAPED_SEEDS = range(2600, 2900)
#: Held-out packs, never learnt from, by which a network is chosen: HELD_OUT in `random_look`,
#: HELD_OUT_LOOKS in the other looks, HELD_OUT_SHAPES in `shaped_look` (`pack_look`).
HELD_OUT = range(9000, 9016)
HELD_OUT_LOOKS = range(9100, 9148)
HELD_OUT_SHAPES = range(9200, 9216)


def pack_look(seed: int) -> Look:
    """The look the art pack of `seed` is drawn in (see VARIED_SEEDS)."""
    from vision.synthetic.artpacks import (
        finished_look,
        line_look,
        random_look,
        shaped_look,
        varied_look,
    )

    if seed in FINISHED_SEEDS:
        return finished_look(seed)
    if seed in SHAPED_SEEDS or seed in HELD_OUT_SHAPES:
        return shaped_look(seed)
    if seed in MIXED_SEEDS:
        return (random_look, varied_look, line_look)[seed % 3](seed)
    if seed in HELD_OUT_LOOKS:
        return (varied_look, line_look, finished_look)[(seed // 3) % 3](seed)
    if seed in VARIED_SEEDS:
        return varied_look(seed)
    if seed in LINE_SEEDS:
        return line_look(seed)
    return random_look(seed)


def learning_seeds(packs: int) -> list[int]:
    """The seeds of the first `packs` packs learnt from: 0-1499, then FINISHED_SEEDS, then
    SHAPED_SEEDS."""
    return [*range(MIXED_SEEDS.stop), *FINISHED_SEEDS, *SHAPED_SEEDS][:packs]


@dataclass(frozen=True)
class PackCells:
    """One pack's learning cells.

    crops: (N, px, px, 3) uint8 (the network's side, NET_PX when drawn for learning); kinds:
    0 display, 1 board, 2 storage; boards: the empty board's look of each board cell (zeros
    elsewhere); tiles: index into `tile_ids` or EMPTY / COVERED; rotations: the tile's
    rotation (of the tile beneath, for a covered cell); pictures: (T, 2 px, 2 px, 3), each
    tile's picture upright in the crop geometry, as the pack has it (raw: not yet spoiled);
    same: (4T, 4T) bool, candidates (tile, rotation) that mean the same; tables: the table
    each cell comes from; beneath: what lies under each cell, a covered one's too (a tile
    index or EMPTY; None when not drawn): a covered cell named with what lies beneath it is
    named right."""

    name: str
    tile_ids: tuple[str, ...]
    crops: NDArray[np.uint8]
    kinds: NDArray[np.int8]
    boards: NDArray[np.uint8]
    tiles: NDArray[np.int16]
    rotations: NDArray[np.int16]
    pictures: NDArray[np.uint8]
    raw: tuple[NDArray[np.uint8], ...]
    same: NDArray[np.bool_]
    tables: NDArray[np.int16]
    tile_mm: float
    beneath: NDArray[np.int16] | None = None

    def save(self, path: Path) -> None:
        raw: dict[str, NDArray[np.generic]] = {
            f"raw{i}": picture for i, picture in enumerate(self.raw)
        }
        if self.beneath is not None:
            raw["beneath"] = self.beneath
        np.savez_compressed(
            path,
            name=np.array(self.name),
            tile_ids=np.array(self.tile_ids),
            crops=self.crops,
            kinds=self.kinds,
            boards=self.boards,
            tiles=self.tiles,
            rotations=self.rotations,
            pictures=self.pictures,
            same=self.same,
            tables=self.tables,
            tile_mm=np.array(self.tile_mm),
            **raw,  # type: ignore[arg-type]
        )

    def net_inputs(
        self,
    ) -> tuple[list[NDArray[np.uint8]], list[int], list[NDArray[np.uint8] | None]]:
        """The crops, kinds and board looks (a board cell's, else None) as
        vision.cellnet.model.CellNet takes them."""
        kinds = [int(k) for k in self.kinds]
        boards = [self.boards[i] if kinds[i] == 1 else None for i in range(len(kinds))]
        return list(self.crops), kinds, boards

    @classmethod
    def load(cls, path: Path) -> PackCells:
        with np.load(path) as data:
            count = len(data["tile_ids"])
            return cls(
                name=str(data["name"]),
                tile_ids=tuple(str(t) for t in data["tile_ids"]),
                crops=data["crops"],
                kinds=data["kinds"],
                boards=data["boards"],
                tiles=data["tiles"],
                rotations=data["rotations"],
                pictures=data["pictures"],
                raw=tuple(data[f"raw{i}"] for i in range(count)),
                same=data["same"],
                tables=data["tables"],
                tile_mm=float(data["tile_mm"]),
                beneath=data["beneath"] if "beneath" in data.files else None,
            )


def candidates(catalogue: Catalogue, tile_ids: Sequence[str]) -> NDArray[np.bool_]:
    """(4T, 4T): candidate i = tile i // 4 at ROTATIONS[i % 4]; True where two mean the same."""
    meanings = [
        catalogue.meaning(tile_id).rotated(rotation)
        for tile_id in tile_ids
        for rotation in ROTATIONS
    ]
    n = len(meanings)
    same = np.zeros((n, n), bool)
    for i in range(n):
        for j in range(n):
            same[i, j] = meanings[i] == meanings[j]
    return same


def _random_catalogue(rng: np.random.Generator) -> Catalogue:
    """The default catalogue at a tile side the kit allows, most often the box's own."""
    catalogue = default_catalogue()
    tile_mm = float(rng.choice([catalogue.tile_mm, rng.uniform(38.0, 52.0)]))
    return replace(catalogue, tile_mm=round(tile_mm, 1))


def draw_pack_cells(seed: int, tables: int, config: VisionConfig | None = None) -> PackCells:
    """A random art pack (`seed`) and the cells of `tables` random tables drawn with it."""
    from vision.box.pack import load_pack
    from vision.synthetic.artpacks import write_art_pack

    rng = np.random.default_rng([seed, 20261207])
    catalogue = _random_catalogue(rng)
    px = int(rng.integers(160, 320))
    look = pack_look(seed)
    with tempfile.TemporaryDirectory() as tmp:
        root = write_art_pack(
            Path(tmp) / "pack", "random", catalogue=catalogue, seed=seed, px=px, look=look
        )
        pack = load_pack(root)
    return replace(draw_box_cells(pack, tables, rng, config), name=f"random-{seed}")


def draw_box_cells(
    pack: Pack,
    tables: int,
    rng: np.random.Generator,
    config: VisionConfig | None = None,
    px: int = NET_PX,
) -> PackCells:
    """The cells of `tables` random tables drawn with `pack`'s pictures as printed card tiles
    (vision.box.learning.random_card), photographed by random cameras under random light,
    cut by the reader's own steps, as `px` squares."""
    from vision.box.learning import random_table
    from vision.reader.read import TableNotFound, cell_places, cut_cells, locate_table
    from vision.synthetic.scene import keyed_cells

    config = config or VisionConfig()
    tile_ids = tuple(t.id for t in pack.catalogue)
    index = {t: i for i, t in enumerate(tile_ids)}
    crops: list[NDArray[np.uint8]] = []
    kinds: list[int] = []
    boards: list[NDArray[np.uint8]] = []
    labels: list[int] = []
    turns: list[int] = []
    table_of: list[int] = []
    beneath: list[int] = []
    blank = np.zeros((px, px, 3), np.uint8)
    layout = pack.catalogue.board("front")
    for table in range(tables):
        scene, rendered = random_table(pack, rng, seats=(2, 6), card=True)
        try:
            view = locate_table(
                rendered.image, pack.tile_mm, layout, config, boards=pack.boards.get("front")
            )
        except TableNotFound:
            continue
        places, _hidden = cell_places(rendered.image.shape, view, pack, "front", config)
        cut = cut_cells(rendered.image, places, config)
        truth = dict(keyed_cells(rendered.truth))
        for place, crop in zip(places, cut, strict=True):
            slot = place.slot
            if slot not in truth:
                continue
            cell = truth[slot]
            storage = slot[1] < 0
            if storage and not scene.storage_cards:
                continue  # the bare table's slot is weighed by the table round it
            crops.append(net_crop(crop, place.crop_mm, pack.tile_mm, px))
            kinds.append(0 if slot[0] == "display" else 2 if storage else 1)
            look = place.ref
            boards.append(
                blank if look is None else net_crop(look, place.crop_mm, pack.tile_mm, px)
            )
            under = EMPTY if cell is None or cell.tile is None else index[cell.tile]
            beneath.append(under)
            labels.append(COVERED if slot in rendered.covered else under)
            turns.append(0 if cell is None or under == EMPTY else cell.rotation % 360)
            table_of.append(table)
    raw = tuple(np.asarray(pack.tiles[t], np.uint8) for t in tile_ids)
    pictures = np.stack([net_picture(p, pack.tile_mm, 2 * px) for p in raw])
    empty = np.zeros((0, px, px, 3), np.uint8)
    return PackCells(
        name=pack.name,
        tile_ids=tile_ids,
        crops=np.stack(crops) if crops else empty,
        kinds=np.asarray(kinds, np.int8),
        boards=np.stack(boards) if boards else empty,
        tiles=np.asarray(labels, np.int16),
        rotations=np.asarray(turns, np.int16),
        pictures=pictures,
        raw=raw,
        same=candidates(pack.catalogue, tile_ids),
        tables=np.asarray(table_of, np.int16),
        tile_mm=pack.tile_mm,
        beneath=np.asarray(beneath, np.int16),
    )


def draw_tables(
    pack: Pack,
    tables: int,
    rng: np.random.Generator,
    px: int,
    progress: Callable[[int, int], None] | None = None,
) -> list[PackCells]:
    """The cells of `tables` random tables of `pack`, one PackCells each (empty for a table
    whose kit was not found), with `progress` (tables drawn, of all)."""
    out: list[PackCells] = []
    for i in range(tables):
        if progress:
            progress(i, tables)
        out.append(draw_box_cells(pack, 1, rng, px=px))
    if progress:
        progress(tables, tables)
    return out


def look_alikes(
    pictures: Sequence[NDArray[np.uint8]], same: NDArray[np.bool_], count: int
) -> NDArray[np.intp]:
    """(T, count): for each tile picture, the `count` pictures of other meanings (by `same`,
    (4T, 4T)) that look most alike it in any rotation: small grey squares, each with its own
    brightness and contrast taken out, nearest first."""
    small = []
    for picture in pictures:
        grey = cv2.cvtColor(np.asarray(picture, np.uint8), cv2.COLOR_BGR2GRAY)
        square = cv2.resize(grey, (24, 24), interpolation=cv2.INTER_AREA).astype(np.float32)
        small.append((square - square.mean()) / (square.std() + 1.0))
    upright = np.stack([s.ravel() for s in small])
    turns = np.stack([np.stack([np.rot90(s, k).ravel() for s in small]) for k in range(4)])
    far = np.min(((upright[None, :, None, :] - turns[:, None, :, :]) ** 2).sum(-1), axis=0)
    t = len(small)
    far[same.reshape(t, 4, t, 4).any(axis=(1, 3))] = np.inf
    return np.argsort(far, axis=1)[:, :count]


def _draw_into(job: tuple[int, int, str]) -> str:
    seed, tables, out = job
    path = Path(out) / f"pack-{seed:05d}.npz"
    if not path.exists():
        cells = draw_pack_cells(seed, tables)
        part = path.with_suffix(".part.npz")
        cells.save(part)
        part.rename(path)
    return str(path)


def draw_cells(
    out: Path,
    seeds: Sequence[int],
    tables: int,
    workers: int = 2,
    progress: Callable[[int, int], None] | None = None,
) -> list[Path]:
    """The cells of every pack seed in `seeds`, one file each in `out` (kept: a file already
    there is not drawn again), drawn in `workers` processes."""
    out.mkdir(parents=True, exist_ok=True)
    jobs = [(seed, tables, str(out)) for seed in seeds]
    done: list[Path] = []
    with multiprocessing.get_context("spawn").Pool(workers) as pool:
        for path in pool.imap(_draw_into, jobs):
            done.append(Path(path))
            if progress:
                progress(len(done), len(jobs))
    return done
