"""Only the host changes the game: PIN login, limits on guessing, CSRF, expiry, cookies."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest
from flask.testing import FlaskClient

from companion.errors import DataError
from companion.session import Session
from tests.web.conftest import PIN, Host, log_in, page_token, web_settings
from web import auth
from web.app import create_app
from web.settings import MIN_PIN_DIGITS, WebSettings


def try_pin(client: FlaskClient, pin: str, address: str = "10.1.2.3") -> Any:
    token = page_token(client)
    return client.post(
        "/api/login",
        json={"pin": pin},
        headers={"X-CSRF-Token": token},
        environ_base={"REMOTE_ADDR": address},
    )


def test_the_right_pin_makes_the_host_and_logout_ends_it(client: FlaskClient) -> None:
    host = log_in(client)
    state = host.state()
    assert state["you"] == {"host": True, "csrf": host.token}
    assert host.post("/api/logout").status_code == 200
    assert host.state()["you"] == {"host": False}
    assert host.post("/api/undo").status_code == 401


def test_a_wrong_pin_is_refused(client: FlaskClient) -> None:
    response = try_pin(client, "0000")
    assert response.status_code == 401
    assert response.get_json() == {"error": "That is not the host PIN."}
    assert client.get("/api/state").get_json()["you"] == {"host": False}


def test_the_limit_forgets_guesses_after_its_window() -> None:
    now = [0.0]
    limiter = auth.LoginLimiter(2, 10, 60.0, clock=lambda: now[0])
    limiter.failed("a")
    limiter.failed("a")
    assert limiter.retry_after("a") == 60
    assert limiter.retry_after("b") is None
    now[0] = 45.0
    assert limiter.retry_after("a") == 15
    now[0] = 60.5
    assert limiter.retry_after("a") is None


def test_a_change_without_the_csrf_token_is_403(host: Host, session: Session) -> None:
    before = session.version
    missing = host.client.post("/api/turn", json={"steps": 1})
    assert missing.status_code == 403
    assert "security token" in missing.get_json()["error"]
    wrong = host.client.post("/api/turn", json={"steps": 1}, headers={"X-CSRF-Token": "forged"})
    assert wrong.status_code == 403
    assert session.version == before


def test_a_token_from_another_browser_does_not_count(app: Any, host: Host) -> None:
    other = app.test_client()
    their_token = page_token(other)
    response = host.client.post("/api/undo", json={}, headers={"X-CSRF-Token": their_token})
    assert response.status_code == 403


def test_login_itself_needs_the_page_token(client: FlaskClient) -> None:
    response = client.post("/api/login", json={"pin": PIN})
    assert response.status_code == 403
    assert client.get("/api/state").get_json()["you"] == {"host": False}


def test_login_gives_a_fresh_token(client: FlaskClient) -> None:
    before = page_token(client)
    host = log_in(client)
    assert host.token != before
    response = client.post("/api/undo", json={}, headers={"X-CSRF-Token": before})
    assert response.status_code == 403


def test_the_pin_is_never_in_a_url(client: FlaskClient) -> None:
    response = client.get(f"/api/login?pin={PIN}")
    assert response.status_code == 405
    assert client.get("/api/state").get_json()["you"] == {"host": False}


def test_the_host_login_expires(session: Session) -> None:
    now = [1_000_000.0]
    app = create_app(session, web_settings(session_minutes=30), clock=lambda: now[0])
    host = log_in(app.test_client())
    now[0] += 29 * 60
    assert host.state()["you"]["host"] is True
    now[0] += 2 * 60
    assert host.state()["you"] == {"host": False}
    assert host.post("/api/dismiss").status_code == 401


def test_the_session_cookie_is_httponly_strict_and_expires(client: FlaskClient) -> None:
    token = page_token(client)
    response = client.post("/api/login", json={"pin": PIN}, headers={"X-CSRF-Token": token})
    cookie = response.headers["Set-Cookie"]
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie
    assert "Expires=" in cookie
    assert PIN not in cookie


def test_neither_pin_nor_token_reaches_the_log(
    client: FlaskClient, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    try_pin(client, "9999")
    host = log_in(client)
    host.post("/api/logout")
    assert any("wrong host PIN" in r.getMessage() for r in caplog.records)
    assert any("logged in" in r.getMessage() for r in caplog.records)
    text = "\n".join(r.getMessage() for r in caplog.records)
    assert PIN not in text and "9999" not in text and host.token not in text


def test_without_a_configured_pin_a_random_one_is_made(session: Session) -> None:
    app = create_app(session, WebSettings(advertise=False))
    settings = app.config["WEB_SETTINGS"]
    assert settings.pin is not None and len(settings.pin) == 6 and settings.pin.isdigit()
    assert app.config["PIN_GENERATED"] is True
    host = log_in(app.test_client(), settings.pin)
    assert host.state()["you"]["host"] is True


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"pin": "12ab"}, "web.pin: a PIN is 6 to 12 digits, written as a string"),
        ({"pin": "2468"}, "web.pin: a PIN of 4 digits is too easy to guess; use 6 to 12"),
        ({"pin": "24681"}, "web.pin: a PIN of 5 digits is too easy to guess; use 6 to 12"),
        ({"pin": "1" * 13}, "web.pin: a PIN is 6 to 12 digits"),
        ({"login_backoff_after": -1}, "web.login_backoff_after: -1 is out of range"),
        ({"login_forgive_s": 0}, "web.login_forgive_s: expected a number of seconds"),
        ({"pin": 1234}, "write the PIN as a string"),
        ({"port": 70000}, "web.port: 70000 is out of range"),
        ({"colour": "red"}, "unknown setting 'colour'"),
        ({"name": "My Table"}, "is not a network name"),
        ({"sse_max_clients": 200}, "web.sse_max_clients: 200 is out of range"),
        ({"secret_key": "short"}, "at least 16 characters"),
        ({"sse_lifetime_s": 1e308}, "web.sse_lifetime_s: expected a number of seconds above 0"),
        ({"login_window_s": float("nan")}, "web.login_window_s: expected a number of seconds"),
        ({"login_attempts_total": 2**63 - 1}, "web.login_attempts_total: .* out of range"),
    ],
)
def test_bad_settings_are_one_sentence(values: dict[str, Any], message: str) -> None:
    with pytest.raises(DataError, match=message) as error:
        WebSettings.from_mapping({"web": values}, "companion.toml")
    assert error.value.message.startswith("companion.toml: ")


def test_settings_are_read_from_the_web_table() -> None:
    settings = WebSettings.from_mapping(
        {"web": {"pin": "042719", "port": 9000, "name": "kitchen-table"}, "camera": {}}, "x.toml"
    )
    assert (settings.pin, settings.port, settings.name) == ("042719", 9000, "kitchen-table")
    assert settings.with_pin() is settings


LONG_PIN = "24681357"


@pytest.mark.parametrize(
    "given",
    [
        "",
        " ",
        "\t\n",
        LONG_PIN[:4],
        LONG_PIN[:-1],
        LONG_PIN[1:],
        LONG_PIN + "0",
        "0" + LONG_PIN,
        LONG_PIN[:4] + "0000",
        "2468 1357",
    ],
)
def test_only_the_whole_pin_logs_in(session: Session, given: str) -> None:
    app = create_app(session, web_settings(pin=LONG_PIN))
    client = app.test_client()
    response = try_pin(client, given)
    assert response.status_code == 401
    assert client.get("/api/state").get_json()["you"] == {"host": False}
    assert log_in(client, LONG_PIN).state()["you"]["host"] is True


@pytest.mark.parametrize(
    "given", ["", "   ", "2", "24", "2468", "24681", "2468130", "1246813", "246812"]
)
def test_pin_matches_refuses_blank_partial_and_longer_pins(given: str) -> None:
    assert auth.pin_matches(given, PIN) is False


@pytest.mark.parametrize("given", [None, 246813, ["246813"], {"pin": "246813"}, b"246813"])
def test_a_pin_that_is_not_a_string_is_refused(given: object) -> None:
    assert auth.pin_matches(given, PIN) is False


def test_the_pin_typed_with_a_space_around_it_still_logs_in() -> None:
    # Phone keyboards add a space after a word; the PIN itself is never blank.
    assert auth.pin_matches(" 246813 ", PIN) is True
    assert auth.pin_matches("246813", PIN) is True


def _copy_of(client: FlaskClient, app: Any) -> FlaskClient:
    """Another browser in `app` holding a copy of `client`'s session cookie."""
    cookie = client.get_cookie("companion_session")
    assert cookie is not None
    thief: FlaskClient = app.test_client()
    thief.set_cookie("companion_session", cookie.value)
    return thief


def _is_host(client: FlaskClient) -> bool:
    return bool(client.get("/api/state").get_json()["you"]["host"])


def test_the_host_is_the_host_from_the_moment_of_login_until_the_lifetime_ends(
    session: Session,
) -> None:
    now = [1_000_000.0]
    app = create_app(session, web_settings(session_minutes=30), clock=lambda: now[0])
    host = log_in(app.test_client())
    assert _is_host(host.client)  # the clock has not moved
    now[0] += 30 * 60 - 0.5
    assert _is_host(host.client)
    now[0] += 0.5
    assert not _is_host(host.client)


def test_a_logged_out_browser_is_no_host_after_a_restart_without_kept_logins(
    session: Session,
) -> None:
    app = create_app(session, web_settings())
    host = log_in(app.test_client())
    assert host.post("/api/logout").status_code == 200
    # The restarted app knows nothing of the logout: the browser's own cookie must not
    # hold the login any more.
    restarted = create_app(session, web_settings())
    assert not _is_host(_copy_of(host.client, restarted))


def test_logins_again_and_again_in_one_browser_each_end_the_one_before(app: Any) -> None:
    client = app.test_client()
    copies = []
    for _ in range(4):
        log_in(client)
        copies.append(_copy_of(client, app))
    assert _is_host(client)
    assert [_is_host(copy) for copy in copies] == [False, False, False, True]


def test_a_copied_cookie_stays_dead_while_other_hosts_log_in_and_out(app: Any) -> None:
    first = log_in(app.test_client())
    copy = _copy_of(first.client, app)
    assert first.post("/api/logout").status_code == 200
    for _ in range(2):
        other = log_in(app.test_client())
        assert other.post("/api/logout").status_code == 200
    assert not _is_host(copy)


def test_a_logout_that_cannot_be_kept_is_logged_with_the_file_and_the_reason(
    session: Session, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    kept = tmp_path / "gone" / "ended-logins.json"
    app = create_app(session, web_settings(), ended_logins=kept)
    host = log_in(app.test_client())
    with caplog.at_level(logging.WARNING, logger="web.auth"):
        assert host.post("/api/logout").status_code == 200
    assert not _is_host(host.client)
    assert [r.getMessage() for r in caplog.records if r.name == "web.auth"] == [
        f"could not keep the ended logins in {kept} (No such file or directory): a cookie "
        "copied before this logout works again after a restart"
    ]


@pytest.mark.parametrize(
    ("content", "reason"),
    [(b"[1, 2]", "damaged"), (b"{not json", "damaged"), (None, "Is a directory")],
)
def test_kept_logins_that_cannot_be_read_are_named_with_the_reason(
    session: Session,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
    content: bytes | None,
    reason: str,
) -> None:
    kept = tmp_path / "ended-logins.json"
    if content is None:
        kept.mkdir()
    else:
        kept.write_bytes(content)
    with caplog.at_level(logging.WARNING, logger="web.auth"):
        create_app(session, web_settings(), ended_logins=kept)
    assert [r.getMessage() for r in caplog.records if r.name == "web.auth"] == [
        f"the ended logins kept in {kept} cannot be read ({reason}); starting without them"
    ]


def test_a_wrong_guess_counts_for_exactly_the_window() -> None:
    now = [0.0]
    limiter = auth.LoginLimiter(1, 1, 60.0, clock=lambda: now[0])
    limiter.failed("a")
    now[0] = 59.5
    assert limiter.retry_after("a") == 1  # half a second left: wait a whole one
    assert limiter.retry_after("b") == 1  # the limit in all
    now[0] = 60.0
    assert limiter.retry_after("a") is None
    assert limiter.retry_after("b") is None


def test_the_wait_is_counted_from_the_oldest_guess_in_the_window() -> None:
    now = [0.0]
    limiter = auth.LoginLimiter(2, 3, 60.0, clock=lambda: now[0])
    limiter.failed("a")
    now[0] = 10.0
    limiter.failed("a")
    now[0] = 20.0
    assert limiter.retry_after("a") == 40
    limiter.failed("b")
    assert limiter.retry_after("c") == 40  # three in all: the oldest, at 0 s, goes at 60 s
    now[0] = 60.0  # one guess each left in the window: below both limits
    assert limiter.retry_after("a") is None
    assert limiter.retry_after("c") is None


def test_the_right_pin_clears_that_clients_wrong_guesses_only() -> None:
    limiter = auth.LoginLimiter(2, 100, 60.0, clock=lambda: 0.0)
    for client in ("a", "b"):
        limiter.failed(client)
        limiter.failed(client)
    limiter.succeeded("a")
    assert limiter.retry_after("a") is None
    assert limiter.retry_after("b") == 60


def _guesser(limiter: auth.LoginLimiter, now: list[float], horizon_s: float) -> int:
    """Wrong guesses a guesser with a new address for each one gets in before `horizon_s`,
    guessing the moment the limiter allows it."""
    guesses = 0
    while True:
        client = f"10.{guesses // 62_500}.{guesses // 250 % 250}.{guesses % 250}"
        wait = limiter.retry_after(client)
        if wait is None:
            limiter.failed(client)
            guesses += 1
        elif now[0] + wait > horizon_s:
            return guesses
        else:
            now[0] += wait


@pytest.mark.parametrize(
    ("horizon_s", "at_most"),
    [(12 * 3600, 110), (86_400, 111), (7 * 86_400, 117), (365 * 86_400, 476)],
    ids=["a-night", "a-day", "a-week", "a-year"],
)
def test_a_guesser_cannot_outlast_the_back_off(horizon_s: float, at_most: int) -> None:
    # The arithmetic of docs/security.md, "The PIN policy", with the default settings.
    settings = WebSettings()
    now = [0.0]
    limiter = auth.LoginLimiter(
        settings.login_attempts_per_client,
        settings.login_attempts_total,
        settings.login_window_s,
        backoff_after=settings.login_backoff_after,
        forgive_s=settings.login_forgive_s,
        clock=lambda: now[0],
    )
    assert _guesser(limiter, now, horizon_s) == at_most
    assert at_most / 10**MIN_PIN_DIGITS < 0.0005


def test_past_the_allowance_each_wrong_guess_doubles_the_pause() -> None:
    now = [0.0]
    limiter = auth.LoginLimiter(5, 20, 60.0, backoff_after=3, clock=lambda: now[0])
    for client in ("a", "b", "c"):
        limiter.failed(client)
    assert limiter.retry_after("d") is None  # the allowance: no pause yet
    pauses = []
    for _ in range(5):
        limiter.failed("d")
        pauses.append(limiter.retry_after("e"))
        now[0] += pauses[-1] or 0
    assert pauses == [60, 120, 240, 480, 960]


def test_a_right_pin_does_not_forgive_the_guesses_in_all() -> None:
    now = [0.0]
    limiter = auth.LoginLimiter(5, 20, 60.0, backoff_after=2, clock=lambda: now[0])
    limiter.failed("a")
    limiter.failed("b")
    limiter.succeeded("a")
    limiter.succeeded("b")
    limiter.failed("c")
    assert limiter.retry_after("host") == 60


def test_one_wrong_guess_in_all_is_forgiven_every_forgive_s() -> None:
    now = [0.0]
    limiter = auth.LoginLimiter(
        5, 20, 60.0, backoff_after=2, forgive_s=3600.0, clock=lambda: now[0]
    )
    limiter.failed("a")
    limiter.failed("a")
    now[0] = 3600.0  # one of the two forgiven
    limiter.failed("a")
    assert limiter.retry_after("b") is None
    limiter.failed("a")
    assert limiter.retry_after("b") == 60


def test_the_pause_is_at_most_a_year() -> None:
    now = [0.0]
    limiter = auth.LoginLimiter(10**6, 10**6, 60.0, backoff_after=0, clock=lambda: now[0])
    for _ in range(200):
        limiter.failed("a")
    assert limiter.retry_after("a") == auth.MAX_PAUSE_S == 365 * 86_400
