"""Teaching a box from the phone: the host's side of vision.box.teach.TeachSession over /api/teach.

One teach run at a time lives in `app.extensions["companion_teach"]` (a `TeachStore`). The host
starts it, takes pictures with the table's camera (`frames`, given to create_app), confirms or
corrects each cell's tile type, skips what may be skipped and finishes by writing the pack into
a folder under the packs root (`root`); cancelling drops everything, nothing written. Every
change is a POST by the host with the CSRF token (the app's `require_host`); the run's state
and its pictures are the host's alone (a guest learns only whether a box is being taught).
Errors are one sentence: 400 a malformed request, 409 a request that does not fit the run as
it stands (no run, wrong step, a picture that cannot be used).
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import cv2
import numpy as np
from flask import Blueprint, Flask, Response, abort, current_app, jsonify

from companion.catalogue import Catalogue
from companion.errors import CompanionError, MalformedMove, NotNow, StorageError
from vision.box.teach import (
    CELLS,
    BatchView,
    Cell,
    CellAnswer,
    PictureView,
    StepKind,
    TeachError,
    TeachSession,
    cell_name,
    describe,
)
from web.api.common import ERROR_SENTENCES, ApiError

FrameSource = Callable[[], np.ndarray | None]
EXTENSION = "companion_teach"
#: A pack folder's name under the packs root.
OUT_NAME = re.compile(r"[a-z0-9-]+")
MAX_OUT_NAME = 64
MAX_PACK_NAME = 40
#: Side of a tile crop sent to the phone, and the longest side of a ship or board picture.
CROP_PX = 128
PICTURE_MAX_PX = 480

log = logging.getLogger(__name__)
bp = Blueprint("teach", __name__, url_prefix="/api/teach")


@dataclass
class TeachStore:
    """The one teach run of an app, and what it needs from the app."""

    catalogue: Callable[[], Catalogue]
    frames: FrameSource | None
    root: Path | None
    require_host: Callable[[], None]
    is_host: Callable[[], bool]
    read_body: Callable[[], dict[str, Any]]
    # Called when teaching starts: the camera's one autofocus cycle for the mat.
    prepare: Callable[[], None] | None = None
    # Called with the taught frames and the pack's folder once a pack is written: they
    # become the table's first lessons (vision.box.lessons).
    keep_lessons: Callable[[list[Any], Path], None] | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)
    session: TeachSession | None = None
    view: BatchView | PictureView | None = None
    looks: int = 0  # pictures taken, so the phone never shows an old crop from its cache
    crops: dict[int, bytes] = field(default_factory=dict)  # 0..15 cells, 16 the picture
    why_not: str | None = None  # the app's own reason when it has no frames to teach with

    @property
    def available(self) -> bool:
        return self.unavailable is None

    @property
    def unavailable(self) -> str | None:
        """Why teaching cannot start here (one sentence), or None when it can."""
        if self.frames is None:
            return self.why_not or "This companion was started without a camera to teach with."
        if self.root is None:
            return "This companion was started without a folder to keep tile packs in."
        return None

    def running(self) -> TeachSession:
        if self.session is None:
            raise NotNow("No box is being taught: start teaching first.")
        return self.session

    def drop_view(self) -> None:
        self.view = None
        self.crops = {}

    def reset(self) -> None:
        self.session = None
        self.drop_view()


def register(
    app: Flask,
    *,
    catalogue: Callable[[], Catalogue],
    require_host: Callable[[], None],
    is_host: Callable[[], bool],
    read_body: Callable[[], dict[str, Any]],
    frames: FrameSource | None,
    root: Path | None,
    why_not: str | None = None,
    prepare: Callable[[], None] | None = None,
    keep_lessons: Callable[[list[Any], Path], None] | None = None,
) -> TeachStore:
    """Add the teach routes to `app` around a new store (kept in app.extensions); `why_not`
    says why an app without `frames` cannot teach."""
    store = TeachStore(
        catalogue, frames, root, require_host, is_host, read_body, prepare, keep_lessons
    )
    store.why_not = why_not
    app.extensions[EXTENSION] = store
    app.register_blueprint(bp)
    return store


def _store() -> TeachStore:
    store: TeachStore = current_app.extensions[EXTENSION]
    return store


def _change() -> TeachStore:
    """The store, for a change by the host (401/403 otherwise)."""
    store = _store()
    store.require_host()
    return store


def _read() -> TeachStore:
    store = _store()
    if not store.is_host():
        raise ApiError(401, ERROR_SENTENCES[401])
    return store


# ------------------------------------------------------------------ checking bodies


def _text(body: dict[str, Any], key: str, default: str, longest: int) -> str:
    value = body.get(key, default)
    if not isinstance(value, str) or not value.strip() or len(value.strip()) > longest:
        raise MalformedMove(f"{key} must be text of 1 to {longest} letters.")
    return value.strip()


def _whole(value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise MalformedMove(f"{what} must be a whole number.")
    return value


def _cell(value: Any) -> Cell:
    """A display cell from its number 0..15 (row by row from the north-west) or name "b3"."""
    if isinstance(value, str):
        for cell in CELLS:
            if cell_name(cell) == value.lower():
                return cell
    elif not isinstance(value, bool) and isinstance(value, int) and 0 <= value < len(CELLS):
        return CELLS[value]
    raise MalformedMove("cell must be a display cell number from 0 to 15 or a name like b3.")


def parse_answers(data: Any, catalogue: Catalogue) -> dict[Cell, CellAnswer | None]:
    """The host's answers: [{cell, tile_id, rotation}]; a null tile_id means nothing there."""
    if data is None:
        return {}
    if not isinstance(data, list) or len(data) > len(CELLS):
        raise MalformedMove("answers must be a list of at most 16 cells.")
    out: dict[Cell, CellAnswer | None] = {}
    for entry in data:
        if not isinstance(entry, dict):
            raise MalformedMove("each answer must be a JSON object.")
        cell = _cell(entry.get("cell"))
        if cell in out:
            raise MalformedMove(f"{cell_name(cell)} is answered twice.")
        tile_id = entry.get("tile_id")
        if tile_id is None:
            out[cell] = None
            continue
        if not isinstance(tile_id, str) or tile_id not in catalogue:
            raise MalformedMove(
                f"{cell_name(cell)}: there is no tile type {tile_id!r} in this box."
            )
        rotation = _whole(entry.get("rotation", 0), "rotation")
        if rotation not in (0, 90, 180, 270):
            raise MalformedMove("A tile lies turned 0, 90, 180 or 270 degrees.")
        out[cell] = CellAnswer(tile_id, rotation)
    return out


def pack_folder(root: Path, name: Any) -> Path:
    """The folder `name` directly under `root`; any other name is refused."""
    if not isinstance(name, str) or len(name) > MAX_OUT_NAME or not OUT_NAME.fullmatch(name):
        raise MalformedMove(
            f"out must be a folder name of 1 to {MAX_OUT_NAME} small letters, digits and dashes."
        )
    base = root.resolve()
    out = (base / name).resolve()
    if out.parent != base:  # a symlink planted under the root cannot lead elsewhere
        raise MalformedMove("out must be a folder directly inside the packs folder.")
    return out


# ------------------------------------------------------------------ pictures


def _png(image: np.ndarray, longest: int) -> bytes:
    h, w = image.shape[:2]
    scale = longest / max(h, w)
    if scale < 1:
        size = (max(1, round(w * scale)), max(1, round(h * scale)))
        image = cv2.resize(image, size, interpolation=cv2.INTER_AREA)
    ok, data = cv2.imencode(".png", image)
    if not ok:  # pragma: no cover - a uint8 picture always encodes
        raise TeachError("the picture could not be encoded")
    return bytes(data.tobytes())


def _crops(view: BatchView | PictureView) -> dict[int, bytes]:
    if isinstance(view, BatchView):
        return {CELLS.index(cell): _png(cv.picture, CROP_PX) for cell, cv in view.cells.items()}
    return {len(CELLS): _png(view.picture, PICTURE_MAX_PX)}


# ------------------------------------------------------------------ the state


def _type_json(catalogue: Catalogue, tile_id: str) -> dict[str, str]:
    return {"tile_id": tile_id, "description": describe(catalogue.meaning(tile_id))}


def state_json(store: TeachStore) -> dict[str, Any]:
    """What the phone shows: the step, progress, the current picture and the types to pick."""
    session = store.session
    out: dict[str, Any] = {
        "available": store.available,
        "unavailable": store.unavailable,
        "active": session is not None,
    }
    if session is None:
        return out
    cat = session.catalogue
    step = session.step
    out["name"] = session.name
    out["progress"] = str(session.progress)
    out["taught"], out["total"] = len(session.taught), len(cat.types)
    out["step"] = {
        "kind": step.kind.value,
        "instructions": step.instructions,
        "batch": step.batch,
        "side": step.side,
        "plan": [
            {"cell": CELLS.index(c), "name": cell_name(c), **_type_json(cat, t)}
            for c, t in step.plan.items()
        ],
        "can_skip": (step.kind is StepKind.TILES and bool(session.taught))
        or (step.kind is StepKind.BOARD and step.side != "front"),
    }
    out["types"] = [_type_json(cat, t.id) for t in cat]
    out["view"] = _view_json(store, cat)
    return out


def _view_json(store: TeachStore, cat: Catalogue) -> dict[str, Any] | None:
    view = store.view
    if view is None:
        return None
    if isinstance(view, PictureView):
        return {
            "kind": view.kind.value,
            "picture": f"/api/teach/crop/{len(CELLS)}.png?v={store.looks}",
            "size_mm": [round(v, 1) for v in view.size_mm],
            "side": view.side,
            "seat": view.seat,
            "warnings": list(view.warnings),
        }
    cells = []
    for cell, cv in view.cells.items():
        n = CELLS.index(cell)
        suggestion = cv.suggestion
        cells.append(
            {
                "cell": n,
                "name": cell_name(cell),
                "occupied": cv.occupied,
                "found": cv.found,
                "again": cv.again,
                "crop": f"/api/teach/crop/{n}.png?v={store.looks}",
                "suggestion": None
                if suggestion is None
                else {**_type_json(cat, suggestion.tile_id), "rotation": suggestion.rotation},
            }
        )
    return {"kind": "tiles", "batch": view.batch, "cells": cells, "warnings": list(view.warnings)}


# ------------------------------------------------------------------ routes


@bp.get("/state")
def state() -> Response:
    """The whole run for the host; a guest learns only whether a box is being taught."""
    store = _store()
    with store.lock:
        data = state_json(store)
    if not store.is_host():
        data = {key: data[key] for key in ("available", "unavailable", "active")}
    return jsonify(data)


@bp.get("/crop/<int:n>.png")
def crop(n: int) -> Response:
    store = _read()
    with store.lock:
        data = store.crops.get(n)
    if data is None:
        abort(404)  # no picture taken, or not that cell
    return Response(data, mimetype="image/png")


@bp.post("/start")
def start() -> Response:
    store = _change()
    body = store.read_body()
    name = _text(body, "name", "my box", MAX_PACK_NAME)
    batch = _whole(body.get("batch", 16), "batch")
    if not 1 <= batch <= 16:
        raise MalformedMove("batch must be a number of tiles from 1 to 16.")
    atoll = body.get("atoll", False)
    if not isinstance(atoll, bool):
        raise MalformedMove("atoll must be true or false.")
    with store.lock:
        if store.unavailable is not None:
            raise NotNow(store.unavailable)
        if store.session is not None:
            raise NotNow("A box is being taught already: finish or cancel it first.")
        sides = ("front", "atoll") if atoll else ("front",)
        try:
            store.session = TeachSession(
                store.catalogue(), name=name, batch=batch, board_sides=sides
            )
        except CompanionError as exc:  # e.g. a box without an atoll side
            raise NotNow(_sentence(exc.message)) from None
        store.drop_view()
        if store.prepare is not None:
            store.prepare()
        return jsonify({"ok": True, "text": store.session.step.instructions})


@bp.post("/look")
def look() -> Response:
    store = _change()
    with store.lock:
        session = store.running()
        if session.step.kind is StepKind.DONE:
            raise NotNow("Everything is taught: finish to write the pack.")
        assert store.frames is not None  # start checks availability
        frame = store.frames()
        if frame is None:
            raise NotNow("The camera gave no picture: try again.")
        try:
            view = session.look(frame)
        except TeachError as exc:
            raise NotNow(_sentence(exc.message)) from None
        store.view = view
        store.looks += 1
        store.crops = _crops(view)
        text = "; ".join(view.warnings) if view.warnings else "Picture taken: check each cell."
        return jsonify({"ok": True, "text": _sentence(text)})


@bp.post("/accept")
def accept() -> Response:
    store = _change()
    body = store.read_body()
    with store.lock:
        session = store.running()
        view = store.view
        if view is None:
            raise NotNow("Take a picture first.")
        answers = parse_answers(body.get("answers"), session.catalogue)
        if answers and not isinstance(view, BatchView):
            raise MalformedMove("Only a picture of tiles takes answers.")
        try:
            session.accept(view, answers)
        except TeachError as exc:
            raise NotNow(_sentence(exc.message)) from None
        store.drop_view()
        return jsonify({"ok": True, "text": str(session.progress) + "."})


@bp.post("/skip")
def skip() -> Response:
    """Teach no more tiles (tile step), or leave out an optional board side."""
    store = _change()
    with store.lock:
        session = store.running()
        step = session.step
        try:
            if step.kind is StepKind.TILES:
                session.stop_tiles()
            else:
                session.skip()
        except TeachError as exc:
            raise NotNow(_sentence(exc.message)) from None
        store.drop_view()
        return jsonify({"ok": True, "text": session.step.instructions})


@bp.post("/finish")
def finish() -> Response:
    store = _change()
    body = store.read_body()
    with store.lock:
        session = store.running()
        assert store.root is not None  # start checks availability
        out = pack_folder(store.root, body.get("out"))
        try:
            out.parent.mkdir(parents=True, exist_ok=True)
            session.write(out)
        except TeachError as exc:
            raise NotNow(_sentence(exc.message.replace(str(out), out.name))) from None
        except OSError:
            raise StorageError("The pack could not be written to the packs folder.") from None
        tiles = len(session.taught)
        store.reset()
        if store.keep_lessons is not None and session.frames:
            store.keep_lessons(session.frames, out)
        return jsonify(
            {
                "ok": True,
                "out": out.name,
                "text": f"Tile pack {out.name} written: {tiles} tile types.",
            }
        )


@bp.post("/cancel")
def cancel() -> Response:
    store = _change()
    with store.lock:
        store.reset()
    return jsonify({"ok": True, "text": "Teaching cancelled; nothing was written."})


def _sentence(text: str) -> str:
    """vision.box.teach's messages as the page's sentences: capitalised, with a full stop."""
    text = text.strip()
    if not text:
        return text
    text = text[0].upper() + text[1:]
    return text if text.endswith((".", "!", "?")) else text + "."
