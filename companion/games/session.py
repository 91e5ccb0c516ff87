"""The board game being played at one table (Tongiaki, Giants: any BoardGame), behind one lock.

The host's changes (a new game, an action, an undo) go through a BoardSession; each is on disk
in its journal (companion.journal, BOARD_EVENTS: the game's own event log, one event a line,
the setup naming the game) before anyone sees it, and a change that cannot be saved is not
made (StorageError, one sentence). Every change bumps `version` and wakes the subscribers (the
web's Server-Sent Events) and the listeners. Like Māori's Session it trusts its callers: the
web checks the host's login first. Pure: no Flask.
"""

from __future__ import annotations

import logging
import secrets
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from companion.errors import CompanionError, DataError, IllegalMove, NotNow
from companion.games import game_class
from companion.games.base import Action, BoardGame
from companion.journal import (
    BOARD_EVENTS,
    Journal,
    StorageError,
    game_of,
    longest_replay,
    storage_sentence,
)
from companion.subscription import Subscription

log = logging.getLogger(__name__)

#: The board games' journal: this folder of the state directory.
BOARD_DIR = "board-games"


def board_journal(state_dir: str | Path) -> Journal:
    """The board games' journal in the state directory `state_dir`."""
    return Journal(Path(state_dir) / BOARD_DIR, BOARD_EVENTS)


def moves_of(events: Sequence[dict[str, Any]]) -> int:
    """How many actions of an event log stand (each undo takes one back)."""
    moves = 0
    for event in events:
        if event.get("type") == "action":
            moves += 1
        elif event.get("type") == "undo":
            moves -= 1
    return moves


@dataclass(frozen=True, slots=True)
class Damage:
    """A saved board game that could not be read whole, kept for the host to decide on.

    `problem` says what is wrong, `kept` is the dated copy of the damaged file (None if none
    could be made), `events` the lines before the damage that replay, `moves` how many moves
    they hold (None without a good setup: only a new game is possible)."""

    problem: str
    kept: str | None
    events: tuple[dict[str, Any], ...]
    moves: int | None

    def to_json(self) -> dict[str, Any]:
        return {"problem": self.problem, "kept": self.kept, "moves": self.moves}


@dataclass
class Listeners:
    """Called, under the session's lock, after each change is saved: `on_change` with the
    sentence saying what changed."""

    on_change: list[Callable[[str], None]] = field(default_factory=list)


class BoardSession:
    """One table's board game (or none); every public method is thread-safe. `lock` is held
    while reading `game` so a change never lands half-way through a read."""

    def __init__(self, journal: Journal | None = None, *, version: int | None = None) -> None:
        self.journal = journal
        self.game: BoardGame | None = None
        self.damage: Damage | None = None
        self.unsaved: str | None = None  # why the last write to the journal failed
        # Counted from a random start by default, so a page from before a restart sees a
        # new number.
        self.version = secrets.randbelow(2**31) if version is None else version
        self.lock = threading.RLock()
        self._changed = threading.Condition(self.lock)
        self._subscribers: set[Subscription] = set()
        self.listeners = Listeners()

    # ------------------------------------------------------------ plumbing

    def _bump(self, text: str | None = None) -> None:
        self.version += 1
        self._changed.notify_all()
        if text is not None:
            for listener in self.listeners.on_change:
                listener(text)

    def _unsaved(self, what: str, exc: OSError) -> StorageError:
        self.unsaved = storage_sentence(what, exc)
        self._bump()
        return StorageError(self.unsaved)

    def subscribe(self) -> Subscription:
        """A new subscriber; its first wait() returns at once with the current version."""
        with self.lock:
            sub = Subscription(self)
            self._subscribers.add(sub)
            return sub

    @property
    def subscriber_count(self) -> int:
        with self.lock:
            return len(self._subscribers)

    def _require_game(self) -> BoardGame:
        if self.game is None:
            raise NotNow("No board game is being played: start one first.")
        return self.game

    # ------------------------------------------------------------ resuming

    @classmethod
    def resume(cls, journal: Journal, **kwargs: Any) -> BoardSession:
        """The board game saved in `journal` at its last confirmed move (or none). A damaged
        journal gives a session without a game and its `damage` for the host."""
        session = cls(journal, **kwargs)
        saved = journal.load()
        if saved is None:
            return session
        source = saved.path.name if saved.path is not None else str(journal.directory)
        events, game, problem = replayable(saved.events, source)
        if saved.damage is None and problem is None and game is not None:
            session.game = game
            return session
        problem = saved.damage or problem or "it has no game"
        kept: str | None = None
        if saved.path is not None:
            try:
                kept = journal.keep_aside(saved.path).name
            except OSError as exc:
                problem += f" (no copy could be kept: {exc.strerror or exc})"
        moves = None if game is None else moves_of(events)
        session.damage = Damage(problem, kept, events, moves)
        return session

    def resume_last_good(self) -> str:
        """The host's choice for a damaged journal: go on from its last good move, in a new
        game file (the damaged file and its copy stay as they are)."""
        with self.lock:
            damage = self.damage
            if damage is None:
                raise NotNow("There is no damaged board game to resume.")
            events, game, _ = replayable(damage.events, "the saved game")
            if game is None:
                raise NotNow("The damaged game has no good move: start a new game.")
            if self.journal is not None:
                try:
                    self.journal.start(events[0], *events[1:])
                except OSError as exc:
                    raise self._unsaved("The board game", exc) from None
            self.unsaved = None
            self.game = game
            self.damage = None
            text = f"{game.title} goes on {after(moves_of(events))}."
            self._bump(text)
            return text

    # ------------------------------------------------------------ host changes

    def start(self, key: str, names: Sequence[str], seed: int) -> BoardGame:
        """Set up a new game of `key` (replacing any running one) once it is saved."""
        game = game_class(key).new(names, seed)
        with self.lock:
            if self.journal is not None:
                try:
                    self.journal.start(game.events[0], *game.events[1:])
                except OSError as exc:
                    raise self._unsaved("The new game", exc) from None
            self.unsaved = None
            self.game = game
            self.damage = None
            self._bump(f"A game of {game.title} for {', '.join(names)}.")
            return game

    def play(self, action: Action | int, *, version: int | None = None) -> Action:
        """Play `action` (or the legal action of that number) for the player to move. An
        illegal one raises IllegalMove, one that cannot be saved StorageError, and either
        changes nothing; with `version`, a game changed since that version is refused (NotNow)."""
        with self.lock:
            game = self._require_game()
            if version is not None and version != self.version:
                raise NotNow("The game changed since this page was drawn: look again.")
            if isinstance(action, int):
                legal = game.legal_actions()
                if not 0 <= action < len(legal):
                    raise IllegalMove(f"There is no legal action number {action} now.")
                action = legal[action]
            logged = len(game.events)
            game.push(action)
            try:
                self._append(game, logged)
            except StorageError:
                game.pop()
                del game.events[logged:]  # the log as it was, as on disk
                raise
            self._bump(f"{game.title}: {action_words(action)}")
            return action

    def undo(self) -> Action:
        """Take back the last action (one that cannot be saved raises StorageError and stays:
        the game is rebuilt by replaying its log as it was, as on disk)."""
        with self.lock:
            game = self._require_game()
            logged = len(game.events)
            action = game.pop()
            try:
                self._append(game, logged)
            except StorageError:
                self.game = type(game).replay(game.events[:logged], "the game")
                raise
            self._bump(f"{game.title}: undone {action_words(action)}")
            return action

    def _append(self, game: BoardGame, logged: int) -> None:
        """Save the events `game` logged after its first `logged` ones."""
        if self.journal is None:
            return
        try:
            self.journal.append(*game.events[logged:])
        except OSError as exc:
            raise self._unsaved("The board game", exc) from None
        self.unsaved = None


def action_words(action: Action) -> str:
    """An action in a few words, for a listener or a log line: its JSON's type and fields."""
    data = action.to_json()
    rest = ", ".join(f"{k} {v}" for k, v in data.items() if k != "type")
    return f"{data.get('type', '?')}" + (f" ({rest})" if rest else "")


def after(moves: int) -> str:
    return f"after move {moves}" if moves else "before the first move"


def replayable(
    events: Sequence[dict[str, Any]], source: str
) -> tuple[tuple[dict[str, Any], ...], BoardGame | None, str | None]:
    """The longest run of `events` from the start whose game replays, that game (None if not
    even the setup does) and why the rest does not (None when all of it replays)."""
    if not events:
        return (), None, None
    key = game_of(events[0])
    try:
        cls = game_class(key)
    except CompanionError as exc:
        return (), None, exc.message

    def replay(n: int) -> BoardGame:
        try:
            return cls.replay(list(events[:n]), source)
        except DataError:
            raise
        except CompanionError as exc:
            raise DataError(source, exc.message) from None
        except (LookupError, TypeError, ValueError, AttributeError):  # a setup of a wrong shape
            raise DataError(source, "its setup cannot be read") from None

    return longest_replay(events, replay)


def resume_board(state_dir: str | Path) -> BoardSession:
    """The board game saved in the state directory (BoardSession.resume), its damage logged."""
    board = BoardSession.resume(board_journal(state_dir))
    if board.damage is not None:
        damage = board.damage
        kept = f"a copy is kept as {damage.kept}" if damage.kept else "no copy could be kept"
        choice = (
            "the host starts a new game on /games"
            if damage.moves is None
            else "the host chooses on /games between going on after move "
            f"{damage.moves}, the last good one, and a new game"
        )
        log.warning("the saved board game is damaged: %s; %s; %s", damage.problem, kept, choice)
    return board
