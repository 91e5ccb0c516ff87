"""The board games beside Māori on the phones: Tongiaki and Giants, entered by taps.

One such game at a time sits in the table's BoardSession (companion.games.session), beside the
Māori session. Guests read it (GET /api/games/state, the /games page, which follows
/games/events); the host starts one (POST /api/games/new), plays one of its legal actions
(POST /api/games/action), takes the last one back (POST /api/games/undo) and, after a damaged
save, goes on from its last good move (POST /api/games/resume). The BoardSession keeps the
game in its journal; these games need no camera.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Callable
from typing import Any

from flask import Blueprint, Flask, Response, current_app, jsonify, render_template, request

from companion.errors import MalformedMove, NotNow
from companion.games import GAMES, game_class
from companion.games.base import BoardGame
from companion.games.giants.game import GiantsGame
from companion.games.session import BoardSession, moves_of
from web import auth
from web.api import giants, tongiaki
from web.sse import Watched

EXTENSION = "companion_games"
#: The longest player name the form takes.
MAX_NAME = 24
bp = Blueprint("games", __name__)


def action_label(key: str, data: dict[str, Any]) -> str:
    """A button's few words for an action in its JSON form."""
    kind = str(data.get("type", "?"))
    if key == "tongiaki":
        return tongiaki.action_words(data)
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


def label(game: BoardGame, data: dict[str, Any], phase: str | None = None) -> str:
    """An action of `game` in words: Giants' names places and loads (web.api.giants)."""
    if isinstance(game, GiantsGame):
        return giants.action_words(game, data, phase)
    return action_label(game.key, data)


def view(board: BoardSession, host: bool) -> dict[str, Any]:
    """The board session as the pages draw it; the legal actions, labelled, for the host."""
    with board.lock:
        out: dict[str, Any] = {
            "version": board.version,
            "game": None,
            "damage": None if board.damage is None else board.damage.to_json(),
            "unsaved": board.unsaved,
        }
        game = board.game
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
            "can_undo": moves_of(game.events) > 0,
        }
        if isinstance(game, GiantsGame):
            out["game"]["layout"] = giants.layout(game.island)
        if host:
            actions = [a.to_json() for a in game.legal_actions()]
            phase = game.state.phase if isinstance(game, GiantsGame) else None
            out["game"]["actions"] = [
                {"index": i, "label": label(game, a, phase), "action": a}
                for i, a in enumerate(actions)
            ]
            if isinstance(game, GiantsGame):
                out["game"]["help"] = giants.help_choices(game, actions)
        return out


def register(
    app: Flask,
    *,
    board: BoardSession,
    require_host: Callable[[], None],
    is_host: Callable[[], bool],
    read_body: Callable[[], dict[str, Any]],
    stream: Callable[[Watched], Response],
) -> None:
    """Add the board games' page, event stream and API to `app` around `board`."""
    app.extensions[EXTENSION] = {
        "board": board,
        "require_host": require_host,
        "is_host": is_host,
        "read_body": read_body,
        "stream": stream,
    }
    app.register_blueprint(bp)
    tongiaki.register(
        app, board=board, require_host=require_host, is_host=is_host, read_body=read_body
    )


def _ext() -> dict[str, Any]:
    ext: dict[str, Any] = current_app.extensions[EXTENSION]
    return ext


def _board() -> BoardSession:
    board: BoardSession = _ext()["board"]
    return board


def _change() -> dict[str, Any]:
    """The body of a change by the host (401/403 otherwise)."""
    _ext()["require_host"]()
    body: dict[str, Any] = _ext()["read_body"]()
    return body


def _state() -> dict[str, Any]:
    host = bool(_ext()["is_host"]())
    state = view(_board(), host)
    state["you"] = auth.you(host)
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


@bp.get("/games/events")
def events() -> Response:
    """Server-Sent Events of the board session (web.sse), as /events is for Māori's."""
    stream: Callable[[Watched], Response] = _ext()["stream"]
    return stream(_board())


@bp.get("/api/games/state")
def api_state() -> Response:
    """The board session; with `?since=VERSION` of the page's own state, only `unchanged`
    when it is."""
    board = _board()
    if request.args.get("since") == str(board.version):
        host = bool(_ext()["is_host"]())
        return jsonify({"version": board.version, "unchanged": True, "you": {"host": host}})
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
    _board().start(key, names, seed)
    return jsonify({"ok": True, "text": f"A game of {cls.title} for {', '.join(names)}."})


@bp.post("/api/games/action")
def api_action() -> Response:
    body = _change()
    index, data, version = body.get("index"), body.get("action"), body.get("version")
    if (index is None) == (data is None):
        raise MalformedMove("Send either index (of the legal actions) or action (its JSON).")
    board = _board()
    if data is None:
        if isinstance(index, bool) or not isinstance(index, int):
            raise MalformedMove("index must be the number of a legal action.")
        chosen: Any = index
    else:
        with board.lock:
            game = board.game
            if game is None:
                raise NotNow("No board game is being played: start one first.")
            chosen = game.action_from_json(data)
    if version is not None and (isinstance(version, bool) or not isinstance(version, int)):
        raise MalformedMove("version must be the number the state gave.")
    action = board.play(chosen, version=version)
    assert board.game is not None
    return jsonify({"ok": True, "text": label(board.game, action.to_json())})


@bp.post("/api/games/undo")
def api_undo() -> Response:
    _change()
    board = _board()
    action = board.undo()
    assert board.game is not None
    return jsonify({"ok": True, "text": f"Undone: {label(board.game, action.to_json())}"})


@bp.post("/api/games/resume")
def api_resume() -> Response:
    """The host's choice for a damaged saved game: go on after its last good move."""
    _change()
    return jsonify({"ok": True, "text": _board().resume_last_good()})
