"""The final count of a Giants game played on the table without the companion, by taps.

The host taps each Moai standing on an Ahu onto the drawn island (owner, size, headdress) and
enters each player's Rongo half-tablets and place on the points track; every change is sent
whole (POST /api/games/giants/count) and scored by the engine's own scorer
(`companion.games.giants.final_count.score_final_count`), so the page shows exactly what
`companion score --game giants FILE` prints for the count the page offers as a file
(`count` of GET /api/games/giants/count). Guests follow the count read-only on the same page
(/games/giants/count, live through /games/giants/count/events). The count is kept in memory
while the companion runs.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from flask import Blueprint, Flask, Response, current_app, jsonify, render_template

from companion.errors import MalformedMove, NotNow
from companion.games.giants.final_count import score_final_count
from companion.games.giants.island import Island, default_island
from companion.subscription import Subscription
from web import auth
from web.api import giants
from web.sse import Watched

EXTENSION = "companion_giants_count"

bp = Blueprint("giants_count", __name__)


class CountDesk:
    """The table's final count (or none yet), its score and a version the pages follow."""

    def __init__(self, island: Island | None = None) -> None:
        self.island = island or default_island()
        self.count: dict[str, Any] | None = None
        self.score: dict[str, Any] | None = None
        self.version = 0
        self.lock = threading.RLock()
        self._changed = threading.Condition(self.lock)
        self._subscribers: set[Subscription] = set()

    def subscribe(self) -> Subscription:
        """A new subscriber; its first wait() returns at once with the current version."""
        with self.lock:
            sub = Subscription(self)
            self._subscribers.add(sub)
            return sub

    def put(self, count: Any, version: Any = None) -> dict[str, Any]:
        """Score `count` (the final-count object of docs/formats.md) and keep it; a count the
        scorer refuses raises its one-sentence DataError and changes nothing."""
        if version is not None and (type(version) is not int or version != self.version):
            raise NotNow("The count changed on another phone: look again.")
        score = score_final_count(count, "the final count", self.island).to_json()
        with self.lock:
            self.count, self.score = count, score
            self.version += 1
            self._changed.notify_all()
        return score

    def clear(self) -> None:
        with self.lock:
            self.count = self.score = None
            self.version += 1
            self._changed.notify_all()


def register(
    app: Flask,
    *,
    require_host: Callable[[], None],
    is_host: Callable[[], bool],
    read_body: Callable[[], dict[str, Any]],
    stream: Callable[[Watched], Response],
    desk: CountDesk | None = None,
) -> None:
    """Add the final count's page, stream and API to `app`."""
    app.extensions[EXTENSION] = {
        "desk": desk or CountDesk(),
        "require_host": require_host,
        "is_host": is_host,
        "read_body": read_body,
        "stream": stream,
    }
    app.register_blueprint(bp)


def _ext() -> dict[str, Any]:
    ext: dict[str, Any] = current_app.extensions[EXTENSION]
    return ext


def _desk() -> CountDesk:
    desk: CountDesk = _ext()["desk"]
    return desk


def _state() -> dict[str, Any]:
    desk = _desk()
    host = bool(_ext()["is_host"]())
    with desk.lock:
        return {
            "version": desk.version,
            "count": desk.count,
            "score": desk.score,
            "island": _island(desk.island),
            "layout": giants.layout(desk.island),
            "you": auth.you(host),
        }


def _island(island: Island) -> dict[str, Any]:
    """The island as the drawing takes it (the shape of `GiantsGame.view()["island"]`)."""
    return {
        "hexes": [
            {"id": h.id, "q": h.q, "r": h.r, "kind": h.kind, "logs": None, "pieces": []}
            for h in island.hexes
        ],
        "ahus": [
            {"id": a.id, "hex": a.hex, "value": a.value, "headdress_value": a.headdress}
            for a in island.ahus
        ],
    }


@bp.get("/games/giants/count")
def count_page() -> str:
    return render_template("giants_count.html", state=_state())


@bp.get("/games/giants/count/events")
def count_events() -> Response:
    stream: Callable[[Watched], Response] = _ext()["stream"]
    return stream(_desk())


@bp.get("/api/games/giants/count")
def api_count() -> Response:
    return jsonify(_state())


@bp.post("/api/games/giants/count")
def api_put_count() -> Response:
    """The host's whole count; answered with its score (400 and one sentence when the scorer
    refuses it, the kept count unchanged)."""
    _ext()["require_host"]()
    body: dict[str, Any] = _ext()["read_body"]()
    if "count" not in body:
        raise MalformedMove("Send the count as `count`.")
    score = _desk().put(body["count"], body.get("version"))
    return jsonify({"ok": True, "score": score, "version": _desk().version})


@bp.post("/api/games/giants/count/clear")
def api_clear_count() -> Response:
    _ext()["require_host"]()
    _ext()["read_body"]()
    _desk().clear()
    return jsonify({"ok": True, "text": "The count is cleared."})
