"""Status LEDs and buzzer: what the table shows without a phone.

Three LEDs (ready, reading, problem) show one status at a time; `accepted()` blinks ready once
and `refused()` beeps twice and lights problem. A feedback blink runs in the background and,
when it ends, the LEDs show the latest status given meanwhile, so `accepted()` followed at
once by `show("ready")` still shows the blink. `NullIndicators` does nothing, for machines
without GPIO.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from types import TracebackType
from typing import Any, Literal, Protocol, get_args

from hardware.config import IndicatorConfig, gpio_errors

Status = Literal["idle", "ready", "reading", "problem", "over"]
STATUSES: tuple[str, ...] = get_args(Status)

LedName = Literal["ready", "reading", "problem"]

#: Which LEDs are lit for each status.
LIT: dict[str, frozenset[LedName]] = {
    "idle": frozenset(),
    "ready": frozenset({"ready"}),
    "reading": frozenset({"reading"}),
    "problem": frozenset({"problem"}),
    "over": frozenset({"ready", "reading"}),
}


@contextlib.contextmanager
def _unless_closed() -> Iterator[None]:
    """Ignore a device closed by close() on another thread in the middle of a blink."""
    from gpiozero.exc import DeviceClosed

    with contextlib.suppress(DeviceClosed):
        yield


def _check_status(status: str) -> None:
    if status not in LIT:
        raise ValueError(f"{status!r} is not an indicator status (use {', '.join(STATUSES)}).")


class StatusIndicators(Protocol):
    """What the companion needs from its indicators."""

    @property
    def status(self) -> Status: ...

    def show(self, status: Status) -> None: ...

    def accepted(self) -> None: ...

    def refused(self) -> None: ...

    def close(self) -> None: ...


class Indicators:
    """gpiozero LEDs and an (active) Buzzer on the pins of `config`.

    `background=False` runs the blinks and beeps in the calling thread (tests). Raises
    GpioUnavailable when the pins cannot be had.
    """

    def __init__(
        self, config: IndicatorConfig, *, pin_factory: Any = None, background: bool = True
    ) -> None:
        from gpiozero import LED, Buzzer

        self.config = config
        self._background = background
        self._lock = threading.Lock()
        self._status: Status = "idle"
        self._pending = 0  # feedback blinks not finished yet
        self._closed = False
        self._threads: list[threading.Thread] = []
        self._leds: dict[LedName, Any] = {}
        self._buzzer: Any = None
        pins: dict[LedName, int | None] = {
            "ready": config.ready,
            "reading": config.reading,
            "problem": config.problem,
        }
        try:
            with gpio_errors("indicators"):
                for name, pin in pins.items():
                    if pin is not None:
                        self._leds[name] = LED(
                            pin, active_high=config.active_high, pin_factory=pin_factory
                        )
                if config.buzzer is not None:
                    self._buzzer = Buzzer(
                        config.buzzer, active_high=config.active_high, pin_factory=pin_factory
                    )
        except BaseException:
            self.close()
            raise

    @property
    def status(self) -> Status:
        """The status last shown."""
        return self._status

    def show(self, status: Status) -> None:
        """Light the LEDs of `status` (see LIT); others go off."""
        _check_status(status)
        with self._lock:
            self._status = status
            if self._pending == 0 and not self._closed:
                self._apply()

    def accepted(self) -> None:
        """A turn was accepted: one short blink of the ready LED."""
        led = self._leds.get("ready")
        if led is None:
            return
        blink_s = self.config.blink_s
        with self._lock:
            if self._closed:
                return
            self._pending += 1
        if self._background:
            thread = threading.Thread(
                target=self._blink, args=(led, blink_s), name="accepted-blink", daemon=True
            )
            self._threads = [t for t in self._threads if t.is_alive()] + [thread]
            thread.start()
        else:
            self._blink(led, blink_s)

    def refused(self) -> None:
        """A turn was refused: two short beeps and the problem LED."""
        self.show("problem")
        buzzer = self._buzzer
        if buzzer is None:
            return
        beep_s = self.config.beep_s
        with _unless_closed():
            buzzer.blink(on_time=beep_s, off_time=beep_s, n=2, background=self._background)

    def _blink(self, led: Any, seconds: float) -> None:
        # gpiozero stops a blink when its device closes, so this returns soon after close().
        with _unless_closed():
            led.off()
            led.blink(on_time=seconds, off_time=seconds, n=1, background=False)
        with self._lock:
            self._pending -= 1
            if self._pending == 0 and not self._closed:
                self._apply()

    def _apply(self) -> None:
        lit = LIT[self._status]
        for name, led in self._leds.items():
            if name in lit:
                led.on()
            else:
                led.off()

    def wait(self, timeout: float | None = None) -> None:
        """Wait until the background blinks have finished (at most `timeout` s each)."""
        for thread in list(self._threads):
            thread.join(timeout)

    def close(self) -> None:
        """Switch everything off and release the pins. Safe to call twice."""
        with self._lock:
            self._closed = True
            devices = [*self._leds.values(), self._buzzer]
            self._leds, self._buzzer = {}, None
        for device in devices:
            if device is not None:
                device.close()
        self.wait(timeout=2.0)
        self._threads = []

    def __enter__(self) -> Indicators:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


class NullIndicators:
    """Indicators for a machine without GPIO: remembers the status, shows nothing."""

    def __init__(self) -> None:
        self._status: Status = "idle"

    @property
    def status(self) -> Status:
        """The status last shown."""
        return self._status

    def show(self, status: Status) -> None:
        """Remember `status`."""
        _check_status(status)
        self._status = status

    def accepted(self) -> None:
        """Nothing to blink."""

    def refused(self) -> None:
        """Nothing to beep; the status becomes "problem" as with real indicators."""
        self._status = "problem"

    def close(self) -> None:
        """Nothing to release."""

    def __enter__(self) -> NullIndicators:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
