"""A table's lessons in the box's calibration (vision.cellnet.calibrate: Grades, calibrated,
calibration_for)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

import vision.cellnet.calibrate as calibrate
from vision.cellnet.calibrate import Grades, calibrated, calibration_for, upper_bound

TARGET, CONFIDENCE = 0.005, 0.95


def _renders(seed: int = 0) -> Grades:
    """40 tables of 100 cells, the 60 least sure answers wrong."""
    rng = np.random.default_rng(seed)
    n = 4000
    sure = rng.uniform(0.5, 1.0, n)
    wrong = np.zeros(n, bool)
    wrong[np.argsort(sure)[:60]] = True
    return Grades(sure, wrong, np.ones(n, bool), np.repeat(np.arange(40), 100).astype(np.int64))


def _lessons(sure: list[float], wrong: list[bool]) -> Grades:
    return Grades(
        np.asarray(sure, np.float64),
        np.asarray(wrong, bool),
        np.ones(len(sure), bool),
        np.zeros(len(sure), np.int64),
    )


def _bound_at(grades: Grades, threshold: float) -> float:
    """The clustered bound on the wrong-rate of the cells answered at `threshold`."""
    ids, table = np.unique(grades.tables, return_inverse=True)
    answered = grades.named & (grades.sure >= threshold)
    per = np.bincount(table[answered], minlength=len(ids)).astype(np.int64)
    bad = np.bincount(table[answered & grades.wrong], minlength=len(ids)).astype(np.int64)
    return upper_bound(bad, per, CONFIDENCE)


def test_the_lessons_are_one_more_cluster() -> None:
    renders = _renders()
    joined = renders.joined(_lessons([0.9, 0.8, 0.7], [False, True, False]))
    assert len(joined) == len(renders) + 3
    assert set(joined.tables[-3:].tolist()) == {40}
    assert calibrated(joined, TARGET, CONFIDENCE).tables == 41
    # No lessons at all: the renders' own calibration.
    assert calibrated(renders.joined(_lessons([], [])), TARGET, CONFIDENCE) == calibrated(
        renders, TARGET, CONFIDENCE
    )


def test_a_lesson_of_a_confident_wrong_answer_makes_the_threshold_stricter() -> None:
    renders = _renders()
    before = calibrated(renders, TARGET, CONFIDENCE)
    assert before.answered > 3000 and before.threshold < 0.6
    # One cell the network had named at 0.95, which the host corrected: the thresholds are
    # tested from the surest down, and the first tested (where enough cells are answered
    # to hold the rate at all) already holds it and fails.
    after = calibrated(renders.joined(_lessons([0.95], [True])), TARGET, CONFIDENCE)
    assert after.threshold > 0.95 > before.threshold
    assert after.answered < before.answered and after.wrong == 0
    # Corrections of 5 of 40 such cells: the bound fails at the renders' threshold too.
    joined = renders.joined(_lessons([0.95] * 40, [i < 5 for i in range(40)]))
    assert _bound_at(joined, before.threshold) > TARGET
    assert calibrated(joined, TARGET, CONFIDENCE).threshold > 0.95


def test_lessons_that_agree_never_loosen_the_threshold_past_what_the_cells_hold() -> None:
    renders = _renders(1)
    before = calibrated(renders, TARGET, CONFIDENCE)
    for sure in ([0.99] * 200, list(np.linspace(0.5, 1.0, 300)), [0.51] * 50):
        joined = renders.joined(_lessons(sure, [False] * len(sure)))
        after = calibrated(joined, TARGET, CONFIDENCE)
        # The threshold is one the pooled cells hold at, as every one above it that was
        # tested; the renders' wrong answers below the renders' own threshold stay out.
        assert after.bound <= TARGET
        assert _bound_at(joined, after.threshold) == pytest.approx(after.bound)
        least_wrong = renders.sure[renders.wrong].max()
        assert after.threshold > least_wrong
        assert after.wrong == int((renders.wrong & (renders.sure >= after.threshold)).sum())
        assert after.threshold <= before.threshold + 0.02


def test_graded_cells_round_trip() -> None:
    grades = _renders().joined(_lessons([0.7], [True]))
    again = Grades.from_json(grades.to_json())
    for name in ("sure", "wrong", "named", "tables"):
        np.testing.assert_array_equal(getattr(again, name), getattr(grades, name))
    with pytest.raises(ValueError):
        Grades.from_json('{"version": -1}')


class _Net:
    digest = "test"


class _Pack:
    """What the cache's key reads of a pack."""

    def __init__(self) -> None:
        self.tile_mm = 45.0
        self.tiles = {"a": np.zeros((4, 4, 3), np.uint8)}
        self.boards: dict[str, Any] = {}


def test_lessons_join_the_kept_calibration_without_drawing_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    drawn: list[int] = []

    def rendered(*args: Any, **kwargs: Any) -> Grades:
        drawn.append(1)
        return _renders()

    monkeypatch.setattr(calibrate, "rendered_grades", rendered)
    settings: dict[str, Any] = dict(
        tables=40, target=TARGET, confidence=CONFIDENCE, cache=tmp_path, ridge=1.0
    )
    net, pack = _Net(), _Pack()
    first = calibration_for(net, None, pack, **settings)  # type: ignore[arg-type]
    assert drawn == [1] and first == calibrated(_renders(), TARGET, CONFIDENCE)
    wrong = _lessons([0.95] * 40, [i < 3 for i in range(40)])
    monkeypatch.setattr(calibrate, "lesson_grades", lambda *args: wrong)
    cells = SimpleNamespace(tiles=np.zeros(40, np.int16))
    taught = calibration_for(net, None, pack, lessons=cells, **settings)  # type: ignore[arg-type]
    assert drawn == [1], "the renders' cells come from the cache"
    assert taught.threshold > first.threshold and taught.tables == 41
    # What is kept stays the renders' own.
    again = calibration_for(net, None, pack, **settings)  # type: ignore[arg-type]
    assert again == first and drawn == [1]
