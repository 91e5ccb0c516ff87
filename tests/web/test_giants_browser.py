"""Giants in a real Chromium on a phone-sized screen: the host places pieces and moves a Moai
by tapping the drawn island, a guest follows it, and a table enters its final count by taps.
Screenshots land in test-artifacts/. Skipped without playwright or Chromium, except under
CI=true (tests/web/chromium.py)."""

from __future__ import annotations

import random
from typing import Any

import pytest

from companion.games.giants.final_count import score_final_count
from companion.games.giants.game import GiantsGame
from companion.games.giants.island import default_island
from companion.games.session import BoardSession
from tests.web.test_browser import browser, host_phone, phone, shoot  # noqa: F401
from tests.web.test_giants_count import five_player_count
from tests.web.test_giants_pages import to_marking
from web.api.giants import layout

try:
    from playwright.sync_api import Browser, Page, expect
except ImportError:  # pragma: no cover - test_browser.py says why, and fails under CI
    pytest.skip("playwright is not installed", allow_module_level=True)

pytestmark = pytest.mark.browser


def game_of(board: BoardSession) -> GiantsGame:
    game = board.game
    assert isinstance(game, GiantsGame)
    return game


def last_action(board: BoardSession) -> dict[str, Any]:
    event = game_of(board).events[-1]
    assert event["type"] == "action"
    action: dict[str, Any] = event["action"]
    return action


def to_placing(board: BoardSession) -> None:
    """Dice 1 1 2, every bid empty, nobody takes a Moai: the placing phase of round 1."""
    game = game_of(board)
    board.play(next(a for a in game.legal_actions() if a.to_json()["dice"] == [1, 1, 2]))
    while game_of(board).state.phase in ("bid", "choose"):
        board.play(
            next(
                a
                for a in game_of(board).legal_actions()
                if a.to_json()
                in (
                    {
                        "type": "bid",
                        "player": a.to_json()["player"],
                        "markers": 0,
                        "workers": 0,
                        "sorcerer": False,
                        "chief": False,
                    },
                    {"type": "pass", "player": a.to_json()["player"]},
                )
            )
        )


def test_the_host_places_pieces_by_tapping_the_island(browser: Browser, desk: Any) -> None:  # noqa: F811
    server, board = desk
    board.start("giants", ["Ana", "Ben", "Cy"], 3)
    to_placing(board)
    names = layout(game_of(board).island)["hexes"]
    island = game_of(board).island
    village = names[island.only("village")]["name"]
    forest = next(h for h in island.hexes if h.kind == "forest")
    problems: list[str] = []
    page = host_phone(browser, server.local_url, problems)
    page.wait_for_selector("#host-tools:not([hidden])")
    page.goto(server.local_url + "games")
    expect(page.locator("#whose-turn")).to_have_text("Ana’s turn")
    guest = phone(browser, problems)
    guest.goto(server.local_url + "games")
    expect(guest.locator(".giants-island")).to_be_visible()
    assert guest.locator("#giants-controls").count() == 0
    assert guest.locator(".g-hex[role=button]").count() == 0  # guests read
    # Ana: a worker on the village, two taps.
    page.click("#giants-controls [data-piece=worker]")
    assert page.locator(".g-hex.target").count() == len(island.hexes)
    page.click(f'.g-hex[data-hex="{village}"]')
    expect(page.locator("#whose-turn")).to_have_text("Ben’s turn")
    assert last_action(board) == {
        "type": "place",
        "player": "Ana",
        "piece": "worker",
        "hex": island.only("village"),
    }
    expect(guest.locator(f'.g-hex[data-hex="{village}"] .g-worker')).to_have_count(1)
    # Ben: the sorcerer on a forest, then the question whether it uses the forest's power.
    page.click("#giants-controls [data-piece=sorcerer]")
    page.click(f'.g-hex[data-hex="{names[forest.id]["name"]}"]')
    question = page.locator(".g-choices")
    expect(question).to_contain_text("What does the sorcerer do there?")
    shoot(page, "web-giants-place-phone.png", full_page=False)
    question.locator("button.action", has_text="using its power").click()
    expect(page.locator("#whose-turn")).to_have_text("Cy’s turn")
    assert last_action(board) == {
        "type": "place",
        "player": "Ben",
        "piece": "sorcerer",
        "hex": forest.id,
        "power": True,
    }
    assert game_of(board).state.clan("Ben").logs == forest.logs
    page.locator("#board-card").scroll_into_view_if_needed()
    shoot(page, "web-giants-island-phone.png", full_page=False)
    shoot(guest, "web-giants-guest-phone.png", full_page=False)
    assert problems == []


#: The page's answers to a move held back `ms` milliseconds, as on a busy companion or a weak
#: Wi-Fi: the change's notice (/games/events) reaches the page before the answer does.
SLOW_ANSWERS = """(() => {
  const fetch = window.fetch;
  window.fetch = function (url, options) {
    const answer = fetch.apply(this, arguments);
    const move = options && options.method === 'POST' && String(url).endsWith('/api/games/action');
    if (!move) return answer;
    return answer.then(r => new Promise(done => setTimeout(() => done(r), %d)));
  };
})();"""


def test_taps_on_the_next_turn_are_kept_while_a_move_waits_for_its_answer(
    browser: Browser,  # noqa: F811
    desk: Any,
) -> None:
    """The page draws the next turn only once the move sent has its answer, so the host's
    next taps are not cleared by that answer nor dropped while it is awaited."""
    server, board = desk
    board.start("giants", ["Ana", "Ben", "Cy"], 3)
    to_placing(board)
    island = game_of(board).island
    names = layout(island)["hexes"]
    forest = next(h for h in island.hexes if h.kind == "forest")
    problems: list[str] = []
    page = host_phone(browser, server.local_url, problems)
    page.wait_for_selector("#host-tools:not([hidden])")
    page.add_init_script(SLOW_ANSWERS % 1500)
    page.goto(server.local_url + "games")
    page.click("#giants-controls [data-piece=worker]")
    page.click(f'.g-hex[data-hex="{names[island.only("village")]["name"]}"]')
    expect(page.locator("#whose-turn")).to_have_text("Ben’s turn")
    page.click("#giants-controls [data-piece=sorcerer]")
    page.click(f'.g-hex[data-hex="{names[forest.id]["name"]}"]')
    page.locator(".g-choices button.action", has_text="using its power").click()
    expect(page.locator("#whose-turn")).to_have_text("Cy’s turn")
    assert last_action(board)["piece"] == "sorcerer"
    assert problems == []


def to_erecting(board: BoardSession) -> dict[str, Any]:
    """Seeded bots play until the player to move can carry a Moai to an Ahu and erect it;
    that move's JSON."""
    rng = random.Random(0)
    for _ in range(2000):
        game = game_of(board)
        if game.state.phase == "transport":
            for action in game.legal_actions():
                data = action.to_json()
                if data["type"] == "move" and data.get("erect") and data["path"]:
                    return data
        board.play(
            game.roll(rng) if game.state.phase == "roll" else rng.choice(game.legal_actions())
        )
    raise AssertionError("no Moai could be erected")


def test_the_host_moves_a_moai_to_an_ahu_by_two_taps(browser: Browser, desk: Any) -> None:  # noqa: F811
    server, board = desk
    board.start("giants", ["Ana", "Ben", "Cy"], 3)
    wanted = to_erecting(board)
    game = game_of(board)
    ahu_name = layout(game.island)["ahus"][wanted["erect"]]["name"]
    mover = wanted["player"]
    problems: list[str] = []
    page = host_phone(browser, server.local_url, problems)
    page.wait_for_selector("#host-tools:not([hidden])")
    page.goto(server.local_url + "games")
    expect(page.locator("#whose-turn")).to_have_text(f"{mover}’s turn")
    page.locator(f'.giants-island [data-load="{wanted["item"]}"]').first.click()
    expect(page.locator(f'.g-ahu.target[data-ahu="{ahu_name}"]')).to_have_count(1)
    page.click(f'.g-ahu[data-ahu="{ahu_name}"]')
    choices = page.locator(".g-choices button.action")
    if choices.count():  # several ways to give the points: the first is the cheapest
        choices.first.click()
    expect(page.locator(f'.g-ahu.has-moai[data-ahu="{ahu_name}"]')).to_have_count(1)
    done = last_action(board)
    assert (done["player"], done["item"], done["erect"]) == (mover, wanted["item"], wanted["erect"])
    assert done["path"] == wanted["path"]
    assert game_of(board).state.ahus[wanted["erect"]].moai == wanted["item"]
    page.locator("#board-card").scroll_into_view_if_needed()
    shoot(page, "web-giants-transport-phone.png", full_page=False)
    assert problems == []


def roll_by_faces(page: Page, faces: list[int]) -> None:
    for die, face in enumerate(faces):
        page.click(f"#giants-controls [data-die='{die}'][data-face='{face}']")
    page.click("#g-roll")


def test_the_host_enters_dice_as_faces_and_a_bid_of_nothing(browser: Browser, desk: Any) -> None:  # noqa: F811
    server, board = desk
    board.start("giants", ["Ana", "Ben", "Cy", "Dov"], 3)
    problems: list[str] = []
    page = host_phone(browser, server.local_url, problems)
    page.wait_for_selector("#host-tools:not([hidden])")
    page.goto(server.local_url + "games")
    expect(page.locator("#g-roll")).to_be_disabled()
    assert page.locator("#giants-controls .g-die").count() == 4  # three white, one brown
    roll_by_faces(page, [2, 0, 1, 3])
    expect(page.locator("#phase")).to_contain_text("bid")
    assert last_action(board) == {"type": "roll", "player": "Ana", "dice": [0, 1, 2, 3]}
    expect(page.locator("#g-bid")).to_have_text("Bid nothing")
    page.click("#g-bid")
    expect(page.locator("#whose-turn")).not_to_have_text("Ana’s turn")
    assert last_action(board)["markers"] == 0 and last_action(board)["workers"] == 0
    assert problems == []


def test_a_table_enters_a_five_player_final_count_by_taps(browser: Browser, desk: Any) -> None:  # noqa: F811
    """A 5-player end position (tests/web/test_giants_count.py): each Moai tapped onto its Ahu
    with the brush, the track and the Rongo halves; the page shows the engine's score, and a
    guest reads the same. Counts the taps a person makes."""
    server, _board = desk
    count = five_player_count()
    problems: list[str] = []
    page = host_phone(browser, server.local_url, problems)
    page.wait_for_selector("#host-tools:not([hidden])")
    page.goto(server.local_url + "games/giants/count")
    # How long a person takes: a second a tap on a button, two for an Ahu (find it on the
    # drawing, then tap), a second for a number field and half a second a digit.
    seconds = 0.0
    page.fill("#gc-names", "\n".join(count["players"]))  # names typed: 2 seconds each
    page.click("#gc-players [data-players='5']")
    seconds += 2 * len(count["players"]) + 1
    expect(page.locator("#island-card")).to_be_visible()
    names = {k: v["name"] for k, v in layout(default_island())["ahus"].items()}
    brush: tuple[str, int, bool] = (count["players"][0], 1, False)
    for moai in sorted(count["moai"], key=lambda m: (m["owner"], m["size"], m["headdress"])):
        want = (moai["owner"], moai["size"], moai["headdress"])
        if want[0] != brush[0]:
            page.click(f'#brush [data-owner="{want[0]}"]')
            seconds += 1
        if want[1] != brush[1]:
            page.click(f'#brush [data-size="{want[1]}"]')
            seconds += 1
        if want[2] != brush[2]:
            page.click("#brush [data-headdress]")
            seconds += 1
        brush = want
        page.click(f'.g-ahu[data-ahu="{names[moai["ahu"]]}"]')
        seconds += 2
        expect(page.locator(f'.g-ahu.has-moai[data-ahu="{names[moai["ahu"]]}"]')).to_have_count(1)
    for name in count["players"]:
        if count["track"][name]:
            page.fill(f'[data-track="{name}"]', str(count["track"][name]))
            page.press(f'[data-track="{name}"]', "Tab")
            seconds += 1 + 0.5 * len(str(count["track"][name]))
        if count["rongo_halves"][name]:
            page.click(f'[data-rongo="{name}"][data-halves="{count["rongo_halves"][name]}"]')
            seconds += 1
    expected = score_final_count(count).to_json()
    winner = expected["winners"][0]
    expect(page.locator("#count-title")).to_have_text(f"★ {winner} wins")
    expect(page.locator("#score tr[data-row=total] td")).to_have_text(
        [str(p["total"]) for p in expected["players"]]
    )
    guest = phone(browser, problems)
    guest.goto(server.local_url + "games/giants/count")
    expect(guest.locator("#score tr[data-row=total] td")).to_have_text(
        [str(p["total"]) for p in expected["players"]]
    )
    assert guest.locator("#brush button").count() == 0
    assert guest.locator(".g-ahu.has-moai").count() == len(count["moai"])
    assert seconds < 120, seconds  # two minutes at the table
    shoot(page, "web-giants-count-phone.png", full_page=False)
    page.locator("#score-card").scroll_into_view_if_needed()
    shoot(page, "web-giants-count-score-phone.png", full_page=False)
    assert problems == []


def test_the_host_marks_an_unmoved_moai_by_tapping_it_in_its_quarry(
    browser: Browser,  # noqa: F811
    desk: Any,
) -> None:
    """Rulebook line 366: at the end of transport the owner of a Moai that did not move may
    mark it where it lies, in the Moai quarry; a tap on it does."""
    server, board = desk
    board.start("giants", ["Ana", "Ben", "Cy"], 3)
    to_marking(lambda: game_of(board), board.play)
    game = game_of(board)
    owner = game.to_move()
    wanted = next(a.to_json() for a in game.legal_actions() if a.to_json()["type"] == "mark")
    problems: list[str] = []
    page = host_phone(browser, server.local_url, problems)
    page.wait_for_selector("#host-tools:not([hidden])")
    page.goto(server.local_url + "games")
    expect(page.locator("#phase")).to_contain_text("did not move this turn")
    expect(page.locator("#giants-controls")).to_contain_text("End of transport")
    expect(page.locator("#giants-controls button.action", has_text="abandoned")).to_have_count(1)
    load = page.locator(f'.giants-island .g-load.target[data-load="{wanted["item"]}"]')
    expect(load).to_have_count(1)
    shoot(page, "web-giants-marking-phone.png", full_page=False)
    load.click()
    marker = page.locator(f'.giants-island [data-load="{wanted["item"]}"] .g-marker')
    expect(marker).to_have_count(1)
    assert last_action(board) == wanted
    item = game_of(board).state.items[wanted["item"]]
    assert item.marked and item.owner == owner
    assert problems == []
