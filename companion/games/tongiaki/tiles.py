"""Tongiaki's tiles as data (companion/data/tongiaki.toml) and the hex geometry they are laid on.

The map uses axial coordinates (q, r) on pointy-top hexes. Edges are numbered clockwise from
east: 0 east, 1 south-east, 2 south-west, 3 west, 4 north-west, 5 north-east. Edge 0 of every
tile carries its red mark; a tile laid with rotation k turns its edge e to map edge (e + k) % 6.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

from companion.errors import DataError

Coord = tuple[int, int]

#: The neighbour across each map edge, clockwise from east.
DIRECTIONS: tuple[Coord, ...] = ((1, 0), (0, 1), (-1, 1), (-1, 0), (0, -1), (1, -1))
EDGE_NAMES: tuple[str, ...] = ("E", "SE", "SW", "W", "NW", "NE")


def neighbour(at: Coord, edge: int) -> Coord:
    """The hex across map edge `edge` of hex `at`."""
    dq, dr = DIRECTIONS[edge]
    return (at[0] + dq, at[1] + dr)


def opposite(edge: int) -> int:
    return (edge + 3) % 6


@dataclass(frozen=True)
class BeachSpec:
    """One beach of an island tile: its berths and the edges its piers leave from (tile frame)."""

    berths: int
    piers: tuple[int, ...]


@dataclass(frozen=True)
class TileSpec:
    """One tile: Tonga ("start"), an island or a water tile."""

    id: str
    kind: str  # "start" | "island" | "water"
    value: int  # island: points; water: colours a fleet needs (0: no number)
    beaches: tuple[BeachSpec, ...] = ()
    routes: tuple[tuple[int, int], ...] = ()  # water: pairs of edges joined by a white route

    @property
    def is_island(self) -> bool:
        return self.kind != "water"

    def route_exit(self, entry: int) -> int:
        """The tile edge a fleet leaves by after entering a water tile by tile edge `entry`."""
        for a, b in self.routes:
            if a == entry:
                return b
            if b == entry:
                return a
        raise ValueError(f"{self.id} has no route from edge {entry}")


@dataclass(frozen=True)
class TileSet:
    """Every tile of the box, and how many boats each player has."""

    name: str
    boats_per_player: int
    start: TileSpec
    tiles: dict[str, TileSpec]  # every tile, Tonga included, by id

    def spec(self, tile_id: str) -> TileSpec:
        return self.tiles[tile_id]

    @property
    def stack_ids(self) -> list[str]:
        """The tiles that are shuffled into the face-down stack (all but Tonga)."""
        return [t for t in self.tiles if t != self.start.id]


def _int(value: Any, where: str, low: int, high: int) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
        raise ValueError(f"{where} must be a whole number from {low} to {high}")
    return value


def _edges(value: Any, where: str) -> tuple[int, ...]:
    if not isinstance(value, list) or not value:
        raise ValueError(f"{where} must be a non-empty list of edges 0-5")
    edges = tuple(_int(e, where, 0, 5) for e in value)
    if len(set(edges)) != len(edges):
        raise ValueError(f"{where} names an edge twice")
    return edges


def _island(raw: Any, kind: str, where: str) -> TileSpec:
    if not isinstance(raw, dict) or not isinstance(raw.get("id"), str) or not raw["id"]:
        raise ValueError(f"{where} needs an id")
    where = f"{kind} {raw['id']}"
    beaches_raw = raw.get("beaches")
    if not isinstance(beaches_raw, list) or not 1 <= len(beaches_raw) <= 6:
        raise ValueError(f"{where}: beaches must list 1 to 6 beaches")
    beaches = []
    used: set[int] = set()
    for i, b in enumerate(beaches_raw):
        if not isinstance(b, dict):
            raise ValueError(f"{where}: beach {i} must be a table")
        piers = _edges(b.get("piers"), f"{where}: beach {i} piers")
        if used & set(piers):
            raise ValueError(f"{where}: two beaches have a pier on the same edge")
        used |= set(piers)
        beaches.append(BeachSpec(_int(b.get("berths"), f"{where}: beach {i} berths", 1, 9), piers))
    value = _int(raw.get("value"), f"{where}: value", 0, 9)
    return TileSpec(raw["id"], kind, value, beaches=tuple(beaches))


def _water(raw: Any, where: str) -> TileSpec:
    if not isinstance(raw, dict) or not isinstance(raw.get("id"), str) or not raw["id"]:
        raise ValueError(f"{where} needs an id")
    where = f"water {raw['id']}"
    routes_raw = raw.get("routes")
    if not isinstance(routes_raw, list):
        raise ValueError(f"{where}: routes must be a list of edge pairs")
    routes = []
    for pair in routes_raw:
        edges = _edges(pair, f"{where}: route")
        if len(edges) != 2:
            raise ValueError(f"{where}: a route joins exactly two edges")
        routes.append((edges[0], edges[1]))
    if sorted(e for pair in routes for e in pair) != list(range(6)):
        raise ValueError(f"{where}: the routes must join all six edges in pairs")
    value = _int(raw.get("value"), f"{where}: value", 0, 6)
    return TileSpec(raw["id"], "water", value, routes=tuple(routes))


def parse_tiles(data: dict[str, Any], source: str) -> TileSet:
    """A TileSet from the TOML's tables; a wrong entry raises DataError naming `source`."""
    try:
        start = _island(data.get("start"), "start", "[start]")
        tiles = {start.id: start}
        raws = [("island", r) for r in data.get("island", [])]
        raws += [("water", r) for r in data.get("water", [])]
        for kind, raw in raws:
            tile = _island(raw, "island", "[[island]]") if kind == "island" else _water(raw, "")
            if tile.id in tiles:
                raise ValueError(f"the id {tile.id} is used twice")
            tiles[tile.id] = tile
        if not any(t.kind == "island" for t in tiles.values()):
            raise ValueError("there must be at least one [[island]]")
        if not any(t.kind == "water" for t in tiles.values()):
            raise ValueError("there must be at least one [[water]]")
        boats = _int(data.get("boats_per_player", 15), "boats_per_player", 2, 99)
    except ValueError as exc:
        raise DataError(source, str(exc)) from None
    return TileSet(str(data.get("name", source)), boats, start, tiles)


@cache
def default_tiles() -> TileSet:
    """The box's tiles as companion/data/tongiaki.toml describes them."""
    text = resources.files("companion").joinpath("data/tongiaki.toml").read_text("utf-8")
    return parse_tiles(tomllib.loads(text), "tongiaki.toml")
