"""Status LEDs and buzzer on gpiozero's MockFactory: pin states after each call."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from gpiozero.pins.mock import MockFactory

from hardware.config import GpioUnavailable, IndicatorConfig
from hardware.indicators import Indicators, NullIndicators

FAST = IndicatorConfig(blink_s=0.01, beep_s=0.01)


@pytest.fixture
def factory() -> Iterator[MockFactory]:
    made = MockFactory()
    yield made
    made.reset()


def lit(factory: MockFactory, config: IndicatorConfig = FAST) -> dict[str, bool]:
    pins = {"ready": config.ready, "reading": config.reading, "problem": config.problem}
    return {name: bool(factory.pin(pin).state) for name, pin in pins.items() if pin is not None}


def history(factory: MockFactory, pin: int) -> list[bool]:
    return [bool(s.state) for s in factory.pin(pin).states]


@pytest.mark.parametrize(
    ("status", "expected"),
    [
        ("idle", {"ready": False, "reading": False, "problem": False}),
        ("ready", {"ready": True, "reading": False, "problem": False}),
        ("reading", {"ready": False, "reading": True, "problem": False}),
        ("problem", {"ready": False, "reading": False, "problem": True}),
        ("over", {"ready": True, "reading": True, "problem": False}),
    ],
)
def test_each_status_lights_its_leds(
    factory: MockFactory, status: str, expected: dict[str, bool]
) -> None:
    with Indicators(FAST, pin_factory=factory, background=False) as lights:
        lights.show("problem" if status != "problem" else "ready")  # start from something else
        lights.show(status)  # type: ignore[arg-type]
        assert lit(factory) == expected
        assert lights.status == status


def test_refused_beeps_twice_and_lights_problem(factory: MockFactory) -> None:
    with Indicators(FAST, pin_factory=factory, background=False) as lights:
        lights.show("reading")
        factory.pin(19).clear_states()
        lights.refused()
        assert history(factory, 19) == [False, True, False, True, False]
        assert lit(factory) == {"ready": False, "reading": False, "problem": True}
        assert lights.status == "problem"


def test_accepted_blinks_ready_once_then_shows_the_latest_status(factory: MockFactory) -> None:
    with Indicators(FAST, pin_factory=factory, background=False) as lights:
        lights.show("ready")
        factory.pin(5).clear_states()
        lights.accepted()
        assert history(factory, 5) == [True, False, True, False, True]
        assert factory.pin(19).states[-1].state is False  # no beep


def test_status_given_during_a_blink_shows_after_it(factory: MockFactory) -> None:
    config = IndicatorConfig(blink_s=0.2)
    with Indicators(config, pin_factory=factory) as lights:
        lights.show("reading")
        lights.accepted()
        lights.show("ready")  # the companion moves on at once; the blink still shows
        lights.wait(timeout=5)
        assert history(factory, 5) == [False, True, False, True]
        assert history(factory, 6) == [False, True, False]
        assert lit(factory) == {"ready": True, "reading": False, "problem": False}


def test_active_low_wiring_inverts_the_pins(factory: MockFactory) -> None:
    config = IndicatorConfig(active_high=False, buzzer=None, problem=None)
    with Indicators(config, pin_factory=factory, background=False) as lights:
        lights.show("ready")
        assert lit(factory, config) == {"ready": False, "reading": True}
        lights.refused()  # no buzzer, no problem LED: nothing to do but remember it
        assert lights.status == "problem"
        assert lit(factory, config) == {"ready": True, "reading": True}


def test_close_switches_off_and_releases_the_pins(factory: MockFactory) -> None:
    lights = Indicators(FAST, pin_factory=factory, background=False)
    lights.show("over")
    with pytest.raises(GpioUnavailable, match="already in use"):
        Indicators(FAST, pin_factory=factory)
    lights.close()
    lights.close()
    again = Indicators(FAST, pin_factory=factory, background=False)
    again.show("problem")
    assert lit(factory) == {"ready": False, "reading": False, "problem": True}
    again.close()


def test_unknown_status_is_refused() -> None:
    with pytest.raises(ValueError, match="'done' is not an indicator status"):
        NullIndicators().show("done")  # type: ignore[arg-type]


def test_null_indicators_remember_the_status() -> None:
    with NullIndicators() as lights:
        lights.show("reading")
        lights.accepted()
        assert lights.status == "reading"
        lights.refused()
        assert lights.status == "problem"
