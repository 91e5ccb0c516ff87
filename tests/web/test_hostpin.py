"""The PIN `companion run` makes for itself: kept, private, the same after a restart."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from companion.errors import DataError
from web.hostpin import PIN_FILE, kept_pin
from web.settings import PIN_PATTERN


def test_a_pin_is_made_once_and_kept_across_restarts(tmp_path: Path) -> None:
    pin, path = kept_pin(tmp_path / "state")
    assert PIN_PATTERN.fullmatch(pin)
    assert path == tmp_path / "state" / PIN_FILE
    assert kept_pin(tmp_path / "state") == (pin, path)


def test_the_kept_pin_is_readable_by_its_owner_alone(tmp_path: Path) -> None:
    _pin, path = kept_pin(tmp_path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert not list(tmp_path.glob(".*.tmp"))


def test_a_damaged_pin_file_is_replaced_by_a_new_pin(tmp_path: Path) -> None:
    (tmp_path / PIN_FILE).write_text("not a pin\n")
    pin, path = kept_pin(tmp_path)
    assert PIN_PATTERN.fullmatch(pin)
    assert path.read_text().strip() == pin


def test_a_pin_set_by_hand_in_the_file_is_used(tmp_path: Path) -> None:
    (tmp_path / PIN_FILE).write_text("0427\n")
    assert kept_pin(tmp_path)[0] == "0427"


def test_a_state_folder_it_cannot_write_is_one_clear_sentence(tmp_path: Path) -> None:
    not_a_folder = tmp_path / "state"
    not_a_folder.write_text("a file where the state folder should be")
    with pytest.raises(DataError, match="host PIN cannot be"):
        kept_pin(not_a_folder)
