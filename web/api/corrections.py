"""A cell of the last read corrected by the host, and the read judged again."""

from __future__ import annotations

from flask import Blueprint, Response, jsonify

from web import forms
from web.api.common import read_body, require_host, table

bp = Blueprint("corrections", __name__, url_prefix="/api")


@bp.post("/correct")
def correct() -> Response:
    require_host()
    session = table().session
    area, row, col, cell = forms.parse_correction(session, read_body())
    verdict = session.correct(area, row, col, cell)
    return jsonify({"ok": True, **forms.verdict_json(verdict)})
