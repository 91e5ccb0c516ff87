"""Camera sources: recordings on disk, a fake webcam and a fake picamera2, a synthetic table."""

from __future__ import annotations

import itertools
import sys
import threading
from dataclasses import replace
from pathlib import Path
from typing import Any, ClassVar

import cv2
import numpy as np
import pytest

from companion.errors import DataError
from hardware.camera import (
    FolderSource,
    NoCamera,
    PiCamera2Source,
    SyntheticSource,
    WebcamSource,
    open_camera,
)
from hardware.config import CameraConfig
from tests.hardware.fakes import FakePicamera2, install_picamera2
from tests.vision.bombs import png_deep, rle_bmp
from vision.reader.lens import Lens

SMALL: dict[str, Any] = {"size": (160, 90), "preview_size": (32, 18)}


class Clock:
    def __init__(self) -> None:
        self.now = 10.0

    def __call__(self) -> float:
        return self.now


def picture(value: int, width: int = 160, height: int = 90) -> np.ndarray:
    """A BGR picture: a flat shade with a bright square, so it is never "black"."""
    image = np.full((height, width, 3), value, np.uint8)
    image[10:30, 10:30] = 255
    return image


# -- FolderSource ---------------------------------------------------------------------------


def write_pngs(folder: Path, shades: dict[str, int]) -> None:
    folder.mkdir(exist_ok=True)
    for name, shade in shades.items():
        cv2.imwrite(str(folder / name), picture(shade))


def shade(frame: Any) -> int:
    """The flat shade of a picture() frame (its bottom-right corner)."""
    return round(float(frame.image[-5:, -5:].mean()))


def test_folder_plays_images_in_name_order_then_is_lost(tmp_path: Path) -> None:
    write_pngs(tmp_path, {"10.png": 150, "01.png": 50, "02.png": 100})
    (tmp_path / "notes.txt").write_text("not a frame")
    source = FolderSource(tmp_path, config=CameraConfig(kind="folder", path=str(tmp_path), **SMALL))
    source.open()
    first = source.preview()
    assert first is not None and first.image.shape == (18, 32) and first.image.dtype == np.uint8
    assert [shade(source.capture()) for _ in range(3)] == [50, 100, 150]
    still = source.preview()  # shows the frame last captured
    assert still is not None and abs(int(still.image[-1, -1]) - 150) <= 2
    assert source.status.ok
    assert source.capture() is None
    assert source.status.state == "lost"
    assert "no more frames (3 played)" in source.status.message
    assert source.preview() is None
    source.close()
    assert source.status.state == "closed"


def test_a_bending_lens_is_straightened_in_every_frame(tmp_path: Path) -> None:
    # A wide lens bows a straight edge outward; the source hands on straightened frames,
    # on a canvas that keeps all of the picture (the full frame and the preview alike).
    width, height, k = 640, 360, 0.15
    straight = np.full((height, width, 3), 200, np.uint8)
    straight[:, 60:66] = 60  # a dark vertical line near the left edge
    cv2.imwrite(str(tmp_path / "0.png"), Lens(k).bend(straight))
    plain_config = CameraConfig(
        kind="folder", path=str(tmp_path), size=(width, height), preview_size=(64, 36)
    )
    plain = FolderSource(tmp_path, config=plain_config)
    fixed = FolderSource(tmp_path, config=replace(plain_config, lens_k=k))

    def line_columns(source: FolderSource) -> np.ndarray:
        """Where the line lies along each row (its darkness's centroid)."""
        source.open()
        frame = source.capture()
        source.close()
        assert frame is not None
        image = frame.image[:, :, 1].astype(int)
        h = image.shape[0]
        # Clear of the canvas's black beyond the seen frame (its corners, its left edge).
        rows = image[round(0.15 * h) : round(0.85 * h), 30 : width // 2]
        dark = np.clip(180 - rows, 0, None).astype(float)  # the line, not the paper
        columns: np.ndarray = (dark * np.arange(rows.shape[1])).sum(axis=1) / dark.sum(axis=1)
        return columns

    bowed = line_columns(plain)
    assert np.ptp(bowed) >= 3  # the lens bows the line
    straightened = line_columns(fixed)
    assert np.ptp(straightened) <= 0.5
    fixed.open()
    captured, preview = fixed.capture(), fixed.preview()
    assert captured is not None and preview is not None
    assert captured.image.shape[1] > width  # nothing cut off
    assert preview.image.ndim == 2
    fixed.close()


def test_folder_loops_when_asked(tmp_path: Path) -> None:
    write_pngs(tmp_path, {"a.png": 60, "b.png": 120})
    source = open_camera(CameraConfig(kind="folder", path=str(tmp_path), loop=True, **SMALL))
    assert [shade(source.capture()) for _ in range(5)] == [60, 120, 60, 120, 60]
    source.close()


def test_folder_reads_a_video(tmp_path: Path) -> None:
    video = tmp_path / "game.avi"
    writer = cv2.VideoWriter(str(video), cv2.VideoWriter.fourcc(*"MJPG"), 5, (160, 90))
    for value in (40, 120, 200):
        writer.write(picture(value))
    writer.release()
    source = FolderSource(video)
    source.open()
    frames = [source.capture() for _ in range(3)]
    assert all(f is not None and f.image.shape == (90, 160, 3) for f in frames)
    assert [shade(f) for f in frames] == pytest.approx([40, 120, 200], abs=4)
    assert source.capture() is None
    assert "no more frames" in source.status.message
    source.close()


@pytest.mark.parametrize(
    ("make", "words"),
    [
        (lambda p: p / "missing", "no such folder or video file"),
        (lambda p: p, "holds no images"),
        (lambda p: (p / "x.avi").write_text("nope") and p / "x.avi", "cannot be read as a video"),
    ],
)
def test_folder_mistakes_are_one_sentence(tmp_path: Path, make: Any, words: str) -> None:
    source = FolderSource(make(tmp_path))
    with pytest.raises(DataError, match=words):
        source.open()
    assert source.status.state == "closed"


def test_black_frames_are_lost_until_light_returns(tmp_path: Path) -> None:
    write_pngs(tmp_path, {"1.png": 80})
    cv2.imwrite(str(tmp_path / "2.png"), np.zeros((90, 160, 3), np.uint8))
    write_pngs(tmp_path, {"3.png": 90})
    source = open_camera(CameraConfig(kind="folder", path=str(tmp_path), **SMALL))
    assert source.capture() is not None
    assert source.capture() is None
    assert "black frames" in source.status.message
    assert source.capture() is not None
    assert source.status.ok


# -- WebcamSource ---------------------------------------------------------------------------


class FakeCapture:
    """cv2.VideoCapture stand-in following `plan`, one entry per capture made."""

    # Frames each new capture gives before failing (None: forever, -1: not even opened).
    plan: ClassVar[list[int | None]] = []
    made: ClassVar[list[FakeCapture]] = []

    def __init__(self, device: Any) -> None:
        self.device = device
        self.left = self.plan.pop(0) if self.plan else None
        self.opened = self.left != -1
        self.grabs = 0
        self.released = False
        self.settings: dict[int, float] = {}
        self.made.append(self)

    def isOpened(self) -> bool:
        return self.opened

    def set(self, prop: int, value: float) -> bool:
        self.settings[prop] = value
        return True

    def grab(self) -> bool:
        if self.left is not None:
            if self.left <= 0:
                return False
            self.left -= 1
        self.grabs += 1
        return True

    def read(self) -> tuple[bool, np.ndarray | None]:
        if not self.grab():
            return False, None
        return True, picture(self.grabs % 200 + 30, 320, 180)

    def release(self) -> None:
        self.released = True


@pytest.fixture
def fake_webcam(monkeypatch: pytest.MonkeyPatch) -> type[FakeCapture]:
    FakeCapture.plan = []
    FakeCapture.made = []
    monkeypatch.setattr(cv2, "VideoCapture", FakeCapture)
    return FakeCapture


def test_webcam_preview_is_small_grey_and_capture_drains_the_buffer(
    fake_webcam: type[FakeCapture],
) -> None:
    source = WebcamSource(2, config=CameraConfig(kind="webcam", drain_grabs=2, **SMALL))
    source.open()
    preview = source.preview()
    assert preview is not None and preview.image.shape == (18, 32)
    full = source.capture()
    assert full is not None and full.image.shape == (180, 320, 3)
    camera = fake_webcam.made[0]
    assert camera.device == 2
    assert camera.grabs == 1 + 2 + 1  # preview, two thrown away, the newest
    assert camera.settings[cv2.CAP_PROP_FRAME_WIDTH] == 160


def test_webcam_lost_then_reopened_after_the_backoff(fake_webcam: type[FakeCapture]) -> None:
    fake_webcam.plan = [3, -1, None]  # 3 frames, then unplugged; absent once; back for good
    clock = Clock()
    config = CameraConfig(kind="webcam", reopen_backoff_s=2.0, drain_grabs=0, **SMALL)
    source = open_camera(config, clock=clock)
    assert [source.capture() is not None for _ in range(3)] == [True, True, True]
    assert source.status.last_frame_at == 10.0
    assert source.capture() is None
    status = source.status
    assert status.state == "lost" and "stopped sending frames" in status.message
    assert fake_webcam.made[0].released
    clock.now += 1.0
    assert source.preview() is None  # within the back-off: no attempt
    assert len(fake_webcam.made) == 1
    clock.now += 1.5
    assert source.preview() is None  # tried: still not there
    assert len(fake_webcam.made) == 2 and "no webcam answers" in source.status.message
    clock.now += 2.5
    frame = source.capture()
    assert frame is not None and frame.at == 15.0
    assert source.status.ok and source.status.last_frame_at == 15.0
    source.close()
    assert fake_webcam.made[2].released and source.status.state == "closed"
    assert source.capture() is None


def test_webcam_missing_at_start_is_lost_not_an_error(fake_webcam: type[FakeCapture]) -> None:
    fake_webcam.plan = [-1]
    source = open_camera(CameraConfig(kind="webcam", **SMALL))
    assert source.status.state == "lost"
    assert "no webcam answers at 0" in source.status.message


# -- PiCamera2Source ------------------------------------------------------------------------


@pytest.fixture
def fake_picamera2(monkeypatch: pytest.MonkeyPatch) -> type[FakePicamera2]:
    return install_picamera2(monkeypatch, FakePicamera2)


def test_picamera2_is_configured_once_for_all_frames(fake_picamera2: type[FakePicamera2]) -> None:
    source = open_camera(CameraConfig(kind="picamera2", buffer_count=3, **SMALL))
    for _ in range(5):
        preview = source.preview()
        assert preview is not None and preview.image.shape == (18, 32)
        assert int(preview.image.max()) == 90  # the Y plane only
    full = source.capture()
    assert full is not None and full.image.shape == (90, 160, 3)
    camera = fake_picamera2.made[0]
    assert len(fake_picamera2.made) == 1
    assert camera.calls.count("configure") == 1 and camera.calls.count("start") == 1
    assert camera.calls.count("capture_array:lores") == 5
    assert camera.calls.count("capture_array:main") == 1
    assert camera.configuration["main"] == {"size": (160, 90), "format": "RGB888"}
    assert camera.configuration["lores"] == {"size": (32, 18), "format": "YUV420"}
    assert camera.configuration["buffer_count"] == 3
    source.close()
    assert camera.calls[-2:] == ["stop", "close"]


def test_picamera2_hang_is_lost_then_reopened(fake_picamera2: type[FakePicamera2]) -> None:
    clock = Clock()
    source = open_camera(CameraConfig(kind="picamera2", **SMALL), clock=clock)
    fake_picamera2.fail_after = fake_picamera2.made[0].frames + 2
    assert source.capture() is not None and source.preview() is not None
    assert source.capture() is None
    assert "sent no frame for 3 s" in source.status.message
    assert fake_picamera2.made[0].calls[-2:] == ["stop", "close"]
    fake_picamera2.fail_after = None
    clock.now += 5
    assert source.capture() is not None
    assert source.status.ok
    assert [c.calls.count("configure") for c in fake_picamera2.made] == [1, 1]


def test_picamera2_missing_module_is_one_sentence(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "picamera2", None)
    with pytest.raises(DataError, match="python3-picamera2"):
        PiCamera2Source().open()


# -- the Pi camera set for the table --------------------------------------------------------

TUNED: dict[str, Any] = {**SMALL, "settle_frames": 3, "light_change_frames": 5}
LOCK_KEYS = {"AeEnable", "AwbEnable", "ExposureTime", "AnalogueGain", "ColourGains"}


def watch(source: PiCamera2Source, previews: int, *, still: bool, busy: bool = False) -> None:
    """What the live loop does: a preview, then tend() with what the gate and the turn say."""
    for _ in range(previews):
        assert source.preview() is not None
        source.tend(still=still, busy=busy)


def settled_source(config: dict[str, Any] = TUNED) -> tuple[PiCamera2Source, FakePicamera2]:
    source = PiCamera2Source(CameraConfig(kind="picamera2", **config))
    source.open()
    camera = FakePicamera2.made[-1]
    watch(source, 20, still=True)
    assert source.settled
    return source, camera


def test_focus_is_found_once_at_start_then_locked(fake_picamera2: type[FakePicamera2]) -> None:
    source, camera = settled_source()
    assert camera.calls.count("autofocus_cycle") == 1
    focus = [c for c in camera.controls if "AfMode" in c]
    assert focus == [{"AfMode": 0, "LensPosition": 2.5}]  # manual, where autofocus ended
    assert camera.calls.index("autofocus_cycle") > camera.calls.index("start")
    watch(source, 30, still=True)
    source.capture()
    assert camera.calls.count("autofocus_cycle") == 1 and camera.af_mode == 0
    assert "lens position 2.50" in source.describe()
    assert "camera.lens_position = 2.50" in source.describe()


def test_focus_from_the_config_needs_no_autofocus(fake_picamera2: type[FakePicamera2]) -> None:
    source, camera = settled_source({**TUNED, "lens_position": 1.25})
    assert "autofocus_cycle" not in camera.calls
    assert [c for c in camera.controls if "AfMode" in c] == [{"AfMode": 0, "LensPosition": 1.25}]
    source.refocus()  # teaching keeps a focus the config fixes
    assert "autofocus_cycle" not in camera.calls
    assert "from the config" in source.describe()


def test_a_camera_without_focus_motor_gets_no_focus_controls(
    fake_picamera2: type[FakePicamera2],
) -> None:
    fake_picamera2.focus_motor = False
    source, camera = settled_source()
    source.refocus()
    assert "autofocus_cycle" not in camera.calls
    assert all("AfMode" not in c and "LensPosition" not in c for c in camera.controls)
    assert source.describe().startswith("Fixed focus.")


def test_teaching_refocuses_once_and_locks_again(fake_picamera2: type[FakePicamera2]) -> None:
    source, camera = settled_source()
    fake_picamera2.focus_at = 3.0
    try:
        source.refocus()
    finally:
        fake_picamera2.focus_at = 2.5
    assert camera.calls.count("autofocus_cycle") == 2
    assert camera.controls[-1] == {"AfMode": 0, "LensPosition": 3.0}
    assert "lens position 3.00" in source.describe()


def test_exposure_settles_on_the_still_table_then_is_locked(
    fake_picamera2: type[FakePicamera2],
) -> None:
    source = PiCamera2Source(CameraConfig(kind="picamera2", **TUNED))
    source.open()
    camera = fake_picamera2.made[0]
    camera.light = 30.0  # dimmer than the start values expect: the automatics have work to do
    assert {"AeEnable": True, "AwbEnable": True} in camera.controls
    assert not source.settled and "settling" in source.describe()
    watch(source, 10, still=False)  # hands over the table: nothing is locked on them
    for _ in range(8):  # and agreement counts only previews of a still table in a row
        watch(source, 2, still=True)
        watch(source, 1, still=False)
    assert not source.settled
    assert not any(c.get("AeEnable") is False for c in camera.controls)
    watch(source, 20, still=True)
    assert source.settled
    lock = camera.controls[-1]
    assert set(lock) == LOCK_KEYS and lock["AeEnable"] is False and lock["AwbEnable"] is False
    assert lock["ExposureTime"] == pytest.approx(30_000, rel=0.05)  # 90 bright at light 30
    assert lock["ColourGains"] == pytest.approx((2.0, 1.6), rel=0.05)
    sets = len(camera.controls)
    camera.light = 33.0  # a little brighter: the locked exposure does not follow
    watch(source, 20, still=True)
    source.capture()
    assert len(camera.controls) == sets and camera.exposure_time == lock["ExposureTime"]
    assert "Exposure and white balance locked (30.0 ms" in source.describe()


def test_a_lamp_switched_on_resettles_only_between_turns(
    fake_picamera2: type[FakePicamera2],
) -> None:
    source, camera = settled_source()
    sets = len(camera.controls)
    camera.light = 90.0  # twice the light: the locked picture is twice as bright
    watch(source, 20, still=True, busy=True)  # a turn is being read: never now
    watch(source, 20, still=False)  # hands over the table
    watch(source, 4, still=True)
    watch(source, 1, still=False)  # the count starts again after movement
    watch(source, 4, still=True)
    assert len(camera.controls) == sets
    watch(source, 1, still=True)
    assert camera.controls[sets] == {"AeEnable": True, "AwbEnable": True}
    watch(source, 20, still=True)
    assert source.settled
    assert camera.controls[-1]["ExposureTime"] == pytest.approx(10_000, rel=0.05)


def test_a_passing_shadow_does_not_resettle(fake_picamera2: type[FakePicamera2]) -> None:
    source, camera = settled_source()
    sets = len(camera.controls)
    for _ in range(5):
        camera.light = 20.0
        watch(source, 4, still=True)
        camera.light = 45.0
        watch(source, 1, still=True)
    assert len(camera.controls) == sets


def test_the_host_asks_and_the_camera_settles_at_the_next_quiet_moment(
    fake_picamera2: type[FakePicamera2],
) -> None:
    source, camera = settled_source()
    sets = len(camera.controls)
    source.request_settle()
    assert "settle again at the next still moment" in source.describe()
    watch(source, 5, still=True, busy=True)
    watch(source, 5, still=False)
    assert len(camera.controls) == sets and source.settled
    watch(source, 1, still=True)
    assert camera.controls[sets] == {"AeEnable": True, "AwbEnable": True}
    assert not source.settled
    watch(source, 20, still=True)
    assert source.settled and camera.controls[-1]["AeEnable"] is False


def test_a_reopened_camera_gets_its_focus_and_exposure_back(
    fake_picamera2: type[FakePicamera2],
) -> None:
    clock = Clock()
    source = PiCamera2Source(CameraConfig(kind="picamera2", **TUNED), clock=clock)
    source.open()
    watch(source, 20, still=True)
    lock = fake_picamera2.made[0].controls[-1]
    fake_picamera2.fail_after = fake_picamera2.made[0].frames
    assert source.preview() is None
    fake_picamera2.fail_after = None
    clock.now += 5
    assert source.preview() is not None
    again = fake_picamera2.made[1]
    assert "autofocus_cycle" not in again.calls
    assert again.controls == [{"AfMode": 0, "LensPosition": 2.5}, lock]
    assert source.settled


# -- SyntheticSource and the rest -----------------------------------------------------------


def test_synthetic_preview_capture_and_motion() -> None:
    renders: list[int] = []

    def render() -> np.ndarray:
        renders.append(1)
        return picture(70 + len(renders), 640, 360)

    source = open_camera(CameraConfig(kind="synthetic", **SMALL), render=render)
    assert isinstance(source, SyntheticSource)
    first, second = source.preview(), source.preview()
    assert first is not None and second is not None
    assert first.image.shape == (18, 32)
    assert np.array_equal(first.image, second.image)  # a still table
    assert len(renders) == 1
    full = source.capture()
    assert full is not None and full.image.shape == (360, 640, 3)
    source.set_motion(True)
    moving = [source.preview() for _ in range(3)]
    assert all(m is not None for m in moving)
    diffs = [
        np.abs(a.image.astype(int) - b.image.astype(int)).mean()  # type: ignore[union-attr]
        for a, b in itertools.pairwise(moving)
    ]
    assert min(diffs) > 1.0  # hands move between previews
    source.set_motion(False)
    calm = source.preview(), source.preview()
    assert np.array_equal(calm[0].image, calm[1].image)  # type: ignore[union-attr]


def test_a_synthetic_table_drawn_ahead_is_the_next_capture() -> None:
    drawn: list[tuple[int, str]] = []
    gate = threading.Event()

    def render() -> np.ndarray:
        gate.wait(5)
        drawn.append((len(drawn), threading.current_thread().name))
        return np.full((36, 64, 3), 40 + len(drawn), np.uint8)

    source = SyntheticSource(render, ahead=True)
    source.open()
    source.set_motion(True)
    source.set_motion(False)  # the hands leave: the still table is drawn at once
    assert not drawn
    gate.set()
    frame = source.capture()
    assert frame is not None and int(frame.image[0, 0, 0]) == 41
    assert len(drawn) == 1 and drawn[0][1].startswith("synthetic-table")
    again = source.capture()  # a second capture draws anew
    assert again is not None and int(again.image[0, 0, 0]) == 42
    source.set_motion(False)
    source.set_motion(True)  # hands back before the capture: that drawing is not taken
    source.set_motion(False)
    last = source.capture()
    assert last is not None and int(last.image[0, 0, 0]) == 44
    assert len(drawn) == 4
    source.close()


def test_a_synthetic_drawing_made_ahead_that_fails_is_lost() -> None:
    def broken() -> np.ndarray:
        raise RuntimeError("no table")

    source = SyntheticSource(broken, ahead=True)
    source.open()
    source.set_motion(False)
    assert source.capture() is None
    assert source.status.state == "lost" and "no table" in source.status.message


def test_synthetic_render_failure_is_lost() -> None:
    def broken() -> np.ndarray:
        raise RuntimeError("no table")

    source = SyntheticSource(broken)
    source.open()
    assert source.capture() is None
    assert source.status.state == "lost" and "no table" in source.status.message


def test_no_camera_explains_itself() -> None:
    source = open_camera(CameraConfig(kind="none"))
    assert isinstance(source, NoCamera)
    assert source.preview() is None and source.capture() is None
    assert source.status.state == "none" and "tapping" in source.status.message


def test_synthetic_needs_a_drawing() -> None:
    with pytest.raises(DataError, match="only the demo"):
        open_camera(CameraConfig(kind="synthetic"))


@pytest.mark.parametrize(
    ("name", "bomb", "why"),
    [
        ("02.bmp", rle_bmp(30_000, 30_000), "is a BMP picture; only PNG and JPEG pictures"),
        ("02.png", png_deep(7070, 7070), "399 MB decoded; a picture decodes to at most 150 MB"),
    ],
    ids=["bmp", "deep-png"],
)
def test_a_folder_picture_refused_by_its_header_is_lost_without_decoding(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, bomb: bytes, why: str
) -> None:
    write_pngs(tmp_path, {"01.png": 50})
    (tmp_path / name).write_bytes(bomb)
    imdecode = cv2.imdecode

    def only_others(data: np.ndarray, flags: int) -> Any:
        assert data.tobytes() != bomb, "a refused picture reached the decoder"
        return imdecode(data, flags)

    monkeypatch.setattr(cv2, "imdecode", only_others)
    monkeypatch.setattr(cv2, "imread", None)
    source = FolderSource(tmp_path, config=CameraConfig(kind="folder", path=str(tmp_path), **SMALL))
    source.open()
    assert shade(source.capture()) == 50
    assert source.capture() is None
    assert source.status.state == "lost"
    assert f"{name} in " in source.status.message
    assert why in source.status.message
    source.close()
