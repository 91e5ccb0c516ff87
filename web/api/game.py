"""The game as a whole: its state, a new game, undo and resuming a damaged saved game."""

from __future__ import annotations

from flask import Blueprint, Response, jsonify

from web import forms
from web.api.common import read_body, require_host, state, table

bp = Blueprint("game", __name__, url_prefix="/api")


@bp.get("/state")
def get_state() -> Response:
    return jsonify(state())


@bp.post("/game")
def new_game() -> Response:
    require_host()
    session = table().session
    forms.parse_new_game(session, read_body()).start(session)
    return jsonify({"ok": True})


@bp.post("/undo")
def undo() -> Response:
    require_host()
    record = table().session.undo()
    return jsonify({"ok": True, "text": f"Undone: {record.describe()}"})


@bp.post("/resume")
def resume() -> Response:
    require_host()
    table().session.resume_last_good()
    return jsonify({"ok": True})
