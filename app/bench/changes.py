"""`companion bench changes`: does the change gate of vision.reader.incremental ever miss a change?

Bots (companion.bots.GreedyPlayer) play whole games on a rendered table (vision.synthetic.render):
each turn's frame has a lamp's glare and shadows that fall anew on every frame, sensor
noise and JPEG, a hand resting on the table in some frames, and camera shake (the camera's
aim and roll off by a little on every frame, and now and then bumped by millimetres). The
gate is run as the incremental reader runs it, without the recogniser: the table's poses
from the last whole locate (vision.reader.read.locate_table), redone when a marker moved; each
cell's look kept from the frame at which it was last read again. A cell a hand covered in
that frame (the renderer's truth: a reader answers unknown there) is read again whatever its
look, as the reader reads again every cell whose accepted answer is unknown. A cell whose content
(tile, quarter turn, or empty) differs from what it held in that frame, yet whose look the
gate takes as unchanged, is a **missed change**; the target is none. Cells read again
because the gate was unsure cost time only, and are counted too.

`--csv FILE` writes every cell's difference, changed or not (the threshold's evidence);
`--timed N` plays N turns of the demo's table (good light, no shake, no hands) through the
whole IncrementalReader with the tracker and times each read against the JPEG decode of
its frame.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import random
import statistics
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, TextIO

import cv2
import numpy as np

from app.bench.options import add_settings, settings_config
from app.board_games import NAMES
from companion.bots import GreedyPlayer
from companion.game import Seat, new_game
from companion.reading import TableRead
from companion.rules import rules_for
from companion.state import GameState
from vision.box.pack import Pack, load_pack
from vision.config import VisionConfig
from vision.reader.incremental import (
    ChangeConfig,
    IncrementalReader,
    _cell_reads,
    gate,
    kept_look,
    marker_patches,
    shifted,
    table_looks,
    table_moved,
    tile_share,
)
from vision.reader.read import Slot, cell_places, locate_table
from vision.synthetic.render import CameraSpec, Effects, render_table
from vision.synthetic.scene import scene_points
from vision.synthetic.table_scene import scene_for_state


@dataclass(frozen=True, slots=True)
class Frame:
    """One rendered turn: the frame, the truth, whether the camera was bumped, and the cells
    hidden enough that a reader should answer unknown (a hand over them)."""

    game: int
    turn: int
    image: np.ndarray
    truth: TableRead
    bumped: bool
    covered: frozenset[Any] = frozenset()


def _effects(game: int) -> Effects:
    """Alternate games: the hard lamp (glare, shadows, noise, strong JPEG) and fair light
    with one glare spot."""
    if game % 2 == 0:
        return Effects.hard()
    return Effects(
        light=0.3,
        warmth=0.3,
        glare_spots=1,
        glare_strength=0.8,
        blur_px=0.8,
        noise=3.0,
        jpeg_quality=85,
    )


def turns(pack: Pack, count: int, seed: int, *, shaken: bool = True) -> Iterator[Frame]:
    """`count` rendered turns of whole games (a new game and table when one ends)."""
    catalogue = pack.catalogue
    made = 0
    game = 0
    while made < count:
        rng = np.random.default_rng(seed * 7919 + game)
        players = int(rng.integers(2, 6))
        seats = [Seat(NAMES[i], i + 1) for i in range(players)]
        world = new_game(
            seats, seed=seed * 1000 + game, ship=int(rng.integers(16)), catalogue=catalogue
        )
        table_seed = seed * 1000 + game
        points = np.asarray(scene_points(scene_for_state(world, table_seed=table_seed), catalogue))
        centre = (float(points[:, 0].mean()), float(points[:, 1].mean()))
        span = float(np.ptp(points, axis=0).max())
        base = CameraSpec.overhead(
            roll_deg=float(rng.uniform(0, 360)), px_per_mm=0.85 * 2880 / span, look_at_mm=centre
        )
        effects = _effects(game)
        rules = rules_for(world.variant, world.matching)
        turn_number = 0
        while not world.over and made < count:
            if turn_number > 0:
                bot = GreedyPlayer(random.Random(seed * 100_003 + game * 1000 + turn_number))
                rules.apply(world, bot.choose(rules, world))
            spec, bumped = _shaken(base, rng) if shaken else (base, False)
            hands = int(rng.random() < 0.3) if shaken else 0
            scene = scene_for_state(world, table_seed=table_seed, hands=hands, rng=rng)
            rendered = render_table(scene, pack, spec, effects, rng)
            yield Frame(game, turn_number, rendered.image, rendered.truth, bumped, rendered.covered)
            turn_number += 1
            made += 1
        game += 1


def _shaken(spec: CameraSpec, rng: np.random.Generator) -> tuple[CameraSpec, bool]:
    """The camera shaken a little (aim off by ~0.3 mm, roll by ~0.03 degrees), and one frame
    in ten bumped (aim off by 2-5 mm)."""
    assert spec.look_at_mm is not None
    bumped = bool(rng.random() < 0.1)
    scale = rng.uniform(2.0, 5.0) if bumped else 0.3
    dx, dy = rng.normal(0.0, scale, 2)
    x, y = spec.look_at_mm
    return replace(
        spec,
        look_at_mm=(x + float(dx), y + float(dy)),
        roll_deg=spec.roll_deg + float(rng.normal(0.0, 0.03)),
    ), bumped


def _content(read: Any) -> tuple[str | None, int, bool]:
    return (read.tile, read.rotation if read.tile else 0, bool(read.empty))


@dataclass
class GateCount:
    """What the gate did over the turns."""

    turns: int = 0
    relocated: int = 0
    cells: int = 0
    changed: int = 0
    reread: int = 0
    unknown: int = 0  # read again as covered when last read, not compared
    missed: int = 0
    least_changed: float = float("inf")
    misses: list[str] | None = None


def run_gate(
    pack: Pack,
    frames: Iterator[Frame],
    changes: ChangeConfig,
    out: TextIO | None,
    progress: bool,
    pairs: list[tuple[Any, Any, bool]] | None = None,
) -> GateCount:
    """The gate over `frames` (vision.reader.incremental's steps, no recogniser), counted;
    every compared cell's kept look, its new look and whether it changed added to `pairs`."""
    side = "front"
    layout = pack.catalogue.board(side)
    share = tile_share(pack.tile_mm, _vision().crops.crop_margin_mm, changes)
    writer = csv.writer(out) if out is not None else None
    if writer is not None:
        writer.writerow(
            [
                "game",
                "turn",
                "area",
                "row",
                "col",
                "changed",
                "difference",
                "reread",
                "relocated",
                "bumped",
            ]
        )
    count = GateCount(misses=[])
    view = None
    patches: dict[int, Any] = {}
    looks: dict[Slot, Any] = {}
    seen: dict[Slot, int] = {}  # how many reads' looks each kept look is the mean of
    held: dict[Slot, Any] = {}
    unknown: set[Slot] = set()  # cells covered when last read
    game = -1
    for frame in frames:
        count.turns += 1
        grey = np.asarray(cv2.cvtColor(frame.image, cv2.COLOR_BGR2GRAY), np.uint8)
        moved = None if view is not None and frame.game == game else "new game"
        offsets: dict[Any, tuple[float, float]] = {}
        if moved is None and view is not None:
            moved, offsets = table_moved(patches, grey, view, changes)
        truth = frame.truth
        if moved is not None:
            # A whole read: locate, and every cell's look and content taken afresh.
            view = locate_table(frame.image, pack.tile_mm, layout, boards=pack.boards.get(side))
            patches = marker_patches(grey, view, changes)
            places, _h = cell_places(frame.image.shape, view, pack, side, _vision())
            slots = [p.slot for p in places]
            looks = table_looks(frame.image, places, changes, share)
            seen = {}
            held = {s: _content(r) for s, r in _cell_reads(truth, slots).items()}
            unknown = {s for s in slots if s in frame.covered}
            count.relocated += frame.game == game
            game = frame.game
            continue
        assert view is not None
        places, _h = cell_places(frame.image.shape, shifted(view, offsets), pack, side, _vision())
        slots = [p.slot for p in places]
        now = {s: _content(r) for s, r in _cell_reads(truth, slots).items()}
        fresh = table_looks(frame.image, places, changes, share)
        # A cell covered when it was last read was read unknown: it is read again whatever
        # its look, as the reader reads again a cell whose accepted answer is unknown.
        forced = {s for s in slots if s not in looks or s in unknown}
        for slot in forced:
            count.unknown += slot in unknown
            looks[slot], held[slot], seen[slot] = fresh[slot], now[slot], 1
            unknown.discard(slot)
            if slot in frame.covered:
                unknown.add(slot)
        compared = [s for s in slots if s not in forced]
        apart, read_again = gate(
            [looks[s] for s in compared], [fresh[s] for s in compared], changes
        )
        for slot, d, again in zip(compared, apart, read_again, strict=True):
            look = fresh[slot]
            changed = now[slot] != held[slot]
            if pairs is not None:
                pairs.append((looks[slot], look, changed))
            count.cells += 1
            count.changed += changed
            count.reread += again
            if changed:
                count.least_changed = min(count.least_changed, d)
            if changed and not again:
                count.missed += 1
                assert count.misses is not None
                count.misses.append(f"game {frame.game} turn {frame.turn} {slot}: {d:.2f}")
            if again or changed:  # a missed change is counted once
                looks[slot], held[slot], seen[slot] = look, now[slot], 1
                if slot in frame.covered:
                    unknown.add(slot)
            else:  # as the reader keeps an unchanged cell's look
                looks[slot], seen[slot] = kept_look(looks[slot], seen.get(slot, 1), look, changes)
            if writer is not None:
                writer.writerow(
                    [
                        frame.game,
                        frame.turn,
                        slot[0],
                        slot[1],
                        slot[2],
                        int(changed),
                        f"{d:.3f}",
                        int(again),
                        0,
                        int(frame.bumped),
                    ]
                )
        if progress:
            print(f"\r{count.turns} turns, {count.missed} missed", end="", file=sys.stderr)
    if progress:
        print(file=sys.stderr)
    return count


_VISION: Any = None


def _vision() -> Any:
    global _VISION
    if _VISION is None:
        from vision.config import VisionConfig

        _VISION = VisionConfig()
    return _VISION


def timed_turns(
    pack: Pack, count: int, seed: int, config: VisionConfig | None = None
) -> dict[str, Any]:
    """`count` demo turns through IncrementalReader (with `config`) and the tracker: each
    read's time and its frame's JPEG decode (quality 92, fastest of 3), the reads' kinds and
    the stages' times of the reads of what changed (ReadReport.timings)."""
    from companion.session import Session
    from companion.tracker import Accepted

    seats = [Seat(NAMES[i], i + 1) for i in range(4)]
    world: GameState = new_game(seats, seed=seed, ship=seed % 16, catalogue=pack.catalogue)
    session = Session(pack.catalogue)
    session.start_game(seats, display=world.display, ship=world.ship, seed=seed)
    rules = rules_for(world.variant, world.matching)
    spec = CameraSpec.overhead(roll_deg=float(np.random.default_rng(seed).uniform(0, 360)))
    reader = IncrementalReader(pack, config=config)
    ratios: list[float] = []
    whole: list[float] = []
    decodes: list[float] = []
    reread: list[int] = []
    stages: dict[str, list[float]] = {}
    kinds: dict[str, int] = {}
    for n in range(count + 1):
        turn = None
        if n:
            if world.over:
                break
            bot = GreedyPlayer(random.Random(seed * 100_003 + n))
            turn = bot.choose(rules, world)
            rules.apply(world, turn)
        rendered = render_table(
            scene_for_state(world, table_seed=seed),
            pack,
            spec,
            Effects.easy(),
            np.random.default_rng(seed * 1000 + n),
        )
        _, jpeg = cv2.imencode(".jpg", rendered.image, [cv2.IMWRITE_JPEG_QUALITY, 92])
        decode = []
        for _ in range(3):
            t = time.perf_counter()
            image = np.asarray(cv2.imdecode(jpeg, cv2.IMREAD_COLOR), np.uint8)
            decode.append(time.perf_counter() - t)
        t = time.perf_counter()
        read = reader(image)
        took = time.perf_counter() - t
        kinds[reader.report.kind] = kinds.get(reader.report.kind, 0) + 1
        if reader.report.kind == "changes":
            ratios.append(took / min(decode))
            reread.append(len(reader.report.reread))
            for stage, seconds in reader.report.timings.items():
                stages.setdefault(stage, []).append(1000 * seconds)
        else:
            whole.append(took / min(decode))
        decodes.append(min(decode))
        if turn is None:
            reader.accepted()  # the host checked the set-up read
            continue
        if isinstance(session.observe(read), Accepted):
            reader.accepted()
        else:  # the host enters the turn by hand; the next read is a whole one
            reader.forget()
            session.dismiss()
            session.play(turn)
        if sys.stderr.isatty():
            print(f"\r{n} of {count} timed turns", end="", file=sys.stderr)
    reader.close()
    if sys.stderr.isatty():
        print(file=sys.stderr)
    return {
        "kinds": kinds,
        "decode_ms": 1000 * statistics.median(decodes),
        "changes_in_decodes": statistics.median(ratios) if ratios else float("nan"),
        "changes_p90_in_decodes": float(np.percentile(ratios, 90)) if ratios else float("nan"),
        "whole_in_decodes": statistics.median(whole) if whole else float("nan"),
        "cells_read_again_median": statistics.median(reread) if reread else float("nan"),
        "stages_ms": {stage: statistics.median(ms) for stage, ms in stages.items()},
    }


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--turns", type=int, default=2000, help="rendered turns (2000)")
    parser.add_argument("--seed", type=int, default=1, help="seed of the rendered turns (1)")
    parser.add_argument("--style", default="lagoon", help="the drawn pack's style (lagoon)")
    parser.add_argument("--csv", metavar="FILE", help="write every cell's difference here")
    parser.add_argument(
        "--threshold",
        type=float,
        default=None,
        help="the gate's threshold (ChangeConfig.threshold)",
    )
    parser.add_argument(
        "--timed",
        type=int,
        default=0,
        metavar="N",
        help="then time N demo turns through the incremental reader (0)",
    )
    add_settings(
        parser,
        "a reader setting for --timed, e.g. read.recogniser='net' (repeatable; vision/config.py)",
    )
    parser.add_argument(
        "--cache",
        default=str(Path.home() / ".cache" / "maori-companion"),
        metavar="DIR",
        help="where the drawn pack is kept (~/.cache/maori-companion)",
    )


def run(args: argparse.Namespace) -> int:
    from app.demo import pack_for_demo

    pack = load_pack(pack_for_demo(args.style, Path(args.cache)))
    changes = ChangeConfig()
    if args.threshold is not None:
        changes = replace(changes, threshold=args.threshold)
    progress = sys.stderr.isatty()
    if args.turns > 0:
        start = time.perf_counter()
        with contextlib.ExitStack() as stack:
            out = (
                stack.enter_context(open(args.csv, "w", newline="", encoding="utf-8"))
                if args.csv
                else None
            )
            count = run_gate(pack, turns(pack, args.turns, args.seed), changes, out, progress)
        print(
            f"{count.turns} turns ({args.style} pack, seed {args.seed}), threshold "
            f"{changes.threshold:g}: {count.cells} cell looks compared, {count.changed} "
            f"changed; {count.missed} changed cells taken as unchanged; "
            f"{count.reread} read again ({100 * count.reread / max(1, count.cells):.1f} %) "
            f"and {count.unknown} covered when last read; "
            f"least difference of a changed cell {count.least_changed:.1f}; "
            f"{count.relocated} turns re-located (the table moved); "
            f"{time.perf_counter() - start:.0f} s"
        )
        for miss in (count.misses or [])[:20]:
            print(f"  missed: {miss}")
    if args.timed:
        got = timed_turns(pack, args.timed, args.seed, settings_config(args.settings))
        print(
            f"{args.timed} demo turns through the incremental reader: reads {got['kinds']}; "
            f"one decode {got['decode_ms']:.0f} ms; read of what changed "
            f"{got['changes_in_decodes']:.2f} decodes (median; p90 "
            f"{got['changes_p90_in_decodes']:.2f}), cells read again "
            f"{got['cells_read_again_median']} (median); whole read "
            f"{got['whole_in_decodes']:.2f} decodes"
        )
        stages = ", ".join(f"{stage} {ms:.1f}" for stage, ms in got["stages_ms"].items())
        print(f"  stages of a read of what changed (median ms): {stages}")
    return 0 if args.turns <= 0 or count.missed == 0 else 1
