"""`companion teach --out PACKDIR (--frames DIR [--lens K] | --camera FILE) [--batch 16]`:
teach the camera your own box.

The terminal side of vision.box.teach: it shows each step, takes the next picture from the frame
source and asks the player to confirm or correct what was seen. Pictures come from a folder
(one per step, in name order; a picture that cannot be used is skipped with a note) or from
the table's camera (`--camera` names the service's TOML file, whose [camera] table says
which camera: a picture is taken each time the player presses Enter). The host page of
`companion run` offers the same flow on a phone.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TextIO

import numpy as np

from app.cli import say_error
from app.read import FrameError, read_frame
from companion.catalogue import Catalogue, default_catalogue, load_catalogue, read_toml, shown
from companion.errors import CompanionError
from vision.box.teach import (
    BatchView,
    Cell,
    CellAnswer,
    PictureView,
    StepKind,
    TeachError,
    TeachSession,
    cell_name,
    check_out_dir,
    describe,
)
from vision.config import VisionConfig
from vision.reader.lens import Lens

FRAME_SUFFIXES = (".png", ".jpg", ".jpeg", ".bmp", ".tif", ".tiff", ".webp")
HELP = (
    "Enter keeps what is shown. Corrections, several per line: b1=7 (type 7), b1=7@90 "
    "(laid turned 90 degrees clockwise), b1=- (nothing there). 'again' takes the next "
    "picture instead, 'list' shows the types, 'stop' teaches no more tiles, 'q' quits "
    "without writing."
)
CORRECTION = re.compile(r"([a-d])([1-4])=(-|[a-z0-9-]+)(?:@(\d+))?")


class Cancelled(CompanionError):
    """The player quit: nothing is written."""


def configure(parser: argparse.ArgumentParser) -> None:
    """Add the arguments of `companion teach`."""
    parser.add_argument(
        "--out",
        metavar="PACKDIR",
        help="folder for the new tile pack (new, empty, or an earlier pack)",
    )
    parser.add_argument(
        "--frames", metavar="DIR", help="folder of pictures, one per step, taken in name order"
    )
    parser.add_argument(
        "--camera",
        metavar="FILE",
        help="take the pictures with the camera named in the [camera] table "
        "of this service TOML file (Enter takes each picture)",
    )
    parser.add_argument(
        "--plan",
        action="store_true",
        help="only list the steps (which tiles go where in each batch) and stop",
    )
    parser.add_argument(
        "--batch",
        type=int,
        default=16,
        metavar="N",
        help="tile types laid on the mat at a time, 1 to 16 (default 16)",
    )
    parser.add_argument("--name", default=None, help="the pack's name (default: PACKDIR's name)")
    parser.add_argument(
        "--atoll", action="store_true", help="also teach the board's atoll side (after the front)"
    )
    parser.add_argument(
        "--catalogue",
        default=None,
        metavar="TOML|PACKDIR",
        help="tile meanings to start from (default: the bundled box)",
    )
    parser.add_argument(
        "--tile-mm",
        type=float,
        default=None,
        metavar="MM",
        help="tile side the kit was printed for (default: the catalogue's)",
    )
    parser.add_argument(
        "--state-dir",
        metavar="DIR",
        default=None,
        help="the table's state directory: the taught cells are kept there as the first "
        "lessons of its judge (--camera takes the [table] state_dir of its file)",
    )
    parser.add_argument(
        "--lens",
        type=float,
        default=0.0,
        metavar="K",
        help="straighten each picture of --frames first: the camera's lens "
        "bends straight lines by K (`companion lens`; --camera takes its "
        "[camera] lens_k)",
    )


def frame_files(folder: str | Path) -> list[Path]:
    """The pictures in `folder`, in name order (numbers compared as numbers)."""
    root = Path(folder)
    if not root.is_dir():
        raise TeachError(f"{root}: no such folder of pictures")
    files = [p for p in root.iterdir() if p.is_file() and p.suffix.lower() in FRAME_SUFFIXES]
    if not files:
        raise TeachError(f"{root}: holds no pictures ({', '.join(FRAME_SUFFIXES)})")

    def key(p: Path) -> list[int | str]:
        return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", p.name.lower())]

    return sorted(files, key=key)


def _frames(
    files: list[Path], say: Callable[[str], None], lens: Lens
) -> Iterator[tuple[str, np.ndarray]]:
    max_pixels = VisionConfig().read.max_pixels
    for path in files:
        try:
            image = read_frame(path, max_pixels)
        except FrameError as exc:
            say(f"  {shown(path.name)}: {exc.problem}; skipped")
            continue
        yield path.name, lens.straighten(image)


def parse_corrections(text: str, catalogue: Catalogue) -> dict[Cell, CellAnswer | None]:
    """Read corrections such as "b1=7 c2=end-s-palm1@90 d4=-" (numbers as in `numbered`)."""
    ids = [t.id for t in catalogue]
    out: dict[Cell, CellAnswer | None] = {}
    for word in text.lower().replace(",", " ").split():
        m = CORRECTION.fullmatch(word)
        if m is None:
            raise TeachError(f"{word!r} is not a correction like b1=7, b1=7@90 or b1=-")
        col, row, what, turn = m.groups()
        cell = (int(row) - 1, "abcd".index(col))
        if what == "-":
            out[cell] = None
            continue
        if what.isdigit():
            number = int(what)
            if not 1 <= number <= len(ids):
                raise TeachError(f"there is no type {number}; 'list' shows 1 to {len(ids)}")
            tile_id = ids[number - 1]
        elif what in catalogue:
            tile_id = what
        else:
            raise TeachError(f"{what!r} is neither a type number nor a tile id")
        rotation = int(turn) if turn else 0
        if rotation not in (0, 90, 180, 270):
            raise TeachError(f"a tile lies turned 0, 90, 180 or 270 degrees, not {rotation}")
        out[cell] = CellAnswer(tile_id, rotation)
    return out


def numbered(catalogue: Catalogue, taught: set[str]) -> list[str]:
    """The catalogue's types as a numbered list, taught ones ticked."""
    return [
        f"{i:>3}{'*' if t.id in taught else ' '} {t.id:<22} {describe(t.meaning)}"
        for i, t in enumerate(catalogue, 1)
    ]


class Terminal:
    """Prompts on a text stream; answers from a line reader (input() by default)."""

    def __init__(self, ask: Callable[[str], str] = input, out: TextIO | None = None) -> None:
        self._ask = ask
        self.out = out or sys.stdout

    def say(self, text: str) -> None:
        print(text, file=self.out, flush=True)

    def ask(self, prompt: str) -> str:
        try:
            answer = self._ask(prompt).strip()
        except EOFError:
            raise TeachError(
                "the answers ended before teaching was finished; nothing was written"
            ) from None
        if answer.lower() in ("q", "quit"):
            raise Cancelled("teaching cancelled; nothing was written")
        return answer


def _number_of(catalogue: Catalogue, tile_id: str) -> int:
    return [t.id for t in catalogue].index(tile_id) + 1


def _show_batch(
    ui: Terminal, session: TeachSession, view: BatchView, pending: dict[Cell, CellAnswer | None]
) -> None:
    cat = session.catalogue
    for cell, cv in view.cells.items():
        answer = pending.get(cell, cv.suggestion)
        if answer is None and not cv.occupied:
            continue
        if answer is None:
            ui.say(f"  {cell_name(cell)}  (a tile is seen but left out)")
            continue
        turned = f", turned {answer.rotation}" if answer.rotation else ""
        ui.say(
            f"  {cell_name(cell)}  [{_number_of(cat, answer.tile_id):>2}] {answer.tile_id} "
            f"({describe(cat.meaning(answer.tile_id))}{turned})"
            + ("" if cv.occupied else "  <- the cell looks empty")
        )
    for warning in view.warnings:
        ui.say(f"  note: {warning}")


def _teach_batch(ui: Terminal, session: TeachSession, view: BatchView) -> bool:
    """Confirm one batch; False when the player stopped teaching tiles or asked for the
    picture again (the step stays)."""
    pending: dict[Cell, CellAnswer | None] = {}
    while True:
        _show_batch(ui, session, view, pending)
        answer = ui.ask("confirm (Enter), correct (b1=7 ...), 'again', 'list', 'stop' or 'q'> ")
        if answer.lower() == "again":
            return False
        if answer == "":
            try:
                session.accept(view, pending)
                return True
            except TeachError as exc:
                ui.say(f"  {exc.message}")
                continue
        if answer.lower() == "list":
            ui.say("\n".join(numbered(session.catalogue, set(session.taught))))
            continue
        if answer.lower() == "stop":
            session.stop_tiles()
            return False
        if answer in ("?", "help"):
            ui.say(HELP)
            continue
        try:
            pending.update(parse_corrections(answer, session.catalogue))
        except TeachError as exc:
            ui.say(f"  {exc.message}")


def camera_frames(camera: Any, ui: Terminal) -> Iterator[tuple[str, np.ndarray]]:
    """A picture from an open hardware.camera source each time the player presses Enter: its
    still (the Pi camera's full sensor), sharper than the frames a game is read from."""
    taken = 0
    while True:
        ui.ask("lay it out as shown, then press Enter to take the picture ('q' quits)> ")
        frame = camera.still()
        if frame is None:
            ui.say(f"  the camera gave no picture: {camera.status().message}")
            continue
        taken += 1
        yield f"camera {taken}", np.asarray(frame.image, np.uint8)


def teach(session: TeachSession, frames: Iterator[tuple[str, np.ndarray]], ui: Terminal) -> None:
    """Run the whole flow with pictures from `frames`; returns when every step is done
    (nothing written yet)."""
    ui.say(HELP)
    while (step := session.step).kind is not StepKind.DONE:
        ui.say("")
        if step.kind is StepKind.TILES:
            ui.say(str(session.progress))
        ui.say(step.instructions)
        for cell, tile_id in step.plan.items():
            ui.say(
                f"  {cell_name(cell)}  [{_number_of(session.catalogue, tile_id):>2}] {tile_id} "
                f"({describe(session.catalogue.meaning(tile_id))})"
            )
        if step.kind is StepKind.BOARD and step.side != "front":
            ui.say("  ('skip' leaves this side out)")
        view = _next_view(session, frames, ui)
        if isinstance(view, BatchView):
            _teach_batch(ui, session, view)
            continue
        _confirm_picture(ui, session, view)
    if session.missing:
        ui.say(
            f"{len(session.missing)} tile types were not taught and are left out: "
            + ", ".join(session.missing)
        )


def _next_view(
    session: TeachSession, frames: Iterator[tuple[str, np.ndarray]], ui: Terminal
) -> BatchView | PictureView:
    for name, image in frames:
        ui.say(f"picture {name}:")
        try:
            return session.look(image)
        except TeachError as exc:
            ui.say(f"  {exc.message}; trying the next picture")
    raise TeachError(
        f"no picture left for this step ({session.step.instructions}); nothing was written"
    )


def _confirm_picture(ui: Terminal, session: TeachSession, view: PictureView) -> None:
    w, h = view.size_mm
    if view.kind is StepKind.SHIP:
        ui.say(f"  the explorer ship, in a picture of {w:.0f} x {h:.0f} mm")
    else:
        ui.say(f"  the empty {view.side} board beside seat {view.seat}")
    for warning in view.warnings:
        ui.say(f"  note: {warning}")
    while True:
        answer = ui.ask("keep it (Enter), 'again' or 'q'> ")
        if answer == "":
            session.accept(view)
            return
        if answer.lower() == "again":
            return
        if answer.lower() == "skip" and view.kind is StepKind.BOARD:
            session.skip()
            return
        ui.say("  press Enter to keep this picture, 'again' for the next one, or q to quit")


def plan_lines(session: TeachSession) -> list[str]:
    """Every step in order, as if each batch is laid and confirmed as planned: one picture
    per step, so pictures can be taken ahead for --frames."""
    cat = session.catalogue
    ids = [t.id for t in cat]
    lines = []
    picture = 0
    for start in range(0, len(ids), session.batch_size):
        picture += 1
        lines.append(f"picture {picture}: batch {start // session.batch_size + 1}, upright:")
        for i, tile_id in enumerate(ids[start : start + session.batch_size]):
            cell = (i // 4, i % 4)
            lines.append(
                f"  {cell_name(cell)}  [{_number_of(cat, tile_id):>2}] {tile_id} "
                f"({describe(cat.meaning(tile_id))})"
            )
    picture += 1
    lines.append(
        f"picture {picture}: the explorer ship alone on the mat, in the north lane, bow east"
    )
    for side in session.board_sides:
        picture += 1
        lines.append(
            f"picture {picture}: an empty board, {side} side up, inside one seat's markers"
        )
    return lines


def run(args: argparse.Namespace, ui: Terminal | None = None) -> int:
    """Teach a box from a folder of pictures or the camera and write the pack."""
    ui = ui or Terminal()
    catalogue = load_catalogue(args.catalogue) if args.catalogue else default_catalogue()
    sides = ("front", "atoll") if args.atoll else ("front",)
    if args.plan:
        session = TeachSession(catalogue, batch=args.batch, board_sides=sides)
        ui.say("\n".join(plan_lines(session)))
        return 0
    if not args.out or bool(args.frames) == bool(args.camera):
        raise TeachError(
            "teaching needs --out PACKDIR and either --frames DIR or --camera FILE (or --plan)"
        )
    try:
        lens = Lens(args.lens)
    except ValueError as e:
        raise TeachError(f"--lens: {e}") from None
    if args.lens and args.camera:
        raise TeachError("--lens is for --frames: with --camera, set lens_k under [camera]")
    out = check_out_dir(args.out)
    files = frame_files(args.frames) if args.frames else []
    session = TeachSession(
        catalogue,
        name=args.name or out.absolute().name,
        batch=args.batch,
        board_sides=sides,
        tile_mm=args.tile_mm,
    )
    camera: Any = None
    state_dir = Path(args.state_dir) if args.state_dir else None
    try:
        if args.camera:
            from app.service import TableSettings
            from hardware.camera import open_camera
            from hardware.config import HardwareConfig

            config = read_toml(Path(args.camera))
            settings = HardwareConfig.from_mapping(config, args.camera)
            if state_dir is None:
                state_dir = TableSettings.from_mapping(config, args.camera).state_dir
            camera = open_camera(settings.camera)
            teach(session, camera_frames(camera, ui), ui)
        else:
            teach(session, _frames(files, ui.say, lens), ui)
    except Cancelled as exc:
        say_error(exc.message)
        return 1
    finally:
        if camera is not None:
            camera.close()
    session.write(out)
    draft = session.draft()
    ui.say(
        f"Tile pack written to {out}: {len(draft.tiles)} tile types, the explorer ship, "
        f"{' and '.join(sorted(draft.boards))} board."
    )
    if state_dir is not None and session.frames:
        ui.say(_keep_lessons(session, out, state_dir))
    return 0


def _keep_lessons(session: TeachSession, out: Path, state_dir: Path) -> str:
    """The taught frames' cells kept as the table's first lessons (vision.box.lessons); the
    sentence that says how it went (a lesson lost costs the game nothing)."""
    from vision.box.lessons import LESSONS_DIR, keep_teach_lessons

    try:
        kept = keep_teach_lessons(session.frames, out, state_dir / LESSONS_DIR)
    except (OSError, CompanionError) as exc:
        return f"The taught cells could not be kept as lessons ({exc})."
    return f"{kept} taught cells kept as lessons in {state_dir / LESSONS_DIR}."
