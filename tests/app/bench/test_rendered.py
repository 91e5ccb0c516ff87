"""`companion bench vision`: how a read is judged against the renderer's truth, and the CLI."""

from __future__ import annotations

import math
import re
import statistics
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import cv2
import numpy as np
import pytest

from app.bench.rendered import Tally, bench_pack, report, same_answer, score_read
from app.cli import main
from companion.catalogue import default_catalogue
from companion.reading import EMPTY, UNKNOWN, CellRead, SeatRead, TableRead
from vision.box.pack import Pack, load_pack
from vision.config import VisionConfig, with_settings
from vision.synthetic.scene import DISPLAY


def test_the_same_rotated_meaning_is_the_same_answer() -> None:
    cat = default_catalogue()
    # An end piece reaching north, turned a quarter, is the east-reaching one upright.
    assert same_answer(CellRead("end-n-palm1", 90), CellRead("end-e-palm1", 0), cat)
    # A single island means the same whichever way it lies.
    assert same_answer(CellRead("single-palm2", 270), CellRead("single-palm2", 0), cat)
    assert not same_answer(CellRead("end-n-palm1", 0), CellRead("end-e-palm1", 0), cat)
    assert not same_answer(CellRead("water", 0), EMPTY, cat)
    assert same_answer(EMPTY, EMPTY, cat)
    assert not same_answer(CellRead("no-such-tile", 0), CellRead("water", 0), cat)


def _table(cells: list[list[CellRead]], ship: int | None, storage: CellRead) -> TableRead:
    grid = tuple(tuple(row) for row in cells)
    seat_cells = tuple(tuple(EMPTY for _ in range(4)) for _ in range(4))
    return TableRead(grid, ship, {1: SeatRead(seat_cells, storage)})


def test_a_read_is_counted_cell_by_cell() -> None:
    cat = default_catalogue()
    water = CellRead("water", 0)
    truth = _table([[water] * 4 for _ in range(4)], 3, EMPTY)
    read_cells = [[water] * 4 for _ in range(4)]
    read_cells[0][0] = CellRead("water-boat", 0)  # wrong, visible
    read_cells[0][1] = UNKNOWN  # abstained
    read_cells[1][1] = CellRead("volcano", 0)  # wrong but covered
    read_cells[2][2] = UNKNOWN  # covered, unknown: as it should be
    read = _table(read_cells, 3, EMPTY)
    rendered = SimpleNamespace(
        truth=truth, covered=frozenset({(DISPLAY, 1, 1), (DISPLAY, 2, 2)}), ship_covered=False
    )
    scene = SimpleNamespace(ship=3)
    tally = Tally()
    score_read(read, cast(Any, rendered), cast(Any, scene), cat, tally)
    assert (tally.visible, tally.wrong, tally.abstained) == (16 + 16 + 1 - 2, 1, 1)
    assert (tally.covered, tally.covered_wrong) == (2, 1)
    assert (tally.ship_scenes, tally.ship_right, tally.perfect) == (1, 1, 0)
    text = report([("pack", {"easy": tally})], "companion bench vision")
    assert "wrong cells        1" in text
    assert "covered, wrong     1" in text
    assert (tally.storage_seen, tally.storage_abstained) == (1, 0)


def test_a_cell_left_unknown_though_the_matcher_proposed_it_rightly_is_doubted() -> None:
    cat = default_catalogue()
    water = CellRead("water", 0)
    truth = _table([[water] * 4 for _ in range(4)], None, EMPTY)
    read_cells = [[water] * 4 for _ in range(4)]
    for c in range(3):
        read_cells[0][c] = UNKNOWN
    proposed: dict[Any, CellRead | None] = {
        (DISPLAY, 0, 0): CellRead("water", 90),  # the same meaning turned: right
        (DISPLAY, 0, 1): CellRead("water-boat", 0),  # something else
        (DISPLAY, 1, 1): water,  # answered: not an abstention
    }  # (0, 2): no proposal
    rendered = SimpleNamespace(truth=truth, covered=frozenset(), ship_covered=False)
    tally = Tally()
    scene = cast(Any, SimpleNamespace(ship=None))
    score_read(_table(read_cells, None, EMPTY), cast(Any, rendered), scene, cat, tally, proposed)
    assert (tally.abstained, tally.doubted) == (3, 1)
    assert "abstained          3 (9.09 %): the matcher's proposal right in 1" in report(
        [("pack", {"easy": tally})], "bench"
    )


def test_the_calibration_weighs_only_the_visible_cells_answered() -> None:
    cat = default_catalogue()
    water = CellRead("water", 0, 0.5)
    truth = _table([[water] * 4 for _ in range(4)], None, EMPTY)
    read_cells = [[water] * 4 for _ in range(4)]
    read_cells[0][0] = CellRead("water-boat", 0, 0.5)  # wrong, visible
    read_cells[0][1] = UNKNOWN  # abstained: no confidence
    read_cells[1][1] = CellRead("volcano", 0, 0.9)  # covered: not weighed
    read = _table(read_cells, None, CellRead(empty=True, confidence=0.5))
    rendered = SimpleNamespace(
        truth=truth, covered=frozenset({(DISPLAY, 1, 1)}), ship_covered=False
    )
    tally = Tally()
    score_read(read, cast(Any, rendered), cast(Any, SimpleNamespace(ship=None)), cat, tally)
    # the display's 14 answered and the storage at 0.5 (one wrong), the seat's 16 at 1
    assert sorted(tally.confidences) == [0.5] * 15 + [1.0] * 16
    assert tally.answered_right.count(False) == 1
    assert tally.calibration_error() == pytest.approx(15 / 31 * (14 / 15 - 0.5))
    assert "ECE 0.210 over 31 answered visible cells" in report(
        [("pack", {"easy": tally})], "companion bench vision"
    )


def test_storage_slots_are_counted_apart_too() -> None:
    cat = default_catalogue()
    water = CellRead("water", 0)
    grid = [[water] * 4 for _ in range(4)]
    truth = _table(grid, None, water)
    scene = SimpleNamespace(ship=None)
    seen, covered = Tally(), Tally()
    for tally, hidden in ((seen, frozenset()), (covered, frozenset({(1, -1, 0)}))):
        rendered = SimpleNamespace(truth=truth, covered=hidden, ship_covered=False)
        score_read(_table(grid, None, EMPTY), cast(Any, rendered), cast(Any, scene), cat, tally)
    assert (seen.storage_seen, seen.storage_wrong, seen.wrong) == (1, 1, 1)
    assert (covered.storage_covered, covered.storage_covered_wrong) == (1, 1)
    assert "1 covered: wrong 1" in report([("pack", {"hard": covered})], "bench")


def test_a_ship_not_seen_or_named_elsewhere_is_listed_among_the_mistakes() -> None:
    cat = default_catalogue()
    water = CellRead("water", 0)
    grid = [[water] * 4 for _ in range(4)]
    rendered = SimpleNamespace(
        truth=_table(grid, 3, EMPTY), covered=frozenset(), ship_covered=False
    )
    tally = Tally()
    for ship in (None, 7, 3):
        scene = SimpleNamespace(ship=3)
        score_read(_table(grid, ship, EMPTY), cast(Any, rendered), cast(Any, scene), cat, tally)
    assert (tally.ship_missed, tally.ship_wrong, tally.ship_right) == (1, 1, 1)
    assert tally.examples == ["ship at 3: not seen", "ship at 3: read at 7"]
    assert "ship at 3: read at 7" in report([("pack", {"hard": tally})], "bench")


@pytest.mark.slow
def test_a_table_with_a_mistake_is_kept_as_the_very_frame_read_with_its_pack(
    pack_ink: Pack, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from vision.reader.read import TableView
    from vision.reader.read import read_table_view as real_read

    frames: list[np.ndarray[Any, Any]] = []

    def ship_misread(
        image: np.ndarray[Any, Any], pack: Pack, **kwargs: Any
    ) -> tuple[TableRead, TableView]:
        frames.append(image)
        read, view = real_read(image, pack, **kwargs)
        return replace(read, ship=None), view  # a mistake whenever the ship is in the open

    monkeypatch.setattr("vision.reader.read.read_table_view", ship_misread)
    monkeypatch.setattr("app.bench.rendered.TIMED_RUNS", 1)
    keep = tmp_path / "kept"
    tally = bench_pack(pack_ink, 1, seed=3, seats=2, difficulties=("easy",), keep_mistakes=keep)[
        "easy"
    ]
    assert tally.ship_missed == 1
    kept = keep / "easy-table1.png"
    assert len(tally.examples) == 1
    assert re.fullmatch(
        rf"synthetic ink art, easy table 1 \({re.escape(str(kept))}\): "
        r"ship at \d+: not seen",
        tally.examples[0],
    )
    again = cv2.imread(str(kept))
    assert again is not None and np.array_equal(again, frames[0])  # lossless: the frame read
    assert load_pack(keep / "pack").tiles.keys() == pack_ink.tiles.keys()


@pytest.mark.slow
def test_the_report_says_where_the_fastest_read_spent_its_time(
    pack_ink: Pack, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("app.bench.rendered.TIMED_RUNS", 2)
    tally = bench_pack(pack_ink, 2, seed=3, seats=2, difficulties=("easy",))["easy"]
    stages = {"grey", "markers", "areas", "crops", "cells", "waiting", "ship", "storage"}
    assert set(tally.stage_ms) == stages
    assert all(len(values) == 2 for values in tally.stage_ms.values())
    for frame in range(2):
        # The stages are the fastest run's own: in turn they take no longer than it took
        # (the ship is looked for beside the cells, and the wait is part of the cells').
        in_turn = sum(tally.stage_ms[s][frame] for s in stages - {"ship", "waiting"})
        assert 0.0 < in_turn <= tally.read_ms[frame]
        assert tally.stage_ms["cells"][frame] > 0.0
    text = report([("pack", {"easy": tally})], "bench")
    line = next(x for x in text.splitlines() if x.startswith("  stages (median)"))
    cells = statistics.median(tally.stage_ms["cells"])
    assert f"cells {cells:.1f} (waiting for the workers" in line
    assert "stages" not in report([("pack", {"easy": Tally(read_ms=[1.0])})], "bench")


def test_the_bench_keeps_mistakes_only_in_a_new_or_empty_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "old.png").write_bytes(b"")
    assert main(["bench", "vision", "--keep-mistakes", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "is not an empty folder" in err and len(err.strip().splitlines()) == 1
    assert [p.name for p in tmp_path.iterdir()] == ["old.png"]


def test_the_bench_command_is_listed(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "vision", "--help"]) == 0
    out = capsys.readouterr().out
    assert "--scenes" in out and "--pack-style" in out
    assert "--bare-table" in out and "--hand-on-storage" in out


def test_the_bench_refuses_no_scenes(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "vision", "--scenes", "0"]) == 2
    assert "at least 1" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("setting", "problem"),
    [
        ("cells.min_gain", "section.name=value"),
        ("lens.min_gain=0.3", "is not a section"),
        ("cells.min_gian=0.3", "cells.min_gian is not a setting of CellConfig"),
        ("cells.pose_candidates=many", "takes a whole number, not 'many'"),
        ("cells.pose_candidates=2.5", "takes a whole number, not '2.5'"),
    ],
)
def test_a_setting_the_bench_cannot_use_is_one_line_before_any_work(
    capsys: pytest.CaptureFixture[str], setting: str, problem: str
) -> None:
    assert main(["bench", "vision", "--set", setting]) == 2
    err = capsys.readouterr().err
    assert problem in err and len(err.strip().splitlines()) == 1


def test_settings_change_only_what_they_name() -> None:
    config = with_settings(
        VisionConfig(),
        ["cells.min_gain=0.3", "areas.board_min_match=1", "cells.pose_angles_deg=(-4.0, 0.0, 4.0)"],
    )
    assert config.cells.min_gain == 0.3
    assert config.areas.board_min_match == 1.0
    assert config.cells.pose_angles_deg == (-4.0, 0.0, 4.0)
    assert config.cells.shortlist == VisionConfig().cells.shortlist
    assert config.markers == VisionConfig().markers


def test_a_bar_can_be_set_out_of_reach_with_inf() -> None:
    config = with_settings(
        VisionConfig(), ["cells.cover_edge_evidence=-inf", "ships.least_threshold=inf"]
    )
    assert config.cells.cover_edge_evidence == -math.inf
    assert config.ships.least_threshold == math.inf
    with pytest.raises(ValueError, match=r"cells\.pose_candidates takes a whole number"):
        with_settings(VisionConfig(), ["cells.pose_candidates=inf"])


def test_an_optional_setting_takes_a_number_or_none() -> None:
    config = with_settings(VisionConfig(), ["read.cell_workers=0"])
    assert config.read.cell_workers == 0
    assert with_settings(config, ["read.cell_workers=None"]).read.cell_workers is None
    with pytest.raises(ValueError, match=r"read\.cell_workers takes a number or None"):
        with_settings(config, ["read.cell_workers='two'"])


def test_the_bench_offers_every_art_style_and_table_top_there_is() -> None:
    from app.bench.vision import STYLE_CHOICES, TABLE_CHOICES
    from vision.synthetic.artpacks import STYLES
    from vision.synthetic.scene import TABLE_TOPS

    assert set(STYLE_CHOICES) == set(STYLES) and set(TABLE_CHOICES) == set(TABLE_TOPS)
