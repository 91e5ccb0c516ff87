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
from companion.games.base import BoardGame, ScoreTable
from companion.games.session import BoardSession

#: The most moves a demo game may take before the bots are said to be stuck.
MAX_MOVES = 100_000

#: The bots' names in every demo and benchmark game (Tongiaki seats six).
NAMES = ("Aroha", "Tama", "Mere", "Wiremu", "Hine", "Manu")


def render_score(table: ScoreTable) -> str:
    """The score as an aligned table: one row per breakdown line and the total, one column per
    player, then the winners."""
    keys = [k for k in table.players[0].breakdown] if table.players else []
    labels = [k.replace("_", " ") for k in keys] + ["total"]
    columns = [[p.name, *(str(p.breakdown[k]) for k in keys), str(p.total)] for p in table.players]
    widths = [max(len(text) for text in col) for col in columns]
    label_width = max(len(label) for label in labels)
    lines = []
    for i, label in enumerate(["", *labels]):
        cells = "  ".join(col[i].rjust(w) for col, w in zip(columns, widths, strict=True))
        lines.append(f"{label.ljust(label_width)}  {cells}".rstrip())
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
