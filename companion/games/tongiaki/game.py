"""Tongiaki as a rules engine: the map laid as the game goes, boats, voyages, royal islands, score.

`Tongiaki` implements companion.games.base.BoardGame. Every decision a player takes is one action
(companion.games.tongiaki.actions); everything the rules decide (revealing a tile on a voyage,
crossing a water tile, a fleet sinking) happens inside `push`. The rulings where the Italian
rulebook is silent or unclear are in docs/rules-tongiaki.md.
"""

from __future__ import annotations

import copy
import itertools
import random
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar, Self

from companion.errors import CompanionError, DataError, GameOver, IllegalMove, MalformedMove, NotNow
from companion.games.base import Action as AnyAction
from companion.games.base import PlayerScore, ScoreTable
from companion.games.tongiaki.actions import (
    Action,
    Arrive,
    Decline,
    Expand,
    Land,
    Lay,
    Migrate,
    Place,
    Resettle,
    Royal,
    action_from_json,
)
from companion.games.tongiaki.tiles import (
    DIRECTIONS,
    EDGE_NAMES,
    Coord,
    TileSet,
    TileSpec,
    default_tiles,
    neighbour,
    opposite,
)

#: The boats' colours, given to the players in seat order.
COLOURS: tuple[str, ...] = ("red", "blue", "yellow", "orange", "green", "purple")
#: Every kind of Tongiaki move (push refuses any other game's).
TONGIAKI_ACTIONS = (Place, Expand, Arrive, Royal, Decline, Resettle, Migrate, Land, Lay)
#: Royal islands one player may found in a game.
MAX_ROYAL = 2


def island_name(tile: str | None) -> str:
    """An island as players name it: Tonga by its name, any other by its tile id."""
    start = default_tiles().start.id
    return start.capitalize() if tile == start else str(tile)


@dataclass
class Hex:
    """A laid tile: which one, how it is turned, the boats on each beach, a royal island's owner."""

    tile: str
    rotation: int
    boats: list[list[str]] = field(default_factory=list)  # per beach: colours, in mooring order
    royal: str | None = None


@dataclass
class State:
    """Everything that changes during a game."""

    names: list[str]
    colours: list[str]
    supply: dict[str, int]
    royals: dict[str, int]
    hexes: dict[Coord, Hex]
    stack: list[str]
    removed: list[str] = field(default_factory=list)
    current: int = 0
    # setup | turn | migrate | land | royal | lay | settle | over
    step: str = "setup"
    setup_left: int = 0
    turn_counts: dict[str, int] = field(default_factory=dict)  # own boats per island, turn start
    fleet: list[str] = field(default_factory=list)  # boats landing (step "land")
    target: str | None = None  # the island landed on ("land") or settled ("settle")
    received: list[int] = field(default_factory=list)  # beaches given a boat in this landing
    own_fleet: bool = False  # the landing fleet is the active player's boats alone
    lay_for: str = ""  # "resettle" | "cycle"
    ending: bool = False  # the last island or water tile is on the map
    # The positions met this turn, each with the migrations chosen there.
    tried: dict[tuple[Any, ...], set[Migrate]] = field(default_factory=dict)
    news: list[str] = field(default_factory=list)  # what the last action made happen

    def clone(self) -> State:
        """A copy that shares nothing mutable with this state (undo snapshots)."""
        return replace(
            self,
            names=list(self.names),
            colours=list(self.colours),
            supply=dict(self.supply),
            royals=dict(self.royals),
            hexes={
                at: Hex(h.tile, h.rotation, [list(b) for b in h.boats], h.royal)
                for at, h in self.hexes.items()
            },
            stack=list(self.stack),
            removed=list(self.removed),
            turn_counts=dict(self.turn_counts),
            fleet=list(self.fleet),
            received=list(self.received),
            tried={key: set(moves) for key, moves in self.tried.items()},
            news=list(self.news),
        )


@dataclass(frozen=True)
class _Stop:
    """Where a fleet's course over the laid tiles stops."""

    kind: str  # "empty" | "island" | "royal" | "sink"
    at: Coord  # the hex the course stops at
    heading: int  # the map edge the fleet moved across into `at`
    came_from: Coord  # the hex before `at`


class Tongiaki:
    """A game of Tongiaki for 2-6 players (companion.games.base.BoardGame)."""

    key: ClassVar[str] = "tongiaki"
    title: ClassVar[str] = "Tongiaki"
    min_players: ClassVar[int] = 2
    max_players: ClassVar[int] = 6
    needs_camera: ClassVar[bool] = False

    def __init__(self, state: State, tiles: TileSet, setup: dict[str, Any]) -> None:
        self.state = state
        self.tiles = tiles
        self.events: list[dict[str, Any]] = [setup]
        self._undo: list[tuple[State, Action]] = []

    # ------------------------------------------------------------------ setting up

    @classmethod
    def new(
        cls,
        names: Sequence[str],
        seed: int = 0,
        *,
        first: Sequence[str] = (),
        position: dict[str, Any] | None = None,
    ) -> Self:
        """A game for `names` (the first is the youngest, who starts); the stack shuffled by `seed`.

        `first` puts those tiles on top of the stack in that order; `position` starts from a map
        already laid (docs/formats.md, "Tongiaki game file") instead of the opening placements
        on Tonga."""
        tiles = default_tiles()
        laid = position.get("map") if isinstance(position, dict) else None
        on_map = (
            {t.get("tile") for t in laid if isinstance(t, dict)}
            if isinstance(laid, list)
            else set()
        )
        for tile_id in first:
            if tile_id not in tiles.stack_ids:
                raise IllegalMove(f"There is no tile {tile_id!r} in the stack.")
        rest = [t for t in tiles.stack_ids if t not in first and t not in on_map]
        random.Random(seed).shuffle(rest)
        setup: dict[str, Any] = {
            "type": "setup",
            "game": cls.key,
            "players": list(names),
            "seed": seed,
            "stack": [*first, *rest],
        }
        if position is not None:
            setup["position"] = copy.deepcopy(position)
        return cls(cls._state_from_setup(setup, tiles), tiles, setup)

    @classmethod
    def _state_from_setup(cls, setup: dict[str, Any], tiles: TileSet) -> State:
        names = setup.get("players")
        if not isinstance(names, list) or not all(isinstance(n, str) and n for n in names):
            raise MalformedMove("The players must be a list of names.")
        if not cls.min_players <= len(names) <= cls.max_players:
            raise IllegalMove(
                f"Tongiaki is played by {cls.min_players} to {cls.max_players} players, "
                f"not {len(names)}."
            )
        if len(set(names)) != len(names):
            raise IllegalMove("Two players have the same name.")
        stack = setup.get("stack")
        if not isinstance(stack, list) or not all(isinstance(t, str) for t in stack):
            raise MalformedMove("The stack must be a list of tile ids.")
        if len(set(stack)) != len(stack):
            raise IllegalMove("The stack holds a tile twice.")
        unknown = [t for t in stack if t not in tiles.stack_ids]
        if unknown:
            raise IllegalMove(f"There is no tile {unknown[0]!r} in the box.")
        colours = list(COLOURS[: len(names)])
        state = State(
            names=list(names),
            colours=colours,
            supply={c: tiles.boats_per_player for c in colours},
            royals={c: 0 for c in colours},
            hexes={},
            stack=list(stack),
        )
        position = setup.get("position")
        if position is None:
            start = tiles.start
            state.hexes[(0, 0)] = Hex(start.id, 0, [[] for _ in start.beaches])
            state.setup_left = 2 * len(names)
        else:
            _lay_out(state, tiles, position)
        # The whole stack: a shorter one would end the game early (the last tile of a kind).
        on_map = {h.tile for h in state.hexes.values()}
        missing = [t for t in tiles.stack_ids if t not in on_map and t not in stack]
        if missing:
            shown = ", ".join(missing[:3]) + (", ..." if len(missing) > 3 else "")
            raise IllegalMove(
                f"The stack must hold every tile not on the map: {len(missing)} are missing "
                f"({shown})."
            )
        return state

    # ------------------------------------------------------------------ the protocol

    @classmethod
    def replay(cls, events: Sequence[dict[str, Any]], source: str = "event log") -> Self:
        """The game `events` describe; a damaged log raises DataError naming `source`."""
        if not events or not isinstance(events[0], dict) or events[0].get("type") != "setup":
            raise DataError(source, "the log must start with a setup event")
        named = events[0].get("game", cls.key)
        if named != cls.key:
            raise DataError(source, f"this is a game of {named!r}, not of tongiaki")
        try:
            game = cls(cls._state_from_setup(events[0], default_tiles()), default_tiles(), {})
            game.events = [events[0]]
            for number, event in enumerate(events[1:], start=2):
                try:
                    kind = event.get("type") if isinstance(event, dict) else None
                    if kind == "action":
                        game.push(cls.action_from_json(event.get("action")))
                    elif kind == "undo":
                        game.pop()
                    else:
                        raise MalformedMove("it is neither an action nor an undo")
                except CompanionError as exc:
                    raise DataError(source, f"event {number}: {exc.message}") from None
        except DataError:
            raise
        except CompanionError as exc:
            raise DataError(source, f"event 1: {exc.message}") from None
        return game

    @classmethod
    def action_from_json(cls, data: Any) -> Action:
        return action_from_json(data)

    @property
    def over(self) -> bool:
        return self.state.step == "over"

    def to_move(self) -> str | None:
        return None if self.over else self.state.names[self.state.current]

    def phase(self) -> str:
        s = self.state
        name = s.names[s.current]
        if s.step == "setup":
            return f"{name}: place a boat on Tonga"
        if s.step == "turn":
            return f"{name}: expand on an island (or resettle)"
        if s.step == "migrate":
            return f"{name}: choose a full beach and the pier its boats sail from"
        if s.step == "land":
            return f"{name}: land the fleet's {len(s.fleet)} boats on {island_name(s.target)}"
        if s.step == "royal":
            return f"{name}: found a royal island on {island_name(s.target)}, or decline"
        if s.step == "lay":
            kind = "island" if self._spec(s.stack[0]).is_island else "water"
            return f"{name}: lay the revealed {kind} tile next to the map"
        if s.step == "settle":
            return f"{name}: place a boat on a beach of {island_name(s.target)}"
        return "the game is over"

    def legal_actions(self) -> list[AnyAction]:
        return list(self._legal())

    def _legal(self) -> list[Action]:
        s = self.state
        if s.step == "setup":
            start = self._find(self.tiles.start.id)
            assert start is not None
            h = s.hexes[start]
            berths = [b.berths for b in self._spec(h.tile).beaches]
            return [
                Place(h.tile, b) for b, boats in enumerate(h.boats) if len(boats) + 1 < berths[b]
            ]
        if s.step == "turn":
            return self._turn_actions()
        if s.step == "migrate":
            return list[Action](self._migrations())
        if s.step == "land":
            return [Land(b, c) for b in self._landing_beaches() for c in sorted(set(s.fleet))]
        if s.step == "royal":
            assert s.target is not None
            return [Royal(s.target), Decline()]
        if s.step == "lay":
            return [Lay(q, r, k) for q, r in self._frontier() for k in range(6)]
        if s.step == "settle":
            assert s.target is not None
            return [Place(s.target, b) for b in self._free_beaches(s.target)]
        return []

    def push(self, action: AnyAction) -> None:
        if self.over:
            raise GameOver("The game is over.")
        if not isinstance(action, TONGIAKI_ACTIONS):
            raise IllegalMove("That is not a Tongiaki move.")
        action = self._normal(action)
        self._refuse(action)
        before = self.state.clone()
        self.state.news = []
        try:
            self._apply(action)
        except BaseException:
            self.state = before
            raise
        self._undo.append((before, action))
        self.events.append({"type": "action", "action": action.to_json()})

    def pop(self) -> AnyAction:
        if not self._undo:
            raise NotNow("There is no move to undo.")
        before, action = self._undo.pop()
        self.state = before
        self.events.append({"type": "undo"})
        return action

    def score(self) -> ScoreTable:
        s = self.state
        islands = []
        for h in s.hexes.values():
            spec = self._spec(h.tile)
            if not spec.is_island:
                continue
            boats = Counter(c for b in h.boats for c in b)
            owners = {n: boats[c] for n, c in zip(s.names, s.colours, strict=True) if boats[c]}
            royal = s.names[s.colours.index(h.royal)] if h.royal else None
            islands.append(Island(spec.value, owners, royal))
        return score_islands(s.names, islands, self.key, over=self.over)

    @classmethod
    def score_file(cls, data: Any, source: str) -> ScoreTable:
        """The score of a Tongiaki game file (docs/formats.md, "Tongiaki game file"): its event
        log replayed, or the islands counted at the end of a game played on the table."""
        if not isinstance(data, dict):
            raise DataError(source, "a Tongiaki game file is a JSON object")
        if "events" in data and "islands" in data:
            raise DataError(source, "a Tongiaki game file holds `events` or `islands`, not both")
        if "events" in data:
            _known(data, EVENT_FILE_KEYS, "an event log", source)
            events = data["events"]
            if not isinstance(events, list):
                raise DataError(source, "`events` must be a list")
            game = cls.replay(events, source)
            table = game.score()
            return table if game.over else table.unfinished()
        if "islands" in data:
            return _tally(data, source)
        raise DataError(source, "a Tongiaki game file needs `events` or `islands`")

    def view(self) -> dict[str, Any]:
        s = self.state
        players = []
        for i, (name, colour) in enumerate(zip(s.names, s.colours, strict=True)):
            players.append(
                {
                    "name": name,
                    "colour": colour,
                    "supply": s.supply[colour],
                    "on_beaches": self._beach_boats(colour),
                    "royal_islands": s.royals[colour],
                    "to_move": not self.over and i == s.current,
                }
            )
        view: dict[str, Any] = {
            "game": self.key,
            "title": self.title,
            "over": self.over,
            "to_move": self.to_move(),
            "phase": self.phase(),
            "step": s.step,
            "players": players,
            "hex": {
                "orientation": "pointy",
                "coordinates": "axial",
                "edges": list(EDGE_NAMES),
                "directions": [list(d) for d in DIRECTIONS],
            },
            "map": [self._hex_view(at, h) for at, h in sorted(s.hexes.items())],
            "stack": {
                "islands": sum(1 for t in s.stack if self._spec(t).is_island),
                "water": sum(1 for t in s.stack if not self._spec(t).is_island),
            },
            "removed": list(s.removed),
            "newest": self._newest(),
            "news": list(s.news),
            "score": self.score().to_json(),
            "legal": [a.to_json() for a in self._legal()],
        }
        if s.step == "land":
            view["fleet"] = {
                "island": s.target,
                "name": island_name(s.target),
                "boats": list(s.fleet),
            }
        if s.step == "lay":
            view["revealed"] = self._tile_view(self._spec(s.stack[0]), 0)
        return view

    # ------------------------------------------------------------------ reading the map

    def _newest(self) -> dict[str, Any] | None:
        """The tile laid last (Tonga before any other), where the map marks it."""
        if not self.state.hexes:
            return None
        (q, r), h = list(self.state.hexes.items())[-1]
        return {"q": q, "r": r, "tile": h.tile}

    def _spec(self, tile_id: str) -> TileSpec:
        return self.tiles.spec(tile_id)

    def _find(self, island: str) -> Coord | None:
        for at, h in self.state.hexes.items():
            if h.tile == island:
                return at
        return None

    def _island_hex(self, island: str) -> Hex:
        """The laid island `island`; IllegalMove when it is not on the map."""
        at = self._find(island)
        if at is None or not self._spec(island).is_island:
            raise IllegalMove(f"There is no island {island!r} on the map.")
        return self.state.hexes[at]

    def _berths(self, h: Hex, beach: int) -> int:
        return self._spec(h.tile).beaches[beach].berths

    def _free_beaches(self, island: str) -> list[int]:
        h = self._island_hex(island)
        return [b for b, boats in enumerate(h.boats) if len(boats) < self._berths(h, b)]

    def _piers(self, h: Hex, beach: int) -> list[int]:
        """The map edges the piers of `beach` leave from."""
        return [(p + h.rotation) % 6 for p in self._spec(h.tile).beaches[beach].piers]

    def _present(self, h: Hex, colour: str) -> bool:
        return h.royal == colour if h.royal else any(colour in b for b in h.boats)

    def _beach_boats(self, colour: str) -> int:
        return sum(sum(b.count(colour) for b in h.boats) for h in self.state.hexes.values())

    def _on_map(self, colour: str) -> int:
        """The player's boats on the map: on the beaches and in the centre of royal islands."""
        return self._beach_boats(colour) + self.state.royals[colour]

    def _own_counts(self, colour: str) -> dict[str, int]:
        """The player's boats on each island that is not royal."""
        counts = {}
        for h in self.state.hexes.values():
            n = sum(b.count(colour) for b in h.boats)
            if n and not h.royal:
                counts[h.tile] = n
        return counts

    def _full(self) -> list[tuple[Coord, int]]:
        """Every full beach on the map."""
        found = []
        for at, h in sorted(self.state.hexes.items()):
            for b, boats in enumerate(h.boats):
                if boats and len(boats) >= self._berths(h, b):
                    found.append((at, b))
        return found

    def _frontier(self) -> list[Coord]:
        """The empty hexes next to the map, where a revealed tile may be laid."""
        hexes = self.state.hexes
        if not hexes:
            return [(0, 0)]
        empty = {neighbour(at, e) for at in hexes for e in range(6)} - set(hexes)
        return sorted(empty)

    def _trace(self, at: Coord, heading: int, colours: int) -> _Stop:
        """Follow a fleet of `colours` colours leaving hex `at` by map edge `heading`."""
        hexes = self.state.hexes
        for _ in range(4 * len(hexes) + 4):  # routes pair edges, so a course never loops
            nxt = neighbour(at, heading)
            h = hexes.get(nxt)
            if h is None:
                return _Stop("empty", nxt, heading, at)
            spec = self._spec(h.tile)
            if spec.is_island:
                return _Stop("royal" if h.royal else "island", nxt, heading, at)
            if colours < spec.value:
                return _Stop("sink", nxt, heading, at)
            entry = (opposite(heading) - h.rotation) % 6
            heading = (spec.route_exit(entry) + h.rotation) % 6
            at = nxt
        return _Stop("sink", at, heading, at)

    def _closed(self, at: Coord, beach: int, edge: int) -> bool:
        """Whether sailing from this pier only leads back to the same island (ciclo infinito)."""
        colours = len(set(self.state.hexes[at].boats[beach]))
        stop = self._trace(at, edge, colours)
        return stop.kind == "royal" or (stop.kind == "island" and stop.at == at)

    def _every_migration(self) -> list[Migrate]:
        """Every pier of every full beach."""
        found = []
        for at, b in self._full():
            h = self.state.hexes[at]
            found += [Migrate(h.tile, b, edge) for edge in self._piers(h, b)]
        return found

    def _migrations(self) -> list[Migrate]:
        """The migrations open now: any pier of any full beach, in any order, except one chosen
        before in this same position this turn (it came back here: an endless cycle)."""
        tried = self.state.tried.get(self._position_key(), set())
        return [m for m in self._every_migration() if m not in tried]

    def _landing_beaches(self) -> list[int]:
        """Where the next boat of the fleet may moor: first one on every beach with room."""
        s = self.state
        assert s.target is not None
        free = self._free_beaches(s.target)
        first = [b for b in free if b not in s.received]
        return first or free

    def _turn_actions(self) -> list[Action]:
        s = self.state
        me = s.colours[s.current]
        found: list[Action] = []
        if self._on_map(me) == 0:
            for _, h in sorted(s.hexes.items()):
                spec = self._spec(h.tile)
                if not spec.is_island or h.royal:
                    continue
                free = self._free_beaches(h.tile)
                found += [Arrive(h.tile, (b,)) for b in free]
                if spec.kind == "start":
                    room = [b for b in free for _ in range(self._berths(h, b) - len(h.boats[b]))]
                    pairs = sorted(set(itertools.combinations(room, 2)))
                    found += [Arrive(h.tile, pair) for pair in pairs]
        else:
            takes: list[tuple[str, int] | None] = [None]
            if s.supply[me] == 0:
                takes += [
                    (h.tile, b)
                    for _, h in sorted(s.hexes.items())
                    if not h.royal
                    for b, boats in enumerate(h.boats)
                    if me in boats
                ]
            for island, count in sorted(s.turn_counts.items()):
                where = self._find(island)
                if where is None or s.hexes[where].royal:
                    continue
                free = self._free_beaches(island)
                for take in takes:
                    k = min(count, len(free), s.supply[me] + (take is not None))
                    if take is not None and k == 0:
                        continue
                    found += [Expand(island, b, take) for b in itertools.combinations(free, k)]
        found.append(Resettle())
        return found

    # ------------------------------------------------------------------ refusals

    def _normal(self, action: Action) -> Action:
        if isinstance(action, Expand | Arrive):
            return replace(action, beaches=tuple(sorted(action.beaches)))
        return action

    def _refuse(self, action: Action) -> None:  # noqa: C901
        """Raise IllegalMove with the reason when `action` is not open now."""
        s = self.state
        wants = {
            "setup": (Place,),
            "turn": (Expand, Arrive, Resettle),
            "migrate": (Migrate,),
            "land": (Land,),
            "royal": (Royal, Decline),
            "lay": (Lay,),
            "settle": (Place,),
        }[s.step]
        if not isinstance(action, wants):
            raise IllegalMove(f"That is not the move the game waits for: {self.phase()}.")
        me = s.colours[s.current]
        if isinstance(action, Place | Expand | Arrive | Royal | Migrate):
            h = self._island_hex(action.island)
            if h.royal:
                raise IllegalMove(
                    f"{island_name(action.island)} is a royal island: no boat may land there."
                )
            beaches = (
                [action.beach]
                if isinstance(action, Place | Migrate)
                else list(getattr(action, "beaches", ()))
            )
            for b in beaches:
                if not 0 <= b < len(h.boats):
                    raise IllegalMove(f"{island_name(action.island)} has no beach {b}.")
        if isinstance(action, Place) and s.step == "setup":
            if action.island != self.tiles.start.id:
                raise IllegalMove("The opening boats go on Tonga.")
            h = self._island_hex(action.island)
            if len(h.boats[action.beach]) + 2 > self._berths(h, action.beach):
                raise IllegalMove(
                    "Every beach of Tonga keeps at least one berth free at the start."
                )
        if isinstance(action, Place) and s.step == "settle" and action.island != s.target:
            raise IllegalMove(f"The new settlement's boat goes on {island_name(s.target)}.")
        if isinstance(action, Expand):
            self._refuse_expand(action, me)
        if isinstance(action, Arrive) and self._on_map(me) > 0:
            raise IllegalMove("Only a player with no boat on the map brings new boats in.")
        if isinstance(action, Royal) and action.island != s.target:
            raise IllegalMove(
                f"Your own fleet has landed on {island_name(s.target)}: only it may be royal."
            )
        if isinstance(action, Migrate):
            h = self._island_hex(action.island)
            if len(h.boats[action.beach]) < self._berths(h, action.beach):
                raise IllegalMove(
                    f"Beach {action.beach} of {island_name(action.island)} is not full."
                )
            if action.edge not in self._piers(h, action.beach):
                raise IllegalMove(
                    f"Beach {action.beach} of {island_name(action.island)} has no pier that way."
                )
            if action not in self._migrations():
                raise IllegalMove(
                    "That migration came back to this same position: it would sail for ever, "
                    "choose another."
                )
        if isinstance(action, Land):
            assert s.target is not None
            if not 0 <= action.beach < len(self._island_hex(s.target).boats):
                raise IllegalMove(f"{island_name(s.target)} has no beach {action.beach}.")
            if action.colour not in s.fleet:
                raise IllegalMove(f"The fleet has no {action.colour} boat.")
            if action.beach not in self._landing_beaches():
                raise IllegalMove(
                    "Every beach with room gets one boat of the fleet before any gets a second."
                )
        if isinstance(action, Lay) and (action.q, action.r) not in self._frontier():
            raise IllegalMove("A tile is laid on an empty hex next to the map.")
        if isinstance(action, Lay) and not 0 <= action.rotation < 6:
            raise IllegalMove("A tile turns by 0 to 5 sixths.")
        if action not in self._legal():
            raise IllegalMove(f"That move is not open now: {self.phase()}.")

    def _refuse_expand(self, action: Expand, me: str) -> None:
        s = self.state
        count = s.turn_counts.get(action.island, 0)
        if count == 0:
            raise IllegalMove(
                f"You expand only on an island where you had a boat: {island_name(action.island)}."
            )
        if len(set(action.beaches)) != len(action.beaches):
            raise IllegalMove("An expansion puts at most one boat on each beach.")
        if s.supply[me] > 0 and action.take is not None:
            raise IllegalMove("You take a boat from the map only when your supply is empty.")
        if action.take is not None:
            source = self._island_hex(action.take[0])
            beach = action.take[1]
            if source.royal or not 0 <= beach < len(source.boats) or me not in source.boats[beach]:
                raise IllegalMove(f"You have no boat to take on beach {beach} of {action.take[0]}.")
        if s.supply[me] == 0 and action.take is None and action.beaches:
            raise IllegalMove(
                "Your supply is empty: name the boat you take from the map, or add none."
            )
        free = self._free_beaches(action.island)
        full = [b for b in action.beaches if b not in free]
        if full:
            raise IllegalMove(f"Beach {full[0]} of {island_name(action.island)} has no free berth.")
        k = min(count, len(free), s.supply[me] + (action.take is not None))
        if action.take is not None and k == 0:
            raise IllegalMove(
                f"{island_name(action.island)} has no free berth for the boat you take."
            )
        if len(action.beaches) != k:
            raise IllegalMove(
                f"This expansion adds exactly {k} boat(s) to {island_name(action.island)}."
            )

    # ------------------------------------------------------------------ doing

    def _apply(self, action: Action) -> None:
        s = self.state
        me = s.colours[s.current]
        if isinstance(action, Place):
            self._island_hex(action.island).boats[action.beach].append(me)
            s.supply[me] -= 1
            if s.step == "setup":
                s.setup_left -= 1
                if s.setup_left:
                    s.current = (s.current + 1) % len(s.names)
                else:
                    s.current = len(s.names) - 1  # _end_turn passes to the first player
                    self._end_turn()
            else:
                s.target = None
                self._advance()
        elif isinstance(action, Expand):
            if action.take is not None:
                self._island_hex(action.take[0]).boats[action.take[1]].remove(me)
                s.supply[me] += 1
            h = self._island_hex(action.island)
            for b in action.beaches:
                h.boats[b].append(me)
            s.supply[me] -= len(action.beaches)
            self._advance()
        elif isinstance(action, Arrive):
            h = self._island_hex(action.island)
            for b in action.beaches:
                h.boats[b].append(me)
            s.supply[me] -= len(action.beaches)
            self._advance()
        elif isinstance(action, Royal):
            # One of the player's boats goes to the centre; every boat left there goes home.
            h = self._island_hex(action.island)
            for c in (c for b in h.boats for c in b):
                s.supply[c] += 1
            h.boats = [[] for _ in h.boats]
            h.royal = me
            s.supply[me] -= 1
            s.royals[me] += 1
            s.target = None
            s.news.append(
                f"{s.names[s.current]} founds a royal island on {island_name(action.island)}."
            )
            self._end_turn()
        elif isinstance(action, Decline):
            s.target = None
            self._advance()
        elif isinstance(action, Resettle):
            for h in s.hexes.values():
                for boats in h.boats:
                    s.supply[me] += boats.count(me)
                    boats[:] = [c for c in boats if c != me]
            s.news.append(f"{s.names[s.current]} takes every boat off the map to resettle.")
            s.step, s.lay_for = "lay", "resettle"
        elif isinstance(action, Migrate):
            s.tried.setdefault(self._position_key(), set()).add(action)
            at = self._find(action.island)
            assert at is not None
            fleet = s.hexes[at].boats[action.beach]
            s.hexes[at].boats[action.beach] = []
            self._sail(at, action.edge, fleet)
        elif isinstance(action, Land):
            assert s.target is not None
            self._island_hex(s.target).boats[action.beach].append(action.colour)
            s.fleet.remove(action.colour)
            s.received.append(action.beach)
            self._after_landing()
        elif isinstance(action, Lay):
            self._lay(action)

    def _draw(self, at: Coord, rotation: int) -> tuple[TileSpec, bool]:
        """Reveal the top tile and lay it on `at`; whether it was the last of its kind (the game
        ends: after this turn for an island, at once for water)."""
        s = self.state
        spec = self._spec(s.stack.pop(0))
        s.hexes[at] = Hex(spec.id, rotation, [[] for _ in spec.beaches])
        last = not any(self._spec(t).is_island == spec.is_island for t in s.stack)
        if last:
            s.ending = True
            if spec.is_island:
                s.news.append("The last island tile is on the map: the game ends with this turn.")
            else:
                s.news.append("The last water tile is on the map: the game ends.")
        return spec, last

    def _sail(self, origin: Coord, edge: int, fleet: list[str]) -> None:
        """A fleet sails from `origin` by map edge `edge` until it lands, sinks or stays at sea."""
        s = self.state
        at, heading = origin, edge
        while True:
            stop = self._trace(at, heading, len(set(fleet)))
            if stop.kind == "sink":
                need = self._spec(s.hexes[stop.at].tile).value if stop.at in s.hexes else 0
                s.news.append(
                    f"The fleet of {len(fleet)} boats in {len(set(fleet))} colours cannot cross "
                    f"water that needs {need}: the boats go back to their owners."
                )
                for c in fleet:
                    s.supply[c] += 1
                self._advance()
                return
            if stop.kind == "royal":
                origin_tile = s.hexes[origin].tile
                s.news.append(f"A royal island turns the fleet back to {island_name(origin_tile)}.")
                self._begin_landing(origin_tile, fleet)
                return
            if stop.kind == "island":
                self._begin_landing(s.hexes[stop.at].tile, fleet)
                return
            if not s.stack:
                s.news.append("No tile is left to reveal: the fleet is lost at sea.")
                for c in fleet:
                    s.supply[c] += 1
                self._advance()
                return
            spec, last = self._draw(stop.at, opposite(stop.heading))
            if spec.is_island:
                self._begin_landing(spec.id, fleet)
                return
            if last:  # the last water tile: the fleet stays at sea and the game ends
                s.step = "over"
                return
            at, heading = stop.came_from, stop.heading

    def _begin_landing(self, island: str, fleet: list[str]) -> None:
        s = self.state
        s.step, s.target, s.fleet, s.received = "land", island, sorted(fleet), []
        s.own_fleet = set(fleet) == {s.colours[s.current]}
        self._after_landing()

    def _after_landing(self) -> None:
        """Finish the landing once the fleet is moored or no berth is left; a fleet of the
        active player's boats alone that landed may found a royal island there."""
        s = self.state
        assert s.target is not None
        if s.fleet and self._free_beaches(s.target):
            return
        for c in s.fleet:
            s.supply[c] += 1
        if s.fleet:
            s.news.append(f"{len(s.fleet)} boat(s) found no berth and go back to their owners.")
        s.fleet, s.received = [], []
        if self._may_found(s.target):
            s.step = "royal"
            return
        s.target = None
        self._advance()

    def _may_found(self, island: str) -> bool:
        """Whether the active player's own fleet, just landed on `island`, may make it royal."""
        s = self.state
        me = s.colours[s.current]
        h = self._island_hex(island)
        landed = any(me in b for b in h.boats)
        kind_ok = self._spec(island).kind == "island" and not h.royal
        return s.own_fleet and landed and kind_ok and s.royals[me] < MAX_ROYAL

    def _lay(self, action: Lay) -> None:
        s = self.state
        spec, last = self._draw((action.q, action.r), action.rotation)
        if spec.is_island:
            if s.lay_for == "resettle":
                s.step, s.target = "settle", spec.id
            else:
                self._end_turn()
        elif last or not s.stack:
            s.step = "over"

    def _advance(self) -> None:
        """After a move has resolved: the next migration, the chain's end, or the turn's end.

        A chain that comes back to a position it has passed through this turn (the same boats
        on the same beaches, no tile revealed since) would go round for ever: the player
        chooses another migration there. Only when every one has been tried is it the
        rulebook's infinite cycle."""
        s = self.state
        while True:
            full = self._full()
            if not full:
                self._end_turn()
                return
            key = self._position_key()
            if key not in s.tried:
                s.tried[key] = set()
                s.step = "migrate"
                return
            if self._migrations():
                s.news.append(
                    "The migrations came back to the same beaches: choose another migration."
                )
                s.step = "migrate"
                return
            self._infinite_cycle(full)
            me = s.colours[s.current]
            no_island = not any(self._spec(h.tile).is_island for h in s.hexes.values())
            if s.lay_for == "cycle" and (no_island or self._on_map(me) == 0) and s.stack:
                s.step = "lay"
                return

    def _infinite_cycle(self, full: list[tuple[Coord, int]]) -> None:
        """Every migration left comes back here. The islands whose full beaches can only send
        their boats back to themselves give every boat back and leave the map (ciclo infinito);
        if none is such an island, the full beaches' boats go back to their owners."""
        s = self.state
        s.lay_for = ""
        cut = sorted(
            {
                at
                for at, _ in full
                if all(
                    self._closed(at, b, e)
                    for a, b in full
                    if a == at
                    for e in self._piers(s.hexes[at], b)
                )
            }
        )
        if not cut:
            for at, b in full:
                for c in s.hexes[at].boats[b]:
                    s.supply[c] += 1
                s.hexes[at].boats[b] = []
            s.news.append(
                "Every migration left comes back to the same beaches: their boats go back to "
                "their owners."
            )
            return
        for at in cut:
            h = s.hexes.pop(at)
            for c in (c for b in h.boats for c in b):
                s.supply[c] += 1
            s.removed.append(h.tile)
            s.news.append(
                f"{island_name(h.tile)} is cut off: its boats go home and the tile leaves the map."
            )
        s.lay_for = "cycle"

    def _end_turn(self) -> None:
        s = self.state
        if s.ending:
            s.step = "over"
            return
        s.current = (s.current + 1) % len(s.names)
        s.step = "turn"
        s.tried = {}
        s.turn_counts = self._own_counts(s.colours[s.current])

    def _position_key(self) -> tuple[Any, ...]:
        s = self.state
        boats = tuple(
            (at, tuple(tuple(sorted(b)) for b in h.boats)) for at, h in sorted(s.hexes.items())
        )
        return (len(s.stack), boats)

    # ------------------------------------------------------------------ views

    def _tile_view(self, spec: TileSpec, rotation: int) -> dict[str, Any]:
        data: dict[str, Any] = {"tile": spec.id, "kind": spec.kind, "value": spec.value}
        if spec.is_island:
            data["beaches"] = [
                {"berths": b.berths, "piers": sorted((p + rotation) % 6 for p in b.piers)}
                for b in spec.beaches
            ]
        else:
            data["routes"] = [
                sorted(((a + rotation) % 6, (b + rotation) % 6)) for a, b in spec.routes
            ]
        return data

    def _hex_view(self, at: Coord, h: Hex) -> dict[str, Any]:
        spec = self._spec(h.tile)
        data = {"q": at[0], "r": at[1], "rotation": h.rotation, **self._tile_view(spec, h.rotation)}
        if spec.is_island:
            data["name"] = island_name(h.tile)
            data["royal"] = h.royal
            for beach, boats in zip(data["beaches"], h.boats, strict=True):
                beach["boats"] = list(boats)
        return data


@dataclass(frozen=True)
class Island:
    """One island at the end of a game: its points, each player's boats there, a royal owner."""

    value: int
    boats: dict[str, int]
    royal: str | None = None


#: The score's rows: the points that add up to the total, then the counts that break ties.
POINTS: tuple[str, ...] = ("island_points", "royal_island_points")
TIEBREAKS: tuple[str, ...] = ("islands", "boats")


def score_islands(
    names: Sequence[str], islands: Sequence[Island], game: str, *, over: bool = True
) -> ScoreTable:
    """Each player scores every island where they have a boat (a royal island: only its owner);
    ties go to more islands, then to fewer boats on the map (a royal island's boat counts)."""
    rows = []
    for name in names:
        shared = [i for i in islands if not i.royal and i.boats.get(name, 0)]
        royal = [i for i in islands if i.royal == name]
        boats = sum(i.boats.get(name, 0) for i in islands) + len(royal)
        breakdown = {
            "island_points": sum(i.value for i in shared),
            "royal_island_points": sum(i.value for i in royal),
            "islands": len(shared) + len(royal),
            "boats": boats,
            "royal_islands": len(royal),
        }
        total = breakdown["island_points"] + breakdown["royal_island_points"]
        rows.append(PlayerScore(name, total, breakdown))
    best = max(_rank(p) for p in rows)
    winners = tuple(p.name for p in rows if _rank(p) == best)
    return ScoreTable(game, tuple(rows), winners, over, POINTS, TIEBREAKS)


def _rank(p: PlayerScore) -> tuple[int, int, int]:
    """Points, then islands, then fewer boats on the map."""
    return (p.total, p.breakdown["islands"], -p.breakdown["boats"])


#: The keys of a Tongiaki game file's two forms and of an island in its count.
EVENT_FILE_KEYS = frozenset({"game", "events"})
TALLY_KEYS = frozenset({"game", "players", "islands"})
ISLAND_KEYS = frozenset({"value", "boats", "royal"})


def _known(data: dict[str, Any], keys: frozenset[str], what: str, source: str) -> None:
    """DataError naming the first key of `data` that `what` does not have."""
    for key in data:
        if key not in keys:
            allowed = ", ".join(sorted(keys))
            raise DataError(source, f"{what} has no key {key!r} (its keys: {allowed})")


def _count(value: Any, where: str, source: str, high: int) -> int:
    if type(value) is not int or not 0 <= value <= high:
        raise DataError(source, f"{where} must be a whole number from 0 to {high}")
    return value


def _tally(data: dict[str, Any], source: str) -> ScoreTable:  # noqa: C901
    """Score the `players` + `islands` form of a Tongiaki game file, every number checked
    against the box: islands worth 2-5 (Tonga 0, once), no more of a value than the box holds,
    at most 15 boats and 2 royal islands a player."""
    _known(data, TALLY_KEYS, "an island count", source)
    tiles = default_tiles()
    names = data.get("players")
    if not isinstance(names, list) or not all(isinstance(n, str) and n for n in names):
        raise DataError(source, "`players` must be a list of names")
    if not Tongiaki.min_players <= len(names) <= Tongiaki.max_players:
        raise DataError(source, f"Tongiaki is played by 2 to 6 players, not {len(names)}")
    if len(set(names)) != len(names):
        raise DataError(source, "two players have the same name")
    raw = data["islands"]
    if not isinstance(raw, list):
        raise DataError(source, "`islands` must be a list")
    in_box = Counter(t.value for t in tiles.tiles.values() if t.is_island)
    start = tiles.start.value
    values = sorted(v for v in in_box if v != start)
    islands = []
    for i, entry in enumerate(raw, start=1):
        if not isinstance(entry, dict):
            raise DataError(source, f"island {i} must be an object")
        _known(entry, ISLAND_KEYS, f"island {i}", source)
        value = entry.get("value")
        if type(value) is not int or value not in in_box:
            raise DataError(
                source,
                f"island {i}'s value must be {values[0]} to {values[-1]} points "
                f"(or {start} for Tonga), not {value!r}",
            )
        boats_raw = entry.get("boats", {})
        if not isinstance(boats_raw, dict):
            raise DataError(source, f"island {i}'s boats must map names to counts")
        boats = {}
        for name, n in boats_raw.items():
            if name not in names:
                raise DataError(source, f"island {i} names {name!r}, who is not a player")
            where = f"island {i}'s boats of {name}"
            boats[name] = _count(n, where, source, tiles.boats_per_player)
        royal = entry.get("royal")
        if royal is not None and royal not in names:
            raise DataError(source, f"island {i}'s royal owner {royal!r} is not a player")
        if royal is not None and value == start:
            raise DataError(source, f"island {i} is Tonga (worth {start}): it cannot be royal")
        if royal is not None and any(boats.values()):
            raise DataError(source, f"island {i} is royal, so no boat stands on its beaches")
        islands.append(Island(value, boats, royal))
    counted = Counter(i.value for i in islands)
    for value, n in sorted(counted.items()):
        if n > in_box[value]:
            what = "Tonga" if value == start else f"islands worth {value}"
            raise DataError(source, f"the box holds {in_box[value]} {what}, the count names {n}")
    for name in names:
        royal_count = sum(1 for i in islands if i.royal == name)
        if royal_count > MAX_ROYAL:
            raise DataError(
                source,
                f"{name} has {royal_count} royal islands; a player founds at most {MAX_ROYAL}",
            )
        on_map = sum(i.boats.get(name, 0) for i in islands) + royal_count
        if on_map > tiles.boats_per_player:
            raise DataError(
                source,
                f"{name} has {on_map} boats on the map; a player has {tiles.boats_per_player}",
            )
    return score_islands(names, islands, Tongiaki.key)


def _lay_out(state: State, tiles: TileSet, position: Any) -> None:  # noqa: C901
    """Lay a position's map and boats on `state` (docs/formats.md, "Tongiaki game file",
    `position`)."""
    if not isinstance(position, dict) or not isinstance(position.get("map"), list):
        raise MalformedMove("A position needs a `map` list of laid tiles.")
    on_board: Counter[str] = Counter()
    for entry in position["map"]:
        if not isinstance(entry, dict):
            raise MalformedMove("Each laid tile must be an object.")
        tile, q, r = entry.get("tile"), entry.get("q"), entry.get("r")
        rotation = entry.get("rotation", 0)
        if not isinstance(tile, str) or tile not in tiles.tiles:
            raise IllegalMove(f"There is no tile {tile!r} in the box.")
        if not all(type(v) is int for v in (q, r, rotation)) or not 0 <= rotation < 6:
            raise MalformedMove(f"Tile {tile} needs whole-number q, r and a rotation 0-5.")
        assert isinstance(q, int) and isinstance(r, int)
        if (q, r) in state.hexes or any(h.tile == tile for h in state.hexes.values()):
            raise IllegalMove(f"Tile {tile} or its hex is used twice.")
        if tile in state.stack:
            raise IllegalMove(f"Tile {tile} is both on the map and in the stack.")
        spec = tiles.spec(tile)
        boats = entry.get("boats", [[] for _ in spec.beaches])
        if not isinstance(boats, list) or len(boats) != len(spec.beaches):
            raise MalformedMove(f"Tile {tile} needs one list of boats per beach.")
        for b, (beach, moored) in enumerate(zip(spec.beaches, boats, strict=True)):
            if not isinstance(moored, list) or any(c not in state.colours for c in moored):
                raise MalformedMove(f"Beach {b} of {tile} lists a colour no player has.")
            if len(moored) >= beach.berths:
                raise IllegalMove(f"Beach {b} of {tile} is full; a turn starts with none full.")
        royal = entry.get("royal")
        if royal is not None and (royal not in state.colours or spec.kind != "island"):
            raise IllegalMove(f"Tile {tile} cannot be a royal island of {royal!r}.")
        if royal is not None and any(boats):
            raise IllegalMove(f"The royal island {tile} has no boat on its beaches.")
        state.hexes[(q, r)] = Hex(tile, rotation, [list(b) for b in boats], royal)
        on_board.update(c for b in boats for c in b)
        if royal is not None:
            on_board[royal] += 1
            state.royals[royal] += 1
    for colour in state.colours:
        if state.royals[colour] > MAX_ROYAL:
            raise IllegalMove(f"{colour} has more than {MAX_ROYAL} royal islands.")
        state.supply[colour] -= on_board[colour]
        if state.supply[colour] < 0:
            raise IllegalMove(f"{colour} has more than {tiles.boats_per_player} boats.")
    first = position.get("to_move", 0)
    if type(first) is not int or not 0 <= first < len(state.names):
        raise MalformedMove("`to_move` must be the seat number of a player.")
    state.step, state.current, state.turn_counts = "turn", first, {}
    me = state.colours[first]
    for h in state.hexes.values():
        n = sum(b.count(me) for b in h.boats)
        if n and not h.royal:
            state.turn_counts[h.tile] = n
