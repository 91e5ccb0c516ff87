"""`companion run` as a process: it serves, keeps its made-up PIN private, and stops on SIGTERM."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from web.hostpin import PIN_FILE


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.timeout(60)
def test_the_service_keeps_its_pin_out_of_its_output(tmp_path: Path) -> None:
    port = _free_port()
    config = tmp_path / "companion.toml"
    config.write_text(
        f'[table]\nstate_dir = "{tmp_path / "state"}"\n'
        f'[web]\nhost = "127.0.0.1"\nport = {port}\nadvertise = false\n'
        '[camera]\nkind = "none"\n'
    )
    env = dict(os.environ, GPIOZERO_PIN_FACTORY="mock")
    proc = subprocess.Popen(
        [sys.executable, "-m", "companion", "run", "--config", str(config)],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env,
    )
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
        output = "".join(lines)
        pin_file = tmp_path / "state" / PIN_FILE
        assert "Host PIN: kept in" in output, output
        pin = pin_file.read_text().strip()
        assert re.fullmatch(r"[0-9]{6}", pin)
        assert pin not in output
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            rest, _ = proc.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            rest, _ = proc.communicate()
    assert pin not in rest
    assert proc.returncode == 0
