"""Buttons on gpiozero's MockFactory: presses become events on the queue; the wiring config."""

from __future__ import annotations

import queue
from collections.abc import Iterator
from typing import Any

import pytest
from gpiozero.pins.mock import MockFactory

from companion.errors import DataError
from hardware.buttons import ButtonHeld, TableButtons, TurnDone, UndoPressed
from hardware.config import ButtonConfig, GpioUnavailable, HardwareConfig


class Clock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def factory() -> Iterator[MockFactory]:
    made = MockFactory()
    yield made
    made.reset()


def press(factory: MockFactory, pin: int) -> None:
    factory.pin(pin).drive_low()
    factory.pin(pin).drive_high()


def drain(events: queue.Queue[Any]) -> list[Any]:
    out = []
    while True:
        try:
            out.append(events.get_nowait())
        except queue.Empty:
            return out


def test_shared_button_and_undo(factory: MockFactory) -> None:
    events: queue.Queue[Any] = queue.Queue()
    clock = Clock()
    with TableButtons(ButtonConfig(), events, pin_factory=factory, clock=clock):
        press(factory, 17)
        clock.now += 5
        press(factory, 27)
    assert drain(events) == [TurnDone(None, 100.0), UndoPressed(105.0)]


def test_one_button_per_seat(factory: MockFactory) -> None:
    events: queue.Queue[Any] = queue.Queue()
    clock = Clock()
    config = ButtonConfig(turn_done={1: 17, 2: 22, 3: 23}, undo=None)
    with TableButtons(config, events, pin_factory=factory, clock=clock):
        press(factory, 22)
        press(factory, 17)  # another seat's button is not a double press
        clock.now += 3
        press(factory, 23)
    assert drain(events) == [TurnDone(2, 100.0), TurnDone(1, 100.0), TurnDone(3, 103.0)]


def test_double_press_and_long_press_count_once(factory: MockFactory) -> None:
    events: queue.Queue[Any] = queue.Queue()
    clock = Clock()
    config = ButtonConfig(repeat_guard_s=1.0, hold_seconds=30)
    with TableButtons(config, events, pin_factory=factory, clock=clock):
        press(factory, 17)
        clock.now += 0.3
        press(factory, 17)  # double press: dropped
        clock.now += 1.5
        pin = factory.pin(17)
        pin.drive_low()  # a long press counts when it starts, once
        clock.now += 2.0
        pin.drive_high()
        clock.now += 0.5
        press(factory, 27)  # undo has its own guard
    assert drain(events) == [TurnDone(None, 100.0), TurnDone(None, 101.8), UndoPressed(104.3)]


def test_holding_a_button_sends_one_held_event(factory: MockFactory) -> None:
    events: queue.Queue[Any] = queue.Queue()
    with TableButtons(ButtonConfig(hold_seconds=0.05), events, pin_factory=factory):
        factory.pin(27).drive_low()
        first = events.get(timeout=5)
        held = events.get(timeout=5)  # gpiozero's hold thread sends it after hold_seconds
        factory.pin(27).drive_high()
    assert isinstance(first, UndoPressed)
    assert isinstance(held, ButtonHeld)
    assert (held.button, held.seat) == ("undo", None)
    assert drain(events) == []


def test_close_releases_the_pins(factory: MockFactory) -> None:
    events: queue.Queue[Any] = queue.Queue()
    buttons = TableButtons(ButtonConfig(), events, pin_factory=factory)
    with pytest.raises(GpioUnavailable, match="already in use"):
        TableButtons(ButtonConfig(), events, pin_factory=factory)
    buttons.close()
    buttons.close()
    press(factory, 17)  # closed: nobody listens
    assert drain(events) == []
    with TableButtons(ButtonConfig(), events, pin_factory=factory, clock=Clock()):
        press(factory, 17)
    assert drain(events) == [TurnDone(None, 100.0)]


def test_config_from_toml_tables() -> None:
    config = HardwareConfig.from_mapping(
        {
            "buttons": {"turn_done": {"1": 20, "2": 21}, "undo": False, "bounce_ms": 20},
            "indicators": {"buzzer": "none", "ready": 12},
            "camera": {"kind": "webcam", "size": [1920, 1080], "device": "/dev/video2"},
            "web": {"port": 8080},  # another part's table
        },
        "companion.toml",
    )
    assert config.buttons == ButtonConfig(turn_done={1: 20, 2: 21}, undo=None, bounce_ms=20)
    assert config.indicators.buzzer is None
    assert config.indicators.ready == 12
    assert config.camera.size == (1920, 1080)
    assert config.camera.device == "/dev/video2"
    assert HardwareConfig.from_mapping({}, "x.toml") == HardwareConfig()


@pytest.mark.parametrize(
    ("data", "words"),
    [
        ({"buttons": {"turn_done": 30}}, "buttons.turn_done: GPIO 30"),
        ({"buttons": {"undo": 17}}, "buttons.undo and buttons.turn_done both use GPIO 17"),
        ({"buttons": {"turn_done": {"6": 4}}}, "seat 6 does not exist"),
        ({"buttons": {"turn_done": {"one": 4}}}, "'one' is not a seat number"),
        ({"buttons": {"bounce": 10}}, "unknown setting 'bounce'"),
        ({"indicators": {"buzzer": 17}}, "both use GPIO 17"),
        ({"indicators": {"ready": "5"}}, "indicators.ready: a GPIO pin is a whole number"),
        ({"camera": {"kind": "usb"}}, "camera.kind: 'usb' is not a camera kind"),
        ({"camera": {"kind": "folder"}}, "camera.path"),
        ({"camera": {"preview_size": [4000, 10]}}, "larger than camera.size"),
        ({"camera": {"fps": 0}}, "camera.fps"),
        ({"camera": {"lens_k": 0.9}}, "camera.lens_k: a lens bend k must lie between -0.3"),
        ({"camera": {"lens_k": float("nan")}}, "camera.lens_k"),
        ({"camera": {"lens_k": "wide"}}, "camera.lens_k: expected a number"),
        ({"camera": 3}, "[camera] must be a table"),
        ({"camera": {"size": [2**40, 2**40]}}, "camera.size: a size is [width, height] in pixels"),
        (
            {"camera": {"buffer_count": 2**63 - 1}},
            "camera.buffer_count: 9223372036854775807 is too",
        ),
        ({"camera": {"fps": float("nan")}}, "camera.fps: expected a number"),
        ({"buttons": {"hold_seconds": 1e308}}, "buttons.hold_seconds: 1e+308 is too large"),
        ({"indicators": {"blink_s": float("inf")}}, "indicators.blink_s: inf is too large"),
    ],
)
def test_bad_config_is_one_sentence_naming_the_key(data: dict[str, Any], words: str) -> None:
    with pytest.raises(DataError) as caught:
        HardwareConfig.from_mapping(data, "companion.toml")
    assert caught.value.message.startswith("companion.toml: ")
    assert words in caught.value.message
