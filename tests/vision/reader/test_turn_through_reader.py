"""A turn end to end: rendered frames of the table go through `read_table`, the turn tracker
and the Session, which records a legal turn, refuses an illegal one and asks about a doubtful
one (a hand over the cell that changed) until the host answers."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest

from companion.actions import TakeToBoard, Turn
from companion.game import Seat
from companion.rules import Rules
from companion.session import Session
from companion.state import GameState, Placed
from companion.tracker import Accepted, Doubtful, Refused
from vision import kit
from vision.box.pack import Pack
from vision.reader.read import read_table
from vision.synthetic import render_config as cfg
from vision.synthetic.render import CameraSpec, Effects, render_table
from vision.synthetic.scene import Clutter, TableScene, area_to_table
from vision.synthetic.table_scene import scene_for_state

SEATS = [Seat("Aroha", 1), Seat("Tama", 2)]
#: Games (by setup seed) whose first turn is played on the rendered table.
SEEDS = (3, 5)


def game_and_session(pack: Pack, seed: int) -> tuple[GameState, Rules, Session]:
    session = Session(pack.catalogue)
    session.start_game(SEATS, seed=seed)
    assert session.game is not None
    world = session.game.state.copy()
    return world, session.game.rules, session


def a_take_to_board(rules: Rules, state: GameState, *, palms: bool) -> Turn:
    """A legal turn that lays a display tile on the board (a palm tile when `palms`)."""
    meaning = state.catalogue.meaning
    turns = [
        t
        for t in rules.legal_turns(state)
        if isinstance(t.action, TakeToBoard)
        and (meaning(state.display[t.action.slot[0]][t.action.slot[1]] or "").palms > 0) == palms
    ]
    assert turns
    return turns[len(turns) // 2]


def after(rules: Rules, state: GameState, turn: Turn) -> GameState:
    out = state.copy()
    rules.apply(out, turn)
    return out


def frame(pack: Pack, scene: TableScene, seed: int) -> np.ndarray:
    rendered = render_table(
        scene, pack, CameraSpec.overhead(), Effects.easy(), np.random.default_rng(seed)
    )
    image: np.ndarray = rendered.image
    return image


def hand_over_cell(
    scene: TableScene, state: GameState, seat: int, cell: tuple[int, int]
) -> TableScene:
    """The scene with a hand resting on one board cell, its arm from behind that seat."""
    s = scene.seat(seat)
    layout = state.layout
    geometry = kit.SeatGeometry(seat, layout.rows, layout.cols, state.catalogue.tile_mm)
    at = area_to_table(geometry.cell_centre(*cell), s.origin_mm, s.facing_deg)
    behind = area_to_table((0.0, 450.0), s.origin_mm, s.facing_deg)
    angle = math.degrees(math.atan2(at[1] - behind[1], at[0] - behind[0]))
    hand = Clutter("hand", at, 90.0, angle, cfg.SKIN_BGR[1], behind)
    return replace(scene, clutter=(*scene.clutter, hand))


def log_kinds(session: Session) -> list[str]:
    return [entry["kind"] for entry in session.view()["log"]]


@pytest.mark.slow
@pytest.mark.parametrize("seed", SEEDS)
def test_a_legal_turn_seen_by_the_camera_is_recorded(pack_lagoon: Pack, seed: int) -> None:
    world, rules, session = game_and_session(pack_lagoon, seed)
    turn = a_take_to_board(rules, world, palms=False)
    played = after(rules, world, turn)
    read = read_table(frame(pack_lagoon, scene_for_state(played), seed), pack_lagoon)
    verdict = session.observe(read)
    assert isinstance(verdict, Accepted)
    assert verdict.turn.action == turn.action and verdict.turn.steps == turn.steps
    assert session.game is not None
    assert len(session.game.records) == 1
    assert session.game.state.to_json() == played.to_json()
    assert session.question is None
    assert log_kinds(session)[-1] == "turn"


@pytest.mark.slow
@pytest.mark.parametrize("seed", SEEDS)
def test_a_palm_laid_sideways_seen_by_the_camera_is_refused(pack_lagoon: Pack, seed: int) -> None:
    world, rules, session = game_and_session(pack_lagoon, seed)
    turn = a_take_to_board(rules, world, palms=True)
    assert isinstance(turn.action, TakeToBoard)
    played = after(rules, world, turn)
    r, c = turn.action.cell
    mover = played.players[world.to_move]
    board = mover.board[r][c]
    assert board is not None
    mover.board[r][c] = Placed(board.tile, 90)  # the palms point sideways
    read = read_table(frame(pack_lagoon, scene_for_state(played), seed), pack_lagoon)
    before = session.view()["game"]
    verdict = session.observe(read)
    assert isinstance(verdict, Refused), verdict
    assert verdict.reason == "Palms must point to their owner: lay the tile upright."
    assert session.game is not None and session.game.records == []
    assert session.view()["game"] == before
    assert log_kinds(session)[-1] == "refused"


@pytest.mark.slow
@pytest.mark.parametrize("seed", SEEDS)
def test_a_hand_over_the_new_tile_makes_the_session_ask_and_wait_for_the_host(
    pack_lagoon: Pack, seed: int
) -> None:
    world, rules, session = game_and_session(pack_lagoon, seed)
    turn = a_take_to_board(rules, world, palms=False)
    assert isinstance(turn.action, TakeToBoard)
    played = after(rules, world, turn)
    scene = hand_over_cell(scene_for_state(played), played, world.mover.seat, turn.action.cell)
    read = read_table(frame(pack_lagoon, scene, seed), pack_lagoon)
    seat_read = read.seats[world.mover.seat]
    r, c = turn.action.cell
    cell = seat_read.cells[r][c]
    assert cell is not None and cell.unknown  # the camera could not see under the hand
    verdict = session.observe(read)
    assert isinstance(verdict, Doubtful), verdict
    assert session.game is not None and session.game.records == []  # nothing guessed
    assert session.question is not None
    assert log_kinds(session)[-1] == "question"
    matches = [
        i
        for i, t in enumerate(session.question.candidates)
        if t.action == turn.action and t.steps == turn.steps
    ]
    assert len(matches) == 1
    record = session.confirm(matches[0])
    assert record.turn.action == turn.action
    assert session.game.state.to_json() == played.to_json()
    assert session.question is None
    assert log_kinds(session)[-1] == "turn"
