"""Tables to learn a box from: the pack's own pictures laid out and photographed at random.

Each table is a random mid-game scene (vision.synthetic.scene) drawn with the pack's tiles, board
and ship, photographed by a random camera the table kit allows (any roll, up to 25° tilt, frames
of half to whole size, down to 1.5 px/mm) under light and sensor effects drawn far wider than
a real table needs (domain randomisation: a box under a lamp nobody here has seen should look
like one of them): uneven and warm light, exposure, glare, shadows, blur, noise, a
camera's own sharpening, JPEG; half of them busy with hands, cups, shells and player ships,
tiles off their place, on wood or cloth, with or without the storage cards. Every cell is
read by the matcher (the judge turned off) and paired with what truly lies there.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import replace
from typing import Any

import numpy as np

from companion.reading import CellRead
from vision.config import VisionConfig
from vision.reader.recognise import CellMatch
from vision.synthetic.render import Effects, Rendered, random_camera, render_table
from vision.synthetic.render_config import FRAME_PX
from vision.synthetic.scene import (
    STORAGE_ROW,
    TABLE_TOPS,
    Difficulty,
    TableScene,
    keyed_cells,
    random_scene,
)

__all__ = ["random_effects", "random_table", "rendered_tables"]


def random_effects(rng: np.random.Generator) -> Effects:
    """Light and sensor effects drawn from well beyond a good camera to well beyond a bad lamp."""
    return Effects(
        light=float(rng.uniform(0.0, 0.7)),
        warmth=float(rng.uniform(0.0, 0.8)),
        exposure=float(rng.uniform(0.75, 1.15)),
        glare_spots=int(rng.integers(0, 3)),
        glare_strength=float(rng.uniform(0.3, 1.0)),
        shadows=int(rng.integers(0, 3)),
        shadow_strength=float(rng.uniform(0.1, 0.5)),
        # Log-uniform: as many sharp cameras as soft ones (a blur is a scale).
        blur_px=float(np.exp(rng.uniform(np.log(0.1), np.log(2.5)))),
        noise=float(rng.uniform(1.0, 9.0)),
        sharpen=float(rng.uniform(0.3, 1.5)) if rng.random() < 0.5 else 0.0,
        jpeg_quality=int(rng.integers(55, 97)),
    )


def random_card(effects: Effects, rng: np.random.Generator) -> Effects:
    """`effects` with the tiles as printed card: in seven frames of ten 0.5-2.5 mm thick (flat
    prints in the rest), casting soft shadows, each print's colours up to 8 % off, corners
    worn."""
    return replace(
        effects,
        tile_height_mm=float(rng.uniform(0.5, 2.5)) if rng.random() < 0.7 else 0.0,
        tile_shadow=float(rng.uniform(0.0, 0.5)),
        print_jitter=float(rng.uniform(0.0, 0.08)),
        tile_wear=float(rng.uniform(0.0, 0.5)),
    )


def random_table(
    pack: Any, rng: np.random.Generator, seats: tuple[int, int] = (3, 6), card: bool = False
) -> tuple[TableScene, Rendered]:
    """A random table of `pack` (easy or hard, `seats` from the first number up to before the
    second, wood or cloth, storage cards or none) photographed by a random camera the kit
    allows under `random_effects` (and `random_card` tiles when `card`)."""
    difficulty: Difficulty = "hard" if rng.random() < 0.5 else "easy"
    count = int(rng.integers(*seats))
    scene = random_scene(pack.catalogue, rng, count, "front", difficulty)
    scene = replace(
        scene, table_top=str(rng.choice(TABLE_TOPS)), storage_cards=bool(rng.random() < 0.7)
    )
    # Smaller frames push the tables towards the kit's least 1.5 px/mm.
    shrink = float(rng.uniform(0.55, 1.0))
    size = (round(FRAME_PX[0] * shrink), round(FRAME_PX[1] * shrink))
    spec = random_camera(rng, scene, pack, size=size)
    effects = random_effects(rng)
    if card:
        effects = random_card(effects, rng)
    return scene, render_table(scene, pack, spec, effects, rng)


def rendered_tables(
    pack: Any,
    config: VisionConfig,
    count: int,
    seed: int,
    progress: Callable[[int, int], None] | None = None,
) -> Iterator[tuple[list[CellMatch], list[CellRead]]]:
    """`count` random tables drawn with `pack`, each as its cells' matches and their truths,
    in table order. Table i is drawn from its own random numbers (seed, i), so the tables
    are the same however many processes draw them: two worker processes share them out
    where there are two cores (each draws and reads whole tables), else this one does."""
    workers = min(2, os.cpu_count() or 1)
    if progress:
        progress(0, count)
    if workers < 2 or count < 2:
        for index in range(count):
            yield table_cells(pack, config, seed, index)
            if progress:
                progress(index + 1, count)
        return
    with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn")) as pool:
        jobs = [
            pool.submit(_table_cells_in_worker, str(pack.root), config, seed, index)
            for index in range(count)
        ]
        for index, job in enumerate(jobs):
            yield job.result()
            if progress:
                progress(index + 1, count)


_PACKS: dict[str, Any] = {}


def _table_cells_in_worker(
    root: str, config: VisionConfig, seed: int, index: int
) -> tuple[list[CellMatch], list[CellRead]]:
    from vision.box.pack import load_pack

    pack = _PACKS.get(root)
    if pack is None:
        pack = _PACKS[root] = load_pack(root)
    return table_cells(pack, config, seed, index)


def table_cells(
    pack: Any, config: VisionConfig, seed: int, index: int
) -> tuple[list[CellMatch], list[CellRead]]:
    """Table `index` of the learning set: drawn, photographed, read by the matcher alone (in
    this process), each cell's match beside its truth (an empty list when the frame shows no
    marker)."""
    from vision.reader.read import TableNotFound, read_table_view

    plain = replace(
        config,
        judge=replace(config.judge, enabled=False),
        read=replace(config.read, cell_workers=0),
    )
    rng = np.random.default_rng([seed, 20261126, index])
    scene, rendered = random_table(pack, rng, seats=(3, 6))
    try:
        _read, view = read_table_view(rendered.image, pack, config=plain)
    except TableNotFound:
        return [], []
    matches: list[CellMatch] = []
    truths: list[CellRead] = []
    for key, truth in keyed_cells(rendered.truth):
        match = view.matches.get(key)
        if truth is None or match is None:
            continue
        if key[1] == STORAGE_ROW and not scene.storage_cards:
            continue  # the bare table's slot is weighed by the table round it, not here
        matches.append(match)
        truths.append(truth)
    return matches, truths
