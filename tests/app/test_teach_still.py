"""`companion teach --camera` takes each picture as the camera's still."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from app.teach import Terminal, camera_frames


@dataclass
class Picture:
    image: np.ndarray


class Camera:
    """A camera whose stills are larger than its captures."""

    def capture(self) -> Picture:
        return Picture(np.zeros((90, 160, 3), np.uint8))

    def still(self) -> Picture:
        return Picture(np.zeros((144, 256, 3), np.uint8))


def test_teaching_through_the_camera_takes_stills() -> None:
    ui = Terminal(ask=lambda prompt: "")
    name, image = next(camera_frames(Camera(), ui))
    assert name == "camera 1" and image.shape == (144, 256, 3)
