"""Server-Sent Events: one stream per open page, telling it when its session changed.

A stream follows anything that can be subscribed to (`Watched`): Māori's Session (`/events`)
or the board games' BoardSession (`/games/events`); both share one `StreamSlots`, so the cap
counts every open page.

Each stream sends `event: state` with the session's version as soon as it opens and after
every change; the page then fetches /api/state. A comment line every `keepalive_s` keeps the
connection alive, and the stream ends after `lifetime_s` so a thread is never held forever:
the page simply reconnects. A phone that closed its connection is noticed within `GONE_CHECK_S`
(waitress tells, through `gone`), and its stream ends then, freeing its slot.
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Callable, Generator, Iterator
from typing import Protocol

#: How long the browser waits before reconnecting after the stream ends (milliseconds).
RETRY_MS = 2000
#: How often a quiet stream asks whether its phone has gone away (seconds).
GONE_CHECK_S = 1.0


class Subscription(Protocol):
    """A subscriber's view of a version counter."""

    def wait(self, timeout: float) -> int | None:
        """The new version once it differs from the last one seen; None on timeout or close."""
        ...

    def close(self) -> None: ...


class Watched(Protocol):
    """What a stream follows: a session whose changes can be waited for."""

    def subscribe(self) -> Subscription: ...


def event(name: str, data: object, event_id: int | None = None) -> str:
    """One SSE message: `event:`, optional `id:`, one `data:` line of JSON."""
    lines = [f"event: {name}"]
    if event_id is not None:
        lines.append(f"id: {event_id}")
    lines.append(f"data: {json.dumps(data, separators=(',', ':'))}")
    return "\n".join(lines) + "\n\n"


class EventStream:
    """The messages of one event stream, as a WSGI body: `close()` (which every WSGI server
    calls, also when the phone went away) releases the session subscription exactly once."""

    def __init__(
        self,
        session: Watched,
        *,
        lifetime_s: float,
        keepalive_s: float,
        on_close: Callable[[], None] | None = None,
        gone: Callable[[], bool] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._subscription = session.subscribe()
        self._gone = gone
        self._keepalive_s = keepalive_s
        self._end = clock() + lifetime_s
        self._clock = clock
        self._on_close = on_close
        self._closed = False
        self._messages = self._generate()

    def __iter__(self) -> Iterator[str]:
        return self

    def __next__(self) -> str:
        return next(self._messages)

    def _generate(self) -> Generator[str, None, None]:
        yield f"retry: {RETRY_MS}\n\n"
        keepalive_at = self._clock() + self._keepalive_s
        while True:
            now = self._clock()
            left = self._end - now
            if left <= 0:
                return
            wait = min(keepalive_at - now, left)
            if self._gone is not None:
                wait = min(wait, GONE_CHECK_S)
            version = self._subscription.wait(max(wait, 0.0))
            if self._closed or (self._gone is not None and self._gone()):
                return
            if version is not None:
                yield event("state", {"version": version}, version)
            elif self._clock() >= keepalive_at:
                keepalive_at = self._clock() + self._keepalive_s
                yield ": keep-alive\n\n"

    def close(self) -> None:
        """End the stream and release its subscription (idempotent)."""
        if self._closed:
            return
        self._closed = True
        self._subscription.close()  # wakes a wait() in another thread, which then returns
        with contextlib.suppress(ValueError):  # still running in that thread: it ends itself
            self._messages.close()
        if self._on_close is not None:
            self._on_close()


class StreamSlots:
    """The open event streams: at most `limit` at once, so they never take every worker
    thread, and all closed at once when the server stops."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._open: set[EventStream] = set()
        self._lock = threading.Lock()

    @property
    def count(self) -> int:
        with self._lock:
            return len(self._open)

    def open(
        self,
        session: Watched,
        *,
        lifetime_s: float,
        keepalive_s: float,
        gone: Callable[[], bool] | None = None,
    ) -> EventStream | None:
        """A new stream, or None when `limit` streams are already open; `gone` says whether
        its phone has closed the connection."""
        with self._lock:
            if len(self._open) >= self.limit:
                return None
            stream = EventStream(
                session,
                lifetime_s=lifetime_s,
                keepalive_s=keepalive_s,
                on_close=lambda: self._release(stream),
                gone=gone,
            )
            self._open.add(stream)
            return stream

    def _release(self, stream: EventStream) -> None:
        with self._lock:
            self._open.discard(stream)

    def close_all(self) -> None:
        """End every open stream (their pages reconnect to whatever serves next)."""
        with self._lock:
            streams = list(self._open)
        for stream in streams:
            stream.close()
