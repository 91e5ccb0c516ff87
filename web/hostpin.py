"""The host PIN `companion run` makes for itself when its config sets none.

It is kept in the state folder (`host-pin`, readable by the service's user alone) so that
it survives restarts, watchdog restarts included, and it is never written to the log: under
systemd standard output is the journal, which any user in the `adm` or `systemd-journal`
group may read. The host reads it once with `sudo cat /var/lib/maori-companion/host-pin`
(or sets `[web] pin` in the config).
"""

from __future__ import annotations

from pathlib import Path

from companion.errors import DataError
from companion.journal import write_atomically
from web.settings import PIN_PATTERN, generate_pin

PIN_FILE = "host-pin"


def kept_pin(state_dir: Path) -> tuple[str, Path]:
    """The PIN kept in `state_dir` (made and stored now if there is none) and its file."""
    path = state_dir / PIN_FILE
    try:
        text = path.read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        text = ""
    except UnicodeDecodeError:
        text = ""  # damaged: a new PIN replaces it
    except OSError as exc:
        raise DataError(str(path), f"the kept host PIN cannot be read ({exc.strerror}).") from None
    if PIN_PATTERN.fullmatch(text):
        return text, path
    pin = generate_pin()
    try:
        state_dir.mkdir(parents=True, exist_ok=True)
        write_atomically(path, pin + "\n", mode=0o600)
    except OSError as exc:
        raise DataError(str(path), f"the host PIN cannot be kept here ({exc.strerror}).") from None
    return pin, path
