"""What `companion run` hands its parts: the host page's teaching takes the camera's stills,
and a box's models are learnt from the start with the phones told how far (app.service)."""

from __future__ import annotations

import argparse
import signal
import threading
import time
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest

from app import service
from app.service import start_learning, teach_pictures
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


class SlowLearner:
    """A box learnt in `steps` steps, each when the test says so."""

    def __init__(self, steps: int, fails: bool = False) -> None:
        self.pack = type("Pack", (), {"name": "the test box"})()
        self.steps = steps
        self.fails = fails
        self.go = threading.Event()

    def prepare(self, progress: Any = None) -> object:
        for done in range(self.steps + 1):
            progress(done, self.steps)
            if done == 1:
                assert self.go.wait(10)
        if self.fails:
            raise RuntimeError("no memory left")
        return object()


def wait_for(condition: Any, seconds: float = 10.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "never came"
        time.sleep(0.01)


def test_the_learning_is_shown_on_the_phones_while_it_runs_then_cleared() -> None:
    session = Session()
    learner = SlowLearner(4)
    thread = start_learning(learner, session)
    wait_for(lambda: session.learning is not None and session.learning.done == 1)
    assert session.learning is not None
    assert session.learning.total == 4 and "the test box" in session.learning.what
    assert session.view()["learning"]["total"] == 4  # what the pages read
    learner.go.set()
    thread.join(10)
    assert not thread.is_alive() and session.learning is None


def test_a_learning_that_fails_is_logged_and_leaves_the_pages_clear(
    caplog: pytest.LogCaptureFixture,
) -> None:
    session = Session()
    learner = SlowLearner(2, fails=True)
    learner.go.set()
    thread = start_learning(learner, session)
    thread.join(10)
    assert not thread.is_alive() and session.learning is None
    assert "could not be learnt" in caplog.text and "no memory left" in caplog.text


# No GPIO here: gpiozero says so for each pin library it tries; the service goes on without.
@pytest.mark.filterwarnings("ignore::gpiozero.exc.PinFactoryFallback")
def test_the_service_learns_its_box_from_the_start_and_teaches_with_stills(
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
    learnt: list[tuple[Any, Session]] = []
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
    monkeypatch.setattr(service, "start_learning", lambda tables, s: learnt.append((tables, s)))

    def take_still(self: _Source) -> Frame:
        stills.append(self.name)
        return Frame(still, 0.0)

    monkeypatch.setattr(_Source, "still", take_still)
    monkeypatch.setattr(signal, "signal", lambda *args: None)
    monkeypatch.setattr("app.memory.tune_allocator", lambda: None)
    args = argparse.Namespace(config=str(config), verbose=False)
    assert service.run(args) == 0
    [(tables, session)] = learnt
    assert tables.pack.root == pack_dirs["lagoon"] and session is made["session"]
    assert made["teach_frames"]() is still
    assert stills == [f"the recording {str(frames)!r}"]
