"""Giants' final count on the phones: the host sends the count, the engine's scorer scores it,
guests read it, and the file it offers scores the same as a game file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from flask.testing import FlaskClient

from companion.games.files import score_game_file
from companion.games.giants.final_count import score_final_count
from tests.web.conftest import Host

FIVE = ["Ana", "Ben", "Cy", "Dov", "Eve"]


def five_player_count() -> dict[str, Any]:
    """A 5-player end position: 17 Moai on Ahus, some crowned, tracks and Rongo halves."""
    ahus = [f"a{n:02d}" for n in range(1, 30)]
    moai = []
    for i in range(17):
        moai.append(
            {"owner": FIVE[i % 5], "size": 1 + i % 3, "ahu": ahus[i], "headdress": i % 4 == 0}
        )
    return {
        "game": "giants",
        "players": FIVE,
        "open_scoring": False,
        "track": {"Ana": 12, "Ben": 7, "Cy": 0, "Dov": 21, "Eve": 3},
        "rongo_halves": {"Ana": 2, "Ben": 1, "Cy": 4, "Dov": 0, "Eve": 3},
        "moai": moai,
    }


def test_the_host_s_count_is_scored_by_the_engine_and_guests_read_it(
    client: FlaskClient, host: Host
) -> None:
    guest = client.application.test_client()
    assert guest.get("/api/games/giants/count").get_json()["count"] is None
    count = five_player_count()
    response = host.post("/api/games/giants/count", {"count": count})
    assert response.status_code == 200, response.get_json()
    expected = score_final_count(count).to_json()
    assert response.get_json()["score"] == expected
    state = guest.get("/api/games/giants/count").get_json()
    assert state["count"] == count and state["score"] == expected
    assert state["you"] == {"host": False}
    page = guest.get("/games/giants/count").get_data(as_text=True)
    assert "Guests read the count here." in page


def test_a_guest_cannot_change_the_count(client: FlaskClient, host: Host) -> None:
    guest = client.application.test_client()
    count = five_player_count()
    for url in ("/api/games/giants/count", "/api/games/giants/count/clear"):
        assert guest.post(url, json={"count": count}).status_code == 401
    assert host.client.get("/api/games/giants/count").get_json()["count"] is None


def test_a_count_the_scorer_refuses_is_one_sentence_and_keeps_the_last_one(host: Host) -> None:
    good = five_player_count()
    assert host.post("/api/games/giants/count", {"count": good}).status_code == 200
    bad = five_player_count()
    bad["moai"] += [{"owner": "Ana", "size": 1, "ahu": f"a{n}"} for n in range(20, 24)]
    response = host.post("/api/games/giants/count", {"count": bad})
    assert response.status_code == 400
    message = response.get_json()["error"]
    assert message.startswith("the final count: ") and "Ana" in message and "\n" not in message
    assert host.client.get("/api/games/giants/count").get_json()["count"] == good
    assert host.post("/api/games/giants/count", {}).status_code == 400


def test_the_count_s_file_scores_the_same_as_a_giants_game_file(host: Host, tmp_path: Path) -> None:
    """The file the page saves is scored as `companion score --game giants` scores a game file
    (its print: tests/app/test_score_giants.py)."""
    count = five_player_count()
    shown = host.post("/api/games/giants/count", {"count": count}).get_json()["score"]
    path = tmp_path / "giants-final-count.json"
    kept = host.client.get("/api/games/giants/count").get_json()["count"]
    path.write_text(json.dumps(kept, indent=1), encoding="utf-8")  # what the page saves
    assert json.loads(json.dumps(score_game_file("giants", path).to_json())) == shown
