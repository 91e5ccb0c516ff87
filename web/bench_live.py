"""`companion bench live`: button press → Server-Sent Event at the phones.

A five-seat synthetic table (the demo's renderer as the camera, the real recogniser, motion
gate, tracker and Session), the real web app under waitress on 127.0.0.1, and N simulated
phones each holding an event stream. For every press it measures, at every phone:
- press → the first event (the page shows "reading the table"), and
- press → the event of the recorded turn (after the table is still and has been read).
The second includes the motion gate's wait for a still table (`--still`, seconds), which is
a setting, not a cost; the figures print it separately.
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

from companion.bots import GreedyPlayer
from companion.game import Seat, new_game
from companion.rules import rules_for
from companion.session import Session
from hardware.buttons import TurnDone
from hardware.camera import SyntheticSource
from hardware.config import CameraConfig
from hardware.live import LiveSettings, LiveTable
from web.bench_load import phone_address


class Phone(threading.Thread):
    """One phone: an open event stream, recording when each event arrives."""

    def __init__(self, port: int, index: int = 0) -> None:
        super().__init__(daemon=True)
        self.port = port
        self.source = phone_address(index)
        self.arrivals: list[float] = []
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


def measure(phones: int, presses: int, still: float, seed: int, cache: Path) -> dict[str, Any]:
    from vision.config import MotionConfig
    from vision.motion import MotionGate
    from vision.pack import load_pack
    from vision.read import read_table
    from vision.render import CameraSpec, Effects, render_table
    from vision.table_scene import scene_for_state
    from web.app import create_app
    from web.demo import pack_for_demo
    from web.serve import Server
    from web.settings import WebSettings

    pack = load_pack(pack_for_demo("lagoon", cache))
    seats = [Seat(n, i + 1) for i, n in enumerate(("A", "B", "C", "D", "E"))]
    world = new_game(seats, seed=seed, catalogue=pack.catalogue)
    session = Session(pack.catalogue)
    session.start_game(seats, display=world.display, ship=world.ship, seed=seed)
    rules = rules_for(world.variant, world.matching)
    spec = CameraSpec.overhead()

    def render() -> np.ndarray:
        rendered = render_table(
            scene_for_state(world), pack, spec, Effects.easy(), np.random.default_rng(0)
        )
        image: np.ndarray = rendered.image
        return image

    camera = SyntheticSource(render, config=CameraConfig(kind="synthetic"))
    camera.open()
    live = LiveTable(
        session,
        camera,
        lambda image: read_table(image, pack),
        MotionGate(MotionConfig(still_seconds=still)),
        settings=LiveSettings(preview_interval_s=0.05),
    )
    app = create_app(session, WebSettings(host="127.0.0.1", port=0, pin="0000", advertise=False))
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
    recorded: list[float] = []
    pipeline: list[float] = []
    try:
        for n in range(presses):
            game = session.game
            assert game is not None
            bot = GreedyPlayer(random.Random(seed + n))
            turn = bot.choose(rules, world)
            rules.apply(world, turn)
            camera.capture()  # the camera sees the new table
            before = [len(p.arrivals) for p in listeners]
            done = len(game.records)
            t0 = time.perf_counter()
            live.events.put(TurnDone(None, time.monotonic()))
            while len(game.records) == done and time.perf_counter() - t0 < 30:
                time.sleep(0.005)
            t_record = time.perf_counter()
            if session.question is not None:
                session.confirm(0)
            time.sleep(0.3)
            pipeline.append(t_record - t0)
            for phone, count in zip(listeners, before, strict=True):
                arrivals = phone.arrivals[count:]
                if arrivals:
                    first.append(arrivals[0] - t0)
                late = [a for a in arrivals if a >= t_record]
                if late:
                    recorded.append(late[0] - t0)
    finally:
        stop.set()
        server.close()
        camera.close()

    def stats(values: list[float]) -> dict[str, float]:
        ms = sorted(v * 1000 for v in values) or [float("nan")]
        return {"median_ms": statistics.median(ms), "worst_ms": ms[-1], "samples": len(values)}

    return {
        "phones": phones,
        "presses": presses,
        "still_seconds": still,
        "press_to_first_event": stats(first),
        "press_to_recorded_turn_event": stats(recorded),
        "press_to_turn_recorded_in_session": stats(pipeline),
    }


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--phones", default="1,20", help="phone counts to measure (1,20)")
    parser.add_argument("--presses", type=int, default=10, help="presses per run (10)")
    parser.add_argument("--still", type=float, default=0.3, help="motion gate wait, s (0.3)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--cache", default=str(Path.home() / ".cache" / "maori-companion"))
    parser.add_argument("--json", action="store_true")


def run(args: argparse.Namespace) -> int:
    results = [
        measure(int(n), args.presses, args.still, args.seed, Path(args.cache))
        for n in args.phones.split(",")
    ]
    if args.json:
        print(json.dumps(results, indent=2))
        return 0
    for r in results:
        a, b = r["press_to_first_event"], r["press_to_recorded_turn_event"]
        print(
            f"{r['phones']:>3} phones, 5 seats: press -> first event "
            f"median {a['median_ms']:.0f} ms, "
            f"worst {a['worst_ms']:.0f} ms; press -> recorded turn at the phones median "
            f"{b['median_ms']:.0f} ms, worst {b['worst_ms']:.0f} ms "
            f"(of which the gate waits {r['still_seconds'] * 1000:.0f} ms for a still table)"
        )
    return 0
