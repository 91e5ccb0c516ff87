"""Final scoring of Māori (docs/rules.md, "Rulings": "Islands and scoring", "The end").

Pure functions over boards of tile meanings: no I/O. A board is a sequence of rows from seat
north, each row from seat west; a cell holds the tile's meaning as it lies (already turned)
or None when no tile lies there. Non-playable cells (``#`` in the layout's map) hold None.

Order of the end scoring: incomplete islands are taken off first; palms, leis, boats and
empty fields are then counted on what stays on the board. Printed shells are ignored; the
wooden shells a player holds count for the shell majority and break a tie for the win.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from companion.catalogue import BoardLayout, Cell
from companion.tiles import EDGE_OFFSET, OPPOSITE, Meaning

Board = Sequence[Sequence[Meaning | None]]

#: Points for one complete lei (two halves meeting across an edge); never doubled.
LEI_POINTS = 10
#: Points for each empty playable cell after incomplete islands are taken off.
EMPTY_POINTS = -1
#: Factor on palm points for an island with at least one hut.
HUT_FACTOR = 2
#: Factor on palm points for an island lying wholly inside the atoll.
ATOLL_FACTOR = 2


@dataclass(frozen=True, slots=True)
class Island:
    """A maximal group of tiles joined through shared land edges."""

    cells: tuple[Cell, ...]
    complete: bool
    in_atoll: bool
    palms: int
    has_hut: bool

    @property
    def palm_points(self) -> int:
        """What the island's palms score: 0 when incomplete (it is taken off)."""
        if not self.complete:
            return 0
        points = self.palms * (HUT_FACTOR if self.has_hut else 1)
        return points * (ATOLL_FACTOR if self.in_atoll else 1)


@dataclass(frozen=True, slots=True)
class PlayerBoard:
    """One player at the end (or in the middle) of a game: name, wooden shells, board."""

    name: str
    shells: int
    board: tuple[tuple[Meaning | None, ...], ...]
    storage: Meaning | None = None


@dataclass(frozen=True, slots=True)
class BoardTally:
    """What one board yields before the boat and shell majorities are known."""

    palms_no_hut: int
    palms_hut: int
    leis: int
    empty: int
    boat_count: int
    removed: tuple[Cell, ...]


@dataclass(frozen=True, slots=True)
class PlayerScore:
    """One player's final score; every figure is points except the two counts."""

    name: str
    palms_no_hut: int
    palms_hut: int
    leis: int
    boats: int
    shells: int
    empty: int
    total: int
    boat_count: int
    shell_count: int
    removed: tuple[Cell, ...]

    def to_json(self) -> dict[str, Any]:
        """The per-player object of `companion score --json` (docs/formats.md)."""
        return {
            "name": self.name,
            "palms_no_hut": self.palms_no_hut,
            "palms_hut": self.palms_hut,
            "leis": self.leis,
            "boats": self.boats,
            "shells": self.shells,
            "empty": self.empty,
            "total": self.total,
            "boat_count": self.boat_count,
            "shell_count": self.shell_count,
            "removed": [[r, c] for r, c in self.removed],
        }


@dataclass(frozen=True, slots=True)
class FinalScore:
    """Every player's score in seating (input) order and the winner(s)."""

    players: tuple[PlayerScore, ...]
    winners: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        """The object `companion score --json` prints (docs/formats.md)."""
        return {"players": [p.to_json() for p in self.players], "winners": list(self.winners)}


def _check(layout: BoardLayout, board: Board) -> None:
    if len(board) != layout.rows or any(len(row) != layout.cols for row in board):
        raise ValueError(f"a board must have {layout.rows} rows of {layout.cols} cells")
    for r, row in enumerate(board):
        for c, tile in enumerate(row):
            if tile is not None and not layout.playable((r, c)):
                raise ValueError(f"cell {(r, c)} is not playable but holds a tile")


def _tiles(board: Board) -> Iterator[tuple[Cell, Meaning]]:
    for r, row in enumerate(board):
        for c, tile in enumerate(row):
            if tile is not None:
                yield (r, c), tile


def _neighbour(board: Board, cell: Cell, edge: str) -> Meaning | None:
    dr, dc = EDGE_OFFSET[edge]
    r, c = cell[0] + dr, cell[1] + dc
    if 0 <= r < len(board) and 0 <= c < len(board[r]):
        return board[r][c]
    return None  # the rim


def _land_meets(board: Board, cell: Cell, edge: str) -> bool:
    """True when the land edge `edge` of the tile on `cell` meets a land edge across it."""
    other = _neighbour(board, cell, edge)
    return other is not None and other.is_island and OPPOSITE[edge] in other.land


def islands(layout: BoardLayout, board: Board) -> list[Island]:
    """Every island on the board, ordered by its first cell (row, then column)."""
    _check(layout, board)
    seen: set[Cell] = set()
    found: list[Island] = []
    for start, tile in _tiles(board):
        if start in seen or not tile.is_island:
            continue
        group: list[Cell] = []
        complete = True
        todo = [start]
        seen.add(start)
        while todo:
            cell = todo.pop()
            group.append(cell)
            here = board[cell[0]][cell[1]]
            assert here is not None
            for edge in here.land:
                if not _land_meets(board, cell, edge):
                    complete = False
                    continue
                dr, dc = EDGE_OFFSET[edge]
                nxt = (cell[0] + dr, cell[1] + dc)
                if nxt not in seen:
                    seen.add(nxt)
                    todo.append(nxt)
        cells = tuple(sorted(group))
        meanings = [board[r][c] for r, c in cells]
        found.append(
            Island(
                cells=cells,
                complete=complete,
                in_atoll=all(layout.in_atoll(cell) for cell in cells),
                palms=sum(m.palms for m in meanings if m is not None),
                has_hut=any(m.huts for m in meanings if m is not None),
            )
        )
    return found


def incomplete_cells(layout: BoardLayout, board: Board) -> frozenset[Cell]:
    """The cells of incomplete islands, taken off before scoring."""
    found = islands(layout, board)
    return frozenset(cell for isl in found if not isl.complete for cell in isl.cells)


def boat_count(layout: BoardLayout, tiles: Iterable[Meaning]) -> int:
    """Printed boats plus the boats on `tiles`, the tiles lying on the board.

    During the game (nothing taken off) this is the count that limits the explorer ship's
    move; turning a tile does not change its boats, so the rules engine passes upright ones.
    """
    return layout.printed_boats + sum(tile.boats for tile in tiles)


def tally(layout: BoardLayout, board: Board) -> BoardTally:
    """Palm, lei and empty-field points and the boat count of one board after the removal."""
    found = islands(layout, board)
    removed = {cell for isl in found if not isl.complete for cell in isl.cells}
    kept = [
        [None if (r, c) in removed else tile for c, tile in enumerate(row)]
        for r, row in enumerate(board)
    ]
    leis = 0
    for cell, tile in _tiles(kept):
        for edge in "ES":  # each touching pair once: look east and south only
            other = _neighbour(kept, cell, edge)
            if edge in tile.lei and other is not None and OPPOSITE[edge] in other.lei:
                leis += 1
    empty = sum(1 for r, c in layout.playable_cells if kept[r][c] is None)
    return BoardTally(
        palms_no_hut=sum(isl.palm_points for isl in found if not isl.has_hut),
        palms_hut=sum(isl.palm_points for isl in found if isl.has_hut),
        leis=leis * LEI_POINTS,
        empty=empty * EMPTY_POINTS,
        boat_count=boat_count(layout, (tile for _, tile in _tiles(kept))),
        removed=tuple(sorted(removed)),
    )


def _score(player: PlayerBoard, t: BoardTally, most_boats: bool, most_shells: bool) -> PlayerScore:
    boats = t.boat_count if most_boats else 0
    shells = player.shells if most_shells else 0
    return PlayerScore(
        name=player.name,
        palms_no_hut=t.palms_no_hut,
        palms_hut=t.palms_hut,
        leis=t.leis,
        boats=boats,
        shells=shells,
        empty=t.empty,
        total=t.palms_no_hut + t.palms_hut + t.leis + boats + shells + t.empty,
        boat_count=t.boat_count,
        shell_count=player.shells,
        removed=t.removed,
    )


def score_game(layout: BoardLayout, players: Sequence[PlayerBoard]) -> FinalScore:
    """Score every player and name the winner(s).

    The most boats scores one point per boat and the most wooden shells one point per
    shell; every player tied for most scores. Winner: most points; on a tie, most wooden
    shells among the tied; still tied, all of them win.

    For an unfinished game this is also the projected score: call it on the current boards
    (incomplete islands are then counted as if the game ended now).
    """
    if not players:
        raise ValueError("there must be at least one player to score")
    tallies = [tally(layout, p.board) for p in players]
    best_boats = max(t.boat_count for t in tallies)
    best_shells = max(p.shells for p in players)
    scores = tuple(
        _score(p, t, t.boat_count == best_boats, p.shells == best_shells)
        for p, t in zip(players, tallies, strict=True)
    )
    best_total = max(s.total for s in scores)
    tied = [s for s in scores if s.total == best_total]
    most = max(s.shell_count for s in tied)
    winners = tuple(s.name for s in tied if s.shell_count == most)
    return FinalScore(scores, winners)
