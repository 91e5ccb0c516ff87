"""The development venv holds exactly the versions of constraints/dev.txt, the tested set.

A release elsewhere must not change what CI runs: `./dev` installs within the lock, and a
package pyproject.toml asks for that the lock does not name would be resolved afresh."""

from __future__ import annotations

import re
import tomllib
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[1]
LOCK = ROOT / "constraints" / "dev.txt"


def locked() -> dict[str, str]:
    pins: dict[str, str] = {}
    for line in LOCK.read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            match = re.fullmatch(r"([A-Za-z0-9._-]+)==([^\s;]+)", line)
            assert match, f"constraints/dev.txt: not an exact pin: {line!r}"
            pins[canonicalize_name(match[1])] = match[2]
    return pins


def asked_for() -> list[Requirement]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    names = [
        *project["project"]["dependencies"],
        *project["project"]["optional-dependencies"]["dev"],
    ]
    names += project["build-system"]["requires"]
    return [Requirement(name) for name in names]


def test_the_lock_pins_everything_pyproject_asks_for_within_its_ranges() -> None:
    pins = locked()
    for requirement in asked_for():
        name = canonicalize_name(requirement.name)
        assert name in pins, f"constraints/dev.txt does not pin {requirement.name}"
        assert requirement.specifier.contains(pins[name], prereleases=True), (
            f"constraints/dev.txt pins {name}=={pins[name]}, outside {requirement}"
        )


@pytest.mark.skipif(Path("/etc/rpi-issue").exists(), reason="a Pi installs its release's file")
def test_the_venv_holds_the_locked_versions() -> None:
    pins = locked()
    for requirement in asked_for():
        name = canonicalize_name(requirement.name)
        if name == "setuptools":  # the build backend's, not installed in the venv
            continue
        assert metadata.version(name) == pins[name], (
            f"{name} {metadata.version(name)} is installed, constraints/dev.txt pins {pins[name]}"
        )
