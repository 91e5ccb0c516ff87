"""What the host's screens send, checked and turned into Session calls.

JSON bodies from the host pages become a new game, a turn (with the player ship's paid path
worked out when the page asks for "auto"), a correction of one cell, or a preview of a turn
(its cost and log line, and the rotations the tile may lie at) that changes nothing. A body
that is not of the right shape raises MalformedMove; a rule the game forbids, IllegalMove.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Any

from companion.actions import Matching, StorageToBoard, TakeToBoard, Turn, Variant
from companion.bots import placement_cells
from companion.errors import IllegalMove, MalformedMove, NotNow
from companion.game import MAX_PLAYERS, Seat
from companion.reading import EMPTY, UNKNOWN, CellRead
from companion.rules import at
from companion.session import Session
from companion.state import SHIP_POSITIONS
from companion.tiles import ROTATIONS
from companion.tracker import Verdict

#: Player colours offered on the new-game screen (name -> how the page draws it).
PLAYER_COLOURS: dict[str, str] = {
    "red": "#d64545",
    "blue": "#2f74d0",
    "green": "#2e9e5b",
    "yellow": "#e3b330",
    "purple": "#8a5cc7",
    "orange": "#e07b28",
    "black": "#333333",
    "white": "#f4f4f4",
}
HEX_COLOUR = re.compile(r"#[0-9a-fA-F]{6}")
MAX_NAME = 24
AUTO = "auto"


def _object(data: Any, what: str) -> dict[str, Any]:
    if not isinstance(data, dict):
        raise MalformedMove(f"{what} must be a JSON object.")
    return data


def _whole(data: dict[str, Any], key: str, default: int | None = None) -> int:
    value = data.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int):
        raise MalformedMove(f"{key} must be a whole number.")
    return value


def _choice(data: dict[str, Any], key: str, allowed: tuple[str, ...], default: str) -> str:
    value = data.get(key, default)
    if value not in allowed:
        raise MalformedMove(f"{key} must be one of {', '.join(allowed)}.")
    return str(value)


@dataclass(frozen=True, slots=True)
class NewGame:
    """A checked new-game request: the arguments of Session.start_game."""

    seats: tuple[Seat, ...]
    start_player: int
    ship: int
    side: str
    variant: str
    matching: str
    display: tuple[tuple[str | None, ...], ...] | None

    def start(self, session: Session) -> None:
        session.start_game(
            self.seats,
            start_player=self.start_player,
            ship=self.ship,
            side=self.side,
            variant=self.variant,
            matching=self.matching,
            display=self.display,
        )


def parse_new_game(session: Session, data: Any) -> NewGame:
    """Check a new-game body: players (name, seat, colour), start player, ship position,
    variant, board side, matching and whether to use the display the camera last saw."""
    body = _object(data, "A new game")
    players = body.get("players")
    if not isinstance(players, list) or not players or len(players) > MAX_PLAYERS:
        raise MalformedMove(f"players must be a list of 1 to {MAX_PLAYERS} players.")
    seats: list[Seat] = []
    free = [c for c in PLAYER_COLOURS]
    for i, entry in enumerate(players):
        player = _object(entry, f"Player {i + 1}")
        name = player.get("name", "")
        if not isinstance(name, str) or len(name.strip()) > MAX_NAME:
            raise MalformedMove(
                f"Player {i + 1}'s name must be text of at most {MAX_NAME} letters."
            )
        colour = player.get("colour") or ""
        if not isinstance(colour, str) or (
            colour and colour not in PLAYER_COLOURS and not HEX_COLOUR.fullmatch(colour)
        ):
            raise MalformedMove(
                f"Player {i + 1}'s colour must be one of {', '.join(PLAYER_COLOURS)} or #rrggbb."
            )
        if colour in free:
            free.remove(colour)
        seats.append(Seat(name.strip(), _whole(player, "seat", i + 1), colour))
    # Players without a colour get the first ones nobody chose.
    seats = [s if s.colour else replace(s, colour=free.pop(0)) for s in seats]
    if len({s.colour.lower() for s in seats}) != len(seats):
        raise IllegalMove("Two players have the same colour.")
    ship = _whole(body, "ship", 0)
    if not 0 <= ship < SHIP_POSITIONS:
        raise MalformedMove(f"ship must be a lane position from 0 to {SHIP_POSITIONS - 1}.")
    display = None
    use_camera = body.get("use_camera", False)
    if not isinstance(use_camera, bool):
        raise MalformedMove("use_camera must be true or false.")
    if use_camera:
        display = camera_display(session)
    return NewGame(
        seats=tuple(seats),
        start_player=_whole(body, "start_player", 0),
        ship=ship,
        side=_choice(body, "side", ("front", "atoll"), "front"),
        variant=_choice(body, "variant", tuple(v.value for v in Variant), Variant.BASE.value),
        matching=_choice(body, "matching", tuple(m.value for m in Matching), Matching.FREE.value),
        display=display,
    )


def camera_display(session: Session) -> tuple[tuple[str | None, ...], ...]:
    """The display as the camera last read it, every cell seen (empty cells stay empty)."""
    read = session.last_read
    if read is None:
        raise NotNow("The camera has not read the table yet: press the button first.")
    rows: list[tuple[str | None, ...]] = []
    for r, row in enumerate(read.display):
        cells: list[str | None] = []
        for c, cell in enumerate(row):
            if cell is None or cell.unknown:
                raise NotNow(
                    f"The camera could not see the display's {at((r, c))}: "
                    "clear it and press the button again."
                )
            cells.append(None if cell.empty else cell.tile)
        rows.append(tuple(cells))
    return tuple(rows)


def parse_turn(session: Session, data: Any) -> Turn:
    """A turn from its JSON form; `"ship_path": "auto"` takes the cheapest paid path of the
    player ship that lets the tile be laid where the host tapped (variants only)."""
    body = dict(_object(data, "A turn"))
    auto = body.get("ship_path") == AUTO
    if auto:
        del body["ship_path"]
    turn = Turn.from_json(body)
    if not auto or not isinstance(turn.action, TakeToBoard | StorageToBoard):
        return turn
    with session._lock:  # the state must not change while the path is worked out
        game = session.game
        if game is None:
            return turn
        state = game.state
        cells = placement_cells(game.rules, state, state.mover, state.mover.shells)
        path = cells.get(turn.action.cell, ())
    return replace(turn, ship_path=path)


def preview(session: Session, turn: Turn) -> dict[str, Any]:
    """What `turn` would do, changing nothing: its log line, shells paid and gained, the
    rotations its tile may lie at on that cell (a rotation not allowed is replaced by the first
    allowed one; "turn" is the turn as judged). An illegal turn raises IllegalMove."""
    with session._lock:  # judge a copy of the state as it is now
        game = session.game
        if game is None:
            raise NotNow("No game is running: start a new game first.")
        rotations: list[int] = []
        action = turn.action
        if isinstance(action, TakeToBoard | StorageToBoard):
            for rotation in ROTATIONS:
                turned = replace(action, rotation=rotation)
                try:
                    game.check(replace(turn, action=turned))
                except (IllegalMove, MalformedMove):
                    continue
                rotations.append(rotation)
            if rotations and action.rotation not in rotations:
                # Show the turn at the first rotation allowed (e.g. palms upright).
                turn = replace(turn, action=replace(action, rotation=rotations[0]))
        record = game.rules.apply(game.state.copy(), turn)
    return {
        "text": record.describe(),
        "cost": record.paid,
        "gained": record.gained,
        "rotations": rotations,
        "turn": record.turn.to_json(),
    }


def parse_correction(session: Session, data: Any) -> tuple[str | int, int, int, CellRead]:
    """(area, row, col, cell) of a correction: area "display" or a seat number; cell
    {"tile": id, "rotation": r}, {"empty": true} or {"unknown": true}."""
    body = _object(data, "A correction")
    area = body.get("area")
    if area != "display" and (isinstance(area, bool) or not isinstance(area, int)):
        raise MalformedMove('area must be "display" or a seat number.')
    row, col = _whole(body, "row"), _whole(body, "col")
    cell = _object(body.get("cell"), "cell")
    if cell.get("empty") is True:
        read = EMPTY
    elif cell.get("unknown") is True:
        read = UNKNOWN
    else:
        tile = cell.get("tile")
        if not isinstance(tile, str) or tile not in session.catalogue:
            raise MalformedMove(f"There is no tile {tile!r} in this box.")
        rotation = _whole(cell, "rotation", 0)
        if rotation not in ROTATIONS:
            raise MalformedMove("A tile lies turned 0, 90, 180 or 270 degrees.")
        read = CellRead(tile, rotation)
    return area, row, col, read


def verdict_json(verdict: Verdict) -> dict[str, Any]:
    """A verdict for the page: its kind and its sentence."""
    kind = type(verdict).__name__.lower()
    reason = getattr(verdict, "reason", None)
    return {"verdict": kind, "reason": reason}
