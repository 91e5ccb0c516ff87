"""Tongiaki and Giants on the phones: guests read the desk, the host starts, plays and undoes."""

from __future__ import annotations

import errno
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from flask.testing import FlaskClient

from companion.games import game_class
from companion.games.session import BOARD_DIR, BoardSession, board_journal, resume_board
from companion.journal import Journal
from companion.session import Session
from tests.web.conftest import Host, log_in, web_settings
from tests.web.test_sse import state_version
from web.api import games as games_api
from web.app import create_app
from web.sse import StreamSlots

TONGIAKI = {"game": "tongiaki", "names": ["Ana", "Ben"], "seed": 5}
GIANTS = {"game": "giants", "names": ["Ana", "Ben", "Cy"], "seed": 1}


def game_of(host: Host) -> dict[str, Any]:
    state: dict[str, Any] = host.client.get("/api/games/state").get_json()
    game: dict[str, Any] = state["game"]
    return game


def one_sentence(response: Any) -> str:
    message: str = response.get_json()["error"]
    assert message.endswith(".") and "\n" not in message
    return message


def test_a_guest_reads_but_cannot_change_the_desk(client: FlaskClient, host: Host) -> None:
    guest = client.application.test_client()
    assert guest.post("/api/games/new", json=TONGIAKI).status_code == 401
    assert host.post("/api/games/new", TONGIAKI).status_code == 200
    for url, body in [
        ("/api/games/action", {"index": 0}),
        ("/api/games/undo", {}),
        ("/api/games/new", GIANTS),
    ]:
        response = guest.post(url, json=body)
        assert response.status_code == 401, url
        assert one_sentence(response) == "Log in as the host first."
    state = guest.get("/api/games/state").get_json()
    assert state["you"] == {"host": False}
    assert state["game"]["key"] == "tongiaki"
    assert "actions" not in state["game"]  # the move buttons are the host's
    assert state["game"]["to_move"] == "Ana"
    page = guest.get("/games").get_data(as_text=True)
    assert "The camera is not needed for Tongiaki and Giants" in page


def test_the_host_plays_a_tongiaki_action_by_its_index(host: Host) -> None:
    assert host.post("/api/games/new", TONGIAKI).status_code == 200
    before = host.client.get("/api/games/state").get_json()
    game = before["game"]
    assert game["phase"] == game_class("tongiaki").new(["Ana", "Ben"], 5).phase()
    assert game["view"]["map"] and game["score"]["players"][0]["name"] == "Ana"
    first = game["actions"][0]
    assert first["label"] and first["action"]["type"] == "place"
    response = host.post("/api/games/action", {"index": 0, "version": before["version"]})
    assert response.status_code == 200, response.get_json()
    assert response.get_json()["text"] == first["label"]
    after = host.client.get("/api/games/state").get_json()
    assert after["version"] == before["version"] + 1
    expected = game_class("tongiaki").new(["Ana", "Ben"], 5)
    expected.push(expected.legal_actions()[0])
    assert after["game"]["view"] == expected.view()


def test_the_host_plays_a_giants_action_by_its_json(host: Host) -> None:
    assert host.post("/api/games/new", GIANTS).status_code == 200
    game = game_of(host)
    assert game["view"]["phase"] == "roll"
    roll = game["actions"][0]["action"]
    response = host.post("/api/games/action", {"action": roll})
    assert response.status_code == 200, response.get_json()
    game = game_of(host)
    assert game["view"]["phase"] == "bid"
    assert game["view"]["quarry"]["dice"] == roll["dice"]
    assert len(game["view"]["island"]["ahus"]) > 0


def test_an_illegal_action_is_refused_with_one_sentence(host: Host) -> None:
    host.post("/api/games/new", TONGIAKI)
    before = game_of(host)
    response = host.post("/api/games/action", {"action": {"type": "royal", "island": "nowhere"}})
    assert response.status_code == 409
    one_sentence(response)
    stale = host.post("/api/games/action", {"index": 0, "version": 999})
    assert stale.status_code == 409
    assert one_sentence(stale) == "The game changed since this page was drawn: look again."
    assert host.post("/api/games/action", {"index": 10_000}).status_code == 409
    assert game_of(host) == before


def test_undo_takes_back_the_last_action(host: Host) -> None:
    host.post("/api/games/new", GIANTS)
    start = game_of(host)
    assert start["can_undo"] is False
    assert host.post("/api/games/undo").status_code == 409  # nothing to take back yet
    host.post("/api/games/action", {"index": 3})
    assert game_of(host)["view"]["phase"] == "bid"
    response = host.post("/api/games/undo")
    assert response.status_code == 200
    assert response.get_json()["text"].startswith("Undone: Ana: the dice show ")
    assert game_of(host) == start


@pytest.mark.parametrize(
    ("url", "body"),
    [
        ("/api/games/action", "{not json"),
        ("/api/games/action", "[1, 2]"),
        ("/api/games/new", "nothing"),
    ],
)
def test_a_body_that_is_not_a_json_object_gets_400(host: Host, url: str, body: str) -> None:
    host.post("/api/games/new", TONGIAKI)
    response = host.client.post(
        url,
        data=body,
        content_type="application/json",
        headers={"X-CSRF-Token": host.token},
    )
    assert response.status_code == 400
    one_sentence(response)


@pytest.mark.parametrize(
    ("url", "body", "message"),
    [
        ("/api/games/action", {"action": {"type": "fly"}}, "'fly' is not a Tongiaki move."),
        ("/api/games/action", {}, "Send either index (of the legal actions) or action (its JSON)."),
        ("/api/games/action", {"index": "1"}, "index must be the number of a legal action."),
        (
            "/api/games/new",
            {"game": "chess", "names": ["A", "B"]},
            "game must be giants or tongiaki.",
        ),
        (
            "/api/games/new",
            {"game": "giants", "names": ["A", "B"]},
            "Giants is played by 3 to 5 players, not 2.",
        ),
        (
            "/api/games/new",
            {"game": "tongiaki", "names": ["A", "a"]},
            "Two players have the same name.",
        ),
        (
            "/api/games/new",
            {"game": "tongiaki", "names": ["A", "B"], "seed": -1},
            "seed must be a whole number from 0.",
        ),
    ],
)
def test_a_malformed_request_gets_400_and_changes_nothing(
    host: Host, url: str, body: dict[str, Any], message: str
) -> None:
    host.post("/api/games/new", TONGIAKI)
    before = game_of(host)
    response = host.post(url, body)
    assert response.status_code == 400
    assert one_sentence(response) == message
    assert game_of(host) == before


def test_nothing_to_play_before_a_game_is_started(host: Host) -> None:
    assert host.client.get("/api/games/state").get_json()["game"] is None
    response = host.post("/api/games/action", {"index": 0})
    assert response.status_code == 409
    assert one_sentence(response) == "No board game is being played: start one first."


def journaled_app(directory: Path) -> Any:
    return create_app(
        Session(journal=Journal(directory)), web_settings(), board=resume_board(directory)
    )


def test_the_game_is_kept_in_the_journal_and_taken_up_again(tmp_path: Path) -> None:
    host = log_in(journaled_app(tmp_path).test_client())
    host.post("/api/games/new", TONGIAKI)
    host.post("/api/games/action", {"index": 0})
    path = board_journal(tmp_path).current_path()
    assert path is not None and path.parent == tmp_path / BOARD_DIR
    lines = [json.loads(line) for line in path.read_text("utf-8").splitlines()]
    assert [e["type"] for e in lines] == ["setup", "action"] and lines[0]["game"] == "tongiaki"
    before = game_of(host)
    again = log_in(journaled_app(tmp_path).test_client())
    assert game_of(again) == before
    # The Māori game's journal is the state directory's own, untouched by the board game.
    assert Journal(tmp_path).current_path() is None


def test_a_change_that_cannot_be_kept_is_503_and_not_made(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    host = log_in(journaled_app(tmp_path).test_client())
    host.post("/api/games/new", TONGIAKI)
    host.post("/api/games/action", {"index": 0})
    before = game_of(host)
    path = board_journal(tmp_path).current_path()
    assert path is not None
    kept = path.read_bytes()

    def full_disk(fd: int, data: bytes | memoryview) -> int:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "write", full_disk)
    for url, body, what in [
        ("/api/games/action", {"index": 0}, "The board game"),
        ("/api/games/undo", {}, "The board game"),
        ("/api/games/new", GIANTS, "The new game"),
    ]:
        response = host.post(url, body)
        assert response.status_code == 503, url
        assert one_sentence(response) == f"{what} could not be saved: the disk is full."
        assert game_of(host) == before
        state = host.client.get("/api/games/state").get_json()
        assert state["unsaved"] == f"{what} could not be saved: the disk is full."
    assert path.read_bytes() == kept
    assert board_journal(tmp_path).current_path() == path


def test_a_damaged_game_is_kept_aside_and_the_host_goes_on_after_the_last_good_move(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    host = log_in(journaled_app(tmp_path).test_client())
    host.post("/api/games/new", GIANTS)
    for _ in range(2):
        host.post("/api/games/action", {"index": 0})
    after_two = game_of(host)
    host.post("/api/games/action", {"index": 0})
    host.post("/api/games/undo")
    host.post("/api/games/action", {"index": 0})
    path = board_journal(tmp_path).current_path()
    assert path is not None
    lines = path.read_bytes().splitlines(keepends=True)
    lines[3] = b"not an event\n"  # the third action
    path.write_bytes(b"".join(lines))
    app = journaled_app(tmp_path)
    guest = app.test_client()
    state = guest.get("/api/games/state").get_json()
    (copy,) = path.parent.glob(f"{path.name}.damaged-*")
    assert state["game"] is None
    assert state["damage"] == {
        "problem": f"line 4 of {path.name} is damaged",
        "kept": copy.name,
        "moves": 2,
    }
    assert "the saved board game is damaged" in caplog.text and copy.name in caplog.text
    assert guest.post("/api/games/resume").status_code == 401
    host = log_in(app.test_client())
    response = host.post("/api/games/resume")
    assert response.status_code == 200
    assert response.get_json()["text"] == "Giants goes on after move 2."
    game = game_of(host)
    assert game["view"] == after_two["view"] and game["actions"] == after_two["actions"]
    assert host.client.get("/api/games/state").get_json()["damage"] is None
    assert host.post("/api/games/resume").status_code == 409


def test_a_guest_gets_401_and_a_host_without_the_token_403(host: Host) -> None:
    host.post("/api/games/new", TONGIAKI)
    before = game_of(host)
    guest = host.client.application.test_client()
    guest.get("/games")  # a guest's page: it has a CSRF token, but no host login
    for url in ("/api/games/action", "/api/games/undo", "/api/games/resume", "/api/games/new"):
        body = TONGIAKI if url.endswith("new") else {"index": 0}
        assert guest.post(url, json=body).status_code == 401, url
        forged = host.client.post(url, json=body, headers={"X-CSRF-Token": "forged"})
        assert forged.status_code == 403, url
        assert one_sentence(forged) == (
            "The page's security token is missing or out of date: reload the page."
        )
    assert game_of(host) == before


def test_a_host_action_is_announced_on_the_games_event_stream(host: Host) -> None:
    app = host.client.application
    board: BoardSession = app.extensions[games_api.EXTENSION]["board"]
    slots: StreamSlots = app.extensions["companion_streams"]
    response = app.test_client().get("/games/events")
    assert response.status_code == 200 and response.mimetype == "text/event-stream"
    stream: Iterator[Any] = iter(response.response)
    assert next(stream) == b"retry: 2000\n\n"
    assert state_version(next(stream)) == board.version
    assert slots.count == 1
    host.post("/api/games/new", TONGIAKI)
    assert state_version(next(stream)) == board.version
    version = board.version
    assert host.post("/api/games/action", {"index": 0}).status_code == 200
    assert state_version(next(stream)) == version + 1 == board.version
    response.close()
    assert slots.count == 0 and board.subscriber_count == 0


def test_the_games_streams_count_against_the_same_cap_as_the_table_s(session: Session) -> None:
    app = create_app(session, web_settings(sse_max_clients=1))
    guest = app.test_client()
    first = guest.get("/events")
    assert first.status_code == 200
    refused = guest.get("/games/events")
    assert refused.status_code == 503 and refused.headers["Retry-After"] == "5"
    first.close()
    second = guest.get("/games/events")
    assert second.status_code == 200
    second.close()


def test_the_host_page_offers_the_other_games(host: Host) -> None:
    html = host.client.get("/host").get_data(as_text=True)
    assert 'action="/games"' in html
    assert '<option value="tongiaki">Tongiaki</option>' in html
    assert '<option value="giants">Giants</option>' in html


def test_the_games_page_offers_every_game_and_shares_the_pages_script(host: Host) -> None:
    html = host.client.get("/games").get_data(as_text=True)
    for key in ("tongiaki", "giants", "maori"):
        assert f'<option value="{key}">' in html
    assert html.index("/static/common.js") < html.index("/static/games.js")
    table = host.client.get("/").get_data(as_text=True)
    assert table.index("/static/common.js") < table.index("/static/app.js")


def test_a_page_that_shows_the_latest_version_gets_a_short_answer(host: Host) -> None:
    host.post("/api/games/new", TONGIAKI)
    version = host.client.get("/api/games/state").get_json()["version"]
    same = host.client.get(f"/api/games/state?since={version}").get_json()
    assert same == {"version": version, "unchanged": True, "you": {"host": True}}
    host.post("/api/games/action", {"index": 0})
    changed = host.client.get(f"/api/games/state?since={version}").get_json()
    assert changed["version"] == version + 1 and changed["game"]["key"] == "tongiaki"
