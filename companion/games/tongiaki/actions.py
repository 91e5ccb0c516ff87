"""Tongiaki's moves as frozen values; each has a JSON form `{"type": ..., ...}` that round-trips."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from companion.errors import MalformedMove


@dataclass(frozen=True)
class Place:
    """Put a boat from the supply on a beach: the opening boats on Tonga, or a new settlement's."""

    island: str
    beach: int

    def to_json(self) -> dict[str, Any]:
        return {"type": "place", "island": self.island, "beach": self.beach}


@dataclass(frozen=True)
class Expand:
    """Expansion: one new boat on each of `beaches` of `island`.

    `take` names the beach ("island", beach) a player with no boat left in the supply takes one
    of their boats from ("Tutte le Barche sulla Mappa")."""

    island: str
    beaches: tuple[int, ...]
    take: tuple[str, int] | None = None

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"type": "expand", "island": self.island}
        data["beaches"] = list(self.beaches)
        if self.take is not None:
            data["take"] = [self.take[0], self.take[1]]
        return data


@dataclass(frozen=True)
class Arrive:
    """A player with no boat on the map: two new boats on Tonga, or one on any island."""

    island: str
    beaches: tuple[int, ...]

    def to_json(self) -> dict[str, Any]:
        return {"type": "arrive", "island": self.island, "beaches": list(self.beaches)}


@dataclass(frozen=True)
class Royal:
    """Found a royal island on the island where a fleet of only the player's boats has landed."""

    island: str

    def to_json(self) -> dict[str, Any]:
        return {"type": "royal", "island": self.island}


@dataclass(frozen=True)
class Decline:
    """Do not found a royal island where the player's own fleet has landed: the turn goes on."""

    def to_json(self) -> dict[str, Any]:
        return {"type": "decline"}


@dataclass(frozen=True)
class Resettle:
    """New settlement: take every own boat off the beaches, reveal tiles until an island."""

    def to_json(self) -> dict[str, Any]:
        return {"type": "resettle"}


@dataclass(frozen=True)
class Migrate:
    """The boats of a full beach sail from the pier on map edge `edge` (0 east, clockwise)."""

    island: str
    beach: int
    edge: int

    def to_json(self) -> dict[str, Any]:
        return {"type": "migrate", "island": self.island, "beach": self.beach, "edge": self.edge}


@dataclass(frozen=True)
class Land:
    """One boat of the arriving fleet, of `colour`, moors at `beach` of the island reached."""

    beach: int
    colour: str

    def to_json(self) -> dict[str, Any]:
        return {"type": "land", "beach": self.beach, "colour": self.colour}


@dataclass(frozen=True)
class Lay:
    """Lay the revealed tile on hex (q, r) turned by `rotation` sixths clockwise."""

    q: int
    r: int
    rotation: int

    def to_json(self) -> dict[str, Any]:
        return {"type": "lay", "q": self.q, "r": self.r, "rotation": self.rotation}


Action = Place | Expand | Arrive | Royal | Decline | Resettle | Migrate | Land | Lay


def _field(data: dict[str, Any], key: str, kind: type) -> Any:
    value = data.get(key)
    if kind is int and (not isinstance(value, int) or isinstance(value, bool)):
        raise MalformedMove(f"A {data['type']} move needs a whole number `{key}`.")
    if kind is str and (not isinstance(value, str) or not value):
        raise MalformedMove(f"A {data['type']} move needs a text `{key}`.")
    return value


def _ints(data: dict[str, Any], key: str) -> tuple[int, ...]:
    value = data.get(key)
    if not isinstance(value, list) or not all(
        isinstance(v, int) and not isinstance(v, bool) for v in value
    ):
        raise MalformedMove(f"A {data['type']} move needs `{key}` as a list of whole numbers.")
    return tuple(value)


def action_from_json(data: Any) -> Action:
    """The action `data` describes; MalformedMove when it describes none."""
    if not isinstance(data, dict) or not isinstance(data.get("type"), str):
        raise MalformedMove("A move must be a JSON object with a `type`.")
    kind = data["type"]
    if kind == "place":
        return Place(_field(data, "island", str), _field(data, "beach", int))
    if kind == "expand":
        take_raw = data.get("take")
        take: tuple[str, int] | None = None
        if take_raw is not None:
            ok = isinstance(take_raw, list) and len(take_raw) == 2
            if not ok or not isinstance(take_raw[0], str) or type(take_raw[1]) is not int:
                raise MalformedMove("An expand move's `take` must be [island, beach].")
            take = (take_raw[0], take_raw[1])
        return Expand(_field(data, "island", str), _ints(data, "beaches"), take)
    if kind == "arrive":
        return Arrive(_field(data, "island", str), _ints(data, "beaches"))
    if kind == "royal":
        return Royal(_field(data, "island", str))
    if kind == "decline":
        return Decline()
    if kind == "resettle":
        return Resettle()
    if kind == "migrate":
        return Migrate(
            _field(data, "island", str), _field(data, "beach", int), _field(data, "edge", int)
        )
    if kind == "land":
        return Land(_field(data, "beach", int), _field(data, "colour", str))
    if kind == "lay":
        return Lay(_field(data, "q", int), _field(data, "r", int), _field(data, "rotation", int))
    raise MalformedMove(f"{kind!r} is not a Tongiaki move.")
