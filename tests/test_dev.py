"""`./dev`'s first install, as a newcomer's terminal shows it: one line saying what it does,
none of the build backend's notes, and pip's errors still shown. Runs the real script on a
copy of the project whose dependencies are left out (the install itself is what is looked
at). Needs PyPI (pip and the build backend at their tested versions)."""

from __future__ import annotations

import os
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest
import tomli_w

ROOT = Path(__file__).resolve().parents[1]

pytestmark = [pytest.mark.network, pytest.mark.slow]


def _project(where: Path, dependencies: list[str]) -> Path:
    """A copy of ./dev, its constraints and pyproject.toml with `dependencies` and no extras'
    packages, and the packages as empty ones."""
    shutil.copy2(ROOT / "dev", where / "dev")
    shutil.copytree(ROOT / "constraints", where / "constraints")
    project = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))
    project["project"]["dependencies"] = dependencies
    project["project"]["optional-dependencies"] = {"dev": []}
    project["project"]["readme"] = "README.md"
    (where / "pyproject.toml").write_text(tomli_w.dumps(project), "utf-8")
    (where / "README.md").write_text("A copy for a test.\n", "utf-8")
    for package in ("app", "companion", "vision", "hardware", "web"):
        (where / package).mkdir()
        (where / package / "__init__.py").write_text("", "utf-8")
    return where / "dev"


def _first_install(dev: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PIP_CONSTRAINT")}
    # `./dev mutate` installs, then runs what the copy does not have: only the install counts.
    return subprocess.run(
        ["bash", str(dev), "mutate"], capture_output=True, text=True, env=env, timeout=600
    )


def test_the_first_install_says_what_it_does_in_one_line_and_shows_no_backend_notes(
    tmp_path: Path,
) -> None:
    done = _first_install(_project(tmp_path, []))
    before_the_command = done.stderr.split("No module named")[0]
    lines = [line for line in before_the_command.splitlines() if line.strip()]
    assert lines[0].startswith("dev: installing the companion"), done.stderr
    install = [line for line in lines[1:] if "tests.mutate" not in line]
    assert not any(
        "Editable installation" in line or "BuildBackendWarning" in line for line in lines
    )
    assert install == [], done.stderr
    assert (tmp_path / ".venv" / ".installed").exists()


def test_an_install_that_fails_still_says_why(tmp_path: Path) -> None:
    done = _first_install(_project(tmp_path, ["maori-companion-no-such-package==0.0.1"]))
    assert done.returncode != 0
    assert "ERROR" in done.stderr and "maori-companion-no-such-package" in done.stderr
