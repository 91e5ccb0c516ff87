"""Progress of a long command on a terminal: one line on standard error, rewritten in place.

Every command that works for more than a few seconds (learning a box's models, the headless
demo, the benchmarks, printing the kit, teaching) shows its progress this way when standard
error is a terminal, and prints nothing extra when it is piped or redirected, so its output
stays the same for scripts.
"""

from __future__ import annotations

import sys
import time
from typing import TextIO

WIDTH = 24


class Progress:
    """A bar (`show(done, total)`) or a note (`note(text)`) after a label, with the seconds
    since it began; `finish()` ends the line. Use `terminal_progress` to get one."""

    def __init__(self, what: str, stream: TextIO) -> None:
        self.what = what
        self.stream = stream
        self.start = time.monotonic()
        self._open = False

    def __call__(self, done: int, total: int) -> None:
        """Show `done` of `total` (a total of 0 or less: the count alone)."""
        if total > 0:
            bar = "#" * (WIDTH * min(done, total) // total)
            self._line(f"[{bar:<{WIDTH}}] {done}/{total}")
            if done >= total:
                self.finish()
        else:
            self._line(str(done))

    def note(self, text: str) -> None:
        """Show a short text where the bar would be."""
        self._line(text)

    def finish(self) -> None:
        """End the line, so what is printed next starts on its own."""
        if self._open:
            self.stream.write("\n")
            self.stream.flush()
            self._open = False

    def _line(self, text: str) -> None:
        seconds = time.monotonic() - self.start
        self.stream.write(f"\r\033[K{self.what} {text} {seconds:4.0f} s")
        self.stream.flush()
        self._open = True


def terminal_progress(what: str, stream: TextIO | None = None) -> Progress | None:
    """A Progress labelled `what` when `stream` (standard error) is a terminal, else None."""
    out = sys.stderr if stream is None else stream
    try:
        tty = out.isatty()
    except (AttributeError, ValueError):  # a closed or unusual stream: stay quiet
        tty = False
    return Progress(what, out) if tty else None
