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
from companion.session import Session
from hardware.buttons import TableButtons
from hardware.config import ButtonConfig
from hardware.live import LiveSettings, LiveTable
from tests.companion.conftest import PLAIN_DISPLAY
from tests.hardware.test_live import CountingGate, FakeCamera
from tests.web.chromium import find_chromium, need_browser
from tests.web.conftest import PIN, served, table_after, web_settings
from web.app import create_app

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
