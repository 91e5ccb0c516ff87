"""The box's models when the cell network reads (vision.reader.read: box_models, lesson_cells):
no matcher templates, and a table's lessons joining the box's calibration."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import vision.cellnet.calibrate
import vision.reader.read
from companion.reading import CellRead
from vision.box.lessons import CellLesson, Lessons, cell_lesson
from vision.box.pack import Pack
from vision.cellnet.calibrate import lesson_grades
from vision.cellnet.model import box_pictures, cell_net
from vision.config import VisionConfig
from vision.reader.read import (
    TableReader,
    box_models,
    cell_places,
    cut_cells,
    lesson_cells,
    locate_table,
    net_calibration,
    net_reads,
)
from vision.synthetic.render import Effects, random_camera, render_table
from vision.synthetic.scene import random_scene

NET = replace(
    VisionConfig(),
    read=replace(
        VisionConfig().read,
        recogniser="net",
        net_tables=4,
        net_wrong_rate=0.05,
        net_fit_tables=2,
        net_metric_steps=5,  # the metric's learning is tested in tests/vision/cellnet
    ),
)


def _no_templates(*args: object, **kwargs: object) -> None:
    raise AssertionError("the cell network's models need no matcher templates")


def _answered(pack: Pack, seed: int) -> list[tuple[CellLesson, float]]:
    """The cells of a rendered table as the network names them, each labelled with its own
    answer (a lesson agreeing with it), and how sure the answer was."""
    rng = np.random.default_rng(seed)
    scene = random_scene(pack.catalogue, rng, 3, "front", "easy")
    rendered = render_table(scene, pack, random_camera(rng, scene, pack), Effects.easy(), rng)
    view = locate_table(
        rendered.image,
        pack.tile_mm,
        pack.catalogue.board("front"),
        NET,
        boards=pack.boards["front"],
    )
    places, _ = cell_places(rendered.image.shape, view, pack, "front", NET)
    crops = cut_cells(rendered.image, places, NET)
    slots = [p.slot for p in places]
    refs = [p.ref for p in places]
    reads = net_reads(crops, refs, slots, pack, NET, 0.0)
    net = cell_net()
    box = box_pictures(net, pack)
    out = []
    for crop, slot, read in zip(crops, slots, reads, strict=True):
        item = cell_lesson(crop, slot, read, "front", NET.crops.px_per_mm, "teach")
        if item is not None:
            # As a fair sample of the table's cells would be (vision.box.lessons.SAMPLED_SOURCES).
            out.append(replace(item, sampled=True))
    grades = lesson_grades(net, box, lesson_cells(out, pack, box, NET))
    return list(zip(out, grades.sure.tolist(), strict=True))


def _lessons(cells: list[CellLesson]) -> Lessons:
    return Lessons(
        np.zeros((0, 1)), np.zeros(0, np.intp), (), f"test-{len(cells)}-{id(cells)}", tuple(cells)
    )


def test_lessons_are_read_as_the_reader_reads_their_cells(pack_random: Pack) -> None:
    net = cell_net()
    box = box_pictures(net, pack_random)
    answered = _answered(pack_random, 3)
    cells = [item for item, _ in answered]
    assert {"display", "board"} <= {item.kind for item in cells}
    graded = lesson_grades(net, box, lesson_cells(cells, pack_random, box, NET))
    # Each labelled with the network's own answer as a read gives it (the same crops and
    # board looks): none of them is wrong.
    assert len(graded) == len(cells) and graded.named.all() and not graded.wrong.any()
    # A tile the pack has no picture of, or a board side it has no layout of, is left out.
    odd = replace(cells[0], truth=CellRead("no such tile", 0))
    unknown_side = next(replace(c, side="nowhere") for c in cells if c.kind == "board")
    assert len(lesson_cells([odd, unknown_side, cells[0]], pack_random, box, NET).tiles) == 1


def test_the_network_s_models_learn_no_templates_and_lessons_join_the_calibration(
    pack_random: Pack, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(vision.reader.read, "learn_pack", _no_templates)
    monkeypatch.setattr(vision.reader.read, "ship_model", lambda *args: None)
    first = box_models(pack_random, NET, cache=tmp_path)
    assert first.tiles is None and first.judge is None and first.calibration is not None
    before = first.calibration
    assert 0.0 < before.threshold < 1.0 and before.tables == 4

    def no_drawing(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("a lesson needs no table drawn again")

    monkeypatch.setattr(vision.cellnet.calibrate, "draw_tables", no_drawing)
    answered = _answered(pack_random, 5)
    agreeing = [item for item, _ in answered]
    agreed = box_models(pack_random, NET, _lessons(agreeing), cache=tmp_path).calibration
    assert agreed is not None
    assert agreed.tables == 5 and agreed.cells == before.cells + len(agreeing)
    assert agreed.bound <= 0.05 and agreed.wrong <= before.wrong

    # A fair sample says a cell the network named surely is another tile.
    named, sure = max(
        ((item, sure) for item, sure in answered if item.truth.tile is not None),
        key=lambda pair: pair[1],
    )
    tile = named.truth.tile
    assert tile is not None and sure >= before.threshold
    meaning = pack_random.catalogue.meaning
    other = next(
        t for t in box_pictures(cell_net(), pack_random).tile_ids if meaning(t) != meaning(tile)
    )
    wrong = replace(named, truth=CellRead(other, 0))
    assert wrong.sampled
    corrected = box_models(pack_random, NET, _lessons([wrong]), cache=tmp_path).calibration
    # Counted as a sure wrong answer: the threshold rises, or the bound does where it stays
    # within the target.
    assert corrected is not None and corrected.threshold >= before.threshold
    assert corrected.threshold > before.threshold or (
        corrected.wrong == before.wrong + 1 and corrected.bound > before.bound
    )
    # A lesson that is no fair sample (a host's correction of the same cell): not counted.
    correction = replace(wrong, sampled=False)
    kept = box_models(pack_random, NET, _lessons([correction]), cache=tmp_path).calibration
    assert kept == before

    # The reader of a table hands its lessons on, and what is kept stays the renders' own.
    with TableReader(pack_random, config=NET, lessons=_lessons([wrong]), cache=tmp_path) as reader:
        assert reader.prepare().calibration == corrected
    assert box_models(pack_random, NET, cache=tmp_path).calibration == before


def test_a_board_cells_empty_look_is_made_the_networks_square_once() -> None:
    from vision.cellnet.geometry import net_crop
    from vision.reader.read import _net_look

    rng = np.random.default_rng(2)
    look = rng.integers(0, 256, (114, 114, 3), dtype=np.uint8)
    square = _net_look(look, 2.0, 45.0, 96)
    assert np.array_equal(square, net_crop(look, 57.0, 45.0, 96))
    assert _net_look(look, 2.0, 45.0, 96) is square
    other = look.copy()
    other[:10] = 0
    assert not np.array_equal(_net_look(other, 2.0, 45.0, 96), square)
    assert np.array_equal(_net_look(look, 2.0, 45.0, 64), net_crop(look, 57.0, 45.0, 64))
    assert np.array_equal(_net_look(look, 2.0, 40.0, 96), net_crop(look, 57.0, 40.0, 96))


def test_a_new_boxs_calibration_shows_its_progress_on_a_terminal(
    pack_random: Pack, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With no progress of its own given (`companion read`), a new box's calibration shows a
    bar on the terminal, to its end; a kept one shows none."""
    shown: list[tuple[str, int, int]] = []

    def terminal(what: str) -> Any:
        return lambda done, total: shown.append((what, done, total))

    monkeypatch.setattr(vision.reader.read, "terminal_progress", terminal)
    config = replace(NET, read=replace(NET.read, net_tables=1, net_fit_tables=1))
    net_calibration(pack_random, config, tmp_path)
    assert shown and {what for what, _, _ in shown} == {f"calibrating {pack_random.name}"}
    assert [done for _, done, _ in shown] == sorted(done for _, done, _ in shown)
    assert shown[-1][1] == shown[-1][2] > 1
    shown.clear()
    net_calibration(pack_random, config, tmp_path)
    assert shown == []
