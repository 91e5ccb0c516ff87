"""A new box's first learning, shown while it runs: on the terminal (a bar with the time left,
then what follows the steps) and, through the Session, on every phone (the banner says what
learns, how far it is and how long it will take). The learning is whatever
vision.reader.read.TableReader.prepare learns; it reports its steps through prepare's
progress callback, so what is learnt may change and the showing stays."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol, TextIO

from companion.progress import Learning, LearningWatch, terminal_learning
from companion.session import Session

#: What follows the learning's steps (fitting the cells' judge on the tables they drew) takes
#: about this share of the steps' time: a fifth to a third on the reference machine, idle or
#: loaded (docs/vision.md, "A new box's first read"). The estimate of the time left adds it.
AFTER_STEPS_SHARE = 0.25


class Learner(Protocol):
    """What learns a box's models (vision.reader.read.TableReader)."""

    pack: Any

    def prepare(self, progress: Callable[[int, int], None] | None = None) -> object:
        """Learn (or load) the models, reporting (done, total) steps."""
        ...


def learn_box(
    learner: Learner,
    session: Session | None = None,
    *,
    stream: TextIO | None = None,
    tick: float = 2.0,
) -> None:
    """Learn (or load from the cache) `learner`'s box now, showing the learning on `stream`
    (standard error, when it is a terminal) and on `session`'s pages. A box loaded from the
    cache shows nothing."""
    what = f"learning the tiles of {learner.pack.name}"
    listeners: list[Callable[[Learning | None], None]] = [terminal_learning(what, stream)]
    if session is not None:
        listeners.append(session.set_learning)
    watch = LearningWatch(
        what[0].upper() + what[1:], listeners, after_share=AFTER_STEPS_SHARE, tick=tick
    )
    watch.run(lambda: learner.prepare(watch))
