"""The security review of the phone pages, one test per control (docs/security.md).

Routes are taken from the app's url_map, so a route added later is held to the same rules:
guests only read, changes need the host login and the CSRF token, the PIN is guessed slowly,
logins end, nothing secret reaches a log or a URL, every response carries the browser
protections, no file outside web/static is served, and errors never show internals.
"""

from __future__ import annotations

import hmac
import inspect
import json
import logging
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient

from companion.session import Session
from tests.web.conftest import PIN, Host, log_in, page_token, web_settings
from web import auth
from web.app import ERROR_SENTENCES, MAX_BODY_BYTES, create_app

STATIC = Path(__file__).resolve().parents[2] / "web" / "static"
#: A body each change route would accept from the host (any other route gets {}).
GOOD_BODIES: dict[str, dict[str, Any]] = {
    "/api/turn": {"steps": 1, "action": {"type": "pass"}},
    "/api/preview": {"steps": 1, "action": {"type": "pass"}},
    "/api/confirm": {"index": 0},
    "/api/correct": {"area": "display", "row": 0, "col": 0, "cell": {"empty": True}},
    "/api/game": {"players": [{"name": "A", "seat": 1}, {"name": "B", "seat": 2}]},
}

#: The host's teach-a-box changes (web.api.teach); {} is refused before it is read.
TEACH_CHANGES = {f"/api/teach/{a}" for a in ("start", "look", "accept", "skip", "finish", "cancel")}
#: The board games' changes (web.api.games): a new game, an action, an undo, a resume.
GAMES_CHANGES = {f"/api/games/{a}" for a in ("new", "action", "undo", "resume")}
#: Giants' final count by taps (web.api.giants_count): the count sent whole, or cleared.
GIANTS_COUNT_CHANGES = {"/api/games/giants/count", "/api/games/giants/count/clear"}


def post_routes(app: Flask) -> list[str]:
    """Every route that takes a POST, i.e. may change something."""
    return sorted(r.rule for r in app.url_map.iter_rules() if "POST" in (r.methods or ()))


def change_routes(app: Flask) -> list[str]:
    """Every POST route that needs the host: all but the login itself."""
    return [route for route in post_routes(app) if route != "/api/login"]


def seen(session: Session) -> str:
    return json.dumps(session.view(), sort_keys=True)


def is_host(client: FlaskClient) -> bool:
    return bool(client.get("/api/state").get_json()["you"]["host"])


def post(client: FlaskClient, route: str, token: str | None, **kwargs: Any) -> Any:
    headers = {} if token is None else {"X-CSRF-Token": token}
    return client.post(route, json=GOOD_BODIES.get(route, {}), headers=headers, **kwargs)


def try_pin(client: FlaskClient, pin: str, address: str = "10.1.2.3") -> Any:
    return client.post(
        "/api/login",
        json={"pin": pin},
        headers={"X-CSRF-Token": page_token(client)},
        environ_base={"REMOTE_ADDR": address},
    )


# ------------------------------------------------------------------ guests only read


def test_the_only_routes_that_take_changes_are_known(app: Flask) -> None:
    """A new POST route must be added here on purpose (and is then covered below)."""
    assert post_routes(app) == sorted(
        {
            *GOOD_BODIES,
            "/api/undo",
            "/api/dismiss",
            "/api/resume",
            "/api/login",
            "/api/logout",
            "/api/camera/settle",
            *TEACH_CHANGES,
            *GAMES_CHANGES,
            "/api/games/tongiaki/count",
            *GIANTS_COUNT_CHANGES,
        }
    )
    for rule in app.url_map.iter_rules():
        assert not {"PUT", "PATCH", "DELETE"} & set(rule.methods or ()), rule.rule


def test_a_guest_cannot_change_anything_even_with_a_page_token(
    app: Flask, client: FlaskClient, session: Session
) -> None:
    before = seen(session)
    token = page_token(client)  # a guest who opened the host page but knows no PIN
    for route in change_routes(app):
        for sent in (None, token):
            response = post(client, route, sent)
            assert response.status_code == 401, route
            assert response.get_json() == {"error": ERROR_SENTENCES[401]}
    assert seen(session) == before


def test_reading_routes_change_nothing(app: Flask, client: FlaskClient, session: Session) -> None:
    session.set_camera("ok", "Camera ready.", snapshot=b"\xff\xd8 jpeg \xff\xd9")
    before = seen(session)
    for rule in app.url_map.iter_rules():
        if "GET" in (rule.methods or ()) and not rule.arguments and rule.rule != "/events":
            assert client.get(rule.rule).status_code == 200, rule.rule
    with client.get("/events", buffered=False) as stream:
        assert stream.status_code == 200
    assert seen(session) == before


# ------------------------------------------------------------------ the PIN


def test_the_pin_is_compared_in_constant_time(
    client: FlaskClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert "compare_digest" in inspect.getsource(auth.pin_matches)
    assert "==" not in inspect.getsource(auth.pin_matches)
    calls: list[tuple[bytes, bytes]] = []
    real = hmac.compare_digest

    def spy(a: bytes, b: bytes) -> bool:
        calls.append((a, b))
        return real(a, b)

    monkeypatch.setattr("web.auth.hmac.compare_digest", spy)
    for guess in ("1", "0000", "13579", "1234567890123456"):  # short, same length, long
        calls.clear()
        assert try_pin(client, guess, address=f"10.9.9.{len(guess)}").status_code == 401
        assert (guess.encode(), PIN.encode()) in calls, guess
    calls.clear()
    assert try_pin(client, PIN).status_code == 200
    assert (PIN.encode(), PIN.encode()) in calls
    assert not auth.pin_matches(2468, PIN) and not auth.pin_matches(None, PIN)  # not text


def test_wrong_pins_are_limited_per_client(client: FlaskClient) -> None:
    for _ in range(5):
        assert try_pin(client, "0000").status_code == 401
    refused = try_pin(client, "0000")
    assert refused.status_code == 429
    assert 1 <= int(refused.headers["Retry-After"]) <= 60
    wait = int(refused.headers["Retry-After"])
    assert refused.get_json() == {"error": f"Too many wrong PINs: try again in {wait} seconds."}
    right = try_pin(client, PIN)  # the right PIN is not even tried while paused
    assert right.status_code == 429 and not is_host(client)
    assert try_pin(client, PIN, address="10.1.2.99").status_code == 200  # another phone may


def test_wrong_pins_are_limited_in_all(session: Session) -> None:
    client = create_app(session, web_settings()).test_client()
    for i in range(20):
        assert try_pin(client, "0000", address=f"10.0.0.{i}").status_code == 401
    refused = try_pin(client, PIN, address="10.0.1.1")
    assert refused.status_code == 429 and int(refused.headers["Retry-After"]) >= 1
    assert not is_host(client)


def test_the_lockout_ends_after_its_window(session: Session) -> None:
    app = create_app(session, web_settings(login_window_s=60.0))
    now = [5000.0]
    app.extensions["companion_login_limiter"].clock = lambda: now[0]
    client = app.test_client()
    for _ in range(5):
        try_pin(client, "0000")
    assert try_pin(client, PIN).status_code == 429
    now[0] += 30
    waiting = try_pin(client, PIN)
    assert waiting.status_code == 429 and int(waiting.headers["Retry-After"]) == 30
    now[0] += 31
    assert try_pin(client, PIN).status_code == 200
    assert is_host(client)


def test_the_back_off_pauses_new_logins_and_leaves_the_hosts_login_working(
    session: Session,
) -> None:
    app = create_app(session, web_settings(login_backoff_after=3))
    now = [5000.0]
    app.extensions["companion_login_limiter"].clock = lambda: now[0]
    host = log_in(app.test_client())  # the host logged in before the game
    guesser = app.test_client()
    for i in range(5):
        now[0] += 3600  # slow enough for every per-minute limit
        assert try_pin(guesser, "000000", address=f"10.0.0.{i}").status_code == 401
    # The 4th and 5th wrong guesses past the allowance of 3: a pause of 60 s, then 120 s.
    refused = try_pin(app.test_client(), PIN, address="10.0.1.1")
    assert refused.status_code == 429 and refused.headers["Retry-After"] == "120"
    assert refused.get_json() == {"error": "Too many wrong PINs: try again in 2 minutes."}
    assert is_host(host.client) and host.post("/api/dismiss").status_code == 200
    now[0] += 120
    assert try_pin(app.test_client(), PIN, address="10.0.1.1").status_code == 200


def test_the_pin_is_never_taken_from_a_url_or_a_form(app: Flask, client: FlaskClient) -> None:
    token = page_token(client)
    for rule in app.url_map.iter_rules():
        path = rule.rule.replace("<path:filename>", "app.js")
        for method in sorted((rule.methods or set()) - {"OPTIONS"}):
            client.open(
                f"{path}?pin={PIN}", method=method, headers={"X-CSRF-Token": token}, json={}
            ).close()
            assert not is_host(client), (method, path)
    form = client.post(
        "/api/login",
        data={"pin": PIN},
        headers={"X-CSRF-Token": token},
    )
    assert form.status_code == 400 and not is_host(client)


def test_the_login_form_cannot_put_the_pin_in_a_url(client: FlaskClient) -> None:
    """Without its script (slow phone, tap before it loaded) a form submits by itself; a GET
    form would put ?pin=... in the address bar and the browser history."""
    html = client.get("/host").get_data(as_text=True)
    form = re.search(r"<form id=\"login-form\"[^>]*>", html)
    assert form is not None
    assert re.search(r'method="post"', form.group(0), re.IGNORECASE)


# ------------------------------------------------------------------ CSRF


def test_every_change_needs_this_sessions_csrf_token(
    app: Flask, host: Host, session: Session
) -> None:
    other = app.test_client()
    other_host = log_in(other)  # another browser's host login: its token is not ours
    stale = page_token(app.test_client())
    before = seen(session)
    for route in post_routes(app):
        for token in (None, "", "forged", host.token[:-1], other_host.token, stale):
            response = post(host.client, route, token)
            assert response.status_code == 403, (route, token)
            assert "security token" in response.get_json()["error"]
    assert seen(session) == before
    assert is_host(host.client) and host.post("/api/dismiss").status_code == 200


def test_the_token_before_login_is_dead_after_it(client: FlaskClient) -> None:
    before = page_token(client)
    host = log_in(client)
    assert host.token != before
    assert post(client, "/api/undo", before).status_code == 403


# ------------------------------------------------------------------ logins end


def test_a_login_expires_after_session_minutes(session: Session) -> None:
    now = [1_000_000.0]
    app = create_app(session, web_settings(session_minutes=30), clock=lambda: now[0])
    host = log_in(app.test_client())
    now[0] += 30 * 60 - 1
    assert is_host(host.client)
    now[0] += 2
    assert not is_host(host.client)
    before = seen(session)
    for route in change_routes(app):
        assert post(host.client, route, host.token).status_code == 401, route
    assert seen(session) == before


def test_logout_ends_the_login_even_for_a_copied_cookie(app: Flask, session: Session) -> None:
    host = log_in(app.test_client())
    cookie = host.client.get_cookie("companion_session")
    assert cookie is not None
    thief = app.test_client()  # somebody who copied the cookie and the token
    thief.set_cookie("companion_session", cookie.value)
    assert is_host(thief)
    assert host.post("/api/logout").status_code == 200
    assert not is_host(host.client) and not is_host(thief)
    before = seen(session)
    for route in change_routes(app):
        assert post(host.client, route, host.token).status_code == 401, route
        assert post(thief, route, host.token).status_code == 401, route
    assert seen(session) == before


def test_a_logout_outlives_a_restart_when_the_logins_are_kept(
    session: Session, tmp_path: Path
) -> None:
    # With a configured secret key a cookie is still signed rightly after a restart.
    kept = tmp_path / "ended-logins.json"
    before = create_app(session, web_settings(), ended_logins=kept)
    host = log_in(before.test_client())
    cookie = host.client.get_cookie("companion_session")
    assert cookie is not None
    assert host.post("/api/logout").status_code == 200
    assert kept.stat().st_mode & 0o777 == 0o600

    def copied_into(app: Flask) -> FlaskClient:
        thief = app.test_client()
        thief.set_cookie("companion_session", cookie.value)
        return thief

    assert not is_host(copied_into(create_app(session, web_settings(), ended_logins=kept)))
    # Without the kept file the restarted app would take the copy for the host.
    assert is_host(copied_into(create_app(session, web_settings())))


def test_damaged_kept_logins_are_reported_not_fatal(
    session: Session, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    kept = tmp_path / "ended-logins.json"
    for damage in (b"\xff\xfe", b"{not json", b"[1, 2]", b'{"id": "soon", "x": 1e999}'):
        kept.write_bytes(damage)
        with caplog.at_level(logging.WARNING):
            app = create_app(session, web_settings(), ended_logins=kept)
        host = log_in(app.test_client())
        assert host.post("/api/logout").status_code == 200  # and the file is whole again
        assert isinstance(json.loads(kept.read_text(encoding="utf-8")), dict)
    assert "cannot be read" in caplog.text


def test_a_fresh_login_ends_the_old_one_of_that_browser(app: Flask) -> None:
    client = app.test_client()
    log_in(client)
    old = client.get_cookie("companion_session")
    assert old is not None
    log_in(client)
    copy = app.test_client()
    copy.set_cookie("companion_session", old.value)
    assert is_host(client) and not is_host(copy)


def test_a_forged_or_tampered_cookie_is_a_guest(app: Flask) -> None:
    host = log_in(app.test_client())
    cookie = host.client.get_cookie("companion_session")
    assert cookie is not None
    for value in (cookie.value[:-2] + "xx", "eyJob3N0X3NpbmNlIjoxfQ.x.y", "", "a" * 4000):
        forged = app.test_client()
        forged.set_cookie("companion_session", value)
        assert not is_host(forged), value


# ------------------------------------------------------------------ no secrets in logs


def test_no_pin_token_or_cookie_reaches_a_log(
    app: Flask,
    client: FlaskClient,
    session: Session,
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    caplog.set_level(logging.DEBUG)
    try_pin(client, "9753")
    host = log_in(client)
    cookie = client.get_cookie("companion_session")
    assert cookie is not None
    host.post("/api/preview", GOOD_BODIES["/api/preview"])
    host.post("/api/turn", GOOD_BODIES["/api/turn"])
    host.post("/api/turn", {"steps": "x"})
    host.post("/api/undo")
    monkeypatch.setattr(session, "dismiss", lambda: 1 / 0)
    assert host.post("/api/dismiss").status_code == 500  # logged with its traceback
    host.post("/api/logout")
    assert any(r.levelno >= logging.WARNING for r in caplog.records)
    text = caplog.text + "\n".join(str(r.args) for r in caplog.records)
    for secret in (PIN, "9753", host.token, cookie.value):
        assert secret not in text


# ------------------------------------------------------------------ cookies


def test_every_cookie_is_httponly_and_samesite_strict(client: FlaskClient) -> None:
    responses = [client.get("/host")]
    token = page_token(client)
    responses.append(client.post("/api/login", json={"pin": PIN}, headers={"X-CSRF-Token": token}))
    csrf = responses[-1].get_json()["csrf"]
    responses.append(client.post("/api/logout", json={}, headers={"X-CSRF-Token": csrf}))
    cookies = [c for r in responses for c in r.headers.getlist("Set-Cookie")]
    assert len(cookies) >= 2
    for cookie in cookies:
        assert "HttpOnly" in cookie and "SameSite=Strict" in cookie, cookie
        assert PIN not in cookie


def test_guests_reading_the_table_get_no_cookie(client: FlaskClient) -> None:
    for path in ("/", "/api/state", "/snapshot.jpg", "/qr.png"):
        assert "Set-Cookie" not in client.get(path).headers, path


# ------------------------------------------------------------------ headers everywhere


def check_headers(response: Any, what: str) -> None:
    headers = response.headers
    assert headers.get("X-Frame-Options") == "DENY", what
    assert headers.get("X-Content-Type-Options") == "nosniff", what
    assert headers.get("Referrer-Policy") == "no-referrer", what
    policy = {
        part.split()[0]: part.split()[1:]
        for part in headers.get("Content-Security-Policy", "").split(";")
        if part.strip()
    }
    assert policy.get("frame-ancestors") == ["'none'"], what
    scripts = policy.get("script-src", policy.get("default-src"))
    assert scripts is not None, what
    assert "'unsafe-inline'" not in scripts and "'unsafe-eval'" not in scripts, what
    assert "*" not in scripts and not any(s.startswith("http") for s in scripts), what


def opener(path: str, method: str) -> Callable[[FlaskClient], Any]:
    return lambda client: client.open(path, method=method)


def every_kind_of_response(app: Flask) -> list[tuple[str, Callable[[FlaskClient], Any]]]:
    """(what, request) for each page, file, stream and error the app can answer with."""
    kinds: list[tuple[str, Callable[[FlaskClient], Any]]] = []
    for rule in app.url_map.iter_rules():
        path = rule.rule.replace("<path:filename>", "app.js")
        for method in sorted(rule.methods or ()):
            if path == "/events" and method == "GET":
                continue  # the stream is checked below, unbuffered
            kinds.append((f"{method} {path}", opener(path, method)))
    kinds += [
        ("an HTML 404", lambda c: c.get("/nowhere")),
        ("an API 404", lambda c: c.get("/api/nowhere")),
        ("an HTML 405", lambda c: c.post("/")),
        ("an API 405", lambda c: c.get("/api/turn")),
        ("a 401", lambda c: c.post("/api/undo")),
        ("a 403", lambda c: c.post("/api/login", json={"pin": PIN})),
        ("a 413", lambda c: c.post("/api/login", data=b"x" * (MAX_BODY_BYTES + 1))),
        ("a static 404", lambda c: c.get("/static/nothing.js")),
        ("a path outside static", lambda c: c.get("/static/../app.py")),
        ("the event stream", lambda c: c.get("/events", buffered=False)),
    ]
    return kinds


def test_every_response_carries_the_browser_protections(
    app: Flask, session: Session, client: FlaskClient
) -> None:
    session.set_camera("ok", "Camera ready.", snapshot=b"\xff\xd8 jpeg \xff\xd9")
    for what, send in every_kind_of_response(app):
        response = send(client)
        check_headers(response, what)
        response.close()
    host = log_in(client)
    for what, response in [
        ("a 400", host.post("/api/turn", {"steps": "x"})),
        ("a 409", host.post("/api/confirm", {"index": 0})),
        ("the snapshot", client.get("/snapshot.jpg")),
    ]:
        check_headers(response, what)
    for _ in range(6):
        limited = try_pin(client, "0000", address="10.7.7.7")
    assert limited.status_code == 429
    check_headers(limited, "a 429")


def test_no_snapshot_is_a_404_with_the_protections(client: FlaskClient) -> None:
    response = client.get("/snapshot.jpg")
    assert response.status_code == 404
    check_headers(response, "no snapshot")


def test_a_failure_inside_carries_the_protections_and_no_internals(
    host: Host, session: Session, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("secret internal detail at /srv/companion")

    monkeypatch.setattr(session, "view", broken)
    monkeypatch.setattr(session, "undo", broken)
    for path, response in [
        ("/", host.client.get("/")),
        ("/api/state", host.client.get("/api/state")),
        ("/api/undo", host.post("/api/undo")),
    ]:
        assert response.status_code == 500, path
        check_headers(response, path)
        body = response.get_data(as_text=True)
        assert "secret internal detail" not in body and "Traceback" not in body, path
        if path.startswith("/api/"):
            assert response.get_json() == {"error": ERROR_SENTENCES[500]}
        else:
            assert ERROR_SENTENCES[500] in body


# ------------------------------------------------------------------ safe paths

OUTSIDE_STATIC = [
    "/static/../app.py",
    "/static/%2e%2e/app.py",
    "/static/%2e%2e%2fapp.py",
    "/static/..%2fapp.py",
    "/static/..%5capp.py",
    "/static/%2e%2e%5capp.py",
    "/static/.%2e/app.py",
    "/static/..%252fapp.py",
    "/static/%c0%ae%c0%ae/app.py",
    "/static/....//app.py",
    "/static/..;/app.py",
    "/static/../templates/base.html",
    "/static/%2e%2e/templates/base.html",
    "/static//etc/passwd",
    "/static/%2fetc%2fpasswd",
    "/static/..%2f..%2f..%2f..%2fetc%2fpasswd",
    "/../web/app.py",
    "/%2e%2e/web/app.py",
    "/static/app.js%00.py",
    "/static/app.js/..%2f..%2fapp.py",
]


@pytest.mark.parametrize("path", OUTSIDE_STATIC)
def test_no_file_outside_web_static_is_served(client: FlaskClient, path: str) -> None:
    response = client.get(path, follow_redirects=True)
    body = response.get_data()
    assert response.status_code == 404, (path, response.status_code)
    assert b"def create_app" not in body and b"root:" not in body and b"{% block" not in body


def test_every_static_file_is_served_and_nothing_else_of_the_package(
    client: FlaskClient,
) -> None:
    for file in sorted(STATIC.iterdir()):
        response = client.get(f"/static/{file.name}")
        assert response.status_code == 200 and response.data == file.read_bytes(), file.name
    for name in ("app.py", "auth.py", "__init__.py", "templates/base.html"):
        assert client.get(f"/static/{name}").status_code == 404, name


# ------------------------------------------------------------------ errors


def test_api_errors_are_one_json_sentence(app: Flask, client: FlaskClient) -> None:
    host = log_in(app.test_client())
    cases = {
        400: host.post("/api/turn", {"steps": "one"}),
        401: client.post("/api/undo"),
        403: host.client.post("/api/undo"),
        404: client.get("/api/nothing"),
        405: client.put("/api/state"),
        409: host.post("/api/confirm", {"index": 0}),
        413: host.client.post(
            "/api/turn", data=b"[" * (MAX_BODY_BYTES + 1), headers={"X-CSRF-Token": host.token}
        ),
    }
    for status, response in cases.items():
        assert response.status_code == status
        assert response.mimetype == "application/json", status
        error = response.get_json()["error"]
        assert isinstance(error, str) and error.endswith(".") and "\n" not in error, status
        body = response.get_data(as_text=True)
        assert "<html" not in body.lower() and "Traceback" not in body, status


def test_a_player_name_cannot_become_script_on_the_page(host: Host) -> None:
    name = "</script><script>alert(1)</script>"
    players = [{"name": name[:24], "seat": 1}, {"name": "<b>B</b>", "seat": 2}]
    assert host.post("/api/game", {"players": players}).status_code == 200
    for path in ("/", "/host"):
        html = host.client.get(path).get_data(as_text=True)
        assert "</script><script>" not in html and "<b>B</b>" not in html, path


def test_a_deeply_nested_body_is_a_400_not_a_crash(host: Host) -> None:
    """Found by test_fuzz_routes: json.loads raised RecursionError (a 500)."""
    response = host.client.post(
        "/api/turn", data=b"[" * 50_000, headers={"X-CSRF-Token": host.token}
    )
    assert response.status_code == 400
    assert response.get_json() == {"error": "The request body is not valid JSON."}


def test_text_that_is_not_unicode_is_a_400_not_a_crash(client: FlaskClient) -> None:
    """Found by test_fuzz_routes: a PIN of a lone surrogate ("\\ud800") could not be
    encoded for the comparison (a 500); no such text gets into the game either."""
    assert not auth.pin_matches("\ud800", PIN)
    response = client.post(
        "/api/login",
        data=b'{"pin": "\\ud800"}',
        headers={"X-CSRF-Token": page_token(client)},
    )
    assert response.status_code == 400
    assert "not valid Unicode" in response.get_json()["error"]
    host = log_in(client)
    players = b'{"players": [{"name": "\\udfff", "seat": 1}, {"name": "B", "seat": 2}]}'
    response = client.post("/api/game", data=players, headers={"X-CSRF-Token": host.token})
    assert response.status_code == 400


def test_a_started_session_is_not_needed_for_any_of_this() -> None:
    """The checks above hold on a fresh appliance too (no game yet)."""
    session = Session()
    app = create_app(session, web_settings())
    client = app.test_client()
    for route in change_routes(app):
        assert post(client, route, page_token(client)).status_code == 401
    host = log_in(client)
    assert post(client, "/api/undo", None).status_code == 403
    assert host.post("/api/undo").status_code == 409
