"""The Server-Sent Events stream: a phone hears each change of the table (web.sse)."""

from __future__ import annotations

from flask import Blueprint, Response, request

from web.api.common import ERROR_SENTENCES, error_response, table
from web.sse import Watched

bp = Blueprint("events", __name__)


@bp.get("/events")
def events() -> Response:
    return stream_response(table().session)


def stream_response(watched: Watched) -> Response:
    """The event stream of `watched` in one of the app's shared slots (503 when none is free);
    web.api.games streams its board game through it too."""
    here = table()
    settings = here.settings
    # waitress says when the phone closed the connection (web.serve keeps it reading).
    gone = request.environ.get("waitress.client_disconnected")
    stream = here.streams.open(
        watched,
        lifetime_s=settings.sse_lifetime_s,
        keepalive_s=settings.sse_keepalive_s,
        gone=gone if callable(gone) else None,
    )
    if stream is None:
        return error_response(503, ERROR_SENTENCES[503], {"Retry-After": "5"})
    response = Response(stream, mimetype="text/event-stream")
    response.headers["Cache-Control"] = "no-store"
    response.headers["X-Accel-Buffering"] = "no"
    return response
