"""What every route shares: the table the app serves, the host check, the request body and
the API's error type."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Protocol

from flask import Response, current_app, jsonify, request
from markupsafe import Markup

from companion.session import Session
from web import auth, forms
from web.settings import WebSettings
from web.sse import StreamSlots

#: Where the app keeps its `Table` (app.extensions).
EXTENSION = "companion_table"

ERROR_SENTENCES = {
    400: "The request is not one the companion understands.",
    401: "Log in as the host first.",
    403: "The page's security token is missing or out of date: reload the page.",
    404: "There is nothing at this address.",
    405: "This address does not take that kind of request.",
    413: "The request is too large.",
    429: "Too many wrong PINs: wait and try again.",
    500: "Something went wrong inside the companion: reload the page and check the moves.",
    503: "Too many pages are open right now: this one will retry shortly.",
}


class CameraSetting(Protocol):
    """What the host page may do with a camera set for the table (hardware.camera.TableCamera)."""

    def request_settle(self) -> None: ...

    def refocus(self) -> None: ...

    def describe(self) -> str: ...


@dataclass(frozen=True, slots=True)
class Table:
    """The table one app serves: its session, settings, host logins and event streams."""

    session: Session
    settings: WebSettings
    pin: str
    logins: auth.HostLogins
    limiter: auth.LoginLimiter
    streams: StreamSlots
    camera: CameraSetting | None


class ApiError(Exception):
    """An API failure with its HTTP status and one sentence."""

    def __init__(self, status: int, message: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.headers = headers or {}


def table() -> Table:
    """The table of the app handling the current request."""
    found: Table = current_app.extensions[EXTENSION]
    return found


def is_host() -> bool:
    return table().logins.is_host()


def require_host() -> None:
    """Refuse a change that does not come from the logged-in host with the CSRF token."""
    if not is_host():
        raise ApiError(401, ERROR_SENTENCES[401])
    if not auth.csrf_ok(request.headers.get(auth.CSRF_HEADER)):
        raise ApiError(403, ERROR_SENTENCES[403])


def error_response(status: int, message: str, headers: dict[str, str] | None = None) -> Response:
    """The JSON error {"error": message} with its status."""
    response = jsonify({"error": message})
    response.status_code = status
    for key, value in (headers or {}).items():
        response.headers[key] = value
    return response


def read_body() -> dict[str, Any]:
    """The JSON object of a POST (an empty body counts as {})."""
    if not request.get_data(cache=True):
        return {}
    try:
        data = request.get_json(force=True, silent=True)
    except RecursionError:  # "[[[[..." nested deeper than Python's json can follow
        data = None
    if data is None:
        raise ApiError(400, "The request body is not valid JSON.")
    if not isinstance(data, dict):
        raise ApiError(400, "The request body must be a JSON object.")
    try:  # "\ud800" escapes parse to text that cannot be encoded, compared or printed
        json.dumps(data, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        raise ApiError(400, "The request body holds text that is not valid Unicode.") from None
    return data


def public_url() -> str:
    """The address phones use to reach the table (the configured one, else this request's)."""
    return str(current_app.config.get("PUBLIC_URL") or request.host_url)


def state() -> dict[str, Any]:
    """The session's view with what the asking phone may do and what the pages show."""
    here = table()
    session = here.session
    view = session.view()
    view["you"] = auth.you(is_host())
    view["web"] = {
        "colours": forms.PLAYER_COLOURS,
        "snapshot_interval_s": here.settings.snapshot_interval_s,
        "camera_read": session.last_read is not None,
        "camera_setting": here.camera.describe() if here.camera is not None else None,
        "url": public_url(),
    }
    return view


def qr_svg(url: str) -> Markup:
    """The QR code of `url` as inline SVG (empty when segno is missing)."""
    try:
        import segno
    except ImportError:  # pragma: no cover - segno is a dependency; fail soft anyway
        return Markup("")
    svg = segno.make(url, error="m").svg_inline(scale=4, border=2, dark="#10222e", light="#fff")
    return Markup(svg)  # segno's own markup, no user text in it
