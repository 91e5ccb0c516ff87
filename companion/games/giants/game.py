"""GiantsGame: the companion's BoardGame for Giants (push/pop, event log, replay, score, view)."""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from typing import Any, ClassVar, Self

from companion.errors import CompanionError, DataError, IllegalMove, MalformedMove, NotNow
from companion.games.base import Action as AnyAction
from companion.games.base import BoardGame, PlayerScore, ScoreTable
from companion.games.giants import rules
from companion.games.giants.actions import ACTION_CLASSES, Action, Roll, action_from_json
from companion.games.giants.final_count import POINTS, score_final_count
from companion.games.giants.island import Island, default_island
from companion.games.giants.state import BASES, State

FORMAT = 1
#: The keys of a game file, of its events and of the setup; any other is refused, never dropped.
FILE_KEYS = ("game", "events")
SETUP_KEYS = ("type", "game", "format", "players", "seed", "options", "island")
OPTIONS = ("two_workers", "open_scoring")
EVENT_KEYS = {"action": ("type", "action"), "undo": ("type",)}


def _unknown_key(data: dict[str, Any], allowed: Sequence[str], where: str) -> str | None:
    """The sentence refusing the first key of `data` not in `allowed`, or None."""
    unknown = sorted(str(k) for k in data if k not in allowed)
    if not unknown:
        return None
    return f"{where} has an unknown key {unknown[0]!r}; its keys are {', '.join(allowed)}."


class GiantsGame:
    """A game of Giants followed by the companion: every phase, whose turn, the track."""

    key: ClassVar[str] = "giants"
    title: ClassVar[str] = "Giants"
    min_players: ClassVar[int] = 3
    max_players: ClassVar[int] = 5
    needs_camera: ClassVar[bool] = False

    def __init__(self, island: Island, state: State, setup: dict[str, Any]) -> None:
        self.island = island
        self.state = state
        self.events: list[dict[str, Any]] = [setup]
        self._undo: list[tuple[State, Action]] = []

    @classmethod
    def new(
        cls,
        names: Sequence[str],
        seed: int = 0,
        *,
        two_workers: bool = False,
        open_scoring: bool = False,
        island: Island | None = None,
    ) -> Self:
        """A game for 3 to 5 players, the first name starting and the others clockwise.

        two_workers: the rulebook's option of two starting workers; open_scoring: the variant
        that moves the track as each Moai is erected. `seed` is recorded; the engine draws
        nothing at random (the table rolls the dice)."""
        island = island or default_island()
        clean = [str(n).strip() for n in names]
        if not cls.min_players <= len(clean) <= cls.max_players:
            raise IllegalMove(f"Giants is played by 3 to 5 players, not {len(clean)}.")
        if any(not n for n in clean):
            raise IllegalMove("Every player needs a name.")
        if len({n.casefold() for n in clean}) != len(clean):
            raise IllegalMove("Two players have the same name.")
        state = rules.new_state(clean, island, two_workers=two_workers, open_scoring=open_scoring)
        setup = {
            "type": "setup",
            "game": cls.key,
            "format": FORMAT,
            "players": clean,
            "seed": seed,
            "options": {"two_workers": two_workers, "open_scoring": open_scoring},
            "island": island.to_json(),
        }
        return cls(island, state, setup)

    @classmethod
    def replay(cls, events: Sequence[dict[str, Any]], source: str = "event log") -> Self:
        """Rebuild a game from its event log; a damaged log raises DataError naming `source`."""
        if not isinstance(events, Sequence) or not events:
            raise DataError(source, "a Giants game log is a non-empty list of events.")
        setup = events[0]
        if not isinstance(setup, dict) or setup.get("type") != "setup":
            raise DataError(source, "the first event must be the setup.")
        if setup.get("game") != cls.key:
            raise DataError(source, f"this is a game of {setup.get('game')!r}, not of giants.")
        if setup.get("format") != FORMAT:
            raise DataError(source, f"unknown Giants log format {setup.get('format')!r}.")
        problem = _unknown_key(setup, SETUP_KEYS, "the setup")
        options = setup.get("options", {})
        if problem is None and isinstance(options, dict):
            problem = _unknown_key(options, OPTIONS, "the setup's options")
        if problem is not None:
            raise DataError(source, problem)
        if not isinstance(options, dict) or not all(
            type(options.get(k, False)) is bool for k in OPTIONS
        ):
            raise DataError(source, "the setup's options must be true or false.")
        players = setup.get("players")
        if not isinstance(players, list) or not all(isinstance(p, str) for p in players):
            raise DataError(source, "the setup must list the players' names.")
        seed = setup.get("seed", 0)
        if type(seed) is not int:
            raise DataError(source, f"the setup's seed must be a whole number, not {seed!r}.")
        island = Island.from_json(setup.get("island"), f"{source}: setup's island")
        island.check_playable(f"{source}: setup's island")
        try:
            game = cls.new(
                players,
                seed,
                two_workers=options.get("two_workers", False),
                open_scoring=options.get("open_scoring", False),
                island=island,
            )
        except IllegalMove as exc:
            raise DataError(source, f"setup: {exc.message}") from None
        for number, event in enumerate(events[1:], start=2):
            try:
                if not isinstance(event, dict):
                    raise MalformedMove("an event must be an object.")
                keys = EVENT_KEYS.get(str(event.get("type")))
                problem = _unknown_key(event, keys, "the event") if keys else None
                if problem is not None:
                    raise MalformedMove(problem)
                if event.get("type") == "action":
                    game.push(cls.action_from_json(event.get("action")))
                elif event.get("type") == "undo":
                    game.pop()
                else:
                    raise MalformedMove(f"unknown event type {event.get('type')!r}.")
            except CompanionError as exc:
                raise DataError(source, f"event {number}: {exc.message}") from None
        return game

    @classmethod
    def loads(cls, text: str, source: str = "game file") -> Self:
        """A game from its file (docs/formats.md, "Giants game file"); bad files raise DataError."""
        try:
            data = json.loads(text)
        except (json.JSONDecodeError, RecursionError) as exc:
            raise DataError(source, f"not JSON ({exc}).") from None
        if isinstance(data, dict) and "events" in data:
            if data.get("game", cls.key) != cls.key:
                raise DataError(source, f"this is a game of {data.get('game')!r}, not of giants.")
            problem = _unknown_key(data, FILE_KEYS, "the game file")
            if problem is not None:
                raise DataError(source, problem)
            data = data["events"]
        if not isinstance(data, list):
            raise DataError(source, 'a Giants game file is {"game": "giants", "events": [...]}.')
        return cls.replay(data, source)

    @classmethod
    def score_file(cls, data: Any, source: str) -> ScoreTable:
        """The score of a Giants file (docs/formats.md): an event log replayed where it stops
        (`over` False and no winners when the game has not ended), or a final count."""
        if isinstance(data, dict) and "events" in data:
            problem = _unknown_key(data, FILE_KEYS, "the game file")
            if problem is not None:
                raise DataError(source, problem)
            return cls.replay(data["events"], source).score()
        return score_final_count(data, source)

    def dumps(self) -> str:
        """The game file: the event log, which replays to this very game."""
        return json.dumps({"game": self.key, "events": self.events}, indent=1)

    @classmethod
    def action_from_json(cls, data: Any) -> Action:
        return action_from_json(data)

    @property
    def over(self) -> bool:
        return self.state.over

    def to_move(self) -> str | None:
        return rules.to_move(self.state)

    def phase(self) -> str:
        name = self.to_move()
        if name is None:
            return "The game is over."
        what = {
            "roll": "roll the quarry dice",
            "bid": "bid tribe markers and sculptors (secretly)",
            "choose": "choose a Moai from the quarry or pass",
            "place": "place a piece, take a Rongo half-tablet or pass",
            "transport": "move or mark a Moai or headdress, or pass",
            "marking": "mark a Moai or headdress that did not move this turn, or pass",
            "reclaim": "take tribe markers back from Moai or pass",
        }[self.state.phase]
        return f"{name}: {what}"

    def legal_actions(self) -> list[AnyAction]:
        return list(rules.legal_actions(self.state, self.island))

    def push(self, action: AnyAction) -> None:
        if not isinstance(action, ACTION_CLASSES):
            raise MalformedMove("That is not a Giants action.")
        trial = self.state.copy()
        recorded = rules.apply(trial, self.island, action)
        self._undo.append((self.state, recorded))
        self.state = trial
        self.events.append({"type": "action", "action": recorded.to_json()})

    def pop(self) -> Action:
        if not self._undo:
            raise NotNow("There is no action to undo.")
        self.state, action = self._undo.pop()
        self.events.append({"type": "undo"})
        return action

    def destinations(self, item: str) -> dict[str, tuple[str, ...]]:
        """Where the player to move can take `item` now (for a tap page): each hex with the
        path that gives the fewest points away; empty if they may not move it."""
        name = self.to_move()
        load = self.state.items.get(item)
        if name is None or self.state.phase != "transport" or load is None:
            return {}
        if load.ahu is not None or load.owner not in (None, name):
            return {}
        return rules.reach(self.state, self.island, name, load)

    def help_ways(self, item: str, path: Sequence[str]) -> list[list[dict[str, int]]]:
        """For a tap page: per hex of `path`, every way the player to move may give the points
        there, cheapest first (`{}`: nobody); a Move's `help` takes one of each, by the mover's
        choice. Empty when `item` cannot be carried along `path` (push says why)."""
        name = self.to_move()
        load = self.state.items.get(item)
        if name is None or self.state.phase != "transport" or load is None:
            return []
        out = []
        for step in path:
            ways = rules.help_options(self.state, step, name, load.size)
            if ways is None:
                return []
            out.append([dict(way) for way in ways])
        return out

    def roll(self, rng: random.Random) -> Roll:
        """The quarry dice thrown with `rng` (for bots and a table without dice)."""
        name = self.to_move() or ""
        faces = rules.dice_faces(self.island, len(self.state.clans))
        return Roll(name, tuple(rng.choice(die) for die in faces))

    # --- scores -----------------------------------------------------------------------------

    def breakdown(self, name: str) -> dict[str, int]:
        """A player's points: transport (the track), moai, headdresses and rongo."""
        s = self.state
        clan = s.clan(name)
        moai = headdresses = 0
        for ahu_id, spot in s.ahus.items():
            if spot.base != name or spot.moai is None:
                continue
            ahu = self.island.ahu_by_id[ahu_id]
            moai += ahu.value * s.items[spot.moai].size
            if spot.headdress is not None:
                headdresses += ahu.headdress
        transport = clan.prestige - (moai if s.open_scoring else 0)
        return {
            "transport": transport,
            "moai": moai,
            "headdresses": headdresses,
            "rongo": 3 * (clan.rongo // 2),
        }

    def score(self) -> ScoreTable:
        """Final: track + Moai + headdresses + 3 per whole Rongo tablet. During play, what the
        track shows: transport prestige, plus the Moai under open scoring."""
        players = []
        for clan in self.state.clans:
            full = self.breakdown(clan.name)
            if not self.over:
                shown = {"transport": full["transport"]}
                if self.state.open_scoring:
                    shown["moai"] = full["moai"]
                full = {k: shown.get(k, 0) for k in full}
            players.append(PlayerScore(clan.name, sum(full.values()), full))
        top = max(p.total for p in players)
        winners = tuple(p.name for p in players if p.total == top) if self.over else ()
        return ScoreTable(self.key, tuple(players), winners, over=self.over, points=POINTS)

    # --- what the phones show ---------------------------------------------------------------

    def view(self, player: str | None = None) -> dict[str, Any]:
        """The public table as JSON; with `player`, also what stands behind that one's screen.

        Bids stay hidden until all are in, and the colour of a face-down base until the end
        (or at once under open scoring)."""
        s = self.state
        revealed = s.over or s.open_scoring
        bids_shown = s.phase not in ("roll", "bid")

        def base_owner(spot_base: str | None, reserved: bool) -> str | None:
            if spot_base is None:
                return None
            if reserved or revealed or spot_base == player:
                return spot_base
            return "hidden"

        players = []
        for clan in s.clans:
            front_items = [
                i.id
                for i in s.items.values()
                if i.owner == clan.name and i.hex is None and not i.ahu
            ]
            entry: dict[str, Any] = {
                "name": clan.name,
                "prestige": clan.prestige,
                "rongo_halves": clan.rongo,
                "erected": clan.erected if revealed or clan.name == player else None,
                "bases": BASES[len(s.clans)],
                "passed": (clan.done or clan.waiting)
                and s.phase in ("place", "transport", "marking", "reclaim"),
                "bid_in": clan.bid is not None,
                "bid": clan.bid.to_json() if clan.bid and bids_shown else None,
                "before_screen": front_items,
            }
            if clan.name == player:
                entry["screen"] = {
                    "workers": clan.free_workers,
                    "sorcerer": clan.sorcerer,
                    "chief": clan.chief,
                    "markers": clan.free_markers,
                    "logs": clan.logs,
                    "bases": clan.bases,
                    "sculptors": clan.sculptors,
                }
            players.append(entry)
        hexes = []
        for h in self.island.hexes:
            hexes.append(
                {
                    "id": h.id,
                    "q": h.q,
                    "r": h.r,
                    "kind": h.kind,
                    "logs": (0 if h.id in s.cleared else h.logs) if h.kind == "forest" else None,
                    "pieces": [
                        {"owner": p.owner, "piece": p.piece, "powered": p.powered}
                        for p in s.pieces.get(h.id, [])
                    ],
                    "placed_logs": s.board_logs.get(h.id, 0),
                    "items": [i.id for i in s.items.values() if i.hex == h.id and i.ahu is None],
                    "ahus": list(self.island.ahus_at[h.id]),
                }
            )
        ahus = []
        for a in self.island.ahus:
            spot = s.ahus[a.id]
            ahus.append(
                {
                    "id": a.id,
                    "hex": a.hex,
                    "value": a.value,
                    "headdress_value": a.headdress,
                    "base": base_owner(spot.base, spot.reserved),
                    "reserved": spot.reserved,
                    "moai": spot.moai,
                    "size": s.items[spot.moai].size if spot.moai else None,
                    "headdress": spot.headdress,
                }
            )
        items = [
            {
                "id": i.id,
                "kind": i.kind,
                "size": i.size if i.kind == "moai" else None,
                "owner": i.owner if i.ahu is None else None,
                "marked": i.marked,
                "hex": i.hex,
                "ahu": i.ahu,
            }
            for i in s.items.values()
        ]
        return {
            "game": self.key,
            "title": self.title,
            "round": s.round,
            "phase": s.phase,
            "phase_text": self.phase(),
            "to_move": self.to_move(),
            "over": s.over,
            "first_player": s.clans[s.first].name,
            "options": {"two_workers": s.two_workers, "open_scoring": s.open_scoring},
            "players": players,
            "quarry": {"dice": list(s.dice), "moai": list(s.quarry), "broken": s.broken},
            "auction_order": [s.clans[i].name for i in s.priority] if bids_shown else [],
            "island": {"hexes": hexes, "ahus": ahus},
            "items": items,
            "supply": {
                "moai": list(s.stock),
                "headdresses": s.headdresses,
                "logs": s.logs,
                "rongo_halves": s.rongo,
            },
            "score": self.score().to_json(),
        }


def _is_a_board_game(game: GiantsGame) -> BoardGame:
    """mypy checks here that GiantsGame implements the BoardGame interface."""
    return game
