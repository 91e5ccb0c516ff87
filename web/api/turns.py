"""Turns: one entered by hand or previewed, and the host's answer to a doubtful read."""

from __future__ import annotations

from flask import Blueprint, Response, jsonify

from companion.errors import MalformedMove
from web import forms
from web.api.common import read_body, require_host, table

bp = Blueprint("turns", __name__, url_prefix="/api")


@bp.post("/turn")
def turn() -> Response:
    require_host()
    session = table().session
    record = session.play(forms.parse_turn(session, read_body()))
    return jsonify({"ok": True, "text": record.describe()})


@bp.post("/preview")
def preview() -> Response:
    require_host()
    session = table().session
    return jsonify(forms.preview(session, forms.parse_turn(session, read_body())))


@bp.post("/confirm")
def confirm() -> Response:
    require_host()
    index = read_body().get("index")
    if isinstance(index, bool) or not isinstance(index, int):
        raise MalformedMove("index must be the number of the turn chosen.")
    record = table().session.confirm(index)
    return jsonify({"ok": True, "text": record.describe()})


@bp.post("/dismiss")
def dismiss() -> Response:
    require_host()
    table().session.dismiss()
    return jsonify({"ok": True})
