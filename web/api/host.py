"""Logging the host in with the PIN (guesses limited per client and in all) and out."""

from __future__ import annotations

import logging

from flask import Blueprint, Response, jsonify, request

from web import auth
from web.api.common import ERROR_SENTENCES, ApiError, read_body, require_host, table

log = logging.getLogger(__name__)

bp = Blueprint("host", __name__, url_prefix="/api")


def how_long(seconds: int) -> str:
    """A wait in words, rounded up: "45 seconds", "3 minutes", "17 hours", "2 days"."""
    for unit, size in (("day", 86_400), ("hour", 3600), ("minute", 60)):
        if seconds >= 2 * size:
            count = -(-seconds // size)
            return f"{count} {unit}s"
    return "1 second" if seconds == 1 else f"{seconds} seconds"


@bp.post("/login")
def login() -> Response:
    if not auth.csrf_ok(request.headers.get(auth.CSRF_HEADER)):
        raise ApiError(403, ERROR_SENTENCES[403])
    here = table()
    client = request.remote_addr or "unknown"
    wait = here.limiter.retry_after(client)
    if wait is not None:
        log.warning("PIN guesses from %s are paused for %d s", client, wait)
        sentence = f"Too many wrong PINs: try again in {how_long(wait)}."
        raise ApiError(429, sentence, {"Retry-After": str(wait)})
    if not auth.pin_matches(read_body().get("pin"), here.pin):
        here.limiter.failed(client)
        log.warning("a wrong host PIN was tried from %s", client)
        raise ApiError(401, "That is not the host PIN.")
    here.limiter.succeeded(client)
    here.logins.log_in()
    log.info("the host logged in from %s", client)
    return jsonify({"ok": True, "csrf": auth.csrf_token()})


@bp.post("/logout")
def logout() -> Response:
    require_host()
    table().logins.log_out()
    return jsonify({"ok": True})
