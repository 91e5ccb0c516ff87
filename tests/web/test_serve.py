"""Serving on the LAN: the address for the QR code, the console message, failing soft."""

from __future__ import annotations

import io
import json
import logging
import select
import socket
import urllib.request

import pytest

from companion.session import Session
from tests.web.conftest import served, web_settings
from web import serve as serving
from web.api.errors import SECURITY_HEADERS
from web.app import MAX_BODY_BYTES, create_app
from web.serve import Server, announce, page_url


def test_a_fixed_listen_address_is_the_lan_address() -> None:
    assert serving.lan_address("192.168.4.7") == "192.168.4.7"
    assert page_url("192.168.4.7", 8080) == "http://192.168.4.7:8080/"
    assert page_url("192.168.4.7", 80) == "http://192.168.4.7/"


def test_no_route_means_no_lan_address(monkeypatch: pytest.MonkeyPatch) -> None:
    class NoNetwork:
        def __init__(self, *args: object) -> None:
            pass

        def __enter__(self) -> NoNetwork:
            return self

        def __exit__(self, *args: object) -> None:
            pass

        def connect(self, address: object) -> None:
            raise OSError("Network is unreachable")

    monkeypatch.setattr("web.serve.socket.socket", NoNetwork)
    assert serving.lan_address() is None


def test_advertising_fails_soft(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    import zeroconf

    def broken(*args: object, **kwargs: object) -> None:
        raise OSError("no multicast here")

    monkeypatch.setattr(zeroconf, "Zeroconf", broken)
    with caplog.at_level(logging.WARNING):
        assert serving.advertise("maori", "192.168.4.7", 8080) is None
    assert "could not advertise maori.local" in caplog.text


def test_the_console_shows_the_address_and_a_pin_made_now(session: Session) -> None:
    app = create_app(session, web_settings(host="127.0.0.1", port=0, pin=None))
    server = Server(app)
    try:
        out = io.StringIO()
        announce(server, app.config["WEB_SETTINGS"].pin, out)
        text = out.getvalue()
        assert f"open http://127.0.0.1:{server.port}/" in text
        assert f"Host PIN for this run: {app.config['WEB_SETTINGS'].pin}" in text
        configured = io.StringIO()
        announce(server, None, configured)
        assert "as configured" in configured.getvalue()
    finally:
        server.close()


def test_the_server_answers_and_stops(session: Session) -> None:
    app = create_app(session, web_settings(host="127.0.0.1", port=0, threads=4, sse_max_clients=2))
    with served(app) as server:
        assert app.config["PUBLIC_URL"] == server.url == f"http://127.0.0.1:{server.port}/"
        with urllib.request.urlopen(server.local_url + "api/state", timeout=10) as response:
            assert response.headers["X-Frame-Options"] == "DENY"
            assert b'"phase":"playing"' in response.read()


def _exchange(port: int, request: bytes) -> tuple[int, dict[str, str], bytes]:
    """Send `request` on a new connection and read until the server closes it: the status,
    the headers (names in lower case) and the body of the answer."""
    with socket.create_connection(("127.0.0.1", port), 10) as conn:
        conn.sendall(request)
        conn.settimeout(10)
        reply = b""
        while chunk := conn.recv(4096):
            reply += chunk
    head, _, body = reply.partition(b"\r\n\r\n")
    status_line, *lines = head.decode("latin-1").split("\r\n")
    headers = {k.strip().lower(): v.strip() for k, _, v in (x.partition(":") for x in lines)}
    return int(status_line.split()[1]), headers, body


def _post(path: str) -> bytes:
    """A POST's request line and Host header; its other headers and its body follow."""
    return f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n".encode()


@pytest.mark.parametrize(
    "body",
    [
        f"Content-Type: application/json\r\nContent-Length: {MAX_BODY_BYTES + 1}\r\n".encode()
        + b"\r\n"
        + b"x" * 1024,
        f"Content-Length: {10**12}\r\n".encode() + b"\r\n",
        b"Transfer-Encoding: chunked\r\n\r\n"
        + b"".join(f"{8192:x}\r\n".encode() + b"x" * 8192 + b"\r\n" for _ in range(9)),
    ],
    ids=["64-kib-and-one", "a-terabyte-declared", "chunked"],
)
def test_a_body_over_the_limit_is_the_apps_413_before_it_is_spooled(
    session: Session, body: bytes
) -> None:
    # waitress refuses the body before reading (and, past its buffer, spooling) it, and hands
    # the request to the app without it: the answer is the app's, its sentence and headers.
    app = create_app(session, web_settings(host="127.0.0.1", port=0))
    with served(app) as server:
        for path in ("/api/login", "/api/turns", "/api/state", "/"):
            status, headers, content = _exchange(server.port, _post(path) + body)
            assert status == 413, path
            for name, value in SECURITY_HEADERS.items():
                assert headers[name.lower()] == value, path
            assert headers["connection"] == "close"
            assert b"exceeds max_body" not in content  # not waitress's own plain text
            if path.startswith("/api/"):
                assert headers["content-type"] == "application/json"
                assert json.loads(content) == {"error": "The request is too large."}


def test_a_body_of_the_limit_reaches_the_route(session: Session) -> None:
    app = create_app(session, web_settings(host="127.0.0.1", port=0))
    with served(app) as server:
        status, _headers, content = _exchange(
            server.port,
            _post("/api/login")
            + f"Content-Length: {MAX_BODY_BYTES}\r\nConnection: close\r\n\r\n".encode()
            + b"x" * MAX_BODY_BYTES,
        )
    assert status == 403  # the route's own check (no page token), its body read
    assert json.loads(content)["error"].startswith("The page's security token")


def test_one_address_holding_hundreds_of_idle_connections_starves_no_other_phone(
    session: Session,
) -> None:
    app = create_app(session, web_settings(host="127.0.0.1", port=0))
    hogs: list[socket.socket] = []
    with served(app) as server:
        try:
            for _ in range(serving.CONNECTION_LIMIT + 44):  # 300 half-open connections
                hog = socket.create_connection(
                    ("127.0.0.1", server.port), 10, source_address=("127.0.0.2", 0)
                )
                hogs.append(hog)
            with socket.create_connection(
                ("127.0.0.1", server.port), 10, source_address=("127.0.0.3", 0)
            ) as phone:
                phone.sendall(b"GET /api/state HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
                phone.settimeout(10)
                assert phone.recv(4096).startswith(b"HTTP/1.1 200")
            # Every connection of that address past its share was closed by the server.
            held = list(hogs)
            while len(held) > serving.PER_CLIENT_CONNECTIONS:
                ended, _, _ = select.select(held, [], [], 10)
                assert ended, f"{len(held)} connections of one address are still held"
                for hog in ended:
                    assert hog.recv(1) == b""
                    held.remove(hog)
        finally:
            for hog in hogs:
                hog.close()


@pytest.mark.skipif(not hasattr(socket, "TCP_USER_TIMEOUT"), reason="Linux only")
def test_a_connection_gives_up_on_a_phone_that_acknowledges_nothing(session: Session) -> None:
    app = create_app(session, web_settings(host="127.0.0.1", port=0))
    with served(app) as server, socket.create_connection(("127.0.0.1", server.port), 10) as conn:
        conn.sendall(b"GET /api/state HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        conn.settimeout(10)
        assert conn.recv(4096).startswith(b"HTTP/1.1 200")
        (channel,) = list(server._server.active_channels.values())
        option = channel.socket.getsockopt(socket.IPPROTO_TCP, socket.TCP_USER_TIMEOUT)
        assert option == serving.UNACKED_MS
