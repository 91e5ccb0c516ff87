"""Tongiaki on the phones: its moves in words, and the final count by taps.

The final count is for a table that played without the companion: the host enters each
island's value and each colour's boats on it (or its royal owner), and the page shows the
score with the rulebook's tie-breaks. The count is a Tongiaki game file in its island-count
form (docs/formats.md, "Tongiaki game file"), scored by the same code as `companion score
--game tongiaki`, and kept beside the board games' journal as `tongiaki-count.json`. Guests
read it (GET /games/tongiaki/count, GET /api/games/tongiaki/count); the host changes it
(POST /api/games/tongiaki/count, the whole count each time).
"""

from __future__ import annotations

import json
import logging
import threading
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from flask import Blueprint, Flask, Response, current_app, jsonify, render_template, request

from companion.errors import DataError, MalformedMove
from companion.games.session import BoardSession
from companion.games.tongiaki.game import COLOURS, MAX_ROYAL, Tongiaki, island_name
from companion.games.tongiaki.tiles import default_tiles
from companion.journal import StorageError, storage_sentence, write_atomically
from web import auth

log = logging.getLogger(__name__)

EXTENSION = "companion_tongiaki_count"
#: The count's file, in the board games' journal folder.
COUNT_FILE = "tongiaki-count.json"
#: Tongiaki's map edges, clockwise from east (companion.games.tongiaki.tiles.EDGE_NAMES).
EDGES = ("east", "south-east", "south-west", "west", "north-west", "north-east")

bp = Blueprint("tongiaki", __name__)


def action_words(data: dict[str, Any]) -> str:
    """A Tongiaki move in the few words of its button."""
    kind = str(data.get("type", "?"))
    island = island_name(data.get("island"))
    beaches = ", ".join(str(b + 1) for b in data.get("beaches", []))
    if kind == "place":
        return f"Boat on {island} beach {data['beach'] + 1}"
    if kind == "expand":
        take = data.get("take")
        if not beaches:
            return f"Expand on {island}: no boat (every boat is on the map)"
        text = f"Expand on {island}: beach {beaches}"
        return text + (f" (boat from {island_name(take[0])} beach {take[1] + 1})" if take else "")
    if kind == "arrive":
        return f"Arrive at {island}: beach {beaches}"
    if kind == "royal":
        return f"Found a royal island on {island}"
    if kind == "decline":
        return "No royal island: go on"
    if kind == "resettle":
        return "New settlement"
    if kind == "migrate":
        edge = EDGES[data["edge"] % 6]
        return f"Sail from {island} beach {data['beach'] + 1} to the {edge}"
    if kind == "land":
        return f"Land {data['colour']} at beach {data['beach'] + 1}"
    if kind == "lay":
        return f"Lay at ({data['q']}, {data['r']}) turned {data['rotation'] * 60}°"
    return kind.capitalize()


class FinalCount:
    """The table's final count (a Tongiaki island-count file) and its score, behind one lock;
    saved in `directory` when there is one."""

    def __init__(self, directory: Path | None) -> None:
        self.path = directory / COUNT_FILE if directory is not None else None
        self.lock = threading.Lock()
        self.version = 0
        self.data: dict[str, Any] | None = None
        self.score: dict[str, Any] | None = None
        if self.path is not None and self.path.exists():
            try:
                data = json.loads(self.path.read_text("utf-8"))
                self.score = score_count(data)
                self.data = data
            except (OSError, ValueError, DataError, MalformedMove) as exc:
                log.warning("the saved Tongiaki count %s is left aside: %s", self.path, exc)

    def set(self, data: dict[str, Any]) -> dict[str, Any]:
        """Score `data` and keep it (MalformedMove, one sentence, when it cannot be)."""
        score = score_count(data)
        with self.lock:
            if self.path is not None:
                try:
                    write_atomically(self.path, json.dumps(data, ensure_ascii=False))
                except OSError as exc:
                    raise StorageError(storage_sentence("The count", exc)) from None
            self.data, self.score = data, score
            self.version += 1
            return score

    def state(self) -> dict[str, Any]:
        with self.lock:
            return {"version": self.version, "count": self.data, "score": self.score}


def score_count(data: Any) -> dict[str, Any]:
    """The score (JSON) of a count, exactly as `companion score --game tongiaki` gives it."""
    if not isinstance(data, dict) or "islands" not in data:
        raise MalformedMove("The count needs its players and islands.")
    if data.get("game", Tongiaki.key) != Tongiaki.key:
        raise MalformedMove("The count is of a game of Tongiaki.")
    count = {"game": Tongiaki.key, "players": data.get("players"), "islands": data["islands"]}
    extra = sorted(set(data) - set(count))
    if extra:
        raise MalformedMove(f"The count has no field {extra[0]!r}.")
    try:
        return Tongiaki.score_file(count, "").to_json()
    except DataError as exc:
        problem = exc.problem
        raise MalformedMove(problem[:1].upper() + problem[1:] + ".") from None


def box() -> dict[str, Any]:
    """What the count page needs of the box: the island values and how many of each, boats and
    royal islands a player, the colours in seat order."""
    tiles = default_tiles()
    values = Counter(t.value for t in tiles.tiles.values() if t.is_island)
    return {
        "values": {str(v): n for v, n in sorted(values.items())},
        "start": island_name(tiles.start.id),
        "boats": tiles.boats_per_player,
        "royal": MAX_ROYAL,
        "colours": list(COLOURS),
        "min_players": Tongiaki.min_players,
        "max_players": Tongiaki.max_players,
    }


def register(
    app: Flask,
    *,
    board: BoardSession,
    require_host: Callable[[], None],
    is_host: Callable[[], bool],
    read_body: Callable[[], dict[str, Any]],
) -> None:
    """Add Tongiaki's count page and API to `app`; the count is kept beside `board`'s journal."""
    directory = board.journal.directory if board.journal is not None else None
    app.extensions[EXTENSION] = {
        "count": FinalCount(directory),
        "board": board,
        "require_host": require_host,
        "is_host": is_host,
        "read_body": read_body,
    }
    app.register_blueprint(bp)


def _ext() -> dict[str, Any]:
    ext: dict[str, Any] = current_app.extensions[EXTENSION]
    return ext


def _state() -> dict[str, Any]:
    ext = _ext()
    host = bool(ext["is_host"]())
    count: FinalCount = ext["count"]
    state = count.state()
    state["you"] = auth.you(host)
    state["box"] = box()
    board: BoardSession = ext["board"]
    with board.lock:
        game = board.game
        state["players"] = list(game.state.names) if isinstance(game, Tongiaki) else None
    return state


@bp.get("/games/tongiaki/count")
def count_page() -> str:
    return render_template("tongiaki_count.html", state=_state())


@bp.get("/api/games/tongiaki/count")
def api_count() -> Response:
    """The count and its score; with `?since=VERSION` of the page's own, only `unchanged`."""
    count: FinalCount = _ext()["count"]
    if request.args.get("since") == str(count.version):
        return jsonify({"version": count.version, "unchanged": True})
    return jsonify(_state())


@bp.post("/api/games/tongiaki/count")
def api_set_count() -> Response:
    """The host's count, whole: `{"players": [...], "islands": [...]}`; answers its score."""
    _ext()["require_host"]()
    body: dict[str, Any] = _ext()["read_body"]()
    count: FinalCount = _ext()["count"]
    score = count.set(body)
    return jsonify({"ok": True, "version": count.version, "score": score})
