"""The browser tests find Chromium however it is installed and never skip silently in CI."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from tests.web.chromium import KNOWN_PLACES, find_chromium, need_browser


def executable(path: Path) -> Path:
    path.write_text("#!/bin/sh\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def test_chromium_named_in_the_environment_comes_first(tmp_path: Path) -> None:
    mine = executable(tmp_path / "my-chromium")
    assert find_chromium({"CHROMIUM": str(mine)}, lambda name: None) == mine


def test_chromium_browser_on_the_path_is_found(tmp_path: Path) -> None:
    wrapper = executable(tmp_path / "chromium-browser")
    found = find_chromium({}, lambda name: str(wrapper) if name == "chromium-browser" else None)
    installed = [Path(p) for p in KNOWN_PLACES if Path(p).exists()]
    assert found == (installed[0] if installed else wrapper)


def test_a_name_that_is_no_executable_file_is_passed_over(tmp_path: Path) -> None:
    plain = tmp_path / "chromium"
    plain.write_text("not a program")
    found = find_chromium({"CHROMIUM": str(plain)}, lambda name: str(tmp_path))
    assert found != plain and found != tmp_path


@pytest.mark.parametrize("have_playwright", [True, False])
def test_without_a_browser_ci_fails_and_a_developer_skips(have_playwright: bool) -> None:
    chromium = None if have_playwright else Path("/usr/bin/chromium")
    with pytest.raises(pytest.fail.Exception, match="under CI=true the browser tests must run"):
        need_browser(have_playwright, chromium, {"CI": "true"})
    with pytest.raises(pytest.skip.Exception):
        need_browser(have_playwright, chromium, {})


def test_with_a_browser_the_tests_run(tmp_path: Path) -> None:
    chromium = executable(tmp_path / "chromium")
    assert need_browser(True, chromium, {"CI": "true"}) == chromium
    assert need_browser(True, chromium, {}) == chromium
