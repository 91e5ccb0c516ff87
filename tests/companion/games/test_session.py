"""The board games' session: every move of Tongiaki and Giants is in the journal before anyone
sees it, a move the disk cannot take is not made, a damaged file is kept and the host offered
the last good move."""

from __future__ import annotations

import json
import os
import re
import stat
from collections.abc import Callable
from pathlib import Path

import pytest

from companion.errors import IllegalMove, NotNow
from companion.games import game_class
from companion.games.base import Action
from companion.games.session import BOARD_DIR, BoardSession, board_journal
from companion.journal import StorageError
from tests.companion.test_journal import Disk

NAMES = {"tongiaki": ["Ana", "Bo"], "giants": ["Ana", "Bo", "Cy"]}
GAMES = sorted(NAMES)


def played(state_dir: Path, key: str, moves: int = 6) -> BoardSession:
    """A board session in `state_dir` with a game of `key` and `moves` moves, one undone."""
    board = BoardSession(board_journal(state_dir))
    board.start(key, NAMES[key], seed=3)
    for _ in range(moves):
        board.play(0)
    board.undo()
    return board


def journal_lines(state_dir: Path) -> list[bytes]:
    path = board_journal(state_dir).current_path()
    assert path is not None
    return path.read_bytes().splitlines(keepends=True)


@pytest.mark.parametrize("key", GAMES)
def test_a_resumed_board_game_is_the_same_game(tmp_path: Path, key: str) -> None:
    board = played(tmp_path, key)
    game = board.game
    assert game is not None
    lines = journal_lines(tmp_path)
    # One event a line, the game's own log; the setup names the game.
    assert [json.loads(line) for line in lines] == game.events
    assert json.loads(lines[0])["game"] == key
    assert (tmp_path / BOARD_DIR / "current").is_file()
    again = BoardSession.resume(board_journal(tmp_path))
    assert again.damage is None and again.game is not None
    assert again.game.events == game.events
    assert again.game.view() == game.view() and again.game.score() == game.score()
    again.play(0)  # and it goes on in the same file
    assert len(journal_lines(tmp_path)) == len(lines) + 1


@pytest.mark.parametrize("key", GAMES)
def test_a_damaged_board_game_is_kept_aside_and_resumed_at_its_last_good_move(
    tmp_path: Path, key: str
) -> None:
    played(tmp_path, key, moves=6)  # setup, 6 actions, an undo
    path = board_journal(tmp_path).current_path()
    assert path is not None
    lines = journal_lines(tmp_path)
    lines[4] = b'{"type":"action","act\n'  # the fourth action: three stand before it
    damaged = b"".join(lines)
    path.write_bytes(damaged)
    first = BoardSession.resume(board_journal(tmp_path))
    second = BoardSession.resume(board_journal(tmp_path))
    for resumed in (first, second):
        assert resumed.game is None and resumed.damage is not None
        assert resumed.damage.problem == f"line 5 of {path.name} is damaged"
        assert resumed.damage.moves == 3
    copies = sorted(path.parent.glob(f"{path.name}.damaged-*"))
    assert len(copies) == 1 and copies[0].read_bytes() == damaged
    assert re.fullmatch(rf"{re.escape(path.name)}\.damaged-\d{{8}}T\d{{6}}Z", copies[0].name)
    assert first.damage is not None and first.damage.to_json() == {
        "problem": f"line 5 of {path.name} is damaged",
        "kept": copies[0].name,
        "moves": 3,
    }
    assert first.resume_last_good() == f"{game_class(key).title} goes on after move 3."
    assert first.damage is None and first.game is not None
    expected = game_class(key).new(NAMES[key], 3)
    for _ in range(3):
        expected.push(expected.legal_actions()[0])
    assert first.game.view() == expected.view()
    first.play(0)
    again = BoardSession.resume(board_journal(tmp_path))
    assert again.game is not None and again.game.events == first.game.events
    assert path.read_bytes() == damaged  # the damaged file is left as it was


@pytest.mark.parametrize("key", GAMES)
def test_an_action_that_does_not_replay_is_damage_too(tmp_path: Path, key: str) -> None:
    played(tmp_path, key, moves=2)
    path = board_journal(tmp_path).current_path()
    assert path is not None
    with path.open("ab") as file:
        file.write(b'{"type":"action","action":{"type":"fly"}}\n')
    resumed = BoardSession.resume(board_journal(tmp_path))
    assert resumed.damage is not None and resumed.damage.moves == 1
    assert resumed.damage.problem.startswith(f"{path.name}: event 5:")


def test_a_setup_naming_no_board_game_leaves_only_a_new_game(tmp_path: Path) -> None:
    journal = board_journal(tmp_path)
    journal.start({"type": "setup", "game": "chess"})
    resumed = BoardSession.resume(board_journal(tmp_path))
    assert resumed.damage is not None and resumed.damage.moves is None
    assert "no game 'chess'" in resumed.damage.problem
    with pytest.raises(NotNow, match="no good move: start a new game"):
        resumed.resume_last_good()
    resumed.start("giants", NAMES["giants"], seed=1)
    assert resumed.damage is None
    assert BoardSession.resume(board_journal(tmp_path)).game is not None


@pytest.mark.parametrize("key", GAMES)
def test_a_move_the_disk_cannot_take_is_not_made(
    tmp_path: Path, key: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    board = played(tmp_path, key, moves=3)
    assert board.game is not None
    before = (board.game.view(), list(board.game.events))
    on_disk = journal_lines(tmp_path)
    disk = Disk(monkeypatch)
    changes: tuple[Callable[[], Action], ...] = (lambda: board.play(0), board.undo)
    for free in (0, 9):  # nothing fits; a few bytes of the line
        disk.free = free
        for change in changes:
            with pytest.raises(
                StorageError, match=r"^The board game could not be saved: the disk is full\.$"
            ):
                change()
            assert (board.game.view(), board.game.events) == before
            assert journal_lines(tmp_path) == on_disk
        game = board.game
        with pytest.raises(StorageError, match=r"^The new game could not be saved"):
            board.start(key, NAMES[key], seed=9)
        assert board.game is game
    assert board.unsaved == "The new game could not be saved: the disk is full."
    disk.free = None
    board.play(0)
    assert board.unsaved is None
    again = BoardSession.resume(board_journal(tmp_path))
    assert again.game is not None and again.game.events == board.game.events


def test_changes_wake_subscribers_and_listeners_and_a_stale_page_is_refused() -> None:
    board = BoardSession(version=10)
    heard: list[str] = []
    board.listeners.on_change.append(heard.append)
    sub = board.subscribe()
    assert sub.wait(0) == 10
    assert sub.wait(0) is None  # nothing new
    board.start("tongiaki", NAMES["tongiaki"], seed=5)
    assert sub.wait(0) == 11
    with pytest.raises(NotNow, match="changed since this page was drawn"):
        board.play(0, version=10)
    with pytest.raises(IllegalMove, match="no legal action number 999"):
        board.play(999)
    board.play(0, version=11)
    assert sub.wait(0) == 12
    assert heard == [
        "A game of Tongiaki for Ana, Bo.",
        "Tongiaki: place (island tonga, beach 0)",
    ]
    sub.close()
    assert board.subscriber_count == 0


def test_nothing_to_play_or_undo_without_a_game() -> None:
    board = BoardSession()
    with pytest.raises(NotNow, match=r"^No board game is being played: start one first\.$"):
        board.play(0)
    with pytest.raises(NotNow, match=r"^No board game is being played"):
        board.undo()
    with pytest.raises(NotNow, match=r"^There is no damaged board game to resume\.$"):
        board.resume_last_good()


def test_board_game_files_are_their_owners_alone(tmp_path: Path) -> None:
    old = os.umask(0o022)  # the usual umask: new files readable by everyone
    try:
        played(tmp_path / "state", "giants")
    finally:
        os.umask(old)
    folder = tmp_path / "state" / BOARD_DIR
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert {stat.S_IMODE(p.stat().st_mode) for p in folder.iterdir()} == {0o600}
