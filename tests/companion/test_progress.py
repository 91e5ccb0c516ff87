"""Progress on a terminal, nothing extra when piped (companion.progress; its users' commands
are tested in tests/app/)."""

from __future__ import annotations

import io

from companion.progress import Progress, terminal_progress


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
