"""`companion teach`: with --camera each picture is the camera's still; 'again' takes the next
picture for the same step."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest

from app.teach import Terminal, _next_view, _teach_batch, camera_frames
from tests.vision.box.test_teach import Script
from vision.box.pack import Pack
from vision.box.teach import BatchView, TeachSession


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


def test_again_takes_the_next_picture_for_the_same_step(
    source: Pack, script: Script, capsys: pytest.CaptureFixture[str]
) -> None:
    session = TeachSession(source.catalogue, batch=4)
    answers = iter(["again", "a1=1@90 b1=3 c1=2", ""])
    ui = Terminal(ask=lambda prompt: next(answers))
    frames = iter([("first", script.frames[0]), ("second", script.frames[0])])
    view = _next_view(session, frames, ui)
    assert isinstance(view, BatchView)
    assert not _teach_batch(ui, session, view)  # 'again': nothing kept, the step stays
    assert session.taught == () and session.step.batch == 1
    view = _next_view(session, frames, ui)
    assert isinstance(view, BatchView)
    assert _teach_batch(ui, session, view)
    assert len(session.taught) == 3
    assert "picture second:" in capsys.readouterr().out
