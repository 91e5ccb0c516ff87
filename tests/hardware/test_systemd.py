"""The systemd notifier speaks sd_notify to a real datagram socket."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from hardware.systemd import Notifier


def test_ready_and_watchdog_reach_the_socket(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "notify"
    server = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    server.bind(str(path))
    server.settimeout(2)
    monkeypatch.setenv("NOTIFY_SOCKET", str(path))
    monkeypatch.setenv("WATCHDOG_USEC", "30000000")
    notifier = Notifier()
    assert notifier.enabled and notifier.watchdog_interval == 15
    notifier.ready("Serving on port 8080")
    assert server.recv(1024) == b"READY=1\nSTATUS=Serving on port 8080"
    notifier.watchdog()
    assert server.recv(1024) == b"WATCHDOG=1"
    server.close()


def test_outside_systemd_it_does_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NOTIFY_SOCKET", raising=False)
    notifier = Notifier()
    assert not notifier.enabled
    notifier.ready()  # no error, no effect
