"""Talking to systemd: READY=1 once serving, WATCHDOG=1 while the camera is alive.

The protocol is one datagram to the socket named by $NOTIFY_SOCKET (sd_notify(3)); without
that variable (not started by systemd) every call does nothing. The unmaintained `sdnotify`
package does the same in more lines, so the few here are the project's own.
"""

from __future__ import annotations

import os
import socket
from contextlib import suppress


class Notifier:
    """sd_notify for a Type=notify service with WatchdogSec."""

    def __init__(self, address: str | None = None) -> None:
        self.address = address if address is not None else os.environ.get("NOTIFY_SOCKET", "")
        usec = os.environ.get("WATCHDOG_USEC", "")
        self.watchdog_interval = int(usec) / 1e6 / 2 if usec.isdigit() else None

    @property
    def enabled(self) -> bool:
        return bool(self.address)

    def _send(self, message: str) -> None:
        if not self.address:
            return
        target = "\0" + self.address[1:] if self.address.startswith("@") else self.address
        # systemd gone (shutting down): nothing to tell
        with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock, suppress(OSError):
            sock.sendto(message.encode(), target)

    def ready(self, status: str = "Serving") -> None:
        self._send(f"READY=1\nSTATUS={status}")

    def status(self, status: str) -> None:
        self._send(f"STATUS={status}")

    def watchdog(self) -> None:
        self._send("WATCHDOG=1")

    def stopping(self) -> None:
        self._send("STOPPING=1")
