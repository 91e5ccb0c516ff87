"""Teaching a box from the phone: /api/teach driven with frames of a box the renderer draws."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest
from flask import Flask
from flask.testing import FlaskClient

from companion.catalogue import Catalogue, default_catalogue
from companion.session import Session
from tests.vision.box.test_teach import EMPTY_DISPLAY, _display, _lying, _render
from tests.web.chromium import need_browser
from tests.web.conftest import Host, log_in, served, web_settings
from tests.web.test_browser import CHROMIUM, CHROMIUM_ARGS, HAVE_PLAYWRIGHT, host_phone, shoot
from vision.box.pack import Pack, load_pack
from vision.synthetic.artpacks import write_art_pack
from vision.synthetic.scene import TableScene, empty_seat
from web.app import create_app

if HAVE_PLAYWRIGHT:
    from playwright.sync_api import APIResponse, Browser, Route, expect, sync_playwright

CHANGES = ("start", "look", "accept", "skip", "finish", "cancel")


@dataclasses.dataclass
class Frames:
    """The box, its frames (tiles swapped in b1/c1, the ship, an empty board) and the camera."""

    box: Pack
    tiles: np.ndarray
    ship: np.ndarray
    board: np.ndarray


class Camera:
    """What the table's camera shows next (None: no picture)."""

    def __init__(self) -> None:
        self.frame: np.ndarray | None = None

    def __call__(self) -> np.ndarray | None:
        return self.frame


@pytest.fixture(scope="module")
def frames(tmp_path_factory: pytest.TempPathFactory) -> Frames:
    catalogue = default_catalogue()
    subset: Catalogue = dataclasses.replace(catalogue, types=catalogue.types[::9][:3])
    root = tmp_path_factory.mktemp("box") / "box"
    box = load_pack(write_art_pack(root, "random", catalogue=subset, seed=5))
    ids = [t.id for t in box.catalogue]
    laid = {(0, 0): _lying(ids[0], 0), (0, 1): _lying(ids[2], 1), (0, 2): _lying(ids[1], 2)}
    seat = empty_seat(3, box.catalogue.board("front"), origin_mm=(0.0, 420.0), facing_deg=180.0)
    return Frames(
        box,
        _render(_display(laid), box, 1),
        _render(TableScene(EMPTY_DISPLAY, 2), box, 3),
        _render(TableScene(EMPTY_DISPLAY, None, seats=(seat,)), box, 4),
    )


@pytest.fixture
def camera() -> Camera:
    return Camera()


@pytest.fixture
def packs(tmp_path: Path) -> Path:
    return tmp_path / "packs"


@pytest.fixture
def kept() -> list[tuple[int, Path]]:
    """What the app handed to keep as lessons: (frames, the pack's folder) each time."""
    return []


@pytest.fixture
def app(frames: Frames, camera: Camera, packs: Path, kept: list[tuple[int, Path]]) -> Flask:
    session = Session(frames.box.catalogue, clock=lambda: 1000.0)
    return create_app(
        session,
        web_settings(),
        teach_frames=camera,
        teach_root=packs,
        keep_lessons=lambda frames, pack_dir: kept.append((len(frames), pack_dir)),
    )


@pytest.fixture
def client(app: Flask) -> FlaskClient:
    return app.test_client()


@pytest.fixture
def host(client: FlaskClient) -> Iterator[Host]:
    yield log_in(client)


def _ok(host: Host, action: str, body: dict[str, object] | None = None) -> dict[str, object]:
    response = host.post(f"/api/teach/{action}", body)
    assert response.status_code == 200, response.get_json()
    data: dict[str, object] = response.get_json()
    return data


def _refused(host: Host, action: str, body: dict[str, object] | None, status: int) -> str:
    response = host.post(f"/api/teach/{action}", body)
    assert response.status_code == status, response.get_json()
    error: str = response.get_json()["error"]
    assert error.endswith(".") and "\n" not in error
    return error


def _state(host: Host) -> dict[str, Any]:
    response = host.client.get("/api/teach/state")
    assert response.status_code == 200
    data: dict[str, Any] = response.get_json()
    return data


def _files(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*")) if root.exists() else []


def test_guests_cannot_teach_or_see_the_run(client: FlaskClient, host: Host) -> None:
    guest = Host(client.application.test_client(), "")
    for action in CHANGES:
        assert guest.client.post(f"/api/teach/{action}", json={}).status_code == 401
        # The host's own browser without the page's token is refused too.
        response = host.client.post(f"/api/teach/{action}", json={})
        assert response.status_code == 403
    assert guest.client.get("/api/teach/crop/0.png").status_code == 401
    assert _state(host) == {"available": True, "unavailable": None, "active": False}
    _ok(host, "start", {"name": "Secret box"})
    assert _state(guest) == {"available": True, "unavailable": None, "active": True}  # nothing more
    assert guest.client.post("/api/teach/cancel", json={}).status_code == 401
    assert _state(host)["name"] == "Secret box"


def test_a_whole_run_on_the_phone_writes_a_pack(
    host: Host, camera: Camera, frames: Frames, packs: Path, kept: list[tuple[int, Path]]
) -> None:
    ids = [t.id for t in frames.box.catalogue]
    _ok(host, "start", {"name": "Our box", "batch": 4})
    _refused(host, "start", {"name": "Again"}, 409)
    state = _state(host)
    assert state["progress"] == "batch 1: 0 of 3 tile types taught"
    step = state["step"]
    assert isinstance(step, dict) and step["kind"] == "tiles"
    assert [p["tile_id"] for p in step["plan"]] == ids
    assert len(state["types"]) == 3 and all(t["description"] for t in state["types"])

    camera.frame = frames.tiles
    _ok(host, "look")
    view = _state(host)["view"]
    assert isinstance(view, dict) and view["kind"] == "tiles"
    occupied = [c["name"] for c in view["cells"] if c["occupied"]]
    assert occupied == ["a1", "b1", "c1"]
    # Each cell says why its picture is worth taking again ("" for a good one).
    assert [c["again"] for c in view["cells"] if c["occupied"]] == ["", "", ""]
    crop = host.client.get(view["cells"][0]["crop"])
    assert crop.status_code == 200 and crop.mimetype == "image/png"
    picture = cv2.imdecode(np.frombuffer(crop.data, np.uint8), cv2.IMREAD_COLOR)
    assert picture is not None and picture.shape[:2] == (128, 128)
    # b1 and c1 were laid swapped: the same type twice is refused, then corrected.
    twice = [{"cell": 1, "tile_id": ids[1]}, {"cell": "c1", "tile_id": ids[1]}]
    assert "two cells" in _refused(host, "accept", {"answers": twice}, 409)
    _refused(host, "accept", {"answers": [{"cell": 1, "tile_id": "nope"}]}, 400)
    _refused(host, "accept", {"answers": [{"cell": 99, "tile_id": ids[0]}]}, 400)
    answers = [{"cell": 1, "tile_id": ids[2], "rotation": 0}, {"cell": "c1", "tile_id": ids[1]}]
    _ok(host, "accept", {"answers": answers})
    state = _state(host)
    assert state["taught"] == 3 and state["view"] is None
    assert state["step"]["kind"] == "ship"

    camera.frame = frames.ship
    _ok(host, "look")
    view = _state(host)["view"]
    assert isinstance(view, dict) and view["kind"] == "ship"
    assert host.client.get(view["picture"]).mimetype == "image/png"
    _ok(host, "accept")
    camera.frame = frames.board
    _ok(host, "look")
    assert _state(host)["view"]["seat"] == 3
    _ok(host, "accept")
    assert _state(host)["step"]["kind"] == "done"
    _refused(host, "look", None, 409)

    for bad in ("../escape", "Our-Box", "a/b", "", "x" * 65, 7, None, ".."):
        _refused(host, "finish", {"out": bad}, 400)
    assert _files(packs) == [] and kept == []
    done = _ok(host, "finish", {"out": "our-box"})
    assert kept == [(1, packs / "our-box")]  # the one tile batch's frame becomes lessons
    assert done["out"] == "our-box"
    pack = load_pack(packs / "our-box")
    assert pack.name == "Our box"
    assert [t.id for t in pack.catalogue] == ids
    assert _state(host) == {"available": True, "unavailable": None, "active": False}
    assert [p.name for p in packs.iterdir()] == ["our-box"]


def test_a_link_out_of_the_packs_folder_is_refused(host: Host, tmp_path: Path, packs: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    packs.mkdir()
    (packs / "trap").symlink_to(elsewhere)
    _ok(host, "start", {"batch": 4})
    assert "packs folder" in _refused(host, "finish", {"out": "trap"}, 400)
    assert list(elsewhere.iterdir()) == []


def test_cancel_leaves_nothing(host: Host, camera: Camera, frames: Frames, packs: Path) -> None:
    _ok(host, "start", {"name": "Half a box", "batch": 4})
    camera.frame = frames.tiles
    _ok(host, "look")
    _ok(host, "accept")
    _ok(host, "cancel")
    assert _state(host) == {"available": True, "unavailable": None, "active": False}
    assert host.client.get("/api/teach/crop/0.png").status_code == 404
    assert "start teaching" in _refused(host, "look", None, 409)
    _refused(host, "finish", {"out": "half"}, 409)
    assert _files(packs) == []


def test_pictures_and_steps_that_do_not_fit_are_refused(
    host: Host, camera: Camera, frames: Frames
) -> None:
    _refused(host, "start", {"batch": 17}, 400)
    _refused(host, "start", {"atoll": "yes"}, 400)
    _ok(host, "start", {"batch": 4})
    assert "no picture" in _refused(host, "look", None, 409)
    camera.frame = np.full((480, 640, 3), 200, np.uint8)
    assert "display mat is not found" in _refused(host, "look", None, 409)
    _refused(host, "accept", None, 409)  # no picture taken yet
    assert "at least one tile" in _refused(host, "skip", None, 409)
    camera.frame = frames.tiles
    _ok(host, "look")
    _ok(
        host,
        "accept",
        {"answers": [{"cell": "b1", "tile_id": None}, {"cell": "c1", "tile_id": None}]},
    )
    assert _state(host)["taught"] == 1
    _ok(host, "skip")  # no more tiles: on to the ship
    assert _state(host)["step"]["kind"] == "ship"
    _refused(host, "skip", None, 409)


def test_teaching_needs_a_camera_and_a_packs_folder(frames: Frames) -> None:
    app = create_app(Session(frames.box.catalogue), web_settings())
    host = log_in(app.test_client())
    without = "This companion was started without a camera to teach with."
    assert _state(host) == {"available": False, "unavailable": without, "active": False}
    assert without in _refused(host, "start", None, 409)


def test_a_camera_that_is_ready_is_not_called_missing_by_the_teach_card(frames: Frames) -> None:
    session = Session(frames.box.catalogue)
    session.set_camera("ok", "Camera ready.")
    why = "The demo's camera films a drawn table."
    app = create_app(session, web_settings(), teach_unavailable=why)
    host = log_in(app.test_client())
    assert _state(host)["unavailable"] == why
    page = host.client.get("/host").get_data(as_text=True)
    assert "no camera" not in page.lower()


@pytest.fixture
def browser() -> Iterator[Browser]:
    executable = need_browser(HAVE_PLAYWRIGHT, CHROMIUM)
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(executable), args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


@pytest.mark.browser
def test_the_host_teaches_a_box_on_the_phone(
    browser: Browser, frames: Frames, camera: Camera, packs: Path
) -> None:
    ids = [t.id for t in frames.box.catalogue]
    settings = web_settings(host="127.0.0.1", port=0, threads=8, sse_max_clients=4)
    app = create_app(Session(frames.box.catalogue), settings, teach_frames=camera, teach_root=packs)
    problems: list[str] = []
    with served(app) as server:
        page = host_phone(browser, server.local_url, problems)
        page.click("#teach-toggle")
        page.fill("#teach-name", "Phone box")
        page.select_option("#teach-batch", "4")
        page.click("#teach-start button[type=submit]")
        expect(page.locator("#teach-progress")).to_have_text("batch 1: 0 of 3 tile types taught")
        camera.frame = frames.tiles
        page.click("#teach-look")
        cells = page.locator("#teach-view .teach-grid").first.locator(".teach-cell")
        expect(cells).to_have_count(3)
        # A function, not an expression: the page's Content-Security-Policy forbids eval, by
        # which Playwright polls an expression that is not yet true.
        page.wait_for_function(
            "() => [...document.querySelectorAll('#teach-view img')].every(i => i.naturalWidth > 0)"
        )
        # b1 and c1 were laid swapped.
        cells.nth(1).locator(".teach-type").select_option(ids[2])
        cells.nth(2).locator(".teach-type").select_option(ids[1])
        shoot(page, "web-teach-phone.png")
        page.click("#teach-accept")
        expect(page.locator("#teach-progress")).to_contain_text("3 of 3")
        for frame in (frames.ship, frames.board):
            camera.frame = frame
            page.click("#teach-look")
            page.wait_for_selector("#teach-view img.teach-picture")
            page.click("#teach-accept")
            expect(page.locator("#teach-view img")).to_have_count(0)
        page.fill("#teach-out", "phone-box")
        page.click("#teach-finish button[type=submit]")
        expect(page.locator("#teach-start")).to_be_visible()
    pack = load_pack(packs / "phone-box")
    assert pack.name == "Phone box" and [t.id for t in pack.catalogue] == ids
    assert problems == []


@pytest.mark.browser
def test_a_late_answer_does_not_undo_a_started_teaching(
    browser: Browser, frames: Frames, camera: Camera, packs: Path
) -> None:
    # Opening the teach panel asks for its state; starting asks again once started. Should
    # the first answer come back last (a busy server), the page must keep showing the
    # teaching started, not the form to start it.
    app = create_app(
        Session(frames.box.catalogue),
        web_settings(host="127.0.0.1", port=0),
        teach_frames=camera,
        teach_root=packs,
    )
    problems: list[str] = []
    held: list[tuple[Route, APIResponse]] = []

    def hold_the_first(route: Route) -> None:
        if held:
            route.continue_()
        else:
            held.append((route, route.fetch()))  # answered now (not started), sent later

    with served(app) as server:
        page = host_phone(browser, server.local_url, problems)
        page.wait_for_function("() => !document.getElementById('teach-start').hidden")
        page.route("**/api/teach/state", hold_the_first)
        page.click("#teach-toggle")
        page.fill("#teach-name", "Slow box")
        page.click("#teach-start button[type=submit]")
        expect(page.locator("#teach-progress")).to_have_text("batch 1: 0 of 3 tile types taught")
        assert len(held) == 1
        route, stale = held[0]
        with page.expect_response("**/api/teach/state"):
            route.fulfill(response=stale)
        page.wait_for_timeout(300)  # time for the page to take that answer in
        expect(page.locator("#teach-run")).to_be_visible()
        expect(page.locator("#teach-start")).to_be_hidden()
        expect(page.locator("#teach-progress")).to_have_text("batch 1: 0 of 3 tile types taught")
    assert problems == []
