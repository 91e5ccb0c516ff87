"""The live loop through camera faults: the page says the camera is lost in one sentence, a
press is refused while turns entered by hand still count, the camera comes back when the
fault ends, and the systemd watchdog is fed exactly while the loop is alive."""

from __future__ import annotations

import random
import threading
from dataclasses import dataclass

import numpy as np
import pytest

from companion.actions import Turn
from companion.bots import RandomPlayer
from companion.errors import DataError
from companion.game import Seat
from companion.reading import CameraState
from companion.session import Session
from hardware.buttons import TurnDone
from hardware.camera import CameraStatus, Frame, SyntheticSource
from hardware.config import CameraConfig
from hardware.live import BLACK_SENTENCE, LiveSettings, LiveTable, frozen_sentence
from tests.companion.conftest import PLAIN_DISPLAY
from tests.hardware.fakes import CountingGate, Table
from tests.hardware.faults import NO_FRAMES, UNPLUGGED, FaultyCamera

REFUSED = "The camera is not working: enter the turn on the host page."
FAULT_START, FAULT_END = 5.0, 40.0


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class NoisyCamera:
    """A working sensor: every frame differs a little (noise), as a real one does."""

    def __init__(self, clock: FakeClock) -> None:
        self.clock = clock
        self.rng = np.random.default_rng(0)
        self.opened = 0
        self.closed = 0
        self.is_open = True
        self.previews = 0

    def open(self) -> None:
        self.opened += 1
        self.is_open = True

    def close(self) -> None:
        self.closed += 1
        self.is_open = False

    def _image(self, shape: tuple[int, ...]) -> np.ndarray:
        return self.rng.integers(100, 140, shape, dtype=np.uint8)

    def preview(self) -> Frame | None:
        self.previews += 1
        return Frame(self._image((18, 32)), self.clock()) if self.is_open else None

    def capture(self) -> Frame | None:
        return Frame(self._image((36, 64, 3)), self.clock()) if self.is_open else None

    @property
    def status(self) -> CameraStatus:
        if self.is_open:
            return CameraStatus(CameraState.OK, "frames arrive.", self.clock())
        return CameraStatus(CameraState.CLOSED, "the camera is closed.", None)


class CountingNotifier:
    def __init__(self) -> None:
        self.fed = 0

    def watchdog(self) -> None:
        self.fed += 1


@dataclass
class Rig:
    live: LiveTable
    clock: FakeClock
    table: Table
    notifier: CountingNotifier

    def run_until(self, t: float) -> None:
        while self.clock.now < t:
            self.clock.now += 1.0
            self.live.step()

    def next_turn(self, seed: int) -> Turn:
        game = self.live.session.game
        assert game is not None
        turn = RandomPlayer(random.Random(seed)).choose(game.rules, game.state)
        game.rules.apply(self.table.state, turn)  # the player lays it on the table
        return turn

    def press(self) -> None:
        self.live.events.put(TurnDone(None, self.clock.now))
        for _ in range(8):
            self.clock.now += 1.0
            self.live.step()

    def camera(self, key: str = "status") -> str:
        """What the page says about the camera: its status or its message."""
        return str(self.live.session.view()["camera"][key])

    @property
    def last_log(self) -> str:
        text: str = self.live.session.view()["log"][-1]["text"]
        return text


def make_rig(camera_for: object) -> Rig:
    clock = FakeClock()
    session = Session(clock=clock)
    session.start_game(
        [Seat("Red", 1), Seat("Blue", 2)], start_player=1, ship=15, display=PLAIN_DISPLAY, seed=1
    )
    assert session.game is not None
    table = Table(session.game.state.copy())
    notifier = CountingNotifier()
    camera = camera_for(clock)  # type: ignore[operator]
    live = LiveTable(
        session,
        camera,
        table.read,
        CountingGate(),
        notifier=notifier,  # type: ignore[arg-type]
        settings=LiveSettings(
            preview_interval_s=0,
            settle_timeout_s=50,
            frozen_after_s=10,
            black_level=CameraConfig().black_level,
        ),
        clock=clock,
    )
    return Rig(live, clock, table, notifier)


EXPECTED = {
    "no_frames": NO_FRAMES,
    "unplugged": UNPLUGGED,
    "black": BLACK_SENTENCE,
    "frozen": frozen_sentence(10),
}


@pytest.mark.parametrize("fault", list(EXPECTED))
def test_the_loop_rides_out_a_camera_fault(fault: str) -> None:
    sensors: list[NoisyCamera] = []

    def faulty(clock: FakeClock) -> FaultyCamera:
        sensors.append(NoisyCamera(clock))
        return FaultyCamera(sensors[0], [(FAULT_START, FAULT_END, fault)], clock=clock)

    rig = make_rig(faulty)
    sensor = sensors[0]
    rig.run_until(FAULT_START - 1)
    assert rig.camera() == "ok"

    rig.run_until(FAULT_START + 15)
    assert rig.camera() == "lost"
    assert rig.camera("message") == EXPECTED[fault]
    assert rig.live.session.status == "problem"

    turn = rig.next_turn(1)
    rig.press()
    assert rig.last_log == REFUSED and rig.live.reads == 0
    game = rig.live.session.game
    assert game is not None
    rig.live.session.play(turn)  # the host enters the turn by hand
    assert len(game.records) == 1

    fed = rig.notifier.fed
    rig.run_until(FAULT_END - 5)
    assert rig.notifier.fed > fed, "the loop is alive and says so while the camera is lost"
    if fault == "unplugged":
        assert not sensor.is_open
    if fault == "frozen":
        assert sensor.closed >= 1, "a frozen camera is closed and reopened"

    rig.run_until(FAULT_END + 5)
    assert rig.camera() == "ok"
    rig.next_turn(3)
    rig.press()
    assert rig.live.reads == 1 and len(game.records) == 2


def test_an_unplugged_camera_comes_back_only_through_a_reopen() -> None:
    sensors: list[NoisyCamera] = []

    def faulty(clock: FakeClock) -> FaultyCamera:
        sensors.append(NoisyCamera(clock))
        return FaultyCamera(sensors[0], [(2, 6, "unplugged")], clock=clock, reopen_backoff_s=3)

    rig = make_rig(faulty)
    sensor = sensors[0]
    rig.run_until(3)
    previews = sensor.previews
    rig.run_until(6)
    assert sensor.previews == previews, "no frame is asked of a device that is gone"
    assert sensor.opened == 0 and rig.camera() == "lost"
    rig.run_until(9)  # the fault ended at 6; the reopen attempt came at 8
    assert sensor.opened == 1 and rig.camera() == "ok"


def test_black_frames_from_a_real_source_are_reported_by_the_loop() -> None:
    """hardware.camera sources already turn black frames into None and "lost"; the loop
    passes that on even with its own black check off."""
    black = [False]

    def render() -> np.ndarray:
        fill = 0 if black[0] else 120
        return np.full((36, 64, 3), fill, np.uint8)

    def synthetic(clock: FakeClock) -> SyntheticSource:
        source = SyntheticSource(render, config=CameraConfig(kind="synthetic"), clock=clock)
        source.open()
        return source

    rig = make_rig(synthetic)
    rig.live.settings = LiveSettings(preview_interval_s=0, frozen_after_s=None)
    rig.run_until(2)
    assert rig.camera() == "ok"
    black[0] = True
    rig.live.camera.capture()  # the next picture is black
    rig.run_until(4)
    assert rig.camera() == "lost"
    assert "black frames" in rig.camera("message")
    rig.live.events.put(TurnDone(None, 0.0))
    rig.run_until(6)
    assert rig.last_log == REFUSED


def test_the_watchdog_is_not_fed_while_a_camera_call_hangs() -> None:
    entered, release = threading.Event(), threading.Event()

    class HangingCamera(NoisyCamera):
        hang = False

        def preview(self) -> Frame | None:
            if self.hang:
                entered.set()
                release.wait(10)
            return super().preview()

    cameras: list[HangingCamera] = []

    def hanging(clock: FakeClock) -> HangingCamera:
        cameras.append(HangingCamera(clock))
        return cameras[0]

    rig = make_rig(hanging)
    rig.run_until(3)
    assert rig.notifier.fed == 3
    cameras[0].hang = True
    rig.clock.now += 1
    step = threading.Thread(target=rig.live.step, daemon=True)
    step.start()
    assert entered.wait(10)
    assert rig.notifier.fed == 3, "a hung camera call stops the feeding"
    release.set()
    step.join(10)
    assert not step.is_alive()
    assert rig.notifier.fed == 4


def test_a_bad_fault_schedule_is_one_sentence() -> None:
    clock = FakeClock()
    with pytest.raises(DataError, match="not a camera fault"):
        FaultyCamera(NoisyCamera(clock), [(0, 1, "smoke")], clock=clock)
    with pytest.raises(DataError, match="ends"):
        FaultyCamera(NoisyCamera(clock), [(5, 1, "black")], clock=clock)
