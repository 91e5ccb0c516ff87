"""Camera sources: where the frames of the table come from.

Every source gives two kinds of frame: `preview()`, a small grey frame (about
`CameraConfig.preview_size`) for the motion gate, and `capture()`, a full-resolution BGR frame
for a read; both straightened first when the lens bends straight lines (`CameraConfig.lens_k`,
vision.reader.lens). At run time a source never raises: a failed frame is None and `status` says why
("lost"), and a lost device is reopened on a later call, at most once per
`CameraConfig.reopen_backoff_s`. Only configuration mistakes found by `open()` (a folder that
does not exist, picamera2 not installed) raise `DataError`.

The Pi camera is also set for the table (`TableCamera`): focus found once and locked,
exposure and white balance settled on a still table and locked for reads, settled again when
the host asks or the light changes for good, never while a turn is being read.

Sources: `PiCamera2Source` (the Pi camera, one continuous two-stream configuration),
`WebcamSource` (OpenCV), `FolderSource` (recorded images or a video), `SyntheticSource`
(frames drawn by a callable) and `NoCamera`; `open_camera` picks one from the config.
"""

from __future__ import annotations

import contextlib
import logging
import math
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol, runtime_checkable

import cv2
import numpy as np
from numpy.typing import NDArray

from companion.errors import DataError, printable
from companion.reading import CameraState
from hardware.config import CameraConfig
from vision.reader.lens import Lens
from vision.reader.picture import MAX_PICTURE_PIXELS, PictureRefused, check_picture, decode

log = logging.getLogger(__name__)

Image = NDArray[np.uint8]
ExposureState = Literal["settling", "locked"]

#: libcamera's AfMode values (libcamera.controls.AfModeEnum).
AF_MANUAL = 0

IMAGE_SUFFIXES = frozenset({".png", ".jpg", ".jpeg", ".bmp", ".tif", ".tiff", ".webp"})
# Every n-th pixel in both directions is enough to tell a black frame.
BLACK_SAMPLE_STEP = 8


@dataclass(frozen=True, slots=True)
class Frame:
    """One picture and the time (the source's clock) it was taken."""

    image: Image
    at: float


@dataclass(frozen=True, slots=True)
class CameraStatus:
    """The camera's state and one sentence on it (for LOST, why)."""

    state: CameraState
    message: str
    last_frame_at: float | None

    @property
    def ok(self) -> bool:
        return self.state is CameraState.OK


class CameraSource(Protocol):
    """What the live companion needs from a camera."""

    def open(self) -> None: ...

    def close(self) -> None: ...

    def preview(self) -> Frame | None: ...

    def capture(self) -> Frame | None: ...

    @property
    def status(self) -> CameraStatus: ...


@runtime_checkable
class TableCamera(Protocol):
    """A camera whose focus, exposure and white balance the companion sets for the table."""

    def tend(self, *, still: bool, busy: bool) -> None:
        """After each preview: `still`, the table is still; `busy`, a turn is being read."""
        ...

    def request_settle(self) -> None:
        """Let exposure and white balance settle again at the next still moment between
        turns."""
        ...

    def refocus(self) -> None:
        """One autofocus cycle, then the focus is locked again (when a box is taught)."""
        ...

    @property
    def settled(self) -> bool:
        """Exposure and white balance are locked: a read may be taken."""
        ...

    def describe(self) -> str:
        """Focus, exposure and white balance as they are set, in one or two sentences."""
        ...


class _Lost(Exception):
    """A frame could not be had; the sentence says why. `retry`: reopening may help."""

    def __init__(self, reason: str, *, retry: bool = True) -> None:
        super().__init__(reason)
        self.reason = reason
        self.retry = retry


def as_bgr(image: np.ndarray) -> Image:
    """A uint8 3-channel BGR copy-free view of a grey, BGR or BGRA uint8 image."""
    if image.dtype != np.uint8:
        raise _Lost(f"frames are {image.dtype}, not 8-bit pictures.", retry=False)
    if image.ndim == 2:
        return np.asarray(cv2.cvtColor(image, cv2.COLOR_GRAY2BGR), dtype=np.uint8)
    if image.ndim == 3 and image.shape[2] == 3:
        return image
    if image.ndim == 3 and image.shape[2] == 4:
        return np.asarray(cv2.cvtColor(image, cv2.COLOR_BGRA2BGR), dtype=np.uint8)
    raise _Lost(f"frames of shape {image.shape} are not pictures.", retry=False)


def grey_preview(image: np.ndarray, size: tuple[int, int]) -> Image:
    """`image` shrunk to fit within `size` (width, height), keeping its shape, in grey."""
    height, width = image.shape[:2]
    scale = min(size[0] / width, size[1] / height, 1.0)
    if scale < 1.0:
        target = (max(1, round(width * scale)), max(1, round(height * scale)))
        image = cv2.resize(image, target, interpolation=cv2.INTER_AREA)
    if image.ndim == 3:
        code = cv2.COLOR_BGRA2GRAY if image.shape[2] == 4 else cv2.COLOR_BGR2GRAY
        image = cv2.cvtColor(image, code)
    return np.ascontiguousarray(image, dtype=np.uint8)


class _Source:
    """Status bookkeeping, black-frame check and reopening shared by every source.

    Calls may come from several threads (the companion's loop, a web request); one at a
    time reaches the device.
    """

    def __init__(self, config: CameraConfig, clock: Callable[[], float], name: str) -> None:
        self._lock = threading.RLock()
        self.config = config
        self.name = name
        self._clock = clock
        self._wanted = False  # between open() and close()
        self._connected = False
        self._retry_at = 0.0
        self._state = CameraState.CLOSED
        self._message = f"{name} is not open."
        self._last_at: float | None = None
        self._lens = Lens(config.lens_k)

    @property
    def status(self) -> CameraStatus:
        """Whether frames come, in one sentence, and when the last one came."""
        return CameraStatus(self._state, self._message, self._last_at)

    def open(self) -> None:
        """Start the source. A device that is missing now is "lost" and retried later."""
        with self._lock:
            self._open()

    def _open(self) -> None:
        if self._wanted:
            return
        self._wanted = True
        self._retry_at = 0.0
        try:
            self._connect()
        except _Lost as lost:
            self._lose(lost)
            return
        except BaseException:
            self._wanted = False
            raise
        self._connected = True
        self._set(CameraState.OK, f"{self.name} is open.")

    def close(self) -> None:
        """Stop the source and release the device. Safe to call twice."""
        with self._lock:
            self._wanted = False
            self._drop()
            self._set(CameraState.CLOSED, f"{self.name} is closed.")

    def preview(self) -> Frame | None:
        """A small grey frame for the motion gate, or None (see `status`)."""
        return self._frame(self._read_preview)

    def capture(self) -> Frame | None:
        """A full-resolution BGR frame for a read, or None (see `status`)."""
        return self._frame(self._read_capture)

    def still(self) -> Frame | None:
        """The sharpest picture the camera can take of a still table (teaching a box), or None
        (see `status`): a capture, except where the sensor gives more (the Pi camera)."""
        return self._frame(self._read_still)

    def __enter__(self) -> _Source:
        self.open()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- for subclasses --------------------------------------------------------------------

    def _connect(self) -> None:
        """Open the device; raise _Lost when it is not there, DataError when misconfigured."""

    def _disconnect(self) -> None:
        """Release the device; may raise (errors are ignored)."""

    def _read_preview(self) -> Image:
        raise NotImplementedError

    def _read_capture(self) -> Image:
        raise NotImplementedError

    def _read_still(self) -> Image:
        return self._read_capture()

    # -- shared machinery ------------------------------------------------------------------

    def _set(self, state: CameraState, message: str) -> None:
        self._state, self._message = state, message

    def _drop(self) -> None:
        if self._connected:
            self._connected = False
            with contextlib.suppress(Exception):
                self._disconnect()

    def _lose(self, lost: _Lost) -> None:
        self._drop()
        self._set(CameraState.LOST, lost.reason)
        backoff = self.config.reopen_backoff_s if lost.retry else math.inf
        self._retry_at = self._clock() + backoff

    def _ready(self) -> bool:
        if not self._wanted:
            return False
        if self._connected:
            return True
        if self._clock() < self._retry_at:
            return False
        try:
            self._connect()
        except Exception as error:
            self._lose(error if isinstance(error, _Lost) else _Lost(_sentence(self.name, error)))
            return False
        self._connected = True
        self._set(CameraState.OK, f"{self.name} is open again.")
        return True

    def _frame(self, read: Callable[[], Image]) -> Frame | None:
        with self._lock:
            return self._frame_unlocked(read)

    def _frame_unlocked(self, read: Callable[[], Image]) -> Frame | None:
        if not self._ready():
            return None
        try:
            image = read()
        except _Lost as lost:
            self._lose(lost)
            return None
        except Exception as error:
            self._lose(_Lost(_sentence(self.name, error)))
            return None
        sample = image[::BLACK_SAMPLE_STEP, ::BLACK_SAMPLE_STEP]
        if float(sample.mean()) < self.config.black_level:
            # Reopening does not uncover a lens: stay connected, the next frame may be fine.
            self._set(
                CameraState.LOST, f"{self.name} sends black frames (lens covered, or no light)."
            )
            return None
        now = self._clock()
        self._last_at = now
        self._set(CameraState.OK, f"{self.name} is sending frames.")
        return Frame(self._lens.straighten(image), now)


def _sentence(name: str, error: BaseException) -> str:
    detail = str(error).strip().rstrip(".") or type(error).__name__
    return f"{name} failed ({detail})."


class PiCamera2Source(_Source):
    """The Raspberry Pi camera through picamera2 (from apt on the Pi, never from pip).

    One video configuration with two streams is made and started once in open(): "main" at
    `size` (RGB888, which picamera2 lays out as BGR) for capture(), "lores" at
    `preview_size` (YUV420, its Y plane is the grey preview) for preview().

    Set for the table (`TableCamera`): a camera with a focus motor runs one autofocus cycle at
    start (or takes `lens_position` from the config) and the focus is then locked
    (AfMode manual at that LensPosition). Exposure and white balance run automatic until
    `settle_frames` previews of a still table agree, then the values they reached are locked
    (AeEnable and AwbEnable off, ExposureTime, AnalogueGain and ColourGains set). Reopened
    after a loss, the camera gets back the focus and the locked values it had.
    """

    def __init__(
        self, config: CameraConfig | None = None, *, clock: Callable[[], float] = time.monotonic
    ) -> None:
        super().__init__(config or CameraConfig(kind="picamera2"), clock, "the Pi camera")
        self._camera: Any = None
        self._lens_position: float | None = None
        self._focus_found: bool | None = None  # did the last autofocus cycle find a focus
        self._exposure: ExposureState = "settling"
        self._locked: dict[str, Any] = {}
        self._last_values: tuple[float, ...] | None = None
        self._agreeing = 0  # previews in a row whose values agree with the one before
        self._settling_frames = 0  # still previews since settling started
        self._brightness: float | None = None  # mean of the last preview
        self._baseline: float | None = None  # mean of the preview when the values were locked
        self._changed = 0  # still previews in a row far from the baseline
        self._resettle = False  # asked for; done at the next still moment between turns

    def _connect(self) -> None:
        try:
            from picamera2 import Picamera2
        except ImportError:
            raise DataError(
                "camera",
                "picamera2 is not installed: on Raspberry Pi OS run "
                "`sudo apt install python3-picamera2` and make the venv with "
                "--system-site-packages (or set camera.kind to another source).",
            ) from None
        try:
            camera = Picamera2()
        except Exception as error:
            raise _Lost(
                f"no Raspberry Pi camera was found ({error or type(error).__name__}); "
                "is the ribbon cable in?"
            ) from None
        try:
            configuration = camera.create_video_configuration(
                main={"size": self.config.size, "format": "RGB888"},
                lores={"size": self.config.preview_size, "format": "YUV420"},
                buffer_count=self.config.buffer_count,
                controls={"FrameRate": float(self.config.fps)},
            )
            camera.configure(configuration)
            camera.start()
            self._camera = camera
            self._set_for_table()
        except _Lost:
            self._camera = None
            with contextlib.suppress(Exception):
                camera.close()
            raise
        except Exception as error:
            self._camera = None
            with contextlib.suppress(Exception):
                camera.close()
            raise _Lost(_sentence("starting the Pi camera", error)) from None

    def _disconnect(self) -> None:
        camera, self._camera = self._camera, None
        if camera is not None:
            try:
                camera.stop()
            finally:
                camera.close()

    def _wait(self, job: Any) -> Any:
        try:
            return self._camera.wait(job, timeout=self.config.frame_timeout_s)
        except TimeoutError:
            raise _Lost(
                f"the Pi camera sent no frame for {self.config.frame_timeout_s:g} s "
                "(cable loose, or the camera hung)."
            ) from None

    def _array(self, stream: str) -> np.ndarray:
        array = self._wait(self._camera.capture_array(stream, wait=False))
        if array is None:
            raise _Lost("the Pi camera returned an empty frame.")
        return np.asarray(array)

    def _metadata(self) -> dict[str, Any]:
        metadata = self._wait(self._camera.capture_metadata(wait=False))
        return dict(metadata or {})

    def _read_preview(self) -> Image:
        width, height = self.config.preview_size
        yuv = self._array("lores")
        # YUV420 arrives as (height * 3/2, stride): the first `height` rows are the Y plane.
        grey = np.ascontiguousarray(yuv[:height, :width], dtype=np.uint8)
        self._brightness = float(grey[::BLACK_SAMPLE_STEP, ::BLACK_SAMPLE_STEP].mean())
        return grey

    def _read_capture(self) -> Image:
        return as_bgr(self._array("main"))

    def _read_still(self) -> Image:
        """A still at the sensor's full resolution (4608 x 2592 on a Camera Module 3), taken
        with the focus, exposure and white balance the table's frames have; the camera goes
        back to its video streams after it."""
        camera = self._camera
        controls = dict(self._locked)
        if self._has_focus_motor and self._lens_position is not None:
            controls |= {"AfMode": AF_MANUAL, "LensPosition": self._lens_position}
        configuration = camera.create_still_configuration(
            main={"size": tuple(camera.sensor_resolution), "format": "RGB888"},
            controls=controls,
        )
        array = self._wait(camera.switch_mode_and_capture_array(configuration, "main", wait=False))
        if array is None:
            raise _Lost("the Pi camera returned an empty still.")
        return as_bgr(np.asarray(array))

    # -- set for the table -----------------------------------------------------------------

    @property
    def _has_focus_motor(self) -> bool:
        return "AfMode" in getattr(self._camera, "camera_controls", {})

    def _set_for_table(self) -> None:
        """Focus and exposure after (re)opening: as they were, or found anew."""
        if self._has_focus_motor:
            position = self.config.lens_position
            if position is None:
                position = self._lens_position
            if position is None:
                self._autofocus()
            else:
                self._lock_focus(position)
        if self._locked:
            self._camera.set_controls(dict(self._locked))
        else:
            self._start_settling()

    def _autofocus(self) -> None:
        self._focus_found = bool(self._camera.autofocus_cycle())
        position = self._metadata().get("LensPosition")
        if position is None:
            raise _Lost("the Pi camera's autofocus reported no lens position.")
        if not self._focus_found:
            log.warning("autofocus found no sharp picture; the focus stays at %.2f", position)
        self._lock_focus(float(position))

    def _lock_focus(self, position: float) -> None:
        self._camera.set_controls({"AfMode": AF_MANUAL, "LensPosition": position})
        self._lens_position = position

    def _start_settling(self) -> None:
        self._camera.set_controls({"AeEnable": True, "AwbEnable": True})
        self._exposure = "settling"
        self._locked = {}
        self._last_values = None
        self._agreeing = self._settling_frames = self._changed = 0
        self._resettle = False

    def _settle_step(self) -> None:
        metadata = self._metadata()
        gains = metadata.get("ColourGains") or ()
        values = tuple(
            float(v)
            for v in (metadata.get("ExposureTime"), metadata.get("AnalogueGain"), *gains)
            if v is not None
        )
        last = self._last_values
        tolerance = self.config.settle_tolerance
        agree = (
            last is not None
            and len(last) == len(values)
            and all(
                abs(v - w) <= tolerance * max(abs(w), 1e-9)
                for v, w in zip(values, last, strict=True)
            )
        )
        self._agreeing = self._agreeing + 1 if agree else 0
        self._last_values = values
        self._settling_frames += 1
        if (
            self._agreeing + 1 >= self.config.settle_frames
            or self._settling_frames >= self.config.settle_max_frames
        ):
            self._lock_exposure(metadata)

    def _lock_exposure(self, metadata: dict[str, Any]) -> None:
        controls: dict[str, Any] = {"AeEnable": False, "AwbEnable": False}
        if metadata.get("ExposureTime") is not None:
            controls["ExposureTime"] = int(metadata["ExposureTime"])
        if metadata.get("AnalogueGain") is not None:
            controls["AnalogueGain"] = float(metadata["AnalogueGain"])
        if metadata.get("ColourGains"):
            red, blue = metadata["ColourGains"]
            controls["ColourGains"] = (float(red), float(blue))
        self._camera.set_controls(controls)
        self._locked = controls
        self._exposure = "locked"
        self._baseline = self._brightness
        self._changed = 0

    def tend(self, *, still: bool, busy: bool) -> None:
        """Settle or keep exposure and white balance, after each preview of the live loop.

        Settling counts only previews of a still table; a locked camera starts settling
        again only on a still table with no turn being read: when the host asked, or when the
        table's brightness has stayed `light_change` away from that at the lock for
        `light_change_frames` previews (a lamp switched on, the sun gone).
        """
        with self._lock:
            if not self._connected or self._camera is None:
                return
            try:
                self._tend(still, busy)
            except _Lost as lost:
                self._lose(lost)
            except Exception as error:
                self._lose(_Lost(_sentence(self.name, error)))

    def _tend(self, still: bool, busy: bool) -> None:
        if self._exposure == "settling":
            if still:
                self._settle_step()
            else:  # hands over the table: what they do to the light is not the table's
                self._last_values, self._agreeing = None, 0
            return
        if busy or not still:
            self._changed = 0
            return
        if self._resettle:
            log.info("the host asked: exposure and white balance settle again")
            self._start_settling()
            return
        if self._brightness is None or self._baseline is None:
            return
        if abs(self._brightness - self._baseline) > self.config.light_change * max(
            self._baseline, 1.0
        ):
            self._changed += 1
        else:
            self._changed = 0
        if self._changed >= self.config.light_change_frames:
            log.info(
                "the table's light changed (brightness %.0f, was %.0f): "
                "exposure and white balance settle again",
                self._brightness,
                self._baseline,
            )
            self._start_settling()

    def request_settle(self) -> None:
        """Settle exposure and white balance again at the next still moment between turns."""
        with self._lock:
            if self._exposure == "locked":
                self._resettle = True

    def refocus(self) -> None:
        """One autofocus cycle, then the focus is locked there (unless the config fixes it)."""
        with self._lock:
            if (
                not self._connected
                or self._camera is None
                or not self._has_focus_motor
                or self.config.lens_position is not None
            ):
                return
            try:
                self._autofocus()
            except _Lost as lost:
                self._lose(lost)
            except Exception as error:
                self._lose(_Lost(_sentence(self.name, error)))

    @property
    def settled(self) -> bool:
        """Exposure and white balance are locked (or there is no camera to settle)."""
        return self._exposure == "locked" or not self._connected

    def describe(self) -> str:
        """Focus, exposure and white balance as they are set, for the host page."""
        if self._lens_position is None:
            focus = "Fixed focus." if self._connected else "Focus: not known yet."
        elif self.config.lens_position is not None:
            focus = f"Focus locked at lens position {self._lens_position:.2f} (from the config)."
        else:
            found = "" if self._focus_found is not False else ", where autofocus gave up"
            focus = (
                f"Focus locked at lens position {self._lens_position:.2f}{found} "
                f"(camera.lens_position = {self._lens_position:.2f} keeps it)."
            )
        if self._exposure == "settling":
            exposure = "Exposure and white balance are settling on the still table."
        else:
            parts = []
            if "ExposureTime" in self._locked:
                parts.append(f"{self._locked['ExposureTime'] / 1000:.1f} ms")
            if "AnalogueGain" in self._locked:
                parts.append(f"gain {self._locked['AnalogueGain']:.2f}")
            if "ColourGains" in self._locked:
                red, blue = self._locked["ColourGains"]
                parts.append(f"colour gains {red:.2f}/{blue:.2f}")
            values = f" ({', '.join(parts)})" if parts else ""
            waiting = (
                " They settle again at the next still moment between turns."
                if self._resettle
                else ""
            )
            exposure = f"Exposure and white balance locked{values}.{waiting}"
        return f"{focus} {exposure}"


class WebcamSource(_Source):
    """A USB webcam (or any OpenCV video device or stream address)."""

    def __init__(
        self,
        device: int | str = 0,
        *,
        config: CameraConfig | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__(config or CameraConfig(kind="webcam"), clock, f"the webcam {device!r}")
        self.device = device
        self._capture: Any = None

    def _connect(self) -> None:
        capture = cv2.VideoCapture(self.device)
        if not capture.isOpened():
            capture.release()
            raise _Lost(
                f"no webcam answers at {self.device!r} (unplugged, or used by another program)."
            )
        width, height = self.config.size
        capture.set(cv2.CAP_PROP_FRAME_WIDTH, width)
        capture.set(cv2.CAP_PROP_FRAME_HEIGHT, height)
        capture.set(cv2.CAP_PROP_FPS, self.config.fps)
        capture.set(cv2.CAP_PROP_BUFFERSIZE, 1)
        self._capture = capture

    def _disconnect(self) -> None:
        capture, self._capture = self._capture, None
        if capture is not None:
            capture.release()

    def _stopped(self) -> _Lost:
        return _Lost(f"{self.name} stopped sending frames (cable pulled, or device gone).")

    def _read(self) -> Image:
        ok, image = self._capture.read()
        if not ok or image is None:
            raise self._stopped()
        return as_bgr(np.asarray(image))

    def _read_preview(self) -> Image:
        return grey_preview(self._read(), self.config.preview_size)

    def _read_capture(self) -> Image:
        # Frames queue up in the driver while nobody reads; throw those away so the read
        # sees the table as it is now.
        for _ in range(self.config.drain_grabs):
            if not self._capture.grab():
                raise self._stopped()
        return self._read()


class FolderSource(_Source):
    """A recording: a folder of images played in name order, or a video file.

    Each capture() returns the next recorded frame; preview() shows the one last captured
    (the first before any capture). After the last frame the source is "lost", or starts
    again with `loop=True`.
    """

    def __init__(
        self,
        path: str | Path,
        *,
        loop: bool | None = None,
        config: CameraConfig | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        config = config or CameraConfig(kind="folder", path=str(path))
        super().__init__(config, clock, f"the recording {str(path)!r}")
        self.path = Path(path)
        self.loop = config.loop if loop is None else loop
        self._images: list[Path] = []
        self._video: Any = None
        self._played = 0  # frames read since the (re)start of the recording
        self._current: Image | None = None  # the frame last captured
        self._peeked: Image | None = None  # the next frame, read early by preview()

    def _connect(self) -> None:
        if self.path.is_dir():
            self._images = sorted(
                p for p in self.path.iterdir() if p.suffix.lower() in IMAGE_SUFFIXES
            )
            if not self._images:
                raise DataError(str(self.path), "the folder holds no images (.png, .jpg, ...).")
        elif self.path.is_file():
            self._video = self._open_video()
        else:
            raise DataError(str(self.path), "no such folder or video file.")
        self._played = 0
        self._current = self._peeked = None

    def _open_video(self) -> Any:
        video = cv2.VideoCapture(str(self.path))
        if not video.isOpened():
            video.release()
            raise DataError(str(self.path), "cannot be read as a video (or it is not one).")
        return video

    def _disconnect(self) -> None:
        video, self._video = self._video, None
        if video is not None:
            video.release()

    def _load(self, index: int) -> Image | None:
        """Frame `index` of an image folder, or the next frame of the video (None: the end)."""
        if self._video is None:
            if index >= len(self._images):
                return None
            path = self._images[index]
            try:
                data = path.read_bytes()
                check_picture(data, MAX_PICTURE_PIXELS)  # before any decoder runs
                image = decode(data, cv2.IMREAD_COLOR, quiet=False)  # other threads log
            except (OSError, PictureRefused) as exc:
                why = f"cannot be read ({exc.strerror})" if isinstance(exc, OSError) else exc
                raise _Lost(f"{printable(path.name)} in {self.name} {why}.") from None
            if image is None:
                raise _Lost(f"{path.name} in {self.name} is not a readable image.")
            return np.asarray(image, dtype=np.uint8)
        ok, image = self._video.read()
        return as_bgr(np.asarray(image)) if ok and image is not None else None

    def _end(self) -> _Lost:
        return _Lost(f"{self.name} has no more frames ({self._played} played).")

    def _lose(self, lost: _Lost) -> None:
        # Reopening would start the recording again: a recording that is lost stays lost
        # until it is closed and opened.
        super()._lose(_Lost(lost.reason, retry=False))

    def _next(self) -> Image | None:
        image = self._load(self._played)
        if image is None and self.loop and self._played > 0:
            if self._video is not None:
                self._video.release()
                self._video = self._open_video()
            self._played = 0
            image = self._load(0)
        if image is not None:
            self._played += 1
        return image

    def _read_preview(self) -> Image:
        if self._current is None:
            if self._peeked is None:
                self._peeked = self._next()
            if self._peeked is None:
                raise self._end()
            return grey_preview(self._peeked, self.config.preview_size)
        return grey_preview(self._current, self.config.preview_size)

    def _read_capture(self) -> Image:
        image, self._peeked = self._peeked, None
        if image is None:
            image = self._next()
        if image is None:
            raise self._end()
        self._current = image
        return image


class SyntheticSource(_Source):
    """Frames drawn by `render()` (BGR uint8): a table that exists only in software.

    capture() calls render(); preview() shrinks the latest render (rendering once if there
    is none yet). `set_motion(True)` scatters moving blobs over the preview, like hands
    over the table, until `set_motion(False)`. With `ahead`, the still table is drawn in a
    second thread as soon as the hands leave, as a camera has its frame ready: the next
    capture takes that drawing (every drawing is then made in that thread, one at a time).
    """

    def __init__(
        self,
        render: Callable[[], np.ndarray],
        *,
        config: CameraConfig | None = None,
        clock: Callable[[], float] = time.monotonic,
        ahead: bool = False,
    ) -> None:
        super().__init__(config or CameraConfig(kind="synthetic"), clock, "the synthetic table")
        self._render = render
        self._latest: Image | None = None
        self._motion = False
        self._rng = np.random.default_rng(self.config.synthetic_seed)
        self._painter = (
            ThreadPoolExecutor(1, thread_name_prefix="synthetic-table") if ahead else None
        )
        self._ready_frame: Future[np.ndarray] | None = None

    def set_motion(self, moving: bool) -> None:
        """Simulate hands moving over the table (True) or a still table (False)."""
        self._motion = moving
        if self._painter is not None:
            self._ready_frame = None if moving else self._painter.submit(self._render)

    def _disconnect(self) -> None:
        self._ready_frame = None

    def _draw(self) -> Image:
        ready, self._ready_frame = self._ready_frame, None
        try:
            if ready is None and self._painter is not None:
                ready = self._painter.submit(self._render)
            image = np.asarray(self._render() if ready is None else ready.result())
        except Exception as error:
            raise _Lost(_sentence("drawing the synthetic table", error)) from None
        self._latest = as_bgr(image)
        return self._latest

    def _read_capture(self) -> Image:
        return self._draw()

    def _read_preview(self) -> Image:
        latest = self._latest if self._latest is not None else self._draw()
        grey = grey_preview(latest, self.config.preview_size)
        if self._motion:
            grey = grey.copy()
            height, width = grey.shape
            radius = max(2, min(width, height) // 8)
            for _ in range(3):
                centre = (int(self._rng.integers(width)), int(self._rng.integers(height)))
                axes = (radius, int(radius * self._rng.uniform(0.5, 1.5)))
                shade = int(self._rng.integers(0, 256))
                angle = float(self._rng.uniform(0, 180))
                cv2.ellipse(grey, centre, axes, angle, 0, 360, shade, thickness=-1)
        return grey


class NoCamera(_Source):
    """No camera at all: turns are played by taps on a phone."""

    def __init__(self, config: CameraConfig | None = None) -> None:
        super().__init__(config or CameraConfig(kind="none"), time.monotonic, "no camera")
        self._none()

    def _none(self) -> None:
        self._set(
            CameraState.NONE, "no camera is configured: turns are entered by tapping on a phone."
        )

    def open(self) -> None:
        """Nothing to open."""
        self._none()

    def close(self) -> None:
        """Nothing to release."""
        self._none()

    def preview(self) -> Frame | None:
        """Never a frame."""
        return None

    def capture(self) -> Frame | None:
        """Never a frame."""
        return None


def open_camera(config: CameraConfig, **kw: Any) -> CameraSource:
    """The source `config.kind` names, opened.

    Keywords go to the source: `clock` for any; `render` (required) for "synthetic".
    Raises DataError for configuration mistakes (a missing folder, no picamera2).
    """
    clock = kw.pop("clock", time.monotonic)
    source: _Source
    if config.kind == "picamera2":
        source = PiCamera2Source(config, clock=clock)
    elif config.kind == "webcam":
        source = WebcamSource(config.device, config=config, clock=clock)
    elif config.kind == "folder":
        assert config.path is not None  # CameraConfig checks this
        source = FolderSource(config.path, config=config, clock=clock)
    elif config.kind == "synthetic":
        render = kw.pop("render", None)
        if render is None:
            raise DataError(
                "camera",
                'kind = "synthetic" draws the table in software; '
                "only the demo provides the drawing (use another camera.kind).",
            )
        source = SyntheticSource(render, config=config, clock=clock)
    else:
        source = NoCamera(config)
    if kw:
        raise TypeError(f"open_camera() got unexpected keywords: {', '.join(sorted(kw))}")
    source.open()
    return source
