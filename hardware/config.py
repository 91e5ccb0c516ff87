"""Settings of the table hardware: buttons, indicator LEDs and buzzer, camera.

Frozen dataclasses with the defaults of docs/hardware.md. Each validates itself on
construction; `HardwareConfig.from_mapping` builds all three from the [buttons], [indicators]
and [camera] tables of the companion's TOML file. A bad value is one `DataError` sentence
naming the key. Pins are BCM GPIO numbers (0-27 on the 40-pin header), never board pins.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, fields
from typing import Any, Literal, get_args

from companion.errors import CompanionError, DataError

#: GPIO numbers of the Raspberry Pi's 40-pin header.
MIN_PIN = 0
MAX_PIN = 27
#: Seats of the table kit (1..5, docs/table-kit.md).
MIN_SEAT = 1
MAX_SEAT = 5

CameraKind = Literal["picamera2", "webcam", "folder", "synthetic", "none"]
CAMERA_KINDS: tuple[str, ...] = get_args(CameraKind)


class GpioUnavailable(CompanionError):
    """The GPIO pins cannot be used (no Raspberry Pi, a pin already taken, no permission)."""


@contextlib.contextmanager
def gpio_errors(what: str) -> Iterator[None]:
    """Turn gpiozero's failures while setting up `what` into one GpioUnavailable sentence."""
    from gpiozero.exc import BadPinFactory, GPIOPinInUse, GPIOZeroError

    try:
        yield
    except BadPinFactory:
        raise GpioUnavailable(
            f"cannot use GPIO for the {what}: this machine has no Raspberry Pi GPIO "
            "(or no GPIO library such as python3-lgpio); run without buttons and LEDs."
        ) from None
    except GPIOPinInUse as error:
        raise GpioUnavailable(
            f"cannot use GPIO for the {what}: a pin is already in use ({error})."
        ) from None
    except (GPIOZeroError, OSError) as error:
        raise GpioUnavailable(f"cannot use GPIO for the {what}: {error}.") from None


#: Bounds of the settings: a camera side in pixels (the largest Pi camera is 9152 px wide),
#: a time in seconds, a count of frames.
MAX_SIDE_PX = 10_000
MAX_SECONDS = 3600.0
MAX_FRAMES = 64


def _problem(key: str, text: str) -> DataError:
    return DataError("", f"{key}: {text}")


def _check_pin(key: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise _problem(key, f"a GPIO pin is a whole number {MIN_PIN}-{MAX_PIN}, not {value!r}.")
    if not MIN_PIN <= value <= MAX_PIN:
        raise _problem(
            key, f"GPIO {value} is not on the Raspberry Pi header (use {MIN_PIN}-{MAX_PIN})."
        )
    return value


def _check_number(
    key: str, value: object, *, minimum: float, maximum: float, strict: bool = False
) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or value != value:  # NaN
        raise _problem(key, f"expected a number, got {value!r}.")
    if value < minimum or (strict and value == minimum):
        bound = f"more than {minimum:g}" if strict else f"at least {minimum:g}"
        raise _problem(key, f"{value!r} is too small (must be {bound}).")
    if value > maximum:
        raise _problem(key, f"{value!r} is too large (must be at most {maximum:g}).")
    return float(value)


def _check_size(key: str, value: object) -> tuple[int, int]:
    ok = (
        isinstance(value, tuple | list)
        and len(value) == 2
        and all(
            isinstance(v, int) and not isinstance(v, bool) and 0 < v <= MAX_SIDE_PX for v in value
        )
    )
    if not ok:
        raise _problem(
            key, f"a size is [width, height] in pixels, at most {MAX_SIDE_PX}, not {value!r}."
        )
    assert isinstance(value, tuple | list)
    return (int(value[0]), int(value[1]))


def _check_unique(pins: list[tuple[str, int | None]]) -> None:
    seen: dict[int, str] = {}
    for key, pin in pins:
        if pin is None:
            continue
        if pin in seen:
            raise DataError(
                "", f"{key} and {seen[pin]} both use GPIO {pin}; give each its own pin."
            )
        seen[pin] = key


@dataclass(frozen=True, slots=True)
class ButtonConfig:
    """The big "turn done" button(s) and the undo button (hardware.buttons)."""

    # One pin shared by the whole table (TurnDone.seat is None), or seat -> pin, one per seat.
    turn_done: int | dict[int, int] = 17
    # None: no undo button (undo from a phone only).
    undo: int | None = 27
    # Contact bounce filtered by gpiozero; 0 turns the filter off.
    bounce_ms: int = 50
    # A button held down this long also sends ButtonHeld once (a long press).
    hold_seconds: float = 2.0
    # A second press of the same button this soon after the last counted one is a double
    # press and is dropped.
    repeat_guard_s: float = 1.0

    def __post_init__(self) -> None:
        if isinstance(self.turn_done, dict):
            if not self.turn_done:
                raise _problem("buttons.turn_done", "give one pin, or at least one seat = pin.")
            for seat, pin in self.turn_done.items():
                if isinstance(seat, bool) or not isinstance(seat, int):
                    raise _problem("buttons.turn_done", f"seat {seat!r} is not a seat number.")
                if not MIN_SEAT <= seat <= MAX_SEAT:
                    raise _problem(
                        "buttons.turn_done", f"seat {seat} does not exist (seats are 1-5)."
                    )
                _check_pin(f"buttons.turn_done.{seat}", pin)
            object.__setattr__(self, "turn_done", dict(self.turn_done))
        else:
            _check_pin("buttons.turn_done", self.turn_done)
        if self.undo is not None:
            _check_pin("buttons.undo", self.undo)
        if isinstance(self.bounce_ms, bool) or not isinstance(self.bounce_ms, int):
            raise _problem(
                "buttons.bounce_ms", f"expected whole milliseconds, got {self.bounce_ms!r}."
            )
        _check_number("buttons.bounce_ms", self.bounce_ms, minimum=0, maximum=10_000)
        _check_number(
            "buttons.hold_seconds", self.hold_seconds, minimum=0, maximum=MAX_SECONDS, strict=True
        )
        _check_number("buttons.repeat_guard_s", self.repeat_guard_s, minimum=0, maximum=MAX_SECONDS)
        _check_unique(self.pins())

    def pins(self) -> list[tuple[str, int | None]]:
        """(setting name, pin) of every button, for the wiring checks."""
        if isinstance(self.turn_done, dict):
            named = [(f"buttons.turn_done.{s}", p) for s, p in sorted(self.turn_done.items())]
        else:
            named = [("buttons.turn_done", self.turn_done)]
        return [*named, ("buttons.undo", self.undo)]


@dataclass(frozen=True, slots=True)
class IndicatorConfig:
    """The status LEDs and the buzzer (hardware.indicators). None: not fitted."""

    ready: int | None = 5
    reading: int | None = 6
    problem: int | None = 13
    buzzer: int | None = 19
    # False when the LEDs and buzzer are wired to light/sound with the pin low (sinking).
    active_high: bool = True
    # One blink of the ready LED when a turn is accepted.
    blink_s: float = 0.15
    # Each of the two beeps when a turn is refused, and the gap between them.
    beep_s: float = 0.08

    def __post_init__(self) -> None:
        for key, pin in self.pins():
            if pin is not None:
                _check_pin(key, pin)
        if not isinstance(self.active_high, bool):
            raise _problem(
                "indicators.active_high", f"expected true or false, got {self.active_high!r}."
            )
        _check_number(
            "indicators.blink_s", self.blink_s, minimum=0, maximum=MAX_SECONDS, strict=True
        )
        _check_number("indicators.beep_s", self.beep_s, minimum=0, maximum=MAX_SECONDS, strict=True)
        _check_unique(self.pins())

    def pins(self) -> list[tuple[str, int | None]]:
        """(setting name, pin) of every LED and the buzzer."""
        return [
            ("indicators.ready", self.ready),
            ("indicators.reading", self.reading),
            ("indicators.problem", self.problem),
            ("indicators.buzzer", self.buzzer),
        ]


@dataclass(frozen=True, slots=True)
class CameraConfig:
    """Which camera to use and how (hardware.camera). Sizes are (width, height) in pixels."""

    kind: CameraKind = "picamera2"
    # Full-resolution frames for reading the table.
    size: tuple[int, int] = (2880, 1620)
    # Small frames for the motion gate (a picamera2 "lores" stream).
    preview_size: tuple[int, int] = (320, 180)
    # Webcam: an OpenCV device index or a device path / stream address.
    device: int | str = 0
    # Folder source: a folder of images (played in name order) or a video file.
    path: str | None = None
    # Folder source: start again at the first frame after the last one.
    loop: bool = False
    fps: float = 10.0
    # picamera2 buffers; more smooths bursts, each costs a full-size frame of memory.
    buffer_count: int = 4
    # Webcam: frames grabbed and thrown away before a capture, so the read sees "now".
    drain_grabs: int = 2
    # picamera2: a frame that has not come after this long means the camera is lost.
    frame_timeout_s: float = 3.0
    # After the camera is lost, wait this long before each attempt to reopen it.
    reopen_backoff_s: float = 2.0
    # A frame whose mean brightness (0-255) is below this is black: lens covered, no light.
    black_level: float = 6.0
    # Seed of the synthetic source's moving hands.
    synthetic_seed: int = 0
    # How the lens bends straight lines (vision.reader.lens; `companion lens` measures it from a
    # photo): every frame is straightened by it before anything looks at it. 0: a lens
    # straight enough as it is.
    lens_k: float = 0.0
    # picamera2 with a focus motor (Camera Module 3): where the focus is locked, as the
    # camera's LensPosition (dioptres, 1 / distance in metres). None: one autofocus cycle at
    # start and when a box is taught finds it.
    lens_position: float | None = None
    # picamera2: exposure and white balance adapt until this many previews of a still table
    # in a row agree within `settle_tolerance` (a fraction), then they are locked for reads;
    # after `settle_max_frames` still previews they are locked as they are.
    settle_frames: int = 5
    settle_tolerance: float = 0.05
    settle_max_frames: int = 50
    # picamera2: a still table whose mean brightness stays more than this fraction away from
    # that at the lock for `light_change_frames` previews in a row has new light (a lamp
    # switched on): exposure and white balance settle again, between turns.
    light_change: float = 0.25
    light_change_frames: int = 30

    def __post_init__(self) -> None:
        if self.kind not in CAMERA_KINDS:
            kinds = ", ".join(f'"{k}"' for k in CAMERA_KINDS)
            raise _problem("camera.kind", f"{self.kind!r} is not a camera kind (use {kinds}).")
        size = _check_size("camera.size", self.size)
        preview = _check_size("camera.preview_size", self.preview_size)
        if preview[0] > size[0] or preview[1] > size[1]:
            raise _problem("camera.preview_size", f"{preview} is larger than camera.size {size}.")
        object.__setattr__(self, "size", size)
        object.__setattr__(self, "preview_size", preview)
        if isinstance(self.device, bool) or not isinstance(self.device, int | str):
            raise _problem(
                "camera.device", f"expected a device number or path, got {self.device!r}."
            )
        if self.path is not None and not isinstance(self.path, str):
            raise _problem("camera.path", f"expected a path, got {self.path!r}.")
        if self.kind == "folder" and not self.path:
            raise _problem("camera.path", 'camera.kind = "folder" needs the folder or video file.')
        if not isinstance(self.loop, bool):
            raise _problem("camera.loop", f"expected true or false, got {self.loop!r}.")
        _check_number("camera.fps", self.fps, minimum=0, maximum=240, strict=True)
        for key in ("buffer_count", "drain_grabs", "synthetic_seed"):
            value = getattr(self, key)
            if isinstance(value, bool) or not isinstance(value, int):
                raise _problem(f"camera.{key}", f"expected a whole number, got {value!r}.")
        _check_number("camera.buffer_count", self.buffer_count, minimum=1, maximum=MAX_FRAMES)
        _check_number("camera.drain_grabs", self.drain_grabs, minimum=0, maximum=MAX_FRAMES)
        _check_number(
            "camera.frame_timeout_s",
            self.frame_timeout_s,
            minimum=0,
            maximum=MAX_SECONDS,
            strict=True,
        )
        _check_number(
            "camera.reopen_backoff_s", self.reopen_backoff_s, minimum=0, maximum=MAX_SECONDS
        )
        _check_number("camera.black_level", self.black_level, minimum=0, maximum=255)
        if self.lens_position is not None:
            _check_number("camera.lens_position", self.lens_position, minimum=0, maximum=100)
        for key in ("settle_frames", "settle_max_frames", "light_change_frames"):
            value = getattr(self, key)
            if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 100_000:
                raise _problem(
                    f"camera.{key}",
                    f"expected a whole number of frames from 1 to 100000, got {value!r}.",
                )
        _check_number(
            "camera.settle_tolerance", self.settle_tolerance, minimum=0, maximum=1, strict=True
        )
        _check_number("camera.light_change", self.light_change, minimum=0, maximum=10, strict=True)
        if isinstance(self.lens_k, bool) or not isinstance(self.lens_k, int | float):
            raise _problem("camera.lens_k", f"expected a number, got {self.lens_k!r}.")
        from vision.reader.lens import Lens  # the one place that says what a lens may bend

        try:
            Lens(float(self.lens_k))
        except ValueError as error:
            raise _problem("camera.lens_k", f"{error} (`companion lens` measures it).") from None


def _disabled(value: object) -> bool:
    """TOML has no null: `false` or "none" switches an optional pin off."""
    return value is False or (isinstance(value, str) and value.strip().lower() == "none")


def _table(data: Mapping[str, Any], name: str) -> dict[str, Any]:
    table = data.get(name, {})
    if not isinstance(table, Mapping):
        raise DataError("", f"[{name}] must be a table of settings, not {table!r}.")
    known = {f.name for f in fields(_SECTIONS[name])}
    for key in table:
        if key not in known:
            raise DataError(
                "", f"[{name}] has an unknown setting {key!r} (known: {', '.join(sorted(known))})."
            )
    return dict(table)


def _seat_pins(value: Mapping[Any, Any]) -> dict[int, int]:
    pins: dict[int, int] = {}
    for seat, pin in value.items():
        try:
            number = int(seat)
        except (TypeError, ValueError):
            raise _problem("buttons.turn_done", f"{seat!r} is not a seat number.") from None
        pins[number] = pin
    return pins


@contextlib.contextmanager
def _located(source: str) -> Iterator[None]:
    try:
        yield
    except DataError as error:
        raise DataError(source, error.problem) from None


@dataclass(frozen=True, slots=True)
class HardwareConfig:
    """All table hardware settings."""

    buttons: ButtonConfig = field(default_factory=ButtonConfig)
    indicators: IndicatorConfig = field(default_factory=IndicatorConfig)
    camera: CameraConfig = field(default_factory=CameraConfig)

    def __post_init__(self) -> None:
        _check_unique(self.buttons.pins() + self.indicators.pins())

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any], source: str) -> HardwareConfig:
        """Build from a parsed TOML file; reads [buttons], [indicators], [camera] only.

        Missing tables and keys take their defaults; other tables belong to other parts of
        the companion and are ignored. `source` names the file in error sentences.
        """
        with _located(source):
            buttons = _table(data, "buttons")
            if isinstance(buttons.get("turn_done"), Mapping):
                buttons["turn_done"] = _seat_pins(buttons["turn_done"])
            if "undo" in buttons and _disabled(buttons["undo"]):
                buttons["undo"] = None
            indicators = _table(data, "indicators")
            for key in ("ready", "reading", "problem", "buzzer"):
                if key in indicators and _disabled(indicators[key]):
                    indicators[key] = None
            camera = _table(data, "camera")
            for key in ("size", "preview_size"):
                if isinstance(camera.get(key), list):
                    camera[key] = tuple(camera[key])
            return cls(
                buttons=ButtonConfig(**buttons),
                indicators=IndicatorConfig(**indicators),
                camera=CameraConfig(**camera),
            )


_SECTIONS: dict[str, type] = {
    "buttons": ButtonConfig,
    "indicators": IndicatorConfig,
    "camera": CameraConfig,
}
