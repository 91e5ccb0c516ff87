"""The Flask application: the pages, the JSON API, the event stream and the security rules.

`create_app(session, settings)` builds one app around one Session (OctoPrint style: an app
factory, typed settings, a module per resource in web.api). Guests read everything; each
change is a POST by the logged-in host with the session's CSRF token. Every /api error is
JSON {"error": one sentence}: 400 malformed, 401 not the host, 403 bad CSRF token, 404, 405,
409 illegal or not possible now, 413, 429 too many PIN guesses, 503 the game could not be
saved (a full disk: nothing of the change was kept).
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

from flask import Flask

from companion.games.session import BoardSession
from companion.session import Session
from web import auth
from web.api import (
    camera,
    corrections,
    errors,
    events,
    game,
    games,
    giants_count,
    host,
    pages,
    teach,
    turns,
)
from web.api.common import ERROR_SENTENCES as ERROR_SENTENCES
from web.api.common import EXTENSION, CameraSetting, Table, is_host, read_body, require_host
from web.api.errors import SECURITY_HEADERS as SECURITY_HEADERS
from web.settings import WebSettings
from web.sse import StreamSlots

log = logging.getLogger(__name__)

#: The largest request body the API accepts (a new game is well under 2 KB).
MAX_BODY_BYTES = 64 * 1024

BLUEPRINTS = (
    events.bp,
    host.bp,
    game.bp,
    turns.bp,
    corrections.bp,
    camera.bp,
)


def create_app(
    session: Session,
    settings: WebSettings | None = None,
    *,
    clock: Callable[[], float] = time.time,
    teach_frames: teach.FrameSource | None = None,
    teach_root: Path | None = None,
    teach_unavailable: str | None = None,
    keep_lessons: Callable[[list[Any], Path], None] | None = None,
    ended_logins: Path | None = None,
    camera: CameraSetting | None = None,
    board: BoardSession | None = None,
) -> Flask:
    """The web app for one table. Without a configured PIN a random one is made: read it
    from `app.config["WEB_SETTINGS"].pin` to show it on the console. `teach_frames` (the
    camera's capture) and `teach_root` (the packs folder) enable teaching a box (web.api.teach);
    without frames, `teach_unavailable` is the sentence the host page says instead;
    `keep_lessons(frames, pack_dir)` keeps a taught pack's frames as the table's lessons.
    `ended_logins`: a file that keeps the logged-out logins across restarts (auth.HostLogins).
    `camera`: a camera set for the table, whose setting the host page shows and settles again
    (and which refocuses when teaching starts). `board`: the table's board game (Tongiaki,
    Giants; companion.games.session.resume_board takes up a saved one); by default one
    that is not saved."""
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
    limiter = auth.LoginLimiter(
        settings.login_attempts_per_client,
        settings.login_attempts_total,
        settings.login_window_s,
        backoff_after=settings.login_backoff_after,
        forgive_s=settings.login_forgive_s,
    )
    streams = StreamSlots(settings.sse_max_clients)
    logins = auth.HostLogins(settings.session_minutes * 60.0, clock, ended_logins)
    app.extensions[EXTENSION] = Table(session, settings, pin, logins, limiter, streams, camera)
    app.extensions["companion_session"] = session
    # Tests move the limiter's clock through here (it is monotonic, the logins' is wall time).
    app.extensions["companion_login_limiter"] = limiter
    app.extensions["companion_streams"] = streams
    pages.register(app)
    for blueprint in BLUEPRINTS:
        app.register_blueprint(blueprint)
    teach.register(
        app,
        catalogue=lambda: session.catalogue,
        require_host=require_host,
        is_host=is_host,
        read_body=read_body,
        frames=teach_frames,
        root=teach_root,
        why_not=teach_unavailable,
        prepare=camera.refocus if camera is not None else None,
        keep_lessons=keep_lessons,
    )
    games.register(
        app,
        board=board or BoardSession(),
        require_host=require_host,
        is_host=is_host,
        read_body=read_body,
        stream=events.stream_response,
    )
    giants_count.register(
        app,
        require_host=require_host,
        is_host=is_host,
        read_body=read_body,
        stream=events.stream_response,
    )
    errors.register(app)
    return app
