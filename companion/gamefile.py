"""Game files: the input of `companion score` (docs/formats.md, "Scoring a finished game").

A game file is JSON: an optional `board_side` ("front" or "atoll", default front), an optional
`layout` (rows, cols, printed_boats, map; default the bundled layout of that side) and
`players`, 1 to 5 of them (the game seats 2 to 5, at most 4 on the atoll side; one player is
accepted so a single board can be scored), each with `name`, `shells` (wooden shells held;
all players' together at most the box's 30), an optional `storage` tile and `board`: `rows`
rows of `cols` cells from seat north, each a tile meaning as it lies or null. Unknown keys
are ignored unless they look like a misspelt `board_side` or `layout` (which would change the
result silently); an unknown key inside a tile is always an error.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from companion.catalogue import BOARD_SIDES, BoardLayout, default_boards, parse_layout, shown
from companion.errors import DataError
from companion.game import MAX_PLAYERS_ATOLL
from companion.scoring import PlayerBoard
from companion.state import SHELLS_TOTAL
from companion.tiles import Kind, Meaning

MAX_PLAYERS = 5
#: The longest player name (in characters) a game file may give.
MAX_NAME = 40
#: A game file is a few KB; anything far larger is not one (and /dev/zero never ends).
MAX_FILE_BYTES = 4 * 1024 * 1024
TOP_KEYS = ("board_side", "layout", "players")
#: Optional top-level keys: a misspelling of one of these would change the result silently.
OPTIONAL_KEYS = ("board_side", "layout")
#: Words that show which optional key an unknown key was meant as ("side", "Layout_v2").
KEY_HINTS = {"side": "board_side", "layout": "layout"}


def _count(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


class _DuplicateKey(ValueError):
    pass


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _DuplicateKey(f"the key {key!r} appears twice in one object")
        out[key] = value
    return out


def read_json(path: str | Path) -> Any:
    """Read a JSON file; any problem becomes a DataError naming the file."""
    source = str(path)
    try:
        with Path(path).open("rb") as fh:
            raw = fh.read(MAX_FILE_BYTES + 1)
    except FileNotFoundError:
        raise DataError(source, "no such file") from None
    except IsADirectoryError:
        raise DataError(source, "is a directory, not a file") from None
    except OSError as exc:
        raise DataError(source, f"cannot be read ({exc.strerror or exc})") from None
    if len(raw) > MAX_FILE_BYTES:
        limit = MAX_FILE_BYTES // (1024 * 1024)
        raise DataError(source, f"is larger than {limit} MB; a game file is a few KB of JSON")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise DataError(source, "is not UTF-8 text") from None
    try:
        return json.loads(text, object_pairs_hook=_no_duplicates)
    except _DuplicateKey as exc:
        raise DataError(source, str(exc)) from None
    except json.JSONDecodeError as exc:
        raise DataError(
            source, f"is not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})"
        ) from None
    except ValueError:  # an integer of thousands of digits (Python's int limit)
        raise DataError(source, "is not valid JSON (a number is too long)") from None
    except RecursionError:
        raise DataError(source, "is not valid JSON (lists or objects nested too deep)") from None


def _check_top_keys(data: Mapping[str, Any], source: str) -> None:
    """Refuse an unknown top-level key that looks meant as board_side or layout.

    Those two are optional, so a misspelt one would silently change the result; every other
    key that changes a result is required, and any other extra key (a comment) is fine.
    """
    for key in data:
        if key in TOP_KEYS or not isinstance(key, str):
            continue
        low = key.lower()
        close = difflib.get_close_matches(low, OPTIONAL_KEYS, n=1, cutoff=0.75)
        hint = next((k for word, k in KEY_HINTS.items() if word in low), None)
        meant = close[0] if close else hint
        if meant:
            raise DataError(source, f"the game has an unknown key {key!r}; did you mean {meant!r}?")


def _tile(value: Any, where: str, source: str) -> Meaning | None:
    if value is None:
        return None
    try:
        meaning = Meaning.from_mapping(value)
    except ValueError as exc:
        raise DataError(source, f"{where}: {exc}") from None
    if meaning.kind is Kind.VOLCANO:
        raise DataError(source, f"{where}: a volcano cannot be taken, so it never lies here")
    return meaning


def _board(
    value: Any, layout: BoardLayout, who: str, source: str
) -> tuple[tuple[Meaning | None, ...], ...]:
    shape = f"{_count(layout.rows, 'row')} of {_count(layout.cols, 'cell')}"
    if not isinstance(value, list):
        raise DataError(source, f"{who}, board must be a list of {shape}")
    if len(value) != layout.rows:
        raise DataError(
            source, f"{who}, board has {_count(len(value), 'row')} but the layout has {shape}"
        )
    rows: list[tuple[Meaning | None, ...]] = []
    for r, row in enumerate(value):
        where = f"{who}, board row {r + 1}"
        if not isinstance(row, list):
            raise DataError(source, f"{where} must be a list of {_count(layout.cols, 'cell')}")
        if len(row) != layout.cols:
            raise DataError(
                source, f"{where} has {_count(len(row), 'cell')} but the layout has {shape}"
            )
        cells: list[Meaning | None] = []
        for c, entry in enumerate(row):
            where = f"{who}, board row {r + 1}, column {c + 1}"
            if entry is not None and not layout.playable((r, c)):
                raise DataError(source, f"{where}: this cell is not playable, so it must be null")
            cells.append(_tile(entry, where, source))
        rows.append(tuple(cells))
    return tuple(rows)


def _player(data: Any, index: int, layout: BoardLayout, source: str) -> PlayerBoard:
    who = f"player {index + 1}"
    if not isinstance(data, Mapping):
        raise DataError(source, f"{who} must be an object with name, shells, storage and board")
    name = data.get("name")
    if not isinstance(name, str) or not name.strip():
        raise DataError(source, f"{who} needs a name (a non-empty string)")
    if len(name) > MAX_NAME:
        raise DataError(source, f"{who}'s name has {len(name)} characters; at most {MAX_NAME}")
    who = f"{who} ({shown(name)})"
    if "shells" not in data:
        raise DataError(source, f"{who} needs shells, the number of wooden shells held")
    shells = data["shells"]
    if type(shells) is not int or not 0 <= shells <= SHELLS_TOTAL:
        raise DataError(
            source,
            f"{who}, shells must be a whole number from 0 to {SHELLS_TOTAL} (the box holds "
            f"{SHELLS_TOTAL} wooden shells), not {shells!r}",
        )
    if "board" not in data:
        raise DataError(source, f"{who} needs a board")
    board = _board(data["board"], layout, who, source)
    storage = _tile(data.get("storage"), f"{who}, storage", source)
    return PlayerBoard(name=name, shells=shells, board=board, storage=storage)


def parse_game(data: Any, source: str) -> tuple[BoardLayout, list[PlayerBoard]]:
    """Validate a parsed game file; `source` names it in errors."""
    if not isinstance(data, Mapping):
        raise DataError(source, "a game file must be a JSON object with players")
    _check_top_keys(data, source)
    side = data.get("board_side", "front")
    if side not in BOARD_SIDES:
        raise DataError(source, f'board_side must be "front" or "atoll", not {side!r}')
    if "layout" in data:
        layout = parse_layout(data["layout"], side, source, where="layout")
    else:
        layout = default_boards()[side]
    players = data.get("players")
    if not isinstance(players, list) or not 1 <= len(players) <= MAX_PLAYERS:
        raise DataError(source, f"players must be a list of 1 to {MAX_PLAYERS} players")
    if side == "atoll" and len(players) > MAX_PLAYERS_ATOLL:
        raise DataError(
            source,
            f"the atoll side is played by at most {MAX_PLAYERS_ATOLL} players, "
            f"but the game has {len(players)}",
        )
    parsed = [_player(p, i, layout, source) for i, p in enumerate(players)]
    held = sum(p.shells for p in parsed)
    if held > SHELLS_TOTAL:
        raise DataError(
            source,
            f"the players hold {held} wooden shells in all, but the box holds {SHELLS_TOTAL}",
        )
    seen: dict[str, int] = {}
    for i, p in enumerate(parsed):
        if p.name in seen:
            raise DataError(
                source, f"player {i + 1} has the same name as player {seen[p.name] + 1}: {p.name!r}"
            )
        seen[p.name] = i
    return layout, parsed


def load_game_file(path: str | Path) -> tuple[BoardLayout, list[PlayerBoard]]:
    """Read and validate a game file; every problem is a DataError naming the file."""
    return parse_game(read_json(path), str(path))


def dump_game(
    layout: BoardLayout, players: Sequence[PlayerBoard], board_side: str
) -> dict[str, Any]:
    """The game-file object for `players` (load_game_file reads it back unchanged)."""
    return {
        "board_side": board_side,
        "layout": layout.to_json(),
        "players": [
            {
                "name": p.name,
                "shells": p.shells,
                "storage": p.storage.to_json() if p.storage is not None else None,
                "board": [[t.to_json() if t is not None else None for t in row] for row in p.board],
            }
            for p in players
        ],
    }
