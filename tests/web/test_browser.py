"""The pages in a real Chromium on a phone-sized screen: live updates without a reload, a
turn entered by taps, the final score. Screenshots land in test-artifacts/ for a person to
look at. Skipped when playwright (pip) or Chromium (apt) is missing, except under CI=true, where
that fails (tests/web/chromium.py)."""

from __future__ import annotations

import random
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from gpiozero.pins.mock import MockFactory

from companion.actions import TakeToBoard, Turn
from companion.bots import GreedyPlayer
from companion.game import Seat
from companion.games.session import BoardSession
from companion.session import Session
from hardware.buttons import TableButtons
from hardware.config import ButtonConfig
from hardware.live import LiveSettings, LiveTable
from tests.companion.conftest import PLAIN_DISPLAY
from tests.hardware.fakes import CountingGate
from tests.hardware.test_live import FakeCamera
from tests.web.chromium import find_chromium, need_browser
from tests.web.conftest import PIN, served, table_after, web_settings
from web.app import create_app
from web.forms import PLAYER_COLOURS

try:
    from playwright.sync_api import Browser, Page, expect, sync_playwright

    HAVE_PLAYWRIGHT = True
except ImportError:  # pragma: no cover - depends on the machine
    HAVE_PLAYWRIGHT = False

CHROMIUM = find_chromium()
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
PHONE: Any = {"width": 390, "height": 844}
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
WAIT_MS = 10_000
if HAVE_PLAYWRIGHT:
    expect.set_options(timeout=WAIT_MS)

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    executable = need_browser(HAVE_PLAYWRIGHT, CHROMIUM)
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(executable), args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


def three_players() -> Session:
    session = Session()
    session.start_game(
        [Seat("Aroha", 1, "red"), Seat("Tama", 2, "blue"), Seat("Mere", 3, "yellow")],
        start_player=2,
        ship=15,
        display=PLAIN_DISPLAY,
        seed=11,
    )
    return session


@pytest.fixture
def table() -> Iterator[tuple[str, Session]]:
    """A game of three served by waitress on 127.0.0.1 at a free port."""
    session = three_players()
    settings = web_settings(host="127.0.0.1", port=0, threads=8, sse_max_clients=4)
    with served(create_app(session, settings)) as server:
        yield server.local_url, session


def phone(browser: Browser, problems: list[str]) -> Page:
    page = browser.new_page(viewport=PHONE, device_scale_factor=2, is_mobile=True, has_touch=True)
    page.set_default_timeout(WAIT_MS)
    # Script errors and Content-Security-Policy violations both show up here.
    page.on("pageerror", lambda error: problems.append(f"page error: {error}"))
    page.on(
        "console",
        lambda message: problems.append(message.text) if message.type == "error" else None,
    )
    return page


def host_phone(browser: Browser, url: str, problems: list[str]) -> Page:
    """A phone page at the table's host page (`url`: the table's address), logged in."""
    page = phone(browser, problems)
    page.goto(url + "host")
    page.fill("#pin", PIN)
    page.click("#login-form button[type=submit]")
    return page


def shoot(page: Page, name: str, *, full_page: bool = True) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / name), full_page=full_page)


def whose_turn(page: Page) -> Any:
    return page.locator("#whose-turn").text_content()


def test_the_table_follows_a_turn_without_a_reload(
    browser: Browser, table: tuple[str, Session]
) -> None:
    url, session = table
    problems: list[str] = []
    page = phone(browser, problems)
    page.goto(url)
    assert whose_turn(page) == "Aroha’s turn"
    page.wait_for_selector("#live.live")  # the event stream is open
    page.evaluate("window.stillTheSamePage = true")
    # Aroha lays her tile and presses the "turn done" button (gpiozero's MockFactory); the
    # live loop waits for a still table, reads it (a fake camera filming the new table) and
    # the page follows.
    turn = Turn(1, TakeToBoard((0, 0), (1, 1), 90), drawn="middle-boat")
    seen = table_after(session, turn)
    factory = MockFactory()
    live = LiveTable(
        session,
        FakeCamera(),
        lambda image: seen,
        CountingGate(needed=2),
        settings=LiveSettings(preview_interval_s=0.02),
    )
    stop = threading.Event()
    loop = threading.Thread(target=live.run, args=(stop,), daemon=True)
    loop.start()
    try:
        with TableButtons(ButtonConfig(), live.events, pin_factory=factory):
            factory.pin(17).drive_low()
            factory.pin(17).drive_high()
            expect(page.locator("#whose-turn")).to_have_text("Tama’s turn")
    finally:
        stop.set()
        loop.join(5)
        factory.reset()
    first_line = page.locator("#log li").first.text_content() or ""
    assert "Aroha moved the ship 1 step, took water" in first_line
    assert page.evaluate("window.stillTheSamePage") is True
    assert page.locator(".player.to-move h3").text_content() == "Tama"
    # A refusal shows up styled as one.
    session.note("refused", "Tama's board shows two new tiles.")
    page.wait_for_selector("#log li.log-refused")
    shoot(page, "web-table-phone.png")
    assert problems == []


def test_the_host_enters_a_turn_by_taps(browser: Browser, table: tuple[str, Session]) -> None:
    url, session = table
    problems: list[str] = []
    page = host_phone(browser, url, problems)
    page.wait_for_selector("#host-tools:not([hidden])")
    assert page.locator("#login").is_hidden()
    page.click("#display .slot.takeable >> nth=0")
    page.click("#builder [data-action=board]")
    page.click(".player.to-move .cell.target >> nth=5")
    page.wait_for_selector("#builder .preview.good")
    assert "Aroha moved the ship" in (page.locator("#builder .preview").text_content() or "")
    shoot(page, "web-host-turn-phone.png", full_page=False)  # as the phone shows it
    page.click("#b-confirm")
    expect(page.locator("#whose-turn")).to_have_text("Tama’s turn")
    assert session.game is not None and len(session.game.records) == 1
    assert problems == []


def test_the_final_breakdown_is_laid_out_like_the_rulebook(
    browser: Browser, table: tuple[str, Session]
) -> None:
    url, session = table
    bot = GreedyPlayer(random.Random(4))
    assert session.game is not None
    while not session.game.over:
        session.play(bot.choose(session.game.rules, session.game.state))
    problems: list[str] = []
    page = phone(browser, problems)
    page.goto(url)
    page.wait_for_selector("#final:not([hidden])")
    rows = page.locator("#final tbody th").all_text_contents()
    assert rows == [
        "Palms without hut",
        "Palms with hut",
        "Leis",
        "Boats (majority)",
        "Shells (majority)",
        "Empty fields",
        "Total",
    ]
    winners = " and ".join(session.view()["game"]["winners"])
    assert winners in (page.locator("#whose-turn").text_content() or "")
    assert page.locator("#final thead th.lead").count() >= 1
    assert page.locator("#scores-card").is_hidden()
    shoot(page, "web-final-phone.png")
    assert problems == []


def test_the_move_log_names_tiles_as_the_tap_hint_does(
    browser: Browser, table: tuple[str, Session]
) -> None:
    url, session = table
    session.play(Turn(4, TakeToBoard((0, 3), (1, 1), 0)))  # takes end-s-palm1
    problems: list[str] = []
    page = phone(browser, problems)
    page.goto(url)
    hint = page.evaluate("Companion.describeMeaning(Companion.state().tiles['end-s-palm1'])")
    assert hint == "island end · 1 palm"
    line = page.locator("#log li").first.text_content() or ""
    assert f"took {hint} from the display" in line and "end-s-palm1" not in line
    assert problems == []


def test_the_host_toast_leaves_whose_turn_in_view(
    browser: Browser, table: tuple[str, Session]
) -> None:
    url, _session = table
    problems: list[str] = []
    page = host_phone(browser, url, problems)
    toast = page.locator("#toast")
    expect(toast).to_have_text("You are the host now.")
    shoot(page, "web-host-toast-phone.png", full_page=False)
    box, banner = toast.bounding_box(), page.locator("#banner").bounding_box()
    assert box is not None and banner is not None
    assert box["y"] >= banner["y"] + banner["height"] or box["y"] + box["height"] <= banner["y"]
    assert problems == []


LONG_NAMES = ["Wiremu", "Hinemoana", "Rangimarie", "Kahurangi", "Whetūrangi"]


def test_no_name_breaks_inside_a_word_in_the_final_score(browser: Browser) -> None:
    session = Session()
    colours = list(PLAYER_COLOURS)
    seats = [Seat(name, i + 1, colours[i]) for i, name in enumerate(LONG_NAMES)]
    session.start_game(seats, start_player=0, ship=15, display=PLAIN_DISPLAY, seed=5)
    bot = GreedyPlayer(random.Random(4))
    assert session.game is not None
    while not session.game.over:
        session.play(bot.choose(session.game.rules, session.game.state))
    settings = web_settings(host="127.0.0.1", port=0, threads=8, sse_max_clients=4)
    problems: list[str] = []
    with served(create_app(session, settings)) as server:
        page = phone(browser, problems)
        page.goto(server.local_url)
        page.wait_for_selector("#final:not([hidden])")
        shoot(page, "web-final-long-names-phone.png")
        # How many lines each word of each name takes, where the page shows names.
        lines = page.evaluate(
            """(names) => {
              const out = [];
              for (const node of document.querySelectorAll('#final thead th, #whose-turn')) {
                const walker = document.createTreeWalker(node, NodeFilter.SHOW_TEXT);
                for (let text = walker.nextNode(); text; text = walker.nextNode()) {
                  for (const name of names) {
                    const at = text.data.indexOf(name);
                    if (at < 0) continue;
                    const range = document.createRange();
                    range.setStart(text, at);
                    range.setEnd(text, at + name.length);
                    const tops = new Set([...range.getClientRects()].map((r) => Math.round(r.top)));
                    out.push([name, tops.size]);
                  }
                }
              }
              return out;
            }""",
            LONG_NAMES,
        )
    winners = session.view()["game"]["winners"]
    assert {name for name, _ in lines} >= set(LONG_NAMES) | set(winners)
    assert [name for name, rows in lines if rows != 1] == []
    assert problems == []


def test_the_host_plays_a_tongiaki_turn_by_taps(browser: Browser) -> None:
    app = create_app(
        three_players(), web_settings(host="127.0.0.1", port=0, threads=8, sse_max_clients=4)
    )
    desk: BoardSession = app.extensions["companion_games"]["board"]
    with served(app) as server:
        problems: list[str] = []
        page = host_phone(browser, server.local_url, problems)
        page.wait_for_selector("#host-tools:not([hidden])")
        page.select_option("#other-game-pick", "tongiaki")
        page.click("#other-game button[type=submit]")
        page.wait_for_selector("#newgame-form:not([hidden])")
        assert "camera is not needed" in (page.locator(".no-camera").text_content() or "")
        page.fill("#ng-names", "Ana\nBen")
        page.fill("#ng-seed", "5")
        page.click("#newgame-form button[type=submit]")
        expect(page.locator("#whose-turn")).to_have_text("Ana’s turn")
        expect(page.locator("#phase")).to_contain_text("place a boat on Tonga")
        guest = phone(browser, problems)  # another phone, following the game
        guest.goto(server.local_url + "games")
        expect(guest.locator("#whose-turn")).to_have_text("Ana’s turn")
        assert guest.locator("#moves").is_hidden() and guest.locator("#newgame").is_hidden()
        page.click(".hex[data-tile=tonga]")
        expect(page.locator("#moves-filter")).to_contain_text("Moves on Tonga")
        labels = page.locator("#action-list button.action").all_text_contents()
        assert labels and all("Tonga" in label for label in labels)
        page.click("#action-list button.action >> nth=2")
        expect(page.locator("#whose-turn")).to_have_text("Ben’s turn")
        assert desk.game is not None
        assert desk.game.events[-1] == {
            "type": "action",
            "action": {"type": "place", "island": "tonga", "beach": 2},
        }
        assert page.locator(".hex[data-tile=tonga] .boat").count() == 1
        expect(guest.locator("#whose-turn")).to_have_text("Ben’s turn")
        expect(guest.locator(".hex[data-tile=tonga] .boat")).to_have_count(1)
        # Later, when the moves name several islands, tapping one keeps only its moves.
        for _ in range(60):
            named = {
                str(island)
                for a in desk.game.legal_actions()
                if (island := a.to_json().get("island")) is not None
            }
            if len(named) >= 2:
                break
            desk.play(0)
        else:
            pytest.fail("no position with moves on two islands")
        island = sorted(named - {"tonga"})[0]
        expect(page.locator("#phase")).to_contain_text(desk.game.phase())
        every = page.locator("#action-list button.action").count()
        page.click(f".hex[data-tile={island}]")
        expect(page.locator("#moves-filter")).to_contain_text(f"Moves on {island}")
        labels = page.locator("#action-list button.action").all_text_contents()
        assert 0 < len(labels) < every and all(island in label for label in labels)
        page.locator("#board-card").scroll_into_view_if_needed()
        shoot(page, "web-tongiaki-phone.png", full_page=False)  # as the phone shows it
        assert problems == []
