"""The camera set for the table: its exposure and white balance settled again."""

from __future__ import annotations

from flask import Blueprint, Response, jsonify

from companion.errors import NotNow
from web.api.common import require_host, table

bp = Blueprint("camera", __name__, url_prefix="/api/camera")

SETTLE_SENTENCE = "Exposure and white balance settle again at the next still moment between turns."


@bp.post("/settle")
def settle() -> Response:
    require_host()
    camera = table().camera
    if camera is None:
        raise NotNow("This camera's exposure is not set by the companion.")
    camera.request_settle()
    return jsonify({"ok": True, "text": SETTLE_SENTENCE})
