"""The `companion` command line: help, version, `companion score` and how bad input fails."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from app.cli import COMMANDS, build_parser, main
from companion import __version__
from companion.catalogue import default_catalogue
from companion.tiles import ROTATIONS, Meaning

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "rulebook-37.json"

RULEBOOK_ANA = {
    "name": "Ana",
    "palms_no_hut": 10,
    "palms_hut": 12,
    "leis": 10,
    "boats": 7,
    "shells": 0,
    "empty": -2,
    "total": 37,
    "boat_count": 7,
    "shell_count": 3,
    "removed": [[0, 1], [0, 2]],
}


def test_score_json_reproduces_the_rulebook_example(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["score", str(EXAMPLE), "--json"]) == 0
    out, err = capsys.readouterr()
    assert err == ""
    result = json.loads(out)
    assert result["players"][0] == RULEBOOK_ANA
    bo = result["players"][1]
    assert bo["name"] == "Bo"
    assert bo["boat_count"] < 7 and bo["shell_count"] > 3
    assert bo["boats"] == 0 and bo["shells"] == bo["shell_count"]
    assert result["winners"] == ["Ana"]


def test_the_rulebook_example_is_laid_with_catalogue_tiles() -> None:
    catalogue = default_catalogue()
    lying: dict[Meaning, str] = {}
    for tile in catalogue:
        for rotation in (0,) if tile.meaning.palms else ROTATIONS:
            lying.setdefault(tile.meaning.rotated(rotation), tile.id)
    used: Counter[str] = Counter()
    for player in json.loads(EXAMPLE.read_text(encoding="utf-8"))["players"]:
        cells = [cell for row in player["board"] for cell in row]
        for cell in [*cells, player["storage"]]:
            if cell is not None:
                meaning = Meaning.from_mapping(cell)
                assert meaning in lying, f"{player['name']}: {cell} is not a catalogue tile"
                used[lying[meaning]] += 1
    counts = {tile.id: tile.count for tile in catalogue}
    assert all(n <= counts[tile] for tile, n in used.items()), "more copies than the box holds"


def test_score_table_shows_each_line_per_player(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["score", str(EXAMPLE)]) == 0
    out, err = capsys.readouterr()
    assert err == ""
    lines = out.splitlines()
    assert lines[0].split() == ["Ana", "Bo"]
    rows = {line[:18].strip(): line[18:].split() for line in lines[1:] if line[:1].isalpha()}
    assert rows["palms without hut"][0] == "10"
    assert rows["palms with hut"][0] == "12"
    assert rows["complete leis"][0] == "10"
    assert rows["boats"][:3] == ["7", "->", "7"]
    assert rows["wooden shells"][:3] == ["3", "->", "0"]
    assert rows["empty fields"][0] == "-2"
    assert rows["total"][0] == "37"
    assert "  Ana: (1, 2), (1, 3)" in lines
    assert lines[-1] == "winner: Ana"
    # aligned: every score row is as wide as the header
    assert len({len(line) for line in lines[1:8] if not line.startswith("-")}) == 1


def test_shared_win_is_shown(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    game = json.loads(EXAMPLE.read_text(encoding="utf-8"))
    game["players"][1] = dict(game["players"][0], name="Bo")
    path = tmp_path / "tie.json"
    path.write_text(json.dumps(game), encoding="utf-8")
    assert main(["score", str(path)]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "winners (shared): Ana, Bo"


def _edit(change: Callable[[dict[str, Any]], object]) -> Callable[[Path], Path]:
    def make(tmp: Path) -> Path:
        game = json.loads(EXAMPLE.read_text(encoding="utf-8"))
        change(game)
        path = tmp / "game.json"
        path.write_text(json.dumps(game), encoding="utf-8")
        return path

    return make


def _text(content: str) -> Callable[[Path], Path]:
    def make(tmp: Path) -> Path:
        path = tmp / "game.json"
        path.write_text(content, encoding="utf-8")
        return path

    return make


def _cell(player: int, r: int, c: int, value: Any) -> Callable[[dict[str, Any]], None]:
    return lambda g: g["players"][player]["board"][r].__setitem__(c, value)


def _atoll_with_tile_on_corner(g: dict[str, Any]) -> None:
    g["board_side"] = "atoll"
    g["layout"] = {
        "rows": 4,
        "cols": 4,
        "printed_boats": 2,
        "map": ["#...", "....", "....", "...."],
    }


def _five_on_the_atoll(g: dict[str, Any]) -> None:
    g["board_side"] = "atoll"
    g["players"] = [dict(g["players"][0], name=name) for name in ("A", "B", "C", "D", "E")]


BAD: dict[str, tuple[Callable[[Path], Path], str]] = {
    "missing file": (lambda tmp: tmp / "nope.json", "no such file"),
    "directory": (lambda tmp: tmp, "is a directory"),
    "not JSON": (_text('{"players": [}'), "is not valid JSON (line 1, column 14"),
    "wrong board size": (
        _edit(lambda g: g["players"][1]["board"].pop()),
        "player 2 (Bo), board has 3 rows but the layout has 4 rows of 4 cells",
    ),
    "middle with land N": (
        _edit(_cell(1, 2, 0, {"kind": "middle", "land": "N", "palms": 1})),
        "player 2 (Bo), board row 3, column 1: "
        "a middle tile has two opposite land edges (NS or EW), but land is N",
    ),
    "unknown symbol key": (
        _edit(_cell(0, 1, 2, {"kind": "single", "palm": 2})),
        "player 1 (Ana), board row 2, column 3: unknown key 'palm' in a tile",
    ),
    "negative shells": (
        _edit(lambda g: g["players"][0].update(shells=-1)),
        "player 1 (Ana), shells must be a whole number from 0 to 30 (the box holds 30 wooden "
        "shells), not -1",
    ),
    "five players on the atoll": (
        _edit(_five_on_the_atoll),
        "the atoll side is played by at most 4 players, but the game has 5",
    ),
    "non-playable cell holding a tile": (
        _edit(_atoll_with_tile_on_corner),
        "player 1 (Ana), board row 1, column 1: this cell is not playable, so it must be null",
    ),
}


@pytest.mark.parametrize("case", sorted(BAD))
@pytest.mark.parametrize("as_json", [False, True])
def test_bad_game_file_exits_2_with_one_line(
    case: str, as_json: bool, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    make, expected = BAD[case]
    path = make(tmp_path)
    argv = ["score", str(path), *(["--json"] if as_json else [])]
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.endswith("\n") and err.count("\n") == 1
    assert err.startswith(f"companion: {path}: ")
    assert expected in err


def test_help_lists_every_subcommand(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: companion")
    words = " ".join(out.split())  # argparse wraps the summaries to the terminal's width
    for name, _, summary in COMMANDS:
        assert name in out and summary in words


def test_score_help_and_version(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["score", "--help"]) == 0
    out = capsys.readouterr().out
    assert "GAME.json" in out and "--json" in out
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"companion {__version__}"


def _undescribed(parser: argparse.ArgumentParser, path: str) -> list[str]:
    """The options of `parser` and of its subcommands that --help shows without a word."""
    found = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found += _undescribed(sub, f"{path} {name}")
        elif not action.help and action.dest != "help":
            found.append(f"{path} {'/'.join(action.option_strings) or action.dest}")
    return found


def test_every_option_of_every_command_is_described() -> None:
    assert [o for name, _, _ in COMMANDS for o in _undescribed(build_parser(name), "")] == []


def test_demo_help_says_what_side_and_variant_choose(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", "--help"]) == 0
    lines = capsys.readouterr().out.splitlines()
    for option in ("--side", "--variant"):
        at = next(i for i, line in enumerate(lines) if line.strip().startswith(option))
        # The description follows on the option's line or on the next, indented further.
        described = lines[at].split("}", 1)[-1].strip() or lines[at + 1].startswith(" " * 8)
        assert described, lines[at : at + 2]


@pytest.mark.parametrize("argv", [[], ["score"], ["frobnicate"], ["score", "a.json", "--xml"]])
def test_usage_errors_exit_2(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert out == "" and "usage: companion" in err


def test_ctrl_c_exits_130_quietly(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def interrupted(path: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr("app.score.load_game_file", interrupted)
    assert main(["score", str(EXAMPLE)]) == 130
    assert capsys.readouterr() == ("", "")


def _run(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *argv], cwd=ROOT, capture_output=True, text=True, timeout=60, check=False
    )


def test_python_dash_m_app_scores_and_fails_like_main(tmp_path: Path) -> None:
    done = _run("-m", "app", "score", str(EXAMPLE), "--json")
    assert done.returncode == 0 and done.stderr == ""
    assert json.loads(done.stdout)["players"][0] == RULEBOOK_ANA

    missing = tmp_path / "nope.json"
    done = _run("-m", "app", "score", str(missing))
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == f"companion: {missing}: no such file\n"


def test_help_does_not_import_any_subcommand() -> None:
    code = (
        "import sys\n"
        "from app.cli import main\n"
        "assert main(['--help']) == 0\n"
        "heavy = ('cv2', 'numpy', 'flask', 'app.score')\n"
        "print([m for m in heavy if m in sys.modules])\n"
    )
    done = _run("-c", code)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "[]"


NAMES_THAT_ARE_NOT_PRINTABLE = ["\ud800", "\x1b[2J\x1b[31mAna", "\u202eanA", "Bo\nwinner: Cy"]


@pytest.mark.parametrize("as_json", [False, True])
def test_names_that_are_not_printable_reach_the_terminal_escaped(
    tmp_path: Path, as_json: bool
) -> None:
    game = json.loads(EXAMPLE.read_text(encoding="utf-8"))
    game["players"] = [
        {**game["players"][0], "name": name} for name in NAMES_THAT_ARE_NOT_PRINTABLE
    ]
    path = tmp_path / "game.json"
    path.write_text(json.dumps(game), encoding="ascii")
    done = _run("-m", "app", "score", str(path), *(["--json"] if as_json else []))
    assert (done.returncode, done.stderr) == (0, "")
    assert all(line.isprintable() for line in done.stdout.splitlines())
    if as_json:
        names = [p["name"] for p in json.loads(done.stdout)["players"]]
        assert names == NAMES_THAT_ARE_NOT_PRINTABLE
    else:
        assert "\\ud800" in done.stdout and "\\x1b[2J" in done.stdout
        assert "\\u202eanA" in done.stdout and "Bo\\nwinner: Cy" in done.stdout


def test_an_error_naming_a_file_is_one_printable_line(tmp_path: Path) -> None:
    for name in ("two\nlines.json", "\x1b[2Jclear.json", "\u202enosj.json"):
        missing = tmp_path / name
        done = _run("-m", "app", "score", str(missing))
        assert (done.returncode, done.stdout) == (2, "")
        assert done.stderr.count("\n") == 1 and done.stderr[:-1].isprintable()
        assert "no such file" in done.stderr
