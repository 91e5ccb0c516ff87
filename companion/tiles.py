"""What a tile means: its kind, the edges its island reaches, its symbols, and turning it.

Edges are the letters N, E, S, W (docs/formats.md). A set of edges is kept as a string in
N, E, S, W order, so equal sets compare equal.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

EDGES = "NESW"
ROTATIONS = (0, 90, 180, 270)
OPPOSITE = {"N": "S", "E": "W", "S": "N", "W": "E"}
#: Row and column offset of the neighbour across each edge (rows grow southwards).
EDGE_OFFSET = {"N": (-1, 0), "E": (0, 1), "S": (1, 0), "W": (0, -1)}
SYMBOLS = ("palms", "huts", "shells", "boats")
#: The most of one symbol a tile may print (the box's tiles print at most 2).
MAX_SYMBOLS = 9
TILE_ID = re.compile(r"[a-z0-9-]+")


class Kind(StrEnum):
    """The five shapes of tile in the box."""

    WATER = "water"
    SINGLE = "single"
    END = "end"
    MIDDLE = "middle"
    VOLCANO = "volcano"


#: Turned meanings, shared: there are only a few hundred (type, rotation) pairs in a box.
_ROTATED: dict[tuple[Meaning, int], Meaning] = {}


def parse_edges(value: object, what: str = "edges") -> str:
    """Turn an edge string such as "sn" or "NS" into canonical N, E, S, W order."""
    if not isinstance(value, str):
        raise ValueError(f"{what} must be a string of N, E, S, W, not {value!r}")
    letters = value.upper()
    if any(ch not in EDGES for ch in letters):
        raise ValueError(f"{what} {value!r} may only use the letters N, E, S, W")
    if len(set(letters)) != len(letters):
        raise ValueError(f"{what} {value!r} names an edge twice")
    return "".join(e for e in EDGES if e in letters)


def rotate_edges(edges: str, rotation: int) -> str:
    """Edges after turning the tile `rotation` degrees clockwise (N→E→S→W→N)."""
    if rotation not in ROTATIONS:
        raise ValueError(f"rotation must be 0, 90, 180 or 270, not {rotation!r}")
    quarter = rotation // 90
    turned = {EDGES[(EDGES.index(e) + quarter) % 4] for e in edges}
    return "".join(e for e in EDGES if e in turned)


@dataclass(frozen=True, slots=True)
class Meaning:
    """The printed content of one tile, either upright (in a pack) or as it lies (in a game)."""

    kind: Kind
    land: str = ""
    palms: int = 0
    huts: int = 0
    shells: int = 0
    boats: int = 0
    lei: str = ""

    def __post_init__(self) -> None:
        problem = self.problem()
        if problem:
            raise ValueError(problem)

    def problem(self) -> str | None:
        """Why this combination cannot be a tile, or None when it can."""
        expected = {
            Kind.WATER: "no land edge",
            Kind.SINGLE: "no land edge",
            Kind.VOLCANO: "no land edge",
            Kind.END: "exactly one land edge",
            Kind.MIDDLE: "two opposite land edges (NS or EW)",
        }[self.kind]
        if self.kind in (Kind.WATER, Kind.SINGLE, Kind.VOLCANO):
            ok = self.land == ""
        elif self.kind is Kind.END:
            ok = len(self.land) == 1
        else:
            ok = self.land in ("NS", "EW")
        if not ok:
            shown = self.land or '""'
            return f"a {self.kind.value} tile has {expected}, but land is {shown}"
        for name in SYMBOLS:
            count = getattr(self, name)
            if type(count) is not int or not 0 <= count <= MAX_SYMBOLS:
                return f"{name} must be a whole number from 0 to {MAX_SYMBOLS}, not {count!r}"
        if self.kind is Kind.WATER and (self.palms or self.huts):
            return "a water tile cannot carry palms or huts"
        return None

    @property
    def is_island(self) -> bool:
        """True for tiles that carry land (single, end, middle)."""
        return self.kind in (Kind.SINGLE, Kind.END, Kind.MIDDLE)

    def rotated(self, rotation: int) -> Meaning:
        """The same tile turned `rotation` degrees clockwise."""
        if rotation == 0:
            return self
        key = (self, rotation)
        turned = _ROTATED.get(key)
        if turned is None:
            turned = _ROTATED[key] = self._turn(rotation)
        return turned

    def _turn(self, rotation: int) -> Meaning:
        return Meaning(
            kind=self.kind,
            land=rotate_edges(self.land, rotation),
            palms=self.palms,
            huts=self.huts,
            shells=self.shells,
            boats=self.boats,
            lei=rotate_edges(self.lei, rotation),
        )

    def to_json(self) -> dict[str, Any]:
        """The inline form used in game files (docs/formats.md)."""
        return {
            "kind": self.kind.value,
            "land": self.land,
            "palms": self.palms,
            "huts": self.huts,
            "shells": self.shells,
            "boats": self.boats,
            "lei": self.lei,
        }

    @classmethod
    def from_mapping(
        cls, data: Mapping[str, Any], *, extra_ok: frozenset[str] = frozenset()
    ) -> Meaning:
        """Read a meaning from a TOML or JSON table; raises ValueError with one sentence."""
        if not isinstance(data, Mapping):
            raise ValueError(f"a tile must be a table of kind, land and symbols, not {data!r}")
        unknown = set(data) - {"kind", "land", "lei", *SYMBOLS} - extra_ok
        if unknown:
            raise ValueError(f"unknown key {sorted(unknown)[0]!r} in a tile")
        if "kind" not in data:
            raise ValueError("a tile needs a kind (water, single, end, middle or volcano)")
        try:
            kind = Kind(data["kind"])
        except ValueError:
            raise ValueError(
                f"kind {data['kind']!r} is not one of water, single, end, middle, volcano"
            ) from None
        counts: dict[str, int] = {}
        for name in SYMBOLS:
            value = data.get(name, 0)
            if type(value) is not int or not 0 <= value <= MAX_SYMBOLS:
                raise ValueError(
                    f"{name} must be a whole number from 0 to {MAX_SYMBOLS}, not {value!r}"
                )
            counts[name] = value
        return cls(
            kind=kind,
            land=parse_edges(data.get("land", ""), "land"),
            lei=parse_edges(data.get("lei", ""), "lei"),
            **counts,
        )
