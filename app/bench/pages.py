"""`companion bench pages [--pages N]`: how fast the phone pages are served and told.

Measures what a game night feels: the size and serving time of /api/state in the middle of a
four-player game, and how long one change takes to reach N open pages over waitress on
127.0.0.1 (the event, not the state fetch that follows). Nothing here is asserted in tests.
"""

from __future__ import annotations

import argparse
import http.client
import random
import statistics
import threading
import time

from companion.bots import GreedyPlayer
from companion.game import Seat
from companion.session import Session
from web.app import create_app
from web.serve import Server
from web.settings import WebSettings

ROUNDS = 5
STATE_FETCHES = 200


def _mid_game(turns: int = 30) -> Session:
    session = Session()
    session.start_game([Seat(name, i + 1) for i, name in enumerate("ABCD")], seed=1)
    bot = GreedyPlayer(random.Random(1))
    for _ in range(turns):
        game = session.game
        assert game is not None
        session.play(bot.choose(game.rules, game.state))
    return session


def _next_state_event(response: http.client.HTTPResponse) -> None:
    while True:
        line = response.readline()
        if not line:
            raise ConnectionError("the event stream ended")
        if line.startswith(b"event: state"):
            while response.readline().strip():
                pass
            return


def measure(pages: int) -> list[str]:
    """The benchmark's lines of output."""
    session = _mid_game()
    settings = WebSettings(host="127.0.0.1", port=0, pin="000000", advertise=False)
    app = create_app(session, settings)
    client = app.test_client()
    size = len(client.get("/api/state").data)
    times = []
    for _ in range(STATE_FETCHES):
        start = time.perf_counter()
        client.get("/api/state")
        times.append(time.perf_counter() - start)
    lines = [
        f"/api/state mid-game (4 players, 30 turns): {size / 1024:.1f} KiB, "
        f"median {statistics.median(times) * 1000:.2f} ms to build"
    ]
    server = Server(app)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    connections = []
    try:
        for _ in range(pages):
            connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
            connection.request("GET", "/events")
            response = connection.getresponse()
            _next_state_event(response)
            connections.append((connection, response))
        worst = []
        for round_ in range(ROUNDS):
            arrived: list[float] = []

            def read(response: http.client.HTTPResponse, arrived: list[float] = arrived) -> None:
                _next_state_event(response)
                arrived.append(time.perf_counter())

            readers = [threading.Thread(target=read, args=(r,)) for _, r in connections]
            for reader in readers:
                reader.start()
            time.sleep(0.2)  # every reader is waiting
            start = time.perf_counter()
            session.note("note", f"benchmark change {round_ + 1}")
            for reader in readers:
                reader.join(10)
            worst.append((max(arrived) - start) * 1000)
        lines.append(
            f"one change reaches all {pages} open pages (waitress, 127.0.0.1): "
            f"worst {max(worst):.1f} ms, median round {statistics.median(worst):.1f} ms"
        )
    finally:
        for connection, _ in connections:
            connection.close()
        server.close()
        thread.join(10)
    return lines


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--pages", type=int, default=40, help="open pages (default 40)")


def run(args: argparse.Namespace) -> int:
    for line in measure(args.pages):
        print(line)
    return 0
