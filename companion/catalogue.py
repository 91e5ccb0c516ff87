"""The box's contents as data: tile types with their meanings and counts, and board layouts.

The bundled best reconstruction lives in companion/data/ (tiles.toml, boards.toml). A tile
pack's pack.toml (docs/formats.md) has the same schema plus pictures and replaces it for a table
that has catalogued its own box. Pictures are checked by vision.box.pack; here they are paths.
"""

from __future__ import annotations

import tomllib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from functools import cache, cached_property
from importlib import resources
from pathlib import Path
from typing import Any

from companion.errors import DataError
from companion.tiles import TILE_ID, Kind, Meaning

BOARD_SIDES = ("front", "atoll")
#: Bounds of a catalogue or pack.toml (the box holds 97 tiles of 51 types on 4 x 4 and
#: 5 x 5 boards): a number past them is a mistake, and would make the demo's stack or the
#: kit's pages grow without end.
MAX_COPIES = 100
MAX_TILE_TYPES = 200
MAX_TILES = 500
MAX_BOARD_SIDE = 12
MAX_PRINTED_BOATS = 20
MAX_TEXT = 80
MAP_CELLS = {".": "playable", "a": "atoll", "#": "blocked"}
Cell = tuple[int, int]


def shown(text: str) -> str:
    """`text` as it may appear inside a one-line message: as is when every character is
    printable, else quoted with escapes (a newline or a terminal escape code in a name or a
    key must not break the message over lines or reach the terminal)."""
    return text if text.isprintable() else repr(text)


@dataclass(frozen=True, slots=True)
class TileType:
    """One kind of tile in the box: its upright meaning, how many copies, its picture."""

    id: str
    meaning: Meaning
    count: int
    image: str | None = field(default=None, compare=False)


@dataclass(frozen=True, slots=True)
class BoardLayout:
    """The playing grid of one side of a player board."""

    side: str
    rows: int
    cols: int
    printed_boats: int
    map: tuple[str, ...]
    image: str | None = field(default=None, compare=False)

    def playable(self, cell: Cell) -> bool:
        """True when a tile may lie on `cell`."""
        r, c = cell
        return 0 <= r < self.rows and 0 <= c < self.cols and self.map[r][c] != "#"

    def in_atoll(self, cell: Cell) -> bool:
        """True when `cell` lies inside the atoll (atoll side only)."""
        r, c = cell
        return 0 <= r < self.rows and 0 <= c < self.cols and self.map[r][c] == "a"

    @property
    def playable_cells(self) -> tuple[Cell, ...]:
        return _playable_cells(self.map)

    def to_json(self) -> dict[str, Any]:
        """The `layout` object of a game file (docs/formats.md)."""
        return {
            "rows": self.rows,
            "cols": self.cols,
            "printed_boats": self.printed_boats,
            "map": list(self.map),
        }


@dataclass(frozen=True)
class Catalogue:
    """Every tile type of one box and its board layouts."""

    name: str
    types: tuple[TileType, ...]
    boards: Mapping[str, BoardLayout]
    tile_mm: float = 45.0
    ship_image: str | None = field(default=None, compare=False)
    root: Path | None = field(default=None, compare=False)
    _by_id: dict[str, TileType] = field(init=False, repr=False, compare=False)
    volcanoes: frozenset[str] = field(init=False, repr=False, compare=False)
    #: Boats printed on each tile type (the explorer ship's free steps come from these).
    boats_on: Mapping[str, int] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_by_id", {t.id: t for t in self.types})
        object.__setattr__(self, "boats_on", {t.id: t.meaning.boats for t in self.types})
        volcanoes = frozenset(t.id for t in self.types if t.meaning.kind is Kind.VOLCANO)
        object.__setattr__(self, "volcanoes", volcanoes)

    def __getitem__(self, tile_id: str) -> TileType:
        try:
            return self._by_id[tile_id]
        except KeyError:
            raise KeyError(f"no tile type {tile_id!r} in {self.name}") from None

    def __contains__(self, tile_id: object) -> bool:
        return tile_id in self._by_id

    def __iter__(self) -> Iterator[TileType]:
        return iter(self.types)

    def meaning(self, tile_id: str) -> Meaning:
        """The upright meaning of a tile type."""
        tile = self._by_id.get(tile_id)
        return self[tile_id].meaning if tile is None else tile.meaning

    @cached_property
    def tile_entries(self) -> tuple[dict[str, Any], ...]:
        """Each tile type as its game-file entry (id, count, meaning); copy before changing."""
        return tuple({"id": t.id, "count": t.count, **t.meaning.to_json()} for t in self.types)

    @property
    def total(self) -> int:
        """How many tiles the box holds."""
        return sum(t.count for t in self.types)

    def board(self, side: str) -> BoardLayout:
        """The layout of the `front` or `atoll` side."""
        try:
            return self.boards[side]
        except KeyError:
            raise DataError(self.name, f"this box has no layout for the {side} side") from None

    def tiles(self) -> list[str]:
        """One id per physical tile, in catalogue order."""
        return [t.id for t in self.types for _ in range(t.count)]


@cache
def _playable_cells(grid: tuple[str, ...]) -> tuple[Cell, ...]:
    return tuple((r, c) for r, row in enumerate(grid) for c, ch in enumerate(row) if ch != "#")


def _int(value: Any, what: str, source: str, minimum: int, maximum: int) -> int:
    if type(value) is not int or not minimum <= value <= maximum:
        raise DataError(
            source, f"{what} must be a whole number from {minimum} to {maximum}, not {value!r}"
        )
    return value


def parse_layout(data: Any, side: str, source: str, where: str | None = None) -> BoardLayout:
    """Read a board layout table (`rows`, `cols`, `printed_boats`, `map`); `where` names it in
    messages (default: the pack.toml table `[board.SIDE]`)."""
    where = where or f"[board.{side}]"
    if not isinstance(data, Mapping):
        raise DataError(source, f"{where} must be a table")
    unknown = set(data) - {"rows", "cols", "printed_boats", "map", "image"}
    if unknown:
        raise DataError(source, f"{where} has an unknown key {sorted(unknown)[0]!r}")
    for key in ("rows", "cols", "map"):
        if key not in data:
            raise DataError(source, f"{where} needs {key}")
    rows = _int(data["rows"], f"{where} rows", source, 1, MAX_BOARD_SIDE)
    cols = _int(data["cols"], f"{where} cols", source, 1, MAX_BOARD_SIDE)
    boats = _int(
        data.get("printed_boats", 2), f"{where} printed_boats", source, 0, MAX_PRINTED_BOATS
    )
    grid = data["map"]
    if not isinstance(grid, list) or len(grid) != rows:
        raise DataError(source, f"{where} map must be a list of {rows} strings, one per row")
    for i, row in enumerate(grid):
        if not isinstance(row, str) or len(row) != cols:
            raise DataError(source, f"{where} map row {i + 1} must be a string of {cols} cells")
        bad = set(row) - set(MAP_CELLS)
        if bad:
            raise DataError(
                source, f"{where} map row {i + 1} has {sorted(bad)[0]!r}; use '.', 'a' or '#'"
            )
        if side != "atoll" and "a" in row:
            # The atoll (whose palms count double) is printed on the back side only.
            raise DataError(
                source,
                f"{where} map row {i + 1} has 'a', a cell inside the atoll, but the {side} side "
                "has no atoll (only the atoll side has); use '.' or '#'",
            )
    if not any(ch != "#" for row in grid for ch in row):
        raise DataError(source, f"{where} map has no playable cell")
    image = data.get("image")
    if image is not None and not (isinstance(image, str) and len(image) <= 4 * MAX_TEXT):
        raise DataError(
            source, f"{where} image must be a path of at most {4 * MAX_TEXT} characters"
        )
    return BoardLayout(side, rows, cols, boats, tuple(grid), image)


def _parse_tile(entry: Any, index: int, source: str, require_image: bool) -> TileType:
    where = f"tile {index + 1}"
    if not isinstance(entry, Mapping):
        raise DataError(source, f"{where} must be a [[tile]] table")
    tile_id = entry.get("id")
    if not isinstance(tile_id, str) or not TILE_ID.fullmatch(tile_id) or len(tile_id) > MAX_TEXT:
        raise DataError(
            source, f"{where} needs an id of lowercase letters, digits and '-' (at most {MAX_TEXT})"
        )
    where = f"tile {tile_id!r}"
    try:
        meaning = Meaning.from_mapping(entry, extra_ok=frozenset({"id", "count", "image"}))
    except ValueError as exc:
        raise DataError(source, f"{where}: {exc}") from None
    count = _int(entry.get("count", 1), f"{where} count", source, 1, MAX_COPIES)
    image = entry.get("image")
    if image is None and require_image:
        raise DataError(source, f"{where} needs an image")
    if image is not None and not (isinstance(image, str) and len(image) <= 4 * MAX_TEXT):
        raise DataError(
            source, f"{where} image must be a path of at most {4 * MAX_TEXT} characters"
        )
    return TileType(tile_id, meaning, count, image)


def parse_catalogue(
    data: Mapping[str, Any],
    source: str,
    *,
    root: Path | None = None,
    require_images: bool = False,
    default_boards: Mapping[str, BoardLayout] | None = None,
) -> Catalogue:
    """Validate a parsed tiles.toml / pack.toml document."""
    entries = data.get("tile")
    if not isinstance(entries, list) or not entries:
        raise DataError(source, "there is no [[tile]] entry")
    if len(entries) > MAX_TILE_TYPES:
        raise DataError(
            source, f"there are {len(entries)} [[tile]] entries; a box has at most {MAX_TILE_TYPES}"
        )
    types: list[TileType] = []
    seen: set[str] = set()
    for i, entry in enumerate(entries):
        tile = _parse_tile(entry, i, source, require_images)
        if tile.id in seen:
            raise DataError(source, f"tile id {tile.id!r} appears twice")
        seen.add(tile.id)
        types.append(tile)
    total = sum(t.count for t in types)
    if total > MAX_TILES:
        raise DataError(
            source, f"the [[tile]] counts add up to {total} tiles; a box has at most {MAX_TILES}"
        )
    name = data.get("name", Path(source).parent.name or source)
    if not isinstance(name, str) or ("name" in data and len(name) > MAX_TEXT):
        raise DataError(source, f"name must be a string of at most {MAX_TEXT} characters")
    tile_mm = data.get("tile_mm", 45)
    if (
        isinstance(tile_mm, bool)
        or not isinstance(tile_mm, int | float)
        or not 20 <= tile_mm <= 100
    ):
        raise DataError(source, f"tile_mm must be a length between 20 and 100 mm, not {tile_mm!r}")
    boards: dict[str, BoardLayout] = dict(default_boards or {})
    board_tables = data.get("board", {})
    if not isinstance(board_tables, Mapping):
        raise DataError(source, "[board] must hold [board.front] and optionally [board.atoll]")
    for side, table in board_tables.items():
        if side not in BOARD_SIDES:
            raise DataError(
                source, f"[board.{shown(side)}] is not a board side; use front or atoll"
            )
        boards[side] = parse_layout(table, side, source)
    ship = data.get("ship")
    ship_image: str | None = None
    if ship is not None:
        image = ship.get("image") if isinstance(ship, Mapping) else None
        if not isinstance(image, str) or len(image) > 4 * MAX_TEXT:
            raise DataError(
                source, f"[ship] needs an image path of at most {4 * MAX_TEXT} characters"
            )
        ship_image = ship["image"]
    elif require_images:
        raise DataError(source, "[ship] with the explorer ship's picture is missing")
    return Catalogue(name, tuple(types), boards, float(tile_mm), ship_image, root)


def read_toml(path: Path) -> dict[str, Any]:
    """Read a TOML file; any problem becomes a DataError naming the file."""
    try:
        with path.open("rb") as fh:
            return tomllib.load(fh)
    except FileNotFoundError:
        raise DataError(str(path), "no such file") from None
    except IsADirectoryError:
        raise DataError(str(path), "is a directory, not a file") from None
    except OSError as exc:
        raise DataError(str(path), f"cannot be read ({exc.strerror or exc})") from None
    except UnicodeDecodeError:
        raise DataError(str(path), "is not UTF-8 text") from None
    except tomllib.TOMLDecodeError as exc:
        raise DataError(str(path), f"is not valid TOML ({exc})") from None
    except ValueError:  # an integer of thousands of digits (Python's int limit)
        raise DataError(str(path), "is not valid TOML (a number is too long)") from None
    except RecursionError:
        raise DataError(str(path), "is not valid TOML (arrays or tables nested too deep)") from None


@cache
def default_boards() -> dict[str, BoardLayout]:
    """The bundled board layouts (companion/data/boards.toml)."""
    text = resources.files("companion").joinpath("data/boards.toml").read_text("utf-8")
    data = tomllib.loads(text)
    return {side: parse_layout(t, side, "boards.toml") for side, t in data["board"].items()}


@cache
def default_catalogue() -> Catalogue:
    """The bundled best reconstruction of the 97 tiles and both board sides."""
    text = resources.files("companion").joinpath("data/tiles.toml").read_text("utf-8")
    return parse_catalogue(tomllib.loads(text), "tiles.toml", default_boards=default_boards())


def load_catalogue(path: str | Path, *, require_images: bool = False) -> Catalogue:
    """Load a catalogue file or a pack directory (its pack.toml); boards default to bundled."""
    path = Path(path)
    file = path / "pack.toml" if path.is_dir() else path
    data = read_toml(file)
    return parse_catalogue(
        data,
        str(file),
        root=file.parent,
        require_images=require_images,
        default_boards=default_boards(),
    )
