"""Player names with markup are text on every page the scripts build (the table, the host page,
the final score, the board games): a name can never become an element, let alone script."""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import pytest

from companion.bots import GreedyPlayer
from companion.game import Seat
from companion.games.session import BoardSession
from companion.session import Session
from tests.companion.conftest import PLAIN_DISPLAY
from tests.web.conftest import served, web_settings
from tests.web.test_browser import browser, host_phone, phone
from web.app import create_app
from web.forms import MAX_NAME, PLAYER_COLOURS

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

pytestmark = pytest.mark.browser

__all__ = ["browser"]  # the module's browser fixture, shared

#: Names a host may type (at most MAX_NAME letters), each markup if a page took it as HTML.
NAMES = ("<i class=mk>Ari</i>", "<img src=x onerror=f()>", "Tama & <b class=mk>M</b>")
#: What any of NAMES would become as HTML.
MARKUP = ".mk, img[src='x']"
#: The text of the page as the scripts built it, without the page's state (a script element).
SHOWN_TEXT = """(markup) => {
  const shown = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    if (node.parentElement.closest('script, template')) continue;
    shown.push(node.data);
  }
  return {elements: document.querySelectorAll(markup).length, text: shown.join('\\n')};
}"""


def _maori(over: bool) -> Session:
    session = Session()
    colours = list(PLAYER_COLOURS)
    seats = [Seat(name, i + 1, colours[i]) for i, name in enumerate(NAMES)]
    session.start_game(seats, start_player=0, ship=15, display=PLAIN_DISPLAY, seed=7)
    bot = GreedyPlayer(random.Random(3))
    game = session.game
    assert game is not None
    for _ in range(10**4 if over else 4):
        if game.over:
            break
        session.play(bot.choose(game.rules, game.state))
    assert game.over == over
    return session


def _shown(page: Page) -> dict[str, Any]:
    shown: dict[str, Any] = page.evaluate(SHOWN_TEXT, MARKUP)
    return shown


def _names_are_text(page: Page, where: str) -> None:
    """Every name is shown as its own letters, and none became an element."""
    page.wait_for_function(
        "(name) => document.body.innerText.includes(name)", arg=NAMES[0], timeout=10_000
    )
    shown = _shown(page)
    assert shown["elements"] == 0, f"{where}: a name became markup"
    missing = [name for name in NAMES if name not in shown["text"]]
    assert missing == [], f"{where}: not shown as text: {missing}"


@pytest.fixture
def problems() -> Iterator[list[str]]:
    found: list[str] = []
    yield found
    assert found == [], "script errors or blocked content on a page"


@pytest.mark.parametrize("over", [False, True], ids=["playing", "final-score"])
def test_names_with_markup_are_text_on_the_maori_pages(
    browser: Browser, problems: list[str], over: bool
) -> None:
    assert all(len(name) <= MAX_NAME for name in NAMES)  # names a host could type
    settings = web_settings(host="127.0.0.1", port=0, threads=8, sse_max_clients=4)
    with served(create_app(_maori(over), settings)) as server:
        page = phone(browser, problems)
        page.goto(server.local_url)
        if over:
            page.wait_for_selector("#final:not([hidden])")
        _names_are_text(page, "the table")
        host = host_phone(browser, server.local_url, problems)
        host.wait_for_selector("#host-tools:not([hidden])")
        _names_are_text(host, "the host page")


@pytest.mark.parametrize(("key", "moves"), [("tongiaki", 6), ("giants", 4)])
def test_names_with_markup_are_text_on_the_board_game_pages(
    browser: Browser, problems: list[str], key: str, moves: int
) -> None:
    settings = web_settings(host="127.0.0.1", port=0, threads=8, sse_max_clients=4)
    app = create_app(Session(), settings)
    desk: BoardSession = app.extensions["companion_games"]["board"]
    desk.start(key, list(NAMES), seed=5)
    for _ in range(moves):
        desk.play(0)
    with served(app) as server:
        page = phone(browser, problems)
        page.goto(server.local_url + "games")
        _names_are_text(page, f"the {key} page")
        host = host_phone(browser, server.local_url, problems)
        host.goto(server.local_url + "games")
        _names_are_text(host, f"the {key} page of the host")
