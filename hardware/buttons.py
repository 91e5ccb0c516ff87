"""The table's push buttons: "turn done" (one shared or one per seat) and undo.

Each press becomes a small frozen event put on a `queue.Queue`; the companion's loop takes
them from there. gpiozero calls us on its own threads, so those callbacks do nothing but
filter the press and put the event on the queue. Buttons are wired between the GPIO pin and
ground (the pin's internal pull-up holds it high; a press pulls it low).
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Literal

from hardware.config import ButtonConfig, gpio_errors

ButtonName = Literal["turn_done", "undo"]


@dataclass(frozen=True, slots=True)
class TurnDone:
    """A player pressed "turn done"; `seat` is None when the table shares one button."""

    seat: int | None
    at: float


@dataclass(frozen=True, slots=True)
class UndoPressed:
    """Someone pressed undo."""

    at: float


@dataclass(frozen=True, slots=True)
class ButtonHeld:
    """A button stayed down for `ButtonConfig.hold_seconds` (a long press; sent once)."""

    button: ButtonName
    seat: int | None
    at: float


ButtonEvent = TurnDone | UndoPressed | ButtonHeld


class _Guard:
    """Press filtering for one button: once per push, no double presses."""

    def __init__(self, repeat_guard_s: float) -> None:
        self.repeat_guard_s = repeat_guard_s
        self.down = False
        self.last_counted: float | None = None

    def press(self, now: float) -> bool:
        if self.down:  # still held from the last press (a missed release): same press
            return False
        self.down = True
        if self.last_counted is not None and now - self.last_counted < self.repeat_guard_s:
            return False
        self.last_counted = now
        return True

    def release(self) -> None:
        self.down = False


class TableButtons:
    """gpiozero Buttons that put `TurnDone`, `UndoPressed` and `ButtonHeld` on `events`.

    `pin_factory` is passed to gpiozero (None: its default, or `Device.pin_factory`);
    `clock` stamps the events and times the double-press guard. Raises GpioUnavailable
    when the pins cannot be had.
    """

    def __init__(
        self,
        config: ButtonConfig,
        events: queue.Queue[Any],
        *,
        pin_factory: Any = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        from gpiozero import Button

        self.config = config
        self._events = events
        self._clock = clock
        self._lock = threading.Lock()
        self._buttons: list[Any] = []
        bounce = config.bounce_ms / 1000 if config.bounce_ms > 0 else None
        wanted: list[tuple[ButtonName, int | None, int]] = []
        if isinstance(config.turn_done, dict):
            wanted += [("turn_done", seat, pin) for seat, pin in sorted(config.turn_done.items())]
        else:
            wanted.append(("turn_done", None, config.turn_done))
        if config.undo is not None:
            wanted.append(("undo", None, config.undo))
        try:
            with gpio_errors("buttons"):
                for name, seat, pin in wanted:
                    button = Button(
                        pin,
                        pull_up=True,
                        bounce_time=bounce,
                        hold_time=config.hold_seconds,
                        pin_factory=pin_factory,
                    )
                    self._buttons.append(button)
                    guard = _Guard(config.repeat_guard_s)
                    button.when_pressed = self._on_press(name, seat, guard)
                    button.when_released = self._on_release(guard)
                    button.when_held = self._on_held(name, seat)
        except BaseException:
            self.close()
            raise

    def _on_press(self, name: ButtonName, seat: int | None, guard: _Guard) -> Callable[[], None]:
        def pressed() -> None:
            with self._lock:
                now = self._clock()
                if not guard.press(now):
                    return
            event: ButtonEvent = TurnDone(seat, now) if name == "turn_done" else UndoPressed(now)
            self._events.put(event)

        return pressed

    def _on_release(self, guard: _Guard) -> Callable[[], None]:
        def released() -> None:
            with self._lock:
                guard.release()

        return released

    def _on_held(self, name: ButtonName, seat: int | None) -> Callable[[], None]:
        def held() -> None:
            self._events.put(ButtonHeld(name, seat, self._clock()))

        return held

    def close(self) -> None:
        """Release the pins (another TableButtons may then use them). Safe to call twice."""
        buttons, self._buttons = self._buttons, []
        for button in buttons:
            button.close()

    def __enter__(self) -> TableButtons:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
