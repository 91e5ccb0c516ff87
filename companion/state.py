"""The game's state: seats, the display, the stack, the explorer ship, boards, storage, shells.

A GameState is plain data with a lossless JSON form. The rules (companion.rules) validate and
apply turns to it; companion.game adds undo and the event log.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from companion.actions import Cell, Matching, Variant
from companion.catalogue import BoardLayout, Catalogue, TileType, parse_layout
from companion.errors import DataError
from companion.tiles import Meaning

DISPLAY_SIZE = 4
SHIP_POSITIONS = 16
#: A move stays below a full circle: 16 steps would bring the ship back where it stood.
MAX_STEPS = SHIP_POSITIONS - 1
SHELLS_TOTAL = 30
START_SHELLS = 5


@dataclass(frozen=True, slots=True)
class Placed:
    """A tile lying on a board: its type and how it is turned (clockwise degrees)."""

    tile: str
    rotation: int = 0


@dataclass(slots=True)
class PlayerState:
    """One player: name, seat at the table, shells, board, storage and (variants) player ship."""

    name: str
    seat: int
    board: list[list[Placed | None]]
    shells: int = START_SHELLS
    storage: str | None = None
    ship: Cell | None = None
    colour: str = ""

    def copy(self) -> PlayerState:
        return PlayerState(
            self.name,
            self.seat,
            [*map(list.copy, self.board)],
            self.shells,
            self.storage,
            self.ship,
            self.colour,
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "seat": self.seat,
            "colour": self.colour,
            "shells": self.shells,
            "storage": self.storage,
            "ship": None if self.ship is None else list(self.ship),
            "board": [
                [None if p is None else [p.tile, p.rotation] for p in row] for row in self.board
            ],
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> PlayerState:
        ship = data.get("ship")
        return cls(
            name=str(data["name"]),
            seat=int(data["seat"]),
            colour=str(data.get("colour", "")),
            shells=int(data["shells"]),
            storage=data.get("storage"),
            ship=None if ship is None else (int(ship[0]), int(ship[1])),
            board=[
                [None if p is None else Placed(str(p[0]), int(p[1])) for p in row]
                for row in data["board"]
            ],
        )


@dataclass(slots=True)
class GameState:
    """Everything needed to go on with a game; `players` are in turn order (clockwise)."""

    catalogue: Catalogue
    side: str
    layout: BoardLayout
    variant: Variant
    matching: Matching
    players: list[PlayerState]
    display: list[list[str | None]]
    stack: list[str]
    ship: int
    start_player: int
    to_move: int
    supply: int
    box: list[str] = field(default_factory=list)
    turn_number: int = 0
    final_round_from: int | None = None
    over: bool = False

    def copy(self) -> GameState:
        return self._with_players([p.copy() for p in self.players])

    def copy_for_turn(self) -> GameState:
        """A copy to play the mover's turn on: it shares the other players' states, which a
        turn does not change (companion.game keeps the state before each turn for undo)."""
        players = self.players[:]
        players[self.to_move] = players[self.to_move].copy()
        return self._with_players(players)

    def _with_players(self, players: list[PlayerState]) -> GameState:
        """A copy of the display, stack and box with these players."""
        return GameState(
            self.catalogue,
            self.side,
            self.layout,
            self.variant,
            self.matching,
            players,
            [*map(list.copy, self.display)],
            self.stack[:],
            self.ship,
            self.start_player,
            self.to_move,
            self.supply,
            self.box[:],
            self.turn_number,
            self.final_round_from,
            self.over,
        )

    @property
    def mover(self) -> PlayerState:
        """The player whose turn it is."""
        return self.players[self.to_move]

    def meaning(self, placed: Placed) -> Meaning:
        """What a lying tile means, turned as it lies."""
        return self.catalogue.meaning(placed.tile).rotated(placed.rotation)

    def board_meanings(self, player: PlayerState) -> tuple[tuple[Meaning | None, ...], ...]:
        """A player's board as turned meanings (the form scoring works on)."""
        return tuple(
            tuple(None if p is None else self.meaning(p) for p in row) for row in player.board
        )

    def empty_cells(self, player: PlayerState) -> list[Cell]:
        """Playable cells of a board that hold no tile."""
        return [
            cell for cell in self.layout.playable_cells if player.board[cell[0]][cell[1]] is None
        ]

    def has_empty_cell(self, player: PlayerState) -> bool:
        """True while a playable cell of the board holds no tile."""
        board = player.board
        return any(board[r][c] is None for r, c in self.layout.playable_cells)

    def tiles_in_play(self) -> list[str]:
        """Every tile id wherever it is (display, stack, boards, storage, box)."""
        ids = [t for row in self.display for t in row if t is not None]
        ids += self.stack
        ids += self.box
        for p in self.players:
            ids += [c.tile for row in p.board for c in row if c is not None]
            if p.storage is not None:
                ids.append(p.storage)
        return ids

    def to_json(self) -> dict[str, Any]:
        """A lossless JSON form (the catalogue travels along, so a pack's game reloads alone)."""
        return {
            "format": "maori-companion/state/1",
            "catalogue": catalogue_to_json(self.catalogue),
            "side": self.side,
            "layout": self.layout.to_json(),
            "variant": self.variant.value,
            "matching": self.matching.value,
            "players": [p.to_json() for p in self.players],
            "display": [row[:] for row in self.display],
            "stack": self.stack[:],
            "ship": self.ship,
            "start_player": self.start_player,
            "to_move": self.to_move,
            "supply": self.supply,
            "box": self.box[:],
            "turn_number": self.turn_number,
            "final_round_from": self.final_round_from,
            "over": self.over,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any], source: str = "state") -> GameState:
        """Rebuild a state written by to_json; a malformed document raises DataError."""
        try:
            return cls(
                catalogue=catalogue_from_json(data["catalogue"], source),
                side=str(data["side"]),
                layout=parse_layout(data["layout"], str(data["side"]), source),
                variant=Variant(data["variant"]),
                matching=Matching(data["matching"]),
                players=[PlayerState.from_json(p) for p in data["players"]],
                display=[[None if t is None else str(t) for t in row] for row in data["display"]],
                stack=[str(t) for t in data["stack"]],
                ship=int(data["ship"]),
                start_player=int(data["start_player"]),
                to_move=int(data["to_move"]),
                supply=int(data["supply"]),
                box=[str(t) for t in data.get("box", [])],
                turn_number=int(data.get("turn_number", 0)),
                final_round_from=data.get("final_round_from"),
                over=bool(data.get("over", False)),
            )
        except DataError:
            raise
        except (KeyError, TypeError, ValueError, IndexError) as exc:
            raise DataError(source, f"is not a saved game state ({exc!s})") from None


def catalogue_to_json(catalogue: Catalogue) -> dict[str, Any]:
    """The tile types a game was played with (meanings and counts; pictures stay in the pack)."""
    return {
        "name": catalogue.name,
        "tile_mm": catalogue.tile_mm,
        "tiles": [dict(entry) for entry in catalogue.tile_entries],
        "boards": {side: b.to_json() for side, b in catalogue.boards.items()},
    }


def catalogue_from_json(data: dict[str, Any], source: str) -> Catalogue:
    """Inverse of catalogue_to_json."""
    types = []
    for entry in data["tiles"]:
        meaning = Meaning.from_mapping({k: v for k, v in entry.items() if k not in ("id", "count")})
        types.append(TileType(str(entry["id"]), meaning, int(entry["count"])))
    boards = {side: parse_layout(b, side, source) for side, b in data.get("boards", {}).items()}
    return Catalogue(str(data["name"]), tuple(types), boards, float(data.get("tile_mm", 45)))
