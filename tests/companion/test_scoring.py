"""Final scoring: one test per ruling of docs/rules.md, "Rulings", "Islands and scoring"."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from companion.catalogue import BoardLayout, default_boards
from companion.scoring import (
    PlayerBoard,
    boat_count,
    incomplete_cells,
    islands,
    score_game,
    tally,
)
from companion.tiles import Kind, Meaning

WATER = Meaning(Kind.WATER)


def end(land: str, **symbols: object) -> Meaning:
    return Meaning(Kind.END, land, **symbols)  # type: ignore[arg-type]


def mid(land: str, **symbols: object) -> Meaning:
    return Meaning(Kind.MIDDLE, land, **symbols)  # type: ignore[arg-type]


def single(**symbols: object) -> Meaning:
    return Meaning(Kind.SINGLE, **symbols)  # type: ignore[arg-type]


def water(**symbols: object) -> Meaning:
    return Meaning(Kind.WATER, **symbols)  # type: ignore[arg-type]


def layout(*rows: str, boats: int = 0, side: str = "front") -> BoardLayout:
    return BoardLayout(side, len(rows), len(rows[0]), boats, tuple(rows))


def board(*rows: Sequence[Meaning | None]) -> tuple[tuple[Meaning | None, ...], ...]:
    return tuple(tuple(row) for row in rows)


def one(lay: BoardLayout, b: Sequence[Sequence[Meaning | None]], shells: int = 0) -> dict[str, Any]:
    """Score a single player's board and return the docs/formats.md object."""
    final = score_game(lay, [PlayerBoard("Ana", shells, board(*b))])
    return final.players[0].to_json()


# --- islands and completeness ------------------------------------------------------------


def test_tiles_joined_through_land_edges_form_one_complete_island() -> None:
    lay = layout("...")
    b = [[end("E", palms=1), mid("EW", palms=2), end("W", palms=3)]]
    (isl,) = islands(lay, b)
    assert isl.cells == ((0, 0), (0, 1), (0, 2))
    assert isl.complete and isl.palms == 6
    assert one(lay, b)["palms_no_hut"] == 6


def test_land_edge_facing_the_rim_leaves_the_island_incomplete() -> None:
    lay = layout("..")
    b = [[end("E", palms=1), mid("EW", palms=2)]]
    assert incomplete_cells(lay, b) == {(0, 0), (0, 1)}
    score = one(lay, b)
    assert score["palms_no_hut"] == 0
    assert score["removed"] == [[0, 0], [0, 1]]


def test_land_edge_facing_a_water_tile_leaves_the_island_incomplete() -> None:
    lay = layout("...")
    b = [[end("E", palms=1), mid("EW", palms=1), WATER]]
    assert incomplete_cells(lay, b) == {(0, 0), (0, 1)}


def test_land_edge_facing_an_empty_cell_leaves_the_island_incomplete() -> None:
    lay = layout("...")
    b = [[end("E", palms=1), mid("EW", palms=1), None]]
    assert incomplete_cells(lay, b) == {(0, 0), (0, 1)}
    assert one(lay, b)["empty"] == -3


def test_land_edge_facing_a_non_playable_cell_leaves_the_island_incomplete() -> None:
    lay = layout(".#")
    b = [[end("E", palms=2), None]]
    assert incomplete_cells(lay, b) == {(0, 0)}
    score = one(lay, b)
    assert score["palms_no_hut"] == 0
    assert score["empty"] == -1  # the non-playable cell never counts


def test_land_edge_facing_a_tile_without_land_there_leaves_the_island_incomplete() -> None:
    lay = layout("..")
    b = [[end("E", palms=2), single(palms=1)]]
    assert incomplete_cells(lay, b) == {(0, 0)}
    assert one(lay, b)["palms_no_hut"] == 1


def test_two_end_pieces_meeting_make_a_complete_island() -> None:
    lay = layout(".", ".")
    b = [[end("S", palms=1)], [end("N", palms=2)]]
    assert incomplete_cells(lay, b) == frozenset()
    assert one(lay, b)["palms_no_hut"] == 3


def test_island_incomplete_at_one_end_is_removed_whole() -> None:
    lay = layout("....")
    b = [[end("E", palms=1), mid("EW", palms=1), mid("EW", palms=1), end("N", palms=5)]]
    # The last tile's land points north off the board: it is its own incomplete island, and
    # the first three now have their east edge against a tile with no land there.
    assert incomplete_cells(lay, b) == {(0, 0), (0, 1), (0, 2), (0, 3)}
    assert one(lay, b)["empty"] == -4


def test_single_tile_island_is_complete_whatever_surrounds_it() -> None:
    lay = layout("...", "...", "...")
    b: list[list[Meaning | None]] = [[None] * 3, [None, single(palms=2), None], [None] * 3]
    (isl,) = islands(lay, b)
    assert isl.complete
    score = one(lay, b)
    assert score["palms_no_hut"] == 2
    assert score["removed"] == []


# --- empty fields ----------------------------------------------------------------------


def test_removed_island_cells_cost_one_point_each_like_empty_cells() -> None:
    lay = layout("...", "...")
    b: list[list[Meaning | None]] = [[end("E", palms=3), end("E", palms=1), None], [WATER] * 3]
    # (0,0)'s land meets (0,1)'s west edge, which is not land: both ends are incomplete.
    score = one(lay, b)
    assert score["removed"] == [[0, 0], [0, 1]]
    assert score["empty"] == -3
    assert score["total"] == -3


def test_a_placed_water_tile_is_not_empty() -> None:
    lay = layout("..")
    assert one(lay, [[WATER, WATER]])["empty"] == 0
    assert one(lay, [[WATER, None]])["empty"] == -1


# --- palms, huts, atoll ----------------------------------------------------------------


def test_one_hut_doubles_every_palm_on_its_island_and_more_huts_add_nothing() -> None:
    lay = layout("...")
    b = [[end("E", palms=2, huts=1), mid("EW", palms=1), end("W", palms=3)]]
    score = one(lay, b)
    assert (score["palms_no_hut"], score["palms_hut"]) == (0, 12)
    b2 = [[end("E", palms=2, huts=1), mid("EW", palms=1, huts=1), end("W", palms=3, huts=2)]]
    assert one(lay, b2)["palms_hut"] == 12


def test_hut_on_another_island_doubles_nothing() -> None:
    lay = layout("...")
    b = [[single(palms=2), single(palms=1, huts=1), single(palms=3)]]
    score = one(lay, b)
    assert (score["palms_no_hut"], score["palms_hut"]) == (5, 2)


def test_atoll_doubles_palms_of_an_island_wholly_inside() -> None:
    lay = layout(".aa", ".aa", side="atoll")
    b = [
        [None, end("S", palms=2), end("S", palms=1, huts=1)],
        [None, end("N", palms=1), end("N", palms=1)],
    ]
    score = one(lay, b)
    assert score["palms_no_hut"] == 3 * 2
    assert score["palms_hut"] == 2 * 2 * 2  # 4 points per palm with a hut


def test_atoll_does_not_double_an_island_partly_outside() -> None:
    lay = layout(".aa", side="atoll")
    b = [[end("E", palms=2), mid("EW", palms=1, huts=1), end("W", palms=1)]]
    score = one(lay, b)
    assert score["palms_hut"] == 4 * 2


def test_bundled_atoll_side_doubles_inside_and_not_outside() -> None:
    lay = default_boards()["atoll"]
    b: list[list[Meaning | None]] = [[None] * lay.cols for _ in range(lay.rows)]
    inside = [cell for cell in lay.playable_cells if lay.in_atoll(cell)]
    outside = [cell for cell in lay.playable_cells if not lay.in_atoll(cell)]
    (r, c), (r2, c2) = inside[0], outside[0]
    b[r][c] = single(palms=3)
    b[r2][c2] = single(palms=3)
    score = one(lay, b)
    assert score["palms_no_hut"] == 3 * 2 + 3


# --- leis --------------------------------------------------------------------------------


def test_two_halves_meeting_across_an_edge_make_a_lei_worth_ten() -> None:
    lay = layout("..")
    assert one(lay, [[single(lei="E"), single(lei="W")]])["leis"] == 10


def test_one_half_alone_is_no_lei() -> None:
    lay = layout("..", "..")
    assert one(lay, [[single(lei="E"), single(lei="S")], [WATER, WATER]])["leis"] == 0
    assert one(lay, [[single(lei="E"), None], [WATER, WATER]])["leis"] == 0


def test_a_lei_needs_both_tiles_to_survive_the_removal() -> None:
    lay = layout("...", "...")
    b = [
        [end("S", lei="E"), end("S", lei="W"), None],
        [end("N"), end("E"), None],  # (1,1) points east at an empty cell: its island goes
    ]
    score = one(lay, b)
    assert score["removed"] == [[0, 1], [1, 1]]
    assert score["leis"] == 0


def test_two_leis_on_one_board_and_leis_never_doubled_in_the_atoll() -> None:
    lay = layout("aaa", side="atoll")
    b = [[single(lei="E"), single(lei="EW"), single(lei="W")]]
    assert one(lay, b)["leis"] == 20


# --- boats, shells, majorities ---------------------------------------------------------


def test_boats_are_printed_plus_those_on_tiles_kept_on_the_board() -> None:
    lay = layout("...", boats=2)
    b = [[water(boats=2), end("E", boats=1), mid("NS", boats=1)]]
    # (0,1) and (0,2) are incomplete: their boats go with them.
    assert one(lay, b)["boat_count"] == 4
    assert one(lay, b)["boats"] == 4  # alone, the player has the most


def test_boat_count_during_the_game_removes_nothing() -> None:
    lay = layout("...", boats=2)
    b = [[water(boats=2), end("E", boats=1), None]]
    assert boat_count(lay, [tile for tile in b[0] if tile]) == 5
    assert tally(lay, b).boat_count == 4


def test_most_boats_scores_its_boats_and_ties_all_score() -> None:
    lay = layout("..", boats=2)
    ana = PlayerBoard("Ana", 0, board([water(boats=1), WATER]))
    bo = PlayerBoard("Bo", 0, board([WATER, water(boats=1)]))
    cy = PlayerBoard("Cy", 0, board([WATER, WATER]))
    final = score_game(lay, [ana, bo, cy])
    assert [p.boats for p in final.players] == [3, 3, 0]
    assert [p.boat_count for p in final.players] == [3, 3, 2]


def test_most_wooden_shells_scores_them_and_printed_shells_are_ignored() -> None:
    lay = layout("..")
    ana = PlayerBoard("Ana", 4, board([water(shells=2), WATER]))
    bo = PlayerBoard("Bo", 4, board([WATER, WATER]))
    cy = PlayerBoard("Cy", 3, board([water(shells=2), water(shells=2)]))
    final = score_game(lay, [ana, bo, cy])
    assert [p.shells for p in final.players] == [4, 4, 0]
    assert [p.shell_count for p in final.players] == [4, 4, 3]


def test_the_stored_tile_scores_nothing() -> None:
    lay = layout("..", boats=1)
    b = board([WATER, single(palms=1)])
    stored = single(palms=3, huts=1, boats=2, lei="E")
    with_store = score_game(lay, [PlayerBoard("Ana", 0, b, storage=stored)])
    without = score_game(lay, [PlayerBoard("Ana", 0, b)])
    assert with_store == without
    assert with_store.players[0].total == 1 + 1


# --- winners -----------------------------------------------------------------------------


def test_most_points_wins() -> None:
    lay = layout(".")
    final = score_game(
        lay,
        [
            PlayerBoard("Ana", 0, board([single(palms=1)])),
            PlayerBoard("Bo", 0, board([single(palms=2)])),
        ],
    )
    assert final.winners == ("Bo",)


def test_tied_points_go_to_the_most_wooden_shells() -> None:
    lay = layout("..")
    # Bo holds the most shells (2 points); Ana has 2 more palm points than Cy.
    ana = PlayerBoard("Ana", 1, board([single(palms=2), single(palms=1)]))
    bo = PlayerBoard("Bo", 2, board([single(palms=1), WATER]))
    cy = PlayerBoard("Cy", 0, board([single(palms=3), WATER]))
    final = score_game(lay, [ana, bo, cy])
    assert [p.total for p in final.players] == [3, 3, 3]
    assert final.winners == ("Bo",)


def test_tied_points_and_shells_share_the_win() -> None:
    lay = layout(".")
    ana = PlayerBoard("Ana", 2, board([single(palms=1)]))
    bo = PlayerBoard("Bo", 2, board([single(palms=1)]))
    cy = PlayerBoard("Cy", 0, board([single(palms=1)]))
    final = score_game(lay, [ana, bo, cy])
    assert final.winners == ("Ana", "Bo")
    assert final.to_json()["winners"] == ["Ana", "Bo"]


def test_json_has_exactly_the_formats_md_keys() -> None:
    score = one(layout("."), [[single(palms=1)]], shells=2)
    assert set(score) == {
        "name",
        "palms_no_hut",
        "palms_hut",
        "leis",
        "boats",
        "shells",
        "empty",
        "total",
        "boat_count",
        "shell_count",
        "removed",
    }


# --- properties --------------------------------------------------------------------------


@st.composite
def meanings(draw: st.DrawFn) -> Meaning | None:
    kind = draw(st.sampled_from([None, Kind.WATER, Kind.SINGLE, Kind.END, Kind.MIDDLE]))
    if kind is None:
        return None
    land = {
        Kind.WATER: st.just(""),
        Kind.SINGLE: st.just(""),
        Kind.END: st.sampled_from("NESW"),
        Kind.MIDDLE: st.sampled_from(["NS", "EW"]),
    }[kind]
    small = st.integers(0, 2)
    island = kind is not Kind.WATER
    return Meaning(
        kind,
        draw(land),
        palms=draw(small) if island else 0,
        huts=draw(st.integers(0, 1)) if island else 0,
        shells=draw(small),
        boats=draw(small),
        lei=draw(st.sampled_from(["", "N", "E", "S", "W", "EW", "NS"])),
    )


boards_3x3 = st.lists(st.lists(meanings(), min_size=3, max_size=3), min_size=3, max_size=3)


@settings(max_examples=150, deadline=None)
@given(boards_3x3)
def test_turning_the_whole_board_half_round_changes_no_score(b: list[list[Meaning | None]]) -> None:
    lay = layout("...", "...", "...", boats=2)
    turned = [[None if t is None else t.rotated(180) for t in reversed(row)] for row in reversed(b)]
    before, after = one(lay, b), one(lay, turned)
    removed = before["removed"]
    assert isinstance(removed, list)
    assert after["removed"] == sorted([2 - r, 2 - c] for r, c in removed)
    for key in ("palms_no_hut", "palms_hut", "leis", "empty", "boat_count", "total"):
        assert before[key] == after[key], key


@settings(max_examples=150, deadline=None)
@given(boards_3x3, st.integers(0, 8))
def test_covering_an_empty_cell_with_plain_water_gains_exactly_one(
    b: list[list[Meaning | None]], index: int
) -> None:
    lay = layout("...", "...", "...")
    r, c = divmod(index, 3)
    b[r][c] = None
    covered = [list(row) for row in b]
    covered[r][c] = WATER
    before, after = one(lay, b), one(lay, covered)
    assert after["total"] == before["total"] + 1
    assert after["removed"] == before["removed"]


@settings(max_examples=100, deadline=None)
@given(boards_3x3)
def test_total_is_the_sum_of_the_lines(b: list[list[Meaning | None]]) -> None:
    s = one(layout("...", "...", "..."), b, shells=3)
    parts = ("palms_no_hut", "palms_hut", "leis", "boats", "shells", "empty")
    assert s["total"] == sum(s[k] for k in parts)
