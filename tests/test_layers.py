"""The packages stand in layers: companion ← vision ← hardware ← web ← app.

Each package may import only the packages to its left (and itself), at the top of a module
or inside a function: the game knows nothing of cameras, the reader nothing of pins or
pages, and only app/ wires them all together.

Their tests stand in the same layers: tests/<package>/ imports that package and those to its
left (a test package's helpers and fixtures, tests.<package>, count as that package), so a
test that drives the `companion` command lives in tests/app/ whatever it checks.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LAYERS = ("companion", "vision", "hardware", "web", "app")


def imports(path: Path) -> list[tuple[int, str, tuple[str, ...]]]:
    """(line, module, names imported from it) of every absolute import in `path`."""
    found: list[tuple[int, str, tuple[str, ...]]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name, ()) for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append((node.lineno, node.module, tuple(a.name for a in node.names)))
    return sorted(found)


def imported_packages(path: Path) -> set[tuple[int, str]]:
    """(line, top-level package) of every import in `path` of one of LAYERS."""
    tops = {(line, module.split(".")[0]) for line, module, _ in imports(path)}
    return {(line, top) for line, top in tops if top in LAYERS}


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


#: The imports across the layers that tests may still make, each exactly as it is written
#: (file, module, names). The reader's tests judge reads with the benchmarks' own scoring
#: (app/bench/), so that a test and `companion bench` count a right answer alike.
TESTS_ACROSS_LAYERS: set[tuple[str, str, tuple[str, ...]]] = {
    # A read cell is right if it means the same as the truth, turned or not.
    ("tests/vision/reader/test_read.py", "app.bench.rendered", ("same_answer",)),
    # Tables drawn with the unseen pack, scored as `companion bench vision` scores them.
    ("tests/vision/reader/test_recognise.py", "app.bench.rendered", ("bench_pack",)),
    # The incremental reader held to the gate of `companion bench changes` on its rendered
    # turns, a cell's content told apart as that benchmark tells it.
    (
        "tests/vision/reader/test_incremental.py",
        "app.bench.changes",
        ("_content", "run_gate", "turns"),
    ),
    # The same, read by the cell network.
    ("tests/vision/reader/test_incremental_net.py", "app.bench.changes", ("_content",)),
}


def layer_of(module: str) -> str | None:
    """The layer `module` belongs to: companion.x is companion's, and so is tests.companion.x
    (the companion tests' helpers and fixtures); None for the standard library, third parties
    and the helpers in tests/ itself (tests.jsonpaths, tests.mutate)."""
    parts = module.split(".")
    if parts[0] == "tests":
        parts = parts[1:]
    return parts[0] if parts and parts[0] in LAYERS else None


def breaches_in_tests(package: str, root: Path = ROOT) -> list[str]:
    """'file:line imports X' for each import in tests/<package>/ of a layer above `package`
    that TESTS_ACROSS_LAYERS does not list."""
    allowed = set(LAYERS[: LAYERS.index(package) + 1])
    found = []
    for path in sorted((root / "tests" / package).rglob("*.py")):
        name = path.relative_to(root).as_posix()
        for line, module, names in imports(path):
            layer = layer_of(module)
            if layer not in (None, *allowed) and (name, module, names) not in TESTS_ACROSS_LAYERS:
                found.append(f"{name}:{line} imports {module}")
    return found


@pytest.mark.parametrize("package", LAYERS)
def test_a_packages_tests_import_only_its_layer_and_those_below(package: str) -> None:
    assert breaches_in_tests(package) == []


def test_every_import_let_across_the_layers_is_still_made() -> None:
    made = {
        (name, module, names)
        for name, *_ in TESTS_ACROSS_LAYERS
        for _, module, names in imports(ROOT / name)
    }
    assert TESTS_ACROSS_LAYERS - made == set(), "an import no longer made: take it off the list"


def test_a_tests_breach_is_found(tmp_path: Path) -> None:
    probe = tmp_path / "tests" / "vision" / "reader" / "test_probe.py"
    probe.parent.mkdir(parents=True)
    probe.write_text(
        "from tests.jsonpaths import json_slots\n"
        "from tests.vision.handmade import draw\n"
        "from companion.game import new_game\n"
        "def test_f():\n"
        "    from app.cli import main\n"
        "from tests.web.conftest import PIN\n"
        "from app.bench.rendered import same_answer\n"
    )
    assert breaches_in_tests("vision", tmp_path) == [
        "tests/vision/reader/test_probe.py:5 imports app.cli",
        "tests/vision/reader/test_probe.py:6 imports tests.web.conftest",
        "tests/vision/reader/test_probe.py:7 imports app.bench.rendered",
    ]
    (tmp_path / "tests" / "app").mkdir()
    probe.rename(tmp_path / "tests" / "app" / "test_probe.py")
    assert breaches_in_tests("app", tmp_path) == []
