"""The final count of a game played without the companion: score_final_count and its checks."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from companion.errors import DataError
from companion.games.giants import GiantsGame
from companion.games.giants.bots import play_random_game
from companion.games.giants.final_count import score_final_count


def _count() -> dict[str, Any]:
    """The rulebook's scoring example ("Es – Punteggio") with tracks and Rongo halves."""
    return {
        "game": "giants",
        "players": ["Blue", "Red", "Yellow"],
        "track": {"Blue": 4, "Red": 9, "Yellow": 2},
        "rongo_halves": {"Blue": 3, "Red": 0, "Yellow": 4},
        "moai": [
            {"owner": "Blue", "size": 3, "value": 9, "headdress": False},
            {"owner": "Red", "size": 1, "value": 8, "headdress_value": 4},
            {"owner": "Yellow", "size": 2, "value": 8, "headdress_value": 6, "headdress": True},
        ],
    }


def test_the_rulebooks_scoring_example() -> None:
    table = score_final_count(_count())
    parts = {p.name: (p.breakdown, p.total) for p in table.players}
    # "9 x 3 = 27"; "semplicemente 8 punti"; "8 x 2 = 16 ... altri 6 ... totale di 22".
    assert parts["Blue"] == ({"transport": 4, "moai": 27, "headdresses": 0, "rongo": 3}, 34)
    assert parts["Red"] == ({"transport": 9, "moai": 8, "headdresses": 0, "rongo": 0}, 17)
    assert parts["Yellow"] == ({"transport": 2, "moai": 16, "headdresses": 6, "rongo": 6}, 30)
    assert table.winners == ("Blue",) and table.over
    assert [p.name for p in table.players] == ["Blue", "Red", "Yellow"]


def test_a_tie_on_points_is_shared() -> None:
    count = _count()
    count["track"]["Yellow"] = 6  # 30 + 4 = 34, level with Blue
    assert score_final_count(count).winners == ("Blue", "Yellow")


def test_open_scoring_track_already_holds_the_moai() -> None:
    count = _count()
    count["open_scoring"] = True
    count["track"] = {"Blue": 31, "Red": 17, "Yellow": 18}
    totals = {p.name: p.total for p in score_final_count(count).players}
    assert totals == {"Blue": 34, "Red": 17, "Yellow": 30}


def test_an_ahu_by_its_id_takes_the_islands_numbers() -> None:
    island = GiantsGame.new(["A", "B", "C"]).island
    ahu = island.ahus[0]
    count = _count()
    count["moai"] = [{"owner": "Red", "size": 2, "ahu": ahu.id, "headdress": True}]
    red = next(p for p in score_final_count(count).players if p.name == "Red")
    assert (red.breakdown["moai"], red.breakdown["headdresses"]) == (2 * ahu.value, ahu.headdress)


def test_the_count_of_a_finished_game_scores_as_the_game() -> None:
    game = play_random_game(["Ana", "Bo", "Cy", "Di", "Ed"], 2)
    s = game.state
    count = {
        "players": [c.name for c in s.clans],
        "open_scoring": s.open_scoring,
        "track": {c.name: c.prestige for c in s.clans},
        "rongo_halves": {c.name: c.rongo for c in s.clans},
        "moai": [
            {
                "owner": spot.base,
                "size": s.items[spot.moai].size,
                "ahu": ahu,
                "headdress": spot.headdress is not None,
            }
            for ahu, spot in s.ahus.items()
            if spot.moai is not None
        ],
    }
    assert score_final_count(count, island=game.island) == game.score()


def _change(path: str, value: Any) -> dict[str, Any]:
    count = copy.deepcopy(_count())
    *keys, last = path.split(".")
    here: Any = count
    for key in keys:
        here = here[int(key)] if key.isdigit() else here[key]
    at: Any = int(last) if last.isdigit() else last
    if value is KeyError:
        del here[at]
    else:
        here[at] = value
    return count


@pytest.mark.parametrize(
    ("path", "value", "words"),
    [
        ("moai.0.size", 4, "Moai 1's size must be a whole number from 1 to 3, not 4"),
        ("moai.0.size", 0, "from 1 to 3"),
        ("moai.0.value", 10, "Ahu value (black number) must be a whole number from 1 to 9"),
        ("moai.2.headdress_value", 0, "headdress value (red number)"),
        ("moai.2.headdress_value", KeyError, "headdress value (red number)"),
        ("moai.0.headdress", "yes", "true or false"),
        ("moai.0.owner", "Green", "owner 'Green' is not a player"),
        ("moai.0.hat", True, "Moai 1 has an unknown key 'hat'"),
        ("moai.0", {"owner": "Red", "size": 1, "ahu": "a99"}, "'a99', which is no Ahu"),
        ("track.Blue", -1, "track of 'Blue' must be a whole number of at least 0"),
        ("track.Blue", 2.5, "whole number"),
        ("track.Blue", True, "whole number"),
        ("track.Green", 1, "names 'Green', who is not a player"),
        ("track.Red", KeyError, "`track` has no entry for 'Red'"),
        ("rongo_halves.Red", 31, "from 0 to 30"),
        ("rongo_halves", [1, 2, 3], "must map each player's name"),
        ("players", ["Blue", "Red"], "3 to 5 players, not 2"),
        ("players", ["Blue", "Red", "red"], "a name of their own"),
        ("scores", {}, "the final count has an unknown key 'scores'"),
        ("game", "tongiaki", "not a Giants final count"),
        ("open_scoring", 1, "true or false"),
        ("moai", KeyError, "`moai` must list the Moai standing on Ahus"),
    ],
)
def test_a_wrong_count_is_refused_in_one_sentence(path: str, value: Any, words: str) -> None:
    with pytest.raises(DataError) as caught:
        score_final_count(_change(path, value), "count.json")
    text = caught.value.message
    assert text.startswith("count.json: ") and words in text and "\n" not in text


def test_more_moai_than_bases_the_box_or_headdresses_is_refused() -> None:
    count = _count()
    count["moai"] = [{"owner": "Blue", "size": 1, "value": 3}] * 8  # 3 players: 7 bases
    with pytest.raises(DataError, match="'Blue' has 8 Moai on Ahus; with 3 players each has 7"):
        score_final_count(count)
    count["moai"] = [{"owner": n, "size": 3, "value": 3} for n in ("Blue", "Red", "Yellow")] * 3
    with pytest.raises(DataError, match="9 Moai of size 3 stand on Ahus; the box has 6"):
        score_final_count(count)
    count["players"] = ["Blue", "Red", "Yellow"]
    count["moai"] = [
        {"owner": n, "size": 1, "value": 3, "headdress_value": 3, "headdress": True}
        for n in ("Blue", "Red", "Yellow")
    ] * 5
    with pytest.raises(DataError, match="15 Moai wear a headdress; the box has 14"):
        score_final_count(count)


def test_rongo_halves_beyond_the_box_and_an_ahu_twice_are_refused() -> None:
    count = _count()
    count["rongo_halves"] = {"Blue": 20, "Red": 10, "Yellow": 1}
    with pytest.raises(DataError, match="hold 31 Rongo half-tablets; the box has 30"):
        score_final_count(count)
    count = _count()
    count["moai"] = [{"owner": "Blue", "size": 1, "ahu": "a01"}] * 2
    with pytest.raises(DataError, match="two Moai stand on Ahu 'a01'"):
        score_final_count(count)
    count["moai"] = [{"owner": "Blue", "size": 1, "ahu": "a01", "value": 3}]
    with pytest.raises(DataError, match="give one or the other"):
        score_final_count(count)


def test_open_scoring_track_below_its_moai_is_refused() -> None:
    count = _count()
    count["open_scoring"] = True
    with pytest.raises(DataError, match="marker stands at 4, below them"):
        score_final_count(count)
