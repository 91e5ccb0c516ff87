"""What a table teaches its judge: lessons kept, read back, and changing later reads."""

from __future__ import annotations

import json
import os
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from companion.reading import EMPTY, UNKNOWN, CellRead, SeatRead, TableRead
from companion.session import Correction
from vision.box.judge import (
    EMPTY_CLASS,
    FEATURES,
    NEITHER,
    TILE,
    CellJudge,
    Examples,
    fit_judge,
    proposed_id,
)
from vision.box.lessons import CorrectionLessons, Lesson, LessonBook, Lessons, lesson
from vision.box.pack import Pack
from vision.box.tilemodel import learn_pack
from vision.config import JudgeConfig
from vision.reader.recognise import LOOK_STATS, TILE_STATS, CellMatch

PRIOR = JudgeConfig().lesson_prior


def _cell(rng: np.random.Generator, y: int) -> np.ndarray:
    """A cell's figures whose class the evidence and the empty look's rms tell."""
    x = rng.normal(0, 1, len(FEATURES))
    x[FEATURES.index("proposed")] = 1.0
    x[FEATURES.index("first_unknown")] = 1.0
    x[FEATURES.index("first_tile")] = x[FEATURES.index("first_empty")] = 0.0
    evidence = {TILE: 3.0, EMPTY_CLASS: -3.0, NEITHER: 0.0}[y]
    look_rms = {TILE: 3.0, EMPTY_CLASS: 0.0, NEITHER: 3.0}[y]
    x[FEATURES.index("tile_evidence")] = evidence + rng.normal(0, 0.3)
    x[FEATURES.index("look_rms")] = look_rms + rng.normal(0, 0.3)
    return x


def _rendered(seed: int) -> Examples:
    rng = np.random.default_rng(seed)
    ex = Examples()
    for table in range(60):
        for _ in range(60):
            y = int(rng.choice([TILE, EMPTY_CLASS, NEITHER], p=[0.6, 0.35, 0.05]))
            ex.features.append(_cell(rng, y))
            ex.labels.append(y)
            ex.tables.append(table)
    return ex


def _tile_answered(judge: CellJudge, x: np.ndarray, groups: list[str]) -> np.ndarray:
    answer, confidence, threshold = judge._answers(x, groups)
    out: np.ndarray = (answer == TILE) & (confidence >= threshold)
    return out


def test_corrections_of_one_kind_of_cell_change_later_reads_of_that_kind() -> None:
    # On this table the matcher's proposed "volcano" looks right to every figure yet is
    # another tile: once the host corrects one, later cells proposing it are left to the
    # host; cells proposing other tiles keep their answers.
    rng = np.random.default_rng(7)
    judge = fit_judge(_rendered(1), JudgeConfig(steps=200))
    # The thresholds a real box's judge holds its wrong-rate with (docs/vision.md).
    judge = replace(judge, threshold=0.952, threshold_unknown=0.976)
    later = np.stack([_cell(rng, TILE) for _ in range(50)])
    volcano, other = ["volcano"] * 50, ["end-1"] * 50
    assert _tile_answered(judge, later, volcano).mean() > 0.9

    def lessons(labels: list[int]) -> Lessons:
        x = np.stack([_cell(rng, TILE) for _ in labels])
        return Lessons(x, np.asarray(labels, np.intp), ("volcano",) * len(labels), "v")

    taught = judge.taught(lessons([NEITHER]), PRIOR)
    assert _tile_answered(taught, later, volcano).mean() == 0.0
    assert _tile_answered(taught, later, other).mean() > 0.9
    assert taught.threshold == judge.threshold
    # The host confirming many such cells afterwards lets the reader name them again.
    again = judge.taught(lessons([NEITHER] + [TILE] * 200), PRIOR)
    assert _tile_answered(again, later, volcano).mean() > 0.9


def _lesson(label: int, value: float = 0.5) -> Lesson:
    return Lesson(tuple([value] * len(FEATURES)), label, "volcano", "correction")


def test_lessons_are_kept_one_line_each_and_read_back(pack_random: Pack, tmp_path: Path) -> None:
    book = LessonBook(tmp_path / "lessons", pack_random)
    assert book.load() is None
    assert book.add([_lesson(TILE), _lesson(NEITHER, 1.5)]) == 2
    assert book.add([]) == 0
    got = book.load()
    assert got is not None and len(got) == 2
    assert got.labels.tolist() == [TILE, NEITHER] and got.groups == ("volcano", "volcano")
    assert got.features[1][0] == 1.5
    # A torn last line and a line of another judge version are passed over.
    with book.path.open("a") as out:
        out.write(
            json.dumps(
                {
                    "version": -1,
                    "label": "tile",
                    "group": "",
                    "source": "teach",
                    "features": [0.0] * len(FEATURES),
                }
            )
            + "\n"
        )
        out.write('{"version": 5, "label": "ti')
    again = book.load()
    assert again is not None and len(again) == 2 and again.digest == got.digest
    # The next lesson starts a line of its own after the torn one.
    book.add([_lesson(EMPTY_CLASS)])
    last = book.load()
    assert last is not None and last.labels.tolist() == [TILE, NEITHER, EMPTY_CLASS]


def test_a_lesson_that_cannot_be_written_leaves_the_book_whole(
    pack_random: Pack, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    book = LessonBook(tmp_path, pack_random)
    book.add([_lesson(TILE)])
    before = book.path.read_bytes()
    real = os.write

    def short(fd: int, data: bytes) -> int:
        return real(fd, data[: len(data) // 2])

    monkeypatch.setattr(os, "write", short)
    with pytest.raises(OSError):
        book.add([_lesson(EMPTY_CLASS)])
    monkeypatch.undo()
    assert book.path.read_bytes() == before


def _table() -> TableRead:
    """A read of an empty table (each call a new object, as each read of the camera is)."""
    grid = tuple(tuple(EMPTY for _ in range(4)) for _ in range(4))
    return TableRead(grid, None, {3: SeatRead(grid, EMPTY)})


def test_a_host_correction_becomes_a_lesson(pack_random: Pack, tmp_path: Path) -> None:
    from vision.config import VisionConfig

    config = VisionConfig()
    model = learn_pack(pack_random, config.crops.px_per_mm, config.cells)
    k = 0
    match = CellMatch(
        UNKNOWN,
        proposal=k,
        tile_stats=(0.9,) * len(TILE_STATS),
        look_stats=(1.0,) * len(LOOK_STATS),
    )
    truth = CellRead(model.ids[k], model.rotations[k])
    book = LessonBook(tmp_path, pack_random)
    teacher = CorrectionLessons(book, pack_random, config)
    read, newer = _table(), _table()
    corrected = _table()
    assert not teacher.corrected(Correction("display", 1, 2, truth, read, corrected))
    teacher.seen(read, {("display", 1, 2): match, (3, 0, 0): match})
    teacher.seen(newer, {("display", 1, 2): replace(match, read=EMPTY)})
    # The correction of the older read pairs with that read's matches, not the newer's.
    assert teacher.corrected(Correction("display", 1, 2, truth, read, corrected))
    # A second correction of the corrected read still has the camera's matches.
    assert teacher.corrected(Correction(3, 0, 0, EMPTY, corrected, _table()))
    # "I do not know" teaches nothing.
    assert not teacher.corrected(Correction(3, 0, 0, UNKNOWN, read, _table()))
    got = book.load()
    assert got is not None and got.labels.tolist() == [TILE, EMPTY_CLASS]
    assert got.groups == (f"{model.ids[k]}|unknown",) * 2
    # A cell the matcher read empty is another kind of cell than one it named that tile.
    named = replace(match, read=CellRead(model.ids[k], model.rotations[k], 0.9))
    read_empty = replace(match, read=EMPTY)
    assert proposed_id(named, model) != proposed_id(read_empty, model)
    item = lesson(match, truth, model, pack_random.catalogue, "correction")
    assert item is not None and item.features is not None
    assert np.allclose(got.features[0], item.features, atol=1e-5)


def test_the_session_tells_its_correction_listeners() -> None:
    from companion.actions import TakeToBoard, Turn
    from tests.companion.test_session import started, table_after
    from tests.companion.test_tracker import with_cell

    session = started()
    heard: list[Correction] = []
    session.listeners.on_correction.append(heard.append)
    turn = Turn(1, TakeToBoard((0, 0), (2, 2), 90), drawn="middle-boat")
    read = with_cell(table_after(session, turn), 1, (2, 2), UNKNOWN)
    session.observe(read)
    session.correct(1, 2, 2, CellRead("water", 90, 1.0))
    assert len(heard) == 1
    got = heard[0]
    assert (got.area, got.row, got.col, got.cell) == (1, 2, 2, CellRead("water", 90, 1.0))
    assert got.before is read
    assert got.after.seats[1].cells[2][2] == CellRead("water", 90, 1.0)


def test_a_taught_judge_rests_on_the_kept_one(
    pack_random: Pack, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from vision.box import judge as judge_module
    from vision.config import VisionConfig

    monkeypatch.setenv("MAORI_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(judge_module, "_MEMORY", {})
    drawn: list[int] = []

    def learning_set(*args: object, **kw: object) -> Examples:
        drawn.append(1)
        return _rendered(3)

    monkeypatch.setattr(judge_module, "learning_set", learning_set)
    config = replace(VisionConfig(), judge=JudgeConfig(steps=20))
    model = learn_pack(pack_random, config.crops.px_per_mm, config.cells)
    lessons = Lessons(
        np.zeros((3, len(FEATURES))), np.array([TILE, TILE, NEITHER]), ("a", "a", ""), "abc"
    )
    taught = judge_module.judge_for(pack_random, model, config, lessons=lessons)
    plain = judge_module.judge_for(pack_random, model, config)
    assert drawn == [1]
    assert plain is not None and taught is not None
    assert not plain.taught_counts and taught.w1 is plain.w1
    assert taught.taught_counts == {"a": (2, 0, 0), "": (0, 0, 1)}


def _crop(seed: int, side: int = 114) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 256, (side, side, 3), dtype=np.uint8)


def test_a_cell_read_by_the_network_is_kept_with_its_crop(
    pack_random: Pack, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import vision.box.tilemodel

    def no_templates(*args: object, **kwargs: object) -> None:
        raise AssertionError("a cell the network read needs no matcher templates")

    monkeypatch.setattr(vision.box.tilemodel, "learn_pack", no_templates)
    book = LessonBook(tmp_path, pack_random)
    teacher = CorrectionLessons(book, pack_random, side="front")
    tile = pack_random.catalogue.types[0].id
    read = _table()
    crops = {("display", 1, 2): _crop(1), (3, 2, 1): _crop(2), (3, -1, 0): _crop(3, 140)}
    teacher.seen(read, {}, crops)  # the cell network leaves no matches
    assert teacher.corrected(Correction("display", 1, 2, CellRead(tile, 90), read, _table()))
    assert teacher.corrected(Correction(3, 2, 1, EMPTY, read, _table()))
    assert teacher.corrected(Correction(3, -1, 0, CellRead(tile, 270), read, _table()))
    assert not teacher.corrected(Correction(3, 2, 1, UNKNOWN, read, _table()))
    got = book.load()
    assert got is not None and len(got) == 0, "no figures for the judge"
    assert [(c.kind, c.cell, c.side) for c in got.cells] == [
        ("display", (0, 0), "front"),
        ("board", (2, 1), "front"),
        ("storage", (0, 0), "front"),
    ]
    assert [c.truth for c in got.cells] == [CellRead(tile, 90), EMPTY, CellRead(tile, 270)]
    assert np.array_equal(got.cells[0].crop, crops["display", 1, 2])
    assert got.cells[2].crop_mm == pytest.approx(140 / 2.0)
    # Corrections are chosen by the reader's mistakes: no sample for a calibration.
    assert not any(c.sampled for c in got.cells)
    # A torn line is passed over; a line of another judge version keeps its crop.
    first = json.loads(book.path.read_text().splitlines()[0])
    with book.path.open("a") as out:
        out.write(json.dumps({**first, "version": -1, "features": [0.0], "label": "tile"}) + "\n")
        out.write(json.dumps({**first, "cell": {**first["cell"], "crop": "!!"}}) + "\n")
        out.write(json.dumps(first)[:40])
    again = book.load()
    assert again is not None and len(again.cells) == 4 and len(again) == 0
    assert again.digest != got.digest


def test_a_correction_read_by_the_matcher_keeps_its_figures_and_its_crop(
    pack_random: Pack, tmp_path: Path
) -> None:
    from vision.config import VisionConfig

    config = VisionConfig()
    model = learn_pack(pack_random, config.crops.px_per_mm, config.cells)
    match = CellMatch(
        UNKNOWN,
        proposal=0,
        tile_stats=(0.9,) * len(TILE_STATS),
        look_stats=(1.0,) * len(LOOK_STATS),
    )
    book = LessonBook(tmp_path, pack_random)
    teacher = CorrectionLessons(book, pack_random, config)
    read = _table()
    teacher.seen(read, {("display", 0, 0): match}, {("display", 0, 0): _crop(4)})
    truth = CellRead(model.ids[0], model.rotations[0])
    assert teacher.corrected(Correction("display", 0, 0, truth, read, _table()))
    got = book.load()
    assert got is not None and got.labels.tolist() == [TILE] and len(got.cells) == 1
    assert got.cells[0].truth == truth
