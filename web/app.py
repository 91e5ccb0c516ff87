"""The Flask application: the pages, the JSON API, the event stream and the security rules.

`create_app(session, settings)` builds one app around one Session (OctoPrint style: an app
factory, typed settings). Guests read everything; each change is a POST by the logged-in host
with the session's CSRF token. Every /api error is JSON {"error": one sentence}: 400 malformed,
401 not the host, 403 bad CSRF token, 404, 405, 409 illegal, 413, 429 too many PIN guesses,
503 the game could not be saved (a full disk: nothing of the change was kept).
"""

from __future__ import annotations

import io
import json
import logging
import os
import time
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any, Protocol

from flask import Flask, Response, abort, jsonify, render_template, request
from markupsafe import Markup
from werkzeug.exceptions import HTTPException

from companion.errors import CompanionError, IllegalMove, MalformedMove
from companion.games.session import BoardSession, board_journal
from companion.journal import StorageError
from companion.session import Session
from web import auth, forms, games_api, teach
from web.settings import WebSettings
from web.sse import StreamSlots, Watched

log = logging.getLogger(__name__)

#: The largest request body the API accepts (a new game is well under 2 KB).
MAX_BODY_BYTES = 64 * 1024
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
ERROR_SENTENCES = {
    400: "The request is not one the companion understands.",
    401: "Log in as the host first.",
    403: "The page's security token is missing or out of date: reload the page.",
    404: "There is nothing at this address.",
    405: "This address does not take that kind of request.",
    413: "The request is too large.",
    429: "Too many wrong PINs: wait a minute and try again.",
    500: "Something went wrong inside the companion: reload the page and check the moves.",
    503: "Too many pages are open right now: this one will retry shortly.",
}


class CameraSetting(Protocol):
    """What the host page may do with a camera set for the table (hardware.camera.TableCamera)."""

    def request_settle(self) -> None: ...

    def refocus(self) -> None: ...

    def describe(self) -> str: ...


SETTLE_SENTENCE = "Exposure and white balance settle again at the next still moment between turns."


class ApiError(Exception):
    """An API failure with its HTTP status and one sentence."""

    def __init__(self, status: int, message: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.headers = headers or {}


def _error(status: int, message: str, headers: dict[str, str] | None = None) -> Response:
    response = jsonify({"error": message})
    response.status_code = status
    for key, value in (headers or {}).items():
        response.headers[key] = value
    return response


def _body() -> dict[str, Any]:
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


def resume_board(state_dir: Path) -> BoardSession:
    """The board game saved in the state directory (BoardSession.resume), its damage logged."""
    board = BoardSession.resume(board_journal(state_dir))
    if board.damage is not None:
        damage = board.damage
        kept = f"a copy is kept as {damage.kept}" if damage.kept else "no copy could be kept"
        choice = (
            "the host starts a new game on /games"
            if damage.moves is None
            else "the host chooses on /games between going on after move "
            f"{damage.moves}, the last good one, and a new game"
        )
        log.warning("the saved board game is damaged: %s; %s; %s", damage.problem, kept, choice)
    return board


def qr_svg(url: str) -> Markup:
    """The QR code of `url` as inline SVG (empty when segno is missing)."""
    try:
        import segno
    except ImportError:  # pragma: no cover - segno is a dependency; fail soft anyway
        return Markup("")
    svg = segno.make(url, error="m").svg_inline(scale=4, border=2, dark="#10222e", light="#fff")
    return Markup(svg)  # segno's own markup, no user text in it


def create_app(
    session: Session,
    settings: WebSettings | None = None,
    *,
    clock: Callable[[], float] = time.time,
    teach_frames: teach.FrameSource | None = None,
    teach_root: Path | None = None,
    teach_unavailable: str | None = None,
    ended_logins: Path | None = None,
    camera: CameraSetting | None = None,
    board: BoardSession | None = None,
) -> Flask:
    """The web app for one table. Without a configured PIN a random one is made: read it
    from `app.config["WEB_SETTINGS"].pin` to show it on the console. `teach_frames` (the
    camera's capture) and `teach_root` (the packs folder) enable teaching a box (web.teach);
    without frames, `teach_unavailable` is the sentence the host page says instead.
    `ended_logins`: a file that keeps the logged-out logins across restarts (auth.HostLogins).
    `camera`: a camera set for the table, whose setting the host page shows and settles again
    (and which refocuses when teaching starts). `board`: the table's board game (Tongiaki,
    Giants); by default the one saved beside the session's journal (none without one)."""
    settings = settings or WebSettings()
    generated = settings.pin is None
    settings = settings.with_pin()
    pin = settings.pin
    assert pin is not None
    app = Flask(__name__)
    app.config.update(
        WEB_SETTINGS=settings,
        PIN_GENERATED=generated,
        PUBLIC_URL=settings.public_url,
        SECRET_KEY=settings.secret_key or os.urandom(32),
        SESSION_COOKIE_NAME="companion_session",
        SESSION_COOKIE_HTTPONLY=True,
        SESSION_COOKIE_SAMESITE="Strict",
        PERMANENT_SESSION_LIFETIME=timedelta(minutes=settings.session_minutes),
        MAX_CONTENT_LENGTH=MAX_BODY_BYTES,
        JSON_AS_ASCII=False,
    )
    app.json.sort_keys = False  # type: ignore[attr-defined]
    app.extensions["companion_session"] = session
    lifetime_s = settings.session_minutes * 60.0
    limiter = auth.LoginLimiter(
        settings.login_attempts_per_client,
        settings.login_attempts_total,
        settings.login_window_s,
    )
    # Tests move the limiter's clock through here (it is monotonic, the logins' is wall time).
    app.extensions["companion_login_limiter"] = limiter
    logins = auth.HostLogins(lifetime_s, clock, ended_logins)
    slots = StreamSlots(settings.sse_max_clients)
    app.extensions["companion_streams"] = slots

    def host() -> bool:
        return logins.is_host()

    def require_host() -> None:
        if not host():
            raise ApiError(401, ERROR_SENTENCES[401])
        if not auth.csrf_ok(request.headers.get(auth.CSRF_HEADER)):
            raise ApiError(403, ERROR_SENTENCES[403])

    def public_url() -> str:
        return str(app.config.get("PUBLIC_URL") or request.host_url)

    def page_extras() -> dict[str, Any]:
        return {
            "colours": forms.PLAYER_COLOURS,
            "snapshot_interval_s": settings.snapshot_interval_s,
            "camera_read": session.last_read is not None,
            "camera_setting": camera.describe() if camera is not None else None,
            "url": public_url(),
        }

    def state() -> dict[str, Any]:
        view = session.view()
        you: dict[str, Any] = {"host": host()}
        if you["host"]:
            you["csrf"] = auth.csrf_token()
        view["you"] = you
        view["web"] = page_extras()
        return view

    # ------------------------------------------------------------------ pages

    @app.get("/")
    def table() -> str:
        return render_template("table.html", state=state(), host_page=False)

    @app.get("/host")
    def host_page() -> str:
        return render_template(
            "host.html",
            state=state(),
            host_page=True,
            csrf=auth.csrf_token(),
            qr=qr_svg(public_url()),
            url=public_url(),
        )

    @app.get("/snapshot.jpg")
    def snapshot() -> Response:
        data = session.camera.snapshot
        if data is None:
            abort(404)
        response = Response(data, mimetype="image/jpeg")
        response.headers["Cache-Control"] = "no-store"
        return response

    @app.get("/qr.png")
    def qr_png() -> Response:
        import segno

        buffer = io.BytesIO()
        segno.make(public_url(), error="m").save(buffer, kind="png", scale=8, border=2)
        response = Response(buffer.getvalue(), mimetype="image/png")
        response.headers["Cache-Control"] = "no-store"
        return response

    def event_stream(watched: Watched) -> Response:
        """The event stream of `watched` in one of the shared slots (503 when none is free)."""
        # waitress says when the phone closed the connection (web.serve keeps it reading).
        gone = request.environ.get("waitress.client_disconnected")
        stream = slots.open(
            watched,
            lifetime_s=settings.sse_lifetime_s,
            keepalive_s=settings.sse_keepalive_s,
            gone=gone if callable(gone) else None,
        )
        if stream is None:
            return _error(503, ERROR_SENTENCES[503], {"Retry-After": "5"})
        response = Response(stream, mimetype="text/event-stream")
        response.headers["Cache-Control"] = "no-store"
        response.headers["X-Accel-Buffering"] = "no"
        return response

    @app.get("/events")
    def events() -> Response:
        return event_stream(session)

    # -------------------------------------------------------------------- API

    @app.get("/api/state")
    def api_state() -> Response:
        return jsonify(state())

    @app.post("/api/login")
    def api_login() -> Response:
        if not auth.csrf_ok(request.headers.get(auth.CSRF_HEADER)):
            raise ApiError(403, ERROR_SENTENCES[403])
        client = request.remote_addr or "unknown"
        wait = limiter.retry_after(client)
        if wait is not None:
            log.warning("PIN guesses from %s are paused for %d s", client, wait)
            raise ApiError(429, ERROR_SENTENCES[429], {"Retry-After": str(wait)})
        if not auth.pin_matches(_body().get("pin"), pin):
            limiter.failed(client)
            log.warning("a wrong host PIN was tried from %s", client)
            raise ApiError(401, "That is not the host PIN.")
        limiter.succeeded(client)
        logins.log_in()
        log.info("the host logged in from %s", client)
        return jsonify({"ok": True, "csrf": auth.csrf_token()})

    @app.post("/api/logout")
    def api_logout() -> Response:
        require_host()
        logins.log_out()
        return jsonify({"ok": True})

    @app.post("/api/game")
    def api_game() -> Response:
        require_host()
        forms.parse_new_game(session, _body()).start(session)
        return jsonify({"ok": True})

    @app.post("/api/turn")
    def api_turn() -> Response:
        require_host()
        record = session.play(forms.parse_turn(session, _body()))
        return jsonify({"ok": True, "text": record.describe()})

    @app.post("/api/preview")
    def api_preview() -> Response:
        require_host()
        return jsonify(forms.preview(session, forms.parse_turn(session, _body())))

    @app.post("/api/undo")
    def api_undo() -> Response:
        require_host()
        record = session.undo()
        return jsonify({"ok": True, "text": f"Undone: {record.describe()}"})

    @app.post("/api/resume")
    def api_resume() -> Response:
        require_host()
        session.resume_last_good()
        return jsonify({"ok": True})

    @app.post("/api/confirm")
    def api_confirm() -> Response:
        require_host()
        index = _body().get("index")
        if isinstance(index, bool) or not isinstance(index, int):
            raise MalformedMove("index must be the number of the turn chosen.")
        record = session.confirm(index)
        return jsonify({"ok": True, "text": record.describe()})

    @app.post("/api/dismiss")
    def api_dismiss() -> Response:
        require_host()
        session.dismiss()
        return jsonify({"ok": True})

    @app.post("/api/correct")
    def api_correct() -> Response:
        require_host()
        area, row, col, cell = forms.parse_correction(session, _body())
        verdict = session.correct(area, row, col, cell)
        return jsonify({"ok": True, **forms.verdict_json(verdict)})

    @app.post("/api/camera/settle")
    def api_camera_settle() -> Response:
        require_host()
        if camera is None:
            raise IllegalMove("This camera's exposure is not set by the companion.")
        camera.request_settle()
        return jsonify({"ok": True, "text": SETTLE_SENTENCE})

    teach.register(
        app,
        catalogue=lambda: session.catalogue,
        require_host=require_host,
        is_host=host,
        read_body=_body,
        frames=teach_frames,
        root=teach_root,
        why_not=teach_unavailable,
        prepare=camera.refocus if camera is not None else None,
    )
    if board is None:
        journal = session.journal
        board = BoardSession() if journal is None else resume_board(journal.directory)
    games_api.register(
        app,
        board=board,
        require_host=require_host,
        is_host=host,
        read_body=_body,
        stream=event_stream,
    )

    # ----------------------------------------------------------------- errors

    def wants_json() -> bool:
        return request.path.startswith("/api/") or request.path == "/events"

    @app.errorhandler(ApiError)
    def api_error(error: ApiError) -> Response:
        return _error(error.status, error.message, error.headers)

    @app.errorhandler(MalformedMove)
    def malformed(error: MalformedMove) -> Response:
        return _error(400, error.message)

    @app.errorhandler(IllegalMove)
    def illegal(error: IllegalMove) -> Response:
        return _error(409, error.message)

    @app.errorhandler(CompanionError)
    def companion_error(error: CompanionError) -> Response:
        return _error(400, error.message)

    @app.errorhandler(StorageError)
    def storage_error(error: StorageError) -> Response:
        log.error("%s", error.message)
        return _error(503, error.message)

    @app.errorhandler(HTTPException)
    def http_error(error: HTTPException) -> Response | HTTPException:
        status = error.code or 500
        if not wants_json():
            if status == 404:
                page = render_template("error.html", message=ERROR_SENTENCES[404])
                return Response(page, status=404, mimetype="text/html")
            return error
        return _error(status, ERROR_SENTENCES.get(status, ERROR_SENTENCES[400]))

    @app.errorhandler(Exception)
    def unexpected(error: Exception) -> Response:
        log.exception("unexpected error while serving %s %s", request.method, request.path)
        if wants_json():
            return _error(500, ERROR_SENTENCES[500])
        page = render_template("error.html", message=ERROR_SENTENCES[500])
        return Response(page, status=500, mimetype="text/html")

    @app.after_request
    def security_headers(response: Response) -> Response:
        for key, value in SECURITY_HEADERS.items():
            response.headers[key] = value
        if request.path.startswith("/api/"):
            response.headers["Cache-Control"] = "no-store"
        return response

    return app
