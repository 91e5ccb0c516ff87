"""Fuzzing every HTTP route: bad requests are refused in one sentence and change nothing.

The routes come from the app's own url_map, so a route added later is fuzzed too. Each
request has a random method, path, query string, headers and body (JSON values, turns and
new games that are nearly right, random bytes, form bodies, 1 MB bodies, deep nesting), sent
by a guest or by the logged-in host with a valid CSRF token. After each one: no 5xx, an /api
error is JSON with a sentence, and the game is unchanged, or (host, 200) changed only by a
turn the rules allow (its event log replays to the same game).
"""

from __future__ import annotations

import json
import re
import urllib.parse
from dataclasses import dataclass, field
from itertools import islice
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from companion.actions import Matching, Variant
from companion.game import Game
from companion.session import Session
from tests.web.conftest import PIN, log_in, page_token, started_session, web_settings
from web.app import create_app
from web.forms import PLAYER_COLOURS

FUZZ = settings(
    max_examples=250,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

#: Routes that change the game when the host's request is right.
CHANGES = {
    "/api/game",
    "/api/turn",
    "/api/undo",
    "/api/confirm",
    "/api/dismiss",
    "/api/correct",
    "/api/resume",
}
METHODS = ["GET", "POST", "HEAD", "OPTIONS", "PUT", "DELETE", "PATCH", "TRACE", "BREW"]


def fuzz_app(session: Session) -> Flask:
    """The app with streams that end at once and a login limit the fuzzer never reaches (the
    limit itself is tested in test_security)."""
    return create_app(
        session,
        web_settings(
            sse_lifetime_s=0.05,
            sse_keepalive_s=0.02,
            login_attempts_per_client=1_000_000,
            login_attempts_total=1_000_000,
        ),
    )


# ---------------------------------------------------------------------- strategies

JSON_LEAVES = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=16)
)
JSON_VALUES = st.recursive(
    JSON_LEAVES,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=20,
)
#: PINs a guest may try: near the right one, never it (a guest who knows it is the host).
WRONG_PINS = ["0000", PIN[:-1], PIN + "0", PIN.replace("2", "\u0662"), "\u00b2468"]
SMALL = st.integers(-1, 6)
CELLS = st.lists(SMALL, min_size=2, max_size=2) | JSON_LEAVES
ACTIONS = st.fixed_dictionaries(
    {
        "type": st.sampled_from(
            ["take_to_board", "take_to_storage", "storage_to_board", "discard", "pass", "fly"]
        )
    },
    optional={
        "slot": st.lists(st.integers(0, 3), min_size=2, max_size=2) | CELLS,
        "cell": st.lists(st.integers(0, 3), min_size=2, max_size=2) | CELLS,
        "rotation": st.sampled_from([0, 90, 180, 270, 45, -90, 360]),
    },
)
TURNS = st.fixed_dictionaries(
    {"steps": st.integers(1, 6) | JSON_LEAVES},
    optional={
        "action": ACTIONS | JSON_VALUES,
        "ship_path": st.just("auto") | st.lists(CELLS, max_size=3) | JSON_LEAVES,
        "ship_to": CELLS,
        "drawn": st.text(max_size=12) | JSON_LEAVES,
    },
)
PLAYERS = st.fixed_dictionaries(
    {"name": st.text(max_size=30) | JSON_LEAVES},
    optional={
        "seat": st.integers(0, 6) | JSON_LEAVES,
        "colour": st.sampled_from([*PLAYER_COLOURS, "#123abc", "mauve", "#12345"]) | JSON_LEAVES,
    },
)
NEW_GAMES = st.fixed_dictionaries(
    {"players": st.lists(PLAYERS, max_size=6) | JSON_VALUES},
    optional={
        "start_player": st.integers(-1, 6) | JSON_LEAVES,
        "ship": st.integers(-1, 40) | JSON_LEAVES,
        "side": st.sampled_from(["front", "atoll", "back"]) | JSON_LEAVES,
        "variant": st.sampled_from([*(v.value for v in Variant), "easy"]) | JSON_LEAVES,
        "matching": st.sampled_from([*(m.value for m in Matching), "loose"]) | JSON_LEAVES,
        "use_camera": st.booleans() | JSON_LEAVES,
    },
)
CORRECTIONS = st.fixed_dictionaries(
    {
        "area": st.sampled_from(["display", 1, 2, 9, "board"]) | JSON_LEAVES,
        "row": SMALL | JSON_LEAVES,
        "col": SMALL | JSON_LEAVES,
        "cell": st.fixed_dictionaries(
            {},
            optional={
                "tile": st.sampled_from(["water", "single-palm1", "dragon"]) | JSON_LEAVES,
                "rotation": st.sampled_from([0, 90, 45]) | JSON_LEAVES,
                "empty": st.booleans() | JSON_LEAVES,
                "unknown": st.booleans() | JSON_LEAVES,
            },
        )
        | JSON_VALUES,
    }
)
OBJECTS = (
    TURNS
    | NEW_GAMES
    | CORRECTIONS
    | st.fixed_dictionaries({"index": st.integers(-2, 5) | JSON_LEAVES})
    | st.fixed_dictionaries({"pin": st.sampled_from(WRONG_PINS) | JSON_LEAVES})
    | JSON_VALUES
)
CONTENT_TYPES = st.sampled_from(
    [
        None,
        "application/json",
        "application/json; charset=latin-1",
        "text/plain",
        "application/x-www-form-urlencoded",
        "multipart/form-data; boundary=xyz",
        "multipart/form-data",
        "image/jpeg",
        "application/json; charset=utf-16",
        "\u00e9/\u00e9",
    ]
)
#: Header names a fuzzed request may carry (the test client sets the length and host).
HEADER_NAMES = st.sampled_from(
    [
        "X-CSRF-Token",
        "Accept",
        "Origin",
        "Referer",
        "X-Forwarded-For",
        "X-Forwarded-Host",
        "X-Real-IP",
        "Authorization",
        "If-None-Match",
        "Range",
        "Accept-Encoding",
        "Last-Event-ID",
        "Cookie",
        "X-Requested-With",
    ]
)
HEADER_VALUES = st.text(
    st.characters(min_codepoint=0x20, max_codepoint=0xFF, exclude_characters="\x7f"), max_size=40
)


@dataclass
class Request:
    method: str
    path: str
    query: str
    body: bytes | None
    content_type: str | None
    headers: dict[str, str] = field(default_factory=dict)
    address: str = "10.0.0.7"

    def send(self, client: FlaskClient, token: str | None = None) -> Any:
        headers = dict(self.headers)
        if token is not None and "X-CSRF-Token" not in headers:
            headers["X-CSRF-Token"] = token
        # The test client reads "//x" as a host name: give such a path to the app directly.
        wsgi_path = self.path.encode().decode("latin-1")
        raw = {"PATH_INFO": wsgi_path} if self.path.startswith("//") else {}
        return client.open(
            "/" if raw else self.path,
            environ_overrides=raw,
            method=self.method,
            query_string=self.query,
            data=self.body,
            content_type=self.content_type,
            headers=headers,
            environ_base={"REMOTE_ADDR": self.address},
        )


def paths(app: Flask) -> st.SearchStrategy[str]:
    """A path of one of the app's routes (random text for its variable parts), a variant of
    one, or any path at all."""
    rules = sorted(app.url_map.iter_rules(), key=lambda r: r.rule)
    segment = st.text(
        st.characters(min_codepoint=0x21, max_codepoint=0x2FF, exclude_characters="?#%"),
        max_size=12,
    ) | st.binary(max_size=12).map(lambda b: urllib.parse.quote_from_bytes(b))

    @st.composite
    def build(draw: st.DrawFn) -> str:
        rule = draw(st.sampled_from(rules))
        path = rule.rule
        for argument in rule.arguments:
            value = draw(
                st.sampled_from(["app.js", "style.css", "../app.py", "%2e%2e%2fapp.py", ""])
                | segment
            )
            path = path.replace(f"<path:{argument}>", value).replace(f"<{argument}>", value)
        variant = draw(st.sampled_from(["as is", "as is", "slash", "suffix", "double"]))
        if variant == "slash":
            path += "/"
        elif variant == "suffix":
            path += "/" + draw(segment)
        elif variant == "double":
            path = path.replace("/", "//", 1)
        return path

    return build() | segment.map(lambda s: "/" + s) | segment.map(lambda s: "/api/" + s)


@st.composite
def bodies(draw: st.DrawFn) -> tuple[bytes | None, str | None]:
    """(body, content type): JSON, near-right host requests, bytes, forms, huge, deep."""
    kinds = ["none", "json", "json", "json", "bytes", "form", "huge", "deep", "deep"]
    kind = draw(st.sampled_from(kinds))
    content_type = draw(CONTENT_TYPES)
    if kind == "none":
        return None, content_type
    if kind == "json":
        text = json.dumps(draw(OBJECTS))
        return text.encode(draw(st.sampled_from(["utf-8", "utf-16", "latin-1"])), "replace"), (
            content_type
        )
    if kind == "bytes":
        return draw(st.binary(max_size=300)), content_type
    if kind == "form":
        form = draw(st.dictionaries(st.text(max_size=8), st.text(max_size=16), max_size=4))
        return urllib.parse.urlencode(form).encode(), content_type
    if kind == "huge":
        filler = draw(st.sampled_from([b" ", b"[", b"a", b"{"]))
        return b'{"steps": 1, "x": "' + filler * 1_000_000 + b'"}', content_type
    depth = draw(st.sampled_from([1_100, 1_500, 5_000, 20_000, 30_000]))
    opener, closer = draw(st.sampled_from([(b"[", b"]"), (b'{"a":', b"}")]))
    return opener * depth + b"1" + closer * depth, content_type


#: The body each API route takes, nearly right (so that fuzzing also reaches the rules).
AIMED_BODIES: dict[str, st.SearchStrategy[Any]] = {
    "/api/turn": TURNS,
    "/api/preview": TURNS,
    "/api/game": NEW_GAMES,
    "/api/correct": CORRECTIONS,
    "/api/confirm": st.fixed_dictionaries({"index": st.integers(-2, 5) | JSON_LEAVES}),
    "/api/login": st.fixed_dictionaries({"pin": st.sampled_from(WRONG_PINS) | JSON_LEAVES}),
}
#: The host may also send the right PIN again (a fresh login in the middle of the night).
HOST_AIMED_BODIES = {
    **AIMED_BODIES,
    "/api/login": st.fixed_dictionaries({"pin": st.sampled_from([PIN, f" {PIN} ", *WRONG_PINS])}),
}


#: Bodies that have broken JSON parsers: deep nesting, huge, numbers Python refuses to read,
#: lone surrogates, a BOM, not UTF-8, and JSON that is not an object.
NASTY_BODIES = st.sampled_from(
    [
        b"[" * 1_100,
        b"[" * 30_000 + b"]" * 30_000,
        b'{"a":' * 5_000 + b"1" + b"}" * 5_000,
        b'{"steps": ' + b"9" * 5_000 + b"}",
        b'{"steps": 1e999, "action": {"type": "pass"}}',
        b'{"steps": NaN}',
        b'{"pin": "\\ud800", "steps": "\\udfff"}',
        b'\xef\xbb\xbf{"steps": 1}',
        b'{"steps": 1, "steps": 2}',
        b"\xff\xfe{\x00}\x00",
        b"null",
        b'"a string"',
        b"[]",
        b"",
        b'{"x": "' + b"a" * 1_000_000 + b'"}',
    ]
)


def requests(app: Flask, *, know_pin: bool = False) -> st.SearchStrategy[Request]:
    """Wild requests (anything anywhere), or aimed ones: a JSON POST of the right shape to an
    API route (a login with the right PIN only when `know_pin`)."""
    aimed_bodies = HOST_AIMED_BODIES if know_pin else AIMED_BODIES
    query = st.dictionaries(st.text(max_size=8), st.text(max_size=16), max_size=3).map(
        urllib.parse.urlencode
    ) | st.sampled_from([f"pin={PIN}", "pin=", "csrf=x", "%ff%fe=%00"])
    posts = sorted(
        rule.rule
        for rule in app.url_map.iter_rules()
        if rule.rule.startswith("/api/") and "POST" in (rule.methods or ())
    )

    @st.composite
    def wild(draw: st.DrawFn) -> Request:
        body, content_type = draw(bodies())
        return Request(
            method=draw(st.sampled_from(METHODS[:2]) | st.sampled_from(METHODS)),
            path=draw(paths(app)),
            query=draw(query),
            body=body,
            content_type=content_type,
            headers=draw(st.dictionaries(HEADER_NAMES, HEADER_VALUES, max_size=3)),
            address=draw(st.sampled_from(["10.0.0.7", "10.0.0.8", "::1", ""])),
        )

    @st.composite
    def aimed(draw: st.DrawFn) -> Request:
        path = draw(st.sampled_from(posts))
        shaped = aimed_bodies.get(path, st.just({}) | JSON_VALUES).map(
            lambda body: json.dumps(body).encode()
        )
        return Request(
            "POST",
            path,
            "",
            draw(shaped | NASTY_BODIES | bodies().map(lambda pair: pair[0])),
            draw(st.sampled_from([None, "application/json"])),
        )

    return aimed() | wild()


# ---------------------------------------------------------------------- checks


def game_of(session: Session) -> str:
    """Everything a phone sees of the game, as comparable text."""
    return json.dumps(session.view(), sort_keys=True)


def check_response(request: Request, response: Any) -> None:
    """No server error; an /api error is JSON with one sentence and no traceback."""
    try:
        status = response.status_code
        body = response.get_data()
    finally:
        response.close()  # an event stream gives its slot back
    assert status < 500, (request, status, body[:300])
    assert b"Traceback" not in body
    if request.path.startswith("/api/") and 400 <= status < 500 and request.method != "HEAD":
        assert response.is_json, (request, status, body[:300])
        error = response.get_json()["error"]
        assert isinstance(error, str) and error.strip() and "\n" not in error


def replays_to_itself(session: Session) -> bool:
    """True when the game's event log replays, turn by legal turn, to the same game."""
    game = session.game
    assert game is not None
    again = Game.replay(json.loads(json.dumps(game.events)), "fuzz")
    return again.to_json() == game.to_json()


# ---------------------------------------------------------------------- tests


def test_the_fuzzer_covers_every_route() -> None:
    app = fuzz_app(started_session())
    rules = {rule.rule for rule in app.url_map.iter_rules()}
    assert CHANGES | {"/api/login", "/api/logout", "/api/state", "/api/preview"} <= rules
    assert {"/", "/host", "/events", "/snapshot.jpg", "/qr.png"} <= rules
    assert any("<" in rule for rule in rules)  # static files: their variable part is fuzzed


@pytest.mark.slow
def test_a_guest_changes_nothing_whatever_it_sends() -> None:
    session = started_session()
    session.set_camera("ok", "Camera ready.", snapshot=b"\xff\xd8 a jpeg \xff\xd9")
    app = fuzz_app(session)
    guest = app.test_client()
    token = page_token(guest)  # a guest who opened the host page: a session and its token
    forger = app.test_client()  # a guest who makes up session cookies
    before = game_of(session)

    @FUZZ
    @given(
        request=requests(app),
        with_token=st.booleans(),
        forged_cookie=st.none() | st.text(max_size=60),
    )
    def send(request: Request, with_token: bool, forged_cookie: str | None) -> None:
        client = guest
        if forged_cookie is not None:
            client = forger
            client.set_cookie("companion_session", forged_cookie)
        check_response(request, request.send(client, token if with_token else None))
        assert game_of(session) == before, request
        assert not client.get("/api/state").get_json()["you"]["host"], request

    send()
    assert session.subscriber_count == 0  # every stream the fuzzer opened was released


def legal_turns(session: Session) -> list[dict[str, Any]]:
    """Some turns the rules allow now, as the host's page would send them."""
    game = session.game
    if game is None or game.over:
        return []
    return [t.to_json() for t in islice(game.rules.legal_turns(game.state), 60)]


def host_token(client: FlaskClient) -> str:
    """The host's CSRF token, logging in again after a fuzzed logout or login."""
    you = client.get("/api/state").get_json()["you"]
    return str(you["csrf"]) if you["host"] else log_in(client).token


def new_night(session: Session) -> None:
    """Put the table back to the start of the conftest game (the same game every time)."""
    fresh = started_session()
    session.game, session.question, session.last_read = fresh.game, None, None


@pytest.mark.slow
def test_the_host_changes_the_game_only_by_legal_actions() -> None:
    changed: list[str] = []
    session = started_session()
    app = fuzz_app(session)
    client = app.test_client()
    fuzzed = requests(app, know_pin=True)

    # Each example is a short game night of its own: the same fresh table, 1-4 requests from
    # the host, some of them turns the rules allow now (maybe spoilt), the rest fuzzed.
    @settings(FUZZ, max_examples=150)
    @given(data=st.data())
    def night(data: st.DataObject) -> None:
        new_night(session)
        for _ in range(data.draw(st.integers(1, 4), label="requests")):
            token = host_token(client)
            turns = legal_turns(session)
            legal: bool = data.draw(st.booleans(), label="a legal turn, maybe spoilt")
            if turns and legal:
                turn = data.draw(st.sampled_from(turns))
                if data.draw(st.booleans(), label="spoilt"):
                    key = data.draw(st.sampled_from(sorted(turn)))
                    turn[key] = data.draw(JSON_VALUES | TURNS)
                path = data.draw(st.sampled_from(["/api/turn", "/api/preview"]))
                request = Request("POST", path, "", json.dumps(turn).encode(), "application/json")
            else:
                request = data.draw(fuzzed)
            before = game_of(session)
            response = request.send(client, token)
            status = response.status_code
            check_response(request, response)
            if game_of(session) == before:
                continue
            assert status == 200 and request.method == "POST", (request, status)
            assert re.sub("/+", "/", request.path) in CHANGES, request  # "//api/undo" is undo
            assert replays_to_itself(session), request
            changed.append(request.path)

    night()
    assert session.subscriber_count == 0
    assert "/api/turn" in changed, "no fuzzed turn was legal: the strategies miss the rules"
