"""Settings of the phone pages: where to listen, the host PIN, sessions, live updates, limits.

One frozen dataclass, `WebSettings`, validated on construction; `WebSettings.from_mapping`
reads the `[web]` table of the companion's TOML file (other tables are ignored). A bad value
is one `DataError` sentence naming the key. Every tunable of the web package lives here.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from typing import Any

from companion.errors import DataError

#: The fewest digits a host PIN may have: the arithmetic is in docs/security.md, "The PIN
#: policy" (a 6-digit PIN outlasts a night of guessing with odds of some 10 000 to 1).
MIN_PIN_DIGITS = 6
MAX_PIN_DIGITS = 12
PIN_PATTERN = re.compile(rf"[0-9]{{{MIN_PIN_DIGITS},{MAX_PIN_DIGITS}}}")
#: A zeroconf name: what comes before `.local` (a DNS label).
NAME_PATTERN = re.compile(r"[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?")
GENERATED_PIN_DIGITS = 6


def pin_too_short(text: str) -> bool:
    """Whether `text` is digits alone, but fewer than MIN_PIN_DIGITS of them."""
    return re.fullmatch(r"[0-9]+", text) is not None and len(text) < MIN_PIN_DIGITS


def generate_pin() -> str:
    """A random 6-digit PIN (from the operating system's secure random source)."""
    return f"{secrets.randbelow(10**GENERATED_PIN_DIGITS):0{GENERATED_PIN_DIGITS}d}"


#: The longest time any [web] setting in seconds may name (a day).
MAX_SECONDS = 86_400
#: The most PIN guesses a setting may allow per window (the limiter keeps one time per
#: guess, so this bounds its memory too).
MAX_ATTEMPTS = 1_000_000


def _problem(key: str, text: str) -> DataError:
    return DataError("", f"web.{key}: {text}")


def _whole(key: str, value: object, minimum: int, maximum: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise _problem(key, f"expected a whole number, got {value!r}.")
    if value < minimum or (maximum is not None and value > maximum):
        bound = f"{minimum}-{maximum}" if maximum is not None else f"at least {minimum}"
        raise _problem(key, f"{value} is out of range (use {bound}).")
    return value


def _seconds(key: str, value: object) -> float:
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not 0 < value <= MAX_SECONDS  # also refuses NaN
    ):
        raise _problem(
            key, f"expected a number of seconds above 0 and at most {MAX_SECONDS}, got {value!r}."
        )
    return float(value)


@dataclass(frozen=True, slots=True)
class WebSettings:
    """How the phone pages are served. Times are seconds unless the name says minutes."""

    # Listen on every interface of the Pi (the table's phones are on the LAN).
    host: str = "0.0.0.0"
    # 0 picks any free port (tests).
    port: int = 8080
    # Worker threads of waitress. Each live page holds one for its event stream.
    threads: int = 96
    # The host PIN (6-12 digits); None: a random 6-digit PIN is made at start and shown on
    # the console.
    pin: str | None = None
    # Signs the session cookie; None: a new random key at every start (hosts log in again).
    secret_key: str | None = None
    # A host login lasts this long (a game night).
    session_minutes: int = 240
    # Advertised as NAME.local on the LAN (python-zeroconf), and the QR code's fallback.
    name: str = "maori"
    advertise: bool = True
    # The address the QR code shows; None: worked out from the LAN address at start.
    public_url: str | None = None
    # An event stream ends after this long and the page reconnects (frees stuck threads).
    sse_lifetime_s: float = 300.0
    # A comment line this often keeps proxies and phones from dropping a quiet stream.
    sse_keepalive_s: float = 15.0
    # Live pages beyond this many are asked to retry later, so other requests keep threads.
    sse_max_clients: int = 64
    # Wrong PIN guesses allowed per client address, and in all, per minute.
    login_attempts_per_client: int = 5
    login_attempts_total: int = 20
    login_window_s: float = 60.0
    # Past this many wrong guesses in all, each further one pauses all guessing for
    # login_window_s, then twice as long as the pause before (web.auth.LoginLimiter); one
    # wrong guess in all is forgiven every login_forgive_s.
    login_backoff_after: int = 100
    login_forgive_s: float = 86_400.0
    # The camera preview on the page is refreshed at most this often.
    snapshot_interval_s: float = 1.0

    def __post_init__(self) -> None:
        if not isinstance(self.host, str) or not self.host:
            raise _problem("host", f"expected an address to listen on, got {self.host!r}.")
        _whole("port", self.port, 0, 65535)
        _whole("threads", self.threads, 4, 1024)
        if self.pin is not None and (
            not isinstance(self.pin, str) or not PIN_PATTERN.fullmatch(self.pin)
        ):
            if isinstance(self.pin, str) and pin_too_short(self.pin):
                raise _problem(
                    "pin",
                    f"a PIN of {len(self.pin)} digits is too easy to guess; use "
                    f'{MIN_PIN_DIGITS} to {MAX_PIN_DIGITS} (docs/security.md, "The PIN policy").',
                )
            raise _problem(
                "pin", f"a PIN is {MIN_PIN_DIGITS} to {MAX_PIN_DIGITS} digits, written as a string."
            )
        if self.secret_key is not None and (
            not isinstance(self.secret_key, str) or len(self.secret_key) < 16
        ):
            raise _problem("secret_key", "a secret key is a string of at least 16 characters.")
        _whole("session_minutes", self.session_minutes, 1, 7 * 24 * 60)
        if not isinstance(self.name, str) or not NAME_PATTERN.fullmatch(self.name):
            raise _problem(
                "name", f"{self.name!r} is not a network name (lowercase letters, digits, '-')."
            )
        if not isinstance(self.advertise, bool):
            raise _problem("advertise", f"expected true or false, got {self.advertise!r}.")
        if self.public_url is not None and (
            not isinstance(self.public_url, str)
            or not self.public_url.startswith(("http://", "https://"))
        ):
            raise _problem("public_url", "expected an address starting with http:// or https://.")
        for key in (
            "sse_lifetime_s",
            "sse_keepalive_s",
            "login_window_s",
            "login_forgive_s",
            "snapshot_interval_s",
        ):
            object.__setattr__(self, key, _seconds(key, getattr(self, key)))
        _whole("sse_max_clients", self.sse_max_clients, 1, self.threads - 2)
        _whole("login_attempts_per_client", self.login_attempts_per_client, 1, MAX_ATTEMPTS)
        _whole(
            "login_attempts_total",
            self.login_attempts_total,
            self.login_attempts_per_client,
            MAX_ATTEMPTS,
        )
        _whole("login_backoff_after", self.login_backoff_after, 0, MAX_ATTEMPTS)

    def with_pin(self) -> WebSettings:
        """These settings with a random PIN when none is configured."""
        return self if self.pin is not None else replace(self, pin=generate_pin())

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any], source: str) -> WebSettings:
        """Build from a parsed TOML file's `[web]` table; missing keys take their defaults."""
        table = data.get("web", {})
        if not isinstance(table, Mapping):
            raise DataError(source, f"[web] must be a table of settings, not {table!r}.")
        known = {f.name for f in fields(cls)}
        for key in table:
            if key not in known:
                raise DataError(
                    source,
                    f"[web] has an unknown setting {key!r} (known: {', '.join(sorted(known))}).",
                )
        values = dict(table)
        if isinstance(values.get("pin"), int) and not isinstance(values["pin"], bool):
            raise DataError(source, 'web.pin: write the PIN as a string, e.g. pin = "042719".')
        try:
            return cls(**values)
        except DataError as error:
            raise DataError(source, error.problem) from None
