"""Giants rules beyond the worked examples: setup, the phases, refusals, the end and rulings."""

from __future__ import annotations

import pytest

from companion.errors import GameOver, IllegalMove
from companion.games.giants import (
    Bid,
    Choose,
    GiantsGame,
    Island,
    Mark,
    Move,
    Pass,
    Place,
    Reclaim,
    Roll,
    TakeRongo,
    default_island,
)
from companion.games.giants.rules import help_options
from companion.games.giants.state import Piece
from tests.companion.games.giants.test_examples import (
    island,
    item,
    logs,
    prestige,
    put,
    transport_game,
)


def line() -> Island:
    return island(
        {"M": (0, 0), "A": (1, 0), "B": (2, 0), "C": (3, 0)},
        {"b1": ("B", 4, 4), "c1": ("C", 6, 5), "c2": ("C", 6, 5)},
    )


# --- setup ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(("players", "bases", "dice"), [(3, 7, 3), (4, 6, 4), (5, 5, 5)])
def test_setup_by_player_count(players: int, bases: int, dice: int) -> None:
    names = [f"P{i}" for i in range(players)]
    game = GiantsGame.new(names)
    for clan in game.state.clans:
        assert (clan.bases, clan.workers, clan.markers, clan.sorcerer, clan.chief) == (
            bases,
            1,
            2,
            True,
            True,
        )
    roll = game.legal_actions()[0]
    assert isinstance(roll, Roll) and len(roll.dice) == dice
    with pytest.raises(IllegalMove, match=f"rolls {dice} dice"):
        game.push(Roll("P0", (1,) * (dice + 1)))


def test_two_workers_option() -> None:
    game = GiantsGame.new(["A", "B", "C"], two_workers=True)
    assert [c.workers for c in game.state.clans] == [2, 2, 2]
    assert game.state.container_workers == [4, 4, 4]


@pytest.mark.parametrize("names", [["A", "B"], ["A", "B", "C", "D", "E", "F"]])
def test_player_counts_outside_three_to_five_are_refused(names: list[str]) -> None:
    with pytest.raises(IllegalMove, match="3 to 5 players"):
        GiantsGame.new(names)


def test_names_must_differ() -> None:
    with pytest.raises(IllegalMove, match="same name"):
        GiantsGame.new(["Ana", "ana", "Bo"])


# --- phase 1: the dice ----------------------------------------------------------------------------


def test_first_turn_counts_zero_as_one_and_three_as_two() -> None:
    game = GiantsGame.new(["A", "B", "C"])
    game.push(Roll("A", (0, 3, 2)))
    assert game.state.quarry == [1, 2, 2]


def test_later_turns_read_the_dice_as_they_fall_and_zero_is_no_moai() -> None:
    game = GiantsGame.new(["A", "B", "C"])
    game.state.round = 2
    game.push(Roll("A", (0, 3, 1)))
    assert game.state.quarry == [1, 3]


def test_an_exhausted_size_is_a_broken_moai() -> None:
    game = GiantsGame.new(["A", "B", "C"])
    game.state.round = 2
    game.state.stock = [5, 5, 1]
    game.push(Roll("A", (3, 3, 2)))
    assert game.state.quarry == [2, 3] and game.state.broken == 1
    assert game.state.stock == [5, 4, 0]


def test_a_face_the_die_does_not_have_is_refused() -> None:
    game = GiantsGame.new(["A", "B", "C"])
    with pytest.raises(IllegalMove, match="white die has no face 4"):
        game.push(Roll("A", (4, 1, 1)))


# --- phase 2: the auction -------------------------------------------------------------------------


def rolled(names: list[str], dice: tuple[int, ...]) -> GiantsGame:
    game = GiantsGame.new(names)
    game.state.round = 2
    game.push(Roll(names[0], dice))
    return game


def test_bids_cannot_exceed_what_is_behind_the_screen() -> None:
    game = rolled(["A", "B", "C"], (1, 2, 3))
    with pytest.raises(IllegalMove, match="only 2 tribe markers"):
        game.push(Bid("B", markers=3))
    with pytest.raises(IllegalMove, match="only 1 workers"):
        game.push(Bid("B", workers=2))
    game.push(Bid("B", markers=1))
    with pytest.raises(IllegalMove, match="already bid"):
        game.push(Bid("B"))


def test_bid_pieces_are_out_for_the_rest_of_the_turn() -> None:
    game = rolled(["A", "B", "C"], (1, 2, 3))
    game.push(Bid("A", markers=2, chief=True))
    game.push(Bid("B"))
    game.push(Bid("C"))
    game.push(Choose("A", 1))
    # A's 2 sculptors left can still take the 2 in a second round.
    assert game.to_move() == "A"
    game.push(Choose("A", 2))
    assert game.state.phase == "place"
    with pytest.raises(IllegalMove, match="chief is not behind the screen"):
        game.push(Place("A", "chief", "h06"))
    with pytest.raises(IllegalMove, match="no tribe marker left"):
        game.push(TakeRongo("A"))


def test_a_player_may_decline_a_moai() -> None:
    game = rolled(["A", "B", "C"], (1, 1, 0))
    game.push(Bid("A", workers=1))
    game.push(Bid("B", workers=1))
    game.push(Bid("C"))
    game.push(Pass("A"))
    game.push(Choose("B", 1))
    assert game.state.phase == "place"  # the other Moai leaves the game
    assert game.state.quarry == [] and game.state.stock[0] == 15


# --- phase 3: placing -----------------------------------------------------------------------------


def placing(names: list[str]) -> GiantsGame:
    game = rolled(names, (0, 0, 0))
    for name in names:
        game.push(Bid(name))
    assert game.state.phase == "place"
    return game


def test_placing_refusals() -> None:
    game = placing(["A", "B", "C"])
    land = game.island
    forest = next(h.id for h in land.hexes if h.kind == "forest")
    coast = land.ahus[0].hex
    with pytest.raises(IllegalMove, match="no hex h99"):
        game.push(Place("A", "worker", "h99"))
    with pytest.raises(IllegalMove, match="has only 0 logs"):
        game.push(Place("A", "worker", "h06", logs=1))
    with pytest.raises(IllegalMove, match="Only the sorcerer"):
        game.push(Place("A", "worker", forest, power=True))
    with pytest.raises(IllegalMove, match="whole Rongo tablet"):
        game.push(Place("A", "chief", forest, power=True))
    with pytest.raises(IllegalMove, match="no power to use"):
        game.push(Place("A", "sorcerer", land.only("moai_quarry"), power=True))
    with pytest.raises(IllegalMove, match="Name the Ahu"):
        game.push(Place("A", "sorcerer", coast, power=True))
    with pytest.raises(IllegalMove, match="An Ahu is named only"):
        game.push(Place("A", "worker", coast, ahu=land.ahus[0].id))
    with pytest.raises(IllegalMove, match="It is A's turn"):
        game.push(Place("B", "worker", "h06"))
    assert len(game.events) == 5  # setup, roll, 3 bids: nothing refused was recorded


def test_a_cut_forest_yields_no_more_logs() -> None:
    game = placing(["A", "B", "C"])
    forest = next(h for h in game.island.hexes if h.kind == "forest")
    game.push(Place("A", "sorcerer", forest.id, power=True))
    assert game.state.clan("A").logs == forest.logs
    with pytest.raises(IllegalMove, match="already been cut"):
        game.push(Place("B", "sorcerer", forest.id, power=True))
    game.push(Place("B", "sorcerer", forest.id))  # standing there without the power is fine


def test_reserving_an_ahu_and_the_reserved_ahu_is_its_owner_s_alone() -> None:
    game = placing(["A", "B", "C"])
    ahu = game.island.ahus[0]
    game.push(Place("A", "sorcerer", ahu.hex, power=True, ahu=ahu.id))
    assert game.state.ahus[ahu.id].base == "A" and game.state.clan("A").bases == 6
    with pytest.raises(IllegalMove, match="already holds a base"):
        game.push(Place("B", "sorcerer", ahu.hex, power=True, ahu=ahu.id))


def test_chief_breaks_a_rongo_tablet_for_a_power_and_the_halves_go_back_to_the_box() -> None:
    game = placing(["A", "B", "C"])
    game.state.clan("A").rongo = 3
    box = game.state.rongo
    game.push(Place("A", "chief", game.island.only("hut"), power=True))
    a = game.state.clan("A")
    assert (a.rongo, a.markers, game.state.rongo) == (1, 3, box + 2)


def test_the_container_runs_out() -> None:
    game = placing(["A", "B", "C"])
    game.state.container_workers[0] = 0
    with pytest.raises(IllegalMove, match="No A worker is left in the container"):
        game.push(Place("A", "sorcerer", game.island.only("village"), power=True))


def test_rongo_half_for_a_tribe_marker() -> None:
    game = placing(["A", "B", "C"])
    game.push(TakeRongo("A"))
    assert game.state.clan("A").rongo == 1 and game.state.clan("A").free_markers == 1


def test_the_last_player_in_keeps_placing() -> None:
    game = placing(["A", "B", "C"])
    for name in ("A", "B"):  # only tribe markers left: their pass is final
        clan = game.state.clan(name)
        clan.free_workers, clan.sorcerer, clan.chief = 0, False, False
    game.push(Pass("A"))
    game.push(Pass("B"))
    game.push(Place("C", "worker", "h06"))
    assert game.to_move() == "C"
    game.push(Place("C", "sorcerer", "h06"))
    assert game.to_move() == "C"


def test_a_pass_with_pieces_left_is_not_final() -> None:
    """259: "non può fare nient'altro durante questa fase, a meno che non siano ancora
    disponibili delle pedine"."""
    game = placing(["A", "B", "C"])
    game.push(Pass("A"))
    assert game.view()["players"][0]["passed"]
    game.push(Place("B", "worker", "h06"))
    game.push(Place("C", "worker", "h06"))
    assert game.to_move() == "A"  # asked again: pieces are still available
    game.push(Place("A", "worker", "h07"))
    assert game.state.clan("A").free_workers == 0


def test_placing_ends_when_everyone_passes_in_a_row() -> None:
    game = placing(["A", "B", "C"])
    game.push(Place("A", "worker", "h06"))
    for name in ("B", "C"):
        game.push(Pass(name))
    assert game.to_move() == "A"
    game.push(Pass("A"))
    assert game.state.phase != "place"


def test_a_pass_with_no_piece_left_is_final() -> None:
    """The placing example's Red, with only a log, passes and is asked no more."""
    game = placing(["A", "B", "C"])
    game.state.clan("A").free_workers = 0
    game.state.clan("A").sorcerer = game.state.clan("A").chief = False
    game.state.clan("A").free_markers = 2
    game.push(TakeRongo("A"))
    game.push(Place("B", "worker", "h06"))
    game.push(Place("C", "worker", "h06"))
    game.push(Pass("A"))
    game.push(Place("B", "sorcerer", "h06"))
    game.push(Place("C", "sorcerer", "h06"))
    assert game.to_move() == "B"


def test_the_chief_may_carry_logs_though_it_needs_none() -> None:
    """157: a log with the chief "non ha senso", but nothing forbids it."""
    game = placing(["A", "B", "C"])
    game.state.clan("A").logs = 2
    assert Place("A", "chief", "h06", logs=2) in game.legal_actions()
    game.push(Place("A", "chief", "h06", logs=2))
    assert game.state.board_logs["h06"] == 2 and game.state.clan("A").logs == 0


def test_the_chief_breaks_more_tablets_for_more_actions() -> None:
    """251: one action a turn "a meno che non siano disponibili altre tavolette Rongo
    complete"."""
    game = placing(["A", "B", "C"])
    a = game.state.clan("A")
    a.rongo = 5
    village = game.island.only("village")
    assert Place("A", "chief", village, power=True, tablets=2) in game.legal_actions()
    assert Place("A", "chief", village, power=True, tablets=3) not in game.legal_actions()
    with pytest.raises(IllegalMove, match="Breaking 3 Rongo tablets takes 6 halves; A has 5"):
        game.push(Place("A", "chief", village, power=True, tablets=3))
    game.push(Place("A", "chief", village, power=True, tablets=2))
    a = game.state.clan("A")
    assert (a.rongo, a.workers, a.free_workers) == (1, 3, 3)
    assert game.state.rongo == game.island.rongo_halves + 4


def test_a_second_tablet_needs_a_second_use() -> None:
    game = placing(["A", "B", "C"])
    game.state.clan("A").rongo = 4
    forest = next(h.id for h in game.island.hexes if h.kind == "forest")
    with pytest.raises(IllegalMove, match="A forest is cut once"):
        game.push(Place("A", "chief", forest, power=True, tablets=2))
    with pytest.raises(IllegalMove, match="Only the chief"):
        game.push(Place("A", "sorcerer", forest, power=True, tablets=2))
    game.state.container_markers[0] = 1
    with pytest.raises(IllegalMove, match="Only 1 A tribe markers are left in the container"):
        game.push(Place("A", "chief", game.island.only("hut"), power=True, tablets=2))
    single = next(a for a in game.island.ahus if len(game.island.ahus_at[a.hex]) == 1)
    with pytest.raises(IllegalMove, match="no other free Ahu"):
        game.push(Place("A", "chief", single.hex, power=True, ahu=single.id, tablets=2))
    pair = next(h for h, ahus in game.island.ahus_at.items() if len(ahus) == 2)
    first, second = game.island.ahus_at[pair]
    game.push(Place("A", "chief", pair, power=True, ahu=second, tablets=2))
    assert {game.state.ahus[x].base for x in (first, second)} == {"A"}
    assert game.state.clan("A").bases == 5


# --- phase 4: transport ---------------------------------------------------------------------------


def test_capacity_by_size() -> None:
    """Size 1: a worker or a chief; size 2: 2 workers, worker and log, or a chief; size 3:
    3 workers, worker and 2 logs, 2 workers and a log, or a chief."""
    game = transport_game(["A", "B", "C"], line(), "A")
    cases = {
        (1, 0, False): {1: True, 2: False, 3: False},
        (2, 0, False): {1: True, 2: True, 3: False},
        (1, 1, False): {1: True, 2: True, 3: False},
        (1, 2, False): {1: True, 2: True, 3: True},
        (2, 1, False): {1: True, 2: True, 3: True},
        (3, 0, False): {1: True, 2: True, 3: True},
        (0, 2, False): {1: False, 2: False, 3: False},
        (0, 0, True): {1: True, 2: True, 3: True},
    }
    for (workers, wood, chief), can in cases.items():
        game.state.pieces = {}
        game.state.board_logs = {}
        put(game, "A", "A", n=workers)
        if chief:
            put(game, "A", "A", "chief")
        logs(game, "A", wood)
        for size, ok in can.items():
            assert (help_options(game.state, "A", "A", size) is not None) == ok, (workers, size)


def test_the_mover_names_who_helps_at_the_same_cost() -> None:
    game = transport_game(["A", "B", "C"], line(), "A")
    moai = item(game, "A", 1)
    put(game, "A", "B")
    put(game, "A", "C")
    assert help_options(game.state, "A", "A", 1) == [(("B", 1),), (("C", 1),)]
    with pytest.raises(IllegalMove, match="1 to B; 1 to C"):
        game.push(Move("A", moai, ("A",), mark=True, help=((("B", 1), ("C", 1)),)))
    game.push(Move("A", moai, ("A",), mark=True, help=((("C", 1),),)))
    assert prestige(game) == {"A": 0, "B": 0, "C": 1}


def test_the_mover_gives_the_points_to_whom_they_choose() -> None:
    """326: "il giocatore darà i punti prestigio (PP) al giocatore di sua scelta", though
    another's chief costs more than another's worker."""
    game = transport_game(["A", "B", "C"], line(), "A")
    moai = item(game, "A", 2)
    put(game, "A", "B")
    put(game, "A", "C", "chief")
    logs(game, "A", 1)
    # B's worker and the log, or C's chief: the cheapest first.
    assert help_options(game.state, "A", "A", 2) == [(("B", 1),), (("C", 2),)]
    assert help_options(game.state, "A", "A", 1) == [(("B", 1),), (("C", 1),)]
    game.push(Move("A", moai, ("A",), mark=True, help=((("C", 2),),)))
    assert prestige(game) == {"A": 0, "B": 0, "C": 2}


def test_help_ways_lists_the_choices_along_a_path_for_a_tap_page() -> None:
    game = transport_game(["A", "B", "C"], line(), "A")
    moai = item(game, "A", 2)
    put(game, "A", "B")
    put(game, "A", "C", "chief")
    logs(game, "A", 1)
    put(game, "B", "A", n=2)
    assert game.help_ways(moai, ["A", "B"]) == [[{"B": 1}, {"C": 2}], [{}]]
    assert game.help_ways(moai, ["A", "C"]) == []  # nobody on C carries it
    assert game.help_ways("moai99", ["A"]) == []


def test_no_help_is_paid_for_nothing() -> None:
    game = transport_game(["A", "B", "C"], line(), "A")
    moai = item(game, "A", 1)
    put(game, "A", "A")
    put(game, "A", "B")
    put(game, "A", "C", "chief")
    assert help_options(game.state, "A", "A", 1) == [()]  # A's own worker is enough
    with pytest.raises(IllegalMove, match="the help must be one of nobody"):
        game.push(Move("A", moai, ("A",), mark=True, help=((("B", 1),),)))
    put(game, "B", "B", n=2)
    put(game, "B", "C")
    # A size 1 needs one helper, not two.
    assert help_options(game.state, "B", "A", 1) == [(("B", 1),), (("C", 1),)]


def test_powered_sorcerer_and_chief_carry_nothing() -> None:
    game = transport_game(["A", "B", "C"], line(), "A")
    game.state.pieces["A"] = []
    from companion.games.giants.state import Piece

    game.state.pieces["A"] += [Piece("A", "sorcerer", powered=True), Piece("B", "chief", True)]
    assert help_options(game.state, "A", "A", 1) is None
    game.state.pieces["A"].append(Piece("A", "sorcerer"))
    assert help_options(game.state, "A", "A", 1) == [()]


def test_a_path_must_be_connected_and_never_revisit_a_hex_in_a_turn() -> None:
    game = transport_game(["A", "B", "C"], line(), "A")
    moai = item(game, "A", 1)
    item(game, "B", 1)
    for h in "ABC":
        put(game, h, "A")
    with pytest.raises(IllegalMove, match="Hex B does not touch hex M"):
        game.push(Move("A", moai, ("B",), mark=True))
    game.push(Move("A", moai, ("A", "B")))
    game.push(Pass("B"))
    with pytest.raises(IllegalMove, match="already been on hex A this turn"):
        game.push(Move("A", moai, ("A",)))


def test_erecting_on_a_base_and_reserved_ahus() -> None:
    game = transport_game(["A", "B", "C"], line(), "A")
    moai = item(game, "A", 1)
    item(game, "B", 1)
    put(game, "A", "A")
    put(game, "B", "A")
    put(game, "C", "A")
    game.state.ahus["b1"].base, game.state.ahus["b1"].reserved = "B", True
    with pytest.raises(IllegalMove, match="Ahu b1 is reserved by B"):
        game.push(Move("A", moai, ("A", "B"), erect="b1"))
    with pytest.raises(IllegalMove, match="Ahu c1 touches hex C, not hex B"):
        game.push(Move("A", moai, ("A", "B"), erect="c1"))
    with pytest.raises(IllegalMove, match="An erected Moai is not marked"):
        game.push(Move("A", moai, ("A", "B", "C"), erect="c1", mark=True))
    game.push(Move("A", moai, ("A", "B", "C"), erect="c1"))
    a = game.state.clan("A")
    assert (a.bases, a.erected, game.state.ahus["c1"].base) == (6, 1, "A")


def test_no_base_left_no_moai_erected() -> None:
    game = transport_game(["A", "B", "C"], line(), "A")
    moai = item(game, "A", 1)
    put(game, "A", "A")
    game.state.clan("A").bases = 0
    put(game, "B", "A")
    with pytest.raises(IllegalMove, match="no base left"):
        game.push(Move("A", moai, ("A", "B"), erect="b1"))


def test_others_cannot_take_what_a_player_moved_this_turn() -> None:
    game = transport_game(["A", "B", "C"], line(), "A")
    moai = item(game, "A", 1)
    item(game, "B", 1)
    put(game, "A", "A")
    game.push(Move("A", moai, ("A",)))  # left unmarked
    assert game.to_move() == "B"
    with pytest.raises(IllegalMove, match="is A's this turn"):
        game.push(Mark("B", moai))


def test_unmoved_moai_goes_to_the_quarry_and_unmarked_ones_are_abandoned() -> None:
    game = transport_game(["A", "B", "C"], line(), "A")
    fresh = item(game, "A", 2)
    moved = item(game, "B", 1)
    put(game, "A", "B")
    game.push(Pass("A"))
    game.push(Move("B", moved, ("A",)))
    game.push(Pass("B"))
    s = game.state
    assert s.phase == "marking" and game.to_move() == "A"
    assert game.legal_actions() == [Mark("A", fresh), Pass("A")]
    game.push(Pass("A"))
    s = game.state
    assert s.phase == "roll"
    assert (s.items[fresh].hex, s.items[fresh].owner) == ("M", None)
    assert (s.items[moved].hex, s.items[moved].owner) == ("A", None)


def test_an_unmoved_moai_is_marked_at_the_end_of_transport_after_its_owner_passed() -> None:
    """366: "Il Giocatore può immediatamente marchiarlo se ha a disposizione un segnalino
    Tribù", whether or not they passed in the transport phase."""
    game = transport_game(["A", "B", "C"], line(), "A")
    fresh = item(game, "A", 2)
    headdress = item(game, "A", kind="headdress")
    put(game, "A", "B")
    game.push(Pass("A"))  # A has passed; B and C have nothing to move: the phase ends
    assert game.state.phase == "marking" and game.to_move() == "A"
    assert game.legal_actions() == [Mark("A", fresh), Mark("A", headdress), Pass("A")]
    game.push(Mark("A", fresh))
    assert game.to_move() == "A"  # a marker left for the headdress too
    game.push(Mark("A", headdress))
    s = game.state
    assert (s.items[fresh].hex, s.items[fresh].owner, s.items[fresh].marked) == ("M", "A", True)
    assert (s.items[headdress].hex, s.items[headdress].marked) == ("HQ", True)
    assert s.phase == "reclaim"


def test_no_marker_no_question_at_the_end_of_transport() -> None:
    game = transport_game(["A", "B", "C"], line(), "A")
    fresh = item(game, "A", 2)
    game.state.clan("A").free_markers = 0
    game.push(Pass("A"))
    assert game.state.phase == "roll" and game.state.items[fresh].owner is None


def test_marking_a_moai_before_the_screen_puts_it_in_the_quarry() -> None:
    game = transport_game(["A", "B", "C"], line(), "A")
    fresh = item(game, "A", 3)
    game.push(Mark("A", fresh))
    s = game.state
    assert (s.items[fresh].hex, s.items[fresh].marked, s.clan("A").free_markers) == ("M", True, 1)


def test_covering_needs_a_piece_of_the_mover_powered_or_not() -> None:
    """352: "se un giocatore ha almeno una pedina sull'esagono adiacente all'Ahu"; erecting
    (342) needs a worker, which a powered sorcerer is not."""
    game = transport_game(["A", "B", "C"], line(), "A")
    standing = item(game, "B", 1)
    game.state.items[standing].ahu = "b1"
    game.state.ahus["b1"].base, game.state.ahus["b1"].moai = "B", standing
    headdress = item(game, "A", kind="headdress", at="M")
    moai = item(game, "A", 1, at="M")
    put(game, "A", "B")
    put(game, "B", "B")
    game.state.pieces["B"].append(Piece("A", "sorcerer", powered=True))
    game.state.ahus["b1"].moai = None  # first: no erecting with a powered sorcerer alone
    game.state.ahus["b1"].base = None
    with pytest.raises(IllegalMove, match="Erecting needs a piece of A's on hex B"):
        game.push(Move("A", moai, ("A", "B"), erect="b1"))
    game.state.ahus["b1"].base, game.state.ahus["b1"].moai = "B", standing
    assert Move("A", headdress, ("A", "B"), cap="b1") in game.legal_actions()
    game.push(Move("A", headdress, ("A", "B"), cap="b1"))
    assert game.state.ahus["b1"].headdress == headdress


def test_headdress_needs_a_standing_moai() -> None:
    game = transport_game(["A", "B", "C"], line(), "A")
    headdress = item(game, "A", kind="headdress", at="M")
    put(game, "A", "A")
    put(game, "B", "A")
    with pytest.raises(IllegalMove, match="No Moai stands on Ahu b1 yet"):
        game.push(Move("A", headdress, ("A", "B"), cap="b1"))
    with pytest.raises(IllegalMove, match="Only a Moai is erected"):
        game.push(Move("A", headdress, ("A", "B"), erect="b1"))


# --- phase 5 and the end --------------------------------------------------------------------------


def test_reclaiming_a_marker_gives_up_the_moai() -> None:
    game = transport_game(["A", "B", "C"], line(), "A")
    moai = item(game, "A", 1, at="A", marked=True)
    game.state.clan("A").free_markers = 1
    game.push(Pass("A"))
    assert game.state.phase == "reclaim" and game.to_move() == "A"
    game.push(Reclaim("A", moai))
    s = game.state
    assert s.phase == "roll" and s.items[moai].owner is None and not s.items[moai].marked
    assert s.clan("A").free_markers == 2


def test_the_game_ends_after_the_transport_in_which_a_player_fills_their_bases() -> None:
    game = transport_game(["A", "B", "C"], line(), "A")
    moai = item(game, "A", 1)
    other = item(game, "B", 1)
    a = game.state.clan("A")
    a.bases, a.erected = 1, 6
    for h in "ABC":
        put(game, h, "A")
        put(game, h, "B")
    game.push(Move("A", moai, ("A", "B"), erect="b1"))
    assert not game.over  # the phase goes on
    game.push(Move("B", other, ("A", "B", "C"), erect="c1"))
    assert game.over and game.to_move() is None
    assert game.phase() == "The game is over."
    with pytest.raises(GameOver):
        game.push(Pass("B"))
    table = game.score()
    assert [(p.name, p.total) for p in table.players] == [("A", 4), ("B", 6), ("C", 0)]
    assert table.winners == ("B",)


def test_a_reserved_base_without_a_moai_does_not_end_the_game() -> None:
    game = transport_game(["A", "B", "C"], line(), "A")
    a = game.state.clan("A")
    a.bases, a.erected = 0, 6
    game.state.ahus["b1"].base, game.state.ahus["b1"].reserved = "A", True
    game.push(Pass("A"))
    assert not game.over


@pytest.mark.parametrize("dry", [False, True])
def test_the_game_ends_when_a_whole_turn_without_moai_in_the_box_moves_nothing(dry: bool) -> None:
    game = transport_game(["A", "B", "C"], line(), "A")
    item(game, "A", 3, at="C")
    game.state.stock = [0, 0, 0]
    game.state.dry = dry  # the box was already empty when this turn's dice were rolled
    game.push(Pass("A"))
    assert game.over == dry


def test_ties_share_the_win() -> None:
    game = transport_game(["A", "B", "C"], line(), "A")
    game.state.stock = [0, 0, 0]
    game.push(Pass("A"))
    assert game.score().winners == ("A", "B", "C")


def test_open_scoring_moves_the_track_when_a_moai_is_erected() -> None:
    land = line()
    for open_scoring in (False, True):
        game = GiantsGame.new(["A", "B", "C"], island=land, open_scoring=open_scoring)
        s = game.state
        s.round, s.phase, s.turn = 2, "transport", 0
        moai = item(game, "A", 2)
        put(game, "A", "A", "chief")
        put(game, "B", "A", "chief")
        game.push(Move("A", moai, ("A",), mark=True))
        game.push(Move("A", moai, ("B",), erect="b1"))
        running = {p.name: p.total for p in game.score().players}
        assert running["A"] == (8 if open_scoring else 0)
        assert game.breakdown("A")["moai"] == 8


def test_default_island_is_sound() -> None:
    land = default_island()
    assert len(land.hexes) == len(land.distances([land.only("moai_quarry")]))
    assert sum(h.kind == "forest" for h in land.hexes) == 7
    assert len(land.ahus) >= 25  # every clan can always find a free Ahu for its last base
    # The scoring example's Yellow: "un Ahu di valore 8 ... altri 6 Punti Prestigio" (449).
    assert any((a.value, a.headdress) == (8, 6) for a in land.ahus)
    assert land.moai == (17, 12, 6)


def test_destinations_for_a_tap_page() -> None:
    game = transport_game(["A", "B", "C"], line(), "A")
    moai = item(game, "A", 1)
    theirs = item(game, "B", 1, at="A", marked=True)
    put(game, "A", "B")
    put(game, "B", "A")
    assert game.destinations(moai) == {"M": (), "A": ("A",), "B": ("A", "B")}
    assert game.destinations(theirs) == {}
    assert game.destinations("moai99") == {}
