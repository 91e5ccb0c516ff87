"""What a newcomer reads on the table's page in a real Chromium: counts in agreement with
their number, the marks on the display and the boards explained, the box's learning with
how far it is and how long it will take. Skipped as tests/web/test_browser.py is."""

from __future__ import annotations

import random
from collections.abc import Iterator

import pytest

from companion.bots import GreedyPlayer
from companion.progress import Learning
from companion.session import Session
from tests.web.conftest import served, web_settings
from tests.web.test_browser import HAVE_PLAYWRIGHT, browser, phone, shoot, three_players
from web.app import create_app

if HAVE_PLAYWRIGHT:
    from playwright.sync_api import Browser, expect

pytestmark = pytest.mark.browser
__all__ = ["browser"]  # the fixture, shared with tests/web/test_browser.py

#: Turns of three_players()' game after which Tama holds 1 shell and 4 boats, 1 of them on
#: an incomplete island (the score counts 3).
TURNS = 38


@pytest.fixture
def played() -> Iterator[tuple[str, Session]]:
    """three_players()' game after TURNS turns of the greedy bots, served."""
    session = three_players()
    for k in range(TURNS):
        game = session.game
        assert game is not None
        session.play(GreedyPlayer(random.Random(k)).choose(game.rules, game.state))
    settings = web_settings(host="127.0.0.1", port=0, threads=8, sse_max_clients=4)
    with served(create_app(session, settings)) as server:
        yield server.local_url, session


def test_counts_agree_and_the_marks_on_display_and_boards_are_explained(
    browser: Browser, played: tuple[str, Session]
) -> None:
    url, session = played
    view = session.view()["game"]
    tama = next(p for p in view["players"] if p["name"] == "Tama")
    assert tama["shells"] == 1 and tama["boats"] == 4 and tama["score"]["boat_count"] == 3
    problems: list[str] = []
    page = phone(browser, problems)
    page.goto(url)
    card = page.locator(".player", has=page.locator("h3", has_text="Tama"))
    expect(card.locator(".stat.shells .stat-label")).to_have_text("shell")
    expect(card.locator(".stat.boats .stat-label")).to_have_text("boats")
    expect(card.locator(".stat.boats .stat-note")).to_have_text(
        "1 stands on an incomplete island: 3 boats in the score"
    )
    others = page.locator(".player", has_not=page.locator("h3", has_text="Tama"))
    for index in range(others.count()):
        other = next(
            p
            for p in view["players"]
            if p["name"] == others.nth(index).locator("h3").text_content()
        )
        notes = others.nth(index).locator(".stat.boats .stat-note")
        expect(notes).to_have_count(1 if other["boats"] > other["score"]["boat_count"] else 0)
    expect(page.locator("#board-legend")).to_contain_text("red dashes lie on incomplete islands")
    expect(page.locator("#reach-info")).to_contain_text("Darkened tiles: out of")
    shoot(page, "newcomer-legend.png")
    assert problems == []


def test_the_phones_see_the_box_learning_how_far_and_how_long_then_its_end(
    browser: Browser,
) -> None:
    session = Session()
    settings = web_settings(host="127.0.0.1", port=0, threads=8, sse_max_clients=4)
    with served(create_app(session, settings)) as server:
        problems: list[str] = []
        page = phone(browser, problems)
        page.goto(server.local_url)
        expect(page.locator("#whose-turn")).to_have_text("Waiting for a new game")
        what = "Learning the tiles of synthetic lagoon art"
        session.set_learning(Learning(what, 12, 60, 40.0, 150.0))
        # Without a reload: the live stream tells the page.
        expect(page.locator("#whose-turn")).to_have_text("Learning this box’s tiles")
        learning = page.locator("#learning")
        expect(learning).to_contain_text(f"{what}: 12 of 60 steps, about 2 min left")
        expect(learning.locator("progress")).to_have_attribute("value", "12")
        shoot(page, "newcomer-learning.png", full_page=False)
        session.set_learning(Learning(what, 0, 0, 200.0, 20.0))
        expect(learning).to_contain_text(f"{what}: finishing, about 20 s left")
        expect(learning.locator("progress")).to_have_count(0)
        session.set_learning(None)
        expect(page.locator("#learning")).to_have_count(0)
        expect(page.locator("#whose-turn")).to_have_text("Waiting for a new game")
        assert problems == []
