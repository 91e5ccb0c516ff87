"""Serving the app on the LAN: waitress in this process, a QR code and NAME.local.

`serve(app, settings)` runs until Ctrl-C (or SIGTERM turned into KeyboardInterrupt by the
runner). Each open page holds one waitress thread for its event stream, so the server runs
`settings.threads` threads and the app caps the streams below that. The table's address is
advertised as `NAME.local` over mDNS (python-zeroconf) and shown as a QR code; both are
optional and a failure only costs a warning.
"""

from __future__ import annotations

import contextlib
import io
import logging
import socket
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

from flask import Flask
from waitress.channel import HTTPChannel
from waitress.task import ErrorTask, WSGITask
from waitress.utilities import RequestEntityTooLarge

from web.app import MAX_BODY_BYTES
from web.settings import WebSettings
from web.sse import StreamSlots

log = logging.getLogger(__name__)

#: connect() on a UDP socket sends nothing; it only asks the kernel which local address
#: would route towards this (TEST-NET-1, documentation-only) address.
_ROUTE_PROBE = ("192.0.2.1", 9)
#: Open connections waitress accepts (live pages, their fetches and idle keep-alives).
CONNECTION_LIMIT = 256
#: Open connections one client address may hold: a phone uses a few (its live stream, a
#: fetch or two, a second tab), so one address that opens hundreds and sends nothing is
#: refused instead of filling CONNECTION_LIMIT for every other phone.
PER_CLIENT_CONNECTIONS = 16
#: A connection idle this long (no request in progress) is closed; checked this often.
CHANNEL_TIMEOUT_S = 30
CLEANUP_INTERVAL_S = 5
REFUSAL_LOG_S = 60.0
#: A connection whose sent data (a live page's keep-alive included) stays unacknowledged this
#: long is dropped by the kernel, so a phone that left the Wi-Fi without closing its page
#: frees its live-stream slot at its next keep-alive plus this, not after the kernel's
#: retransmissions (some 15 minutes).
UNACKED_MS = 20_000
#: How long close() waits for requests in progress to finish.
SHUTDOWN_WAIT_S = 5.0


def lan_address(host: str = "0.0.0.0") -> str | None:
    """The IPv4 address phones on the LAN reach this machine at, or None when unknown."""
    if host not in ("0.0.0.0", "", "::"):
        return host
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
            probe.connect(_ROUTE_PROBE)
            address = str(probe.getsockname()[0])
    except OSError:
        return None
    return None if address.startswith("127.") or address == "0.0.0.0" else address


def page_url(address: str, port: int) -> str:
    return f"http://{address}/" if port == 80 else f"http://{address}:{port}/"


def advertise(name: str, address: str, port: int) -> Callable[[], None] | None:
    """Announce the pages as NAME.local (_http._tcp) over mDNS; returns the function that
    withdraws the announcement, or None when it could not be made."""
    try:
        from zeroconf import ServiceInfo, Zeroconf

        info = ServiceInfo(
            "_http._tcp.local.",
            f"{name}._http._tcp.local.",
            addresses=[socket.inet_aton(address)],
            port=port,
            properties={"path": "/"},
            server=f"{name}.local.",
        )
        zeroconf = Zeroconf()
        try:
            zeroconf.register_service(info, allow_name_change=True)
        except Exception:
            zeroconf.close()
            raise
    except Exception as error:  # any failure here must not stop the game: fail soft
        log.warning("could not advertise %s.local on the network: %s", name, error)
        return None

    def withdraw() -> None:
        with contextlib.suppress(Exception):
            zeroconf.unregister_service(info)
        with contextlib.suppress(Exception):
            zeroconf.close()

    return withdraw


def _client(addr: object) -> object:
    """The client's address without its port (a TCP peer is (host, port, ...))."""
    return addr[0] if isinstance(addr, tuple) and addr else addr


class _BodyTooLargeTask(WSGITask):  # type: ignore[misc]
    """A request whose body is over waitress's `max_request_body_size`, handed to the app
    with its headers and without its body (which is never read): the app refuses a body
    over its own limit (web.api.errors), so the answer is the app's 413, its JSON sentence
    and its headers. The connection closes after it, the rest of the body unread."""

    def get_environment(self) -> dict[str, Any]:
        environ: dict[str, Any] = super().get_environment()
        request = self.request
        limit = self.channel.server.adj.max_request_body_size
        declared = max(request.content_length, request.body_bytes_received, limit)
        environ["wsgi.input"] = io.BytesIO()
        environ["CONTENT_LENGTH"] = str(declared)  # a chunked body has none of its own
        return environ

    def execute(self) -> None:
        self.set_close_on_finish()
        super().execute()


def _error_task(channel: HTTPChannel, request: Any) -> Any:
    """The task that answers a request waitress refused: the app for a body too large,
    waitress's own answer for what never reaches an app (a malformed request line)."""
    if isinstance(request.error, RequestEntityTooLarge):
        return _BodyTooLargeTask(channel, request)
    return ErrorTask(channel, request)


class _CappedChannel(HTTPChannel):  # type: ignore[misc]
    """waitress's connection, refused at once when its client address already holds
    the server's `per_client_limit` (PER_CLIENT_CONNECTIONS); said in the log once a minute
    per address. An accepted one gives up on a peer that acknowledges nothing (UNACKED_MS)."""

    error_task_class = staticmethod(_error_task)

    def __init__(self, server: Any, sock: socket.socket, addr: Any, adj: Any, map: Any = None):
        client = _client(addr)
        limit = getattr(server, "per_client_limit", PER_CLIENT_CONNECTIONS)
        held = sum(1 for ch in list(server.active_channels.values()) if _client(ch.addr) == client)
        if held >= limit:
            said: dict[object, float] = server.__dict__.setdefault("refusals_said", {})
            now = time.monotonic()
            if now - said.get(client, -REFUSAL_LOG_S) >= REFUSAL_LOG_S:
                said[client] = now
                log.warning("refusing connections from %s: it holds %d already", client, held)
            with contextlib.suppress(OSError):
                sock.close()
            return
        if hasattr(socket, "TCP_USER_TIMEOUT"):  # Linux: a phone gone from the Wi-Fi
            with contextlib.suppress(OSError):
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_USER_TIMEOUT, UNACKED_MS)
        super().__init__(server, sock, addr, adj, map)


class Server:
    """waitress serving `app`, plus the mDNS announcement; `run()` blocks until `close()`."""

    def __init__(self, app: Flask, settings: WebSettings | None = None) -> None:
        from waitress.server import create_server

        self.app = app
        self.settings = settings or app.config.get("WEB_SETTINGS") or WebSettings()
        self._server: Any = create_server(
            app,
            host=self.settings.host,
            port=self.settings.port,
            threads=self.settings.threads,
            connection_limit=CONNECTION_LIMIT,
            channel_timeout=CHANNEL_TIMEOUT_S,
            cleanup_interval=CLEANUP_INTERVAL_S,
            # Keep reading while a request runs, so a phone that closes its live stream is
            # noticed at once (environ["waitress.client_disconnected"], web.sse).
            channel_request_lookahead=1,
            ident="maori-companion",
            # Refuse big bodies before waitress spools them to disk: one over the app's own
            # limit goes to the app without its body (_BodyTooLargeTask), so a body of
            # MAX_BODY_BYTES is read and one byte more is the app's 413.
            max_request_body_size=MAX_BODY_BYTES + 1,
            clear_untrusted_proxy_headers=True,
            asyncore_use_poll=True,  # poll(): no FD_SETSIZE limit, and safe to close under
        )
        self._server.channel_class = _CappedChannel
        self._server.per_client_limit = PER_CLIENT_CONNECTIONS
        self._withdraw: Callable[[], None] | None = None
        self._closed = threading.Event()
        address = lan_address(self.settings.host)
        self.address = address
        if self.settings.public_url:
            self.url: str | None = self.settings.public_url
        elif address is not None:
            self.url = page_url(address, self.port)
        else:
            self.url = None
        if self.url and not app.config.get("PUBLIC_URL"):
            app.config["PUBLIC_URL"] = self.url

    @property
    def port(self) -> int:
        """The port actually listened on (settings.port, or the free one picked for 0)."""
        return int(self._server.effective_port)

    @property
    def local_url(self) -> str:
        host = self.settings.host
        if host in ("0.0.0.0", "", "::"):
            host = "127.0.0.1"
        return page_url(host, self.port)

    def run(self) -> None:
        """Serve until close() (or Ctrl-C, which the caller handles)."""
        if self.settings.advertise and self.address is not None:
            self._withdraw = advertise(self.settings.name, self.address, self.port)
        try:
            self._server.run()
        except OSError:
            if not self._closed.is_set():
                raise  # a real failure, not the sockets closed by close()

    def close(self) -> None:
        """Stop serving (from any thread): end the live streams so their worker threads
        finish, withdraw the announcement, then close every connection and the listener."""
        if self._closed.is_set():
            return
        self._closed.set()
        slots = self.app.extensions.get("companion_streams")
        if isinstance(slots, StreamSlots):
            slots.close_all()
        if self._withdraw is not None:
            self._withdraw()
        server = self._server
        server.task_dispatcher.shutdown(timeout=SHUTDOWN_WAIT_S)
        server.close()  # the listening socket and the loop's trigger
        # As WebTest's StopableWSGIServer does: close each open connection so run() ends.
        for channel in list(server._map.values()):
            with contextlib.suppress(Exception):
                if isinstance(channel, HTTPChannel):
                    channel.handle_close()
                else:
                    channel.close()


def announce(
    server: Server, generated_pin: str | None, out: TextIO, *, pin_file: Path | None = None
) -> None:
    """Tell the person at the console where the pages are and, if made now, the PIN (or,
    for the service, whose output is a log, the file that keeps it)."""
    settings = server.settings
    url = server.url or server.local_url
    print(f"Māori table companion: open {url} on the phones at the table.", file=out)
    if settings.advertise and server.address is not None:
        print(f"  (or http://{settings.name}.local:{server.port}/)", file=out)
    if pin_file is not None:
        print(f"  Host PIN: kept in {pin_file} (sudo cat it; [web] pin sets your own).", file=out)
    elif generated_pin is not None:
        print(f"  Host PIN for this run: {generated_pin}", file=out)
    else:
        print("  Host PIN: as configured in [web] pin.", file=out)
    if server.url and out.isatty():
        with contextlib.suppress(Exception):
            import segno

            segno.make(server.url, error="m").terminal(out=out, compact=True)
    out.flush()


def serve(app: Flask, settings: WebSettings | None = None, *, out: TextIO | None = None) -> None:
    """Serve `app` on the LAN until Ctrl-C: waitress, QR code and NAME.local."""
    server = Server(app, settings)
    resolved = app.config.get("WEB_SETTINGS")
    made_now = app.config.get("PIN_GENERATED") and isinstance(resolved, WebSettings)
    generated = resolved.pin if made_now and isinstance(resolved, WebSettings) else None
    announce(server, generated, out or sys.stdout)
    try:
        server.run()
    except KeyboardInterrupt:
        pass
    finally:
        server.close()
