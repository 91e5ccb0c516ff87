"""Stills for teaching a box: the Pi camera's full sensor, other sources' captures."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from hardware.camera import FolderSource, PiCamera2Source, open_camera
from hardware.config import CameraConfig
from tests.hardware.fakes import FakePicamera2, install_picamera2


class StillPicamera2(FakePicamera2):
    """The fake picamera2 with a Camera Module 3's sensor and still mode."""

    sensor_resolution = (4608, 2592)

    def create_still_configuration(self, **kw: Any) -> dict[str, Any]:
        self.calls.append("create_still_configuration")
        return dict(kw)

    def switch_mode_and_capture_array(
        self, configuration: dict[str, Any], name: str = "main", wait: Any = None
    ) -> Any:
        self.calls.append(f"switch_mode_and_capture_array:{name}")
        self.still_configuration = configuration
        return ("still", configuration[name]["size"])

    def wait(self, job: Any, timeout: float | None = None) -> Any:
        if isinstance(job, tuple) and job[0] == "still":
            width, height = job[1]
            return np.full((height, width, 3), 120, np.uint8)
        return super().wait(job, timeout)


@pytest.fixture
def still_picamera2(monkeypatch: pytest.MonkeyPatch) -> type[StillPicamera2]:
    return install_picamera2(monkeypatch, StillPicamera2)


def test_the_pi_camera_teaches_with_full_resolution_stills(
    still_picamera2: type[StillPicamera2],
) -> None:
    source = open_camera(CameraConfig(kind="picamera2", size=(2880, 1620), preview_size=(320, 180)))
    assert isinstance(source, PiCamera2Source)
    still = source.still()
    assert still is not None and still.image.shape == (2592, 4608, 3)
    camera = still_picamera2.made[0]
    assert isinstance(camera, StillPicamera2)
    assert camera.still_configuration["main"] == {"size": (4608, 2592), "format": "RGB888"}
    # The still keeps the focus the table's frames were locked at.
    assert camera.still_configuration["controls"]["LensPosition"] == camera.lens_position
    full = source.capture()
    assert full is not None and full.image.shape == (1620, 2880, 3)
    source.close()


def test_other_sources_give_a_capture_as_their_still(tmp_path: Any) -> None:
    import cv2

    cv2.imwrite(str(tmp_path / "a.png"), np.full((90, 160, 3), 100, np.uint8))
    source = open_camera(
        CameraConfig(kind="folder", path=str(tmp_path), size=(160, 90), preview_size=(32, 18))
    )
    assert isinstance(source, FolderSource)
    still = source.still()
    assert still is not None and still.image.shape == (90, 160, 3)
    source.close()
