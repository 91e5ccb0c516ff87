"""Live updates: every open page hears of each change, and no stream outlives its welcome."""

from __future__ import annotations

import http.client
import json
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from flask import Flask

from companion.actions import Pass, Turn
from companion.session import Session
from tests.web.conftest import served, web_settings
from web.app import create_app
from web.sse import EventStream, StreamSlots


def state_version(message: str | bytes) -> int | None:
    """The version of an `event: state` message, None for anything else."""
    text = message.decode() if isinstance(message, bytes) else message
    lines = text.strip().splitlines()
    if not lines or lines[0] != "event: state":
        return None
    data = next(line for line in lines if line.startswith("data: "))
    version: int = json.loads(data[len("data: ") :])["version"]
    return version


def test_a_stream_says_the_version_at_once_and_after_each_change(session: Session) -> None:
    stream = EventStream(session, lifetime_s=10, keepalive_s=5)
    assert next(stream) == "retry: 2000\n\n"
    assert state_version(next(stream)) == session.version
    session.play(Turn(1, Pass()))
    assert state_version(next(stream)) == session.version
    stream.close()
    assert session.subscriber_count == 0


def test_a_quiet_stream_sends_keep_alive_comments(session: Session) -> None:
    stream = EventStream(session, lifetime_s=10, keepalive_s=0.01)
    next(stream), next(stream)
    assert next(stream) == ": keep-alive\n\n"
    stream.close()


def test_a_stream_ends_after_its_lifetime(session: Session) -> None:
    now = [0.0]
    stream = EventStream(session, lifetime_s=30, keepalive_s=0.01, clock=lambda: now[0])
    next(stream), next(stream)
    now[0] = 31.0
    with pytest.raises(StopIteration):
        next(stream)
    stream.close()
    assert session.subscriber_count == 0


def test_closing_twice_releases_once(session: Session) -> None:
    released: list[int] = []
    stream = EventStream(session, lifetime_s=10, keepalive_s=1, on_close=lambda: released.append(1))
    stream.close()
    stream.close()
    assert released == [1] and session.subscriber_count == 0


def test_the_events_route_streams_state_events(app: Flask, session: Session) -> None:
    response = app.test_client().get("/events", buffered=False)
    assert response.status_code == 200
    assert response.mimetype == "text/event-stream"
    assert response.headers["Cache-Control"] == "no-store"
    assert response.headers["X-Frame-Options"] == "DENY"
    chunks: Iterator[Any] = iter(response.response)
    assert next(chunks).startswith(b"retry:")
    assert state_version(next(chunks)) == session.version
    session.note("note", "Somebody pressed the button early.")
    assert state_version(next(chunks)) == session.version
    response.close()
    assert session.subscriber_count == 0


def test_streams_beyond_the_limit_are_asked_to_retry(session: Session) -> None:
    app = create_app(session, web_settings(sse_max_clients=2))
    client = app.test_client()
    open_ = [client.get("/events", buffered=False) for _ in range(2)]
    refused = client.get("/events")
    assert refused.status_code == 503
    assert refused.headers["Retry-After"] == "5"
    assert "error" in refused.get_json()
    open_[0].close()
    again = client.get("/events", buffered=False)
    assert again.status_code == 200
    again.close()
    open_[1].close()
    assert session.subscriber_count == 0


def test_closing_all_streams_ends_them(session: Session) -> None:
    slots = StreamSlots(4)
    stream = slots.open(session, lifetime_s=10, keepalive_s=10)
    assert stream is not None and slots.count == 1
    next(stream), next(stream)
    woke: list[Any] = []
    thread = threading.Thread(target=lambda: woke.append(list(stream)))
    thread.start()  # waits for a change inside the stream
    slots.close_all()
    thread.join(5)
    assert not thread.is_alive() and woke == [[]]
    assert slots.count == 0 and session.subscriber_count == 0


def read_event(response: http.client.HTTPResponse) -> int:
    """Read lines until a whole `event: state` message has arrived; its version."""
    message: list[str] = []
    while True:
        line = response.readline().decode()
        assert line, "the stream ended"
        if line.strip():
            message.append(line)
            continue
        version = state_version("".join(message))
        message = []
        if version is not None:
            return version


def test_waitress_delivers_events_to_a_live_page_at_once(session: Session) -> None:
    app = create_app(session, web_settings(host="127.0.0.1", port=0, threads=8, sse_max_clients=4))
    with served(app) as server:
        connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
        connection.request("GET", "/events")
        response = connection.getresponse()
        assert response.status == 200
        assert read_event(response) == session.version
        session.play(Turn(1, Pass()))
        assert read_event(response) == session.version
        state = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
        state.request("GET", "/api/state")
        assert json.loads(state.getresponse().read())["version"] == session.version
        state.close()
    assert session.subscriber_count == 0


def test_a_phone_that_goes_away_frees_its_stream_slot_at_once(session: Session) -> None:
    # The keep-alive comes once a minute and the stream lasts two: only noticing the closed
    # connection frees the slot.
    settings = web_settings(
        host="127.0.0.1",
        port=0,
        threads=8,
        sse_max_clients=4,
        sse_keepalive_s=60.0,
        sse_lifetime_s=120.0,
    )
    app = create_app(session, settings)
    slots: StreamSlots = app.extensions["companion_streams"]
    with served(app) as server:
        connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
        connection.request("GET", "/events")
        response = connection.getresponse()
        assert read_event(response) == session.version
        assert slots.count == 1
        response.close()
        connection.close()
        freed = threading.Event()
        for _ in range(100):  # a bounded wait: 100 looks, 0.1 s apart
            if slots.count == 0:
                freed.set()
                break
            freed.wait(0.1)
        assert freed.is_set(), "the stream of a phone that went away still holds its slot"
    assert session.subscriber_count == 0
