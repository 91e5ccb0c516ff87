"""The board games beside Māori on the phones: Tongiaki and Giants, entered by taps.

One such game at a time sits on the `GameDesk`, beside the Māori session. Guests read it
(GET /api/games/state, the /games page); the host starts one (POST /api/games/new), plays one
of its legal actions (POST /api/games/action) and takes the last one back (POST
/api/games/undo). With a state directory the desk keeps the game there as its game file
(docs/formats.md: `{"game": key, "events": [...]}`), replaced atomically after every change, and
takes it up again on start. These games need no camera. The pages poll the state every 2 s.
"""

from __future__ import annotations

import json
import logging
import secrets
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from flask import Blueprint, Flask, Response, current_app, jsonify, render_template, request

from companion.errors import CompanionError, IllegalMove, MalformedMove
from companion.games import GAMES, game_class
from companion.games.base import BoardGame
from companion.games.files import game_file, read_game_file
from companion.journal import StorageError, storage_sentence, write_atomically
from web import auth

log = logging.getLogger(__name__)

EXTENSION = "companion_games"
#: The desk's game file in the state directory.
GAME_FILE = "board-game.json"
#: The longest player name the form takes.
MAX_NAME = 24
#: How often the pages ask for the state (milliseconds).
POLL_MS = 2000
#: Tongiaki's map edges, clockwise from east (companion.games.tongiaki.tiles.EDGE_NAMES).
EDGES = ("east", "south-east", "south-west", "west", "north-west", "north-east")

bp = Blueprint("games", __name__)


def action_label(key: str, data: dict[str, Any]) -> str:
    """A button's few words for an action in its JSON form."""
    kind = str(data.get("type", "?"))
    if key == "tongiaki":
        beaches = ", ".join(str(b + 1) for b in data.get("beaches", []))
        if kind == "place":
            return f"Boat on {data['island']} beach {data['beach'] + 1}"
        if kind == "expand":
            take = data.get("take")
            text = f"Expand on {data['island']}: beach {beaches}"
            return text + (f" (boat from {take[0]} beach {take[1] + 1})" if take else "")
        if kind == "arrive":
            return f"Arrive at {data['island']}: beach {beaches}"
        if kind == "royal":
            return f"Royal island {data['island']}"
        if kind == "resettle":
            return "New settlement"
        if kind == "migrate":
            edge = EDGES[data["edge"] % 6]
            return f"Sail from {data['island']} beach {data['beach'] + 1} to the {edge}"
        if kind == "land":
            return f"Land {data['colour']} at beach {data['beach'] + 1}"
        if kind == "lay":
            return f"Lay at ({data['q']}, {data['r']}) turned {data['rotation'] * 60}°"
    parts = []
    for name, value in data.items():
        if name in ("type", "player") or value is None or value is False or value == 0:
            continue
        if value is True:
            parts.append(name)
        elif isinstance(value, list):
            shown = (json.dumps(v) if isinstance(v, list) else str(v) for v in value)
            parts.append(f"{name} {'-'.join(shown)}")
        else:
            parts.append(f"{name} {value}")
    title = kind.capitalize()
    return f"{title}: {', '.join(parts)}" if parts else title


def _depth(events: list[dict[str, Any]]) -> int:
    """How many actions of an event log an undo could take back."""
    depth = 0
    for event in events:
        if event.get("type") == "action":
            depth += 1
        elif event.get("type") == "undo":
            depth -= 1
    return depth


class GameDesk:
    """The board game being played (or none), its version, and where it is kept."""

    def __init__(self, directory: Path | None) -> None:
        self.path = None if directory is None else Path(directory) / GAME_FILE
        self.game: BoardGame | None = None
        # Counted from a random start, so a page from before a restart sees a new number.
        self.version = secrets.randbelow(2**31)
        self._lock = threading.Lock()
        if self.path is not None and self.path.exists():
            self._load(self.path)

    def _load(self, path: Path) -> None:
        try:
            data = read_game_file(path)
            if not isinstance(data, dict) or not isinstance(data.get("events"), list):
                raise MalformedMove(f"{path}: a game file is an object with `events`.")
            self.game = game_class(str(data.get("game"))).replay(data["events"], str(path))
        except CompanionError as exc:
            aside = path.with_name(path.name + ".damaged")
            try:  # kept for a person to look at; the next new game starts a fresh file
                path.replace(aside)
            except OSError:
                aside = path
            log.warning(
                "the board game kept in %s cannot be taken up (%s); it is in %s", path, exc, aside
            )

    def _keep(self, game: BoardGame) -> None:
        """Write `game` to the state directory; StorageError (one sentence) when it cannot."""
        if self.path is None:
            return
        try:
            write_atomically(self.path, json.dumps(game_file(game), ensure_ascii=False) + "\n")
        except OSError as exc:
            raise StorageError(storage_sentence("The board game", exc)) from None

    def view(self, host: bool) -> dict[str, Any]:
        """The desk as the pages draw it; the legal actions, labelled, for the host."""
        with self._lock:
            out: dict[str, Any] = {"version": self.version, "game": None, "poll_ms": POLL_MS}
            game = self.game
            if game is None:
                return out
            out["game"] = {
                "key": game.key,
                "title": game.title,
                "needs_camera": game.needs_camera,
                "over": game.over,
                "to_move": game.to_move(),
                "phase": game.phase(),
                "score": game.score().to_json(),
                "view": game.view(),
                "can_undo": _depth(game.events) > 0,
            }
            if host:
                actions = [a.to_json() for a in game.legal_actions()]
                out["game"]["actions"] = [
                    {"index": i, "label": action_label(game.key, a), "action": a}
                    for i, a in enumerate(actions)
                ]
            return out

    def start(self, key: str, names: list[str], seed: int) -> None:
        """Set up a new game of `key`; the one before is replaced once the new one is kept."""
        game = game_class(key).new(names, seed)
        with self._lock:
            self._keep(game)
            self.game = game
            self.version += 1

    def play(self, choose: Callable[[BoardGame], Any]) -> str:
        """Push the action `choose` picks from the game; undone again if it cannot be kept."""
        with self._lock:
            game = self._current()
            action = choose(game)
            logged = len(game.events)
            game.push(action)
            try:
                self._keep(game)
            except StorageError:
                game.pop()
                del game.events[logged:]  # the log as it was, as on disk
                raise
            self.version += 1
            return action_label(game.key, action.to_json())

    def undo(self) -> str:
        """Take back the last action; pushed again if the change cannot be kept."""
        with self._lock:
            game = self._current()
            logged = len(game.events)
            action = game.pop()
            try:
                self._keep(game)
            except StorageError:
                game.push(action)
                del game.events[logged:]
                raise
            self.version += 1
            return action_label(game.key, action.to_json())

    def _current(self) -> BoardGame:
        if self.game is None:
            raise IllegalMove("No board game is being played: start one first.")
        return self.game


def register(
    app: Flask,
    *,
    require_host: Callable[[], None],
    is_host: Callable[[], bool],
    read_body: Callable[[], dict[str, Any]],
    directory: Path | None,
) -> GameDesk:
    """Add the board games' page and API to `app` around a new desk (in app.extensions)."""
    desk = GameDesk(directory)
    app.extensions[EXTENSION] = {
        "desk": desk,
        "require_host": require_host,
        "is_host": is_host,
        "read_body": read_body,
    }
    app.register_blueprint(bp)
    return desk


def _ext() -> dict[str, Any]:
    ext: dict[str, Any] = current_app.extensions[EXTENSION]
    return ext


def _desk() -> GameDesk:
    desk: GameDesk = _ext()["desk"]
    return desk


def _change() -> dict[str, Any]:
    """The body of a change by the host (401/403 otherwise)."""
    _ext()["require_host"]()
    body: dict[str, Any] = _ext()["read_body"]()
    return body


def _state() -> dict[str, Any]:
    host = bool(_ext()["is_host"]())
    state = _desk().view(host)
    you: dict[str, Any] = {"host": host}
    if host:
        you["csrf"] = auth.csrf_token()
    state["you"] = you
    state["games"] = [
        {"key": key, "title": cls.title, "min": cls.min_players, "max": cls.max_players}
        for key, cls in ((k, game_class(k)) for k in sorted(GAMES))
    ]
    return state


def _names(value: Any, cls: type[BoardGame]) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(n, str) for n in value):
        raise MalformedMove("names must be a list of the players' names.")
    names = [n.strip() for n in value if n.strip()]
    if not cls.min_players <= len(names) <= cls.max_players:
        raise MalformedMove(
            f"{cls.title} is played by {cls.min_players} to {cls.max_players} players,"
            f" not {len(names)}."
        )
    if any(len(n) > MAX_NAME for n in names):
        raise MalformedMove(f"A player's name has at most {MAX_NAME} letters.")
    if len({n.casefold() for n in names}) != len(names):
        raise MalformedMove("Two players have the same name.")
    return names


@bp.get("/games")
def games_page() -> str:
    return render_template("games.html", state=_state())


@bp.get("/api/games/state")
def api_state() -> Response:
    """The desk; with `?since=VERSION` of the page's own state, only `unchanged` when it is."""
    desk = _desk()
    if request.args.get("since") == str(desk.version):
        host = bool(_ext()["is_host"]())
        return jsonify({"version": desk.version, "unchanged": True, "you": {"host": host}})
    return jsonify(_state())


@bp.post("/api/games/new")
def api_new() -> Response:
    body = _change()
    key = body.get("game")
    if not isinstance(key, str) or key not in GAMES:
        known = " or ".join(sorted(GAMES))
        raise MalformedMove(f"game must be {known}.")
    cls = game_class(key)
    names = _names(body.get("names"), cls)
    seed = body.get("seed")
    if seed is None:
        seed = secrets.randbelow(2**31)
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**63:
        raise MalformedMove("seed must be a whole number from 0.")
    _desk().start(key, names, seed)
    return jsonify({"ok": True, "text": f"A game of {cls.title} for {', '.join(names)}."})


@bp.post("/api/games/action")
def api_action() -> Response:
    body = _change()
    index, data, version = body.get("index"), body.get("action"), body.get("version")
    if (index is None) == (data is None):
        raise MalformedMove("Send either index (of the legal actions) or action (its JSON).")
    number = -1
    if data is None:
        if isinstance(index, bool) or not isinstance(index, int):
            raise MalformedMove("index must be the number of a legal action.")
        number = index
    if version is not None and (isinstance(version, bool) or not isinstance(version, int)):
        raise MalformedMove("version must be the number the state gave.")
    desk = _desk()

    def choose(game: BoardGame) -> Any:
        if version is not None and version != desk.version:
            raise IllegalMove("The game changed since this page was drawn: look again.")
        if data is not None:
            return game.action_from_json(data)
        legal = game.legal_actions()
        if not 0 <= number < len(legal):
            raise IllegalMove(f"There is no legal action number {number} now.")
        return legal[number]

    text = desk.play(choose)
    return jsonify({"ok": True, "text": text})


@bp.post("/api/games/undo")
def api_undo() -> Response:
    _change()
    text = _desk().undo()
    return jsonify({"ok": True, "text": f"Undone: {text}"})
