"""Game files of the board games: read one and score it (docs/formats.md, one section per game)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from companion.errors import DataError
from companion.games import game_class
from companion.games.base import BoardGame, ScoreTable


def read_game_file(path: str | Path) -> Any:
    """The parsed JSON of a game file; DataError (one line) when it cannot be read."""
    source = str(path)
    try:
        text = Path(path).read_text("utf-8")
    except FileNotFoundError:
        raise DataError(source, "no such file") from None
    except IsADirectoryError:
        raise DataError(source, "this is a directory, not a game file") from None
    except UnicodeDecodeError:
        raise DataError(source, "not a text file") from None
    except OSError as exc:
        raise DataError(source, exc.strerror or str(exc)) from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise DataError(source, f"not valid JSON (line {exc.lineno}: {exc.msg})") from None


def score_game_file(key: str, path: str | Path) -> ScoreTable:
    """The score of the game file at `path` for game `key`."""
    cls = game_class(key)
    source = str(path)
    data = read_game_file(path)
    if not isinstance(data, dict):
        raise DataError(source, "a game file is a JSON object")
    named = data.get("game", key)
    if named != key:
        raise DataError(source, f"this is a {named!r} game file, not a {key!r} one")
    scorer = getattr(cls, "score_file", None)
    if scorer is not None:
        table: ScoreTable = scorer(data, source)
        return table
    events = data.get("events")
    if not isinstance(events, list):
        raise DataError(source, "the game file needs an `events` list")
    game = cls.replay(events, source)
    table = game.score()
    return table if game.over else table.unfinished()


def game_file(game: BoardGame) -> dict[str, Any]:
    """The game file of `game`: its key and its event log."""
    return {"game": game.key, "events": list(game.events)}
