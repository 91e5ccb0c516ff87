"""How well and how fast the table is read: rendered scenes, read back, compared with truth.

`run_bench` draws a tile pack in an art style the recogniser was not tuned on (it was tuned
on "lagoon"; the default here is "ink" and a "random" pack whose seed depends on the run's
seed), renders easy and hard scenes of a 5-seat table (vision.synthetic.scene,
vision.synthetic.render), reads each frame with the whole pipeline (vision.reader.read.TableReader:
markers, poses, crops, cells, ship) and counts, per difficulty:

- wrong cells: a tile, its rotation (by meaning: equal rotated meanings are the same answer)
  or empty, answered wrongly on a cell the camera can see;
- abstentions: unknown on a cell the camera can see;
- covered cells (hidden by at least 30 %, renderer's truth) answered wrongly: must be 0;
- scenes read perfectly (every visible cell right, the ship right when it is not covered);
- the ship: right / not seen / wrong, over scenes where it is not covered;
- calibration: the expected calibration error (vision.box.judge.calibration_error, 10 bins) of
  the confidences of the visible cells answered (tile or empty), against right or wrong;
- time: the whole read of a 2880 x 1620 frame beside the time to decode that frame's JPEG,
  measured in the same run, in the same process, each the fastest of TIMED_RUNS runs on
  the frame (the machine's other work otherwise swings a read by 10-20 %); the median first
  read of a fresh frame is reported beside it (its caches cold after the rendering), and
  where the fastest read's time went, stage by stage (vision.reader.read.TableView.timings: what
  must run before the cells can be dealt out to the workers, the cells, the storage after).

`--true-poses` reads the cells through the renderer's exact homographies instead of the
markers: it measures the recogniser alone. Each mistake is listed with its pack, difficulty
and table; `--keep-mistakes DIR` writes each table with one as the very frame read (PNG)
beside a copy of its pack, so that `companion read FRAME --pack DIR/<style>/pack` shows it
again.
"""

from __future__ import annotations

import shutil
import statistics
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from companion.catalogue import Catalogue
from companion.reading import CellRead, SeatRead, TableRead
from vision import kit
from vision.box.pack import Pack, load_pack
from vision.box.tilemodel import TileModel
from vision.config import VisionConfig
from vision.reader.areas import AreaPose, cell_crop, picture_crop, storage_size_mm, tile_crop_mm
from vision.reader.lens import Lens
from vision.reader.read import TableView
from vision.synthetic.render import CameraSpec, Effects, Rendered, random_camera, render_table
from vision.synthetic.scene import (
    DISPLAY,
    STORAGE_ROW,
    TableScene,
    hand_over_storage,
    keyed_cells,
    random_scene,
)

#: Difficulties benchmarked: (name, effects, the camera's largest tilt off vertical).
DIFFICULTIES: tuple[tuple[str, Callable[[], Effects], float], ...] = (
    ("easy", Effects.easy, 10.0),
    ("hard", Effects.hard, kit.CAMERA_TILT_MAX_DEG),
)
#: Quality of the JPEG whose decode the read is compared with (a camera's usual).
DECODE_QUALITY = 90
#: A frame's read and its decode are each timed as the fastest of this many runs.
TIMED_RUNS = 3
#: The report lists this many mistakes (wrong cells, covered cells answered, ships).
MISTAKES_LISTED = 20


@dataclass
class Tally:
    """What one difficulty's scenes came to."""

    scenes: int = 0
    perfect: int = 0
    visible: int = 0
    wrong: int = 0
    abstained: int = 0
    covered: int = 0
    covered_wrong: int = 0
    ship_scenes: int = 0
    ship_right: int = 0
    ship_missed: int = 0
    ship_wrong: int = 0
    storage_seen: int = 0  # storage slots (counted in the cells too)
    storage_abstained: int = 0
    storage_wrong: int = 0
    storage_covered: int = 0
    storage_covered_wrong: int = 0
    # abstained cells the matcher proposed rightly: the judge's doubt (the others are the
    # matcher's miss: no proposal, or a wrong one)
    doubted: int = 0
    read_ms: list[float] = field(default_factory=list)  # each frame's fastest
    first_read_ms: list[float] = field(default_factory=list)  # each frame's first
    decode_ms: list[float] = field(default_factory=list)
    # each frame's fastest read's stages (vision.reader.read.TableView.timings), in ms
    stage_ms: dict[str, list[float]] = field(default_factory=dict)
    examples: list[str] = field(default_factory=list)
    # the answered visible cells: confidence, and whether the answer was right
    confidences: list[float] = field(default_factory=list)
    answered_right: list[bool] = field(default_factory=list)

    def calibration_error(self) -> float:
        """Expected calibration error of the answered visible cells (10 bins)."""
        from vision.box.judge import calibration_error

        return calibration_error(
            np.asarray(self.confidences, dtype=np.float64),
            np.asarray(self.answered_right, dtype=np.bool_),
        )

    def line(self, name: str) -> str:
        """One paragraph of figures for this difficulty."""

        def pct(n: int, d: int) -> str:
            return f"{100.0 * n / d:.2f} %" if d else "-"

        read = statistics.median(self.read_ms) if self.read_ms else float("nan")
        first = statistics.median(self.first_read_ms) if self.first_read_ms else float("nan")
        decode = statistics.median(self.decode_ms) if self.decode_ms else float("nan")
        return "\n".join(
            [
                f"{name}: {self.scenes} scenes, {self.visible} visible cells, "
                f"{self.covered} covered",
                f"  wrong cells        {self.wrong} ({pct(self.wrong, self.visible)})",
                f"  abstained          {self.abstained} ({pct(self.abstained, self.visible)}): "
                f"the matcher's proposal right in {self.doubted}, the judge's doubt",
                f"  covered, wrong     {self.covered_wrong}",
                f"  scenes perfect     {self.perfect} / {self.scenes}",
                f"  ship right         {self.ship_right} / {self.ship_scenes} "
                f"({pct(self.ship_right, self.ship_scenes)}), not seen {self.ship_missed}, "
                f"wrong {self.ship_wrong}",
                f"  storage slots      {self.storage_seen} seen: abstained "
                f"{self.storage_abstained}, wrong {self.storage_wrong}; "
                f"{self.storage_covered} covered: wrong {self.storage_covered_wrong}",
                f"  calibration        ECE {self.calibration_error():.3f} over "
                f"{len(self.confidences)} answered visible cells",
                f"  read (median)      {read:.0f} ms; JPEG decode {decode:.1f} ms; "
                f"ratio {read / decode:.1f}x (a fresh frame's first read {first:.0f} ms)",
                *([self.stages_line()] if self.stage_ms else []),
            ]
        )

    def stages_line(self) -> str:
        """Where the read's time goes, the median of each stage (vision.reader.read.TableView):
        what runs before the cells are dealt out, the cells (the ship beside them), after."""

        def ms(stage: str) -> str:
            values = self.stage_ms.get(stage)
            return f"{statistics.median(values):.1f}" if values else "-"

        return (
            f"  stages (median)    grey {ms('grey')}, markers {ms('markers')}, areas "
            f"{ms('areas')}, crops {ms('crops')}, cells {ms('cells')} (waiting for the "
            f"workers {ms('waiting')}; the ship beside them {ms('ship')}), storage "
            f"{ms('storage')} ms"
        )


def same_answer(read: CellRead, truth: CellRead, catalogue: Catalogue) -> bool:
    """True when a read names what truly lies there (equal rotated meanings are equal)."""
    if truth.empty or read.empty:
        return truth.empty and read.empty
    if read.tile is None or truth.tile is None:
        return False
    if read.tile not in catalogue:
        return False
    seen = catalogue.meaning(read.tile).rotated(read.rotation)
    return seen == catalogue.meaning(truth.tile).rotated(truth.rotation)


def proposals(view: TableView, model: TileModel | None) -> dict[Any, CellRead | None]:
    """What the matcher proposed for each cell of a read (vision.reader.read.TableView.matches),
    by slot: the tile it weighed last, or None; nothing when the cell network read it (no
    templates, no matches)."""
    if model is None:
        return {}
    return {
        slot: None
        if m.proposal is None
        else CellRead(model.ids[m.proposal], model.rotations[m.proposal])
        for slot, m in view.matches.items()
    }


def reasons(view: TableView) -> dict[Any, str]:
    """Why the matcher left each cell of a read unknown (CellMatch.reason), by slot."""
    return {slot: m.reason for slot, m in view.matches.items()}


def score_read(
    read: TableRead,
    rendered: Rendered,
    scene: TableScene,
    catalogue: Catalogue,
    tally: Tally,
    proposed: dict[Any, CellRead | None] | None = None,
) -> None:
    """Add one frame's read, judged against the renderer's truth, to the tally (`proposed`:
    the matcher's proposals by slot, `proposals`, to tell the judge's doubt from the
    matcher's miss among the cells left unknown)."""
    got = dict(keyed_cells(read))
    perfect = True
    for key, truth in keyed_cells(rendered.truth):
        if truth is None:
            continue
        cell = got.get(key)
        answer = cell if cell is not None else CellRead()
        storage = key[1] == STORAGE_ROW
        if key in rendered.covered:
            tally.covered += 1
            tally.storage_covered += storage
            if not answer.unknown and not same_answer(answer, truth, catalogue):
                tally.covered_wrong += 1
                tally.storage_covered_wrong += storage
                tally.examples.append(f"covered {key}: {truth.to_json()} read {answer.to_json()}")
            continue
        tally.visible += 1
        tally.storage_seen += storage
        if answer.unknown:
            tally.abstained += 1
            tally.storage_abstained += storage
            guess = (proposed or {}).get(key)
            tally.doubted += guess is not None and same_answer(guess, truth, catalogue)
            perfect = False
            continue
        right = same_answer(answer, truth, catalogue)
        tally.confidences.append(float(answer.confidence))
        tally.answered_right.append(right)
        if not right:
            tally.wrong += 1
            tally.storage_wrong += storage
            perfect = False
            tally.examples.append(f"wrong {key}: {truth.to_json()} read {answer.to_json()}")
    if scene.ship is not None and not rendered.ship_covered:
        tally.ship_scenes += 1
        if read.ship == scene.ship:
            tally.ship_right += 1
        elif read.ship is None:
            tally.ship_missed += 1
            perfect = False
            tally.examples.append(f"ship at {scene.ship}: not seen")
        else:
            tally.ship_wrong += 1
            perfect = False
            tally.examples.append(f"ship at {scene.ship}: read at {read.ship}")
    tally.scenes += 1
    tally.perfect += int(perfect)


def decode_ms(image: np.ndarray[Any, Any], repeats: int = TIMED_RUNS) -> float:
    """The fastest of a few decodes of the frame as a camera JPEG, in ms."""
    ok, data = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, DECODE_QUALITY])
    if not ok:
        raise RuntimeError("the frame could not be encoded as JPEG")
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        cv2.imdecode(data, cv2.IMREAD_COLOR)
        best = min(best, time.perf_counter() - start)
    return 1000.0 * best


def read_with_true_poses(
    rendered: Rendered, scene: TableScene, pack: Pack, config: VisionConfig
) -> TableRead:
    """Read the frame's cells and ship through the renderer's exact homographies (the
    board cells read empty weighed against the whole table and the storage slots against
    the table round them, as vision.reader.read does)."""
    from vision.box.tilemodel import learn_pack
    from vision.reader.read import storage_against_table, table_reads, weighed
    from vision.reader.recognise import match_cells
    from vision.reader.ship import read_ship_in_frame

    tile_mm = pack.tile_mm
    ppm = config.crops.px_per_mm
    size = tile_crop_mm(tile_mm, config.crops.crop_margin_mm)
    model = learn_pack(pack, ppm, config.cells)
    geo = kit.DisplayGeometry(tile_mm)
    display = AreaPose(DISPLAY, rendered.homographies[DISPLAY], (0, 1, 2, 3), 0.0, geo)
    crops = [
        cell_crop(rendered.image, display, geo.cell_centre(r, c), size, ppm)
        for r in range(4)
        for c in range(4)
    ]
    matches = match_cells(crops, model, light_groups=[DISPLAY] * len(crops))
    slots: list[tuple[Any, int, int]] = [(DISPLAY, r, c) for r in range(4) for c in range(4)]
    poses: dict[int, AreaPose] = {}
    for seat in scene.seats:
        layout = pack.catalogue.board(seat.side)
        sgeo = kit.SeatGeometry(seat.seat, layout.rows, layout.cols, tile_mm)
        pose = AreaPose(seat.seat, rendered.homographies[seat.seat], (), 0.0, sgeo)
        poses[seat.seat] = pose
        board = pack.boards[seat.side]
        extent = (layout.cols * sgeo.pitch, layout.rows * sgeo.pitch)
        where = list(layout.playable_cells)
        crops = [
            cell_crop(rendered.image, pose, sgeo.cell_centre(*cell), size, ppm) for cell in where
        ]
        refs: list[np.ndarray[Any, Any] | None] = [
            picture_crop(board, extent, sgeo.cell_centre(*cell), size, ppm) for cell in where
        ]
        crops.append(
            cell_crop(
                rendered.image,
                pose,
                sgeo.storage_centre(),
                storage_size_mm(sgeo, config.crops.crop_margin_mm),
                ppm,
            )
        )
        refs.append(None)
        matches += match_cells(crops, model, refs)
        slots += [(seat.seat, r, c) for r, c in [*where, (STORAGE_ROW, 0)]]
    matches = weighed(matches, slots, config.cells)
    reads = dict(zip(slots, table_reads(matches, pack, config), strict=True))
    if scene.seats:
        reads.update(
            storage_against_table(
                rendered.image,
                poses,
                reads,
                pack.catalogue.board(scene.seats[0].side),
                tile_mm,
                config,
            )
        )
    grid = tuple(tuple(reads[(DISPLAY, r, c)] for c in range(4)) for r in range(4))
    seats: dict[int, SeatRead] = {}
    for seat in scene.seats:
        layout = pack.catalogue.board(seat.side)
        seat_grid = tuple(
            tuple(
                reads.get((seat.seat, r, c)) if layout.playable((r, c)) else None
                for c in range(layout.cols)
            )
            for r in range(layout.rows)
        )
        seats[seat.seat] = SeatRead(seat_grid, reads[(seat.seat, STORAGE_ROW, 0)])
    ship = read_ship_in_frame(rendered.image, display, pack, config)
    return TableRead(grid, ship, seats)


def bench_pack_seed(style: str, seed: int) -> int:
    """The seed of the `style` pack a benchmark run of seed `seed` draws: a random pack's is
    1000 + the run's seed (never a pack looked at while tuning; the cell network learns from
    packs of seeds 0-1499 and 2000-2599, vision.cellnet.data.learning_seeds, so its figures
    take runs of seed 500-999), any other style's 0."""
    return 1000 + seed if style == "random" else 0


@contextmanager
def drawn_pack(style: str, seed: int) -> Iterator[Pack]:
    """A freshly drawn art pack (vision.synthetic.artpacks), deleted afterwards."""
    from vision.synthetic.artpacks import write_art_pack

    with tempfile.TemporaryDirectory(prefix="bench-pack-") as tmp:
        yield load_pack(write_art_pack(Path(tmp) / style, style, seed=seed))


def bench_pack(
    pack: Pack,
    scenes: int,
    seed: int,
    *,
    true_poses: bool = False,
    config: VisionConfig | None = None,
    seats: int = 5,
    difficulties: tuple[str, ...] = ("easy", "hard"),
    progress: Callable[[str], None] | None = None,
    storage_cards: bool = True,
    storage_hands: bool = False,
    table_top: str = "wood",
    keep_mistakes: Path | None = None,
    lens_k: float = 0.0,
    straighten: bool = False,
) -> dict[str, Tally]:
    """Render and read `scenes` scenes of each difficulty with one pack (through a camera
    lens of bend `lens_k`, vision.reader.lens; each frame straightened before it is read, inside
    the read's time, with `straighten`; without
    `storage_cards`, the storage slots lie on the bare table; with `storage_hands`, one more
    hand lies over one seat's slot, placed by its own random numbers; on a `table_top` of
    vision.synthetic.scene.TABLE_TOPS: the same scenes otherwise). Each mistake is named by its
    difficulty and table; with `keep_mistakes`, every table with one is written there as
    the very frame read (`keep_table`) and the pack beside it."""
    from vision.reader.read import TableReader

    config = config or VisionConfig()
    tallies: dict[str, Tally] = {}
    with TableReader(pack, config=config) as reader:
        for name, effects, tilt in DIFFICULTIES:
            if name not in difficulties:
                continue
            rng = np.random.default_rng([seed, len(name)])
            hands = np.random.default_rng([seed, len(name), 77])
            tally = tallies.setdefault(name, Tally())
            for i in range(scenes):
                scene = random_scene(pack.catalogue, rng, seats, "front", name)  # type: ignore[arg-type]
                scene = replace(scene, storage_cards=storage_cards, table_top=table_top)
                if storage_hands:
                    scene = hand_over_storage(scene, pack.catalogue, hands)
                spec: CameraSpec = random_camera(rng, scene, pack, max_tilt_deg=tilt)
                rendered = render_table(scene, pack, replace(spec, lens_k=lens_k), effects(), rng)
                tally.decode_ms.append(decode_ms(rendered.image))
                times = []
                stages: dict[str, float] = {}
                proposed: dict[Any, CellRead | None] = {}
                for run in range(TIMED_RUNS):
                    start = time.perf_counter()
                    timings: dict[str, float] = {}
                    if true_poses:
                        got = read_with_true_poses(rendered, scene, pack, config)
                    else:
                        frame = rendered.image
                        if straighten:
                            frame = Lens(lens_k).straighten(frame)
                        got, view = reader.read_view(frame)
                        timings = view.timings
                    times.append(1000.0 * (time.perf_counter() - start))
                    if times[-1] == min(times):
                        stages = timings
                    if run == 0:
                        read = got
                        if not true_poses:
                            proposed = proposals(view, reader.models.tiles)
                tally.read_ms.append(min(times))
                tally.first_read_ms.append(times[0])
                for stage, seconds in stages.items():
                    tally.stage_ms.setdefault(stage, []).append(1000.0 * seconds)
                before = len(tally.examples)
                score_read(read, rendered, scene, pack.catalogue, tally, proposed)
                if len(tally.examples) > before:
                    where = f"{pack.name}, {name} table {i + 1}"
                    if keep_mistakes is not None:
                        kept = keep_table(
                            keep_mistakes, pack, f"{name}-table{i + 1}", rendered.image
                        )
                        where += f" ({kept})"
                    tally.examples[before:] = [f"{where}: {e}" for e in tally.examples[before:]]
                if progress:
                    progress(f"{pack.name}: {name} scene {i + 1}/{scenes}")
    return tallies


def keep_table(folder: Path, pack: Pack, name: str, frame: np.ndarray[Any, Any]) -> Path:
    """Write a frame as `folder/name.png` (lossless: `companion read` sees what the bench
    read) with its pack copied to `folder/pack` the first time; returns the frame's path."""
    folder.mkdir(parents=True, exist_ok=True)
    if not (folder / "pack").exists():
        shutil.copytree(pack.root, folder / "pack")
    path = folder / f"{name}.png"
    if not cv2.imwrite(str(path), frame):
        raise OSError(f"could not write {path}")
    return path


def run_bench(
    scenes: int = 10,
    seed: int = 1,
    styles: tuple[str, ...] = ("ink", "random"),
    *,
    true_poses: bool = False,
    config: VisionConfig | None = None,
    progress: Callable[[str], None] | None = None,
    storage_cards: bool = True,
    storage_hands: bool = False,
    table_top: str = "wood",
    keep_mistakes: Path | None = None,
    lens_k: float = 0.0,
    straighten: bool = False,
) -> list[tuple[str, dict[str, Tally]]]:
    """Benchmark every style (its pack drawn with bench_pack_seed), read with `config` (the
    default thresholds unless given), the storage slots on the kit's cards or on the bare
    table, on a wooden or cloth table; the tables with a mistake kept under
    `keep_mistakes/<style>` if given (bench_pack)."""
    out: list[tuple[str, dict[str, Tally]]] = []
    for style in styles:
        pack_seed = bench_pack_seed(style, seed)
        keep = (
            None
            if keep_mistakes is None
            else keep_mistakes / (f"{style}-{pack_seed}" if style == "random" else style)
        )
        with drawn_pack(style, pack_seed) as pack:
            out.append(
                (
                    pack.name,
                    bench_pack(
                        pack,
                        scenes,
                        seed,
                        true_poses=true_poses,
                        config=config,
                        progress=progress,
                        storage_cards=storage_cards,
                        storage_hands=storage_hands,
                        table_top=table_top,
                        keep_mistakes=keep,
                        lens_k=lens_k,
                        straighten=straighten,
                    ),
                )
            )
    return out


def report(results: list[tuple[str, dict[str, Tally]]], command: str) -> str:
    """The figures as text (what docs/vision.md quotes)."""
    lines = [f"$ {command}"]
    total: dict[str, Tally] = {}
    for pack_name, tallies in results:
        lines.append(f"pack: {pack_name}")
        for name, tally in tallies.items():
            lines.append(tally.line(name))
            merged = total.setdefault(name, Tally())
            for f in (
                "scenes",
                "perfect",
                "visible",
                "wrong",
                "abstained",
                "covered",
                "covered_wrong",
                "ship_scenes",
                "ship_right",
                "ship_missed",
                "ship_wrong",
                "storage_seen",
                "storage_abstained",
                "storage_wrong",
                "storage_covered",
                "storage_covered_wrong",
                "doubted",
            ):
                setattr(merged, f, getattr(merged, f) + getattr(tally, f))
            merged.read_ms += tally.read_ms
            merged.first_read_ms += tally.first_read_ms
            merged.decode_ms += tally.decode_ms
            for stage, values in tally.stage_ms.items():
                merged.stage_ms.setdefault(stage, []).extend(values)
            merged.examples += tally.examples
            merged.confidences += tally.confidences
            merged.answered_right += tally.answered_right
    if len(results) > 1:
        lines.append("all packs")
        lines.extend(tally.line(name) for name, tally in total.items())
    examples = (
        [e for t in total.values() for e in t.examples]
        if len(results) > 1
        else [e for _n, ts in results for t in ts.values() for e in t.examples]
    )
    if examples:
        lines.append("mistakes:")
        lines.extend(f"  {e}" for e in examples[:MISTAKES_LISTED])
        if len(examples) > MISTAKES_LISTED:
            lines.append(f"  and {len(examples) - MISTAKES_LISTED} more")
    return "\n".join(lines)
