"""`companion bench load`: does the companion stay the same size under load and over time?

Two measurements, both bounded in count and time and on the loopback address only:

- `--clients N --minutes M`: the real web app under waitress on 127.0.0.1 (a free port), a
  Session with a game, N simulated phones each holding an event stream (and fetching
  /api/state after each event, as the page does) and a driver that plays one turn a second
  (companion.bots.RandomPlayer; a new game when one ends).
- `--soak-turns T`: the demo's real pipeline headless (synthetic camera, motion gate,
  recogniser, tracker, Session; app.demo.Demo), games back to back until T turns in total.

Every sample records the process's resident memory (VmRSS), its threads (Python's and the
kernel's count) and its open files; the load run also records the events each phone got. The
table is followed by the growth per minute (load) or per 100 turns (soak), a least-squares
slope over the samples after the warm-up, and a flag when it grows. With --tracemalloc it
also records Python's own heap, flags its growth (the leak test: RSS also moves with the C
allocator) and lists the allocation sites that grew most after the warm-up.
"""

from __future__ import annotations

import argparse
import gc
import http.client
import json
import logging
import os
import random
import statistics
import threading
import time
import tracemalloc
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from app.memory import tune_allocator
from companion.bots import RandomPlayer
from companion.game import Seat
from companion.progress import terminal_progress
from companion.session import Session

#: Growth beyond these (per minute for the load run, per 100 turns for the soak) is flagged.
RSS_GROWTH_LIMIT_KIB = 1024.0
#: With --tracemalloc, growth of Python's own heap beyond this is flagged: the leak test (RSS
#: also moves with the C allocator, which keeps freed memory; see docs/load.md).
PYTHON_GROWTH_LIMIT_KIB = 512.0
THREAD_GROWTH_LIMIT = 0.5
FD_GROWTH_LIMIT = 0.5
#: The load run samples this often (seconds) and the driver plays this often.
SAMPLE_EVERY_S = 10.0
TURN_EVERY_S = 1.0
#: The soak run samples every this many turns.
SOAK_SAMPLE_TURNS = 25
#: The warm-up: the first this many minutes of the load run, turns of the soak (imports,
#: caches filling, the allocator's arenas). Growth is measured after it, and with
#: --tracemalloc Python's heap is compared between its end and the end of the run.
WARMUP_MINUTES = 1.0
WARMUP_TURNS = 50
#: How many of the allocation sites that grew most are listed.
TRACE_TOP = 10
#: Sites holding less than this at the end of the warm-up are not kept (as if they held
#: nothing): keeping every site would itself be megabytes of Python's heap during the run.
TRACE_SITE_MIN_BYTES = 16 * 1024
#: The simulated phones' socket timeout: longer than a keep-alive period of the stream.
PHONE_TIMEOUT_S = 60.0


@dataclass(frozen=True, slots=True)
class Sample:
    """The process at one moment."""

    at: float  # minutes since the start (load) or turns played (soak)
    rss_kib: int
    threads_python: int
    threads_kernel: int
    open_files: int
    events_min: int = 0
    events_max: int = 0
    # Memory Python itself holds (tracemalloc; -1 when not traced): RSS can grow while this
    # stays flat (the C allocator's per-thread arenas), which is not a leak of the program.
    python_kib: int = -1


def process_sample(at: float, events: list[int] | None = None) -> Sample:
    """RSS, thread counts and open files of this process (Linux /proc)."""
    fields: dict[str, str] = {}
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            key, _, value = line.partition(":")
            fields[key] = value.strip()
    events = events or [0]
    return Sample(
        at=at,
        rss_kib=int(fields["VmRSS"].split()[0]),
        threads_python=threading.active_count(),
        threads_kernel=int(fields["Threads"]),
        open_files=len(os.listdir("/proc/self/fd")),
        events_min=min(events),
        events_max=max(events),
        python_kib=tracemalloc.get_traced_memory()[0] // 1024 if tracemalloc.is_tracing() else -1,
    )


def slope(xs: list[float], ys: list[float]) -> float:
    """Least-squares growth of ys per unit of xs (0 with fewer than two points)."""
    if len(xs) < 2 or max(xs) == min(xs):
        return 0.0
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    num = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True))
    return num / sum((x - mx) ** 2 for x in xs)


def growth(samples: list[Sample], per: float, warm_up: float) -> dict[str, float]:
    """Slopes over the samples from `warm_up` on (all of them if fewer than two are that
    late), scaled to `per` units of `Sample.at`."""
    kept = [s for s in samples if s.at >= warm_up]
    if len(kept) < 2:
        kept = samples
    xs = [s.at for s in kept]
    return {
        "rss_kib": slope(xs, [s.rss_kib for s in kept]) * per,
        "threads_kernel": slope(xs, [s.threads_kernel for s in kept]) * per,
        "open_files": slope(xs, [s.open_files for s in kept]) * per,
        "python_kib": slope(xs, [s.python_kib for s in kept]) * per,
    }


def flags(g: dict[str, float]) -> list[str]:
    """One sentence per quantity that grows beyond its limit."""
    out = []
    if g["rss_kib"] > RSS_GROWTH_LIMIT_KIB:
        out.append(f"memory grows by {g['rss_kib']:.0f} KiB")
    if g.get("python_kib", 0.0) > PYTHON_GROWTH_LIMIT_KIB:
        out.append(f"Python's own memory grows by {g['python_kib']:.0f} KiB")
    if g["threads_kernel"] > THREAD_GROWTH_LIMIT:
        out.append(f"threads grow by {g['threads_kernel']:.1f}")
    if g["open_files"] > FD_GROWTH_LIMIT:
        out.append(f"open files grow by {g['open_files']:.1f}")
    return out


def table(samples: list[Sample], at_label: str, events: bool) -> str:
    head = f"{at_label:>8} {'RSS MiB':>8} {'py thr':>6} {'threads':>7} {'fds':>5}"
    traced = any(s.python_kib >= 0 for s in samples)
    if traced:
        head += f" {'Python MiB':>10}"
    if events:
        head += f" {'events/phone min-max':>21}"
    lines = [head]
    for s in samples:
        line = (
            f"{s.at:8.1f} {s.rss_kib / 1024:8.1f} {s.threads_python:6d} "
            f"{s.threads_kernel:7d} {s.open_files:5d}"
        )
        if traced:
            line += f" {s.python_kib / 1024:10.1f}"
        if events:
            line += f" {s.events_min:>10d}-{s.events_max:<10d}"
        lines.append(line)
    return "\n".join(lines)


#: Python's live memory per allocation site ("file:line"): (bytes, blocks).
HeapSites = dict[str, tuple[int, int]]


def heap_sites(min_bytes: int = 0) -> HeapSites | None:
    """Python's heap now (after a collection) by allocation site holding at least
    `min_bytes`, or None when not tracing. Only the sums are kept: a whole snapshot held
    through the run would itself be tens of MiB of RSS that tracemalloc does not count."""
    if not tracemalloc.is_tracing():
        return None
    gc.collect()
    snapshot = tracemalloc.take_snapshot().filter_traces(
        [tracemalloc.Filter(False, tracemalloc.__file__)]
    )
    sites: HeapSites = {}
    for stat in snapshot.statistics("lineno"):
        if stat.size < min_bytes:
            break  # largest first
        frame = stat.traceback[0]
        sites[f"{frame.filename}:{frame.lineno}"] = (stat.size, stat.count)
    return sites


def heap_growth(before: HeapSites | None, after: HeapSites | None) -> list[dict[str, Any]]:
    """The allocation sites whose live memory grew most between two moments."""
    if before is None or after is None:
        return []
    grown = []
    for site, (size, count) in after.items():
        was_size, was_count = before.get(site, (0, 0))
        if size > was_size:
            grown.append((size - was_size, site, size, count - was_count))
    grown.sort(reverse=True)
    return [
        {"site": site, "kib": size // 1024, "growth_kib": diff // 1024, "blocks_growth": blocks}
        for diff, site, size, blocks in grown[:TRACE_TOP]
    ]


# ---------------------------------------------------------------- the load run


def phone_address(index: int) -> tuple[str, int]:
    """The source address of simulated phone `index`: a loopback address of its own (Linux
    answers all of 127.0.0.0/8), so each phone is a client of its own, as on the LAN, and
    the server's connections-per-client cap (web.serve) applies to it as to a phone."""
    return (f"127.1.{index // 250}.{index % 250 + 1}", 0)


class Phone(threading.Thread):
    """One phone: an event stream, and a fetch of the state after each event; reconnects
    when the server ends the stream (its lifetime) until `stop` is set."""

    def __init__(self, port: int, stop: threading.Event, fetch: bool, index: int = 0) -> None:
        super().__init__(daemon=True)
        self.port, self.stop, self.fetch = port, stop, fetch
        self.source = phone_address(index)
        self.events = 0
        self.fetched = 0
        self.failures = 0
        self.ready = threading.Event()

    def run(self) -> None:
        api = http.client.HTTPConnection(
            "127.0.0.1", self.port, timeout=PHONE_TIMEOUT_S, source_address=self.source
        )
        try:
            while not self.stop.is_set():
                try:
                    self._stream(api)
                except (OSError, http.client.HTTPException):
                    if not self.stop.is_set():  # not the connections closed at the end
                        self.failures += 1
                    api.close()
                    self.stop.wait(1.0)
        finally:
            api.close()

    def _stream(self, api: http.client.HTTPConnection) -> None:
        conn = http.client.HTTPConnection(
            "127.0.0.1", self.port, timeout=PHONE_TIMEOUT_S, source_address=self.source
        )
        try:
            conn.request("GET", "/events")
            response = conn.getresponse()
            if response.status != 200:
                self.failures += 1
                response.read()
                self.stop.wait(1.0)
                return
            self.ready.set()
            while not self.stop.is_set():
                line = response.readline()
                if not line:
                    return  # the stream's lifetime ended: reconnect, as the page does
                if line.startswith(b"event: state"):
                    self.events += 1
                    if self.fetch:
                        api.request("GET", "/api/state")
                        reply = api.getresponse()
                        reply.read()
                        self.fetched += reply.status == 200
        finally:
            conn.close()


class QueueDepth(logging.Handler):
    """Counts waitress's "Task queue depth is N" warnings (requests waiting for a worker
    thread) and keeps the deepest queue, instead of printing each one."""

    def __init__(self) -> None:
        super().__init__()
        self.warnings = 0
        self.deepest = 0

    def emit(self, record: logging.LogRecord) -> None:
        self.warnings += 1
        words = record.getMessage().split()
        if words and words[-1].isdigit():
            self.deepest = max(self.deepest, int(words[-1]))


def new_game(session: Session, rng: random.Random) -> None:
    players = rng.randint(2, 5)
    seats = [Seat(f"Player {i + 1}", i + 1) for i in range(players)]
    session.start_game(seats, ship=rng.randrange(16), seed=rng.randrange(10**6))


def measure_load(clients: int, minutes: float, seed: int, fetch: bool) -> dict[str, Any]:
    from web.app import create_app
    from web.serve import Server
    from web.settings import WebSettings

    rng = random.Random(seed)
    session = Session()
    new_game(session, rng)
    settings = WebSettings(
        host="127.0.0.1",
        port=0,
        pin="000000",
        advertise=False,
        threads=max(64, clients + 16),
        sse_max_clients=max(48, clients),
    )
    app = create_app(session, settings)
    server = Server(app, app.config["WEB_SETTINGS"])
    queue_log = logging.getLogger("waitress.queue")
    depth = QueueDepth()
    queue_log.addHandler(depth)
    queue_log.propagate = False
    serving = threading.Thread(target=server.run, daemon=True)
    serving.start()
    stop = threading.Event()
    phones = [Phone(server.port, stop, fetch, i) for i in range(clients)]
    for phone in phones:
        phone.start()
    for phone in phones:
        phone.ready.wait(10)
    samples: list[Sample] = []
    turns = games = 0
    start = time.monotonic()
    end = start + minutes * 60.0
    next_sample = start
    warm: HeapSites | None = None
    shown = terminal_progress("bench load: seconds")
    try:
        while True:
            now = time.monotonic()
            if shown is not None:
                shown(min(int(now - start), int(minutes * 60.0)), int(minutes * 60.0))
            # Before the sample: taking it costs RSS once, which the growth leaves out.
            if warm is None and now - start >= WARMUP_MINUTES * 60.0:
                warm = heap_sites(TRACE_SITE_MIN_BYTES)
            if now >= next_sample:
                samples.append(process_sample((now - start) / 60.0, [p.events for p in phones]))
                next_sample += SAMPLE_EVERY_S
            if now >= end:
                break
            game = session.game
            assert game is not None
            if game.over:
                new_game(session, rng)
                games += 1
            else:
                session.play(RandomPlayer(rng).choose(game.rules, game.state))
                turns += 1
            time.sleep(max(0.0, min(TURN_EVERY_S, end - time.monotonic())))
    finally:
        stop.set()
        server.close()
        serving.join(10)
        for phone in phones:
            phone.join(PHONE_TIMEOUT_S)
        queue_log.removeHandler(depth)
        queue_log.propagate = True
    grown = heap_growth(warm, heap_sites(TRACE_SITE_MIN_BYTES))
    slopes = growth(samples, 1.0, WARMUP_MINUTES)
    return {
        "clients": clients,
        "minutes": minutes,
        "turns": turns,
        "games_started": games,
        "fetches": sum(p.fetched for p in phones),
        "failures": sum(p.failures for p in phones),
        "worker_threads": settings.threads,
        "queue_warnings": depth.warnings,
        "deepest_queue": depth.deepest,
        "samples": [asdict(s) for s in samples],
        "growth_per_minute": slopes,
        "heap_growth": grown,
        "flags": flags(slopes),
    }


# ---------------------------------------------------------------- the soak run


def measure_soak(turns: int, players: int, seed: int, cache: Path) -> dict[str, Any]:
    """One demo (one pack, camera, live loop and Session, as the service has) playing games
    back to back in its Session until `turns` turns in total."""
    from app.demo import Demo
    from companion.game import new_game as new_world

    samples = [process_sample(0.0)]
    args = argparse.Namespace(
        players=players,
        seed=seed,
        headless=True,
        pace=0.6,
        pack=None,
        style="lagoon",
        side="front",
        variant="base",
        cache=str(cache),
        state_dir=None,
    )
    demo = Demo(args)
    played = games = 0
    shown = terminal_progress("bench load: turns")
    warm: HeapSites | None = None
    start = time.monotonic()
    try:
        while played < turns:
            if games:  # the players clear the table and lay out a new game
                demo.world = new_world(
                    demo.seats,
                    seed=seed + games,
                    ship=demo.rng.randrange(16),
                    side=args.side,
                    variant=args.variant,
                    catalogue=demo.pack.catalogue,
                )
            games += 1
            demo.setup()
            while not demo.world.over and played < turns:
                demo.play_turn()
                played += 1
                if shown is not None:
                    shown(played, turns)
                if played == WARMUP_TURNS:  # before the sample, as in the load run
                    warm = heap_sites(TRACE_SITE_MIN_BYTES)
                if played % SOAK_SAMPLE_TURNS == 0:
                    samples.append(process_sample(float(played)))
    finally:
        demo.camera.close()
    demo.tally.seconds = time.monotonic() - start
    grown = heap_growth(warm, heap_sites(TRACE_SITE_MIN_BYTES))
    slopes = growth(samples, 100.0, WARMUP_TURNS)
    return {
        "turns": played,
        "games": games,
        "players": players,
        "seconds": time.monotonic() - start,
        "tally": demo.tally.summary(),
        "samples": [asdict(s) for s in samples],
        "growth_per_100_turns": slopes,
        "heap_growth": grown,
        "flags": flags(slopes),
    }


# ---------------------------------------------------------------- the command


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--clients", type=int, default=0, help="simulated phones (load run)")
    parser.add_argument("--minutes", type=float, default=10.0, help="load run length (10)")
    parser.add_argument(
        "--no-fetch", action="store_true", help="phones only count events, never fetch the state"
    )
    parser.add_argument("--soak-turns", type=int, default=0, help="demo turns (soak run)")
    parser.add_argument(
        "--players",
        type=int,
        default=4,
        choices=range(2, 6),
        metavar="2-5",
        help="players of the soak run's game (4)",
    )
    parser.add_argument("--seed", type=int, default=1, help="seed of the soak run's game (1)")
    parser.add_argument(
        "--cache",
        default=str(Path.home() / ".cache" / "maori-companion"),
        metavar="DIR",
        help="where the drawn pack is kept (~/.cache/maori-companion)",
    )
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument(
        "--untuned",
        action="store_true",
        help="leave the C allocator at its defaults (to compare; the service tunes it, "
        "see app/memory.py)",
    )
    parser.add_argument(
        "--tracemalloc",
        action="store_true",
        help="also trace the memory Python holds (slower; tells a leak from allocator growth)",
    )


def _report(result: dict[str, Any], at_label: str, per: str, events: bool) -> None:
    samples = [Sample(**s) for s in result["samples"]]
    print(table(samples, at_label, events))
    g = result[f"growth_per_{per.replace(' ', '_')}"]
    print(
        f"growth per {per}: RSS {g['rss_kib']:+.0f} KiB, threads {g['threads_kernel']:+.2f}, "
        f"open files {g['open_files']:+.2f}"
        + (
            f", Python's own memory {g['python_kib']:+.0f} KiB"
            if samples[0].python_kib >= 0
            else ""
        )
    )
    if result["heap_growth"]:
        print("Python's heap, the sites that grew most after the warm-up (KiB now, growth):")
        for site in result["heap_growth"]:
            print(f"  {site['kib']:8d} {site['growth_kib']:+8d}  {site['site']}")
    print("FLAG: " + "; ".join(result["flags"]) if result["flags"] else "no growth flagged")


def run(args: argparse.Namespace) -> int:
    from companion.errors import DataError

    if args.clients <= 0 and args.soak_turns <= 0:
        raise DataError("bench load", "say --clients N (with --minutes) or --soak-turns N.")
    if args.clients > 500 or args.minutes > 60 or args.soak_turns > 10_000:
        raise DataError("bench load", "at most 500 clients, 60 minutes and 10000 turns.")
    results: dict[str, Any] = {}
    if not args.untuned:
        tune_allocator()  # as `companion run` and `companion demo` do
    if args.tracemalloc:
        tracemalloc.start()
    if args.clients > 0:
        results["load"] = measure_load(args.clients, args.minutes, args.seed, not args.no_fetch)
    if args.soak_turns > 0:
        results["soak"] = measure_soak(args.soak_turns, args.players, args.seed, Path(args.cache))
    if args.json:
        print(json.dumps(results, indent=2))
        return 0
    if "load" in results:
        r = results["load"]
        print(
            f"load: {r['clients']} phones for {r['minutes']:g} min, {r['turns']} turns, "
            f"{r['games_started']} new games, {r['fetches']} state fetches, "
            f"{r['failures']} failed requests; {r['worker_threads']} worker threads, "
            f"requests queued for a free one {r['queue_warnings']} times (deepest queue "
            f"{r['deepest_queue']})"
        )
        _report(r, "minute", "minute", events=True)
    if "soak" in results:
        r = results["soak"]
        print(
            f"soak: {r['turns']} demo turns in {r['games']} games of {r['players']} players, "
            f"{r['seconds']:.0f} s"
        )
        print(r["tally"])
        _report(r, "turns", "100 turns", events=False)
    return 0
