"""Serving on the LAN: the address for the QR code, the console message, failing soft."""

from __future__ import annotations

import io
import logging
import select
import socket
import urllib.request

import pytest

from companion.session import Session
from tests.web.conftest import served, web_settings
from web import serve as serving
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


def test_waitress_refuses_a_body_over_the_limit_before_spooling_it(session: Session) -> None:
    # Flask refuses bodies over MAX_BODY_BYTES only once waitress has read (and, past its
    # buffer, spooled to disk) the whole body; waitress itself must refuse them first.
    app = create_app(session, web_settings(host="127.0.0.1", port=0))
    with served(app) as server, socket.create_connection(("127.0.0.1", server.port), 10) as conn:
        conn.sendall(
            b"POST /api/login HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            + f"Content-Length: {MAX_BODY_BYTES + 1}\r\n\r\n".encode()
            + b"x" * 1024
        )
        conn.settimeout(10)
        reply = b""
        while chunk := conn.recv(4096):
            reply += chunk
    assert reply.startswith(b"HTTP/1.1 413")
    assert b"exceeds max_body of" in reply  # waitress's own refusal, not Flask's


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
