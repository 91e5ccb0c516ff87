"""What `companion run` hands its parts: the host page's teaching takes the camera's stills
(app.service)."""

from __future__ import annotations

import argparse
import signal
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest

from app import service
from app.service import teach_pictures
from companion.session import Session
from hardware.camera import Frame, _Source


class TwoWayCamera:
    """A camera whose captures (the live loop's frames) and stills differ."""

    def __init__(self, still: np.ndarray | None) -> None:
        self.stills = 0
        self._still = still

    def capture(self) -> Frame:
        return Frame(np.zeros((48, 64, 3), np.uint8), 0.0)

    def still(self) -> Frame | None:
        self.stills += 1
        return None if self._still is None else Frame(self._still, 1.0)


def test_teaching_takes_the_cameras_stills() -> None:
    sharp = np.full((96, 128, 3), 200, np.uint8)
    camera = TwoWayCamera(sharp)
    taken = teach_pictures(camera)()
    assert taken is sharp and camera.stills == 1
    assert teach_pictures(TwoWayCamera(None))() is None  # a camera that gives no still now


def test_the_service_teaches_with_stills(
    tmp_path: Path, pack_dirs: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    frames = tmp_path / "frames"
    frames.mkdir()
    cv2.imwrite(str(frames / "table.png"), np.full((480, 640, 3), 128, np.uint8))
    config = tmp_path / "companion.toml"
    config.write_text(
        f'[table]\npack = "{pack_dirs["lagoon"]}"\nstate_dir = "{tmp_path / "state"}"\n'
        '[web]\nhost = "127.0.0.1"\nport = 0\nadvertise = false\n'
        f'[camera]\nkind = "folder"\npath = "{frames}"\nloop = true\n'
    )
    made: dict[str, Any] = {}
    stills: list[str] = []
    still = np.full((96, 128, 3), 200, np.uint8)

    def create_app(session: Session, *args: Any, **kw: Any) -> Any:
        made.update(kw, session=session)
        return real_create_app(session, *args, **kw)

    def served_until_stopped(self: Any) -> None:
        raise KeyboardInterrupt

    import web.app
    import web.serve

    real_create_app = web.app.create_app
    monkeypatch.setattr(web.app, "create_app", create_app)
    monkeypatch.setattr(web.serve.Server, "run", served_until_stopped)

    def take_still(self: _Source) -> Frame:
        stills.append(self.name)
        return Frame(still, 0.0)

    monkeypatch.setattr(_Source, "still", take_still)
    monkeypatch.setattr(signal, "signal", lambda *args: None)
    monkeypatch.setattr("app.memory.tune_allocator", lambda: None)
    args = argparse.Namespace(config=str(config), verbose=False)
    assert service.run(args) == 0
    assert made["teach_frames"]() is still
    assert stills == [f"the recording {str(frames)!r}"]
