"""The app's tests use the packs of the vision tests, the box and frames of the teaching
tests (`source`, `script`) and the Session, app and host of the web tests."""

from tests.vision.box.test_teach import script, source
from tests.vision.conftest import pack_dirs, pack_ink, pack_lagoon, pack_random
from tests.web.conftest import app, client, host, session

__all__ = [
    "app",
    "client",
    "host",
    "pack_dirs",
    "pack_ink",
    "pack_lagoon",
    "pack_random",
    "script",
    "session",
    "source",
]
