"""The pages and the JSON API: what a phone shows and what the host's taps do."""

from __future__ import annotations

import errno
import json
import os
import re
from pathlib import Path
from typing import Any

import pytest
from flask.testing import FlaskClient

from companion.actions import Pass, TakeToBoard, Turn
from companion.errors import IllegalMove
from companion.game import Seat
from companion.journal import Journal
from companion.reading import UNKNOWN
from companion.session import Session
from tests.companion.conftest import PLAIN_DISPLAY
from tests.companion.test_tracker import with_cell
from tests.web.conftest import PIN, Host, log_in, table_after, web_settings
from web.app import SECURITY_HEADERS, create_app

#: Every route that changes something, with a body that would be accepted from the host.
CHANGE_ROUTES: list[tuple[str, dict[str, Any]]] = [
    ("/api/turn", {"steps": 1, "action": {"type": "pass"}}),
    ("/api/preview", {"steps": 1, "action": {"type": "pass"}}),
    ("/api/undo", {}),
    ("/api/confirm", {"index": 0}),
    ("/api/dismiss", {}),
    ("/api/correct", {"area": "display", "row": 0, "col": 0, "cell": {"empty": True}}),
    (
        "/api/game",
        {"players": [{"name": "A", "seat": 1}, {"name": "B", "seat": 2}]},
    ),
    ("/api/logout", {}),
    ("/api/camera/settle", {}),
]


def initial_state(html: str) -> dict[str, Any]:
    match = re.search(r'<script id="initial-state" type="application/json">(.*?)</script>', html)
    assert match is not None
    data: dict[str, Any] = json.loads(match.group(1))
    return data


# ---------------------------------------------------------------------- pages


def test_the_table_page_carries_the_state_and_its_scripts(client: FlaskClient) -> None:
    response = client.get("/")
    assert response.status_code == 200
    html = response.get_data(as_text=True)
    assert initial_state(html)["game"]["players"][0]["name"] == "Red"
    assert '<script src="/static/app.js" defer>' in html
    assert 'id="display"' in html and 'id="log"' in html and 'id="snapshot"' in html
    assert "host.js" not in html  # guests get no host screens
    assert "Set-Cookie" not in response.headers  # and no session


def test_the_host_page_has_login_qr_and_token(client: FlaskClient) -> None:
    html = client.get("/host").get_data(as_text=True)
    assert 'id="login-form"' in html and "host.js" in html
    assert '<meta name="csrf-token"' in html
    assert '<svg width="' in html and 'class="segno"' in html  # the inline QR code
    assert "http://localhost/" in html  # what the QR code says
    assert PIN not in html


def test_static_files_are_served_from_the_app(client: FlaskClient) -> None:
    for name in ("app.js", "host.js", "style.css", "icon.svg"):
        assert client.get(f"/static/{name}").status_code == 200


def test_an_unknown_page_is_a_small_html_page(client: FlaskClient) -> None:
    response = client.get("/nowhere")
    assert response.status_code == 404
    assert "There is nothing at this address." in response.get_data(as_text=True)


# ---------------------------------------------------------------------- state


def test_the_state_is_the_sessions_view_plus_who_you_are(
    client: FlaskClient, session: Session
) -> None:
    state = client.get("/api/state").get_json()
    view = session.view()
    for key in ("version", "phase", "status", "camera", "log", "question", "game", "tiles"):
        assert state[key] == view[key]
    assert state["you"] == {"host": False}  # no token for guests
    assert state["web"]["colours"]["red"].startswith("#")
    game = state["game"]
    assert game["to_move"] == 0 and game["players"][0]["to_move"] is True
    assert {"position", "steps", "move_cost", "takes"} <= set(game["reach"][0])
    assert set(state["tiles"]) == {t.id for t in session.catalogue}


def test_state_responses_are_never_cached(client: FlaskClient) -> None:
    assert client.get("/api/state").headers["Cache-Control"] == "no-store"


# ---------------------------------------------------------------------- guests


@pytest.mark.parametrize(("route", "body"), CHANGE_ROUTES)
def test_guests_cannot_change_anything(
    client: FlaskClient, session: Session, route: str, body: dict[str, Any]
) -> None:
    before = session.version
    response = client.post(route, json=body)
    assert response.status_code == 401
    assert response.get_json() == {"error": "Log in as the host first."}
    assert session.version == before


def test_changes_are_post_only(host: Host) -> None:
    response = host.client.get("/api/undo")
    assert response.status_code == 405
    assert "error" in response.get_json()


def test_an_unknown_api_address_is_json_404(client: FlaskClient) -> None:
    response = client.get("/api/nothing")
    assert response.status_code == 404
    assert response.is_json and response.get_json()["error"]


# ---------------------------------------------------------------------- turns


def test_a_turn_by_taps_is_recorded_and_logged(host: Host, session: Session) -> None:
    preview = host.post(
        "/api/preview",
        {"steps": 1, "action": {"type": "take_to_board", "slot": [0, 0], "cell": [1, 1]}},
    ).get_json()
    assert preview["cost"] == 0 and preview["rotations"] == [0, 90, 180, 270]
    assert preview["text"].startswith("Red moved the ship 1 step, took water")
    assert session.game is not None and session.game.records == []  # a preview changes nothing
    response = host.post(
        "/api/turn",
        {"steps": 1, "action": {"type": "take_to_board", "slot": [0, 0], "cell": [1, 1]}},
    )
    assert response.status_code == 200
    state = host.state()
    assert state["log"][-1]["kind"] == "turn"
    assert state["log"][-1]["text"] == response.get_json()["text"]
    assert state["game"]["players"][0]["board"][1][1] == {"tile": "water", "rotation": 0}
    assert state["game"]["to_move"] == 1


def test_a_palm_tile_may_only_lie_upright(host: Host) -> None:
    # Column 3 holds palm tiles; from position 2 the ship looks down it.
    turn = {
        "steps": 3,
        "action": {"type": "take_to_board", "slot": [0, 2], "cell": [0, 0], "rotation": 90},
    }
    preview = host.post("/api/preview", turn).get_json()
    assert preview["rotations"] == [0]
    assert preview["turn"]["action"]["rotation"] == 0  # shown as it may lie


def test_an_illegal_turn_is_409_with_the_rules_sentence(host: Host, session: Session) -> None:
    turn = Turn(1, TakeToBoard((0, 3), (0, 0)))  # not in the line the ship looks along
    assert session.game is not None
    with pytest.raises(IllegalMove) as refused:
        session.game.check(turn)
    response = host.post("/api/turn", turn.to_json())
    assert response.status_code == 409
    assert response.get_json() == {"error": refused.value.message}
    assert refused.value.message.startswith("The ship stands beside")
    assert session.game.records == []


def test_malformed_requests_are_400_with_one_sentence(host: Host) -> None:
    bad_json = host.client.post("/api/turn", data="{steps: 1", headers={"X-CSRF-Token": host.token})
    assert bad_json.status_code == 400
    assert bad_json.get_json() == {"error": "The request body is not valid JSON."}
    not_object = host.client.post("/api/turn", data="[1, 2]", headers={"X-CSRF-Token": host.token})
    assert not_object.status_code == 400
    steps = host.post("/api/turn", {"steps": "one"})
    assert steps.status_code == 400
    assert steps.get_json() == {"error": "A turn needs the ship's steps as a whole number."}
    action = host.post("/api/turn", {"steps": 1, "action": {"type": "fly"}})
    assert action.status_code == 400 and "Unknown action" in action.get_json()["error"]


def test_an_unexpected_failure_is_json_without_a_traceback(
    host: Host, session: Session, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken() -> None:
        raise RuntimeError("internal detail nobody should see")

    monkeypatch.setattr(session, "undo", broken)
    response = host.post("/api/undo")
    assert response.status_code == 500
    body = response.get_data(as_text=True)
    assert "internal detail" not in body and "Traceback" not in body
    assert response.get_json()["error"].startswith("Something went wrong")


def test_undo_takes_back_the_last_turn(host: Host, session: Session) -> None:
    host.post("/api/turn", {"steps": 2, "action": {"type": "pass"}})
    response = host.post("/api/undo")
    assert response.status_code == 200
    assert response.get_json()["text"].startswith("Undone: Red moved the ship 2 steps")
    assert session.game is not None and session.game.records == []
    assert host.post("/api/undo").status_code == 409  # nothing left to undo


def test_the_host_answers_a_question(host: Host, session: Session) -> None:
    turn = Turn(1, TakeToBoard((0, 0), (2, 2), 90), drawn="middle-boat")
    session.observe(with_cell(table_after(session, turn), 1, (2, 2), UNKNOWN))
    question = host.state()["question"]
    assert question["reason"] and len(question["choices"]) > 1
    assert all(choice["text"] for choice in question["choices"])
    index = next(i for i, c in enumerate(question["choices"]) if c["action"]["rotation"] == 90)
    assert host.post("/api/confirm", {"index": "first"}).status_code == 400
    assert host.post("/api/confirm", {"index": 99}).status_code == 409
    assert host.post("/api/confirm", {"index": index}).status_code == 200
    assert session.game is not None and session.game.records[-1].turn == turn
    assert host.state()["question"] is None


def test_the_host_dismisses_a_question(host: Host, session: Session) -> None:
    turn = Turn(1, TakeToBoard((0, 0), (2, 2), 90), drawn="middle-boat")
    session.observe(with_cell(table_after(session, turn), 1, (2, 2), UNKNOWN))
    assert host.post("/api/dismiss").status_code == 200
    state = host.state()
    assert state["question"] is None and state["phase"] == "playing"


def test_the_host_corrects_a_cell_and_the_read_is_judged_again(
    host: Host, session: Session
) -> None:
    turn = Turn(1, TakeToBoard((0, 0), (2, 2), 90), drawn="middle-boat")
    session.observe(with_cell(table_after(session, turn), 1, (2, 2), UNKNOWN))
    response = host.post(
        "/api/correct",
        {"area": 1, "row": 2, "col": 2, "cell": {"tile": "water", "rotation": 90}},
    )
    assert response.status_code == 200
    assert response.get_json()["verdict"] == "accepted"
    assert session.game is not None and session.game.records[-1].turn == turn
    unknown_tile = host.post(
        "/api/correct", {"area": 1, "row": 2, "col": 2, "cell": {"tile": "dragon"}}
    )
    assert unknown_tile.status_code == 400
    assert unknown_tile.get_json() == {"error": "There is no tile 'dragon' in this box."}


# ---------------------------------------------------------------------- new games


def test_the_host_starts_a_new_game(host: Host, session: Session) -> None:
    body = {
        "players": [
            {"name": "Aroha", "seat": 1, "colour": "green"},
            {"name": "Tama", "seat": 3},
            {"name": "Mere", "seat": 4, "colour": "#123456"},
        ],
        "start_player": 2,
        "ship": 6,
        "variant": "advanced",
        "side": "atoll",
        "matching": "strict",
    }
    assert host.post("/api/game", body).status_code == 200
    game = host.state()["game"]
    assert [p["name"] for p in game["players"]] == ["Aroha", "Tama", "Mere"]
    assert [p["colour"] for p in game["players"]] == ["green", "red", "#123456"]
    assert (game["variant"], game["side"], game["matching"], game["ship"]) == (
        "advanced",
        "atoll",
        "strict",
        6,
    )
    assert game["to_move"] == 0  # the player left of the start player begins


def test_a_new_game_the_rules_forbid_is_409(host: Host) -> None:
    one = host.post("/api/game", {"players": [{"name": "Solo", "seat": 1}]})
    assert one.status_code == 409
    assert one.get_json() == {"error": "Māori is played by 2 to 5 players, not 1."}
    same_seat = host.post(
        "/api/game", {"players": [{"name": "A", "seat": 2}, {"name": "B", "seat": 2}]}
    )
    assert same_seat.get_json() == {"error": "Each player needs a different seat from 1 to 5."}
    colour = host.post(
        "/api/game",
        {"players": [{"name": "A", "seat": 1, "colour": "mauve"}, {"name": "B", "seat": 2}]},
    )
    assert colour.status_code == 400


def test_a_new_game_can_use_the_display_the_camera_sees(host: Host, session: Session) -> None:
    body = {
        "players": [{"name": "A", "seat": 1}, {"name": "B", "seat": 2}],
        "use_camera": True,
    }
    fresh = Session()
    app = create_app(fresh, web_settings())
    other = log_in(app.test_client())
    response = other.post("/api/game", body)
    assert response.status_code == 409
    assert "has not read the table" in response.get_json()["error"]
    read = table_after(session, Turn(1, Pass()))
    fresh.observe(read)  # in setup a read is kept for this screen
    assert other.post("/api/game", body).status_code == 200
    assert fresh.game is not None
    assert fresh.game.state.display == [
        [c.tile if c else None for c in row] for row in read.display
    ]


# ---------------------------------------------------------------------- a whole game


def tap_a_turn(host: Host, state: dict[str, Any]) -> dict[str, Any]:
    """What a host does by taps: the cheapest takeable tile onto the first empty field,
    in the first rotation allowed; or pass."""
    game = state["game"]
    mover = game["players"][game["to_move"]]
    empty = [
        [r, c] for r, row in enumerate(mover["board"]) for c, cell in enumerate(row) if cell is None
    ]
    takes = [
        (take["cost"], reach["steps"], take["slot"])
        for reach in game["reach"]
        for take in reach["takes"]
    ]
    if takes and empty:
        _, steps, slot = min(takes)
        turn = {"steps": steps, "action": {"type": "take_to_board", "slot": slot, "cell": empty[0]}}
        preview = host.post("/api/preview", turn)
        assert preview.status_code == 200, preview.get_json()
        turn["action"]["rotation"] = preview.get_json()["rotations"][0]
        return turn
    return {"steps": game["reach"][0]["steps"], "action": {"type": "pass"}}


def test_a_whole_game_played_by_taps_ends_with_the_final_breakdown(host: Host) -> None:
    state = host.state()
    turns = 0
    while state["phase"] != "over":
        response = host.post("/api/turn", tap_a_turn(host, state))
        assert response.status_code == 200, response.get_json()
        state = host.state()
        turns += 1
        assert turns < 200
    game = state["game"]
    assert game["over"] and game["to_move"] is None and game["reach"] == []
    assert game["winners"]
    rows = ("palms_no_hut", "palms_hut", "leis", "boats", "shells", "empty", "total")
    for player in game["players"]:
        score = player["score"]
        assert all(isinstance(score[row], int) for row in rows)
        assert score["total"] == sum(score[row] for row in rows[:-1])
    best = max(p["score"]["total"] for p in game["players"])
    assert all(p["score"]["total"] == best for p in game["players"] if p["name"] in game["winners"])
    assert state["log"][-1]["text"].startswith("The game is over.")
    assert host.post("/api/turn", {"steps": 1}).status_code == 409  # no more turns
    page = initial_state(host.client.get("/").get_data(as_text=True))
    assert page["phase"] == "over" and page["game"]["winners"] == game["winners"]


def test_in_the_advanced_game_the_player_ship_path_is_worked_out(
    host: Host, session: Session
) -> None:
    session.start_game(
        [Seat("A", 1), Seat("B", 2)],
        start_player=1,
        variant="advanced",
        display=PLAIN_DISPLAY,
        seed=5,
    )

    def lay(cell: list[int]) -> Any:
        game = host.state()["game"]
        reach = next(r for r in game["reach"] if r["takes"])
        take = min(reach["takes"], key=lambda t: t["cost"])
        turn = {
            "steps": reach["steps"],
            "action": {"type": "take_to_board", "slot": take["slot"], "cell": cell},
            "ship_path": "auto",
        }
        turn["action"]["rotation"] = host.post("/api/preview", turn).get_json()["rotations"][0]
        return host.post("/api/turn", turn)

    assert lay([0, 0]).status_code == 200  # A's first tile carries A's ship
    assert lay([3, 3]).status_code == 200  # B
    assert lay([1, 1]).status_code == 200  # A: next to the ship, nothing to pay
    assert lay([3, 2]).status_code == 200  # B
    response = lay([2, 2])  # A: not next to the ship on (0, 0) -> one paid step to (1, 1)
    assert response.status_code == 200, response.get_json()
    assert "moved their own ship 1 step for shells" in response.get_json()["text"]
    assert host.state()["game"]["players"][0]["ship"] == [1, 1]


# ---------------------------------------------------------------------- camera and QR


def test_the_snapshot_is_the_latest_camera_picture(client: FlaskClient, session: Session) -> None:
    assert client.get("/snapshot.jpg").status_code == 404
    session.set_camera("ok", "Camera ready.", snapshot=b"\xff\xd8 a jpeg")
    response = client.get("/snapshot.jpg")
    assert response.status_code == 200 and response.mimetype == "image/jpeg"
    assert response.data == b"\xff\xd8 a jpeg"
    assert response.headers["Cache-Control"] == "no-store"


def test_the_qr_code_is_a_png_of_the_table_address(client: FlaskClient) -> None:
    response = client.get("/qr.png")
    assert response.status_code == 200 and response.mimetype == "image/png"
    assert response.data.startswith(b"\x89PNG")


def test_the_public_address_setting_goes_into_the_qr_code(session: Session) -> None:
    app = create_app(session, web_settings(public_url="http://maori.local:8080/"))
    assert "http://maori.local:8080/" in app.test_client().get("/host").get_data(as_text=True)


# ---------------------------------------------------------------------- headers


@pytest.mark.parametrize(
    "path", ["/", "/host", "/api/state", "/static/app.js", "/nowhere", "/api/nothing", "/qr.png"]
)
def test_every_response_carries_the_security_headers(client: FlaskClient, path: str) -> None:
    response = client.get(path)
    for key, value in SECURITY_HEADERS.items():
        assert response.headers[key] == value
    csp = response.headers["Content-Security-Policy"]
    assert "default-src 'self'" in csp and "frame-ancestors 'none'" in csp
    assert "unsafe-inline" not in csp and "http" not in csp


def test_errors_carry_the_security_headers_too(client: FlaskClient) -> None:
    response = client.post("/api/undo")
    assert response.status_code == 401
    assert response.headers["X-Frame-Options"] == "DENY"
    assert response.headers["X-Content-Type-Options"] == "nosniff"
    assert response.headers["Referrer-Policy"] == "no-referrer"


def test_pages_load_nothing_from_elsewhere(client: FlaskClient) -> None:
    for path in ("/", "/host"):
        html = client.get(path).get_data(as_text=True)
        assert not re.search(r'(src|href)="(https?:)?//', html)
    for name in ("app.js", "host.js", "style.css"):
        text = client.get(f"/static/{name}").get_data(as_text=True)
        assert not re.search(r"https?://(?!www\.w3\.org/2000/svg)", text)


def test_a_started_session_is_not_needed_to_show_the_pages() -> None:
    session = Session()
    client = create_app(session, web_settings()).test_client()
    assert client.get("/").status_code == 200
    assert client.get("/api/state").get_json()["game"] is None
    host = log_in(client)
    body = {"players": [{"name": "A", "seat": 1}, {"name": "B", "seat": 2}]}
    assert host.post("/api/game", body).status_code == 200
    assert session.game is not None and [p.name for p in session.game.state.players] == ["A", "B"]


# ---------------------------------------------------------------------- the saved game


def journalled(tmp_path: Path) -> Session:
    session = Session(journal=Journal(tmp_path), clock=lambda: 1000.0)
    session.start_game([Seat("Red", 1, "red"), Seat("Blue", 2, "blue")], display=PLAIN_DISPLAY)
    return session


def test_a_turn_the_disk_cannot_take_is_503_and_changes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    session = journalled(tmp_path)
    session.play(Turn(1, Pass()))
    host = log_in(create_app(session, web_settings()).test_client())
    before = host.state()

    def full(*events: object) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(session.journal, "append", full)
    for route, body in [("/api/turn", {"steps": 1, "action": {"type": "pass"}}), ("/api/undo", {})]:
        response = host.post(route, body)
        assert response.status_code == 503, route
        assert response.get_json() == {"error": "The game could not be saved: the disk is full."}
    after = host.state()
    assert after["unsaved"] == "The game could not be saved: the disk is full."
    assert 'id="unsaved"' in host.client.get("/host").get_data(as_text=True)
    same = {"version", "unsaved"}  # the pages are woken to say so; nothing else changed
    assert {k: v for k, v in after.items() if k not in same} == {
        k: v for k, v in before.items() if k not in same
    }
    assert "The game could not be saved: the disk is full." in caplog.text


def test_the_host_chooses_between_the_last_good_turn_and_a_new_game(tmp_path: Path) -> None:
    saved = journalled(tmp_path)
    saved.play(Turn(1, Pass()))
    path = Journal(tmp_path).current_path()
    assert path is not None
    with path.open("ab") as fh:
        fh.write(b"not an event\n")
    session = Session.resume(Journal(tmp_path))
    client = create_app(session, web_settings()).test_client()
    damage = client.get("/api/state").get_json()["damage"]
    assert damage["problem"] == f"line 5 of {path.name} is damaged"
    assert damage["turn_number"] == 1 and damage["kept"].startswith(f"{path.name}.damaged-")
    html = client.get("/host").get_data(as_text=True)
    assert 'id="damage"' in html and initial_state(html)["damage"] == damage
    assert client.post("/api/resume").status_code == 401  # guests only read
    host = log_in(client)
    response = host.post("/api/resume")
    assert response.status_code == 200
    state = host.state()
    assert state["damage"] is None and state["game"]["turn_number"] == 1
    assert host.post("/api/resume").status_code == 409  # nothing left to choose


def test_after_damage_the_host_may_start_a_new_game_instead(tmp_path: Path) -> None:
    journalled(tmp_path)
    path = Journal(tmp_path).current_path()
    assert path is not None
    path.write_bytes(b"")
    session = Session.resume(Journal(tmp_path))
    host = log_in(create_app(session, web_settings()).test_client())
    assert host.state()["damage"]["turn_number"] is None
    response = host.post("/api/resume")
    assert response.status_code == 409 and "start a new game" in response.get_json()["error"]
    new = {"players": [{"name": "A", "seat": 1}, {"name": "B", "seat": 2}]}
    assert host.post("/api/game", new).status_code == 200
    assert host.state()["damage"] is None and host.state()["game"] is not None


# ---------------------------------------------------------------------- the camera's setting


class SetCamera:
    """A camera set for the table, as the app sees it: counts what it is asked."""

    def __init__(self) -> None:
        self.settles = 0
        self.refocuses = 0

    def request_settle(self) -> None:
        self.settles += 1

    def refocus(self) -> None:
        self.refocuses += 1

    def describe(self) -> str:
        return "Focus locked at lens position 2.50. Exposure and white balance locked."


def test_the_host_page_shows_the_camera_setting_and_settles_it_again(
    session: Session, tmp_path: Path
) -> None:
    camera = SetCamera()
    app = create_app(
        session,
        web_settings(),
        camera=camera,
        teach_frames=lambda: None,
        teach_root=tmp_path,
    )
    client = app.test_client()
    page = client.get("/host").get_data(as_text=True)
    assert "Focus locked at lens position 2.50." in page
    assert 'id="camera-settle"' in page
    assert client.post("/api/camera/settle", json={}).status_code == 401
    assert camera.settles == 0
    host = log_in(client)
    assert host.state()["web"]["camera_setting"] == camera.describe()
    response = host.post("/api/camera/settle")
    assert response.status_code == 200
    assert "next still moment between turns" in response.get_json()["text"]
    assert camera.settles == 1
    assert camera.refocuses == 0
    assert host.post("/api/teach/start", {"name": "my box"}).status_code == 200
    assert camera.refocuses == 1  # one autofocus cycle when teaching starts


def test_without_a_camera_set_for_the_table_there_is_nothing_to_settle(host: Host) -> None:
    assert host.state()["web"]["camera_setting"] is None
    response = host.post("/api/camera/settle")
    assert response.status_code == 409
    assert response.get_json() == {"error": "This camera's exposure is not set by the companion."}
