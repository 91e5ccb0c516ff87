"""Tongiaki as a library: actions as values, push/pop, the event log, replay and the view."""

from __future__ import annotations

import copy
import json
import random
from typing import Any

import pytest

from companion.errors import DataError, GameOver, IllegalMove, MalformedMove, NotNow
from companion.games.base import BoardGame
from companion.games.bots import play_game
from companion.games.tongiaki import Tongiaki
from companion.games.tongiaki.actions import (
    Action,
    Arrive,
    Expand,
    Land,
    Lay,
    Migrate,
    Place,
    Resettle,
    Royal,
    action_from_json,
)
from companion.games.tongiaki.tiles import DIRECTIONS, default_tiles, neighbour, parse_tiles
from tests.companion.games.conftest import laid, tile

EVERY_KIND: list[Action] = [
    Place("tonga", 2),
    Expand("i13", (0, 1)),
    Expand("i13", (1,), take=("tonga", 4)),
    Arrive("tonga", (0, 0)),
    Royal("i04"),
    Resettle(),
    Migrate("i02", 1, 5),
    Land(0, "orange"),
    Lay(-2, 3, 5),
]


def test_tongiaki_offers_the_board_game_interface() -> None:
    game: BoardGame = Tongiaki.new(["Ana", "Bo"])
    assert (game.key, game.min_players, game.max_players) == ("tongiaki", 2, 6)
    assert not game.needs_camera


@pytest.mark.parametrize("action", EVERY_KIND, ids=lambda a: type(a).__name__)
def test_every_action_round_trips_through_json(action: Any) -> None:
    text = json.dumps(action.to_json())
    assert Tongiaki.action_from_json(json.loads(text)) == action


@pytest.mark.parametrize(
    "data",
    [
        None,
        [],
        {"island": "tonga"},
        {"type": "sail"},
        {"type": "place", "island": "tonga"},
        {"type": "place", "island": "tonga", "beach": "2"},
        {"type": "place", "island": "tonga", "beach": True},
        {"type": "expand", "island": "i13", "beaches": [0, "1"]},
        {"type": "expand", "island": "i13", "beaches": [0], "take": ["tonga"]},
        {"type": "land", "beach": 0, "colour": ""},
        {"type": "lay", "q": 0, "r": 1},
    ],
)
def test_anything_that_is_not_a_move_is_malformed(data: Any) -> None:
    with pytest.raises(MalformedMove):
        action_from_json(data)


@pytest.mark.parametrize("count", [0, 1, 7])
def test_two_to_six_players(count: int) -> None:
    with pytest.raises(IllegalMove, match="2 to 6 players"):
        Tongiaki.new([f"P{i}" for i in range(count)])


def test_the_same_name_twice_is_refused() -> None:
    with pytest.raises(IllegalMove, match="same name"):
        Tongiaki.new(["Ana", "Ana"])


def test_the_seed_shuffles_the_stack_and_the_same_seed_gives_the_same_stack() -> None:
    a, b, c = (Tongiaki.new(["Ana", "Bo"], seed) for seed in (1, 1, 2))
    assert a.state.stack == b.state.stack != c.state.stack
    assert sorted(a.state.stack) == sorted(default_tiles().stack_ids)


def test_an_illegal_move_changes_nothing_and_says_why_in_one_sentence() -> None:
    game = laid([tile("i13", 0, 0, boats=[["red", "red"], ["red"]])])
    before = copy.deepcopy(game.state)
    events = list(game.events)
    refused_actions: list[Action] = [
        Expand("i13", (0,)),
        Migrate("i13", 0, 1),
        Land(0, "red"),
        Royal("i99"),
    ]
    for action in refused_actions:
        with pytest.raises(IllegalMove) as refused:
            game.push(action)
        message = refused.value.message
        assert message.endswith(".") and "\n" not in message
        assert game.state == before and game.events == events


def test_another_games_move_is_refused() -> None:
    class Stranger:
        def to_json(self) -> dict[str, Any]:
            return {"type": "place"}

    game = Tongiaki.new(["Ana", "Bo"])
    with pytest.raises(IllegalMove, match="not a Tongiaki move"):
        game.push(Stranger())


def test_pop_undoes_the_last_move_and_the_log_records_it() -> None:
    game = Tongiaki.new(["Ana", "Bo"], seed=3)
    start = copy.deepcopy(game.state)
    game.push(Place("tonga", 1))
    assert game.pop() == Place("tonga", 1)
    assert game.state == start
    assert [e["type"] for e in game.events] == ["setup", "action", "undo"]
    with pytest.raises(NotNow, match="no move to undo"):
        game.pop()


def test_a_bot_game_replays_from_its_event_log_to_the_same_end() -> None:
    game = play_game(Tongiaki, ["Ana", "Bo", "Cy"], seed=5)
    assert game.over
    again = Tongiaki.replay(json.loads(json.dumps(game.events)))
    assert isinstance(game, Tongiaki)
    assert again.state == game.state and again.score() == game.score()
    with pytest.raises(GameOver):
        again.push(Resettle())


def test_replay_with_undos_rebuilds_the_game_and_can_undo_further() -> None:
    game = Tongiaki.new(["Ana", "Bo"], seed=4)
    rng = random.Random(4)
    for _ in range(40):
        game.push(rng.choice(game.legal_actions()))
        if rng.random() < 0.2:
            game.pop()
    again = Tongiaki.replay(game.events)
    assert again.state == game.state
    again.pop()
    game.pop()
    assert again.state == game.state


@pytest.mark.parametrize(
    ("events", "problem"),
    [
        ([], "must start with a setup"),
        ([{"type": "action"}], "must start with a setup"),
        ([{"type": "setup", "players": ["A"], "stack": []}], "event 1: Tongiaki is played by"),
        ([{"type": "setup", "players": ["A", "B"], "stack": ["zz"]}], "event 1: There is no tile"),
        (None, "must start with a setup"),
    ],
)
def test_a_damaged_log_names_its_source(events: Any, problem: str) -> None:
    with pytest.raises(DataError, match=problem) as raised:
        Tongiaki.replay(events or [], source="game.json")
    assert raised.value.message.startswith("game.json: ")


def test_a_damaged_log_names_the_event_that_does_not_fit() -> None:
    game = Tongiaki.new(["Ana", "Bo"])
    events = [*game.events, {"type": "action", "action": {"type": "royal", "island": "tonga"}}]
    with pytest.raises(DataError, match="event 2: That is not the move"):
        Tongiaki.replay(events, "log")
    with pytest.raises(DataError, match="event 2: it is neither"):
        Tongiaki.replay([*game.events, {"type": "redo"}], "log")


def test_every_legal_action_is_accepted_and_nothing_else_of_the_kind() -> None:
    rng = random.Random(11)
    for seed in range(3):
        game = Tongiaki.new(["Ana", "Bo", "Cy", "Di"], seed)
        while not game.over:
            legal = game.legal_actions()
            assert legal, game.phase()
            for action in rng.sample(legal, min(3, len(legal))):
                game.push(action)
                game.pop()
            for stranger in EVERY_KIND:
                if stranger not in legal:
                    with pytest.raises(IllegalMove):
                        game.push(stranger)
            game.push(rng.choice(legal))


def test_the_view_draws_the_map_from_data_in_axial_coordinates() -> None:
    game = laid(
        [
            tile("i07", 0, 0, boats=[["blue", "orange", "red"], ["yellow"]]),
            tile("w14", 0, 1, rotation=4),
        ],
        to_move=2,
    )
    view = json.loads(json.dumps(game.view()))
    assert view["hex"]["directions"] == [list(d) for d in DIRECTIONS]
    by_tile = {h["tile"]: h for h in view["map"]}
    assert (by_tile["i07"]["q"], by_tile["i07"]["r"]) == (0, 0)
    assert by_tile["i07"]["beaches"][0] == {
        "berths": 4,
        "piers": [1, 2],
        "boats": ["blue", "orange", "red"],
    }
    assert by_tile["w14"]["value"] == 4 and [1, 4] in by_tile["w14"]["routes"]  # from i07
    assert view["to_move"] == "Giallo" and view["phase"].startswith("Giallo: expand")
    assert Expand("i07", (0,)).to_json() in view["legal"]
    assert view["stack"] == {"islands": 14, "water": 15}


def test_the_view_names_tonga_with_a_capital_and_marks_the_newest_tile() -> None:
    game = Tongiaki.new(["Ana", "Bo"], 1)
    view = game.view()
    assert view["map"][0]["name"] == "Tonga" and view["map"][0]["tile"] == "tonga"
    assert view["newest"] == {"q": 0, "r": 0, "tile": "tonga"}
    assert "Tonga" in game.phase()


def test_the_view_shows_the_revealed_tile_and_the_landing_fleet() -> None:
    game = laid(
        [tile("i07", 0, 0, boats=[["blue", "orange", "red"], ["yellow"]])],
        first=["w14", "i13"],
        to_move=2,
    )
    game.push(Expand("i07", (0,)))
    game.push(Migrate("i07", 0, 1))
    fleet = ["blue", "orange", "red", "yellow"]
    assert game.view()["fleet"] == {"island": "i13", "name": "i13", "boats": fleet}
    assert game.view()["newest"] == {"q": 0, "r": 2, "tile": "i13"}  # past w14 at (0, 1)
    game = laid([tile("i07", 0, 0, boats=[["red"], []])], first=["w14"])
    game.push(Resettle())
    assert game.view()["revealed"]["tile"] == "w14"


def test_every_drawn_tile_turns_its_red_mark_back_to_where_the_fleet_came_from() -> None:
    for seed in range(4):
        game = Tongiaki.new(["Ana", "Bo", "Cy"], seed)
        rng = random.Random(seed)
        while not game.over:
            action = rng.choice(game.legal_actions())
            laid_before = set(game.state.hexes)
            game.push(action)
            if isinstance(action, Migrate):
                new = [at for at in game.state.hexes if at not in laid_before]
                for at in new:
                    back = neighbour(at, game.state.hexes[at].rotation)
                    assert back in laid_before or back in new


def test_the_tile_data_matches_the_rulebook_box() -> None:
    tiles = default_tiles()
    islands = [t for t in tiles.tiles.values() if t.kind == "island"]
    waters = [t for t in tiles.tiles.values() if t.kind == "water"]
    assert sorted(t.value for t in islands) == [2] * 3 + [3] * 4 + [4] * 5 + [5] * 3
    assert len(waters) == 16 and sum(1 for t in waters if t.value == 0) == 4
    assert [b.berths for b in tiles.start.beaches] == [3] * 6
    assert tiles.boats_per_player == 15


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        ({"water": [{"id": "w", "value": 2, "routes": [[0, 1], [2, 3]]}]}, "all six edges"),
        (
            {"island": [{"id": "tonga", "value": 2, "beaches": [{"berths": 2, "piers": [1]}]}]},
            "twice",
        ),
        ({"island": [{"id": "x", "value": 2, "beaches": [{"berths": 2, "piers": []}]}]}, "piers"),
        ({"island": [{"id": "x", "value": 2, "beaches": [{"berths": 0, "piers": [1]}]}]}, "berths"),
    ],
)
def test_bad_tile_data_is_one_sentence_naming_the_file(
    change: dict[str, Any], problem: str
) -> None:
    import tomllib
    from importlib import resources

    text = resources.files("companion").joinpath("data/tongiaki.toml").read_text("utf-8")
    data = tomllib.loads(text)
    data.update(change)
    with pytest.raises(DataError, match=problem) as raised:
        parse_tiles(data, "my.toml")
    assert raised.value.message.startswith("my.toml: ")


@pytest.mark.parametrize(
    ("position", "problem"),
    [
        ("map", "needs a `map` list"),
        ({"map": [7]}, "must be an object"),
        ({"map": [{"tile": "i99", "q": 0, "r": 0}]}, "no tile 'i99'"),
        ({"map": [{"tile": "i01", "q": 0, "r": "0"}]}, "whole-number q, r"),
        ({"map": [{"tile": "i01", "q": 0, "r": 0}, {"tile": "i02", "q": 0, "r": 0}]}, "twice"),
        ({"map": [{"tile": "i01", "q": 0, "r": 0, "boats": [["red"]]}]}, "one list of boats"),
        ({"map": [{"tile": "i01", "q": 0, "r": 0, "boats": [["red", "red"], []]}]}, "is full"),
        ({"map": [{"tile": "i01", "q": 0, "r": 0, "boats": [["pink"], []]}]}, "no player has"),
        ({"map": [{"tile": "w01", "q": 0, "r": 0, "royal": "red"}]}, "cannot be a royal"),
        (
            {"map": [{"tile": "tonga", "q": 0, "r": 0, "boats": [["red"] * 3] + [[]] * 5}]},
            "is full",
        ),
        ({"map": [], "to_move": 2}, "seat number"),
    ],
)
def test_a_position_that_cannot_be_is_refused_in_one_sentence(position: Any, problem: str) -> None:
    with pytest.raises((IllegalMove, MalformedMove), match=problem):
        Tongiaki.new(["Ana", "Bo"], position=position)


def test_a_position_with_more_boats_than_a_player_owns_is_refused() -> None:
    tonga = tile("tonga", 0, 0, boats=[["red", "red"]] * 6)
    with pytest.raises(IllegalMove, match="more than 15 boats"):
        laid([tonga, tile("i13", 2, 0, boats=[["red", "red", "red", "red"], []])])


def test_every_boat_is_in_the_supply_on_a_beach_in_a_royal_centre_or_in_the_landing_fleet() -> None:
    for seed in range(4):
        game = Tongiaki.new(["Ana", "Bo", "Cy", "Di", "Ed"], seed)
        rng = random.Random(seed)
        while not game.over:
            game.push(rng.choice(game.legal_actions()))
            s = game.state
            for colour in s.colours:
                where = s.supply[colour] + s.fleet.count(colour)
                for h in s.hexes.values():
                    where += sum(b.count(colour) for b in h.boats) + (h.royal == colour)
                if not game.over:
                    assert where == 15, (colour, game.events[-1])
            assert all(n <= 2 for n in s.royals.values())
            for h in s.hexes.values():
                spec = default_tiles().spec(h.tile)
                for b, boats in enumerate(h.boats):
                    assert len(boats) <= spec.beaches[b].berths
