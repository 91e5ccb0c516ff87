"""Every error as one sentence (JSON under /api and /events, a page elsewhere) with the status
of its kind (companion.errors), and the security headers on every response."""

from __future__ import annotations

import logging

from flask import Flask, Response, current_app, render_template, request
from werkzeug.exceptions import HTTPException, RequestEntityTooLarge

from companion.errors import CompanionError, IllegalMove, MalformedMove, NotNow, StorageError
from web.api.common import ERROR_SENTENCES, ApiError, error_response

log = logging.getLogger(__name__)

SECURITY_HEADERS = {
    "X-Frame-Options": "DENY",
    "Content-Security-Policy": (
        "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; "
        "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; "
        "frame-ancestors 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}

#: The HTTP status of each kind of companion error (the most specific kind applies).
STATUS = {
    MalformedMove: 400,
    IllegalMove: 409,
    NotNow: 409,
    StorageError: 503,
    CompanionError: 400,
}


def _wants_json() -> bool:
    return request.path.startswith("/api/") or request.path == "/events"


def _api_error(error: ApiError) -> Response:
    return error_response(error.status, error.message, error.headers)


def _companion_error(error: CompanionError) -> Response:
    status = next(code for kind, code in STATUS.items() if isinstance(error, kind))
    if status >= 500:
        log.error("%s", error.message)
    return error_response(status, error.message)


def _http_error(error: HTTPException) -> Response | HTTPException:
    status = error.code or 500
    if not _wants_json():
        if status == 404:
            page = render_template("error.html", message=ERROR_SENTENCES[404])
            return Response(page, status=404, mimetype="text/html")
        return error
    return error_response(status, ERROR_SENTENCES.get(status, ERROR_SENTENCES[400]))


def _unexpected(error: Exception) -> Response:
    log.exception("unexpected error while serving %s %s", request.method, request.path)
    if _wants_json():
        return error_response(500, ERROR_SENTENCES[500])
    page = render_template("error.html", message=ERROR_SENTENCES[500])
    return Response(page, status=500, mimetype="text/html")


def _refuse_large_bodies() -> None:
    """A body declared over MAX_CONTENT_LENGTH is 413 on every route, whether the route reads
    it or not (web.serve hands such a request over without its body)."""
    limit = current_app.config.get("MAX_CONTENT_LENGTH")
    if limit is not None and (request.content_length or 0) > limit:
        raise RequestEntityTooLarge()


def _security_headers(response: Response) -> Response:
    for key, value in SECURITY_HEADERS.items():
        response.headers[key] = value
    if request.path.startswith("/api/"):
        response.headers["Cache-Control"] = "no-store"
    return response


def register(app: Flask) -> None:
    """Install the error handlers and the security headers on `app`."""
    app.register_error_handler(ApiError, _api_error)
    app.register_error_handler(CompanionError, _companion_error)
    app.register_error_handler(HTTPException, _http_error)
    app.register_error_handler(Exception, _unexpected)
    app.before_request(_refuse_large_bodies)
    app.after_request(_security_headers)
