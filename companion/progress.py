"""Progress of a long command on a terminal: one line on standard error, rewritten in place.

Every command that works for more than a few seconds (learning a box's models, the headless
demo, the benchmarks, printing the kit, teaching) shows its progress this way when standard
error is a terminal, and prints nothing extra when it is piped or redirected, so its output
stays the same for scripts. Worker processes show nothing of their own: one line a terminal.
"""

from __future__ import annotations

import multiprocessing
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TextIO, TypeVar

T = TypeVar("T")

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
            self._line(bar(done, total))
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
    """A Progress labelled `what` when `stream` (standard error) is a terminal, else None.
    A worker process (multiprocessing's) shows none: the terminal it shares has one line,
    its main process's, which counts the workers' part."""
    if multiprocessing.parent_process() is not None:
        return None
    out = sys.stderr if stream is None else stream
    try:
        tty = out.isatty()
    except (AttributeError, ValueError):  # a closed or unusual stream: stay quiet
        tty = False
    return Progress(what, out) if tty else None


def bar(done: int, total: int) -> str:
    """`done` of `total` as a bar and the count: "[######      ] 12/24"."""
    filled = "#" * (WIDTH * min(max(done, 0), total) // total) if total > 0 else ""
    return f"[{filled:<{WIDTH}}] {done}/{total}"


def duration(seconds: float) -> str:
    """A time left as a person says it: "about 40 s", "about 3 min"."""
    if seconds < 90:
        return f"about {max(5, 5 * round(seconds / 5))} s"
    return f"about {round(seconds / 60)} min"


@dataclass(frozen=True, slots=True)
class Learning:
    """How far a long piece of learning is: what learns, `done` steps of `total` (a total of 0:
    the steps are over, what follows them is under way), the seconds since it began and an
    estimate of the seconds left (None: not known yet, or already past the estimate)."""

    what: str
    done: int
    total: int
    seconds: float
    left: float | None

    def sentence(self) -> str:
        """One line for a terminal or a page: what, how far, how long still."""
        how_far = f"{self.done} of {self.total} steps" if self.total else "finishing"
        if self.left is not None:
            left = f"{duration(self.left)} left"
        elif self.total:
            left = "the time left is not known yet"
        else:
            left = "taking longer than estimated"
        return f"{self.what}: {how_far}, {left}"

    def to_json(self) -> dict[str, Any]:
        return {
            "what": self.what,
            "done": self.done,
            "total": self.total,
            "seconds": round(self.seconds, 1),
            "left": None if self.left is None else round(self.left),
            "sentence": self.sentence(),
        }


class LearningWatch:
    """Follows a long piece of learning that reports (done, total) steps (the callback of
    vision.reader.read.TableReader.prepare) and tells `listeners` a Learning every `tick`
    seconds while it runs, and None once it is over.

    The time left is the steps' pace times the steps left, plus what follows the last step:
    `after_share` of the steps' whole time (the fitting of what the steps drew). Nothing is
    told before the first step is reported: a piece of learning that is loaded rather than
    learnt is never shown."""

    def __init__(
        self,
        what: str,
        listeners: Sequence[Callable[[Learning | None], None]],
        *,
        after_share: float = 0.0,
        tick: float = 2.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.what = what
        self.listeners = list(listeners)
        self.after_share = after_share
        self.tick = tick
        self.clock = clock
        self._lock = threading.Lock()
        self._begun: float | None = None  # when the learning first reported
        # The first step seen done and when: the pace is taken from there on (what comes
        # before it, such as starting worker processes, is not a step's time).
        self._first: tuple[int, float] | None = None
        self._steps_over: float | None = None  # when the last step was done
        self._done = 0
        self._total = 0
        self._shown = False

    def __call__(self, done: int, total: int) -> None:
        """The learning's own report: `done` steps of `total`."""
        now = self.clock()
        with self._lock:
            if self._begun is None:
                self._begun = now
            if done > 0 and self._first is None:
                self._first = (done, now)
            self._done, self._total = done, total
            if total > 0 and done >= total and self._steps_over is None:
                self._steps_over = now
        self._tell()

    def now(self) -> Learning | None:
        """Where the learning stands (None before its first report)."""
        now = self.clock()
        with self._lock:
            if self._begun is None:
                return None
            done, total, first = self._done, self._total, self._first
            over = self._steps_over
        left: float | None = None
        pace = None
        if first is not None and done > first[0]:
            pace = ((over if over is not None else now) - first[1]) / (done - first[0])
        if over is not None:
            after = self.after_share * pace * total - (now - over) if pace is not None else 0.0
            left = after if after > 0 else None
            done = total = 0
        elif pace is not None and total > 0:
            left = pace * (total - done) + self.after_share * pace * total
        return Learning(self.what, done, total, now - self._begun, left)

    def _tell(self) -> None:
        learning = self.now()
        if learning is None:
            return
        self._shown = True
        for listener in self.listeners:
            listener(learning)

    def run(self, work: Callable[[], T]) -> T:
        """`work()`, told about every `tick` seconds while it runs and, if it was shown, None
        once it is over (or failed)."""
        stop = threading.Event()

        def ticking() -> None:
            while not stop.wait(self.tick):
                self._tell()

        thread = threading.Thread(target=ticking, name="learning-watch", daemon=True)
        thread.start()
        try:
            return work()
        finally:
            stop.set()
            thread.join()
            if self._shown:
                for listener in self.listeners:
                    listener(None)


def terminal_learning(what: str, stream: TextIO | None = None) -> Callable[[Learning | None], None]:
    """A LearningWatch listener that shows the learning on one line of a terminal (none when
    `stream`, standard error by default, is not one): the bar with the time left, then what
    follows the steps; the line ends when the learning is over."""
    shown = terminal_progress(what, stream)

    def show(learning: Learning | None) -> None:
        if shown is None:
            return
        if learning is None:
            shown.finish()
            return
        if learning.total:
            left = "" if learning.left is None else f", {duration(learning.left)} left"
            shown.note(f"{bar(learning.done, learning.total)}{left}")
        else:
            left = "" if learning.left is None else f", {duration(learning.left)} left"
            shown.note(f"finishing what the steps drew{left}")

    return show
