"""What every game the companion knows offers the session, the journal, the pages and the CLI.

A game is a pure library in the style of companion/ (python-chess's Board is the model): a
value-type action per move, `push` that refuses an illegal action with one sentence and changes
nothing, `pop` for undo, an append-only event log (`events`, JSON) from which `replay` rebuilds the
same game, and a final score. It imports neither OpenCV, Flask nor gpiozero.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar, Protocol, Self


class Action(Protocol):
    """One move of a game, a frozen value; its JSON form round-trips through `action_from_json`."""

    def to_json(self) -> dict[str, Any]: ...


@dataclass(frozen=True)
class PlayerScore:
    """One player's final (or running) score: the total and the game's own breakdown."""

    name: str
    total: int
    breakdown: dict[str, int] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, **self.breakdown, "total": self.total}


@dataclass(frozen=True)
class ScoreTable:
    """Every player's score and the winners (every player tied for first after tie-breaks).

    `over` is False for a game that has not ended: its winners are those of a game ending
    now, and none at all in the score of a file whose log stops mid-game (`unfinished`).
    `points` lists the breakdown keys that add up to the total, `tiebreaks` the counts that
    break a tie on points, in the rulebook's order; a game that names neither shows its
    breakdown as it comes."""

    game: str
    players: tuple[PlayerScore, ...]
    winners: tuple[str, ...]
    over: bool = True
    points: tuple[str, ...] = ()
    tiebreaks: tuple[str, ...] = ()

    def unfinished(self) -> ScoreTable:
        """This table as the score of a game that has not ended: no winners."""
        return replace(self, over=False, winners=())

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "game": self.game,
            "over": self.over,
            "players": [p.to_json() for p in self.players],
            "winners": list(self.winners),
        }
        if self.points or self.tiebreaks:
            data["rows"] = {"points": list(self.points), "tiebreaks": list(self.tiebreaks)}
        return data


class BoardGame(Protocol):
    """The interface each game module's main class implements (Tongiaki, Giants, ...)."""

    key: ClassVar[str]  # "tongiaki": what `--game` takes
    title: ClassVar[str]  # "Tongiaki": what a page shows
    min_players: ClassVar[int]
    max_players: ClassVar[int]
    needs_camera: ClassVar[bool]

    # [{"type": "setup", ...}, {"type": "action", "action": {...}}, {"type": "undo"}, ...]
    events: list[dict[str, Any]]

    @classmethod
    def new(cls, names: Sequence[str], seed: int = 0) -> Self:
        """A game set up for these players (setup by player count); random draws from `seed`.

        Raises IllegalMove for a player count the game does not allow."""
        ...

    @classmethod
    def replay(cls, events: Sequence[dict[str, Any]], source: str = "event log") -> Self:
        """Rebuild a game from its event log; a damaged log raises DataError naming `source`."""
        ...

    @classmethod
    def action_from_json(cls, data: Any) -> Action:
        """An action from its JSON form; raises MalformedMove for something that is not one."""
        ...

    @property
    def over(self) -> bool: ...

    def to_move(self) -> str | None:
        """The name of the player whose decision the game waits for (None once over)."""
        ...

    def phase(self) -> str:
        """What the game waits for, in a few words a player understands ("Ana: place a boat")."""
        ...

    def legal_actions(self) -> list[Action]:
        """Every action the player to move may take now (bots and tap pages choose from it)."""
        ...

    def push(self, action: Action) -> None:
        """Play an action; an illegal one raises IllegalMove (one sentence) and changes nothing."""
        ...

    def pop(self) -> Action:
        """Undo the last action; IllegalMove when there is none."""
        ...

    def score(self) -> ScoreTable:
        """The running score now; the final score once `over`."""
        ...

    def view(self) -> dict[str, Any]:
        """Everything a phone page shows, as JSON: players, whose turn, phase, map or track."""
        ...


class ScoresFiles(Protocol):
    """Optional: a game whose files (docs/formats.md) hold more than an event log to score.

    `companion score --game G FILE` calls `score_file` when the game's class has it, and
    otherwise replays the file's `events`."""

    @classmethod
    def score_file(cls, data: Any, source: str) -> ScoreTable:
        """The score of the parsed JSON `data`; a wrong file raises DataError naming `source`."""
        ...
