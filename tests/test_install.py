"""The Raspberry Pi install, as pip sees it on each supported Raspberry Pi OS release.

For each release a venv is made holding apt's numpy at the release's version (on the Pi the
venv sees it through --system-site-packages; pip treats both alike). pip then resolves the
README's Pi install step (`pip install -c constraints/<release>.txt -e .`, plus the dev extra
that `./dev` adds) for the release's Python version and a 64-bit Pi's platforms (aarch64, the
release's glibc), wheels only, as a dry run. The check: numpy is not among what pip would
install, and every package it would install is a wheel built for that Pi (nothing to
compile). Needs PyPI; pip's cache keeps repeat runs short. Environment markers are evaluated
with this machine's interpreter.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from packaging.tags import compatible_tags, cpython_tags
from packaging.utils import canonicalize_name, parse_wheel_filename

ROOT = Path(__file__).resolve().parents[1]

pytestmark = [pytest.mark.network, pytest.mark.slow]


@dataclass(frozen=True)
class PiOs:
    """What a Raspberry Pi OS release brings that pip must live with."""

    codename: str
    python: str  # the release's python3
    numpy: str  # the release's python3-numpy (apt), which picamera2's simplejpeg is built for
    glibc: tuple[int, int]  # decides which manylinux wheels run

    def platforms(self) -> list[str]:
        """Every wheel platform tag pip on this 64-bit Pi accepts from PyPI."""
        major, newest = self.glibc
        tags = [f"manylinux_{major}_{minor}_aarch64" for minor in range(newest, 16, -1)]
        return [*tags, "manylinux2014_aarch64"]


# From `apt-cache policy python3 python3-numpy libc6` on each release.
RELEASES = [
    PiOs("bookworm", python="3.11", numpy="1.24.2", glibc=(2, 36)),
    PiOs("trixie", python="3.13", numpy="2.2.4", glibc=(2, 41)),
]


def _pip(python: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """This venv's pip working on the environment of `python`."""
    command = [sys.executable, "-m", "pip", "--python", str(python), *args]
    env = {**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    return subprocess.run(command, capture_output=True, text=True, env=env, timeout=300)


def _dependencies() -> list[str]:
    """The project's run-time dependencies and the dev extra (`./dev` installs both)."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    return [*project["dependencies"], *project["optional-dependencies"]["dev"]]


def resolve(release: PiOs, venv: Path) -> dict[str, Any]:
    """pip's report for the README's Pi install step in a venv holding apt's numpy."""
    constraints = ROOT / "constraints" / f"{release.codename}.txt"
    assert constraints.is_file(), f"constraints/{release.codename}.txt is missing"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    done = _pip(python, "install", "--quiet", "--only-binary=:all:", f"numpy=={release.numpy}")
    assert done.returncode == 0, done.stderr
    platforms = [arg for tag in release.platforms() for arg in ("--platform", tag)]
    report = venv / "report.json"
    done = _pip(
        python,
        "install",
        "--dry-run",
        "--quiet",
        "--report",
        str(report),
        "--python-version",
        release.python,
        *platforms,
        "--only-binary=:all:",
        "--constraint",
        str(constraints),
        *_dependencies(),
    )
    assert done.returncode == 0, f"pip cannot install on {release.codename}:\n{done.stderr}"
    result: dict[str, Any] = json.loads(report.read_text(encoding="utf-8"))
    return result


@pytest.fixture(scope="module", params=RELEASES, ids=lambda release: release.codename)
def pi(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Any:
    release: PiOs = request.param
    venv = tmp_path_factory.mktemp(release.codename) / "venv"
    return release, resolve(release, venv)


def test_pip_keeps_apts_numpy(pi: tuple[PiOs, dict[str, Any]]) -> None:
    release, report = pi
    replaced = [
        f"{item['metadata']['name']} {item['metadata']['version']}"
        for item in report["install"]
        if canonicalize_name(item["metadata"]["name"]) == "numpy"
    ]
    assert replaced == [], f"on {release.codename} pip would replace apt's numpy {release.numpy}"


def test_every_package_is_a_wheel_for_the_pi(pi: tuple[PiOs, dict[str, Any]]) -> None:
    release, report = pi
    version = tuple(int(part) for part in release.python.split("."))
    platforms = release.platforms()
    runs = {
        *cpython_tags(version, platforms=platforms),
        *compatible_tags(version, f"cp{version[0]}{version[1]}", platforms),
    }
    assert report["install"], "pip would install nothing: the check sees no dependencies"
    for item in report["install"]:
        filename = item["download_info"]["url"].rsplit("/", 1)[-1]
        assert filename.endswith(".whl"), f"{filename} is not a wheel: the Pi would compile it"
        tags = parse_wheel_filename(filename)[3]
        assert tags & runs, f"{filename} does not run on {release.codename} (aarch64)"


def test_readme_installs_with_the_releases_constraints() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert (
        "pip install -c constraints/$(. /etc/os-release && echo $VERSION_CODENAME).txt -e ."
        in readme
    )
    for release in RELEASES:
        assert (ROOT / "constraints" / f"{release.codename}.txt").is_file()
