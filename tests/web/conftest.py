"""A table with a game running, the web app around it, and clients for a guest and the host."""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient

from companion.actions import Turn
from companion.game import Seat
from companion.games.session import BoardSession
from companion.reading import TableRead
from companion.session import Session
from companion.tracker import read_of_state
from tests.companion.conftest import PLAIN_DISPLAY
from web.app import create_app
from web.serve import Server
from web.settings import WebSettings

PIN = "246813"
CSRF_META = re.compile(r'<meta name="csrf-token" content="([^"]+)">')


def started_session() -> Session:
    """Red and Blue; Red moves first, the ship at 15, the plain display (no volcano)."""
    session = Session(clock=lambda: 1000.0)
    session.start_game(
        [Seat("Red", 1, "red"), Seat("Blue", 2, "blue")],
        start_player=1,
        ship=15,
        display=PLAIN_DISPLAY,
        seed=3,
    )
    return session


def table_after(session: Session, turn: Turn) -> TableRead:
    """What a perfect camera sees once `turn` has been played on the table."""
    assert session.game is not None
    state = session.game.state.copy()
    session.game.rules.apply(state, turn)
    return read_of_state(state)


@contextmanager
def served(app: Flask) -> Iterator[Server]:
    """The app served by waitress on a thread of its own while the block runs; stopped
    after it, and its thread with it."""
    server = Server(app)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.close()
        thread.join(10)
    assert not thread.is_alive()


def web_settings(**overrides: Any) -> WebSettings:
    values: dict[str, Any] = {
        "pin": PIN,
        "advertise": False,
        "sse_keepalive_s": 0.2,
        "sse_lifetime_s": 5.0,
        "secret_key": "a test secret key of some length",
    }
    values.update(overrides)
    return WebSettings(**values)


@pytest.fixture
def session() -> Session:
    return started_session()


@pytest.fixture
def app(session: Session) -> Flask:
    return create_app(session, web_settings())


@pytest.fixture
def client(app: Flask) -> FlaskClient:
    return app.test_client()


def page_token(client: FlaskClient) -> str:
    """The CSRF token the host page carries in its meta tag."""
    match = CSRF_META.search(client.get("/host").get_data(as_text=True))
    assert match is not None
    return match.group(1)


@dataclass
class Host:
    """A browser logged in as the host: posts carry the session's CSRF token."""

    client: FlaskClient
    token: str

    def post(self, url: str, body: Any = None, **kwargs: Any) -> Any:
        headers = {"X-CSRF-Token": self.token, **kwargs.pop("headers", {})}
        return self.client.post(url, json=body if body is not None else {}, headers=headers)

    def state(self) -> dict[str, Any]:
        data: dict[str, Any] = self.client.get("/api/state").get_json()
        return data


def log_in(client: FlaskClient, pin: str = PIN) -> Host:
    token = page_token(client)
    response = client.post("/api/login", json={"pin": pin}, headers={"X-CSRF-Token": token})
    assert response.status_code == 200, response.get_json()
    return Host(client, response.get_json()["csrf"])


@pytest.fixture
def host(client: FlaskClient) -> Iterator[Host]:
    yield log_in(client)


@pytest.fixture
def desk() -> Iterator[tuple[Server, BoardSession]]:
    """The companion served on 127.0.0.1 with an empty board-game desk."""
    app = create_app(
        Session(), web_settings(host="127.0.0.1", port=0, threads=8, sse_max_clients=4)
    )
    board: BoardSession = app.extensions["companion_games"]["board"]
    with served(app) as server:
        yield server, board
