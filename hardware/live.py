"""The live table: button presses become reads of a still table, and reads become turns.

`LiveTable.step()` does one round of the loop: it feeds the motion gate with the camera's
small preview, keeps the page's camera status and snapshot fresh, feeds the systemd watchdog
while frames arrive, and handles the button events queued by gpiozero's threads. After "turn
done" it waits until the table has been still long enough (hands gone), takes a full frame,
reads it and hands the read to the Session, which records the turn, refuses it or asks the
host. Buttons pressed at the wrong time (during a read, twice, during setup or while a
question is open) get one sentence in the move log and a beep, never a crash; a change the
disk cannot take (a full disk) is not made, beeps and is logged, and the loop goes on. A
camera set for the table (`TableCamera`) is told after each preview whether the table is
still and a turn is under way, and a read waits until its exposure is locked.

The loop also judges the pictures themselves: a preview that stays bit-identical for
`LiveSettings.frozen_after_s` (a stuck pipeline: real sensors always have noise) and, when
`LiveSettings.black_level` is set, black frames make the page say the camera is lost and a
press is refused, as for a source that sends nothing; a frozen camera is closed and reopened.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import cv2
import numpy as np
from numpy.typing import NDArray

from companion.errors import CompanionError, IllegalMove, NotNow
from companion.journal import StorageError
from companion.reading import TableRead
from companion.session import Phase, Session
from companion.tracker import Accepted, Doubtful, Refused, Unreadable
from hardware.buttons import ButtonHeld, TurnDone, UndoPressed
from hardware.camera import (
    BLACK_SAMPLE_STEP,
    CameraSource,
    FolderSource,
    Frame,
    SyntheticSource,
    TableCamera,
)
from hardware.indicators import NullIndicators, StatusIndicators
from hardware.systemd import Notifier

log = logging.getLogger(__name__)

Reader = Callable[[np.ndarray], TableRead]


@runtime_checkable
class TurnReader(Protocol):
    """A reader that reads only what changed since the last recorded turn
    (vision.reader.incremental.IncrementalReader): told when its read was recorded, or not."""

    def __call__(self, image: np.ndarray, /) -> TableRead: ...

    def read_turn(self, image: np.ndarray, seats: Collection[int] = ...) -> TableRead:
        """The table, reading again only what changed (all of it when it must)."""
        ...

    def accepted(self) -> None:
        """The last read's turn was recorded."""
        ...

    def forget(self) -> None:
        """Anything else happened: the next read is a whole one."""
        ...


def _game_mark(session: Session) -> tuple[object, ...] | None:
    """The game and its last recorded turn: any other change (an undo, a correction, a turn
    entered by hand, a new game) gives another mark."""
    game = session.game
    if game is None:
        return None
    return (game, len(game.records), game.records[-1] if game.records else None)


def _same_mark(a: tuple[object, ...] | None, b: tuple[object, ...] | None) -> bool:
    if a is None or b is None:
        return False
    return a[0] is b[0] and a[1] == b[1] and a[2] is b[2]


class StillnessGate(Protocol):
    """The motion gate as the loop uses it."""

    def feed(self, frame: NDArray[np.uint8], at: float, /) -> object:
        """Take a small grey frame; truthy once the table has been still long enough."""
        ...

    def reset(self) -> None:
        """Forget what was seen (a new wait starts)."""
        ...


@dataclass(frozen=True, slots=True)
class LiveSettings:
    preview_interval_s: float = 0.1
    snapshot_interval_s: float = 1.0
    settle_timeout_s: float = 20.0
    snapshot_width: int = 960
    snapshot_quality: int = 80
    # A real sensor always has noise: a preview that stays bit-identical this long means a
    # stuck pipeline; the camera is reported lost and reopened. None: no check. It is always
    # off for SyntheticSource and FolderSource, whose previews repeat between captures.
    frozen_after_s: float | None = 10.0
    # Mean brightness (0-255) below which the loop calls a frame black. None: trust the
    # source (every hardware.camera source already turns black frames into None and "lost");
    # set it for a source that does not check, e.g. tests.hardware.faults.FaultyCamera.
    black_level: float | None = None


#: Sources whose previews legitimately repeat (the last capture, shrunk, until the next one):
#: the frozen-picture check is off for them whatever the settings say.
_REPEATING_SOURCES = (FolderSource, SyntheticSource)
BLACK_SENTENCE = "the camera sends black frames (lens covered, or no light)."


def frozen_sentence(seconds: float) -> str:
    """What the page says when the preview has not changed for `seconds`."""
    return f"the camera's picture has not changed for {seconds:g} s: it may be frozen."


class LiveTable:
    """Buttons, camera, motion gate and reader around one Session."""

    def __init__(
        self,
        session: Session,
        camera: CameraSource,
        reader: Reader,
        gate: StillnessGate,
        *,
        events: queue.Queue[object] | None = None,
        indicators: StatusIndicators | None = None,
        notifier: Notifier | None = None,
        settings: LiveSettings | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.session = session
        self.camera = camera
        self.reader = reader
        self.gate = gate
        self.events: queue.Queue[object] = events if events is not None else queue.Queue()
        self.indicators = indicators or NullIndicators()
        self.notifier = notifier or Notifier("")
        self.settings = settings or LiveSettings()
        self.clock = clock
        self.waiting_since: float | None = None
        self.reads = 0
        self._last_preview = -1e9
        self._last_snapshot = -1e9
        self._last_camera: tuple[str, str] | None = None
        self.still = False
        # What the loop itself found wrong with the pictures (black, frozen), or None.
        self.problem: str | None = None
        self._unchanged: NDArray[np.uint8] | None = None
        self._unchanged_since = 0.0
        self._frozen = False
        # When the motion gate last let a read go (the table still), and when the full frame
        # of that read was in hand, by `clock`.
        self.still_at: float | None = None
        self.frame_at: float | None = None
        # The game as it stood after the last turn the reader's read recorded.
        self._recorded: tuple[object, ...] | None = None

    # ------------------------------------------------------------ the loop

    def run(self, stop: threading.Event) -> None:
        """Loop until `stop` is set."""
        while not stop.is_set():
            self.step(block=self.settings.preview_interval_s)

    def step(self, block: float = 0.0) -> None:
        """One round: camera and gate, then at most the events queued so far."""
        now = self.clock()
        if now - self._last_preview >= self.settings.preview_interval_s:
            self._last_preview = now
            self._watch_camera(now)
        try:
            event = self.events.get(timeout=block) if block else self.events.get_nowait()
        except queue.Empty:
            event = None
        try:
            if event is not None:
                self._handle(event)
            if self.waiting_since is not None:
                self._maybe_read(self.clock())
        except StorageError as exc:  # nothing of the change was kept; the pages say why
            log.error("%s", exc.message)
            self.waiting_since = None
            self.session.set_reading(False)
            self.indicators.refused()
        self.indicators.show(self.session.status)

    def _watch_camera(self, now: float) -> None:
        frame = self.camera.preview()
        status = self.camera.status
        # The loop is alive when the camera answered: with a frame, or promptly saying it is
        # lost or absent (the page says so and taps keep working). A camera call that hangs
        # stops the feeding, and systemd restarts the service.
        if frame is not None or status.state in ("none", "lost"):
            self.notifier.watchdog()
        self.problem = self._picture_problem(frame, now)
        if self.problem is not None:
            camera = ("lost", self.problem)
        else:
            camera = ("ok" if status.ok else status.state, status.message)
        snapshot = None
        if frame is not None and self.problem is None:
            self.still = bool(self.gate.feed(frame.image, frame.at))
            if isinstance(self.camera, TableCamera):
                self.camera.tend(still=self.still, busy=self._in_turn())
            if now - self._last_snapshot >= self.settings.snapshot_interval_s:
                self._last_snapshot = now
                snapshot = self._jpeg(frame.image)
        if camera != self._last_camera or snapshot is not None:
            self._last_camera = camera
            state = "lost" if camera[0] in ("lost", "closed") else camera[0]
            message = "Camera ready." if state == "ok" else camera[1]
            self.session.set_camera(state, message, snapshot=snapshot)

    def _in_turn(self) -> bool:
        """A turn is being read or judged: the camera's exposure must not change now."""
        session = self.session
        return self.waiting_since is not None or session.reading or session.phase is Phase.CONFIRM

    def _settled(self) -> bool:
        return not isinstance(self.camera, TableCamera) or self.camera.settled

    def _is_black(self, image: np.ndarray) -> bool:
        level = self.settings.black_level
        sample = image[::BLACK_SAMPLE_STEP, ::BLACK_SAMPLE_STEP]
        return level is not None and float(sample.mean()) < level

    def _picture_problem(self, frame: Frame | None, now: float) -> str | None:
        """Black or frozen previews, as one sentence; a frozen camera is closed and reopened."""
        if frame is None:
            self._unchanged, self._frozen = None, False
            return None
        image = frame.image
        if self._is_black(image):
            self._unchanged, self._frozen = None, False
            return BLACK_SENTENCE
        repeats = isinstance(self.camera, _REPEATING_SOURCES)
        limit = None if repeats else self.settings.frozen_after_s
        if limit is None:
            return None
        last = self._unchanged
        if last is None or last.shape != image.shape or not np.array_equal(last, image):
            self._unchanged, self._unchanged_since, self._frozen = image.copy(), now, False
            return None
        if now - self._unchanged_since >= limit:
            if not self._frozen:
                log.warning("camera preview unchanged for %g s: reopening the camera", limit)
            self._frozen = True
            self._unchanged_since = now  # reopen again after another `limit` if still stuck
            self._reopen()
        return frozen_sentence(limit) if self._frozen else None

    def _reopen(self) -> None:
        self.camera.close()
        try:
            self.camera.open()
        except CompanionError as exc:  # a configuration mistake; the page keeps saying lost
            log.warning("could not reopen the camera: %s", exc.message)

    def _jpeg(self, image: np.ndarray) -> bytes | None:
        width = self.settings.snapshot_width
        if image.shape[1] > width:
            height = round(image.shape[0] * width / image.shape[1])
            image = cv2.resize(image, (width, height), interpolation=cv2.INTER_AREA)
        ok, data = cv2.imencode(
            ".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, self.settings.snapshot_quality]
        )
        return data.tobytes() if ok else None

    # ------------------------------------------------------------ buttons

    def _handle(self, event: object) -> None:
        if isinstance(event, TurnDone):
            self._turn_done(event)
        elif isinstance(event, UndoPressed):
            self._undo()
        elif isinstance(event, ButtonHeld):
            pass  # a long press means nothing more than the press itself

    def _turn_done(self, event: TurnDone) -> None:
        session = self.session
        if self.waiting_since is not None or session.reading:
            session.note("note", "Already reading the table: one press is enough.")
            return
        if not self.camera.status.ok or self.problem is not None:
            session.note("refused", "The camera is not working: enter the turn on the host page.")
            self.indicators.refused()
            return
        if session.learning is not None:
            # A read now would wait for the learning in this loop, and the watchdog with it.
            session.note(
                "refused",
                "The companion is still learning this box (the phones show how far): "
                "press again once it is done, or enter the turn on the host page.",
            )
            self.indicators.refused()
            return
        phase = session.phase
        if phase is Phase.CONFIRM:
            session.note("refused", "Answer the question on the host page first.")
            self.indicators.refused()
            return
        if phase is Phase.OVER:
            session.note("note", "The game is over: start a new one on the host page.")
            return
        if event.seat is not None and phase is Phase.PLAYING and session.game is not None:
            mover = session.game.state.mover
            if event.seat != mover.seat:
                session.note(
                    "refused",
                    f"It is {mover.name}'s turn (seat {mover.seat}), not seat {event.seat}'s.",
                )
                self.indicators.refused()
                return
        self.waiting_since = self.clock()
        self.gate.reset()
        self.still = False
        session.set_reading(True)

    def _undo(self) -> None:
        try:
            self.session.undo()
            self.indicators.accepted()
        except (IllegalMove, NotNow) as exc:
            self.session.note("refused", exc.message)
            self.indicators.refused()

    # ------------------------------------------------------------ reading

    def _maybe_read(self, now: float) -> None:
        assert self.waiting_since is not None
        if not self.still or not self._settled():
            if now - self.waiting_since > self.settings.settle_timeout_s:
                self.waiting_since = None
                self.session.set_reading(False)
                self.session.note(
                    "refused",
                    "The table did not keep still: press again when hands are away."
                    if not self.still
                    else "The camera's exposure did not settle: press again.",
                )
                self.indicators.refused()
            return
        self.waiting_since = None
        self.still_at = now
        self.read_now()

    def read_now(self) -> None:
        """Take a full frame, read it and judge it (the gate already said the table is still)."""
        session = self.session
        frame = None if self.problem is not None else self.camera.capture()
        self.frame_at = self.clock()
        if frame is not None and self._is_black(frame.image):
            self.problem, frame = BLACK_SENTENCE, None
        if frame is None:
            why = self.problem or self.camera.status.message
            session.set_reading(False)
            session.note("refused", f"No picture of the table: {why}")
            self.indicators.refused()
            return
        reader = self.reader if isinstance(self.reader, TurnReader) else None
        if reader is not None and not _same_mark(self._recorded, _game_mark(session)):
            reader.forget()
        try:
            if reader is not None:
                game = session.game
                seats = [] if game is None else [p.seat for p in game.state.players]
                read = reader.read_turn(frame.image, seats)
            else:
                read = self.reader(frame.image)
        except CompanionError as exc:
            if reader is not None:
                reader.forget()
            session.set_reading(False)
            session.note("unreadable", exc.message)
            self.indicators.refused()
            return
        self.reads += 1
        verdict = session.observe(read)
        if reader is not None:
            if isinstance(verdict, Accepted):
                reader.accepted()
                self._recorded = _game_mark(session)
            else:
                reader.forget()
                self._recorded = None
        # The snapshot after the verdict: the phones hear the verdict first.
        session.set_camera("ok", "Camera ready.", snapshot=self._jpeg(frame.image))
        if isinstance(verdict, Accepted):
            self.indicators.accepted()
        elif isinstance(verdict, Refused | Unreadable):
            self.indicators.refused()
        elif isinstance(verdict, Doubtful):
            self.indicators.show("problem")
