"""The live session: verdicts become log lines, questions, corrections; subscribers wake."""

from __future__ import annotations

import errno
import os
import threading
from pathlib import Path
from typing import Any

import pytest

from companion.actions import Pass, TakeToBoard, Turn, Variant
from companion.errors import NotNow
from companion.game import Seat
from companion.journal import Journal, StorageError
from companion.reading import UNKNOWN, CellRead
from companion.session import Phase, Session
from companion.state import Placed
from companion.tracker import Verdict, read_of_state
from tests.companion.conftest import PLAIN_DISPLAY
from tests.companion.test_tracker import with_cell


def started() -> Session:
    session = Session(clock=lambda: 1000.0)
    session.start_game(
        [Seat("Red", 1), Seat("Blue", 2)], start_player=1, ship=15, display=PLAIN_DISPLAY, seed=3
    )
    return session


def table_after(session: Session, turn: Turn):  # type: ignore[no-untyped-def]
    assert session.game is not None
    state = session.game.state.copy()
    session.game.rules.apply(state, turn)
    return read_of_state(state)


def test_a_new_session_waits_for_a_game() -> None:
    session = Session()
    assert session.phase is Phase.SETUP
    assert session.view()["game"] is None
    with pytest.raises(NotNow, match="No game is running"):
        session.undo()


def test_a_clean_read_is_recorded_and_logged() -> None:
    session = started()
    turn = Turn(1, TakeToBoard((0, 0), (1, 1)), drawn="middle-boat")
    verdict = session.observe(table_after(session, turn))
    assert verdict is not None and session.game is not None
    assert session.game.records[-1].turn == turn
    view = session.view()
    assert view["log"][-1]["kind"] == "turn"
    assert view["log"][-1]["text"].startswith("Red moved the ship 1 step")
    assert view["game"]["players"][1]["to_move"] is True


def test_a_refused_read_changes_nothing_and_says_why() -> None:
    session = started()
    read = table_after(session, Turn(1, TakeToBoard((0, 0), (0, 0)), drawn="middle-boat"))
    read = with_cell(read, 1, (1, 1), CellRead("water-boat", 0, 0.9))
    before = session.game.state.copy() if session.game else None
    session.observe(read)
    assert session.game is not None and session.game.state == before
    assert session.view()["log"][-1]["kind"] == "refused"
    assert session.status == "ready"


def test_a_doubtful_read_becomes_a_question_the_host_answers() -> None:
    session = started()
    turn = Turn(1, TakeToBoard((0, 0), (2, 2), 90), drawn="middle-boat")
    session.observe(with_cell(table_after(session, turn), 1, (2, 2), UNKNOWN))
    assert session.phase is Phase.CONFIRM and session.status == "problem"
    choices = session.view()["question"]["choices"]
    index = next(i for i, c in enumerate(choices) if c["action"]["rotation"] == 90)
    record = session.confirm(index)
    assert record.turn == turn and session.phase is Phase.PLAYING


def test_the_host_says_where_an_unseen_player_ship_stands() -> None:
    session = Session(clock=lambda: 1000.0)
    session.start_game(
        [Seat("Red", 1), Seat("Blue", 2)],
        start_player=1,
        ship=15,
        display=PLAIN_DISPLAY,
        seed=3,
        variant=Variant.ADVANCED,
    )
    assert session.game is not None
    red = session.game.state.players[0]
    red.board[0][0] = red.board[3][3] = Placed("end-bare")
    red.ship = (0, 0)
    session.observe(table_after(session, Turn(1, Pass(), ship_to=(3, 3))))
    assert session.phase is Phase.CONFIRM
    texts = [c["text"] for c in session.view()["question"]["choices"]]
    assert texts == [
        "Red moved the ship 1 step, did nothing else and left their own ship on row 1, column 1",
        "Red moved the ship 1 step, did nothing else and put their own ship on row 4, column 4",
    ]
    record = session.confirm(1)
    assert record.turn.ship_to == (3, 3) and session.game.state.players[0].ship == (3, 3)


def test_the_host_can_correct_a_cell_and_the_read_is_judged_again() -> None:
    session = started()
    turn = Turn(1, TakeToBoard((0, 0), (2, 2), 90), drawn="middle-boat")
    session.observe(with_cell(table_after(session, turn), 1, (2, 2), UNKNOWN))
    verdict = session.correct(1, 2, 2, CellRead("water", 90, 1.0))
    assert session.game is not None and session.game.records[-1].turn == turn
    assert verdict is not None and session.question is None


def test_a_verdict_listener_may_call_back_into_the_session_from_another_thread() -> None:
    """Listeners are told after the lock is released: a listener that waits for another
    thread using the session (the web answering a phone) does not deadlock."""
    session = started()
    seen: list[tuple[str, int]] = []

    def listener(verdict: Verdict) -> None:
        worker = threading.Thread(
            target=lambda: seen.append((type(verdict).__name__, session.view()["version"]))
        )
        worker.start()
        worker.join(10)
        assert not worker.is_alive(), "the listener was called with the session locked"

    session.listeners.on_verdict.append(listener)
    turn = Turn(1, TakeToBoard((0, 0), (2, 2), 90), drawn="middle-boat")
    session.observe(with_cell(table_after(session, turn), 1, (2, 2), UNKNOWN))
    session.correct(1, 2, 2, CellRead("water", 90, 1.0))
    assert seen == [("Doubtful", seen[0][1]), ("Accepted", session.version)]


def test_undo_and_manual_play() -> None:
    session = started()
    session.play(Turn(2, Pass()))
    session.undo()
    assert session.game is not None and session.game.records == []
    assert [e["kind"] for e in session.view()["log"]] == ["setup", "turn", "undo"]


def test_the_log_says_why_the_final_round_starts() -> None:
    session = started()
    assert session.game is not None
    state = session.game.state
    state.stack.clear()
    state.display = [[None] * 4 for _ in range(4)]
    state.display[0][0] = "water"
    session.play(Turn(1, TakeToBoard((0, 0), (0, 0))))
    assert session.view()["log"][-1]["text"] == (
        "No tile can be taken any more: everybody else has one more turn."
    )


def test_subscribers_wake_on_every_change() -> None:
    session = started()
    sub = session.subscribe()
    first = sub.wait(0.1)
    assert first == session.version
    assert sub.wait(0.01) is None  # nothing new
    woke: list[int | None] = []
    thread = threading.Thread(target=lambda: woke.append(sub.wait(5)))
    thread.start()
    session.play(Turn(1, Pass()))
    thread.join(5)
    assert woke == [session.version]
    sub.close()
    assert session.subscriber_count == 0


def test_the_camera_status_reaches_the_view() -> None:
    session = started()
    session.set_camera("lost", "The camera sends no frames.")
    assert session.status == "problem"
    assert session.view()["camera"]["message"] == "The camera sends no frames."
    session.set_camera("ok", "Camera ready.", snapshot=b"\xff\xd8jpeg")
    assert session.camera.snapshot == b"\xff\xd8jpeg" and session.status == "ready"


def test_in_setup_a_read_is_kept_for_the_new_game_screen() -> None:
    session = Session()
    template = started()
    read = table_after(template, Turn(1, Pass()))
    assert session.observe(read) is None
    assert session.last_read == read
    display = [[c.tile if c and c.tile else None for c in row] for row in read.display]
    session.start_game([Seat("A", 1), Seat("B", 2)], display=display, ship=read.ship or 0)
    assert session.game is not None and session.game.state.display == display


def test_an_open_question_stays_open_when_its_answer_cannot_be_saved(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    session = Session(clock=lambda: 1000.0, journal=Journal(tmp_path))
    session.start_game(
        [Seat("Red", 1), Seat("Blue", 2)], start_player=1, ship=15, display=PLAIN_DISPLAY, seed=3
    )
    turn = Turn(1, TakeToBoard((0, 0), (2, 2), 90), drawn="middle-boat")
    doubtful = with_cell(table_after(session, turn), 1, (2, 2), UNKNOWN)
    session.observe(doubtful)
    question = session.question
    assert question is not None
    journal = session.journal
    assert journal is not None
    append = journal.append
    refuse: set[str] = {"turn"}

    def full(*events: dict[str, Any]) -> None:
        if refuse & {e["type"] for e in events}:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        append(*events)

    monkeypatch.setattr(journal, "append", full)
    with pytest.raises(StorageError):
        session.confirm(0)
    with pytest.raises(StorageError):
        session.correct(1, 2, 2, CellRead("water", 90, 1.0))  # its note is saved, its turn not
    assert session.question is question and session.game is not None
    assert not session.game.records
    refuse.add("log")
    with pytest.raises(StorageError):
        session.dismiss()
    assert session.question is question
    refuse.clear()
    session.dismiss()
    refuse.add("log")
    with pytest.raises(StorageError):
        session.observe(doubtful)
    assert session.question is None
