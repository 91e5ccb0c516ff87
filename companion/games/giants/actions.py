"""What a player does, as frozen values with a JSON form ({"type": ..., "player": ..., ...}).

Every action names the player who takes it: bids are secret and simultaneous, so the host may
enter them in any order, and a logged action says who did it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from companion.errors import MalformedMove

PIECES = ("worker", "sorcerer", "chief")

# Who receives prestige for the pieces used on one hex: ((name, points), ...) sorted by name;
# () when the mover needs no one's help. A move's Help holds one Way per hex entered.
Way = tuple[tuple[str, int], ...]
Help = tuple[Way, ...]


@dataclass(frozen=True, slots=True)
class Roll:
    """Phase 1: the faces the quarry dice show (white dice first, then brown)."""

    player: str
    dice: tuple[int, ...]

    def to_json(self) -> dict[str, Any]:
        return {"type": "roll", "player": self.player, "dice": list(self.dice)}


@dataclass(frozen=True, slots=True)
class Bid:
    """Phase 2: tribe markers in one hand, sculptors (workers, sorcerer, chief) in the other."""

    player: str
    markers: int = 0
    workers: int = 0
    sorcerer: bool = False
    chief: bool = False

    @property
    def sculptors(self) -> int:
        """The chief is worth 3 sculptors, the sorcerer and each worker 1."""
        return self.workers + int(self.sorcerer) + 3 * int(self.chief)

    def to_json(self) -> dict[str, Any]:
        return {
            "type": "bid",
            "player": self.player,
            "markers": self.markers,
            "workers": self.workers,
            "sorcerer": self.sorcerer,
            "chief": self.chief,
        }


@dataclass(frozen=True, slots=True)
class Choose:
    """Phase 2: take a Moai of this size from the quarry tile."""

    player: str
    size: int

    def to_json(self) -> dict[str, Any]:
        return {"type": "choose", "player": self.player, "size": self.size}


@dataclass(frozen=True, slots=True)
class Place:
    """Phase 3: a worker, the sorcerer or the chief onto a hex, with 0-2 logs.

    power: the sorcerer's action of that hex (for the chief: breaking a Rongo tablet);
    ahu: which Ahu a power on a coast hex reserves; tablets: how many complete Rongo tablets
    the chief breaks, one action of the hex each (a second reservation takes the hex's other
    Ahu).
    """

    player: str
    piece: str
    hex: str
    logs: int = 0
    power: bool = False
    ahu: str | None = None
    tablets: int = 1

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "type": "place",
            "player": self.player,
            "piece": self.piece,
            "hex": self.hex,
        }
        if self.logs:
            out["logs"] = self.logs
        if self.power:
            out["power"] = True
        if self.ahu is not None:
            out["ahu"] = self.ahu
        if self.tablets != 1:
            out["tablets"] = self.tablets
        return out


@dataclass(frozen=True, slots=True)
class TakeRongo:
    """Phase 3: put a tribe marker before the screen and take a Rongo half-tablet."""

    player: str

    def to_json(self) -> dict[str, Any]:
        return {"type": "rongo", "player": self.player}


@dataclass(frozen=True, slots=True)
class Move:
    """Phase 4: move a Moai or headdress through `path` (the hexes entered, in order), then
    erect it on Ahu `erect`, set it on the Moai of Ahu `cap`, or leave it (marked if `mark`).

    help: who gets prestige for each hex entered, any way the hex allows, by the mover's
    choice; None lets the engine take the cheapest and the event log records it.
    """

    player: str
    item: str
    path: tuple[str, ...] = ()
    erect: str | None = None
    cap: str | None = None
    mark: bool = False
    help: Help | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "type": "move",
            "player": self.player,
            "item": self.item,
            "path": list(self.path),
        }
        if self.erect is not None:
            out["erect"] = self.erect
        if self.cap is not None:
            out["cap"] = self.cap
        if self.mark:
            out["mark"] = True
        if self.help is not None:
            out["help"] = [dict(step) for step in self.help]
        return out


@dataclass(frozen=True, slots=True)
class Mark:
    """Phase 4: put a tribe marker on a Moai or headdress without moving it."""

    player: str
    item: str

    def to_json(self) -> dict[str, Any]:
        return {"type": "mark", "player": self.player, "item": self.item}


@dataclass(frozen=True, slots=True)
class Reclaim:
    """Phase 5: take a tribe marker back from a Moai or headdress, giving up its possession."""

    player: str
    item: str

    def to_json(self) -> dict[str, Any]:
        return {"type": "reclaim", "player": self.player, "item": self.item}


@dataclass(frozen=True, slots=True)
class Pass:
    """Stop for this phase (placing, transport, taking markers back) or choose no Moai."""

    player: str

    def to_json(self) -> dict[str, Any]:
        return {"type": "pass", "player": self.player}


Action = Roll | Bid | Choose | Place | TakeRongo | Move | Mark | Reclaim | Pass
ACTION_CLASSES = (Roll, Bid, Choose, Place, TakeRongo, Move, Mark, Reclaim, Pass)
TYPES = ("roll", "bid", "choose", "place", "rongo", "move", "mark", "reclaim", "pass")
#: The keys each action's JSON form may hold; any other is refused, never dropped.
KEYS = {
    "roll": ("dice",),
    "bid": ("markers", "workers", "sorcerer", "chief"),
    "choose": ("size",),
    "place": ("piece", "hex", "logs", "power", "ahu", "tablets"),
    "rongo": (),
    "move": ("item", "path", "erect", "cap", "mark", "help"),
    "mark": ("item",),
    "reclaim": ("item",),
    "pass": (),
}


def _str(data: dict[str, Any], key: str) -> str:
    value = data.get(key)
    if not isinstance(value, str) or not value:
        raise MalformedMove(f"A {data.get('type')} action needs {key} as a name.")
    return value


def _opt_str(data: dict[str, Any], key: str) -> str | None:
    value = data.get(key)
    if value is not None and not isinstance(value, str):
        raise MalformedMove(f"{key} must be an id.")
    return value


def _count(data: dict[str, Any], key: str) -> int:
    value = data.get(key, 0)
    if type(value) is not int or value < 0:
        raise MalformedMove(f"{key} must be a whole number, 0 or more.")
    return value


def _flag(data: dict[str, Any], key: str) -> bool:
    value = data.get(key, False)
    if type(value) is not bool:
        raise MalformedMove(f"{key} must be true or false.")
    return value


def _help(value: Any) -> Help | None:
    if value is None:
        return None
    if not isinstance(value, list):
        raise MalformedMove("help must list, per hex entered, who gets how many points.")
    steps = []
    for step in value:
        if not isinstance(step, dict) or not all(
            isinstance(k, str) and type(v) is int and v > 0 for k, v in step.items()
        ):
            raise MalformedMove("Each help entry maps player names to points above 0.")
        steps.append(tuple(sorted(step.items())))
    return tuple(steps)


def action_from_json(data: Any) -> Action:
    """An action from its JSON form; anything that is not one raises MalformedMove."""
    if not isinstance(data, dict):
        raise MalformedMove("An action must be an object with a type and a player.")
    kind = data.get("type")
    if kind not in TYPES:
        raise MalformedMove(f"Unknown action {kind!r}; use one of {', '.join(TYPES)}.")
    allowed = ("type", "player", *KEYS[kind])
    unknown = sorted(str(k) for k in data if k not in allowed)
    if unknown:
        raise MalformedMove(
            f"A {kind} action has no key {unknown[0]!r}; its keys are {', '.join(allowed)}."
        )
    player = _str(data, "player")
    if kind == "roll":
        dice = data.get("dice")
        if not isinstance(dice, list) or not all(type(d) is int for d in dice):
            raise MalformedMove("A roll lists the faces the dice show, as whole numbers.")
        return Roll(player, tuple(dice))
    if kind == "bid":
        return Bid(
            player,
            _count(data, "markers"),
            _count(data, "workers"),
            _flag(data, "sorcerer"),
            _flag(data, "chief"),
        )
    if kind == "choose":
        size = data.get("size")
        if size not in (1, 2, 3) or type(size) is not int:
            raise MalformedMove("A Moai's size is 1, 2 or 3.")
        return Choose(player, size)
    if kind == "place":
        piece = data.get("piece")
        if piece not in PIECES:
            raise MalformedMove("The piece placed is a worker, the sorcerer or the chief.")
        tablets = data.get("tablets", 1)
        if type(tablets) is not int or tablets < 1:
            raise MalformedMove("tablets must be a whole number, 1 or more.")
        return Place(
            player,
            piece,
            _str(data, "hex"),
            _count(data, "logs"),
            _flag(data, "power"),
            _opt_str(data, "ahu"),
            tablets,
        )
    if kind == "rongo":
        return TakeRongo(player)
    if kind == "move":
        path = data.get("path", [])
        if not isinstance(path, list) or not all(isinstance(h, str) for h in path):
            raise MalformedMove("A move's path lists the hexes entered, by id.")
        return Move(
            player,
            _str(data, "item"),
            tuple(path),
            _opt_str(data, "erect"),
            _opt_str(data, "cap"),
            _flag(data, "mark"),
            _help(data.get("help")),
        )
    if kind == "mark":
        return Mark(player, _str(data, "item"))
    if kind == "reclaim":
        return Reclaim(player, _str(data, "item"))
    return Pass(player)
