"""`companion demo --game G`: bots play a whole board game through the table's BoardSession,
as the host's taps do: every move is checked by the rules, saved in the session's journal (if
it has one) and seen by the pages that follow the session. Also the score table as
`companion score --game G` prints it."""

from __future__ import annotations

import json
import random
import time

from companion.errors import CompanionError, DataError
from companion.games import game_class
from companion.games.base import BoardGame, PlayerScore, ScoreTable
from companion.games.session import BoardSession

#: The most moves a demo game may take before the bots are said to be stuck.
MAX_MOVES = 100_000

#: The bots' names in every demo and benchmark game (Tongiaki seats six).
NAMES = ("Aroha", "Tama", "Mere", "Wiremu", "Hine", "Manu")


def render_score(table: ScoreTable) -> str:
    """The score as an aligned table, one column per player: the points rows, the total, then
    (apart, named so) the counts that break ties; then the winners, or that the game is not
    over."""
    if table.points or table.tiebreaks:
        points, tiebreaks = list(table.points), list(table.tiebreaks)
    else:
        points = [k for k in table.players[0].breakdown] if table.players else []
        tiebreaks = []
    sections: list[tuple[str, list[str]]] = [("", points), ("", ["total"])]
    if tiebreaks:
        sections.append(("tie-breaks (counts, not points):", tiebreaks))

    def cell(p: PlayerScore, key: str) -> str:
        return str(p.total if key == "total" else p.breakdown.get(key, ""))

    labels = [k.replace("_", " ") for _, keys in sections for k in keys]
    label_width = max(len(label) for label in labels)
    widths = [
        max([len(p.name)] + [len(cell(p, k)) for _, keys in sections for k in keys])
        for p in table.players
    ]

    def line(label: str, cells: list[str]) -> str:
        text = "  ".join(c.rjust(w) for c, w in zip(cells, widths, strict=True))
        return f"{label.ljust(label_width)}  {text}".rstrip()

    lines = [line("", [p.name for p in table.players])]
    for heading, keys in sections:
        if keys == ["total"]:
            lines.append("-" * (label_width + 2 + sum(widths) + 2 * max(len(widths) - 1, 0)))
        elif heading:
            lines.append(heading)
        for key in keys:
            lines.append(line(key.replace("_", " "), [cell(p, key) for p in table.players]))
    if not table.over:
        lines.append("The game is not over: this is the score so far, and nobody has won yet.")
    else:
        word = "winner" if len(table.winners) == 1 else "winners (shared)"
        lines.append(f"{word}: {', '.join(table.winners)}")
    return "\n".join(lines)


def check_players(key: str, players: int) -> None:
    """DataError (one sentence) when `key` is not played by `players` players."""
    cls = game_class(key)
    if not cls.min_players <= players <= cls.max_players:
        raise DataError(
            "--players",
            f"{cls.title} is played by {cls.min_players} to {cls.max_players} players",
        )


def play_through(
    board: BoardSession,
    key: str,
    players: int,
    seed: int,
    *,
    pace: float = 0.0,
) -> BoardGame:
    """Bots play `board`'s game of `key` to its end through the session: a game of `key`
    under way in it goes on, otherwise a new one is set up from `seed`. Each move is chosen by
    a generator of its own (from `seed` and the moves logged), so a resumed game plays on as
    an unbroken one; `pace` seconds pass between moves."""
    check_players(key, players)
    with board.lock:
        game = board.game
        fresh = game is None or game.key != key or game.over
    if fresh:
        board.start(key, NAMES[:players], seed)
    for _ in range(MAX_MOVES):
        with board.lock:
            game = board.game
            assert game is not None
            if game.over:
                return game
            actions = game.legal_actions()
            if not actions:
                raise CompanionError(f"{game.title}: the game waits for a move but offers none.")
            action = random.Random(f"{seed}/{len(game.events)}").choice(actions)
        board.play(action)
        if pace:
            time.sleep(pace)
    raise CompanionError(f"{key}: the bots did not finish within {MAX_MOVES} moves.")


def score_text(table: ScoreTable, *, as_json: bool) -> str:
    """The final score as `companion score` prints it: JSON or an aligned table."""
    if as_json:
        return json.dumps(table.to_json(), ensure_ascii=False, indent=2)
    return render_score(table)
