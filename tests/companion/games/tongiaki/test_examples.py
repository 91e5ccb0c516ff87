"""Every worked example and special case of the Tongiaki rulebook (tongiaki-rules-it.txt)."""

from __future__ import annotations

import pytest

from companion.errors import IllegalMove
from companion.games.tongiaki import Tongiaki
from companion.games.tongiaki.actions import (
    Arrive,
    Decline,
    Expand,
    Land,
    Lay,
    Migrate,
    Place,
    Resettle,
    Royal,
)
from companion.games.tongiaki.tiles import default_tiles, neighbour
from tests.companion.games.conftest import FOUR, empty_tonga, laid, tile


def hexes(game: Tongiaki) -> dict[str, tuple[int, int]]:
    return {h.tile: at for at, h in game.state.hexes.items()}


def boats(game: Tongiaki, island: str) -> list[list[str]]:
    return game.state.hexes[hexes(game)[island]].boats


# --------------------------------------------------------------------------- Preparazione


def test_setup_two_boats_each_on_tonga_in_turn_order() -> None:
    game = Tongiaki.new(["Ana", "Bo", "Cy"], seed=1)
    order = []
    for beach in (0, 1, 2, 3, 4, 5):
        order.append(game.to_move())
        game.push(Place("tonga", beach))
    assert order == ["Ana", "Bo", "Cy", "Ana", "Bo", "Cy"]
    assert game.state.step == "turn" and game.to_move() == "Ana"
    assert all(game.state.supply[c] == 13 for c in game.state.colours)


def test_setup_leaves_a_free_berth_on_every_beach_of_tonga() -> None:
    game = Tongiaki.new(["Ana", "Bo"], seed=1)
    game.push(Place("tonga", 0))
    game.push(Place("tonga", 0))
    with pytest.raises(IllegalMove, match="at least one berth free"):
        game.push(Place("tonga", 0))
    assert Place("tonga", 0) not in game.legal_actions()


def test_six_players_fill_exactly_the_twelve_berths_tonga_leaves() -> None:
    game = Tongiaki.new([f"P{i}" for i in range(6)], seed=2)
    for _ in range(12):
        game.push(game.legal_actions()[0])
    assert [len(b) for b in boats(game, "tonga")] == [2] * 6
    assert game.state.step == "turn"


# --------------------------------------------------------------------------- 1. Espansione


def test_expansion_adds_as_many_boats_as_owned_but_not_more_than_beaches() -> None:
    # Red has 3 boats on i13, which has 2 beaches: red adds 2, one on each beach.
    game = laid([tile("i13", 0, 0, boats=[["red", "red"], ["red"]])])
    assert {a for a in game.legal_actions() if isinstance(a, Expand)} == {Expand("i13", (0, 1))}
    with pytest.raises(IllegalMove, match="exactly 2"):
        game.push(Expand("i13", (0,)))
    with pytest.raises(IllegalMove, match="one boat on each beach"):
        game.push(Expand("i13", (0, 0)))
    game.push(Expand("i13", (0, 1)))
    assert boats(game, "i13") == [["red", "red", "red"], ["red", "red"]]
    assert game.to_move() == "Blu"  # no beach filled: the turn ends


def test_expansion_counts_the_boats_owned_at_the_start_of_the_turn() -> None:
    game = laid([empty_tonga(), tile("i13", 1, 0, boats=[["red"], []])])
    with pytest.raises(IllegalMove, match="only on an island where you had a boat"):
        game.push(Expand("tonga", (0,)))
    game.push(Expand("i13", (1,)))
    assert boats(game, "i13") == [["red"], ["red"]]


def test_no_expansion_on_a_royal_island() -> None:
    game = laid([tile("i13", 0, 0, royal="red"), tile("i08", 1, 0, boats=[["red"], []])])
    assert all(a.island != "i13" for a in game.legal_actions() if isinstance(a, Expand))
    with pytest.raises(IllegalMove, match="royal island"):
        game.push(Expand("i13", (0,)))


def test_not_enough_boats_places_only_those_left() -> None:
    # Red has 14 boats on the map and 3 on i13: only one is left to place.
    tonga = tile("tonga", 0, 0, boats=[["red", "red"]] * 5 + [["red"]])
    game = laid([tonga, tile("i13", 3, 0, boats=[["red", "red"], ["red"]])])
    assert game.state.supply["red"] == 1
    game.push(Expand("i13", (1,)))
    assert game.state.supply["red"] == 0


def test_with_every_boat_on_the_map_one_is_taken_from_any_island() -> None:
    tonga = tile("tonga", 0, 0, boats=[["red", "red"]] * 6)
    game = laid([tonga, tile("i13", 3, 0, boats=[["red", "red", "red"], []])])
    assert game.state.supply["red"] == 0
    assert Expand("i13", (1,), take=("tonga", 5)) in game.legal_actions()
    with pytest.raises(IllegalMove, match="name the boat you take"):
        game.push(Expand("i13", (1,)))
    with pytest.raises(IllegalMove, match="no boat to take on beach 1 of i13"):
        game.push(Expand("i13", (1,), take=("i13", 1)))
    game.push(Expand("i13", (1,), take=("tonga", 5)))
    assert boats(game, "tonga")[5] == ["red"]
    assert boats(game, "i13")[1] == ["red"]
    assert game.state.supply["red"] == 0


def test_with_every_boat_on_the_map_taking_one_back_is_a_choice() -> None:
    # Line 192: the player "potrà" (may) take one of their boats; without it they add none.
    tonga = tile("tonga", 0, 0, boats=[["red", "red"]] * 6)
    game = laid([tonga, tile("i13", 3, 0, boats=[["red", "red", "red"], []])])
    assert Expand("i13", ()) in game.legal_actions()
    game.push(Expand("i13", ()))
    assert boats(game, "i13") == [["red", "red", "red"], []]
    assert game.state.supply["red"] == 0 and game.to_move() == "Blu"


def test_a_boat_is_taken_from_the_map_only_when_the_supply_is_empty() -> None:
    game = laid([tile("i13", 0, 0, boats=[["red"], []])])
    with pytest.raises(IllegalMove, match="only when your supply is empty"):
        game.push(Expand("i13", (1,), take=("i13", 0)))


# --------------------------------------------------------------------------- 2. Viaggi per mare


def yellow_fills_a_four_berth_beach(beach: list[str], other: list[str]) -> Tongiaki:
    """i07's beach 0 has 4 berths and piers to the south-east and south-west; yellow moves."""
    game = laid(
        [tile("i07", 0, 0, boats=[beach, other])],
        first=["w14", "i13"],
        to_move=FOUR.index("Giallo"),
    )
    game.push(Expand("i07", (0,)))
    assert game.state.step == "migrate"
    return game


def test_rulebook_example_three_colours_cannot_cross_a_4() -> None:
    # "il giallo ha riempito una spiaggia che contiene 4 spazi e si dirige nell'Oceano con due
    # Barche gialle, una arancio e una rossa. La tessera mare rivelata presenta il valore 4 ...
    # il viaggio fallisce."
    game = yellow_fills_a_four_berth_beach(["yellow", "orange", "red"], [])
    assert sorted(boats(game, "i07")[0]) == ["orange", "red", "yellow", "yellow"]
    assert default_tiles().spec("w14").value == 4
    game.push(Migrate("i07", 0, 1))
    assert hexes(game)["w14"] == neighbour((0, 0), 1)
    assert boats(game, "i07")[0] == []
    assert {c: game.state.supply[c] for c in ("yellow", "orange", "red")} == {
        "yellow": 15,
        "orange": 15,
        "red": 15,
    }
    assert "i13" not in hexes(game)  # the failed voyage reveals nothing more
    assert game.to_move() == "Arancio"


def test_rulebook_example_with_a_blue_boat_the_four_colours_cross() -> None:
    # "Se una delle Barche gialle fosse stata blu, le quattro Barche sarebbero potute passare."
    game = yellow_fills_a_four_berth_beach(["blue", "orange", "red"], ["yellow"])
    game.push(Migrate("i07", 0, 1))
    # Across w14's straight route the fleet reaches the next hex, where i13 is revealed.
    assert hexes(game)["i13"] == neighbour(neighbour((0, 0), 1), 1)
    assert game.state.step == "land"
    assert sorted(game.state.fleet) == ["blue", "orange", "red", "yellow"]


def test_a_revealed_tile_turns_its_red_mark_to_the_route_it_is_reached_by() -> None:
    game = yellow_fills_a_four_berth_beach(["blue", "orange", "red"], ["yellow"])
    game.push(Migrate("i07", 0, 2))
    w14 = game.state.hexes[neighbour((0, 0), 2)]
    # edge 0 of the tile (the red mark) lies on map edge `rotation`, towards i07.
    assert neighbour(neighbour((0, 0), 2), w14.rotation) == (0, 0)


def test_a_water_tile_without_a_number_lets_one_colour_through() -> None:
    game = laid(
        [tile("i07", 0, 0, boats=[["yellow", "yellow", "yellow"], []])],
        first=["w01", "i13"],
        to_move=2,
    )
    game.push(Expand("i07", (0, 1)))
    game.push(Migrate("i07", 0, 1))
    assert game.state.step == "land" and game.state.fleet == ["yellow"] * 4


def test_a_voyage_follows_water_tiles_already_laid() -> None:
    # w14 lies south-east of i07 turned so that its straight route runs on; i13 beyond it.
    game = laid(
        [
            tile("i07", 0, 0, boats=[["blue", "orange", "red"], ["yellow"]]),
            tile("w14", 0, 1, rotation=4),
            tile("i13", 0, 2, rotation=4),
        ],
        to_move=2,
    )
    stack = list(game.state.stack)
    game.push(Expand("i07", (0,)))
    game.push(Migrate("i07", 0, 1))
    assert game.state.step == "land" and game.state.target == "i13"
    assert game.state.stack == stack  # nothing revealed


# --------------------------------------------------------------------------- 3. Sbarcare


def test_landing_puts_one_boat_on_every_beach_before_a_second() -> None:
    game = yellow_fills_a_four_berth_beach(["blue", "orange", "red"], ["yellow"])
    game.push(Migrate("i07", 0, 1))
    game.push(Land(0, "blue"))
    with pytest.raises(IllegalMove, match="i13 has no beach 2"):
        game.push(Land(2, "red"))
    with pytest.raises(IllegalMove, match="one boat of the fleet before any gets a second"):
        game.push(Land(0, "red"))
    game.push(Land(1, "red"))
    game.push(Land(1, "orange"))  # then anywhere, the same colour or not
    game.push(Land(1, "yellow"))
    assert boats(game, "i13") == [["blue"], ["red", "orange", "yellow"]]
    assert game.to_move() == "Arancio"


def excess_landing() -> Tongiaki:
    """Yellow fills i08's 4-berth beach; its west pier leads to i02, which has 2 free berths."""
    game = laid(
        [
            tile("i08", 0, 0, boats=[["yellow"], ["red", "blue", "orange"]]),
            tile("i02", -1, 0, boats=[["red"], ["blue"]]),
        ],
        first=["i01", "w01"],
        to_move=2,
    )
    game.push(Expand("i08", (1,)))
    game.push(Migrate("i08", 1, 3))
    return game


def test_boats_without_a_berth_go_home_and_the_active_player_chooses_which() -> None:
    game = excess_landing()
    assert game.state.target == "i02" and len(game.state.fleet) == 4
    game.push(Land(0, "orange"))
    game.push(Land(1, "yellow"))
    assert game.state.fleet == []
    assert boats(game, "i02") == [["red", "orange"], ["blue", "yellow"]]
    assert game.state.supply["red"] == 14 and game.state.supply["blue"] == 14
    assert any("go back to their owners" in line for line in game.state.news)


def test_chain_reaction_the_full_beaches_of_the_new_island_migrate_in_the_players_order() -> None:
    game = excess_landing()
    game.push(Land(0, "orange"))
    game.push(Land(1, "yellow"))
    assert game.state.step == "migrate" and game.to_move() == "Giallo"
    options = set(game.legal_actions())
    assert options == {Migrate("i02", 0, 2), Migrate("i02", 1, 4), Migrate("i02", 1, 5)}
    game.push(Migrate("i02", 0, 2))  # i01 is revealed and the two boats land there
    assert game.state.target == "i01"
    i01 = game.state.hexes[hexes(game)["i01"]]
    assert neighbour(hexes(game)["i01"], i01.rotation) == (-1, 0)


# --------------------------------------------------------------------------- Isole reali


def red_fleet_lands_on_i13(i13: list[list[str]], **more: object) -> Tongiaki:
    """Red fills i07's 4-berth beach with red boats alone; they sail south-east and land on
    i13, which holds `i13`'s boats."""
    game = laid(
        [tile("i07", 0, 0, boats=[["red", "red", "red"], []]), tile("i13", 0, 1, boats=i13)],
        **more,  # type: ignore[arg-type]
    )
    game.push(Expand("i07", (0, 1)))
    game.push(Migrate("i07", 0, 1))
    assert game.state.target == "i13"
    for _ in range(4):
        game.push(game.legal_actions()[0])
    return game


def test_founding_a_royal_island_puts_one_boat_in_the_centre_and_ends_the_turn() -> None:
    # Lines 141-143: only red's boats arrived and landed on i13, which held one blue boat: red
    # may found a royal island; one red boat goes to the centre, every boat left there goes
    # home, and the turn ends.
    game = red_fleet_lands_on_i13([["blue"], []])
    assert game.state.step == "royal" and game.to_move() == "Rosso"
    assert set(game.legal_actions()) == {Royal("i13"), Decline()}
    game.push(Royal("i13"))
    h = game.state.hexes[(0, 1)]
    assert h.royal == "red" and h.boats == [[], []]
    assert game.state.supply["red"] == 13 and game.state.supply["blue"] == 15
    assert game.to_move() == "Blu"
    score = {p.name: p.total for p in game.score().players}
    assert score["Rosso"] == 8 and score["Blu"] == 0


def test_founding_a_royal_island_may_be_declined() -> None:
    game = red_fleet_lands_on_i13([["blue"], []])
    game.push(Decline())
    assert sorted(c for b in boats(game, "i13") for c in b) == ["blue", "red", "red", "red", "red"]
    assert game.state.hexes[(0, 1)].royal is None and game.to_move() == "Blu"


def test_a_royal_island_is_founded_only_by_a_fleet_just_landed() -> None:
    # Boats that have sat on an island for turns found nothing: no turn-start royal island.
    game = laid([empty_tonga(), tile("i13", 1, 0, boats=[["red", "red"], ["red"]])])
    assert not any(isinstance(a, Royal) for a in game.legal_actions())
    with pytest.raises(IllegalMove, match="not the move the game waits for"):
        game.push(Royal("i13"))


def test_a_royal_island_only_where_the_fleet_is_the_players_alone() -> None:
    # The rulebook's example fleet (yellow, orange, red) lands on i13: no royal island.
    game = red_fleet_lands_on_i13([[], []], names=("Rosso", "Blu"))
    assert game.state.step == "royal"
    game = laid(
        [
            tile("i07", 0, 0, boats=[["red", "blue", "red"], []]),
            tile("i13", 0, 1, boats=[["red"], []]),
        ]
    )
    game.push(Expand("i07", (0, 1)))
    game.push(Migrate("i07", 0, 1))
    for _ in range(4):
        game.push(game.legal_actions()[0])
    assert game.state.step == "turn" and game.to_move() == "Blu"
    assert not any(isinstance(a, Royal) for a in game.legal_actions())


def test_tonga_cannot_become_a_royal_island() -> None:
    # Red's boats alone sail from i07 and land on Tonga: nothing to found there (line 149).
    game = laid([tile("i07", 0, 0, boats=[["red", "red", "red"], []]), tile("tonga", 0, 1)])
    game.push(Expand("i07", (0, 1)))
    game.push(Migrate("i07", 0, 1))
    assert game.state.target == "tonga"
    for _ in range(4):
        game.push(game.legal_actions()[0])
    assert game.state.step == "turn" and game.to_move() == "Blu"


def test_no_more_than_two_royal_islands_per_player() -> None:
    game = laid(
        [
            tile("i07", 0, 0, boats=[["red", "red", "red"], []]),
            tile("i13", 0, 1),
            tile("i01", 5, 5, royal="red"),
            tile("i02", 7, 5, royal="red"),
        ]
    )
    game.push(Expand("i07", (0, 1)))
    game.push(Migrate("i07", 0, 1))
    for _ in range(4):
        game.push(game.legal_actions()[0])
    assert game.state.step == "turn" and game.to_move() == "Blu"


def test_a_fleet_that_reaches_a_royal_island_lands_back_where_it_left() -> None:
    # i08's 4-berth beach has piers west and north-west; both lead to royal islands.
    game = laid(
        [
            tile("i08", 0, 0, boats=[[], ["red", "blue", "orange"]]),
            tile("i01", -1, 0, royal="blue"),
            tile("i02", 0, -1, royal="orange"),
        ],
        to_move=0,
    )
    game.push(Expand("i08", (1,)))
    game.push(Migrate("i08", 1, 3))
    assert game.state.target == "i08"
    assert any("royal island turns the fleet back" in line for line in game.state.news)


def test_piers_and_order_are_the_players_choice_even_a_route_back_home() -> None:
    # Lines 85 and 216: Tonga's beaches 0 (east, facing a royal island) and 3 (west) are
    # full. Sailing east only brings the boats back to Tonga, one a beach: no endless cycle,
    # so it may be chosen first.
    game = laid(
        [
            tile("tonga", 0, 0, boats=[["red", "blue"], [], [], ["red", "yellow"], [], []]),
            tile("i13", 1, 0, royal="blue"),
        ]
    )
    game.push(Expand("tonga", (0, 3)))
    assert set(game.legal_actions()) == {Migrate("tonga", 0, 0), Migrate("tonga", 3, 3)}
    game.push(Migrate("tonga", 0, 0))
    assert game.state.target == "tonga"
    for beach in (1, 2, 4):
        game.push(next(a for a in game.legal_actions() if isinstance(a, Land) and a.beach == beach))
    assert [len(b) for b in boats(game, "tonga")] == [0, 1, 1, 3, 1, 0]
    assert game.legal_actions() == [Migrate("tonga", 3, 3)]


# --------------------------------------------------------------------------- Nuovi insediamenti


def test_resettling_takes_every_boat_off_and_settles_the_first_island_revealed() -> None:
    game = laid(
        [tile("tonga", 0, 0, boats=[["red", "blue"], ["red"], [], [], [], []])],
        first=["w01", "w05", "i13"],
    )
    game.push(Resettle())
    assert boats(game, "tonga")[:2] == [["blue"], []] and game.state.supply["red"] == 15
    assert game.state.step == "lay"
    with pytest.raises(IllegalMove, match="empty hex next to the map"):
        game.push(Lay(5, 5, 0))
    game.push(Lay(1, 0, 0))
    game.push(Lay(2, 0, 3))
    game.push(Lay(3, 0, 1))
    assert hexes(game)["i13"] == (3, 0) and game.state.step == "settle"
    with pytest.raises(IllegalMove, match="goes on i13"):
        game.push(Place("tonga", 2))
    game.push(Place("i13", 1))
    assert boats(game, "i13") == [[], ["red"]] and game.to_move() == "Blu"


# --------------------------------------------------------------------------- Situazioni speciali


def test_with_no_boat_on_the_map_two_new_boats_on_tonga_or_one_anywhere() -> None:
    game = laid(
        [tile("tonga", 0, 0, boats=[["blue"], [], [], [], [], []]), tile("i13", 1, 0)],
    )
    actions = game.legal_actions()
    assert not any(isinstance(a, Expand) for a in actions)
    assert Arrive("tonga", (0, 3)) in actions and Arrive("tonga", (2, 2)) in actions
    assert Arrive("i13", (1,)) in actions and Arrive("i13", (0, 1)) not in actions
    game.push(Arrive("tonga", (3, 0)))
    assert boats(game, "tonga")[0] == ["blue", "red"] and boats(game, "tonga")[3] == ["red"]


def test_new_boats_do_not_expand_but_a_beach_they_fill_migrates() -> None:
    game = laid(
        [
            tile("tonga", 0, 0, boats=[["blue", "blue"], [], [], [], [], []]),
            tile("i13", 1, -1, royal="blue"),
        ],
        first=["w01", "i02"],
    )
    with pytest.raises(IllegalMove, match="royal island"):
        game.push(Arrive("i13", (0,)))
    game.push(Arrive("tonga", (0,)))
    assert game.state.step == "migrate" and game.to_move() == "Rosso"
    assert game.legal_actions() == [Migrate("tonga", 0, 0)]


def test_new_boats_only_for_a_player_with_none_on_the_map() -> None:
    game = laid([tile("tonga", 0, 0, boats=[["red"], [], [], [], [], []])])
    with pytest.raises(IllegalMove, match="no boat on the map"):
        game.push(Arrive("tonga", (1, 2)))


def cut_off_i01() -> Tongiaki:
    """i01's two piers face royal islands: its boats can only come back to i01. Red fills both
    beaches; the boats of beach 0 sail, come back, and can only fill beach 0 again."""
    game = laid(
        [
            tile("i01", 0, 0, boats=[["red"], ["red", "blue"]]),
            tile("i13", 0, 1, royal="blue"),
            tile("i08", 0, -1, royal="yellow"),
        ],
        first=["w01", "i02"],
    )
    game.push(Expand("i01", (0, 1)))
    assert set(game.legal_actions()) == {Migrate("i01", 0, 1), Migrate("i01", 1, 4)}
    game.push(Migrate("i01", 0, 1))
    assert game.state.target == "i01"
    game.push(Land(0, "red"))
    game.push(Land(0, "red"))
    game.push(Decline())  # red's own boats landed on i01: red could found a royal island
    return game


def test_a_choice_that_comes_back_to_the_same_position_is_asked_again() -> None:
    # Line 216: the player has another choice, so they must make one that is not a cycle;
    # no boat goes home.
    game = cut_off_i01()
    assert boats(game, "i01") == [["red", "red"], ["red", "blue", "red"]]
    assert game.state.step == "migrate" and game.to_move() == "Rosso"
    assert game.legal_actions() == [Migrate("i01", 1, 4)]
    with pytest.raises(IllegalMove, match="came back to this same position"):
        game.push(Migrate("i01", 0, 1))
    assert any("choose another migration" in line for line in game.state.news)


def test_infinite_cycle_the_cut_off_island_leaves_the_map_and_its_boats_go_home() -> None:
    game = cut_off_i01()
    game.push(Migrate("i01", 1, 4))  # the last choice also comes back: lines 202-205
    for colour in ("blue", "red", "red"):
        game.push(Land(1, colour))
    assert "i01" not in hexes(game) and game.state.removed == ["i01"]
    assert game.state.supply["red"] == 15 and game.state.supply["blue"] == 14
    # Red has no boat left on the map: red reveals tiles until a new island is laid.
    assert game.state.step == "lay" and game.to_move() == "Rosso"
    game.push(Lay(1, 0, 0))
    game.push(Lay(2, 0, 0))
    assert hexes(game)["i02"] == (2, 0) and game.to_move() == "Blu"


# --------------------------------------------------------------------------- Fine della partita


def far_away(ids: list[str]) -> list[dict[str, object]]:
    return [tile(t, 10 + 2 * k, 10) for k, t in enumerate(ids)]


def test_the_last_island_still_lands_then_the_game_ends() -> None:
    islands = [
        t
        for t, s in default_tiles().tiles.items()
        if s.kind == "island" and t not in ("i15", "i07")
    ]
    game = laid(
        [tile("i07", 0, 0, boats=[["blue", "orange", "red"], ["yellow"]]), *far_away(islands)],
        first=["i15"],
        to_move=2,
    )
    game.push(Expand("i07", (0,)))
    game.push(Migrate("i07", 0, 1))
    assert game.state.step == "land" and not game.over
    for _ in range(4):
        game.push(game.legal_actions()[0])
    assert game.over and game.to_move() is None and game.legal_actions() == []
    assert sum(len(b) for b in boats(game, "i15")) == 4


def test_the_last_water_tile_leaves_the_fleet_at_sea_and_the_game_ends() -> None:
    waters = [t for t, s in default_tiles().tiles.items() if s.kind == "water" and t != "w16"]
    game = laid(
        [tile("i07", 0, 0, boats=[["blue", "orange", "red"], ["yellow"]]), *far_away(waters)],
        first=["w16"],
        to_move=2,
    )
    game.push(Expand("i07", (0,)))
    game.push(Migrate("i07", 0, 1))
    assert game.over
    assert game.state.supply == {"red": 14, "blue": 14, "yellow": 13, "orange": 14}


def test_final_score_islands_with_a_boat_ties_by_islands_then_fewer_boats() -> None:
    # Rosso and Blu both score 5; Rosso is on 2 islands (Tonga and i13), Blu on 1 (i15):
    # Rosso wins although Blu has fewer boats on the map.
    game = laid(
        [
            tile("tonga", 0, 0, boats=[["red", "red"], ["red"], [], [], [], []]),
            tile("i13", 2, 0, boats=[["red"], []]),
            tile("i15", 4, 0, boats=[["blue", "blue"], [], []]),
        ]
    )
    table = game.score()
    assert [(p.name, p.total, p.breakdown["islands"]) for p in table.players][:2] == [
        ("Rosso", 5, 2),
        ("Blu", 5, 1),
    ]
    assert table.winners == ("Rosso",)


def test_a_chain_with_every_choice_tried_sends_the_full_beaches_boats_home() -> None:
    # The rulebook is silent on boats sent to and fro between islands: when every migration
    # of a position has come back to it, the boats of the full beaches go home.
    game = laid([tile("i07", 0, 0, boats=[["blue", "orange", "red"], ["yellow"]])], to_move=2)
    game.push(Expand("i07", (0,)))
    assert game.state.step == "migrate"
    key = game._position_key()
    game.state.tried[key] = set(game._every_migration())  # as a chain coming round leaves it
    game._advance()
    assert boats(game, "i07") == [[], ["yellow"]]
    assert game.state.supply == {"red": 15, "blue": 15, "yellow": 14, "orange": 15}
    assert game.to_move() == "Arancio"
    assert any("go back to their owners" in line for line in game.state.news)


def test_the_last_island_laid_the_turn_goes_on_to_its_end() -> None:
    # Line 171: the active player completes their turn, then the game ends. The fleet fills
    # beach 0 of i01, the last island: that beach still migrates.
    islands = [
        t
        for t, s in default_tiles().tiles.items()
        if s.kind == "island" and t not in ("i01", "i07")
    ]
    game = laid(
        [tile("i07", 0, 0, boats=[["blue", "orange", "red"], ["yellow"]]), *far_away(islands)],
        first=["i01"],
        to_move=2,
    )
    game.push(Expand("i07", (0,)))
    game.push(Migrate("i07", 0, 1))
    for beach in (0, 1, 0, 1):
        game.push(next(a for a in game.legal_actions() if isinstance(a, Land) and a.beach == beach))
    assert boats(game, "i01")[0] and len(boats(game, "i01")[0]) == 2
    assert game.state.step == "migrate" and not game.over and game.to_move() == "Giallo"
    for _ in range(50):
        if game.over:
            break
        assert game.to_move() == "Giallo"
        game.push(game.legal_actions()[0])
    assert game.over


def test_on_the_map_counts_a_royal_islands_boat_for_every_rule() -> None:
    # Lines 177 and 183 say "sulla mappa" alike: red's one boat, in a royal island's centre,
    # counts for the tie-break and means red does not bring new boats in.
    game = laid(
        [tile("tonga", 0, 0, boats=[["blue"], [], [], [], [], []]), tile("i13", 1, 0, royal="red")]
    )
    assert game.legal_actions() == [Resettle()]
    with pytest.raises(IllegalMove, match="no boat on the map"):
        game.push(Arrive("tonga", (1, 2)))
    assert {p.name: p.breakdown["boats"] for p in game.score().players}["Rosso"] == 1
