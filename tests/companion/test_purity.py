"""companion/ is the game as a plain library: it never loads OpenCV, Flask or gpiozero."""

from __future__ import annotations

import pkgutil
import subprocess
import sys

import companion


def test_importing_every_game_module_loads_no_adapter_library() -> None:
    found = pkgutil.walk_packages(companion.__path__, "companion.")
    modules = [m.name for m in found]
    assert "companion.rules" in modules and "companion.scoring" in modules
    # The board games beside Māori are covered too, each game's package and its modules.
    assert "companion.games.base" in modules and "companion.games.tongiaki.game" in modules
    code = (
        "import importlib, sys\n"
        f"for name in {modules!r}:\n"
        "    importlib.import_module(name)\n"
        "banned = ('cv2', 'flask', 'gpiozero', 'numpy', 'waitress')\n"
        "bad = sorted(m for m in banned if m in sys.modules)\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""
