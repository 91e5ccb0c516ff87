"""app.bench.scenes: scenes in the development set's format, judged as its check.py does."""

from __future__ import annotations

import csv
import hashlib
import json
import shutil
from dataclasses import dataclass, replace
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import cv2
import numpy as np
import pytest

from app.bench import scenes as bench_scenes
from app.bench.rendered import Tally
from app.bench.scenes import (
    SetTally,
    meaning,
    open_scenes,
    rendered_row,
    score_scene,
)
from app.bench.scenes import (
    bench_scenes as run_scenes,
)
from app.cli import main
from companion.errors import DataError
from companion.reading import UNKNOWN, CellRead, SeatRead, TableRead
from vision.box.pack import Pack, load_pack
from vision.reader.read import TableNotFound
from vision.synthetic.artpacks import write_art_pack
from vision.synthetic.render import Effects, Rendered, random_camera, render_table
from vision.synthetic.scene import DISPLAY, STORAGE_ROW, CellKey, keyed_cells, random_scene

#: Seed of this file's random-style pack and tables.
SEED = 2611


def _cell(read: CellRead | None, share: float) -> dict[str, Any]:
    out: dict[str, Any] = (
        {"empty": True}
        if read is None or read.empty
        else {"tile": read.tile, "rotation": read.rotation}
    )
    if share > 0:
        out["occluded"] = share
    return out


def truth_json(rendered: Rendered, ship: int | None) -> dict[str, Any]:
    """A rendered table's truth in the development set's format."""

    def share(key: CellKey) -> float:
        return float(rendered.occlusion.get(key, 0.0))

    truth = rendered.truth
    return {
        "display": {
            "cells": [
                [_cell(c, share((DISPLAY, r, i))) for i, c in enumerate(row)]
                for r, row in enumerate(truth.display)
            ],
            "ship": ship,
        },
        "seats": {
            str(s): {
                "cells": [
                    [_cell(c, share((s, r, i))) for i, c in enumerate(row)]
                    for r, row in enumerate(seat.cells)
                ],
                **(
                    {}
                    if seat.storage is None
                    else {"storage": _cell(seat.storage, share((s, STORAGE_ROW, 0)))}
                ),
            }
            for s, seat in truth.seats.items()
        },
        "min_px_per_mm": rendered.px_per_mm[0],
    }


@dataclass
class Scenes:
    root: Path
    pack: Pack
    truths: dict[str, TableRead]  # by the decoded frame's digest


def _digest(frame: np.ndarray[Any, Any]) -> str:
    return hashlib.sha1(frame.tobytes()).hexdigest()


@pytest.fixture(scope="module")
def scenes(tmp_path_factory: pytest.TempPathFactory) -> Scenes:
    """Two rendered tables written as a scenes folder (set "easy")."""
    root = tmp_path_factory.mktemp("scenes")
    pack = load_pack(write_art_pack(root / "pack", "random", seed=SEED))
    rng = np.random.default_rng(SEED)
    folder = root / "sets" / "easy"
    folder.mkdir(parents=True)
    truths: dict[str, TableRead] = {}
    for i in range(2):
        scene = random_scene(pack.catalogue, rng, 2, "front", "easy")
        rendered = render_table(
            scene, pack, random_camera(rng, scene, pack, max_tilt_deg=10.0), Effects.easy(), rng
        )
        ok, data = cv2.imencode(".jpg", rendered.image, [cv2.IMWRITE_JPEG_QUALITY, 90])
        assert ok
        (folder / f"{i:02}.jpg").write_bytes(data.tobytes())
        (folder / f"{i:02}.json").write_text(json.dumps(truth_json(rendered, scene.ship)))
        frame = cv2.imdecode(data, cv2.IMREAD_COLOR)
        assert frame is not None
        truths[_digest(frame)] = replace(rendered.truth, ship=scene.ship)
    return Scenes(root, pack, truths)


def _reader(
    scenes: Scenes, monkeypatch: pytest.MonkeyPatch, answer: Any, propose: Any = None
) -> None:
    """Read every frame as answer(truth of that frame), each frame read once; with
    `propose`, the matcher's proposals by slot are propose(truth of that frame)."""

    def read_view(_reader: Any, frame: np.ndarray[Any, Any]) -> tuple[TableRead, Any]:
        truth = scenes.truths[_digest(frame)]
        view = SimpleNamespace(matches={}, truth=truth)
        if propose is not None:
            view.matches = propose(truth)
        return answer(truth), view

    monkeypatch.setattr("vision.reader.read.TableReader.read_view", read_view)
    monkeypatch.setattr("app.bench.rendered.proposals", lambda view, _model: view.matches)
    monkeypatch.setattr(
        "app.bench.rendered.reasons", lambda view: dict.fromkeys(view.matches, "poor fit")
    )
    monkeypatch.setattr("vision.reader.read.TableReader.models", SimpleNamespace(tiles=None))
    monkeypatch.setattr("app.bench.rendered.TIMED_RUNS", 1)


def _everywhere(table: TableRead, cell: CellRead) -> TableRead:
    return TableRead(
        tuple(tuple(cell for _ in row) for row in table.display),
        table.ship,
        {
            s: SeatRead(
                tuple(tuple(cell for _ in row) for row in seat.cells),
                None if seat.storage is None else cell,
            )
            for s, seat in table.seats.items()
        },
    )


def _covered(root: Path) -> int:
    """Cells marked covered (>= 15 %) in every truth of the folder."""

    def cells(truth: dict[str, Any]) -> list[dict[str, Any]]:
        out = [c for row in truth["display"]["cells"] for c in row]
        for seat in truth["seats"].values():
            out += [c for row in seat["cells"] for c in row]
            out += [seat["storage"]] if "storage" in seat else []
        return out

    return sum(
        c.get("occluded", 0) >= 0.15
        for p in sorted(root.glob("sets/*/*.json"))
        for c in cells(json.loads(p.read_text()))
    )


@pytest.mark.slow
def test_a_reader_that_answers_the_truth_is_never_wrong(
    scenes: Scenes, monkeypatch: pytest.MonkeyPatch
) -> None:
    _reader(scenes, monkeypatch, lambda truth: truth)
    tally = run_scenes(open_scenes(scenes.root))["easy"]
    assert (tally.scenes, tally.wrong, tally.abstained, tally.covered_wrong) == (2, 0, 0, 0)
    assert tally.perfect == tally.ship_right == 2
    # 2 tables of a display and 2 boards, 16 cells each, and the storage slots
    assert tally.cells >= 2 * 3 * 16
    assert len(tally.read_ms) == len(tally.decode_ms) == 2
    row = bench_scenes.scenes_row("here", "box", "easy", tally)
    assert (row.wrong_pct, row.abstained_pct, row.ship_pct, row.ece) == (0.0, 0.0, 100.0, 0.0)


def test_a_reader_that_answers_unknown_everywhere_abstains_on_every_visible_cell(
    scenes: Scenes, monkeypatch: pytest.MonkeyPatch
) -> None:
    _reader(scenes, monkeypatch, lambda truth: _everywhere(truth, UNKNOWN))
    tally = run_scenes(open_scenes(scenes.root))["easy"]
    covered = _covered(scenes.root)
    assert (tally.wrong, tally.covered_unknown) == (0, covered)
    assert tally.abstained == tally.cells - covered > 0
    assert tally.perfect == 0
    assert tally.confidences == []


def test_an_abstention_on_a_cell_the_matcher_proposed_rightly_is_the_judges_doubt(
    scenes: Scenes, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every cell left unknown; the matcher proposed the true tile on the display and a tile
    meaning something else on the boards: the display's visible tiles are the doubted."""
    volcano = next(t.id for t in scenes.pack.catalogue if t.meaning.kind.value == "volcano")
    water = next(t.id for t in scenes.pack.catalogue if t.meaning.kind.value == "water")

    def propose(truth: TableRead) -> dict[Any, CellRead | None]:
        out: dict[Any, CellRead | None] = {}
        for (area, r, c), cell in keyed_cells(truth):
            if cell is None or cell.tile is None:
                continue
            if area == DISPLAY:
                out[(area, r, c)] = cell
            else:
                out[(area, r, c)] = CellRead(water if cell.tile == volcano else volcano)
        return out

    _reader(scenes, monkeypatch, lambda truth: _everywhere(truth, UNKNOWN), propose)
    tally = run_scenes(open_scenes(scenes.root))["easy"]
    visible_display_tiles = sum(
        "tile" in cell and cell.get("occluded", 0) < 0.15
        for path in sorted(scenes.root.glob("sets/easy/*.json"))
        for row in json.loads(path.read_text())["display"]["cells"]
        for cell in row
    )
    assert tally.doubted == visible_display_tiles > 0
    assert tally.abstained > tally.doubted
    missed = sum(tally.misses.values())
    assert missed > 0 and tally.miss_reasons == {"poor fit": missed}
    assert tally.misses_line().endswith(f"(the matcher's reasons: {missed} poor fit)")
    row = bench_scenes.scenes_row("here", "box", "easy", tally)
    assert row.doubted_pct == pytest.approx(100.0 * tally.doubted / tally.cells)


def test_a_wrong_tile_is_counted_wrong_and_a_covered_one_covered_and_wrong(
    scenes: Scenes, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    root = tmp_path / "scenes"
    shutil.copytree(scenes.root, root)
    first = root / "sets" / "easy" / "00.json"
    truth = json.loads(first.read_text())
    truth["display"]["cells"][0][1]["occluded"] = 0.15  # covered from 15 %
    first.write_text(json.dumps(truth))
    volcano = next(t.id for t in scenes.pack.catalogue if t.meaning.kind.value == "volcano")
    water = next(t.id for t in scenes.pack.catalogue if t.meaning.kind.value == "water")

    def misread(table: TableRead) -> TableRead:
        rows = [list(row) for row in table.display]
        for c in (0, 1):  # whichever tile lies there, one of these two means something else
            got = rows[0][c]
            rows[0][c] = CellRead(water if got and got.tile == volcano else volcano, 0, 0.75)
        return replace(table, display=tuple(tuple(row) for row in rows))

    _reader(scenes, monkeypatch, misread)
    tally = run_scenes(open_scenes(root))["easy"]
    assert tally.wrong == 4  # two cells a table, one of them covered on the first
    assert tally.covered_wrong == 1
    assert tally.abstained == 0
    assert tally.perfect == 0
    # the covered cell's answer does not count in the calibration; the three others do
    assert (
        sorted(zip(tally.confidences, tally.answered_right, strict=True))[:3] == [(0.75, False)] * 3
    )


def test_a_failed_read_leaves_every_cell_abstained(
    scenes: Scenes, monkeypatch: pytest.MonkeyPatch
) -> None:
    def fail(_truth: TableRead) -> TableRead:
        raise TableNotFound("no markers")

    _reader(scenes, monkeypatch, fail)
    tally = run_scenes(open_scenes(scenes.root))["easy"]
    assert tally.failed_reads == 2
    assert tally.abstained == tally.cells > 0
    assert tally.seats_missed == 4
    assert tally.ship_right == 0


TILES = {
    "end": {"kind": "end", "land": "N", "palms": 1, "huts": 0, "shells": 0, "boats": 0, "lei": ""},
    "end-e": {
        "kind": "end",
        "land": "E",
        "palms": 1,
        "huts": 0,
        "shells": 0,
        "boats": 0,
        "lei": "",
    },
    "fire": {
        "kind": "volcano",
        "land": "NESW",
        "palms": 0,
        "huts": 0,
        "shells": 0,
        "boats": 0,
        "lei": "",
    },
}


def test_meanings_are_compared_turned_and_a_volcano_alike_in_any_rotation() -> None:
    assert meaning(TILES, "end", 90) == meaning(TILES, "end-e", 0)
    assert meaning(TILES, "end", 0) != meaning(TILES, "end-e", 0)
    assert meaning(TILES, "fire", 90) == meaning(TILES, "fire", 0)
    assert meaning(TILES, "nothing", 0) is None


def _truth(seats: dict[str, Any]) -> dict[str, Any]:
    cells = [[{"empty": True} for _ in range(4)] for _ in range(4)]
    return {"display": {"cells": cells, "ship": 2}, "seats": seats}


def test_a_seat_read_that_is_not_on_the_table_counts_sixteen_wrong() -> None:
    empty = CellRead(empty=True, confidence=0.9)
    grid = tuple(tuple(empty for _ in range(4)) for _ in range(4))
    tally = SetTally()
    score_scene(_truth({}), TableRead(grid, 2, {3: SeatRead(grid)}), TILES, tally)
    # the display's 16 right, and 16 wrong for the phantom (counted among the cells too)
    assert (tally.cells, tally.wrong, tally.phantom_seats, tally.perfect) == (32, 16, 1, 0)


def test_a_seat_not_seen_is_missed_and_its_cells_abstained() -> None:
    empty = CellRead(empty=True, confidence=0.9)
    grid = tuple(tuple(empty for _ in range(4)) for _ in range(4))
    seat = {"cells": [[{"empty": True}] * 4] * 4, "storage": {"empty": True}}
    tally = SetTally()
    score_scene(_truth({"1": seat}), TableRead(grid, 2, {}), TILES, tally)
    assert (tally.right, tally.abstained, tally.seats_missed, tally.ship_right) == (16, 16, 1, 1)


def test_the_rendered_rows_calibration_is_of_the_answered_visible_cells() -> None:
    tally = Tally(
        scenes=1,
        visible=4,
        wrong=1,
        confidences=[0.9, 0.9, 0.9, 0.9],
        answered_right=[True, True, True, False],
    )
    row = rendered_row("ink", "easy", tally)
    assert row.ece == pytest.approx(0.15)
    assert row.wrong_pct == 25.0


def test_a_folder_without_a_pack_or_truth_is_one_sentence(tmp_path: Path, scenes: Scenes) -> None:
    with pytest.raises(DataError, match=r"no pack/pack\.toml"):
        open_scenes(tmp_path)
    root = tmp_path / "scenes"
    shutil.copytree(scenes.root, root)
    (root / "sets" / "easy" / "01.json").unlink()
    with pytest.raises(DataError, match=r"01\.jpg: has no truth"):
        open_scenes(root)
    (root / "sets" / "easy" / "01.json").write_text('{"display": {}}')
    with pytest.raises(DataError, match=r"01\.json: a scene's truth needs"):
        open_scenes(root)


def test_the_bench_reads_a_scenes_folder_without_rendering_and_writes_a_row_per_set(
    scenes: Scenes,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    _reader(scenes, monkeypatch, lambda truth: truth)
    out = tmp_path / "rows.csv"
    assert (
        main(
            ["bench", "vision", "--no-render", "--scenes-dir", str(scenes.root), "--csv", str(out)]
        )
        == 0
    )
    text = capsys.readouterr().out
    assert f"--scenes-dir {scenes.root} --no-render" in text
    assert "easy: " in text and "0 wrong (0.00%)" in text
    rows = list(csv.DictReader(out.open()))
    assert [(r["source"], r["set"], r["wrong"], r["scenes"]) for r in rows] == [
        (scenes.root.name, "easy", "0", "2")
    ]


def test_the_bench_refuses_no_render_without_scenes_and_a_folder_that_is_not_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["bench", "vision", "--no-render"]) == 2
    assert "--no-render" in capsys.readouterr().err
    assert main(["bench", "vision", "--scenes-dir", str(tmp_path)]) == 2
    assert "not a scenes folder" in capsys.readouterr().err


def test_the_side_by_side_table_keeps_its_columns_under_long_pack_names() -> None:
    tally = Tally(scenes=1, visible=4, confidences=[0.9], answered_right=[True])
    rows = [
        rendered_row("synthetic random art (seed 1300)", "easy", tally),
        rendered_row("ink", "hard", tally),
    ]
    lines = bench_scenes.rows_table(rows).splitlines()
    assert len(lines) == 3
    assert len({len(line) for line in lines}) == 1


def test_keys_a_pack_leaves_out_take_their_defaults() -> None:
    short = {"water": {"kind": "water", "boats": 1}}
    full = {
        "water": {
            "kind": "water",
            "land": "",
            "palms": 0,
            "huts": 0,
            "shells": 0,
            "boats": 1,
            "lei": "",
        }
    }
    assert meaning(short, "water", 90) == meaning(full, "water", 90) is not None


def test_a_miss_says_what_the_proposal_has_that_the_tile_lacks() -> None:
    tiles: dict[str, dict[str, Any]] = {
        "w": {"kind": "water"},
        "w-lei": {"kind": "water", "lei": "N"},
        "w-lei-e": {"kind": "water", "lei": "E"},
        "e-p1": {"kind": "end", "land": "E", "palms": 1},
        "e-p2-h": {"kind": "end", "land": "E", "palms": 2, "huts": 1},
        "s": {"kind": "single"},
    }
    plain, lei = {"tile": "w"}, {"tile": "w-lei"}
    assert bench_scenes.miss(plain, CellRead("w-lei"), tiles) == "a lei half more"
    assert bench_scenes.miss(lei, CellRead("w"), tiles) == "a lei half fewer"
    assert bench_scenes.miss(lei, CellRead("w-lei-e"), tiles) == "a lei half elsewhere"
    assert bench_scenes.miss(lei, CellRead("w-lei", 90), tiles) == "another turn"
    assert bench_scenes.miss({"tile": "e-p1"}, CellRead("e-p2-h"), tiles) == (
        "palms more and huts more"
    )
    assert bench_scenes.miss({"tile": "e-p1"}, CellRead("e-p1", 90), tiles) == "another turn"
    assert bench_scenes.miss({"tile": "e-p1"}, CellRead("e-p2-h", 90), tiles) == "another island"
    assert bench_scenes.miss({"tile": "s"}, CellRead("w"), tiles) == "another island"
    assert bench_scenes.miss({"empty": True}, CellRead("w"), tiles) == "a tile on an empty cell"
    tally = bench_scenes.SetTally()
    for truth, proposed in [(plain, "w-lei"), (plain, "w-lei"), (plain, "w"), (lei, "w")]:
        bench_scenes.judge_cell(truth, UNKNOWN, tiles, tally, CellRead(proposed))
    bench_scenes.judge_cell({**plain, "occluded": 0.5}, UNKNOWN, tiles, tally, CellRead("s"))
    assert (tally.abstained, tally.doubted, tally.covered_unknown) == (4, 1, 1)
    assert tally.misses == {"a lei half more": 2, "a lei half fewer": 1}
    assert tally.misses_line() == "2 a lei half more; 1 a lei half fewer"
    assert bench_scenes.SetTally().misses_line() == "none"
    assert tally.misses_line(most=1) == "2 a lei half more; 1 more"
    assert bench_scenes.miss(lei, CellRead(None, empty=True), tiles) == "empty"
    assert bench_scenes.miss(lei, CellRead("gone"), tiles) == "another island"
