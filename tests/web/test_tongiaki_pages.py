"""Tongiaki on the phones: moves in words, the score's rows, the notes, the final count by taps."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
from flask.testing import FlaskClient

from companion.games.files import score_game_file
from companion.games.session import BoardSession, board_journal
from companion.session import Session
from tests.web.conftest import Host, log_in, web_settings
from web.api.tongiaki import COUNT_FILE, action_words
from web.app import create_app

TONGIAKI = {"game": "tongiaki", "names": ["Ana", "Ben"], "seed": 5}

#: A 5-player end position as a table counts it: Tonga, eleven islands, two royal; Red, Blue
#: and Yellow level on 14 points, Red and Blue on 5 islands: Blue wins with fewer boats.
FIVE: dict[str, Any] = {
    "game": "tongiaki",
    "players": ["Red", "Blue", "Yellow", "Orange", "Green"],
    "islands": [
        {"value": 0, "boats": {"Red": 2, "Blue": 1, "Green": 1}},
        {"value": 5, "boats": {"Red": 3, "Yellow": 2}},
        {"value": 5, "royal": "Blue"},
        {"value": 4, "boats": {"Orange": 2, "Green": 2, "Yellow": 1}},
        {"value": 4, "boats": {"Red": 1, "Blue": 2}},
        {"value": 2, "royal": "Yellow"},
        {"value": 3, "boats": {"Green": 3, "Orange": 1}},
        {"value": 3, "boats": {"Blue": 1, "Red": 1}},
        {"value": 3, "boats": {"Yellow": 2}},
        {"value": 2, "boats": {"Orange": 2, "Red": 1}},
        {"value": 4, "boats": {"Green": 1}},
        {"value": 2, "boats": {"Blue": 2, "Orange": 1}},
    ],
}


def file_score(tmp_path: Path, data: dict[str, Any]) -> Any:
    """The score of `data` kept as a Tongiaki game file, as JSON carries it: what
    `companion score --game tongiaki FILE --json` prints (tests/app/test_score_games.py)."""
    path = tmp_path / "count.json"
    path.write_text(json.dumps(data), "utf-8")
    return json.loads(json.dumps(score_game_file("tongiaki", path).to_json()))


def test_moves_name_tonga_with_a_capital() -> None:
    assert action_words({"type": "place", "island": "tonga", "beach": 0}) == "Boat on Tonga beach 1"
    take = {"type": "expand", "island": "i03", "beaches": [1], "take": ["tonga", 2]}
    assert action_words(take) == "Expand on i03: beach 2 (boat from Tonga beach 3)"
    none = {"type": "expand", "island": "tonga", "beaches": []}
    assert action_words(none) == "Expand on Tonga: no boat (every boat is on the map)"
    assert action_words({"type": "decline"}) == "No royal island: go on"


def test_the_score_names_its_points_and_tie_break_rows_in_one_order(host: Host) -> None:
    assert host.post("/api/games/new", TONGIAKI).status_code == 200
    fresh = host.client.get("/games").get_data(as_text=True)
    start = fresh.index('<script id="initial-state" type="application/json">') + 51
    initial = json.loads(fresh[start : fresh.index("</script>", start)])
    live = host.client.get("/api/games/state").get_json()
    for state in (initial, live):
        score = state["game"]["score"]
        assert score["rows"] == {
            "points": ["island_points", "royal_island_points"],
            "tiebreaks": ["islands", "boats"],
        }


def test_the_guests_note_fits_the_game_state(client: FlaskClient, host: Host) -> None:
    guest = client.application.test_client()

    def shown(page: str, span: str) -> bool:
        at = page.index(f'id="{span}"')
        return "hidden" not in page[at : page.index(">", at)]

    page = guest.get("/games").get_data(as_text=True)
    assert shown(page, "note-start") and not shown(page, "note-playing")
    assert host.post("/api/games/new", TONGIAKI).status_code == 200
    page = guest.get("/games").get_data(as_text=True)
    assert not shown(page, "note-start") and shown(page, "note-playing")
    assert not shown(page, "note-over")
    board: BoardSession = client.application.extensions["companion_games"]["board"]
    rng = random.Random(3)
    while board.game is not None and not board.game.over:
        board.play(rng.randrange(len(board.game.legal_actions())))
    page = guest.get("/games").get_data(as_text=True)
    assert shown(page, "note-over") and not shown(page, "note-start")


def test_the_count_is_the_hosts_and_guests_read_it(
    client: FlaskClient, host: Host, tmp_path: Path
) -> None:
    guest = client.application.test_client()
    response = guest.post("/api/games/tongiaki/count", json=FIVE)
    assert response.status_code == 401
    assert guest.get("/api/games/tongiaki/count").get_json()["score"] is None
    response = host.post("/api/games/tongiaki/count", FIVE)
    assert response.status_code == 200, response.get_json()
    score = response.get_json()["score"]
    assert score == file_score(tmp_path, FIVE)
    assert score["over"] is True and score["winners"] == ["Blue"]
    assert [p["total"] for p in score["players"]] == [14, 14, 14, 11, 11]
    read = guest.get("/api/games/tongiaki/count").get_json()
    assert read["score"] == score and read["count"] == FIVE and read["you"] == {"host": False}
    page = guest.get("/games/tongiaki/count").get_data(as_text=True)
    assert "Guests read the count here" in page


@pytest.mark.parametrize(
    ("islands", "problem"),
    [
        ([{"value": 5, "boats": {"Ana": 16}}], "Island 1's boats of Ana must be a whole number"),
        ([{"value": 7}], "Island 1's value must be 2 to 5 points"),
        ([{"value": 0, "royal": "Ana"}], "Island 1 is Tonga (worth 0): it cannot be royal."),
        ([{"value": 3, "boat": {"Ana": 1}}], "Island 1 has no key 'boat'"),
    ],
)
def test_a_count_the_box_cannot_hold_is_one_sentence(
    host: Host, islands: list[dict[str, Any]], problem: str
) -> None:
    before = host.client.get("/api/games/tongiaki/count").get_json()["version"]
    response = host.post(
        "/api/games/tongiaki/count", {"players": ["Ana", "Bo"], "islands": islands}
    )
    assert response.status_code == 400
    message = response.get_json()["error"]
    assert message.startswith(problem) and message.endswith(".") and "\n" not in message
    assert host.client.get("/api/games/tongiaki/count").get_json()["version"] == before


def test_the_count_is_kept_beside_the_board_games_journal(tmp_path: Path) -> None:
    def app_in(directory: Path) -> Any:
        board = BoardSession(board_journal(directory))
        return create_app(Session(), web_settings(), board=board)

    app = app_in(tmp_path)
    host = log_in(app.test_client())
    assert host.post("/api/games/tongiaki/count", FIVE).status_code == 200
    saved = tmp_path / "board-games" / COUNT_FILE
    assert json.loads(saved.read_text("utf-8")) == FIVE
    again = app_in(tmp_path).test_client().get("/api/games/tongiaki/count").get_json()
    assert again["count"] == FIVE and again["score"]["players"][0]["name"] == "Red"


def test_the_count_page_offers_the_running_games_players(host: Host) -> None:
    assert host.post("/api/games/new", TONGIAKI).status_code == 200
    state = host.client.get("/api/games/tongiaki/count").get_json()
    assert state["players"] == ["Ana", "Ben"]
    assert state["box"]["values"] == {"0": 1, "2": 3, "3": 4, "4": 5, "5": 3}
    assert state["box"]["boats"] == 15 and state["box"]["royal"] == 2
