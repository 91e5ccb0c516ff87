"""The live game at one table: the game, the turn tracker's verdicts, the move log and
everything a phone shows, behind one lock.

The hardware buttons, the camera pipeline and the web pages all go through a Session. Every
change bumps `version` and wakes the subscribers (the web's Server-Sent Events). The Session
trusts its callers: the web checks the host PIN before it calls anything that changes state.
"""

from __future__ import annotations

import math
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any, Literal

from companion.actions import Matching, Turn, Variant, action_to_json
from companion.catalogue import Catalogue, default_catalogue
from companion.errors import DataError, IllegalMove, NotNow
from companion.game import Game, Seat, new_game, score_state
from companion.journal import Journal, StorageError, longest_replay, storage_sentence
from companion.progress import Learning
from companion.reading import CameraState, CellRead, TableRead
from companion.rules import TurnRecord, at
from companion.subscription import Subscription
from companion.tracker import Accepted, Doubtful, Refused, Unreadable, Verdict, infer_turn

LOG_KEPT = 500
#: What the indicator LEDs show.
Status = Literal["idle", "ready", "reading", "problem", "over"]


class Phase(StrEnum):
    SETUP = "setup"
    PLAYING = "playing"
    CONFIRM = "confirm"
    OVER = "over"


@dataclass(frozen=True, slots=True)
class LogEntry:
    """One line of the move log: a turn, a refusal, an undo, a question, a note."""

    seq: int
    at: float
    kind: str
    text: str
    player: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "seq": self.seq,
            "at": self.at,
            "kind": self.kind,
            "text": self.text,
            "player": self.player,
        }


@dataclass(frozen=True, slots=True)
class Question:
    """A doubtful read put to the host: the turns that fit, and the read they came from."""

    reason: str
    candidates: tuple[Turn, ...]
    read: TableRead | None


@dataclass(slots=True)
class CameraView:
    """What the pages say about the camera, and its latest snapshot."""

    status: CameraState = CameraState.NONE
    message: str = "No camera: play by taps."
    last_frame_at: float | None = None
    snapshot: bytes | None = None
    snapshot_at: float | None = None


@dataclass(frozen=True, slots=True)
class Damage:
    """A saved game that could not be read whole, kept for the host to decide on.

    `problem` says what is wrong, `kept` is the dated copy of the damaged file (None if
    none could be made: the file itself is then left as it is), `events` are the lines
    before the damage that replay, and `turn_number` the turn they reach (None without a
    good setup: only a new game is possible)."""

    problem: str
    kept: str | None
    events: tuple[dict[str, Any], ...]
    turn_number: int | None

    def to_json(self) -> dict[str, Any]:
        return {"problem": self.problem, "kept": self.kept, "turn_number": self.turn_number}


@dataclass(frozen=True)
class Correction:
    """A cell the host corrected: where (area "display" or a seat number), what truly lies
    there, the read it corrected and the read the correction made of it."""

    area: str | int
    row: int
    col: int
    cell: CellRead
    before: TableRead
    after: TableRead


@dataclass
class _Listeners:
    on_verdict: list[Callable[[Verdict], None]] = field(default_factory=list)
    on_correction: list[Callable[[Correction], object]] = field(default_factory=list)


class Session:
    """One table's live game; every public method is thread-safe."""

    def __init__(
        self,
        catalogue: Catalogue | None = None,
        *,
        clock: Callable[[], float] = time.time,
        journal: Journal | None = None,
    ) -> None:
        self.catalogue = catalogue or default_catalogue()
        self._catalogue = catalogue  # the pack's, if given: a resumed game reads with it
        self.damage: Damage | None = None
        self.unsaved: str | None = None  # why the last write to the journal failed
        self.clock = clock
        self.journal = journal
        self.game: Game | None = None
        self.question: Question | None = None
        self.last_read: TableRead | None = None
        self.reading = False
        self.learning: Learning | None = None  # the box's learning before its first read
        self.camera = CameraView()
        self.version = 0
        self._log: deque[LogEntry] = deque(maxlen=LOG_KEPT)
        self._seq = 0
        self._lock = threading.RLock()
        self._changed = threading.Condition(self._lock)
        self._subscribers: set[Subscription] = set()
        self.listeners = _Listeners()

    # ------------------------------------------------------------ plumbing

    def _bump(self) -> None:
        self.version += 1
        self._changed.notify_all()

    def _entry(
        self, kind: str, text: str, player: str | None = None, *, after: int = 0
    ) -> LogEntry:
        """A log line to show once it is saved (`after`: lines made before it, not yet shown)."""
        return LogEntry(self._seq + after + 1, self.clock(), kind, text, player)

    def _show(self, entries: Sequence[LogEntry]) -> None:
        self._seq += len(entries)
        self._log.extend(entries)

    def _save(self, event: dict[str, Any] | None, entries: Sequence[LogEntry]) -> None:
        """Put a game event and its log lines on disk in one append; then show the lines.
        Without a game, log lines are shown only (there is no file to keep them in)."""
        if self.journal is not None and self.game is not None:
            lines = [] if event is None else [event]
            lines += [{"type": "log", "entry": e.to_json()} for e in entries]
            try:
                self.journal.append(*lines)
            except OSError as exc:
                raise self._unsaved("The game", exc) from None
            self.unsaved = None
        self._show(entries)

    def _note(self, kind: str, text: str, player: str | None = None) -> None:
        self._save(None, [self._entry(kind, text, player)])

    def _unsaved(self, what: str, exc: OSError) -> StorageError:
        """The error for a write that failed; the pages say it until a write succeeds."""
        self.unsaved = storage_sentence(what, exc)
        self._bump()
        return StorageError(self.unsaved)

    @classmethod
    def resume(cls, journal: Journal, catalogue: Catalogue | None = None, **kwargs: Any) -> Session:
        """The session saved in `journal`, at its last confirmed turn (or a fresh one). A
        damaged journal gives a session without a game and its `damage` for the host."""
        session = cls(catalogue, journal=journal, **kwargs)
        saved = journal.load()
        if saved is None:
            return session
        source = saved.path.name if saved.path is not None else str(journal.directory)
        events, game, problem = _replayable(saved.events, source)
        if saved.damage is None and problem is None and game is not None:
            session._restore(game, events)
            return session
        problem = saved.damage or problem or "it has no game"
        if saved.path is not None:
            try:
                kept: str | None = journal.keep_aside(saved.path).name
            except OSError as exc:
                kept = None
                problem += f" (no copy could be kept: {exc.strerror or exc})"
        else:
            kept = None
        session.damage = Damage(
            problem, kept, events, None if game is None else game.state.turn_number
        )
        return session

    def _restore(self, game: Game, events: Sequence[dict[str, Any]]) -> None:
        """Show a replayed game and the log lines saved with it."""
        self.catalogue = self._catalogue or game.state.catalogue
        self.game = game
        self._log.clear()
        for event in events:
            if event.get("type") == "log":
                entry = event["entry"]
                self._seq += 1
                self._log.append(
                    LogEntry(
                        self._seq,
                        _number(entry.get("at")),
                        str(entry.get("kind", "note")),
                        str(entry.get("text", "")),
                        _name(entry.get("player")),
                    )
                )

    def resume_last_good(self) -> None:
        """The host's choice for a damaged journal: go on from its last good turn, in a new
        game file (the damaged file and its copy stay as they are)."""
        with self._lock:
            damage = self.damage
            if damage is None:
                raise NotNow("There is no damaged game to resume.")
            events, game, _ = _replayable(damage.events, "the saved game")
            if game is None:
                raise NotNow("The damaged game has no good turn: start a new game.")
            kept = f" (a copy is kept as {damage.kept})" if damage.kept else ""
            logged = sum(1 for e in events if e.get("type") == "log")
            entry = LogEntry(
                logged + 1,
                self.clock(),
                "note",
                f"Resumed {_after(game.state.turn_number)}: the saved game was damaged{kept}.",
            )
            if self.journal is not None:
                line = {"type": "log", "entry": entry.to_json()}
                try:
                    self.journal.start(events[0], *events[1:], line)
                except OSError as exc:
                    raise self._unsaved("The game", exc) from None
            self.unsaved = None
            self._seq = 0
            self._restore(game, events)
            self._show([entry])
            self.damage = None
            self.question = None
            self._bump()

    def subscribe(self) -> Subscription:
        """A new subscriber; its first wait() returns at once with the current version."""
        with self._lock:
            sub = Subscription(self)
            self._subscribers.add(sub)
            return sub

    @property
    def subscriber_count(self) -> int:
        with self._lock:
            return len(self._subscribers)

    @property
    def phase(self) -> Phase:
        with self._lock:
            if self.game is None:
                return Phase.SETUP
            if self.game.over:
                return Phase.OVER
            return Phase.CONFIRM if self.question else Phase.PLAYING

    @property
    def status(self) -> Status:
        """For the indicator LEDs: idle, ready, reading, problem or over."""
        with self._lock:
            if self.reading:
                return "reading"
            if self.camera.status is CameraState.LOST or self.question is not None:
                return "problem"
            phase = self.phase
            if phase is Phase.OVER:
                return "over"
            return "ready" if phase is Phase.PLAYING else "idle"

    def _require_game(self) -> Game:
        if self.game is None:
            raise NotNow("No game is running: start a new game first.")
        return self.game

    # ------------------------------------------------------------ host actions

    def start_game(
        self,
        seats: Sequence[Seat],
        *,
        start_player: int = 0,
        ship: int = 0,
        side: str = "front",
        variant: Variant | str = Variant.BASE,
        matching: Matching | str = Matching.FREE,
        display: Sequence[Sequence[str | None]] | None = None,
        seed: int | None = None,
    ) -> None:
        """Set up a new game (replacing any running one)."""
        state = new_game(
            seats,
            start_player=start_player,
            ship=ship,
            side=side,
            variant=variant,
            matching=matching,
            catalogue=self.catalogue,
            display=display,
            seed=seed,
        )
        with self._lock:
            game = Game(state)
            names = ", ".join(p.name for p in state.players)
            entry = LogEntry(
                1, self.clock(), "setup", f"New game: {names}. {state.mover.name} begins."
            )
            if self.journal is not None:
                line = {"type": "log", "entry": entry.to_json()}
                try:
                    self.journal.start(game.events[0], line)
                except OSError as exc:
                    raise self._unsaved("The new game", exc) from None
            self.unsaved = None
            self.game = game
            self.damage = None
            self.question = None
            self._log.clear()
            self._seq = 0
            self._show([entry])
            self._bump()

    def play(self, turn: Turn) -> TurnRecord:
        """Record a turn entered by hand (or confirmed); an illegal one raises IllegalMove,
        one that cannot be saved StorageError, and either changes nothing."""
        with self._lock:
            game = self._require_game()
            after = game.state.copy()
            planned = game.rules.apply(after, turn)
            entries = [self._entry("turn", planned.describe(), planned.name)]
            if planned.final_round_started and not after.over:
                why = (
                    f"{planned.name}'s board is full"
                    if not after.empty_cells(after.players[planned.player])
                    else "No tile can be taken any more"
                )
                text = f"{why}: everybody else has one more turn."
                entries.append(self._entry("note", text, after=len(entries)))
            if after.over:
                winners = " and ".join(score_state(after).winners)
                verb = "wins" if " and " not in winners else "win"
                text = f"The game is over. {winners} {verb}!"
                entries.append(self._entry("note", text, after=len(entries)))
            self._save({"type": "turn", "turn": planned.turn.to_json()}, entries)
            record = game.push(planned.turn)
            self.question = None
            self._bump()
            return record

    def undo(self) -> TurnRecord:
        """Take back the last turn (one that cannot be saved raises StorageError and stays)."""
        with self._lock:
            game = self._require_game()
            if not game.records:
                raise NotNow("There is no turn to undo.")
            last = game.records[-1]
            self._save(
                {"type": "undo"}, [self._entry("undo", f"Undone: {last.describe()}", last.name)]
            )
            record = game.pop()
            self.question = None
            self._bump()
            return record

    def observe(self, read: TableRead) -> Verdict | None:
        """Judge a fresh read after "turn done": record, refuse or ask. In setup, the read is
        kept for the new-game screen and None is returned. The verdict listeners hear the
        tracker's verdict once the session's lock is released, so they may call back in."""
        with self._lock:
            verdict, judged = self._judge(read)
        self._tell(judged)
        return verdict

    def _judge(self, read: TableRead) -> tuple[Verdict | None, Verdict | None]:
        """The verdict on `read`, and the tracker's verdict for the listeners (None when the
        tracker was not asked: no game, or the game is over). Called under the lock."""
        self.last_read = read
        self.reading = False
        if self.game is None:
            self._bump()
            return None, None
        if self.game.over:
            self._bump()
            return Refused("The game is over."), None
        verdict = infer_turn(self.game.rules, self.game.state, read)
        self._apply_verdict(verdict, read)
        return verdict, verdict

    def _tell(self, verdict: Verdict | None) -> None:
        if verdict is not None:
            for listener in list(self.listeners.on_verdict):
                listener(verdict)

    def _apply_verdict(self, verdict: Verdict, read: TableRead | None) -> None:
        assert self.game is not None
        mover = self.game.state.mover.name
        if isinstance(verdict, Accepted):
            self.play(verdict.turn)
            return
        if isinstance(verdict, Doubtful):
            self._note("question", verdict.reason, mover)
            self.question = Question(verdict.reason, verdict.candidates, read)
        elif isinstance(verdict, Refused):
            self._note("refused", verdict.reason, mover)
        elif isinstance(verdict, Unreadable):
            self._note("unreadable", verdict.reason, mover)
        self._bump()

    def confirm(self, index: int) -> TurnRecord:
        """The host picks one of the turns a doubtful read allows."""
        with self._lock:
            if self.question is None:
                raise NotNow("There is no question to answer.")
            if not 0 <= index < len(self.question.candidates):
                raise NotNow("That choice is not one of the turns offered.")
            return self.play(self.question.candidates[index])

    def dismiss(self) -> None:
        """Drop the open question: the player fixes the table and presses again."""
        with self._lock:
            if self.question is not None:
                self._note("note", "Question dropped: fix the table and press again.")
                self.question = None
                self._bump()

    def correct(self, area: str | int, row: int, col: int, cell: CellRead) -> Verdict:
        """Correct one cell of the last read (area "display" or a seat number) and judge again."""
        with self._lock:
            verdict, judged, correction = self._correct(area, row, col, cell)
        self._tell(judged)
        for listener in self.listeners.on_correction:
            listener(correction)
        return verdict

    def _correct(
        self, area: str | int, row: int, col: int, cell: CellRead
    ) -> tuple[Verdict, Verdict | None, Correction]:
        """The verdict on the corrected read, the tracker's for the listeners and the
        correction (under the lock)."""
        before = self.question.read if self.question and self.question.read else self.last_read
        if before is None:
            raise NotNow("There is no read of the table to correct.")
        read = _with_cell(before, area, row, col, cell)
        correction = Correction(area, row, col, cell, before, read)
        where = "display" if area == "display" else f"seat {area}"
        self._note("note", f"Corrected {where} {at((row, col))}.")
        question, self.question = self.question, None
        try:
            verdict, judged = self._judge(read)
        except StorageError:  # the corrected turn was not saved: the question stays open
            self.question = question
            raise
        return verdict or Unreadable("No game is running."), judged, correction

    # ------------------------------------------------------------ camera side

    def set_reading(self, reading: bool) -> None:
        with self._lock:
            if self.reading != reading:
                self.reading = reading
                self._bump()

    def set_learning(self, learning: Learning | None) -> None:
        """How far the box's learning is (a LearningWatch listener), or None once it is over."""
        with self._lock:
            self.learning = learning
            self._bump()

    def set_camera(
        self, status: CameraState | str, message: str, *, snapshot: bytes | None = None
    ) -> None:
        """The camera's state and sentence for the pages, and optionally a new snapshot."""
        status = CameraState(status)
        with self._lock:
            now = self.clock()
            changed = (status, message) != (self.camera.status, self.camera.message)
            self.camera.status, self.camera.message = status, message
            if status is CameraState.OK:
                self.camera.last_frame_at = now
            if snapshot is not None:
                self.camera.snapshot, self.camera.snapshot_at = snapshot, now
                changed = True
            if changed:
                self._bump()

    def note(self, kind: str, text: str) -> None:
        """Add a line to the move log (e.g. a button pressed at the wrong time)."""
        with self._lock:
            self._note(kind, text)
            self._bump()

    # ------------------------------------------------------------ the view

    def view(self) -> dict[str, Any]:
        """Everything a phone shows, as JSON (GET /api/state)."""
        with self._lock:
            out: dict[str, Any] = {
                "version": self.version,
                "phase": self.phase.value,
                "status": self.status,
                "camera": {
                    "status": self.camera.status.value,
                    "message": self.camera.message,
                    "last_frame_at": self.camera.last_frame_at,
                    "snapshot_at": self.camera.snapshot_at,
                },
                "log": [entry.to_json() for entry in self._log],
                "question": None,
                "game": None,
                "tiles": {t.id: t.meaning.to_json() for t in self.catalogue},
            }
            if self.question is not None:
                out["question"] = {
                    "reason": self.question.reason,
                    "choices": [_describe_turn(self, t) for t in self.question.candidates],
                }
            if self.game is not None:
                out["game"] = _game_view(self.game)
            out["damage"] = None if self.damage is None else self.damage.to_json()
            out["unsaved"] = self.unsaved
            out["learning"] = None if self.learning is None else self.learning.to_json()
            return out


def _replayable(
    events: Sequence[dict[str, Any]], source: str
) -> tuple[tuple[dict[str, Any], ...], Game | None, str | None]:
    """The longest run of `events` from the start whose game replays, that game (None if
    not even the setup does) and why the rest does not (None when all of it replays)."""

    def replay(n: int) -> Game:
        try:
            return Game.replay([e for e in events[:n] if e.get("type") != "log"], source)
        except (LookupError, TypeError, ValueError, AttributeError):  # a setup of the wrong shape
            raise DataError(source, "its setup cannot be read") from None

    return longest_replay(events, replay)


def _after(turn_number: int) -> str:
    return f"after turn {turn_number}" if turn_number else "before the first turn"


def _number(value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return 0.0
    try:
        number = float(value)
    except OverflowError:
        return 0.0
    return number if math.isfinite(number) else 0.0


def _name(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _describe_turn(session: Session, turn: Turn) -> dict[str, Any]:
    data = turn.to_json()
    data["action"] = action_to_json(turn.action)
    assert session.game is not None
    game = session.game
    state = game.state.copy()
    try:
        record = game.rules.apply(state, turn)
        data["text"] = record.describe()
    except IllegalMove as exc:
        data["text"] = exc.message
    return data


def _game_view(game: Game) -> dict[str, Any]:
    state = game.state
    final = score_state(state)
    reach = game.reach_map()
    players = []
    for index, (p, score) in enumerate(zip(state.players, final.players, strict=True)):
        players.append(
            {
                "index": index,
                "name": p.name,
                "seat": p.seat,
                "colour": p.colour,
                "shells": p.shells,
                "boats": game.rules.boats(state, p),
                "storage": p.storage,
                "ship": None if p.ship is None else list(p.ship),
                "board": [
                    [
                        ("#" if not state.layout.playable((r, c)) else None)
                        if cell is None
                        else {"tile": cell.tile, "rotation": cell.rotation}
                        for c, cell in enumerate(row)
                    ]
                    for r, row in enumerate(p.board)
                ],
                "score": score.to_json(),
                "to_move": index == state.to_move and not state.over,
            }
        )
    return {
        "side": state.side,
        "variant": state.variant.value,
        "matching": state.matching.value,
        "layout": state.layout.to_json(),
        "turn_number": state.turn_number,
        "to_move": None if state.over else state.to_move,
        "ship": state.ship,
        "display": state.display,
        "stack_left": len(state.stack),
        "supply": state.supply,
        "final_round": state.final_round_from is not None,
        "over": state.over,
        "players": players,
        "winners": list(final.winners) if state.over else [],
        "reach": [
            {
                "position": r.position,
                "steps": r.steps,
                "move_cost": r.move_cost,
                "takes": [{"slot": list(t.slot), "tile": t.tile, "cost": t.cost} for t in r.takes],
            }
            for r in reach
        ],
        "can_undo": bool(game.records),
    }


def _with_cell(read: TableRead, area: str | int, row: int, col: int, cell: CellRead) -> TableRead:
    if area == "display":
        if not (0 <= row < 4 and 0 <= col < 4):
            raise NotNow(f"The display has no {at((row, col))}.")
        grid = [list(r) for r in read.display]
        grid[row][col] = cell
        return replace(read, display=tuple(tuple(r) for r in grid))
    seat = int(area)
    if seat not in read.seats:
        raise NotNow(f"Seat {seat} was not in the read.")
    cells = [list(r) for r in read.seats[seat].cells]
    if not (0 <= row < len(cells) and 0 <= col < len(cells[row])):
        raise NotNow(f"Seat {seat}'s board has no {at((row, col))}.")
    cells[row][col] = cell
    seats = dict(read.seats)
    seats[seat] = replace(read.seats[seat], cells=tuple(tuple(r) for r in cells))
    return replace(read, seats=seats)
