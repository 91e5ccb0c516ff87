"""Every worked example of the Giants rulebook (the Italian text, giants-rules-it.txt) as a test.

The rulebook's figures are not in the text, so each example runs on a small island built here
that has the hexes the text names (A, B, C, D) with the pieces the text puts on them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import pytest

from companion.errors import IllegalMove
from companion.games.giants import (
    Bid,
    Choose,
    GiantsGame,
    Island,
    Mark,
    Move,
    Pass,
    Place,
    Roll,
    TakeRongo,
    default_island,
)
from companion.games.giants.state import Item, Piece

# Hexes every test island needs besides those of the example.
_SPECIAL = {"V": (-5, 5, "village"), "S": (-5, 6, "hut"), "HQ": (-4, 5, "headdress_quarry")}


def island(
    hexes: Mapping[str, tuple[int, int] | tuple[int, int, str]],
    ahus: Mapping[str, tuple[str, int, int]],
) -> Island:
    """A test island: hexes by id (q, r[, kind]); ahus by id (hex, value, headdress value).

    Hex "M" is the Moai quarry; a village, a hut and a headdress quarry are added (chained to
    "M" through filler hexes) unless the example names them."""
    cells: dict[str, tuple[int, int, str]] = {}
    for name, spec in hexes.items():
        cells[name] = (spec[0], spec[1], spec[2] if len(spec) == 3 else "plain")
    cells["M"] = (*cells["M"][:2], "moai_quarry")
    kinds = {k for _, _, k in cells.values()}
    for name, spec in _SPECIAL.items():
        if spec[2] not in kinds:
            cells[name] = spec
    # A filler path from M to the far corner keeps every hex reachable.
    q, r = cells["M"][:2]
    taken = {(a, b) for a, b, _ in cells.values()}
    k = 0
    while (q, r) != (-5, 5):
        q, r = (q - 1, r + 1) if (q > -5 and r < 5) else ((q - 1, r) if q > -5 else (q, r + 1))
        if (q, r) not in taken:
            k += 1
            cells[f"f{k}"] = (q, r, "plain")
            taken.add((q, r))
    data = {
        "name": "test",
        "dice": {"white": [0, 1, 1, 2, 2, 3], "brown": [0, 1, 1, 2, 3, 3]},
        "box": {
            "moai": [17, 12, 6],
            "headdresses": 14,
            "logs": 27,
            "rongo_halves": 30,
            "workers_per_colour": 6,
            "markers_per_colour": 6,
        },
        "hex": [
            {"id": name, "q": q, "r": r, "kind": kind} | ({"logs": 4} if kind == "forest" else {})
            for name, (q, r, kind) in cells.items()
        ],
        "ahu": [{"id": a, "hex": h, "value": v, "headdress": hv} for a, (h, v, hv) in ahus.items()],
    }
    return Island.from_json(data, "test island")


def transport_game(names: Iterable[str], land: Island, mover: str) -> GiantsGame:
    """A game in the transport phase of its second turn, `mover` to move, the island empty."""
    game = GiantsGame.new(list(names), island=land)
    s = game.state
    s.round, s.phase, s.turn = 2, "transport", s.index(mover)
    for clan in s.clans:
        clan.sorcerer = clan.chief = False
        clan.free_workers = 0
    return game


def put(game: GiantsGame, hex_id: str, owner: str, piece: str = "worker", n: int = 1) -> None:
    for _ in range(n):
        game.state.pieces.setdefault(hex_id, []).append(Piece(owner, piece))


def logs(game: GiantsGame, hex_id: str, n: int) -> None:
    game.state.board_logs[hex_id] = n


def item(
    game: GiantsGame,
    owner: str | None,
    size: int = 1,
    *,
    kind: str = "moai",
    at: str | None = None,
    marked: bool = False,
) -> str:
    """A Moai (or headdress) before `owner`'s screen, or on hex `at`."""
    s = game.state
    s.made += 1
    item_id = f"{kind}{s.made}"
    s.items[item_id] = Item(item_id, kind, size, owner, hex=at, marked=marked)
    return item_id


def prestige(game: GiantsGame) -> dict[str, int]:
    return {c.name: c.prestige for c in game.state.clans}


# --- 2 - Asta: the 5-player auction ---------------------------------------------------------


def test_auction_example_five_players() -> None:
    """Dice 1-2-2-3-0; Blue and Green bid 2 markers, Red and Yellow 1, Purple nothing. Blue
    takes the 3, Green the 1, Red (ahead of Yellow in turn order) a 2, Yellow cannot take the
    other 2 with one sculptor, and Green takes it with the 2 sculptors left of its 3."""
    names = ["Blue", "Green", "Red", "Yellow", "Purple"]
    game = GiantsGame.new(names)
    s = game.state
    s.round = 2
    for name, halves in zip(names, (3, 0, 1, 1, 0), strict=True):
        s.clan(name).rongo = halves
    s.clan("Red").free_workers = s.clan("Red").workers = 2
    game.push(Roll("Blue", (1, 2, 2, 3, 0)))
    assert game.state.quarry == [1, 2, 2, 3]
    game.push(Bid("Purple"))  # bids are secret: the host enters them in any order
    game.push(Bid("Yellow", markers=1, workers=1))
    game.push(Bid("Red", markers=1, workers=2))
    game.push(Bid("Green", markers=2, chief=True))
    game.push(Bid("Blue", markers=2, chief=True))
    assert game.state.phase == "choose"
    assert game.to_move() == "Blue"
    game.push(Choose("Blue", 3))
    assert game.to_move() == "Green"
    game.push(Choose("Green", 1))
    assert game.to_move() == "Red"
    with pytest.raises(IllegalMove, match="It is Red's turn"):
        game.push(Choose("Yellow", 2))
    game.push(Choose("Red", 2))
    assert game.to_move() == "Green"  # Yellow, one sculptor, is passed over; Purple has none
    game.push(Choose("Green", 2))
    assert game.state.phase == "place"
    sizes = {
        name: sorted(i.size for i in game.state.items.values() if i.owner == name) for name in names
    }
    assert sizes == {"Blue": [3], "Green": [1, 2], "Red": [2], "Yellow": [], "Purple": []}


# --- 3 - Es. Fase Piazzamento: the first turn's placing, 4 players ------------------------------


def test_placing_example_first_turn() -> None:
    """The example's moves (its tables disagree with them about Green; see the ruling)."""
    land = default_island()
    forest = next(h.id for h in land.hexes if h.kind == "forest" and h.logs == 4)
    village, hut = land.only("village"), land.only("hut")
    game = GiantsGame.new(["Blue", "Yellow", "Red", "Green"])
    game.push(Roll("Blue", (0, 0, 0, 0)))  # first turn: a 0 counts as a size 1
    assert game.state.quarry == [1, 1, 1, 1]
    game.push(Bid("Blue", markers=2))
    game.push(Bid("Yellow", markers=2, chief=True))
    game.push(Bid("Red", markers=2, chief=True))
    game.push(Bid("Green", markers=2))
    game.push(Pass("Yellow"))  # Yellow and Red could sculpt but take no Moai
    game.push(Pass("Red"))
    assert game.state.phase == "place" and game.to_move() == "Blue"
    plain = "h06"
    game.push(Place("Blue", "worker", plain))
    game.push(Place("Yellow", "sorcerer", hut, power=True))
    game.push(Place("Red", "sorcerer", forest, power=True))
    game.push(Place("Green", "sorcerer", village, power=True))
    s = game.state
    assert (s.clan("Yellow").free_markers, s.clan("Red").logs, s.clan("Green").free_workers) == (
        1,
        4,
        2,
    )
    game.push(Place("Blue", "sorcerer", hut, power=True))
    game.push(Place("Yellow", "worker", "h15"))
    game.push(Place("Red", "worker", "h15", logs=1))
    game.push(Place("Green", "worker", "h16"))
    game.push(Place("Blue", "chief", "h17"))
    game.push(TakeRongo("Yellow"))
    assert game.state.clan("Yellow").rongo == 1
    # Red, with only 3 logs, has nothing to place and is passed over.
    assert game.to_move() == "Green"
    game.push(Place("Green", "worker", "h18"))
    assert game.to_move() == "Blue"
    game.push(Pass("Blue"))  # keeps the tribe marker for the rest of the turn
    assert game.to_move() == "Green"
    assert game.state.board_logs == {"h15": 1}
    assert sum(len(v) for v in game.state.pieces.values()) == 10
    game.push(Place("Green", "chief", "h24"))
    # Nobody has anything left to place, nor any Moai to move: the turn ends, the pieces
    # come home, the logs on the island leave the game and Yellow is the first player.
    s = game.state
    assert (s.round, s.phase, game.to_move()) == (2, "roll", "Yellow")
    assert s.pieces == {} and s.board_logs == {} and s.clan("Red").logs == 3
    assert s.clan("Blue").free_markers == 3 and s.clan("Green").free_workers == 2


# --- 3 - Esagoni adiacenti ---------------------------------------------------------------------


def test_an_ahu_touches_only_the_hex_above_it() -> None:
    """ "Ogni Ahu è adiacente solo all'esagono sopra di lui": hex 1 touches Ahu A, not Ahu B,
    even where Ahu B lies beside hex 1 on the board."""
    land = island({"M": (0, 0), "1": (1, 0), "2": (2, 0)}, {"A": ("1", 4, 4), "B": ("2", 4, 4)})
    assert land.ahus_at["1"] == ("A",) and land.ahus_at["2"] == ("B",)
    game = transport_game(["Blue", "Red", "Yellow"], land, "Blue")
    moai = item(game, "Blue", 1)
    put(game, "1", "Blue")
    with pytest.raises(IllegalMove, match="Ahu B touches hex 2, not hex 1"):
        game.push(Move("Blue", moai, ("1",), erect="B"))
    game.push(Move("Blue", moai, ("1",), erect="A"))
    assert game.state.ahus["A"].moai == moai


# --- 4 - Es. trasportare un Moai -----------------------------------------------------------------


def test_transport_example_chief_and_helper() -> None:
    """Blue's size 2 cannot pass D (one worker); through A Yellow's chief carries it (Yellow
    +2), B needs no one (Blue worker and a log), C needs Red's help (Red +1)."""
    land = island(
        {"M": (0, 0), "D": (0, 1), "A": (1, 0), "B": (2, 0), "C": (3, 0), "E": (1, 1)},
        {"c1": ("C", 5, 5)},
    )
    game = transport_game(["Blue", "Yellow", "Red"], land, "Blue")
    moai = item(game, "Blue", 2)
    put(game, "D", "Blue")
    put(game, "E", "Blue")
    put(game, "A", "Yellow", "chief")
    put(game, "B", "Blue")
    logs(game, "B", 1)
    put(game, "C", "Red")
    logs(game, "C", 1)
    with pytest.raises(IllegalMove, match="hex D cannot carry a Moai of size 2"):
        game.push(Move("Blue", moai, ("D", "E"), mark=True))
    game.push(Move("Blue", moai, ("A", "B", "C"), mark=True))
    assert prestige(game) == {"Blue": 0, "Yellow": 2, "Red": 1}


def test_transport_with_logs_example() -> None:
    """Yellow's size 2 uses Red's worker and a log on A (Red +1), then its own worker and log
    on B (nobody). Logs alone carry nothing."""
    land = island({"M": (0, 0), "A": (1, 0), "B": (2, 0), "L": (0, 1)}, {"b1": ("B", 4, 4)})
    game = transport_game(["Yellow", "Red", "Blue"], land, "Yellow")
    moai = item(game, "Yellow", 2)
    put(game, "A", "Red")
    logs(game, "A", 2)
    put(game, "B", "Yellow")
    logs(game, "B", 1)
    logs(game, "L", 2)
    with pytest.raises(IllegalMove, match="hex L cannot carry"):
        game.push(Move("Yellow", moai, ("L",), mark=True))
    game.push(Move("Yellow", moai, ("A", "B"), mark=True))
    assert prestige(game) == {"Yellow": 0, "Red": 1, "Blue": 0}


# --- 4 - Es. Erigere Moai e Copricapo -------------------------------------------------------------


def test_erecting_and_covering_example() -> None:
    """Red carries a size 3 through A; on C (no red piece) it cannot be erected, on B (a red
    worker, two Ahus) it can, Yellow earning 2. Yellow's headdress goes through D to B and
    covers the Moai there, Yellow having a worker on B."""
    land = island(
        {
            "M": (0, 0),
            "A": (1, 0),
            "B": (2, 0),
            "C": (3, 0),
            "D": (2, -1),
            "HQ": (2, -2, "headdress_quarry"),
        },
        {"b1": ("B", 4, 5), "b2": ("B", 4, 5), "c1": ("C", 6, 3)},
    )
    game = transport_game(["Red", "Yellow", "Blue"], land, "Red")
    moai = item(game, "Red", 3)
    put(game, "A", "Red")
    put(game, "A", "Yellow")
    logs(game, "A", 1)
    put(game, "B", "Red")
    put(game, "B", "Yellow")
    logs(game, "B", 1)
    put(game, "C", "Blue", "chief")
    headdress = item(game, "Yellow", kind="headdress")
    put(game, "D", "Yellow")
    with pytest.raises(IllegalMove, match="Erecting needs a piece of Red's on hex C"):
        game.push(Move("Red", moai, ("A", "B", "C"), erect="c1"))
    game.push(Move("Red", moai, ("A", "B"), erect="b2"))
    assert prestige(game) == {"Red": 0, "Yellow": 2, "Blue": 0}
    assert game.state.ahus["b2"].moai == moai and game.state.ahus["b2"].base == "Red"
    assert game.to_move() == "Yellow"
    game.push(Move("Yellow", headdress, ("D", "B"), cap="b2"))
    assert game.state.ahus["b2"].headdress == headdress
    assert game.breakdown("Red")["headdresses"] == 5  # the Moai's owner scores the headdress


# --- 4 - Es. Marchiare i Moai -------------------------------------------------------------------


def test_marking_example() -> None:
    """Blue's size 3 reaches A and can go no further; Blue marks it so nobody else takes it."""
    land = island({"M": (0, 0), "A": (1, 0), "B": (2, 0)}, {"b1": ("B", 4, 4)})
    game = transport_game(["Blue", "Red", "Yellow"], land, "Blue")
    moai = item(game, "Blue", 3)
    item(game, "Red", 1)
    put(game, "A", "Blue", "chief")
    put(game, "B", "Red")
    put(game, "B", "Red")
    with pytest.raises(IllegalMove, match="hex B cannot carry a Moai of size 3"):
        game.push(Move("Blue", moai, ("A", "B"), mark=True))
    game.push(Move("Blue", moai, ("A",), mark=True))
    blue = game.state.clan("Blue")
    assert game.state.items[moai].marked and blue.free_markers == 1
    assert game.to_move() == "Red"
    with pytest.raises(IllegalMove, match="carries Blue's tribe marker"):
        game.push(Mark("Red", moai))


# --- 5 - Es. Prendere possesso di un Copricapo abbandonato ----------------------------------------


def test_abandoned_headdress_example() -> None:
    """A headdress left unmarked last turn lies in the headdress quarry; Blue moves it 3 hexes,
    giving Red 1 (A) and Yellow 1 (C), and marks it since it can go no further."""
    land = island(
        {
            "M": (0, 0),
            "HQ": (3, -3, "headdress_quarry"),
            "A": (3, -2),
            "B": (3, -1),
            "C": (3, 0),
            "k1": (1, 0),
            "k2": (2, 0),
        },
        {"c1": ("C", 4, 4)},
    )
    game = transport_game(["Blue", "Red", "Yellow"], land, "Blue")
    headdress = item(game, None, kind="headdress", at="HQ")
    put(game, "A", "Red")
    put(game, "B", "Blue")
    put(game, "C", "Yellow")
    with pytest.raises(IllegalMove, match="must erect it, set it on a Moai or mark it"):
        game.push(Move("Blue", headdress, ("A", "B", "C")))
    game.push(Move("Blue", headdress, ("A", "B", "C"), mark=True))
    assert prestige(game) == {"Blue": 0, "Red": 1, "Yellow": 1}
    assert game.state.items[headdress].owner == "Blue"


# --- Fine del gioco - Es. Punteggio --------------------------------------------------------------


def test_scoring_example() -> None:
    """Blue: size 3 on a 9 = 27. Red: size 1 on an 8 = 8. Yellow: size 2 on an 8 with a
    headdress worth 6 = 22."""
    land = island(
        {"M": (0, 0), "A": (1, 0), "B": (2, 0), "C": (3, 0)},
        {"a9": ("A", 9, 4), "b8": ("B", 8, 5), "c8": ("C", 8, 6)},
    )
    game = transport_game(["Blue", "Red", "Yellow"], land, "Blue")
    blue, red, yellow = item(game, "Blue", 3), item(game, "Red", 1), item(game, "Yellow", 2)
    headdress = item(game, "Yellow", kind="headdress", at="M")
    put(game, "A", "Blue", "chief")
    put(game, "B", "Red")
    for hex_id in ("A", "B", "C"):
        put(game, hex_id, "Yellow", "chief")
    game.push(Move("Blue", blue, ("A",), erect="a9"))
    game.push(Move("Red", red, ("A", "B"), erect="b8"))
    game.push(Move("Yellow", yellow, ("A", "B", "C"), erect="c8"))
    game.push(Move("Yellow", headdress, ("A", "B", "C"), cap="c8"))
    moai_points = {
        name: game.breakdown(name)["moai"] + game.breakdown(name)["headdresses"]
        for name in ("Blue", "Red", "Yellow")
    }
    assert moai_points == {"Blue": 27, "Red": 8, "Yellow": 22}


def test_complete_rongo_tablets_score_three_each() -> None:
    """3 points per complete tablet (two halves); a lone half scores nothing."""
    game = GiantsGame.new(["A", "B", "C"])
    for name, halves in (("A", 1), ("B", 2), ("C", 5)):
        game.state.clan(name).rongo = halves
    assert [game.breakdown(n)["rongo"] for n in "ABC"] == [0, 3, 6]


# --- Esempio di turno di gioco: a whole turn, 3 players -------------------------------------------


def round_island() -> Island:
    return island(
        {
            "M": (0, 0),
            "y1": (1, 0),
            "B": (2, 0),
            "x3": (3, -1),
            "x2": (4, -2),
            "x1": (5, -3),
            "HQ": (6, -4, "headdress_quarry"),
            "C": (4, -1),
            "z": (4, 0),
            "P": (5, 0),
            "g1": (-1, 0),
            "A": (-2, 0),
            "G0": (-1, 1),
            "V": (0, 1, "village"),
            "S": (1, 1, "hut"),
        },
        {"a1": ("A", 4, 4), "b1": ("B", 3, 8), "c1": ("C", 5, 6)},
    )


def test_round_example() -> None:
    """The rulebook's 'Esempio di turno di gioco' from the dice to the last headdress."""
    game = GiantsGame.new(["Green", "Red", "Blue"], island=round_island())
    s = game.state
    s.round = 4
    start = {  # workers, logs, free markers, Rongo halves, markers on the island
        "Green": (3, 0, 2, 2, 1),
        "Red": (3, 5, 3, 1, 0),
        "Blue": (4, 0, 3, 1, 1),
    }
    for name, (workers, wood, markers, halves, marked) in start.items():
        clan = s.clan(name)
        clan.workers = clan.free_workers = workers
        clan.logs, clan.free_markers, clan.rongo = wood, markers, halves
        clan.markers = markers + marked
        s.container_workers[s.index(name)] = 6 - workers
    green_old = item(game, "Green", 1, at="G0", marked=True)
    blue_old = item(game, "Blue", 2, at="P", marked=True)
    abandoned = item(game, None, kind="headdress", at="HQ")
    s.stock = [15, 11, 6]

    # Phase 1: a Moai of size 1, one of size 2, one of size 3.
    game.push(Roll("Green", (1, 2, 3)))
    # Phase 2: everyone bids 2 markers; Green has the most Rongo halves and chooses first,
    # then Red before Blue in turn order.
    game.push(Bid("Green", markers=2, workers=1))
    game.push(Bid("Red", markers=2, chief=True))
    game.push(Bid("Blue", markers=2, workers=1))
    assert [game.state.clans[i].name for i in game.state.priority] == ["Green", "Red", "Blue"]
    game.push(Choose("Green", 1))
    game.push(Choose("Red", 3))
    # Blue bid one worker: the size 2 cannot be sculpted and leaves the game.
    s = game.state
    assert s.phase == "place" and s.quarry == [] and s.stock == [14, 10, 5]
    green_new = next(i.id for i in s.items.values() if i.owner == "Green" and i.hex is None)
    red_new = next(i.id for i in s.items.values() if i.owner == "Red" and i.hex is None)

    # Phase 3.
    for action in (
        Place("Green", "sorcerer", "V", power=True),
        Place("Red", "worker", "y1", logs=2),
        Place("Blue", "chief", "C"),
        Place("Green", "chief", "V", power=True),  # breaks a Rongo tablet for a worker
        Place("Red", "worker", "z", logs=2),
        Place("Blue", "worker", "x1"),
        Place("Green", "worker", "B"),
        Place("Red", "worker", "B"),
        Place("Blue", "sorcerer", "HQ", power=True),  # sculpts a headdress
        Place("Green", "worker", "A"),
        Place("Red", "sorcerer", "B", logs=1, power=True, ahu="b1"),  # reserves the Ahu
        TakeRongo("Blue"),
        Place("Green", "worker", "g1"),
        Pass("Red"),
        Place("Blue", "worker", "x2"),
        Place("Green", "worker", "G0"),
        Place("Blue", "worker", "x3"),
    ):
        assert game.to_move() == action.player
        game.push(action)
    s = game.state
    assert s.phase == "transport"
    assert [s.clan(n).rongo for n in ("Green", "Red", "Blue")] == [0, 1, 2]
    assert s.clan("Green").workers == 5 and s.clan("Red").logs == 0
    assert s.ahus["b1"].base == "Red" and s.ahus["b1"].reserved
    blue_headdress = next(i.id for i in s.items.values() if i.kind == "headdress" and i.owner)

    # Phase 4.
    game.push(Move("Green", green_old, ("g1", "A"), erect="a1"))
    assert game.state.clan("Green").free_markers == 1  # the marker comes back at once
    game.push(Move("Red", abandoned, ("x1", "x2", "x3", "B"), mark=True))
    assert prestige(game) == {"Green": 0, "Red": 0, "Blue": 3}
    game.push(Move("Blue", blue_old, ("z", "C"), erect="c1"))
    assert prestige(game) == {"Green": 0, "Red": 1, "Blue": 3}
    game.push(Mark("Green", green_new))
    assert game.state.items[green_new].hex == "M" and game.state.items[green_new].marked
    game.push(Move("Red", red_new, ("y1", "B"), erect="b1"))
    assert prestige(game) == {"Green": 1, "Red": 1, "Blue": 3}
    game.push(Move("Blue", blue_headdress, ("x1", "x2", "C"), cap="c1"))
    game.push(Pass("Green"))
    game.push(Move("Red", abandoned, (), cap="b1"))
    # Blue now holds a whole Rongo tablet: 3 more points at the end.
    assert game.breakdown("Blue") == {"transport": 3, "moai": 10, "headdresses": 6, "rongo": 3}
    assert game.breakdown("Red") == {"transport": 1, "moai": 9, "headdresses": 8, "rongo": 0}
    assert game.breakdown("Green") == {"transport": 1, "moai": 4, "headdresses": 0, "rongo": 0}
