"""The bundled catalogue and board layouts, and a table's own catalogue file."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from companion.catalogue import default_catalogue, load_catalogue
from companion.errors import DataError


def test_the_box_holds_97_tiles_of_the_rulebooks_shapes() -> None:
    catalogue = default_catalogue()
    kinds: Counter[str] = Counter()
    for tile in catalogue:
        kinds[tile.meaning.kind.value] += tile.count
    assert catalogue.total == 97
    assert kinds == {"single": 10, "end": 54, "middle": 14, "water": 17, "volcano": 2}


def test_the_front_side_is_4x4_with_two_printed_boats_and_the_atoll_has_atoll_cells() -> None:
    front = default_catalogue().board("front")
    assert (front.rows, front.cols, front.printed_boats) == (4, 4, 2)
    assert len(front.playable_cells) == 16
    atoll = default_catalogue().board("atoll")
    assert any(atoll.in_atoll(cell) for cell in atoll.playable_cells)
    assert len(atoll.playable_cells) > 16, "the atoll side needs more tiles than the front"


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "pack.toml"
    path.write_text(text, encoding="utf-8")
    return tmp_path


TILE = """
[[tile]]
id = "{id}"
kind = "{kind}"
land = "{land}"
palms = 1
count = 2
"""


def test_a_tables_own_catalogue_replaces_the_tiles_and_keeps_the_bundled_boards(
    tmp_path: Path,
) -> None:
    text = TILE.format(id="a", kind="end", land="S") + TILE.format(id="b", kind="single", land="")
    catalogue = load_catalogue(write(tmp_path, text))
    assert [t.id for t in catalogue] == ["a", "b"] and catalogue.total == 4
    assert catalogue.board("front").printed_boats == 2


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (TILE.format(id="a", kind="end", land="S") * 2, "tile id 'a' appears twice"),
        (TILE.format(id="a", kind="middle", land="N"), "tile 'a': a middle tile has two opposite"),
        (TILE.format(id="A B", kind="end", land="S"), "id of lowercase letters"),
        ("name = 'x'\n", "no [[tile]] entry"),
        ("[[tile]\n", "is not valid TOML"),
        (
            TILE.format(id="a", kind="end", land="S")
            + "[board.front]\nrows = 2\ncols = 2\nmap = ['..', '.x']\n",
            "map row 2 has 'x'",
        ),
        (
            TILE.format(id="a", kind="end", land="S")
            + "[board.front]\nrows = 2\ncols = 2\nmap = ['..']\n",
            "map must be a list of 2 strings",
        ),
        (TILE.format(id="a", kind="end", land="S") + "[board.back]\n", "not a board side"),
        (
            TILE.format(id="a", kind="end", land="S")
            + "[board.front]\nrows = 2\ncols = 2\nmap = ['..', 'a.']\n",
            "[board.front] map row 2 has 'a', a cell inside the atoll, but the front side has no",
        ),
    ],
)
def test_a_bad_catalogue_names_the_file_and_the_problem(
    tmp_path: Path, text: str, message: str
) -> None:
    with pytest.raises(DataError) as err:
        load_catalogue(write(tmp_path, text))
    assert str(tmp_path / "pack.toml") in err.value.message
    assert message in err.value.message


def test_a_missing_catalogue_is_one_sentence(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="no such file"):
        load_catalogue(tmp_path / "nothing.toml")
