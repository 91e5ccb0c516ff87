"""Who may change the game: the host PIN, the host session, CSRF tokens and the login limit.

Guests only read. A host logs in with the PIN (compared in constant time); the login lives in
Flask's signed session cookie (HttpOnly, SameSite=Strict) and expires after
`WebSettings.session_minutes`. Every state-changing request is a POST carrying the session's
CSRF token in the X-CSRF-Token header. Wrong PIN guesses are limited per client address and in
all. Neither the PIN nor a token is ever written to a log line or a URL.
"""

from __future__ import annotations

import hmac
import secrets
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Any

from flask import session

CSRF_HEADER = "X-CSRF-Token"
_CSRF_KEY = "csrf"
_HOST_KEY = "host_since"


def pin_matches(given: object, pin: str) -> bool:
    """True when `given` is the PIN; constant time for strings of any content."""
    if not isinstance(given, str):
        return False
    return hmac.compare_digest(given.strip().encode(), pin.encode())


def csrf_token() -> str:
    """This browser session's CSRF token (made on first use)."""
    token = session.get(_CSRF_KEY)
    if not isinstance(token, str):
        token = secrets.token_urlsafe(32)
        session[_CSRF_KEY] = token
    return token


def csrf_ok(sent: str | None) -> bool:
    """True when `sent` is this session's CSRF token."""
    token = session.get(_CSRF_KEY)
    if not isinstance(token, str) or not sent:
        return False
    return hmac.compare_digest(sent.encode(), token.encode())


def log_in(now: float) -> None:
    """Mark this browser session as the host's, with a fresh CSRF token."""
    session.clear()
    session.permanent = True
    session[_HOST_KEY] = now
    session[_CSRF_KEY] = secrets.token_urlsafe(32)


def log_out() -> None:
    session.pop(_HOST_KEY, None)
    session[_CSRF_KEY] = secrets.token_urlsafe(32)


def is_host(now: float, lifetime_s: float) -> bool:
    """True while this browser session holds a host login younger than `lifetime_s`."""
    since: Any = session.get(_HOST_KEY)
    if isinstance(since, bool) or not isinstance(since, int | float):
        return False
    return 0 <= now - since < lifetime_s


class LoginLimiter:
    """Counts wrong PIN guesses in a sliding window, per client address and in all."""

    def __init__(
        self,
        per_client: int,
        total: int,
        window_s: float,
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.per_client = per_client
        self.total = total
        self.window_s = window_s
        self.clock = clock
        self._lock = threading.Lock()
        self._by_client: dict[str, deque[float]] = {}
        self._all: deque[float] = deque()

    def _expire(self, now: float) -> None:
        edge = now - self.window_s
        while self._all and self._all[0] <= edge:
            self._all.popleft()
        for client in list(self._by_client):
            times = self._by_client[client]
            while times and times[0] <= edge:
                times.popleft()
            if not times:
                del self._by_client[client]

    def retry_after(self, client: str) -> int | None:
        """Seconds this client must wait before guessing again, or None when it may guess."""
        with self._lock:
            now = self.clock()
            self._expire(now)
            waits = []
            mine = self._by_client.get(client)
            if mine is not None and len(mine) >= self.per_client:
                waits.append(mine[0] + self.window_s - now)
            if len(self._all) >= self.total:
                waits.append(self._all[0] + self.window_s - now)
            if not waits:
                return None
            return max(1, int(max(waits) + 0.999))

    def failed(self, client: str) -> None:
        """Count one wrong guess from `client`."""
        with self._lock:
            now = self.clock()
            self._by_client.setdefault(client, deque()).append(now)
            self._all.append(now)

    def succeeded(self, client: str) -> None:
        """A right PIN clears this client's wrong guesses (the global count stays)."""
        with self._lock:
            self._by_client.pop(client, None)
