"""A subscriber's view of a session's version counter: what a live page waits on."""

from __future__ import annotations

import threading
from typing import Protocol


class Versioned(Protocol):
    """A session that counts its changes: `version` changes under `_changed`, which is
    notified then; its subscribers are kept in `_subscribers`."""

    version: int
    _changed: threading.Condition
    _subscribers: set[Subscription]


class Subscription:
    """A subscriber's view of the version counter (one per SSE client)."""

    def __init__(self, session: Versioned) -> None:
        self._session = session
        self.seen = -1
        self.closed = False

    def wait(self, timeout: float) -> int | None:
        """Block until the version differs from the last one seen; None on timeout or close."""
        cond = self._session._changed
        with cond:
            if not cond.wait_for(
                lambda: self.closed or self._session.version != self.seen, timeout=timeout
            ):
                return None
            if self.closed:
                return None
            self.seen = self._session.version
            return self.seen

    def close(self) -> None:
        with self._session._changed:
            self.closed = True
            self._session._subscribers.discard(self)
            self._session._changed.notify_all()
