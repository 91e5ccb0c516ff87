"""Fuzzing `companion score`: whatever the game file holds, one sentence or a score, no traceback.

Game files are drawn from the real format (a layout, 1-5 players with boards of real tile
meanings), then mutated: values of the wrong type, keys missing or added, huge numbers, deep
nesting, and at the byte level a BOM, a cut-off end, flipped bytes, text that is not UTF-8.
"""

from __future__ import annotations

import copy
import io
import json
import os
from collections.abc import Iterator
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.cli import main
from companion.catalogue import default_catalogue
from companion.errors import DataError
from companion.gamefile import MAX_FILE_BYTES, load_game_file
from companion.tiles import ROTATIONS, Kind
from tests.jsonpaths import json_slots

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "rulebook-37.json"

FUZZ = settings(
    max_examples=200,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

#: Every meaning a tile may have on a board, in the inline form of game files.
TILES: list[dict[str, Any]] = sorted(
    (
        meaning.to_json()
        for meaning in {
            t.meaning.rotated(r)
            for t in default_catalogue()
            if t.meaning.kind is not Kind.VOLCANO
            for r in ROTATIONS
        }
    ),
    key=lambda tile: json.dumps(tile, sort_keys=True),
)

HUGE_NUMBERS = st.sampled_from([10**30, -(10**30), 2**63, -(2**63) - 1, 1e308, -1e308, 1e-320])
JSON_LEAVES = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=12)
    | HUGE_NUMBERS
    | st.sampled_from(TILES)
)
JSON_VALUES = st.recursive(
    JSON_LEAVES,
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=10), inner),
    max_leaves=25,
)


@st.composite
def games(draw: st.DrawFn) -> dict[str, Any]:
    """A valid game file: a random layout (cells inside the atoll on the atoll side only) and
    1-5 players (at most 4 on the atoll) with boards that fit it, holding at most the box's
    30 shells together."""
    names = draw(
        st.lists(
            st.text(min_size=1, max_size=10).filter(lambda s: s.strip() != ""),
            min_size=1,
            max_size=5,
            unique=True,
        )
    )
    side = draw(st.sampled_from(["front", "atoll"] if len(names) <= 4 else ["front"]))
    rows, cols = draw(st.integers(1, 4)), draw(st.integers(1, 4))
    cells = "...a#" if side == "atoll" else "...#"
    grid = ["".join(draw(st.sampled_from(cells)) for _ in range(cols)) for _ in range(rows)]
    if all(ch == "#" for row in grid for ch in row):
        grid[0] = "." + grid[0][1:]
    tile = st.none() | st.sampled_from(TILES)
    players = []
    shells_left = 30
    for name in names:
        shells = draw(st.integers(0, shells_left))
        shells_left -= shells
        board = [
            [None if grid[r][c] == "#" else draw(tile) for c in range(cols)] for r in range(rows)
        ]
        players.append({"name": name, "shells": shells, "storage": draw(tile), "board": board})
    return {
        "board_side": side,
        "layout": {
            "rows": rows,
            "cols": cols,
            "printed_boats": draw(st.integers(0, 3)),
            "map": grid,
        },
        "players": players,
    }


#: Stands for a deeply nested list until the game is written out (json.dumps itself could
#: not write one thousands of levels deep).
DEEP = "@@nested@@"


def dumps(game: Any, depth: int, *, ensure_ascii: bool = True) -> str:
    """The game as JSON text, each DEEP marker written as `depth` nested lists."""
    return json.dumps(game, ensure_ascii=ensure_ascii).replace(
        json.dumps(DEEP), "[" * depth + "]" * depth
    )


@st.composite
def mutated_games(draw: st.DrawFn) -> dict[str, Any]:
    """A valid game with 1-4 changes somewhere inside: a value replaced by anything (a huge
    number, a deep list), a key or list item removed, an unknown key added."""
    game = copy.deepcopy(draw(games()))  # drawn values are shared: change a copy
    for _ in range(draw(st.integers(1, 4))):
        slots = json_slots(game, [])
        if not slots:  # every key removed already: nothing left to change
            break
        container, key = draw(st.sampled_from(slots))
        change = draw(st.sampled_from(["replace", "remove", "add", "deep"]))
        if change == "replace":
            container[key] = copy.deepcopy(draw(JSON_VALUES))
        elif change == "deep":
            container[key] = DEEP
        elif change == "remove":
            del container[key]
        elif isinstance(container, dict):
            container[draw(st.text(max_size=12))] = copy.deepcopy(draw(JSON_VALUES))
        else:
            container.append(copy.deepcopy(draw(JSON_VALUES)))
    return game


@st.composite
def game_bytes(draw: st.DrawFn) -> bytes:
    """A mutated game as the bytes of a file, sometimes damaged at the byte level."""
    depth = draw(st.integers(1, 5000))
    text = dumps(draw(mutated_games()), depth, ensure_ascii=draw(st.booleans()))
    data = text.encode("utf-8")
    damage = draw(st.sampled_from(["none", "bom", "cut", "flip", "latin-1", "utf-16", "nul"]))
    if damage == "bom":
        data = b"\xef\xbb\xbf" + data
    elif damage == "cut":
        data = data[: draw(st.integers(0, max(0, len(data) - 1)))]
    elif damage == "flip" and data:
        i = draw(st.integers(0, len(data) - 1))
        data = data[:i] + bytes([data[i] ^ draw(st.integers(1, 255))]) + data[i + 1 :]
    elif damage == "latin-1":
        data = text.encode("latin-1", errors="replace") + b"\xe9\xff"
    elif damage == "utf-16":
        data = text.encode("utf-16")
    elif damage == "nul":
        data = data.replace(b'"', b'"\x00', 1)
    return data


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("fuzz-games")


def score(path: Path | str) -> tuple[int, str, str]:
    """`companion score PATH`: (exit status, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        status = main(["score", str(path)])
    return status, out.getvalue(), err.getvalue()


def assert_scored_or_one_sentence(path: Path | str) -> int:
    """The contract of `companion score` on any input; returns the exit status."""
    status, out, err = score(path)
    assert status in (0, 2)
    if status == 2:
        assert out == ""
        assert err.startswith("companion: ") and err.endswith("\n")
        assert err.count("\n") == 1, f"more than one line on stderr: {err!r}"
        assert "Traceback" not in err
    else:
        assert err == "" and "total" in out
    try:
        load_game_file(path)
    except DataError as error:
        assert status == 2 and "\n" not in error.message
    else:
        assert status == 0
    return status


@pytest.mark.slow
@FUZZ
@given(game=games())
def test_every_well_formed_game_is_scored(workdir: Path, game: dict[str, Any]) -> None:
    path = workdir / "valid.json"
    path.write_text(json.dumps(game), encoding="utf-8")
    assert assert_scored_or_one_sentence(path) == 0


@pytest.mark.slow
@FUZZ
@given(game=mutated_games(), depth=st.integers(1, 5000))
def test_a_mutated_game_is_scored_or_refused_in_one_sentence(
    workdir: Path, game: dict[str, Any], depth: int
) -> None:
    path = workdir / "mutated.json"
    path.write_text(dumps(game, depth), encoding="utf-8")
    assert_scored_or_one_sentence(path)


@pytest.mark.slow
@FUZZ
@given(data=game_bytes())
def test_damaged_bytes_are_scored_or_refused_in_one_sentence(workdir: Path, data: bytes) -> None:
    path = workdir / "damaged.json"
    path.write_bytes(data)
    assert_scored_or_one_sentence(path)


@pytest.mark.parametrize(
    ("change", "sentence"),
    [
        (
            lambda g: g["layout"].update(map=["....", ".aa.", ".aa.", "...."]),
            "layout map row 2 has 'a', a cell inside the atoll, but the front side has no atoll",
        ),
        (
            lambda g: [p.update(shells=30) for p in g["players"]],
            "the players hold 60 wooden shells in all, but the box holds 30",
        ),
    ],
    ids=["atoll-cells-on-the-front", "more-shells-than-the-box"],
)
def test_a_game_the_box_cannot_hold_is_refused_in_one_sentence(
    tmp_path: Path, change: Any, sentence: str
) -> None:
    game = json.loads(EXAMPLE.read_text(encoding="utf-8"))
    change(game)
    path = tmp_path / "game.json"
    path.write_text(json.dumps(game), encoding="utf-8")
    status, out, err = score(path)
    assert (status, out) == (2, "")
    assert err.startswith(f"companion: {path}: {sentence}") and err.count("\n") == 1


def _special_files(root: Path) -> Iterator[tuple[str, Path | str]]:
    def file(name: str, data: bytes) -> Path:
        path = root / name
        path.write_bytes(data)
        return path

    yield "empty", file("empty.json", b"")
    yield "only a BOM", file("bom.json", b"\xef\xbb\xbf")
    yield "spaces", file("spaces.json", b" " * 1000)
    yield "over the size limit", file("big.json", b" " * (MAX_FILE_BYTES + 1))
    yield "nested lists", file("deep.json", b"[" * 100_000)
    yield "nested objects", file("deep2.json", b'{"players": ' * 5_000 + b"1" + b"}" * 5_000)
    yield "an integer of 5000 digits", file("digits.json", b'{"players": [' + b"9" * 5000 + b"]}")
    yield "a NUL byte", file("nul.json", b"\x00")
    yield (
        "a name over two lines",
        file(
            "lines.json",
            json.dumps({"players": [{"name": "Ana\nrm -rf", "shells": 0}]}).encode(),
        ),
    )
    yield (
        "a terminal escape in a name",
        file(
            "escape.json",
            json.dumps({"players": [{"name": "\x1b[2J", "shells": "x", "board": []}]}).encode(),
        ),
    )
    directory = root / "a-directory.json"
    directory.mkdir(exist_ok=True)
    yield "a directory", directory
    yield "a missing file", root / "missing.json"
    if os.path.exists("/dev/zero"):
        yield "/dev/zero", "/dev/zero"


def test_special_files_are_refused_in_one_sentence(tmp_path: Path) -> None:
    for what, path in _special_files(tmp_path):
        status, out, err = score(path)
        assert (status, out) == (2, ""), what
        assert err.count("\n") == 1 and "\x1b" not in err, (what, err)
        with pytest.raises(DataError):
            load_game_file(path)


def test_the_refusals_say_what_is_wrong(tmp_path: Path) -> None:
    files = dict(_special_files(tmp_path))
    assert "nested too deep" in score(files["nested lists"])[2]
    assert "a number is too long" in score(files["an integer of 5000 digits"])[2]
    assert "a game file is a few KB" in score(files["over the size limit"])[2]
    assert "player 1 ('Ana\\nrm -rf') needs" in score(files["a name over two lines"])[2]
