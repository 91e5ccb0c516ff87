"""The packages stand in layers: companion ← vision ← hardware ← web ← app.

Each package may import only the packages to its left (and itself), at the top of a module
or inside a function: the game knows nothing of cameras, the reader nothing of pins or
pages, and only app/ wires them all together.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LAYERS = ("companion", "vision", "hardware", "web", "app")


def imported_packages(path: Path) -> set[tuple[int, str]]:
    """(line, top-level package) of every import in `path` of one of LAYERS."""
    found: set[tuple[int, str]] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        else:
            continue
        found.update((node.lineno, name.split(".")[0]) for name in names)
    return {(line, top) for line, top in found if top in LAYERS}


def breaches(package: str) -> list[str]:
    """'file:line imports X' for each import of a package above `package`."""
    allowed = set(LAYERS[: LAYERS.index(package) + 1])
    return [
        f"{path.relative_to(ROOT)}:{line} imports {top}"
        for path in sorted((ROOT / package).rglob("*.py"))
        for line, top in sorted(imported_packages(path))
        if top not in allowed
    ]


@pytest.mark.parametrize("package", LAYERS)
def test_a_package_imports_only_the_layers_below_it(package: str) -> None:
    assert breaches(package) == []


def test_a_breach_is_found(tmp_path: Path) -> None:
    module = tmp_path / "probe.py"
    module.write_text("def f():\n    from web.app import create_app\n\nimport vision.kit\n")
    assert imported_packages(module) == {(2, "web"), (4, "vision")}


def test_every_package_is_a_layer() -> None:
    tops = {p.parent.name for p in ROOT.glob("*/__init__.py")} - {"tests"}
    assert tops == set(LAYERS)
