"""Who may change the game: the host PIN, the host session, CSRF tokens and the login limit.

Guests only read. A host logs in with the PIN (compared in constant time); the login lives in
Flask's signed session cookie (HttpOnly, SameSite=Strict) and expires after
`WebSettings.session_minutes`; logging out ends it on the server too (`HostLogins`), so a
copied cookie dies with it. Every state-changing request is a POST carrying the session's
CSRF token in the X-CSRF-Token header. Wrong PIN guesses are limited per client address and in
all, and past an allowance each pauses all guessing twice as long as the one before
(`LoginLimiter`). Neither the PIN nor a token is ever written to a log line or a URL.
"""

from __future__ import annotations

import hmac
import json
import logging
import math
import secrets
import threading
import time
from collections import deque
from collections.abc import Callable
from pathlib import Path

from flask import session

from companion.journal import write_atomically

log = logging.getLogger(__name__)

CSRF_HEADER = "X-CSRF-Token"
_CSRF_KEY = "csrf"
_HOST_KEY = "host_since"
_LOGIN_KEY = "login"


def pin_matches(given: object, pin: str) -> bool:
    """True when `given` is the PIN; constant time for strings of any content."""
    if not isinstance(given, str):
        return False
    # surrogatepass: a lone surrogate is just another wrong PIN, not an encoding error
    return hmac.compare_digest(given.strip().encode("utf-8", "surrogatepass"), pin.encode())


def csrf_token() -> str:
    """This browser session's CSRF token (made on first use)."""
    token = session.get(_CSRF_KEY)
    if not isinstance(token, str):
        token = secrets.token_urlsafe(32)
        session[_CSRF_KEY] = token
    return token


def you(host: bool) -> dict[str, object]:
    """What a page's state says of the asking phone: whether it is the host's, and the host's
    CSRF token."""
    you: dict[str, object] = {"host": host}
    if host:
        you["csrf"] = csrf_token()
    return you


def csrf_ok(sent: str | None) -> bool:
    """True when `sent` is this session's CSRF token."""
    token = session.get(_CSRF_KEY)
    if not isinstance(token, str) or not sent:
        return False
    return hmac.compare_digest(sent.encode(), token.encode())


class HostLogins:
    """The host logins of one app. A login lives in the signed session cookie with its own id
    and start time; logging out also ends that id here, so a copy of the cookie taken before
    the logout (or before a fresh login in the same browser) no longer makes anybody the host.
    Ended ids are kept until their login would have expired anyway, in the file `kept` as
    well when given: with a configured secret key a cookie outlives a restart, and so must
    its logout."""

    def __init__(
        self, lifetime_s: float, clock: Callable[[], float], kept: Path | None = None
    ) -> None:
        self.lifetime_s = lifetime_s
        self.clock = clock
        self.kept = kept
        self._lock = threading.Lock()
        # login id -> when it would have expired
        self._ended: dict[str, float] = {} if kept is None else _read_ended(kept)

    def _end_current(self, now: float) -> None:
        login, since = session.get(_LOGIN_KEY), _login_time(session.get(_HOST_KEY))
        if not isinstance(login, str) or since is None:
            return
        with self._lock:
            self._ended = {k: t for k, t in self._ended.items() if t > now}
            self._ended[login] = since + self.lifetime_s
            if self.kept is not None:
                try:
                    write_atomically(self.kept, json.dumps(self._ended) + "\n", mode=0o600)
                except OSError as exc:
                    # The logout holds until a restart; the game itself is untouched.
                    log.warning(
                        "could not keep the ended logins in %s (%s): a cookie "
                        "copied before this logout works again after a restart",
                        self.kept,
                        exc.strerror,
                    )

    def log_in(self) -> None:
        """Mark this browser session as the host's, with a fresh login id and CSRF token."""
        now = self.clock()
        self._end_current(now)
        session.clear()
        session.permanent = True
        session[_HOST_KEY] = now
        session[_LOGIN_KEY] = secrets.token_urlsafe(16)
        session[_CSRF_KEY] = secrets.token_urlsafe(32)

    def log_out(self) -> None:
        """End this browser session's host login for good; it keeps a fresh CSRF token."""
        self._end_current(self.clock())
        session.pop(_HOST_KEY, None)
        session.pop(_LOGIN_KEY, None)
        session[_CSRF_KEY] = secrets.token_urlsafe(32)

    def is_host(self) -> bool:
        """True while this browser session holds a host login that is younger than the
        lifetime and was not logged out."""
        since = _login_time(session.get(_HOST_KEY))
        login = session.get(_LOGIN_KEY)
        if since is None or not isinstance(login, str):
            return False
        with self._lock:
            if login in self._ended:
                return False
        return 0 <= self.clock() - since < self.lifetime_s


def _read_ended(path: Path) -> dict[str, float]:
    """The ended logins kept in `path` (HostLogins); none when there is no such file. A
    damaged or unreadable file is reported and read as none (as before logins were kept)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(data, dict):
            raise ValueError("not an object")
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:  # UnicodeDecodeError is a ValueError
        reason = exc.strerror if isinstance(exc, OSError) else "damaged"
        log.warning(
            "the ended logins kept in %s cannot be read (%s); starting without them", path, reason
        )
        return {}
    return {
        k: float(v)
        for k, v in data.items()
        if isinstance(k, str)
        and isinstance(v, int | float)
        and not isinstance(v, bool)
        and math.isfinite(v)
    }


def _login_time(value: object) -> float | None:
    """The start time a session cookie holds, None when it holds none."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


#: The longest pause the back-off of LoginLimiter makes (a year).
MAX_PAUSE_S = 365 * 86_400


class LoginLimiter:
    """Counts wrong PIN guesses. A burst limit: `per_client` per client address and `total`
    in all within a sliding `window_s`. A back-off no guesser outlasts: past `backoff_after`
    wrong guesses in all, each further one pauses every guess, the right PIN included, for
    `window_s`, the next for twice that, and so on (at most MAX_PAUSE_S); one wrong guess in
    all is forgiven every `forgive_s`. A right PIN clears its client's count, never the count
    in all, so a guesser gains nothing from the host's logins. The host's existing login is
    untouched by all of it (docs/security.md, "The PIN policy")."""

    def __init__(
        self,
        per_client: int,
        total: int,
        window_s: float,
        *,
        backoff_after: int = 100,
        forgive_s: float = 86_400.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.per_client = per_client
        self.total = total
        self.window_s = window_s
        self.backoff_after = backoff_after
        self.forgive_s = forgive_s
        self.clock = clock
        self._lock = threading.Lock()
        self._by_client: dict[str, deque[float]] = {}
        self._all: deque[float] = deque()
        # Wrong guesses in all not yet forgiven, as of `_owed_at`; guessing is paused until
        # `_paused_until`.
        self._owed = 0.0
        self._owed_at = 0.0
        self._paused_until = -math.inf

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

    def _owed_now(self, now: float) -> float:
        return max(0.0, self._owed - max(0.0, now - self._owed_at) / self.forgive_s)

    def retry_after(self, client: str) -> int | None:
        """Seconds this client must wait before guessing again, or None when it may guess."""
        with self._lock:
            now = self.clock()
            self._expire(now)
            waits = [self._paused_until - now] if self._paused_until > now else []
            mine = self._by_client.get(client)
            if mine is not None and len(mine) >= self.per_client:
                waits.append(mine[0] + self.window_s - now)
            if len(self._all) >= self.total:
                waits.append(self._all[0] + self.window_s - now)
            if not waits:
                return None
            return max(1, int(max(waits) + 0.999))

    def failed(self, client: str) -> None:
        """Count one wrong guess from `client` (and pause every guess past the back-off's
        allowance)."""
        with self._lock:
            now = self.clock()
            self._by_client.setdefault(client, deque()).append(now)
            self._all.append(now)
            self._owed, self._owed_at = self._owed_now(now) + 1.0, now
            beyond = math.ceil(self._owed - 1e-9) - self.backoff_after
            if beyond >= 1:
                pause = min(MAX_PAUSE_S, self.window_s * 2.0 ** min(beyond - 1, 64))
                self._paused_until = max(self._paused_until, now + pause)

    def succeeded(self, client: str) -> None:
        """A right PIN clears this client's wrong guesses (the global count stays)."""
        with self._lock:
            self._by_client.pop(client, None)
