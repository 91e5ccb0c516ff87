"""Tile meanings, edges and turning (docs/formats.md, "Edges and rotation", "A tile's meaning")."""

from __future__ import annotations

import pytest

from companion.tiles import Kind, Meaning, parse_edges, rotate_edges


def test_turning_clockwise_maps_n_to_e_to_s_to_w() -> None:
    assert rotate_edges("N", 90) == "E"
    assert rotate_edges("N", 180) == "S"
    assert rotate_edges("NE", 270) == "NW"
    assert rotate_edges("", 90) == ""


def test_edge_sets_are_canonical_whatever_the_order() -> None:
    assert parse_edges("sn") == "NS"
    with pytest.raises(ValueError, match="twice"):
        parse_edges("NN")
    with pytest.raises(ValueError, match="only use"):
        parse_edges("X")


def test_a_turned_tile_turns_its_land_and_its_lei() -> None:
    m = Meaning(Kind.END, "S", palms=1, lei="E")
    assert m.rotated(90) == Meaning(Kind.END, "W", palms=1, lei="S")
    assert m.rotated(90).rotated(270) == m


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"kind": "middle", "land": "N"}, "two opposite land edges"),
        ({"kind": "middle", "land": "NE"}, "two opposite land edges"),
        ({"kind": "end", "land": ""}, "exactly one land edge"),
        ({"kind": "water", "land": "S"}, "no land edge"),
        ({"kind": "water", "palms": 1}, "water tile cannot carry palms"),
        ({"kind": "lagoon"}, "is not one of"),
        ({"kind": "single", "palms": -1}, "from 0 to 9"),
        ({"kind": "single", "shells": 2**63 - 1}, "shells must be a whole number from 0 to 9"),
        ({"kind": "single", "palm": 1}, "unknown key 'palm'"),
        ({"land": ""}, "needs a kind"),
    ],
)
def test_impossible_tiles_are_refused_with_one_sentence(
    data: dict[str, object], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        Meaning.from_mapping(data)
