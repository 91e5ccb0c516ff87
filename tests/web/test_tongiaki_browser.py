"""Tongiaki in a real Chromium on a phone-sized screen: a 5-player final count entered by taps,
the map fitting its card, the score's rows. Screenshots land in test-artifacts/. Skipped without
playwright or Chromium, except under CI=true (tests/web/chromium.py)."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from tests.web.test_browser import browser, host_phone, phone, shoot  # noqa: F401
from tests.web.test_tongiaki_pages import FIVE, file_score

try:
    from playwright.sync_api import Browser, expect
except ImportError:  # pragma: no cover - test_browser.py says why, and fails under CI
    pytest.skip("playwright is not installed", allow_module_level=True)

pytestmark = pytest.mark.browser

#: The score's rows from top to bottom: the points, the total, the tie-breaks.
ROWS = ["island_points", "royal_island_points", "total", "islands", "boats"]


def test_a_table_enters_a_five_player_final_count_by_taps(
    browser: Browser,  # noqa: F811
    desk: Any,
    tmp_path: Path,
) -> None:
    """FIVE (tests/web/test_tongiaki_pages.py), tapped in: islands added by value, boats
    stepped, royal islands marked. The page's score is the score of the file it shows (as
    `companion score --game tongiaki` scores it), and a guest reads the same. Counts the taps:
    a second each."""
    server, _board = desk
    problems: list[str] = []
    page = host_phone(browser, server.local_url, problems)
    page.wait_for_selector("#host-tools:not([hidden])")
    page.goto(server.local_url + "games/tongiaki/count")
    expect(page.locator("#players-n")).to_have_text("4")
    taps = 0

    def tap(selector: str) -> None:
        nonlocal taps
        page.click(selector)
        taps += 1

    tap("#players-plus")  # the names default to the colours: Red, Blue, Yellow, Orange, Green
    seats = {name: seat for seat, name in enumerate(FIVE["players"])}
    for index, island in enumerate(FIVE["islands"]):
        if index:  # Tonga is there from the start
            tap(f'#add-island button[data-value="{island["value"]}"]')
        here = f'#islands .island[data-index="{index}"]'
        expect(page.locator(here)).to_have_attribute("data-value", str(island["value"]))
        if "royal" in island:
            tap(f'{here} .royal-of[data-seat="{seats[island["royal"]]}"]')
            continue
        for name, boats in island["boats"].items():
            for _ in range(boats):
                tap(f'{here} .stepper[data-seat="{seats[name]}"] button.plus')
    expected = file_score(tmp_path, FIVE)
    totals = [str(p["total"]) for p in expected["players"]]
    expect(page.locator("#score tr[data-row=total] td")).to_have_text(totals)
    shown = json.loads(page.locator("#count-file").text_content() or "{}")
    assert shown == FIVE
    assert file_score(tmp_path, shown) == expected
    rows = page.locator("#score tr[data-row]").evaluate_all(
        "rows => rows.map(r => r.getAttribute('data-row'))"
    )
    assert rows == ROWS
    for key in ROWS:
        cells = page.locator(f"#score tr[data-row={key}] td").all_text_contents()
        assert cells == [str(p[key]) for p in expected["players"]], key
    winners = expected["winners"]
    expect(page.locator("#winners")).to_have_text(f"★ {' and '.join(winners)} wins")
    assert taps <= 60, taps  # a second a tap: well inside two minutes at the table
    page.locator("#islands-card").scroll_into_view_if_needed()
    shoot(page, "web-tongiaki-count.png", full_page=False)
    page.locator("#score-card").scroll_into_view_if_needed()
    shoot(page, "web-tongiaki-count-score.png", full_page=False)
    guest = phone(browser, problems)
    guest.goto(server.local_url + "games/tongiaki/count")
    expect(guest.locator("#score tr[data-row=total] td")).to_have_text(totals)
    assert guest.locator("#islands button").count() == 0
    assert guest.locator("#add-island").is_hidden()
    assert guest.locator("#count-again").is_hidden()
    page.once("dialog", lambda dialog: dialog.accept())
    page.click("#count-again")  # a new count: Tonga alone again, sent whole
    expect(page.locator("#islands .island")).to_have_count(1)
    expect(guest.locator("#islands .island")).to_have_count(1)
    expect(guest.locator("#score tr[data-row=total] td")).to_have_text(["0"] * 5)
    assert problems == []


def test_the_map_fits_its_card_at_every_stage(browser: Browser, desk: Any) -> None:  # noqa: F811
    """A seeded game played on by random legal moves: at every tenth move the whole map is in
    its card (scaled to the width), Tonga in view and the newest tile ringed; at the end the
    score's points rows stand above the total and the tie-breaks apart below it."""
    server, board = desk
    board.start("tongiaki", ["Ana", "Ben", "Cy", "Dee", "Eru"], 4)
    problems: list[str] = []
    page = host_phone(browser, server.local_url, problems)
    page.wait_for_selector("#host-tools:not([hidden])")
    page.goto(server.local_url + "games")
    rng = random.Random(4)
    shot_mid = False
    for move in range(5000):
        game = board.game
        assert game is not None
        if game.over:
            break
        if move % 10 == 0 and len(game.view()["map"]) > 1:
            expect(page.locator("#phase")).to_contain_text(game.phase())
            fit = page.evaluate(
                """() => {
                const card = document.getElementById('board-card').getBoundingClientRect();
                const map = document.querySelector('#board svg.hexmap').getBoundingClientRect();
                const tonga = document.querySelector('.hex[data-tile=tonga]');
                const t = tonga ? tonga.getBoundingClientRect() : null;
                const board = document.getElementById('board');
                return {inside: map.left >= card.left - 0.5 && map.right <= card.right + 0.5,
                        scrolls: board.scrollWidth > board.clientWidth + 1,
                        tonga: !t || (t.left >= map.left - 0.5 && t.right <= map.right + 0.5
                                      && t.top >= map.top - 0.5 && t.bottom <= map.bottom + 0.5),
                        newest: document.querySelectorAll('.hex.newest').length};
            }"""
            )
            assert fit == {"inside": True, "scrolls": False, "tonga": True, "newest": 1}, move
            if not shot_mid and len(game.view()["map"]) >= 12:
                page.locator("#board-card").scroll_into_view_if_needed()
                shoot(page, "web-tongiaki-map.png", full_page=False)
                shot_mid = True
        board.play(rng.randrange(len(game.legal_actions())))
    assert board.game is not None and board.game.over
    expect(page.locator("#final")).to_be_visible()
    rows = page.locator("#final tr[data-row]").evaluate_all(
        "rows => rows.map(r => r.getAttribute('data-row'))"
    )
    assert rows == ROWS
    assert "Tie-breaks" in (page.locator("#final .tiebreak-head").text_content() or "")
    assert "tonga" not in (page.locator("#main").text_content() or "")
    page.locator("#final").scroll_into_view_if_needed()
    shoot(page, "web-tongiaki-final.png", full_page=False)
    guest = phone(browser, problems)
    guest.goto(server.local_url + "games")
    expect(guest.locator("#note-over")).to_be_visible()
    expect(guest.locator("#note-start")).to_be_hidden()
    assert problems == []
