"""The host PIN `companion run` makes for itself when its config sets none.

It is kept in the state folder (`host-pin`, readable by the service's user alone) so that
it survives restarts, watchdog restarts included, and it is never written to the log: under
systemd standard output is the journal, which any user in the `adm` or `systemd-journal`
group may read. The host reads it once with `sudo cat /var/lib/maori-companion/host-pin`
(or sets `[web] pin` in the config). A damaged file, or one holding a PIN too short to
outlast guessing, is replaced by a new PIN, and a file other users may read is made its
owner's alone; the log says which (never the PIN).
"""

from __future__ import annotations

import logging
import os
import stat
from pathlib import Path

from companion.errors import DataError
from companion.journal import write_atomically
from web.settings import MIN_PIN_DIGITS, PIN_PATTERN, generate_pin, pin_too_short

log = logging.getLogger("companion.run")
PIN_FILE = "host-pin"
MAX_BYTES = 64  # far more than a PIN and its newline


def kept_pin(state_dir: Path) -> tuple[str, Path]:
    """The PIN kept in `state_dir` (made and stored now if there is none) and its file."""
    path = state_dir / PIN_FILE
    try:
        with path.open("rb") as fh:
            mode = stat.S_IMODE(os.fstat(fh.fileno()).st_mode)
            data = fh.read(MAX_BYTES + 1)
    except FileNotFoundError:
        data = None
    except OSError as exc:
        raise DataError(str(path), f"the kept host PIN cannot be read ({exc.strerror}).") from None
    if data is not None:
        text = data.decode("utf-8", "replace").strip() if len(data) <= MAX_BYTES else ""
        if pin_too_short(text):
            log.warning(
                "%s holds a PIN of fewer than %d digits, too easy to guess: a new host PIN "
                "replaces it",
                path,
                MIN_PIN_DIGITS,
            )
        elif not PIN_PATTERN.fullmatch(text):
            log.warning("%s is damaged: a new host PIN replaces it", path)
        elif not mode & 0o077:
            return text, path
        else:
            try:
                os.chmod(path, 0o600)
            except OSError as exc:
                log.warning(
                    "%s could be read by other users and its mode cannot be changed (%s): "
                    "a new host PIN replaces it",
                    path,
                    exc.strerror,
                )
            else:
                log.warning(
                    "%s could be read by other users (mode %04o): its mode is now 0600",
                    path,
                    mode,
                )
                return text, path
    pin = generate_pin()
    try:
        state_dir.mkdir(parents=True, exist_ok=True)
        write_atomically(path, pin + "\n", mode=0o600)
    except OSError as exc:
        raise DataError(str(path), f"the host PIN cannot be kept here ({exc.strerror}).") from None
    return pin, path
