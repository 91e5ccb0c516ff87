"""Camera faults on a schedule, for tests and rehearsals of the live loop.

`FaultyCamera(inner, schedule)` wraps any camera source and, during each (start, end, fault)
window of the schedule (in the source's clock), injects one fault:

- "no_frames": no frame at all; the status is lost ("the camera sends no frames.").
- "unplugged": like a pulled cable: the inner source is closed when the window starts and
  stays lost until the window ends; it is then reopened at its next reopen attempt (every
  `reopen_backoff_s`), so frames come back only after a reopen.
- "black": the inner source's frames with every pixel black (a covered lens); the status is
  the inner source's, as for a source that does not check (the live loop does, see
  `LiveSettings.black_level`).
- "frozen": the frame last seen when the window started, repeated (a stuck pipeline); the
  status stays "ok" as a stuck driver's would. The live loop notices (`frozen_after_s`).

Like every source it never raises at run time.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Literal, get_args

import numpy as np

from companion.errors import CompanionError, DataError
from companion.reading import CameraState
from hardware.camera import CameraSource, CameraStatus, Frame
from hardware.config import CameraConfig

log = logging.getLogger(__name__)

Fault = Literal["no_frames", "unplugged", "black", "frozen"]
FAULTS: tuple[str, ...] = get_args(Fault)

NO_FRAMES = "the camera sends no frames."
UNPLUGGED = "the camera was unplugged: no device answers (cable pulled?)."


@dataclass(frozen=True, slots=True)
class FaultWindow:
    """One fault from `start` (included) to `end` (excluded), in the source's clock."""

    start: float
    end: float
    fault: Fault

    def covers(self, now: float) -> bool:
        return self.start <= now < self.end


def fault_schedule(schedule: Iterable[tuple[float, float, str]]) -> tuple[FaultWindow, ...]:
    """The windows of `schedule`; a window that ends before it starts or names an unknown
    fault raises DataError."""
    windows = []
    for start, end, fault in schedule:
        if fault not in FAULTS:
            raise DataError(
                "fault schedule", f"{fault!r} is not a camera fault (one of {', '.join(FAULTS)})."
            )
        if not end > start:
            raise DataError("fault schedule", f"the {fault} window ends ({end}) before it starts.")
        windows.append(FaultWindow(float(start), float(end), fault))  # type: ignore[arg-type]
    return tuple(windows)


class FaultyCamera:
    """A camera source that misbehaves on a schedule (see the module's description)."""

    def __init__(
        self,
        inner: CameraSource,
        schedule: Iterable[tuple[float, float, str]],
        *,
        clock: Callable[[], float] = time.monotonic,
        reopen_backoff_s: float | None = None,
    ) -> None:
        self.inner = inner
        self.schedule = fault_schedule(schedule)
        self.clock = clock
        self.reopen_backoff_s = (
            CameraConfig().reopen_backoff_s if reopen_backoff_s is None else reopen_backoff_s
        )
        self._wanted = True  # the wrapped source is normally already open
        self._unplugged = False
        self._retry_at = 0.0
        self._stuck: dict[str, Frame] = {}

    def fault_at(self, now: float) -> Fault | None:
        """The fault scheduled at `now`, or None."""
        for window in self.schedule:
            if window.covers(now):
                return window.fault
        return None

    # ------------------------------------------------------------ the source protocol

    def open(self) -> None:
        """Open the inner source (not while the cable is out: that waits for the reopen)."""
        self._wanted = True
        if not self._unplugged:
            self.inner.open()

    def close(self) -> None:
        """Close the inner source."""
        self._wanted = False
        self.inner.close()  # a stuck pipeline stays stuck until its window ends

    def preview(self) -> Frame | None:
        """The inner preview, or what the fault makes of it."""
        return self._frame("preview", self.inner.preview)

    def capture(self) -> Frame | None:
        """The inner capture, or what the fault makes of it."""
        return self._frame("capture", self.inner.capture)

    @property
    def status(self) -> CameraStatus:
        inner = self.inner.status
        if self._unplugged:
            return CameraStatus(CameraState.LOST, UNPLUGGED, inner.last_frame_at)
        if self.fault_at(self.clock()) == "no_frames":
            return CameraStatus(CameraState.LOST, NO_FRAMES, inner.last_frame_at)
        return inner

    # ------------------------------------------------------------ the faults

    def _cable(self, fault: Fault | None, now: float) -> None:
        """Pull the cable when an unplugged window starts; plug it back at a reopen after."""
        if fault == "unplugged" and not self._unplugged:
            self._unplugged = True
            self._stuck.clear()
            self.inner.close()
            self._retry_at = now + self.reopen_backoff_s
            return
        if not self._unplugged or now < self._retry_at:
            return
        if fault == "unplugged":  # a reopen attempt: still no device
            self._retry_at = now + self.reopen_backoff_s
            return
        self._unplugged = False
        if self._wanted:
            try:
                self.inner.open()
            except CompanionError as exc:  # a source raises only for configuration mistakes
                log.warning("could not reopen the camera: %s", exc.message)

    def _frame(self, kind: str, get: Callable[[], Frame | None]) -> Frame | None:
        now = self.clock()
        fault = self.fault_at(now)
        self._cable(fault, now)
        if self._unplugged or fault == "no_frames":
            return None
        if fault != "frozen":
            self._stuck.pop(kind, None)
        frame = get()
        if frame is None:
            return None
        if fault == "black":
            return Frame(np.zeros_like(frame.image), frame.at)
        if fault == "frozen":
            stuck = self._stuck.setdefault(kind, frame)
            return Frame(stuck.image, frame.at)
        return frame
