"""The island as data: hexes and their kinds, the Ahus on the coast, the dice and the box.

The default island lives in island.toml beside this module; a game's setup event carries the
island it was played on (`Island.to_json`), so a game file replays on the island it used.
"""

from __future__ import annotations

import tomllib
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cached_property
from importlib import resources
from typing import Any

from companion.errors import DataError

KINDS = ("plain", "village", "hut", "forest", "moai_quarry", "headdress_quarry")
#: The numbers printed on an Ahu, black and red, run from 1 to 9 (docs/rules-giants.md).
AHU_NUMBERS = (1, 9)
#: The most bases in play (5 players x 5): an island played on has at least this many Ahus,
#: so a clan with a base left always finds a free Ahu and the game can reach its end.
MIN_AHUS = 25
_STEPS = ((1, 0), (-1, 0), (0, 1), (0, -1), (1, -1), (-1, 1))


@dataclass(frozen=True, slots=True)
class Hex:
    """One hex of the island; `logs` is what a forest hex yields (0 for the others)."""

    id: str
    q: int
    r: int
    kind: str = "plain"
    logs: int = 0


@dataclass(frozen=True, slots=True)
class Ahu:
    """A stone platform on the coast: the hex it touches, its black and red numbers."""

    id: str
    hex: str
    value: int
    headdress: int


@dataclass(frozen=True)
class Island:
    """The board: hexes, Ahus, the dice's faces and the box's counts."""

    name: str
    hexes: tuple[Hex, ...]
    ahus: tuple[Ahu, ...]
    white: tuple[int, ...]
    brown: tuple[int, ...]
    moai: tuple[int, int, int]
    headdresses: int
    logs: int
    rongo_halves: int
    workers_per_colour: int
    markers_per_colour: int

    @cached_property
    def hex_by_id(self) -> dict[str, Hex]:
        return {h.id: h for h in self.hexes}

    @cached_property
    def ahu_by_id(self) -> dict[str, Ahu]:
        return {a.id: a for a in self.ahus}

    @cached_property
    def neighbours(self) -> dict[str, tuple[str, ...]]:
        at = {(h.q, h.r): h.id for h in self.hexes}
        return {
            h.id: tuple(at[(h.q + dq, h.r + dr)] for dq, dr in _STEPS if (h.q + dq, h.r + dr) in at)
            for h in self.hexes
        }

    @cached_property
    def ahus_at(self) -> dict[str, tuple[str, ...]]:
        """The Ahus each hex touches (most hexes touch none)."""
        out: dict[str, list[str]] = {h.id: [] for h in self.hexes}
        for a in self.ahus:
            out[a.hex].append(a.id)
        return {k: tuple(v) for k, v in out.items()}

    def only(self, kind: str) -> str:
        """The id of the single hex of this kind (a quarry, the village, the hut)."""
        return next(h.id for h in self.hexes if h.kind == kind)

    def distances(self, targets: Iterable[str]) -> dict[str, int]:
        """Steps from every hex to the nearest of `targets` (unreachable hexes left out)."""
        dist = {t: 0 for t in targets}
        todo = deque(dist)
        while todo:
            here = todo.popleft()
            for nxt in self.neighbours[here]:
                if nxt not in dist:
                    dist[nxt] = dist[here] + 1
                    todo.append(nxt)
        return dist

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "dice": {"white": list(self.white), "brown": list(self.brown)},
            "box": {
                "moai": list(self.moai),
                "headdresses": self.headdresses,
                "logs": self.logs,
                "rongo_halves": self.rongo_halves,
                "workers_per_colour": self.workers_per_colour,
                "markers_per_colour": self.markers_per_colour,
            },
            "hex": [
                {"id": h.id, "q": h.q, "r": h.r, "kind": h.kind}
                | ({"logs": h.logs} if h.kind == "forest" else {})
                for h in self.hexes
            ],
            "ahu": [
                {"id": a.id, "hex": a.hex, "value": a.value, "headdress": a.headdress}
                for a in self.ahus
            ],
        }

    @classmethod
    def from_json(cls, data: Any, source: str = "island") -> Island:
        """An island from its TOML/JSON form; anything wrong raises DataError naming `source`.

        These are the checks every island passes, the small ones of the tests included; an
        island a game is played on also passes `check_playable`."""
        try:
            return _parse(data)
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            problem = f"missing {exc}" if isinstance(exc, KeyError) else str(exc)
            raise DataError(source, f"not a Giants island ({problem}).") from None

    def check_playable(self, source: str = "island") -> None:
        """DataError (one sentence naming `source`) unless a whole game can be played here:
        at least MIN_AHUS Ahus. island.toml and the island of a game file's setup both pass it."""
        if len(self.ahus) < MIN_AHUS:
            raise DataError(
                source,
                f"a Giants island needs at least {MIN_AHUS} Ahus (5 players x 5 bases), "
                f"this one has {len(self.ahus)}.",
            )


def default_island() -> Island:
    """The island shipped with the companion (island.toml)."""
    text = resources.files(__package__).joinpath("island.toml").read_text(encoding="utf-8")
    island = Island.from_json(tomllib.loads(text), "island.toml")
    island.check_playable("island.toml")
    return island


def _int(value: Any, what: str, low: int = 0, high: int | None = None) -> int:
    if type(value) is not int or value < low or (high is not None and value > high):
        span = f"from {low} to {high}" if high is not None else f"of at least {low}"
        raise ValueError(f"{what} must be a whole number {span}")
    return value


def _faces(value: Any, what: str) -> tuple[int, ...]:
    if not isinstance(value, list) or not value:
        raise ValueError(f"{what} must list the die's faces")
    faces = tuple(_int(v, what) for v in value)
    if any(f > 3 for f in faces):
        raise ValueError(f"{what}: a face shows a Moai size from 0 to 3")
    return faces


#: The keys of an island and of its parts; any other is refused, never dropped.
KEYS = {
    "island": ("name", "dice", "box", "hex", "ahu"),
    "dice": ("white", "brown"),
    "box": (
        "moai",
        "headdresses",
        "logs",
        "rongo_halves",
        "workers_per_colour",
        "markers_per_colour",
    ),
    "hex": ("id", "q", "r", "kind", "logs"),
    "ahu": ("id", "hex", "value", "headdress"),
}


def _known(data: Any, part: str) -> None:
    if not isinstance(data, dict):
        raise ValueError(f"{part} must be a table")
    unknown = sorted(str(k) for k in data if k not in KEYS[part])
    if unknown:
        where = (
            "the island"
            if part == "island"
            else f"a {part} entry"
            if part in ("hex", "ahu")
            else part
        )
        raise ValueError(f"{where} has an unknown key {unknown[0]!r}")


def _parse(data: Any) -> Island:
    _known(data, "island")
    dice, box = data["dice"], data["box"]
    _known(dice, "dice")
    _known(box, "box")
    moai = box["moai"]
    if not isinstance(moai, list) or len(moai) != 3:
        raise ValueError("box.moai counts the Moai of sizes 1, 2 and 3")
    hexes = []
    for h in data["hex"]:
        _known(h, "hex")
        kind = h.get("kind", "plain")
        if kind not in KINDS:
            raise ValueError(f"hex {h.get('id')!r} has unknown kind {kind!r}")
        logs = _int(h.get("logs", 0), "a forest's logs", 1 if kind == "forest" else 0)
        hexes.append(Hex(str(h["id"]), _int(h["q"], "q", -99), _int(h["r"], "r", -99), kind, logs))
    ids = [h.id for h in hexes]
    if len(set(ids)) != len(ids) or len({(h.q, h.r) for h in hexes}) != len(hexes):
        raise ValueError("two hexes share an id or a place")
    for kind in ("village", "hut", "moai_quarry", "headdress_quarry"):
        if sum(h.kind == kind for h in hexes) != 1:
            raise ValueError(f"the island needs exactly one {kind.replace('_', ' ')} hex")
    ahus = []
    for a in data["ahu"]:
        _known(a, "ahu")
        if a["hex"] not in ids:
            raise ValueError(f"Ahu {a['id']!r} touches no hex of the island")
        low, high = AHU_NUMBERS
        value = _int(a["value"], f"Ahu {a['id']!r}'s value (black number)", low, high)
        red = _int(a["headdress"], f"Ahu {a['id']!r}'s headdress (red number)", low, high)
        ahus.append(Ahu(str(a["id"]), a["hex"], value, red))
    if len({a.id for a in ahus}) != len(ahus) or not ahus:
        raise ValueError("the Ahus need different ids")
    special = {h.id for h in hexes if h.kind != "plain"}
    if any(a.hex in special for a in ahus):
        raise ValueError("an Ahu touches a special hex, whose power would then be ambiguous")
    island = Island(
        name=str(data.get("name", "island")),
        hexes=tuple(hexes),
        ahus=tuple(ahus),
        white=_faces(dice["white"], "dice.white"),
        brown=_faces(dice["brown"], "dice.brown"),
        moai=(_int(moai[0], "moai"), _int(moai[1], "moai"), _int(moai[2], "moai")),
        headdresses=_int(box["headdresses"], "headdresses"),
        logs=_int(box["logs"], "logs"),
        rongo_halves=_int(box["rongo_halves"], "rongo_halves"),
        workers_per_colour=_int(box["workers_per_colour"], "workers_per_colour", 2),
        markers_per_colour=_int(box["markers_per_colour"], "markers_per_colour", 2),
    )
    start = island.only("moai_quarry")
    if len(island.distances([start])) != len(hexes):
        raise ValueError("some hexes cannot be reached from the Moai quarry")
    return island
