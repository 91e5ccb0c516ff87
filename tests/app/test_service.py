"""`companion run` as a process: it serves, keeps its made-up PIN private, stops on SIGTERM,
and starts with a damaged saved game."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from app.hostpin import PIN_FILE
from companion.actions import Pass, Turn
from companion.game import Seat
from companion.journal import Journal
from companion.session import Session


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


#: `python -m app` with a file size limit (RLIMIT_FSIZE): writes past it fail.
LIMITED = """
import resource, runpy, signal, sys
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write fails with EFBIG instead
resource.setrlimit(resource.RLIMIT_FSIZE, ({limit}, {limit}))
sys.argv[0] = "companion"
runpy.run_module("app", run_name="__main__")
"""


@dataclass
class Service:
    port: int
    output: str  # up to the line that says where the PIN is
    rest: str = ""  # after SIGTERM
    returncode: int | None = None


@contextmanager
def running(tmp_path: Path, file_size_limit: int | None = None) -> Iterator[Service]:
    """`companion run` on a free port with its state in tmp_path/state, until SIGTERM; with
    `file_size_limit`, no file it writes may grow beyond that many bytes (as on a full disk)."""
    port = _free_port()
    config = tmp_path / "companion.toml"
    config.write_text(
        f'[table]\nstate_dir = "{tmp_path / "state"}"\n'
        f'[web]\nhost = "127.0.0.1"\nport = {port}\nadvertise = false\n'
        '[camera]\nkind = "none"\n'
    )
    env = dict(os.environ, GPIOZERO_PIN_FACTORY="mock")
    command = [sys.executable, "-m", "app", "run", "--config", str(config)]
    if file_size_limit is not None:
        command[1:3] = ["-c", LIMITED.format(limit=file_size_limit)]
    proc = subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
    )
    service = Service(port, "")
    try:
        assert proc.stdout is not None
        lines: list[str] = []
        deadline = time.monotonic() + 45
        while time.monotonic() < deadline:
            line = proc.stdout.readline()
            if not line:
                break
            lines.append(line)
            if "Host PIN" in line:
                break
        service.output = "".join(lines)
        yield service
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            service.rest, _ = proc.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            service.rest, _ = proc.communicate()
        service.returncode = proc.returncode


@pytest.mark.slow
@pytest.mark.timeout(60)
def test_the_service_keeps_its_pin_out_of_its_output(tmp_path: Path) -> None:
    with running(tmp_path) as service:
        pin_file = tmp_path / "state" / PIN_FILE
        assert "Host PIN: kept in" in service.output, service.output
        pin = pin_file.read_text().strip()
        assert re.fullmatch(r"[0-9]{6}", pin)
        assert pin not in service.output
    assert pin not in service.rest
    assert service.returncode == 0


@pytest.mark.slow
@pytest.mark.timeout(60)
def test_the_service_starts_with_a_damaged_saved_game_and_says_so(tmp_path: Path) -> None:
    saved = Session(journal=Journal(tmp_path / "state"))
    saved.start_game([Seat("Ana", 1), Seat("Bo", 2)], seed=1)
    saved.play(Turn(1, Pass()))
    path = Journal(tmp_path / "state").current_path()
    assert path is not None
    with path.open("ab") as fh:
        fh.write(b"\x00\x00\x00\n")
    with running(tmp_path) as service:
        assert "Host PIN: kept in" in service.output, service.output
        assert (
            f"the saved game is damaged: line 5 of {path.name} is damaged; a copy is kept as "
            f"{path.name}.damaged-"
        ) in service.output
        url = f"http://127.0.0.1:{service.port}/api/state"
        with urllib.request.urlopen(url, timeout=10) as response:
            state = json.load(response)
        assert state["game"] is None and state["damage"]["turn_number"] == 1
    assert service.returncode == 0


@pytest.mark.slow
@pytest.mark.timeout(60)
def test_the_service_starts_on_a_full_disk(tmp_path: Path) -> None:
    saved = Session(journal=Journal(tmp_path / "state"))
    saved.start_game([Seat("Ana", 1), Seat("Bo", 2)], seed=1)
    saved.play(Turn(1, Pass()))
    path = Journal(tmp_path / "state").current_path()
    assert path is not None
    on_disk = path.read_bytes()
    with running(tmp_path, file_size_limit=len(on_disk)) as service:
        assert "Host PIN: kept in" in service.output, service.output
        assert "The game could not be saved (File too large)." in service.output
        url = f"http://127.0.0.1:{service.port}/api/state"
        with urllib.request.urlopen(url, timeout=10) as response:
            state = json.load(response)
        assert state["game"]["turn_number"] == 1
    assert service.returncode == 0
    assert path.read_bytes() == on_disk
