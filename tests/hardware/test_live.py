"""The live loop end to end against fake devices: gpiozero's MockFactory buttons, a camera
that films a scripted table, a gate that says when the table is still."""

from __future__ import annotations

import errno
import os
from collections.abc import Collection, Iterator
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import pytest
from gpiozero.pins.mock import MockFactory

from companion.actions import Pass, TakeToBoard, Turn
from companion.game import Seat
from companion.journal import Journal
from companion.progress import Learning
from companion.reading import CameraState, TableRead
from companion.session import Phase, Question, Session
from companion.tracker import Accepted, infer_turn, read_of_state
from hardware.buttons import TableButtons, TurnDone, UndoPressed
from hardware.camera import CameraStatus, Frame
from hardware.config import ButtonConfig
from hardware.indicators import NullIndicators
from hardware.live import LiveSettings, LiveTable
from tests.companion.conftest import PLAIN_DISPLAY
from tests.hardware.fakes import CountingGate, Table


class FakeCamera:
    def __init__(self) -> None:
        self.ok = True
        self.captures = 0

    def open(self) -> None: ...

    def close(self) -> None: ...

    def preview(self) -> Frame | None:
        return Frame(np.zeros((18, 32), np.uint8), 0.0) if self.ok else None

    def capture(self) -> Frame | None:
        self.captures += 1
        return Frame(np.zeros((36, 64, 3), np.uint8), 0.0) if self.ok else None

    @property
    def status(self) -> CameraStatus:
        if self.ok:
            return CameraStatus(CameraState.OK, "frames arrive", 0.0)
        return CameraStatus(CameraState.LOST, "the camera sends no frames (cable?)", None)


@dataclass
class Rig:
    live: LiveTable
    table: Table
    camera: FakeCamera
    factory: MockFactory


@pytest.fixture
def rig() -> Iterator[Rig]:
    session = Session(clock=lambda: 0.0)
    session.start_game(
        [Seat("Red", 1), Seat("Blue", 2)], start_player=1, ship=15, display=PLAIN_DISPLAY, seed=1
    )
    assert session.game is not None
    table = Table(session.game.state.copy())
    camera = FakeCamera()
    factory = MockFactory()
    clock = iter(range(10**6))
    live = LiveTable(
        session,
        camera,
        table.read,
        CountingGate(),
        settings=LiveSettings(preview_interval_s=0, settle_timeout_s=50),
        clock=lambda: float(next(clock)),
    )
    yield Rig(live, table, camera, factory)
    factory.reset()


def play_on_table(live: LiveTable, table: Table, turn: Turn) -> None:
    assert live.session.game is not None
    live.session.game.rules.apply(table.state, turn)


def press(factory: MockFactory, pin: int) -> None:
    factory.pin(pin).drive_low()
    factory.pin(pin).drive_high()


def run(live: LiveTable, rounds: int = 10) -> None:
    for _ in range(rounds):
        live.step()


def test_a_button_press_reads_the_still_table_and_records_the_turn(rig: Rig) -> None:
    live, table, factory = rig.live, rig.table, rig.factory
    with TableButtons(ButtonConfig(), live.events, pin_factory=factory):
        play_on_table(live, table, Turn(1, TakeToBoard((0, 0), (1, 1))))
        press(factory, 17)
        live.step()
        assert live.session.reading, "the page shows that the table is being read"
        run(live)
    game = live.session.game
    assert game is not None and len(game.records) == 1
    assert game.state.players[0].board[1][1] is not None
    assert not live.session.reading and live.reads == 1


def test_a_second_press_during_the_read_is_one_sentence(rig: Rig) -> None:
    live = rig.live
    live.events.put(TurnDone(None, 0.0))
    live.events.put(TurnDone(None, 0.0))
    live.step()
    live.step()
    assert (
        live.session.view()["log"][-1]["text"] == "Already reading the table: one press is enough."
    )
    run(live)
    assert live.reads == 1


def test_a_press_for_the_wrong_seat_is_refused(rig: Rig) -> None:
    live = rig.live
    live.events.put(TurnDone(2, 0.0))
    run(live, 3)
    assert live.session.view()["log"][-1]["text"] == "It is Red's turn (seat 1), not seat 2's."
    assert live.reads == 0


def test_with_the_camera_lost_the_page_says_so_and_a_press_is_refused(rig: Rig) -> None:
    live, camera = rig.live, rig.camera
    camera.ok = False
    live.events.put(TurnDone(None, 0.0))
    run(live, 3)
    view = live.session.view()
    assert view["camera"]["status"] == "lost"
    assert view["log"][-1]["text"] == "The camera is not working: enter the turn on the host page."
    camera.ok = True
    run(live, 2)
    assert live.session.view()["camera"]["status"] == "ok"


def test_a_press_while_the_box_learns_is_refused_without_waiting_for_it(rig: Rig) -> None:
    live = rig.live
    live.session.set_learning(Learning("Learning the tiles of the box", 3, 40, 12.0, 150.0))
    live.events.put(TurnDone(None, 0.0))
    live.step()
    assert live.session.view()["log"][-1]["text"].startswith(
        "The companion is still learning this box (the phones show how far): press again"
    )
    assert live.reads == 0 and not live.session.reading
    live.session.set_learning(None)
    live.events.put(TurnDone(None, 0.0))
    run(live)
    assert live.reads == 1


def test_the_undo_button_takes_back_the_last_turn(rig: Rig) -> None:
    live = rig.live
    play_on_table(live, rig.table, Turn(2, TakeToBoard((0, 1), (0, 0))))
    live.events.put(TurnDone(None, 0.0))
    run(live)
    live.events.put(UndoPressed(0.0))
    run(live, 2)
    assert live.session.game is not None and live.session.game.records == []
    live.events.put(UndoPressed(0.0))
    run(live, 2)
    assert live.session.view()["log"][-1]["text"] == "There is no turn to undo."


class Beeps(NullIndicators):
    def __init__(self) -> None:
        self.refusals = 0

    def refused(self) -> None:
        self.refusals += 1


def test_a_full_disk_refuses_the_buttons_and_the_loop_goes_on(
    rig: Rig, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    live, session = rig.live, rig.live.session
    session.journal = Journal(tmp_path)
    session.start_game([Seat("Red", 1), Seat("Blue", 2)], start_player=1, display=PLAIN_DISPLAY)
    assert session.game is not None
    rig.table.state = session.game.state.copy()
    session.play(Turn(1, Pass()))
    rig.table.state = session.game.state.copy()
    live.indicators = beeps = Beeps()
    live.settings = replace(live.settings, frozen_after_s=None)  # a still fake picture

    def full(*events: object) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(session.journal, "append", full)
    before = (session.game.state.copy(), session.view()["log"])
    live.events.put(UndoPressed(0.0))
    run(live, 2)
    play_on_table(live, rig.table, Turn(2, Pass()))
    live.events.put(TurnDone(None, 0.0))
    run(live)
    assert (session.game.state, session.view()["log"]) == before
    assert beeps.refusals == 2 and not session.reading and live.waiting_since is None
    assert caplog.text.count("The game could not be saved: the disk is full.") == 2
    monkeypatch.undo()
    live.events.put(TurnDone(None, 0.0))
    run(live)
    assert len(session.game.records) == 2  # room again: the same press records the turn


def test_a_table_that_never_keeps_still_times_out(rig: Rig) -> None:
    live = rig.live
    live.gate = CountingGate(needed=10**9)
    live.events.put(TurnDone(None, 0.0))
    run(live, 80)
    assert live.session.view()["log"][-1]["text"].startswith("The table did not keep still")
    assert not live.session.reading


def test_a_press_while_a_question_is_open_asks_for_the_answer(rig: Rig) -> None:
    live = rig.live
    live.session.question = Question("Which turn was it?", (), None)
    assert live.session.phase is Phase.CONFIRM
    live.events.put(TurnDone(None, 0.0))
    run(live, 2)
    assert live.session.view()["log"][-1]["text"] == "Answer the question on the host page first."


class TunedCamera(FakeCamera):
    """A camera set for the table: records what the loop tells it after each preview."""

    def __init__(self) -> None:
        super().__init__()
        self.tended: list[tuple[bool, bool]] = []
        self.locked = True

    def tend(self, *, still: bool, busy: bool) -> None:
        self.tended.append((still, busy))

    def request_settle(self) -> None: ...

    def refocus(self) -> None: ...

    @property
    def settled(self) -> bool:
        return self.locked

    def describe(self) -> str:
        return "Exposure and white balance locked."


def tuned(rig: Rig) -> TunedCamera:
    """The rig's live loop with a camera set for the table (its previews never change)."""
    camera = TunedCamera()
    rig.live.camera = camera
    rig.live.settings = replace(rig.live.settings, frozen_after_s=None)
    return camera


def test_the_camera_hears_of_a_turn_from_the_press_to_the_read(rig: Rig) -> None:
    live = rig.live
    camera = tuned(rig)
    run(live, 4)
    assert camera.tended and not any(busy for _, busy in camera.tended)
    assert camera.tended[-1] == (True, False)  # a still table between turns
    play_on_table(live, rig.table, Turn(1, TakeToBoard((0, 0), (1, 1))))
    live.events.put(TurnDone(None, 0.0))
    run(live, 1)
    assert live.session.reading
    camera.tended.clear()
    while live.session.reading:
        live.step()
    assert live.reads == 1
    assert len(camera.tended) >= 3 and all(busy for _, busy in camera.tended)
    run(live, 1)
    assert camera.tended[-1] == (True, False)


def test_a_read_waits_for_the_exposure_to_settle(rig: Rig) -> None:
    live = rig.live
    camera = tuned(rig)
    camera.locked = False
    play_on_table(live, rig.table, Turn(1, TakeToBoard((0, 0), (1, 1))))
    live.events.put(TurnDone(None, 0.0))
    run(live, 10)
    assert live.reads == 0 and camera.captures == 0 and live.session.reading
    camera.locked = True
    run(live, 2)
    assert live.reads == 1


def test_an_exposure_that_never_settles_times_out(rig: Rig) -> None:
    live = rig.live
    camera = tuned(rig)
    camera.locked = False
    live.events.put(TurnDone(None, 0.0))
    run(live, 80)
    assert live.session.view()["log"][-1]["text"] == (
        "The camera's exposure did not settle: press again."
    )
    assert live.reads == 0 and not live.session.reading


class RememberingReader:
    """A reader that keeps what it read (as vision.reader.incremental.IncrementalReader does): it
    notes whether each read could build on the last recorded one."""

    def __init__(self, table: Table) -> None:
        self.table = table
        self.kept = False  # a recorded read to build on
        self.kinds: list[str] = []  # per read: "whole" or "changes"
        self.seats: list[list[int]] = []

    def __call__(self, image: np.ndarray) -> TableRead:
        return self.read_turn(image)

    def read_turn(self, image: np.ndarray, seats: Collection[int] = ()) -> TableRead:
        self.kinds.append("changes" if self.kept else "whole")
        self.seats.append(sorted(seats))
        self.kept = False
        return self.table.read(image)

    def accepted(self) -> None:
        self.kept = True

    def forget(self) -> None:
        self.kept = False


def remembering(rig: Rig) -> RememberingReader:
    reader = RememberingReader(rig.table)
    rig.live.reader = reader
    # The fake camera's preview never changes: no frozen-picture check over many rounds.
    rig.live.settings = replace(rig.live.settings, frozen_after_s=None)
    return reader


def press_and_run(live: LiveTable) -> None:
    live.events.put(TurnDone(None, 0.0))
    run(live)


def a_turn(live: LiveTable, table: Table, k: int = 0) -> Turn:
    """The k-th legal turn that lays a display tile on the mover's board and that the tracker
    tells apart from every other (it would be recorded without a question)."""
    game = live.session.game
    assert game is not None
    clear = []
    for turn in game.rules.legal_turns(table.state):
        after = table.state.copy()
        game.rules.apply(after, turn)
        seen = infer_turn(game.rules, table.state, read_of_state(after))
        if isinstance(turn.action, TakeToBoard) and isinstance(seen, Accepted):
            clear.append(turn)
    return clear[k]


def test_after_a_recorded_turn_the_next_read_builds_on_it(rig: Rig) -> None:
    live, table = rig.live, rig.table
    reader = remembering(rig)
    play_on_table(live, table, a_turn(live, table))
    press_and_run(live)
    play_on_table(live, table, a_turn(live, table))
    press_and_run(live)
    assert reader.kinds == ["whole", "changes"]
    assert reader.seats == [[1, 2], [1, 2]], "the reader hears which seats play"
    game = live.session.game
    assert game is not None and len(game.records) == 2


def test_a_refused_turn_makes_the_next_read_a_whole_one(rig: Rig) -> None:
    live, table = rig.live, rig.table
    reader = remembering(rig)
    play_on_table(live, table, a_turn(live, table))
    press_and_run(live)
    press_and_run(live)  # nothing changed on the table: not recorded
    assert live.session.view()["log"][-1]["kind"] in ("refused", "unreadable")
    play_on_table(live, table, a_turn(live, table))
    press_and_run(live)
    assert reader.kinds == ["whole", "changes", "whole"]
    game = live.session.game
    assert game is not None and len(game.records) == 2


def test_a_correction_or_an_undo_makes_the_next_read_a_whole_one(rig: Rig) -> None:
    live, table = rig.live, rig.table
    reader = remembering(rig)
    play_on_table(live, table, a_turn(live, table))
    press_and_run(live)
    game = live.session.game
    assert game is not None
    # The host takes the turn back and enters another by hand.
    live.session.undo()
    table.state = game.state.copy()
    turn = a_turn(live, table, 1)
    live.session.play(turn)
    play_on_table(live, table, turn)
    assert len(game.records) == 1, "as many turns as before: only the mark tells them apart"
    play_on_table(live, table, a_turn(live, table))
    press_and_run(live)
    assert reader.kinds == ["whole", "whole"]
    assert len(game.records) == 2
