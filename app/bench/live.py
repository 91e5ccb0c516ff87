"""`companion bench live`: button press → Server-Sent Event at the phones.

A five-seat synthetic table (the demo's renderer as the camera, the incremental reader of
the demo and the service, motion gate, tracker and Session), the real web app under waitress
on 127.0.0.1, and N simulated phones each holding an event stream. For every press it
measures, at every phone:
- press → the first event (the page shows "reading the table");
- the table still → the verdict at the phones: from the moment the motion gate lets the
  read go (`LiveTable.still_at`) to the first event carrying the session version of the
  recorded turn, or of the refusal, less the synthetic camera's capture (it renders the
  frame: `LiveTable.frame_at - still_at`, reported apart; a real camera has the frame
  ready); the wait before it, press → still, is the motion gate's (`--still`, a setting,
  not a cost) and is reported apart.
Every `--refuse-every`-th press is a refused turn: a tile appears on another seat's board
besides the turn (no single turn explains it); the host then enters the turn by hand, and
the next read is a whole one, as after any refusal.
"""

from __future__ import annotations

import argparse
import http.client
import json
import random
import statistics
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np

from app.bench.load import phone_address
from companion.bots import GreedyPlayer
from companion.game import Seat, new_game
from companion.rules import rules_for
from companion.session import Session
from companion.state import GameState, Placed
from hardware.buttons import TurnDone
from hardware.camera import SyntheticSource
from hardware.config import CameraConfig
from hardware.live import LiveSettings, LiveTable


class Phone(threading.Thread):
    """One phone: an open event stream, recording when each event arrives."""

    def __init__(self, port: int, index: int = 0) -> None:
        super().__init__(daemon=True)
        self.port = port
        self.source = phone_address(index)
        self.arrivals: list[float] = []
        self.versions: list[tuple[int, float]] = []  # (session version, when it arrived)
        self.ready = threading.Event()

    def run(self) -> None:
        conn = http.client.HTTPConnection(
            "127.0.0.1", self.port, timeout=120, source_address=self.source
        )
        conn.request("GET", "/events")
        response = conn.getresponse()
        self.ready.set()
        while True:
            line = response.readline()
            if not line:
                return
            if line.startswith(b"event: state"):
                self.arrivals.append(time.perf_counter())
            elif line.startswith(b"id: "):
                self.versions.append((int(line[4:]), time.perf_counter()))


def _stats(values: list[float]) -> dict[str, float]:
    ms = sorted(v * 1000 for v in values)
    if not ms:
        return {
            "median_ms": float("nan"),
            "p90_ms": float("nan"),
            "worst_ms": float("nan"),
            "samples": 0,
        }
    return {
        "median_ms": statistics.median(ms),
        "p90_ms": float(np.percentile(ms, 90)),
        "worst_ms": ms[-1],
        "samples": len(ms),
    }


def _with_stray_tile(world: GameState, mover: int) -> GameState:
    """The table after the turn with one more tile on another seat's board: no single turn
    explains it (the tracker refuses it)."""
    shown = world.copy()
    other = shown.players[(mover + 1) % len(shown.players)]
    r, c = shown.empty_cells(other)[0]
    other.board[r][c] = Placed(shown.catalogue.tiles()[0], 0)
    return shown


def measure(
    phones: int, presses: int, still: float, seed: int, cache: Path, refuse_every: int = 0
) -> dict[str, Any]:
    from app.demo import pack_for_demo
    from companion.tracker import Accepted, Refused, Verdict
    from vision.box.pack import load_pack
    from vision.config import MotionConfig
    from vision.reader.incremental import IncrementalReader
    from vision.reader.motion import MotionGate
    from vision.synthetic.render import CameraSpec, Effects, render_table
    from vision.synthetic.table_scene import scene_for_state
    from web.app import create_app
    from web.serve import Server
    from web.settings import WebSettings

    pack = load_pack(pack_for_demo("lagoon", cache))
    seats = [Seat(n, i + 1) for i, n in enumerate(("A", "B", "C", "D", "E"))]
    world = new_game(seats, seed=seed, catalogue=pack.catalogue)
    session = Session(pack.catalogue)
    session.start_game(seats, display=world.display, ship=world.ship, seed=seed)
    rules = rules_for(world.variant, world.matching)
    spec = CameraSpec.overhead()
    shown = [world]  # the table the camera films

    def render() -> np.ndarray:
        rendered = render_table(
            scene_for_state(shown[0]), pack, spec, Effects.easy(), np.random.default_rng(0)
        )
        image: np.ndarray = rendered.image
        return image

    camera = SyntheticSource(render, config=CameraConfig(kind="synthetic"))
    camera.open()
    reader = IncrementalReader(pack)
    reader(render())  # the models loaded and the cell workers started before the presses
    reader.forget()
    live = LiveTable(
        session,
        camera,
        reader,
        MotionGate(MotionConfig(still_seconds=still)),
        settings=LiveSettings(preview_interval_s=0.05),
        clock=time.perf_counter,
    )
    verdicts: list[tuple[Verdict, int]] = []
    session.listeners.on_verdict.append(lambda v: verdicts.append((v, session.version)))
    app = create_app(session, WebSettings(host="127.0.0.1", port=0, pin="000000", advertise=False))
    server = Server(app, app.config["WEB_SETTINGS"])
    threading.Thread(target=server.run, daemon=True).start()
    stop = threading.Event()
    threading.Thread(target=live.run, args=(stop,), daemon=True).start()
    listeners = [Phone(server.port, i) for i in range(max(1, phones))]
    for phone in listeners:
        phone.start()
        phone.ready.wait(10)
    time.sleep(0.5)
    first: list[float] = []
    gate_wait: list[float] = []
    rendering: list[float] = []
    to_turn: list[float] = []
    to_refusal: list[float] = []
    reads: dict[str, list[float]] = {}
    try:
        for n in range(presses):
            game = session.game
            assert game is not None
            if game.over:
                break
            mover = world.players.index(world.mover)
            bot = GreedyPlayer(random.Random(seed + n))
            turn = rules.apply(world, bot.choose(rules, world)).turn  # with the tile drawn
            refuse = refuse_every > 0 and (n + 1) % refuse_every == 0
            shown[0] = _with_stray_tile(world, mover) if refuse else world
            camera.capture()  # the camera sees the new table
            before = [len(p.arrivals) for p in listeners]
            heard = len(verdicts)
            t0 = time.perf_counter()
            live.events.put(TurnDone(None, time.monotonic()))
            while len(verdicts) == heard and time.perf_counter() - t0 < 30:
                time.sleep(0.002)
            time.sleep(0.3)
            if len(verdicts) == heard or live.still_at is None:
                continue
            verdict, version = verdicts[-1]
            gate_wait.append(live.still_at - t0)
            assert live.frame_at is not None
            render_s = live.frame_at - live.still_at
            rendering.append(render_s)
            reads.setdefault(reader.report.kind, []).append(reader.report.seconds)
            into = to_refusal if isinstance(verdict, Refused) else to_turn
            if not isinstance(verdict, Accepted | Refused):
                into = []
            for phone, count in zip(listeners, before, strict=True):
                arrivals = phone.arrivals[count:]
                if arrivals:
                    first.append(arrivals[0] - t0)
                seen = [at for v, at in phone.versions if v >= version and at >= live.still_at]
                if seen:
                    into.append(seen[0] - live.still_at - render_s)
            if not isinstance(verdict, Accepted):  # the host enters the turn by hand
                session.dismiss()
                session.play(turn)
                shown[0] = world
    finally:
        stop.set()
        server.close()
        camera.close()
        reader.close()

    return {
        "phones": phones,
        "presses": presses,
        "still_seconds": still,
        "press_to_first_event": _stats(first),
        "press_to_still": _stats(gate_wait),
        "synthetic_capture": _stats(rendering),
        "still_to_recorded_turn_at_phones": _stats(to_turn),
        "still_to_refusal_at_phones": _stats(to_refusal),
        "reads": {kind: _stats(v) for kind, v in reads.items()},
    }


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--phones", default="1,20", help="phone counts to measure (1,20)")
    parser.add_argument("--presses", type=int, default=10, help="presses per run (10)")
    parser.add_argument("--still", type=float, default=0.3, help="motion gate wait, s (0.3)")
    parser.add_argument(
        "--refuse-every",
        type=int,
        default=4,
        metavar="N",
        help="every N-th press shows a turn the tracker refuses (4; 0: none)",
    )
    parser.add_argument("--seed", type=int, default=1, help="seed of the drawn tables (1)")
    parser.add_argument(
        "--cache",
        default=str(Path.home() / ".cache" / "maori-companion"),
        metavar="DIR",
        help="where the drawn pack is kept (~/.cache/maori-companion)",
    )
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")


def run(args: argparse.Namespace) -> int:
    results = [
        measure(int(n), args.presses, args.still, args.seed, Path(args.cache), args.refuse_every)
        for n in args.phones.split(",")
    ]
    if args.json:
        print(json.dumps(results, indent=2))
        return 0
    for r in results:
        a, w = r["press_to_first_event"], r["press_to_still"]
        t, f = r["still_to_recorded_turn_at_phones"], r["still_to_refusal_at_phones"]
        kinds = ", ".join(
            f"{k} {v['samples']} (median {v['median_ms']:.0f} ms)"
            for k, v in sorted(r["reads"].items())
        )
        print(
            f"{r['phones']:>3} phones, 5 seats: press -> first event median "
            f"{a['median_ms']:.0f} ms; the motion gate's wait (press -> still) median "
            f"{w['median_ms']:.0f} ms ({r['still_seconds'] * 1000:.0f} ms still asked); "
            f"the synthetic capture (not counted) median {r['synthetic_capture']['median_ms']:.0f} "
            f"ms; "
            f"still -> recorded turn at the phones median {t['median_ms']:.0f} ms, p90 "
            f"{t['p90_ms']:.0f} ms ({t['samples']} arrivals); still -> refusal at the phones "
            f"median {f['median_ms']:.0f} ms, p90 {f['p90_ms']:.0f} ms ({f['samples']}); "
            f"reads: {kinds}"
        )
    return 0
