"""`companion score [--game G] GAME.json [--json]`: score a finished game file (docs/formats.md).

Player names are printed as they are when printable; any other character (a terminal escape,
a right-to-left override, a lone surrogate) is escaped, so the output is safe for a terminal.
"""

from __future__ import annotations

import argparse
import json

from companion.errors import json_printable, printable
from companion.gamefile import load_game_file
from companion.games import DEFAULT_GAME, game_keys
from companion.scoring import FinalScore, PlayerScore, score_game

#: The rows of the readable table, in the rulebook's order: (label, what each cell shows).
ROWS: tuple[tuple[str, str], ...] = (
    ("palms without hut", "palms_no_hut"),
    ("palms with hut", "palms_hut"),
    ("complete leis", "leis"),
    ("boats", "boats"),
    ("wooden shells", "shells"),
    ("empty fields", "empty"),
    ("total", "total"),
)


def configure(parser: argparse.ArgumentParser) -> None:
    """Add the arguments of `companion score`."""
    parser.add_argument("game", metavar="GAME.json", help="the game file (docs/formats.md)")
    parser.add_argument("--json", action="store_true", help="print the score as one JSON object")
    parser.add_argument(
        "--game",
        dest="game_key",
        default=DEFAULT_GAME,
        choices=game_keys(),
        help=f"which game the file is of ({DEFAULT_GAME})",
    )


def _cell(score: PlayerScore, key: str) -> str:
    points = getattr(score, key)
    # Majorities: show the count beside the points, like the rulebook's "7 Boote = 7 Punkte".
    if key == "boats":
        return f"{score.boat_count} -> {points}"
    if key == "shells":
        return f"{score.shell_count} -> {points}"
    return str(points)


def render_table(final: FinalScore) -> str:
    """The score as an aligned table: one row per scoring line, one column per player."""
    label_width = max(len(label) for label, _ in ROWS)
    columns = [[printable(p.name), *(_cell(p, key) for _, key in ROWS)] for p in final.players]
    widths = [max(len(text) for text in col) for col in columns]
    lines = []
    for i, label in enumerate(["", *(label for label, _ in ROWS)]):
        cells = "  ".join(col[i].rjust(w) for col, w in zip(columns, widths, strict=True))
        if label == "total":
            lines.append("-" * (label_width + 2 + sum(widths) + 2 * (len(widths) - 1)))
        lines.append(f"{label.ljust(label_width)}  {cells}".rstrip())
    lines.append("")
    lines.append("boats and wooden shells: count -> points (the most scores)")
    lines.append("removed before scoring (incomplete islands, row and column from 1):")
    for p in final.players:
        cells_text = ", ".join(f"({r + 1}, {c + 1})" for r, c in p.removed) or "nothing"
        lines.append(f"  {printable(p.name)}: {cells_text}")
    word = "winner" if len(final.winners) == 1 else "winners (shared)"
    lines.append(f"{word}: {', '.join(printable(name) for name in final.winners)}")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    """Score the file and print the table or the JSON object."""
    key = getattr(args, "game_key", DEFAULT_GAME)
    if key != DEFAULT_GAME:
        from app.board_games import render_score
        from companion.games.files import score_game_file

        table = score_game_file(key, args.game)
        if args.json:
            print(json_printable(json.dumps(table.to_json(), ensure_ascii=False)))
        else:
            print("\n".join(printable(line) for line in render_score(table).splitlines()))
        return 0
    layout, players = load_game_file(args.game)
    final = score_game(layout, players)
    if args.json:
        # Names keep their letters (ensure_ascii=False); what is not printable is escaped.
        text = json_printable(json.dumps(final.to_json(), ensure_ascii=False))
    else:
        text = render_table(final)
    print(text)
    return 0
