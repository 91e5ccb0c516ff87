"""The PIN `companion run` makes for itself: kept, private, the same after a restart."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from app.hostpin import PIN_FILE, kept_pin
from companion.errors import DataError
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


@pytest.mark.parametrize(
    "damaged",
    [b"not a pin\n", b"", b"\xff\xfe12\n", b"12345\x00\n", b"1" * 100 + b"\n"],
)
def test_a_damaged_pin_file_is_replaced_by_a_new_pin_and_the_log_says_so(
    tmp_path: Path, damaged: bytes, caplog: pytest.LogCaptureFixture
) -> None:
    (tmp_path / PIN_FILE).write_bytes(damaged)
    pin, path = kept_pin(tmp_path)
    assert PIN_PATTERN.fullmatch(pin)
    assert path.read_text().strip() == pin
    assert caplog.messages == [f"{path} is damaged: a new host PIN replaces it"]


@pytest.mark.parametrize("mode", [0o644, 0o640, 0o604, 0o660])
def test_a_pin_file_others_may_read_is_made_the_owners_alone(
    tmp_path: Path, mode: int, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / PIN_FILE
    path.write_text("042719\n")
    path.chmod(mode)
    assert kept_pin(tmp_path) == ("042719", path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert caplog.messages == [
        f"{path} could be read by other users (mode {mode:04o}): its mode is now 0600"
    ]
    assert "042719" not in caplog.text


def test_a_good_private_pin_file_says_nothing(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    pin, _path = kept_pin(tmp_path)
    assert kept_pin(tmp_path)[0] == pin
    assert not caplog.messages


def test_a_pin_set_by_hand_in_the_file_is_used(tmp_path: Path) -> None:
    (tmp_path / PIN_FILE).write_text("042719\n")
    assert kept_pin(tmp_path)[0] == "042719"


@pytest.mark.parametrize("short", ["0427", "12345"])
def test_a_kept_pin_too_short_to_outlast_guessing_is_replaced(
    tmp_path: Path, short: str, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / PIN_FILE
    path.write_text(short + "\n")
    path.chmod(0o600)
    pin, _path = kept_pin(tmp_path)
    assert len(pin) == 6 and pin != short
    assert path.read_text() == pin + "\n"
    assert caplog.messages == [
        f"{path} holds a PIN of fewer than 6 digits, too easy to guess: a new host PIN replaces it"
    ]
    assert short not in caplog.text.replace(str(path), "")


def test_a_state_folder_it_cannot_write_is_one_clear_sentence(tmp_path: Path) -> None:
    not_a_folder = tmp_path / "state"
    not_a_folder.write_text("a file where the state folder should be")
    with pytest.raises(DataError, match="host PIN cannot be"):
        kept_pin(not_a_folder)
