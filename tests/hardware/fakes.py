"""Stand-ins the camera and live-loop tests share: a motion gate that counts frames, the
table a fake camera films, and a fake picamera2."""

from __future__ import annotations

import sys
import types
from typing import Any, ClassVar, TypeVar

import numpy as np
import pytest

from companion.reading import TableRead
from companion.state import GameState
from companion.tracker import read_of_state

Fake = TypeVar("Fake", bound="FakePicamera2")


def install_picamera2(monkeypatch: pytest.MonkeyPatch, fake: type[Fake]) -> type[Fake]:
    """`fake` as picamera2's Picamera2 for one test, with no camera made and none failing."""
    fake.made = []
    fake.fail_after = None
    fake.focus_motor = True
    module = types.ModuleType("picamera2")
    module.Picamera2 = fake  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "picamera2", module)
    return fake


class CountingGate:
    """Still after `needed` frames since the last reset."""

    def __init__(self, needed: int = 3) -> None:
        self.needed = needed
        self.seen = 0

    def feed(self, image: np.ndarray, at: float) -> bool:
        self.seen += 1
        return self.seen >= self.needed

    def reset(self) -> None:
        self.seen = 0


class Table:
    """The physical table the fake camera films: a game state the test changes by hand."""

    def __init__(self, state: GameState) -> None:
        self.state = state

    def read(self, image: np.ndarray) -> TableRead:
        return read_of_state(self.state)


class FakePicamera2:
    """picamera2's Picamera2 as the companion uses it, with a sensor whose automatics move.

    Records the calls it gets (`calls`) and every control set, in order (`controls`). Each
    frame waited for (an array or metadata) is one frame of the sensor: while AeEnable is on
    the exposure time moves halfway towards what makes the table's picture 90 bright, while
    AwbEnable is on the colour gains move halfway towards (2.0, 1.6). The preview's grey is
    `light` x exposure time x gain / 10 000. `fail_after`: frames before the camera hangs.
    """

    made: ClassVar[list[FakePicamera2]] = []
    fail_after: ClassVar[int | None] = None
    focus_motor: ClassVar[bool] = True
    focus_at: ClassVar[float] = 2.5  # where an autofocus cycle ends (dioptres)

    def __init__(self) -> None:
        self.calls: list[str] = []
        self.controls: list[dict[str, Any]] = []
        self.configuration: dict[str, Any] = {}
        self.frames = 0
        self.camera_controls: dict[str, Any] = {
            "AeEnable": (False, True, True),
            "AwbEnable": (False, True, True),
            "ExposureTime": (100, 1_000_000, 20_000),
            "AnalogueGain": (1.0, 16.0, 1.0),
            "ColourGains": (0.0, 32.0, None),
        }
        if self.focus_motor:
            self.camera_controls |= {"AfMode": (0, 2, 0), "LensPosition": (0.0, 15.0, 1.0)}
        self.light = 45.0
        self.ae = self.awb = True
        self.exposure_time = 20_000
        self.gain = 1.0
        self.colour_gains = (1.0, 1.0)
        self.af_mode = 2
        self.lens_position = 1.0
        self.made.append(self)

    def create_video_configuration(self, **kw: Any) -> dict[str, Any]:
        self.calls.append("create_video_configuration")
        return dict(kw)

    def configure(self, configuration: dict[str, Any]) -> None:
        self.calls.append("configure")
        self.configuration = configuration

    def start(self) -> None:
        self.calls.append("start")

    def stop(self) -> None:
        self.calls.append("stop")

    def close(self) -> None:
        self.calls.append("close")

    def set_controls(self, controls: dict[str, Any]) -> None:
        for name in controls:
            if name not in self.camera_controls:
                raise RuntimeError(f"Control {name} is not advertised by libcamera")
        self.controls.append(dict(controls))
        self.ae = controls.get("AeEnable", self.ae)
        self.awb = controls.get("AwbEnable", self.awb)
        self.exposure_time = controls.get("ExposureTime", self.exposure_time)
        self.gain = controls.get("AnalogueGain", self.gain)
        self.colour_gains = controls.get("ColourGains", self.colour_gains)
        self.af_mode = controls.get("AfMode", self.af_mode)
        self.lens_position = controls.get("LensPosition", self.lens_position)

    def autofocus_cycle(self) -> bool:
        self.calls.append("autofocus_cycle")
        self.af_mode = 1
        self.lens_position = self.focus_at
        return True

    def capture_array(self, name: str = "main", wait: Any = None) -> str:
        self.calls.append(f"capture_array:{name}")
        return name

    def capture_metadata(self, wait: Any = None) -> str:
        self.calls.append("capture_metadata")
        return "metadata"

    def brightness(self) -> int:
        return min(255, round(self.light * self.exposure_time * self.gain / 10_000))

    def _next_frame(self) -> None:
        if self.fail_after is not None and self.frames >= self.fail_after:
            raise TimeoutError
        self.frames += 1
        if self.ae:
            target = 90 * 10_000 / (self.light * self.gain)
            self.exposure_time = round((self.exposure_time + target) / 2)
        if self.awb:
            red, blue = self.colour_gains
            self.colour_gains = ((red + 2.0) / 2, (blue + 1.6) / 2)

    def wait(self, job: str, timeout: float | None = None) -> Any:
        self._next_frame()
        if job == "metadata":
            metadata: dict[str, Any] = {
                "ExposureTime": self.exposure_time,
                "AnalogueGain": self.gain,
                "ColourGains": self.colour_gains,
            }
            if self.focus_motor:
                metadata["LensPosition"] = self.lens_position
            return metadata
        stream = self.configuration[job]
        width, height = stream["size"]
        if stream["format"] == "YUV420":
            yuv = np.full((height * 3 // 2, width + 16), 128, np.uint8)  # padded stride
            yuv[:height, :width] = self.brightness()
            return yuv
        image = np.full((height, width, 3), self.brightness(), np.uint8)
        image[10:30, 10:30] = 255
        return image
