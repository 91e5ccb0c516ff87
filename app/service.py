"""`companion run`: the Pi service — camera, buttons, lights, the phone pages, the saved game.

Configured by one TOML file (see systemd/companion.toml for every key):

    [table]       pack (a tile pack directory), side, state_dir
    [web]         host, port, pin, name, ...      (web.settings.WebSettings)
    [camera]      kind, size, preview_size, ...    (hardware.config.CameraConfig)
    [buttons]     turn_done, undo, ...             (hardware.config.ButtonConfig)
    [indicators]  ready, reading, problem, buzzer  (hardware.config.IndicatorConfig)

The game in `state_dir` is resumed at its last confirmed turn; a damaged one is kept aside,
the service starts anyway and the host chooses on the host page between its last good turn
and a new game. Without GPIO (a laptop) the buttons and lights are left out and the page
still works; without a pack or a camera, turns are entered by taps. systemd hears READY=1
once the pages are served, and WATCHDOG=1 from the live loop while it is alive: while frames
arrive, or while it keeps reporting a lost camera.
"""

from __future__ import annotations

import argparse
import logging
import multiprocessing
import queue
import signal
import sys
import threading
from collections.abc import Callable, Mapping
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from app.learning import Learner, learn_box
from companion.catalogue import read_toml
from companion.errors import DataError
from companion.games.session import BoardSession, resume_board
from companion.journal import Journal, StorageError
from companion.session import Damage, Session

log = logging.getLogger("companion.run")
TABLES = ("table", "web", "camera", "buttons", "indicators")
DEFAULT_STATE_DIR = Path("/var/lib/maori-companion")
# The host logins ended by a logout, kept across restarts (web.auth.HostLogins).
ENDED_LOGINS_FILE = "ended-logins.json"
NO_PACK = "No tile pack yet: teach the box on the host page, or play by taps."


@dataclass(frozen=True, slots=True)
class TableSettings:
    """The [table] section."""

    pack: Path | None = None
    side: str = "front"
    state_dir: Path = DEFAULT_STATE_DIR

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any], source: str) -> TableSettings:
        table = data.get("table", {})
        if not isinstance(table, Mapping):
            raise DataError(source, "[table] must be a table")
        unknown = set(table) - {"pack", "side", "state_dir"}
        if unknown:
            raise DataError(source, f"[table] has an unknown key {sorted(unknown)[0]!r}")
        side = table.get("side", "front")
        if side not in ("front", "atoll"):
            raise DataError(source, f'table.side must be "front" or "atoll", not {side!r}')
        base = Path(source).parent
        pack = table.get("pack")
        state = table.get("state_dir", str(DEFAULT_STATE_DIR))
        for key, value in (("pack", pack), ("state_dir", state)):
            if value is not None and not isinstance(value, str):
                raise DataError(source, f"table.{key} must be a path")
        return cls(
            pack=None if pack is None else base / pack,
            side=side,
            state_dir=base / state,
        )


def load_config(path: Path) -> dict[str, Any]:
    """Read the service's TOML file; unknown tables are an error (a typo would be ignored)."""
    data = read_toml(path)
    unknown = set(data) - set(TABLES)
    if unknown:
        raise DataError(str(path), f"unknown table [{sorted(unknown)[0]}]; use {', '.join(TABLES)}")
    return data


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", required=True, metavar="FILE", help="the service's TOML file")
    parser.add_argument("-v", "--verbose", action="store_true", help="log more")


def run(args: argparse.Namespace) -> int:
    from app.memory import tune_allocator
    from hardware.buttons import TableButtons
    from hardware.camera import TableCamera, open_camera
    from hardware.config import GpioUnavailable, HardwareConfig
    from hardware.indicators import Indicators, NullIndicators
    from hardware.live import LiveTable
    from hardware.systemd import Notifier
    from web.app import create_app
    from web.serve import Server, announce
    from web.settings import WebSettings

    tune_allocator()  # before the threads and frames: glibc's arenas, big frames given back
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    path = Path(args.config)
    data = load_config(path)
    source = str(path)
    table = TableSettings.from_mapping(data, source)
    hardware = HardwareConfig.from_mapping(data, source)
    web_settings = WebSettings.from_mapping(data, source)
    pin_file: Path | None = None
    if web_settings.pin is None:
        # Made once and kept: never printed, for this output is the system journal.
        from app.hostpin import kept_pin

        pin, pin_file = kept_pin(table.state_dir)
        web_settings = replace(web_settings, pin=pin)

    pack = None
    catalogue = None
    pack_dir = table.pack or _latest_taught_pack(table.state_dir / "packs")
    if pack_dir is not None:
        from vision.box.pack import load_pack

        pack = load_pack(pack_dir)
        catalogue = pack.catalogue
        log.info("tile pack: %s", pack_dir)
    session = Session.resume(Journal(table.state_dir), catalogue)
    if session.damage is not None:
        _report_damage(session.damage)
    elif session.game is not None:
        log.info("resumed the saved game at turn %d", session.game.state.turn_number)

    events: queue.Queue[object] = queue.Queue()
    camera: Any = open_camera(hardware.camera)
    if pack is None:
        try:
            session.note("note", NO_PACK)
        except StorageError as exc:  # a full disk: the service starts all the same
            log.error("%s", exc.message)
    try:
        buttons: Any = TableButtons(hardware.buttons, events)
    except GpioUnavailable as exc:
        log.warning("no buttons: %s", exc.message)
        buttons = None
    try:
        indicators: Any = Indicators(hardware.indicators)
    except GpioUnavailable as exc:
        log.warning("no indicator lights: %s", exc.message)
        indicators = NullIndicators()

    lens_watch: Any = None
    if pack is not None:
        from vision.reader.lens import LensWatch

        lens_watch = LensWatch(
            pack.tile_mm, pack.catalogue.board(table.side), lens_k=hardware.camera.lens_k
        )

    reader: Any = _refuse_without_pack
    if pack is not None:
        from vision.box.lessons import LESSONS_DIR, CorrectionLessons, LessonBook
        from vision.reader.incremental import IncrementalReader

        book = LessonBook(table.state_dir / LESSONS_DIR, pack)
        lessons = book.load()
        corrections = CorrectionLessons(book, pack, side=table.side)
        session.listeners.on_correction.append(corrections.corrected)
        incremental = IncrementalReader(pack, side=table.side, lessons=lessons)
        if lessons is not None:
            if incremental.config.read.recogniser == "net":
                sampled = sum(c.sampled for c in lessons.cells)
                log.info(
                    "%d cells this table labelled join the cell network's calibration", sampled
                )
            else:
                log.info("%d cells this table labelled revise its judge", len(lessons))
        reader = _ServiceReader(incremental, lens_watch, session, corrections)
        if hardware.camera.kind != "none":  # without a camera no read ever wants them
            start_learning(incremental.tables, session)

    from vision.reader.motion import MotionGate

    notifier = Notifier()
    live = LiveTable(
        session,
        camera,
        reader,
        MotionGate(),
        events=events,
        indicators=indicators,
        notifier=notifier,
    )

    board = resume_board(table.state_dir)
    app = create_app(
        session,
        web_settings,
        board=board,
        keep_lessons=lambda frames, pack_dir: keep_taught_lessons(
            frames, pack_dir, table.state_dir
        ),
        teach_frames=None if hardware.camera.kind == "none" else teach_pictures(camera),
        teach_root=table.state_dir / "packs",
        ended_logins=table.state_dir / ENDED_LOGINS_FILE,
        camera=camera if isinstance(camera, TableCamera) else None,
    )
    server = Server(app, app.config["WEB_SETTINGS"])
    stop = threading.Event()

    def shutdown(*_: object) -> None:
        stop.set()
        threading.Thread(target=server.close, daemon=True).start()

    signal.signal(signal.SIGTERM, shutdown)
    loop = threading.Thread(target=live.run, args=(stop,), name="live", daemon=True)
    loop.start()
    announce(server, None, sys.stdout, pin_file=pin_file)
    notifier.ready(f"Serving the phone pages on port {server.port}")
    try:
        server.run()
    except KeyboardInterrupt:
        pass
    finally:
        notifier.stopping()
        stop.set()
        server.close()
        loop.join(timeout=5)
        _close(camera, reader, buttons, indicators, session, board)
    return 0


def _close(
    camera: Any, reader: Any, buttons: Any, indicators: Any, session: Session, board: BoardSession
) -> None:
    """Everything the service opened, once its loop has stopped: devices, the reader's
    workers, the games' journals."""
    camera.close()
    if isinstance(reader, _ServiceReader):
        reader.close()
    if buttons is not None:
        buttons.close()
    indicators.close()
    if session.journal is not None:
        session.journal.close()
    if board.journal is not None:
        board.journal.close()


def teach_pictures(camera: Any) -> Callable[[], Any]:
    """The pictures the host page's teaching takes: the camera's stills (the Pi camera's whole
    sensor at the table's focus and exposure), None while it gives none."""

    def take() -> Any:
        frame = camera.still()
        return None if frame is None else frame.image

    return take


def start_learning(learner: Learner, session: Session) -> threading.Thread:
    """The box's models learnt (or loaded from the cache) beside the serving, from the start:
    the phones show how far the learning is and the time left (app.learning), and the first
    read waits for it. A learning that fails is logged; the first read tries again."""

    def work() -> None:
        try:
            learn_box(learner, session)
        except Exception:
            log.exception("the box's models could not be learnt")

    thread = threading.Thread(target=work, name="learning", daemon=True)
    thread.start()
    return thread


def keep_taught_lessons(frames: list[Any], pack_dir: Path, state_dir: Path) -> None:
    """The taught frames' cells become the table's first lessons (vision.box.lessons), read in a
    process of its own beside the service (none of the live reader's pools, caches or
    memory are touched): the pack is in use from the next start."""
    from vision.box.lessons import LESSONS_DIR, keep_teach_lessons

    lessons_dir = state_dir / LESSONS_DIR

    def work() -> None:
        try:
            context = multiprocessing.get_context("spawn")
            with ProcessPoolExecutor(1, mp_context=context) as pool:
                kept = pool.submit(keep_teach_lessons, frames, pack_dir, lessons_dir).result()
            log.info("%d taught cells kept as lessons for %s", kept, pack_dir.name)
        except Exception:  # a lesson lost costs nothing the game needs
            log.exception("the taught frames' lessons could not be kept")

    threading.Thread(target=work, name="teach-lessons", daemon=True).start()


def _refuse_without_pack(image: Any) -> Any:
    raise DataError("", "No tile pack yet: teach the box on the host page first.")


class _ServiceReader:
    """The incremental reader (vision.reader.incremental); after each whole read, the lens watch
    says whether the markers ask for another lens_k; after each read, the corrections'
    lessons keep its matches and crops (a host's correction of one of its cells is a lesson)."""

    def __init__(self, reader: Any, lens_watch: Any, session: Session, corrections: Any) -> None:
        self.reader = reader
        self.lens_watch = lens_watch
        self.session = session
        self.corrections = corrections

    def __call__(self, image: Any) -> Any:
        return self.read_turn(image)

    def read_turn(self, image: Any, seats: Any = ()) -> Any:
        read = self.reader.read_turn(image, seats)
        self.corrections.seen(read, self.reader.matches, self.reader.crops)
        view = self.reader.view
        if self.reader.report.kind == "whole" and view is not None:
            hint = self.lens_watch.hint(view.markers, image.shape[1], image.shape[0])
            if hint is not None:
                log.warning("%s", hint)
                self.session.note("note", hint)
        return read

    def accepted(self) -> None:
        self.reader.accepted()

    def forget(self) -> None:
        self.reader.forget()

    def close(self) -> None:
        self.reader.close()


def _report_damage(damage: Damage) -> None:
    """One log line for a damaged journal: what is wrong, where the copy is, what is left."""
    kept = f"a copy is kept as {damage.kept}" if damage.kept else "no copy could be kept"
    if damage.turn_number is None:
        choice = "the host starts a new game on the host page"
    else:
        choice = (
            "the host chooses on the host page between going on after turn "
            f"{damage.turn_number}, the last good one, and a new game"
        )
    log.warning("the saved game is damaged: %s; %s; %s", damage.problem, kept, choice)


def _latest_taught_pack(root: Path) -> Path | None:
    """The most recently written pack under the service's packs folder (taught on a phone)."""
    try:
        packs = [p for p in root.iterdir() if (p / "pack.toml").is_file()]
    except OSError:
        return None
    return max(packs, key=lambda p: (p / "pack.toml").stat().st_mtime, default=None)
