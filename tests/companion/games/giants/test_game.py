"""GiantsGame as a BoardGame: event log, replay, undo, JSON forms, the view, and bot games."""

from __future__ import annotations

import functools
import json
import random
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from companion.errors import DataError, IllegalMove, MalformedMove, NotNow
from companion.games.base import Action as AnyAction
from companion.games.giants import Action, GiantsGame, Pass, Roll
from companion.games.giants.actions import ACTION_CLASSES
from companion.games.giants.bots import choose_action, play_random_game

NAMES = {3: ["Ana", "Bo", "Cy"], 4: ["Ana", "Bo", "Cy", "Di"], 5: ["Ana", "Bo", "Cy", "Di", "Ed"]}


def _giants(action: AnyAction) -> Action:
    """A Giants action as its own type: `legal_actions` is typed by the BoardGame interface."""
    assert isinstance(action, ACTION_CLASSES)
    return action


def test_interface_constants() -> None:
    assert (GiantsGame.key, GiantsGame.title, GiantsGame.needs_camera) == (
        "giants",
        "Giants",
        False,
    )
    assert (GiantsGame.min_players, GiantsGame.max_players) == (3, 5)


@pytest.mark.parametrize("players", [3, 4, 5])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_bots_finish_a_game(players: int, seed: int) -> None:
    game = play_random_game(NAMES[players], seed)
    assert game.over and game.to_move() is None and game.legal_actions() == []
    table = game.score()
    bases = {3: 7, 4: 6, 5: 5}[players]
    full = [c.name for c in game.state.clans if c.erected == bases]
    assert full or sum(game.state.stock) == 0
    top = max(p.total for p in table.players)
    assert table.winners and all(p.total == top for p in table.players if p.name in table.winners)
    for p in table.players:
        assert p.total == sum(p.breakdown.values())


def test_the_score_says_whether_the_game_is_over() -> None:
    game = GiantsGame.new(NAMES[3])
    running = game.score()
    assert (running.over, running.winners) == (False, ())
    assert running.to_json()["over"] is False
    assert running.points == ("transport", "moai", "headdresses", "rongo")
    final = play_random_game(NAMES[3], 1).score()
    assert final.over and final.winners


def test_same_seed_same_game() -> None:
    a = play_random_game(NAMES[4], 7)
    b = play_random_game(NAMES[4], 7)
    assert a.events == b.events


def test_replay_rebuilds_the_same_state_from_json() -> None:
    game = play_random_game(NAMES[3], 5)
    text = json.dumps(game.events)
    again = GiantsGame.replay(json.loads(text))
    assert again.state == game.state
    assert again.score() == game.score()


def test_every_action_round_trips_through_json() -> None:
    kinds = set()
    for players, seed in ((3, 1), (4, 2), (5, 3)):
        game = play_random_game(NAMES[players], seed)
        for event in game.events[1:]:
            action = GiantsGame.action_from_json(event["action"])
            assert action.to_json() == event["action"]
            kinds.add(event["action"]["type"])
            if event["action"]["type"] == "move":
                kinds |= {k for k in ("erect", "cap", "mark") if event["action"].get(k)}
    assert kinds == {
        "roll",
        "bid",
        "choose",
        "place",
        "rongo",
        "move",
        "mark",
        "reclaim",
        "pass",
        "erect",
        "cap",
    }


def test_pop_undoes_and_is_logged() -> None:
    game = GiantsGame.new(NAMES[3])
    before = game.state
    game.push(Roll("Ana", (1, 1, 2)))
    assert game.pop() == Roll("Ana", (1, 1, 2))
    assert game.state == before
    assert [e["type"] for e in game.events] == ["setup", "action", "undo"]
    assert GiantsGame.replay(game.events).state == before
    with pytest.raises(NotNow, match="no action to undo"):
        game.pop()


def test_a_refused_action_changes_nothing() -> None:
    game = GiantsGame.new(NAMES[3])
    before, events = game.state, list(game.events)
    with pytest.raises(IllegalMove):
        game.push(Roll("Bo", (1, 1, 1)))
    assert game.state is before and game.events == events


def test_engine_records_the_help_it_chose() -> None:
    game = play_random_game(NAMES[3], 2)
    moves = [e["action"] for e in game.events if e.get("action", {}).get("type") == "move"]
    assert moves and all(len(m["help"]) == len(m["path"]) for m in moves)


@pytest.mark.parametrize(
    "data",
    [
        None,
        [],
        {"type": "fly", "player": "Ana"},
        {"type": "roll"},
        {"type": "roll", "player": "Ana", "dice": "123"},
        {"type": "bid", "player": "Ana", "markers": -1},
        {"type": "bid", "player": "Ana", "sorcerer": 1},
        {"type": "choose", "player": "Ana", "size": 4},
        {"type": "choose", "player": "Ana", "size": True},
        {"type": "place", "player": "Ana", "piece": "boat", "hex": "h01"},
        {"type": "place", "player": "Ana", "piece": "worker"},
        {"type": "move", "player": "Ana", "item": "moai1", "path": "h01"},
        {"type": "move", "player": "Ana", "item": "moai1", "help": [{"Bo": 0}]},
        {"type": "move", "player": "Ana", "item": "moai1", "erect": 3},
        {"type": "mark", "player": "Ana"},
    ],
)
def test_malformed_actions(data: object) -> None:
    with pytest.raises(MalformedMove):
        GiantsGame.action_from_json(data)


def test_push_refuses_what_is_not_an_action() -> None:
    with pytest.raises(MalformedMove):
        GiantsGame.new(NAMES[3]).push("roll")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("damage", "problem"),
    [
        (lambda ev: [], "non-empty list"),
        (lambda ev: ev[1:], "first event must be the setup"),
        (lambda ev: [{**ev[0], "game": "maori"}, *ev[1:]], "not of giants"),
        (lambda ev: [{**ev[0], "players": ["A", "B"]}, *ev[1:]], "3 to 5 players"),
        (lambda ev: [{**ev[0], "island": {"hex": []}}, *ev[1:]], "not a Giants island"),
        (
            lambda ev: [
                {**ev[0], "island": {**ev[0]["island"], "ahu": ev[0]["island"]["ahu"][:24]}}
            ],
            "setup's island: a Giants island needs at least 25 Ahus .*, this one has 24",
        ),
        (
            lambda ev: [
                {
                    **ev[0],
                    "island": {
                        **ev[0]["island"],
                        "ahu": [
                            {**ev[0]["island"]["ahu"][0], "value": 10},
                            *ev[0]["island"]["ahu"][1:],
                        ],
                    },
                }
            ],
            "'a01''s value \\(black number\\) must be a whole number from 1 to 9",
        ),
        (lambda ev: [*ev, {"type": "teleport"}], "unknown event type"),
        (lambda ev: [*ev, {"type": "action", "action": {"type": "pass"}}], "needs player"),
        (lambda ev: [ev[0], ev[2]], "event 2: Bids are made in the auction"),
        (lambda ev: [ev[0], {"type": "undo"}], "event 2: There is no action to undo"),
    ],
)
def test_damaged_logs_raise_data_error(damage: object, problem: str) -> None:
    game = GiantsGame.new(NAMES[3])
    game.push(Roll("Ana", (1, 2, 3)))
    game.push(game.legal_actions()[0])
    with pytest.raises(DataError, match=problem) as err:
        GiantsGame.replay(damage(game.events), "game.json")  # type: ignore[operator]
    assert err.value.message.startswith("game.json")


def test_view_hides_bids_and_face_down_bases_and_shows_a_screen_on_request() -> None:
    game = GiantsGame.new(NAMES[3])
    game.push(Roll("Ana", (1, 2, 3)))
    game.push(game.legal_actions()[-1])  # Ana's biggest bid
    view = game.view()
    json.dumps(view)
    assert view["phase"] == "bid" and view["to_move"] == "Bo"
    assert [p["bid_in"] for p in view["players"]] == [True, False, False]
    assert all(p["bid"] is None for p in view["players"])
    assert all("screen" not in p for p in view["players"])
    mine = game.view(player="Ana")["players"][0]["screen"]
    assert mine["markers"] == 0 and mine["chief"] is False
    assert len(view["island"]["hexes"]) == len(game.island.hexes)
    assert {a["id"] for a in view["island"]["ahus"]} == {a.id for a in game.island.ahus}
    finished = play_random_game(NAMES[3], 3)
    shown = finished.view()
    assert shown["over"] and shown["score"]["winners"]
    assert all(a["base"] != "hidden" for a in shown["island"]["ahus"])


def test_view_hides_the_colour_of_a_face_down_base_during_play() -> None:
    rng = random.Random(1)
    game = GiantsGame.new(NAMES[3], 1)
    while not game.over:
        game.push(choose_action(game, rng))
        erected = [a for a in game.view()["island"]["ahus"] if a["moai"] and not a["reserved"]]
        if erected and not game.over:
            assert all(a["base"] == "hidden" for a in erected)
            assert all(p["erected"] is None for p in game.view()["players"])
            mine = game.view(player="Ana")["players"][0]["erected"]
            assert mine == game.state.clan("Ana").erected
            return
    pytest.fail("no Moai was erected on an unreserved Ahu")


@pytest.mark.slow
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000), steps=st.integers(0, 250), players=st.sampled_from([3, 4, 5]))
def test_push_then_pop_restores_and_replay_matches(seed: int, steps: int, players: int) -> None:
    rng = random.Random(seed)
    game = GiantsGame.new(NAMES[players], seed)
    for _ in range(steps):
        if game.over:
            break
        game.push(choose_action(game, rng))
    assert GiantsGame.replay(game.events).state == game.state
    if game.over:
        return
    before = game.state
    legal = game.legal_actions()
    action = rng.choice(legal)
    game.push(action)
    game.pop()
    assert game.state == before
    assert GiantsGame.replay(game.events).state == before


def test_legal_actions_are_all_accepted() -> None:
    rng = random.Random(11)
    game = GiantsGame.new(NAMES[4], 11)
    checked = 0
    while not game.over and checked < 60:
        for action in game.legal_actions():
            game.push(action)
            game.pop()
        game.push(choose_action(game, rng))
        checked += 1
    assert checked == 60 or game.over


def test_pass_is_always_offered_while_placing_and_transporting() -> None:
    rng = random.Random(6)
    game = GiantsGame.new(NAMES[3], 6)
    seen = set()
    while not game.over:
        legal = game.legal_actions()
        name = game.to_move()
        assert legal and all(_giants(a).player == name for a in legal)
        if game.state.phase in ("place", "transport"):
            assert Pass(name or "") in legal
            seen.add(game.state.phase)
        game.push(choose_action(game, rng))
    assert seen == {"place", "transport"}


def test_game_file_round_trip_and_bad_files() -> None:
    game = play_random_game(NAMES[3], 8)
    again = GiantsGame.loads(game.dumps(), "g.json")
    assert again.state == game.state and again.over
    assert GiantsGame.loads(json.dumps(game.events)).state == game.state  # a bare log is fine
    for text, problem in (
        ("{", "not JSON"),
        ('{"game": "tongiaki", "events": []}', "not of giants"),
        ('"events"', "a Giants game file is"),
    ):
        with pytest.raises(DataError, match=problem):
            GiantsGame.loads(text, "g.json")


def test_giants_imports_no_adapter_library() -> None:
    code = (
        "import sys\n"
        "import companion.games.giants, companion.games.giants.bots\n"
        "banned = ('cv2', 'flask', 'gpiozero', 'numpy', 'waitress')\n"
        "print(','.join(sorted(m for m in banned if m in sys.modules)))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_state_copy_is_independent() -> None:
    game = play_random_game(NAMES[4], 9)
    copied = game.state.copy()
    assert copied == game.state
    copied.clans[0].prestige += 1
    next(iter(copied.items.values())).owner = "nobody"
    next(iter(copied.ahus.values())).moai = "moai999"
    copied.stock[0] += 1
    assert copied != game.state
    assert GiantsGame.replay(game.events).state == game.state


@functools.cache
def _short_log_text() -> str:
    rng = random.Random(3)
    game = GiantsGame.new(NAMES[3], 3)
    for _ in range(40):
        game.push(choose_action(game, rng))
    return json.dumps(game.events)


def _short_log() -> list[dict[str, object]]:
    return json.loads(_short_log_text())  # type: ignore[no-any-return]


JUNK = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 99),
    st.text(max_size=4),
    st.lists(st.integers(0, 3), max_size=3),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
)


@settings(max_examples=100, deadline=None)
@given(data=st.data())
def test_a_damaged_log_raises_data_error_or_replays(data: st.DataObject) -> None:
    events = _short_log()
    target: object = events
    path = []
    while isinstance(target, dict | list) and target and data.draw(st.booleans()):
        key = data.draw(
            st.sampled_from(list(target) if isinstance(target, dict) else range(len(target)))
        )
        path.append(key)
        target = target[key]
    if not path:
        return
    parent: object = events
    for key in path[:-1]:
        parent = parent[key]  # type: ignore[index]
    parent[path[-1]] = data.draw(JUNK)  # type: ignore[index]
    try:
        GiantsGame.replay(events, "g.json")
    except DataError as exc:
        assert exc.message.startswith("g.json")
