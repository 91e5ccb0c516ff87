"""Progress on a terminal, nothing extra when piped (companion.progress; its users' commands
are tested in tests/app/)."""

from __future__ import annotations

import io
import multiprocessing
import time
from concurrent.futures import ProcessPoolExecutor

import pytest

from companion.progress import (
    Learning,
    LearningWatch,
    Progress,
    terminal_learning,
    terminal_progress,
)


class FakeTerminal(io.StringIO):
    """Standard error as a terminal would be: it says it is one."""

    def isatty(self) -> bool:
        return True


def test_a_piped_stream_gets_no_progress() -> None:
    assert terminal_progress("learning", io.StringIO()) is None


def test_a_closed_stream_gets_no_progress() -> None:
    stream = io.StringIO()
    stream.close()
    assert terminal_progress("learning", stream) is None


def _shown_in_this_process() -> bool:
    return terminal_progress("learning the ship", FakeTerminal()) is not None


def test_a_worker_process_shows_no_line_of_its_own_on_the_terminal() -> None:
    """The box's learning draws its tables in worker processes (vision.box.learning), which
    learn the ship model themselves: their lines would take turns with the learning's bar."""
    assert _shown_in_this_process()
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(1, mp_context=context) as pool:
        assert pool.submit(_shown_in_this_process).result() is False


def test_a_terminal_sees_the_bar_redrawn_in_place_and_the_line_ended() -> None:
    terminal = FakeTerminal()
    shown = terminal_progress("learning lagoon", terminal)
    assert isinstance(shown, Progress)
    shown(1, 4)
    shown(4, 4)
    text = terminal.getvalue()
    assert text.count("\r") == 2
    assert "learning lagoon [######                  ] 1/4" in text
    assert "[########################] 4/4" in text
    assert text.endswith("\n")


def test_a_note_shows_its_text_and_finish_ends_the_line_once() -> None:
    terminal = FakeTerminal()
    shown = terminal_progress("playing:", terminal)
    assert shown is not None
    shown.note("turn 3, 40 tiles left in the stack")
    shown.finish()
    shown.finish()
    text = terminal.getvalue()
    assert "playing: turn 3, 40 tiles left in the stack" in text
    assert text.count("\n") == 1


def test_a_count_without_a_total_is_shown_alone() -> None:
    terminal = FakeTerminal()
    shown = terminal_progress("reading", terminal)
    assert shown is not None
    shown(7, 0)
    assert "reading 7 " in terminal.getvalue()


class Clock:
    """A clock the test moves."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_learning_tells_how_far_and_how_long_still_then_what_follows_the_steps() -> None:
    clock = Clock()
    told: list[Learning | None] = []
    watch = LearningWatch("Learning", [told.append], after_share=0.25, clock=clock)
    assert watch.now() is None  # nothing reported: nothing to show
    watch(0, 10)
    assert told[-1] is not None and told[-1].left is None  # no step done: no pace yet
    clock.now += 30.0  # starting up, not a step's time
    watch(1, 10)
    clock.now += 8.0
    watch(5, 10)  # 2 s a step: 5 steps left, then a quarter of the 20 s of steps
    last = told[-1]
    assert last is not None and (last.done, last.total) == (5, 10)
    assert last.left == pytest.approx(2.0 * 5 + 0.25 * 2.0 * 10)
    assert last.seconds == pytest.approx(38.0)
    assert last.sentence() == "Learning: 5 of 10 steps, about 15 s left"
    clock.now += 10.0
    watch(10, 10)
    clock.now += 2.0
    after = watch.now()
    assert after is not None and after.total == 0
    assert after.left == pytest.approx(0.25 * 20.0 - 2.0)
    assert after.sentence() == "Learning: finishing, about 5 s left"
    clock.now += 60.0
    late = watch.now()
    assert (
        late is not None and late.sentence() == "Learning: finishing, taking longer than estimated"
    )
    assert late.to_json()["sentence"] == late.sentence()


def test_learning_is_told_while_it_runs_and_its_end_once_it_is_over() -> None:
    told: list[Learning | None] = []
    watch = LearningWatch("Learning", [told.append], tick=0.01)

    def work() -> str:
        watch(0, 2)
        watch(1, 2)
        watch(2, 2)
        # What follows the steps: the watch keeps telling (waited for, up to a deadline).
        steps = len(told)
        deadline = time.monotonic() + 5.0
        while len(told) <= steps and time.monotonic() < deadline:
            time.sleep(0.01)
        return "models"

    assert watch.run(work) == "models"
    assert told[-1] is None
    during = [t for t in told if t is not None]
    assert len(during) > 3 and during[-1].total == 0


def test_learning_loaded_rather_than_learnt_is_never_shown() -> None:
    told: list[Learning | None] = []
    watch = LearningWatch("Learning", [told.append], tick=0.01)
    watch.run(lambda: time.sleep(0.05))
    assert told == []


def test_a_terminal_sees_the_learning_with_the_time_left_then_its_line_ended() -> None:
    terminal = FakeTerminal()
    show = terminal_learning("learning lagoon", terminal)
    show(Learning("Learning lagoon", 3, 12, 20.0, 75.0))
    show(Learning("Learning lagoon", 0, 0, 60.0, 10.0))
    show(Learning("Learning lagoon", 0, 0, 90.0, None))
    show(None)
    lines = terminal.getvalue().split("\r")
    assert "[######                  ] 3/12, about 75 s left" in lines[1]
    assert "finishing what the steps drew, about 10 s left" in lines[2]
    assert lines[3].startswith("\033[Klearning lagoon finishing what the steps drew ")
    assert terminal.getvalue().endswith("\n")
    assert terminal_learning("learning", io.StringIO()) is not None  # a listener, silent
