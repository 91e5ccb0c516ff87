"""The final count of a Giants game played without the companion (docs/formats.md, "Giants
final count").

A table that played on its own board counts at the end what the rulebook counts ("Fine del
gioco e conteggio finale dei punti prestigio"): each Moai erected on an Ahu (the Ahu's black
number × the Moai's size, plus the red number when it wears a headdress), 3 points per complete
Rongo tablet (two halves) still held, and where each marker stands on the points track.

`score_final_count(count, source)` is the one scorer: `companion score --game giants FILE` of a
final-count file and the web page's final count by taps both call it with the same object.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from companion.errors import DataError
from companion.games.base import PlayerScore, ScoreTable
from companion.games.giants.island import AHU_NUMBERS, Island, default_island
from companion.games.giants.state import BASES

#: The breakdown of a Giants score, in the rulebook's order; these add up to the total.
POINTS = ("transport", "moai", "headdresses", "rongo")
#: The keys a final-count file may hold, and those of one Moai.
KEYS = frozenset({"game", "players", "open_scoring", "track", "rongo_halves", "moai"})
MOAI_KEYS = frozenset({"owner", "size", "ahu", "value", "headdress_value", "headdress"})


@dataclass(frozen=True, slots=True)
class ErectedMoai:
    """One Moai standing on an Ahu: its owner (the base's colour), its size, the Ahu's black
    number (`value`) and red number (`headdress_value`), and whether it wears a headdress."""

    owner: str
    size: int
    value: int
    headdress_value: int
    headdress: bool

    @property
    def moai_points(self) -> int:
        return self.value * self.size

    @property
    def headdress_points(self) -> int:
        return self.headdress_value if self.headdress else 0


@dataclass(frozen=True)
class FinalCount:
    """What a table counts at the end: players in turn order (the first player first), the
    track, the Rongo halves held, every Moai on an Ahu; under open scoring the track already
    holds the Moai's points (not the headdresses')."""

    players: tuple[str, ...]
    track: Mapping[str, int]
    rongo_halves: Mapping[str, int]
    moai: tuple[ErectedMoai, ...]
    open_scoring: bool = False

    def breakdown(self, name: str) -> dict[str, int]:
        """A player's points: transport (the track's prestige), moai, headdresses, rongo."""
        mine = [m for m in self.moai if m.owner == name]
        moai = sum(m.moai_points for m in mine)
        return {
            "transport": self.track[name] - (moai if self.open_scoring else 0),
            "moai": moai,
            "headdresses": sum(m.headdress_points for m in mine),
            "rongo": 3 * (self.rongo_halves[name] // 2),
        }

    def score(self) -> ScoreTable:
        """The final score; every player tied for the most points wins (the rulebook has no
        tie-break, docs/rules-giants.md)."""
        rows = []
        for name in self.players:
            parts = self.breakdown(name)
            rows.append(PlayerScore(name, sum(parts.values()), parts))
        top = max(p.total for p in rows)
        winners = tuple(p.name for p in rows if p.total == top)
        return ScoreTable("giants", tuple(rows), winners, points=POINTS)


def score_final_count(
    count: Any, source: str = "final count", island: Island | None = None
) -> ScoreTable:
    """The final score of a final count: the JSON object of docs/formats.md ("Giants final
    count"), parsed. Anything wrong raises DataError with one sentence naming `source`; an
    Ahu named by id takes its numbers from `island` (the shipped island.toml by default).

    The web page's final count by taps and `companion score --game giants` of a final-count
    file both score through this function."""
    return read_final_count(count, source, island).score()


def read_final_count(
    count: Any, source: str = "final count", island: Island | None = None
) -> FinalCount:
    """A FinalCount from its JSON object, every number checked against its range; an Ahu named
    by id takes its numbers from `island` (the shipped island.toml by default)."""
    try:
        return _parse(count, island or default_island())
    except ValueError as exc:
        raise DataError(source, f"{exc}.") from None


def _whole(value: Any, what: str, low: int, high: int | None = None) -> int:
    if type(value) is not int or value < low or (high is not None and value > high):
        span = f"from {low} to {high}" if high is not None else f"of at least {low}"
        raise ValueError(f"{what} must be a whole number {span}, not {value!r}")
    return value


def _unknown(data: Mapping[str, Any], allowed: frozenset[str], where: str) -> None:
    extra = sorted(str(k) for k in data if k not in allowed)
    if extra:
        known = ", ".join(sorted(allowed))
        raise ValueError(f"{where} has an unknown key {extra[0]!r} (known: {known})")


def _per_player(data: Any, players: Sequence[str], what: str, high: int | None) -> dict[str, int]:
    if not isinstance(data, dict):
        raise ValueError(f"`{what}` must map each player's name to a whole number")
    for name in data:
        if name not in players:
            raise ValueError(f"`{what}` names {name!r}, who is not a player")
    out = {}
    for name in players:
        if name not in data:
            raise ValueError(f"`{what}` has no entry for {name!r}")
        out[name] = _whole(data[name], f"{what} of {name!r}", 0, high)
    return out


def _players(data: Any) -> tuple[str, ...]:
    if not isinstance(data, list) or not all(isinstance(p, str) for p in data):
        raise ValueError("`players` must list the players' names in turn order")
    names = tuple(p.strip() for p in data)
    if not 3 <= len(names) <= 5:
        raise ValueError(f"Giants is played by 3 to 5 players, not {len(names)}")
    if any(not n for n in names) or len({n.casefold() for n in names}) != len(names):
        raise ValueError("every player needs a name of their own")
    if names != tuple(data):
        raise ValueError("a player's name starts or ends with a space")
    return names


def _one_moai(entry: Any, number: int, players: Sequence[str], island: Island) -> ErectedMoai:
    where = f"Moai {number}"
    if not isinstance(entry, dict):
        raise ValueError(f"{where} must be an object")
    _unknown(entry, MOAI_KEYS, where)
    owner = entry.get("owner")
    if not isinstance(owner, str) or owner not in players:
        raise ValueError(f"{where}'s owner {owner!r} is not a player")
    size = _whole(entry.get("size"), f"{where}'s size", 1, 3)
    headdress = entry.get("headdress", False)
    if type(headdress) is not bool:
        raise ValueError(f"{where}'s headdress must be true or false")
    low, high = AHU_NUMBERS
    if "ahu" in entry:
        if "value" in entry or "headdress_value" in entry:
            raise ValueError(f"{where} names its Ahu and gives its numbers: give one or the other")
        ahu = island.ahu_by_id.get(entry["ahu"]) if isinstance(entry["ahu"], str) else None
        if ahu is None:
            raise ValueError(f"{where} stands on {entry['ahu']!r}, which is no Ahu of the island")
        return ErectedMoai(owner, size, ahu.value, ahu.headdress, headdress)
    value = _whole(entry.get("value"), f"{where}'s Ahu value (black number)", low, high)
    if headdress or "headdress_value" in entry:
        red = _whole(
            entry.get("headdress_value"), f"{where}'s headdress value (red number)", low, high
        )
    else:
        red = 0
    return ErectedMoai(owner, size, value, red, headdress)


def _parse(data: Any, island: Island) -> FinalCount:
    if not isinstance(data, dict):
        raise ValueError("a Giants final count is a JSON object")
    _unknown(data, KEYS, "the final count")
    if data.get("game", "giants") != "giants":
        raise ValueError(f"this is a {data.get('game')!r} file, not a Giants final count")
    players = _players(data.get("players"))
    open_scoring = data.get("open_scoring", False)
    if type(open_scoring) is not bool:
        raise ValueError("`open_scoring` must be true or false")
    track = _per_player(data.get("track"), players, "track", None)
    rongo = _per_player(data.get("rongo_halves"), players, "rongo_halves", island.rongo_halves)
    if sum(rongo.values()) > island.rongo_halves:
        raise ValueError(
            f"the players hold {sum(rongo.values())} Rongo half-tablets; the box has "
            f"{island.rongo_halves}"
        )
    entries = data.get("moai")
    if not isinstance(entries, list):
        raise ValueError("`moai` must list the Moai standing on Ahus (`[]` for none)")
    moai = tuple(_one_moai(e, n, players, island) for n, e in enumerate(entries, start=1))
    _check_counts(entries, moai, players, island)
    count = FinalCount(players, track, rongo, moai, open_scoring)
    for name in players:
        if count.breakdown(name)["transport"] < 0:
            raise ValueError(
                f"under open scoring the track holds {name!r}'s Moai points, but {name!r}'s "
                f"marker stands at {track[name]}, below them"
            )
    return count


def _check_counts(
    entries: Sequence[Any], moai: Sequence[ErectedMoai], players: Sequence[str], island: Island
) -> None:
    """No more Moai than a player has bases or the box holds, no Ahu used twice."""
    bases = BASES[len(players)]
    for name in players:
        mine = sum(m.owner == name for m in moai)
        if mine > bases:
            raise ValueError(
                f"{name!r} has {mine} Moai on Ahus; with {len(players)} players each has "
                f"{bases} bases"
            )
    for size in (1, 2, 3):
        many = sum(m.size == size for m in moai)
        if many > island.moai[size - 1]:
            raise ValueError(
                f"{many} Moai of size {size} stand on Ahus; the box has {island.moai[size - 1]}"
            )
    capped = sum(m.headdress for m in moai)
    if capped > island.headdresses:
        raise ValueError(f"{capped} Moai wear a headdress; the box has {island.headdresses}")
    named = [e["ahu"] for e in entries if "ahu" in e]
    twice = sorted({a for a in named if named.count(a) > 1})
    if twice:
        raise ValueError(f"two Moai stand on Ahu {twice[0]!r}")
