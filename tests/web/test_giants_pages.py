"""Giants on the phones in the game's words: the island's layout and every action named by what
it is, never by an id."""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from typing import Any

from companion.games.giants.game import GiantsGame
from companion.games.giants.island import default_island
from tests.web.conftest import Host
from web.api.giants import EDGES, action_words, layout

#: What an id of the engine looks like (hexes h01, Ahus a01, loads moai3 / headdress2).
ID = re.compile(r"\b(h\d+|a\d+|moai\d+|headdress\d+)\b")
GIANTS = {"game": "giants", "names": ["Ana", "Ben", "Cy"], "seed": 1}


def test_every_hex_and_ahu_has_a_name_of_its_own_and_no_id() -> None:
    island = default_island()
    drawn = layout(island)
    hexes = [drawn["hexes"][h.id]["name"] for h in island.hexes]
    ahus = [drawn["ahus"][a.id]["name"] for a in island.ahus]
    assert len(set(hexes)) == len(hexes) and len(set(ahus)) == len(ahus)
    assert not [n for n in hexes + ahus if ID.search(n)]
    assert drawn["hexes"][island.only("village")]["name"] == "the village"
    for a in island.ahus:
        assert drawn["ahus"][a.id]["name"].startswith(f"Ahu {a.value}·{a.headdress}")


def test_each_ahu_is_drawn_on_a_sea_edge_of_its_hex() -> None:
    island = default_island()
    at = {(h.q, h.r) for h in island.hexes}
    drawn = layout(island)
    for a in island.ahus:
        h = island.hex_by_id[a.hex]
        (dq, dr), _ = EDGES[drawn["ahus"][a.id]["edge"]]
        assert (h.q + dq, h.r + dr) not in at, a.id
        assert -1 <= drawn["ahus"][a.id]["along"] <= 1


def test_no_action_is_named_by_an_id() -> None:
    game = GiantsGame.new(["Ana", "Ben", "Cy", "Dov"])
    rng = random.Random(4)
    kinds = set()
    for move in range(160):
        phase = game.state.phase
        actions = game.legal_actions()
        for action in actions if move % 3 == 0 else ():
            data = action.to_json()
            text = action_words(game, data, phase)
            assert not ID.search(text), text
            assert text.startswith(f"{data['player']}: ")
            kinds.add(data["type"])
        game.push(game.roll(rng) if phase == "roll" else rng.choice(actions))
    assert {"roll", "bid", "place", "move", "pass"} <= kinds


def test_a_bid_of_nothing_is_said_in_words() -> None:
    game = GiantsGame.new(["Ana", "Ben", "Cy"])
    game.push(game.legal_actions()[0])
    nothing = {"type": "bid", "player": "Ana", "markers": 0, "workers": 0}
    assert action_words(game, nothing, "bid") == "Ana: bid nothing"
    both = {"type": "bid", "player": "Ana", "markers": 1, "workers": 1, "chief": True}
    assert action_words(game, both, "bid") == (
        "Ana: bid 1 tribe marker and 1 worker and the chief as 4 sculptors"
    )


def test_the_pages_get_the_layout_and_the_host_the_moves_in_words(host: Host) -> None:
    assert host.post("/api/games/new", GIANTS).status_code == 200
    state: dict[str, Any] = host.client.get("/api/games/state").get_json()
    game = state["game"]
    assert game["layout"] == layout(default_island())
    assert game["layout"]["dice"] == {"white": [0, 1, 2, 3], "brown": [0, 1, 2, 3]}
    labels = [a["label"] for a in game["actions"]]
    assert labels[0] == "Ana: the dice show 0 0 0" and not [t for t in labels if ID.search(t)]
    response = host.post("/api/games/action", {"action": game["actions"][5]["action"]})
    assert response.get_json()["text"] == labels[5]
    guest = host.client.application.test_client().get("/api/games/state").get_json()
    assert guest["game"]["layout"] == game["layout"] and "actions" not in guest["game"]


def test_the_host_is_offered_every_way_to_give_the_points_and_may_choose_one(host: Host) -> None:
    """Rulebook line 326: the mover gives the points to players of their choice."""
    assert (
        host.post("/api/games/new", {**GIANTS, "names": ["Ana", "Ben", "Cy", "Dov"]}).status_code
        == 200
    )
    board = host.client.application.extensions["companion_games"]["board"]
    rng = random.Random(1)
    for _ in range(3000):
        game = board.game
        state: dict[str, Any] = host.client.get("/api/games/state").get_json()
        if state["game"].get("help"):
            break
        board.play(
            game.roll(rng) if game.state.phase == "roll" else rng.choice(game.legal_actions())
        )
    else:
        raise AssertionError("no move with a choice of helpers")
    index, steps = next(iter(state["game"]["help"].items()))
    move = state["game"]["actions"][int(index)]["action"]
    assert move["type"] == "move" and len(steps) == len(move["path"])
    assert all(not ID.search(step["hex"]) for step in steps)
    chosen = [step["ways"][-1] for step in steps]  # not the cheapest where there is a choice
    before = {c.name: c.prestige for c in board.game.state.clans}
    response = host.post("/api/games/action", {"action": {**move, "help": chosen}})
    assert response.status_code == 200, response.get_json()
    after = {c.name: c.prestige for c in board.game.state.clans}
    given: dict[str, int] = {}
    for way in chosen:
        for name, points in way.items():
            given[name] = given.get(name, 0) + points
    assert {n: after[n] - before[n] for n in after if after[n] != before[n]} == given


def placing(names: list[str]) -> GiantsGame:
    """A game in the placing phase of round 1: dice 1 1 2, every bid empty, no Moai taken."""
    game = GiantsGame.new(names)
    game.push(next(a for a in game.legal_actions() if a.to_json()["dice"] == [1, 1, 2]))
    while game.state.phase in ("bid", "choose"):
        game.push(game.legal_actions()[0])  # a bid of nothing, then passes
    assert game.state.phase == "place"
    return game


def test_a_chief_breaking_several_tablets_says_what_each_brings() -> None:
    """Rulebook line 251: one power per complete Rongo tablet broken."""
    game = placing(["Ana", "Ben", "Cy"])
    game.state.clan("Ana").rongo = 4
    actions = [a.to_json() for a in game.legal_actions()]
    labels = [action_words(game, a, "place") for a in actions]
    assert len(set(labels)) == len(labels)
    island, names = game.island, layout(game.island)
    twice = {
        (a["hex"], a.get("ahu")): t
        for a, t in zip(actions, labels, strict=True)
        if a.get("tablets")
    }
    assert twice and all("twice, breaking 2 Rongo tablets: " in t for t in twice.values())
    assert twice[(island.only("village"), None)].endswith(
        "2 workers from the container, one for each tablet"
    )
    assert twice[(island.only("hut"), None)].endswith(
        "2 tribe markers from the container, one for each tablet"
    )
    coast = next(h for h in island.hexes if len(island.ahus_at[h.id]) == 2)
    first, second = (names["ahus"][a]["name"] for a in island.ahus_at[coast.id])
    assert twice[(coast.id, island.ahus_at[coast.id][1])].endswith(
        f"the first reserves {second}; the second reserves {first}"
    )


def test_a_pass_while_placing_says_whether_the_player_is_asked_again() -> None:
    """Rulebook line 259: a pass is final unless pieces are still available."""
    game = placing(["Ana", "Ben", "Cy"])
    ana = game.state.clan("Ana")
    pass_ = {"type": "pass", "player": "Ana"}
    assert action_words(game, pass_, "place") == (
        "Ana: pass for now: asked again if another player places a piece "
        "or takes a Rongo half-tablet"
    )
    ana.free_workers, ana.sorcerer, ana.chief = 0, False, False  # tribe markers left
    assert [a.to_json()["type"] for a in game.legal_actions()] == ["rongo", "pass"]
    assert action_words(game, pass_, "place") == "Ana: pass: nothing more in this turn's placing"


def to_marking(game: Callable[[], GiantsGame], play: Callable[[Any], Any], seed: int = 1) -> None:
    """Seeded bots play until the marking step at the end of transport."""
    rng = random.Random(seed)
    while game().state.phase != "marking":
        assert not game().over, "the game ended before a marking step"
        now = game()
        play(now.roll(rng) if now.state.phase == "roll" else rng.choice(now.legal_actions()))


def test_the_marking_step_is_said_in_the_rulebook_words(host: Host) -> None:
    """Rulebook line 366: at the end of transport an owner may mark what did not move."""
    assert host.post("/api/games/new", GIANTS).status_code == 200
    board = host.client.application.extensions["companion_games"]["board"]
    to_marking(lambda: board.game, board.play)
    game = host.client.get("/api/games/state").get_json()["game"]
    quarry = layout(default_island())["hexes"][default_island().only("moai_quarry")]["name"]
    labels = {a["action"]["type"]: a["label"] for a in game["actions"]}
    who = game["to_move"]
    assert labels["mark"].startswith(f"{who}: mark the Moai of size ")
    assert labels["mark"].endswith(f" in {quarry}, keeping it")
    assert labels["pass"] == (
        f"{who}: leave what did not move unmarked: abandoned in its quarry, anyone's to take"
    )
    assert game["phase"].endswith("mark a Moai or headdress that did not move this turn, or pass")
