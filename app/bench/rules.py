"""`companion bench rules`: how fast the rules engine plays and enumerates.

Targets on the 2-core development machine: at least 200 random 4-player games per second
(setup to final score, through Game.push with undo snapshots and the event log) and at most
1 ms to enumerate the legal moves (the reach map) for the player to move.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import time

from companion.bots import RandomPlayer
from companion.game import Game, Seat, new_game
from companion.progress import terminal_progress

SEATS = [Seat("North", 1), Seat("East", 2), Seat("South", 3), Seat("West", 4)]


def play_random_game(seed: int) -> Game:
    """One random 4-player base game from setup to the end."""
    game = Game(new_game(SEATS, seed=seed, ship=seed % 16))
    bot = RandomPlayer(random.Random(seed))
    while not game.over:
        game.push(bot.choose(game.rules, game.state))
    return game


def measure(seconds: float, seed: int) -> dict[str, float]:
    """Play games for about `seconds`, then time the reach map on their positions."""
    games = turns = 0
    start = time.perf_counter()
    samples: list[Game] = []
    shown = terminal_progress("bench rules: seconds")
    whole = max(1, round(seconds))
    while time.perf_counter() - start < seconds:
        if shown is not None and games % 20 == 0:
            shown(min(int(time.perf_counter() - start), whole), whole)
        game = play_random_game(seed + games)
        games += 1
        turns += len(game.records)
        if len(samples) < 20:
            samples.append(game)
    elapsed = time.perf_counter() - start
    if shown is not None:
        shown.note("timing the reach map")
    per_call: list[float] = []
    for game in samples:
        while game.records:
            game.pop()
            t0 = time.perf_counter()
            for _ in range(20):
                game.reach_map()
            per_call.append((time.perf_counter() - t0) / 20)
    per_call.sort()
    if shown is not None:
        shown.finish()
    return {
        "games": games,
        "games_per_second": games / elapsed,
        "turns_per_game": turns / games,
        "enumeration_median_ms": statistics.median(per_call) * 1000,
        "enumeration_p99_ms": per_call[int(len(per_call) * 0.99)] * 1000,
        "enumeration_max_ms": per_call[-1] * 1000,
    }


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--seconds", type=float, default=10.0, help="how long to play (10)")
    parser.add_argument("--seed", type=int, default=0, help="first game's seed (0)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")


def run(args: argparse.Namespace) -> int:
    figures = measure(args.seconds, args.seed)
    if args.json:
        print(json.dumps(figures, indent=2))
        return 0
    print(
        f"random 4-player games: {figures['games_per_second']:.0f}/s "
        f"({figures['games']:.0f} games, {figures['turns_per_game']:.1f} turns each; "
        "target >= 200/s)"
    )
    print(
        f"legal-move enumeration: median {figures['enumeration_median_ms']:.3f} ms, "
        f"p99 {figures['enumeration_p99_ms']:.3f} ms, max {figures['enumeration_max_ms']:.3f} ms "
        "(target <= 1 ms)"
    )
    return 0
