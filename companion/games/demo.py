"""`companion demo --game G --headless`: bots play a whole board game through its interface."""

from __future__ import annotations

import json
from pathlib import Path

from companion.errors import DataError
from companion.games import game_class
from companion.games.base import ScoreTable
from companion.games.bots import play_game
from companion.games.files import game_file

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


def run_demo(key: str, players: int, seed: int, *, as_json: bool, save: Path | None = None) -> str:
    """Play a whole game of `key` between `players` bots; the final score as text or JSON."""
    cls = game_class(key)
    if not cls.min_players <= players <= cls.max_players:
        raise DataError(
            "--players",
            f"{cls.title} is played by {cls.min_players} to {cls.max_players} players",
        )
    game = play_game(cls, NAMES[:players], seed)
    if save is not None:
        save.write_text(json.dumps(game_file(game), ensure_ascii=False) + "\n", "utf-8")
    table = game.score()
    if as_json:
        return json.dumps(table.to_json(), ensure_ascii=False, indent=2)
    return render_score(table)
