"""`./dev mutate [MODULE ...]`: mutation testing of the core with mutmut, one module at a time.

Each module is mutated in its own copy of the work tree (build/mutate/NAME) with one worker,
running only the tests that cover it. A surviving mutant is either killed by a new test or
listed as equivalent in docs/testing.md (a table row whose first cell is the mutant's name in
backticks); the kill rate is killed / (mutants - listed equivalents), and the command fails
when a module falls below 90 %.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs" / "testing.md"
TARGET = 0.90


@dataclass(frozen=True)
class Module:
    source: str
    tests: tuple[str, ...]
    #: pytest arguments that leave out tests too slow to run for each mutant
    leave_out: tuple[str, ...] = ()


MODULES: dict[str, Module] = {
    "auth": Module(
        "web/auth.py",
        ("tests/web/test_auth.py", "tests/app/test_hostpin.py", "tests/web/test_security.py"),
    ),
    "scoring": Module(
        "companion/scoring.py",
        ("tests/companion/test_scoring.py", "tests/companion/test_scoring_mutants.py"),
    ),
    "tracker": Module(
        "companion/tracker.py",
        ("tests/companion/test_tracker.py", "tests/companion/test_tracker_mutants.py"),
    ),
    "rules": Module(
        "companion/rules.py",
        (
            "tests/companion/test_rules.py",
            "tests/companion/test_rules_mutants.py",
            "tests/companion/test_game.py",
            "tests/companion/test_game_properties.py",
            "tests/companion/test_gamefile.py",
            "tests/companion/test_session.py",
            "tests/companion/test_tracker.py",
        ),
    ),
    "journal": Module(
        "companion/journal.py",
        (
            "tests/companion/test_journal.py",
            "tests/companion/test_journal_mutants.py",
            "tests/companion/test_session.py",
            "tests/companion/games/test_session.py",
        ),
        # 26 s of kill -9 for each mutant; the fsync tests watch the same promise directly
        (
            "--deselect",
            "tests/companion/test_journal.py::"
            "test_kill_9_at_random_moments_never_loses_a_confirmed_turn",
        ),
    ),
}

#: mutmut's exit codes, as its `mutmut results` names them.
KILLED = {1, 3, 24, -24, 36, 152, 255}  # failed tests, or timed out
SURVIVED = {0, 5, 33}  # tests passed, or no test ran the mutant


def equivalents() -> set[str]:
    """The mutants docs/testing.md lists as equivalent."""
    if not DOCS.exists():
        return set()
    return set(re.findall(r"^\| `([\w.ǁ]+__mutmut_\d+)`", DOCS.read_text("utf-8"), re.M))


def tracked_files() -> list[str]:
    out = subprocess.run(
        ["git", "ls-files", "-co", "--exclude-standard"],
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return [f for f in out.splitlines() if not f.startswith("build/") and (ROOT / f).is_file()]


def prepare(name: str, module: Module) -> Path:
    """A fresh copy of the work tree with mutmut configured for one module."""
    work = ROOT / "build" / "mutate" / name
    shutil.rmtree(work, ignore_errors=True)
    for f in tracked_files():
        (work / f).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / f, work / f)
    package = module.source.split("/")[0]
    others = sorted({"companion", "vision", "hardware", "web"} - {package})
    config = {
        "source_paths": [f"{package}/"],
        "only_mutate": [module.source],
        "also_copy": [*(f"{p}/" for p in others), "examples/"],
        "pytest_add_cli_args": ["-q", "-p", "no:cacheprovider"],
        # a mutant that loops for ever is stopped after 4 times its tests' usual time
        "timeout_multiplier": 4.0,
        "pytest_add_cli_args_test_selection": [
            *(t for t in module.tests if (work / t).exists()),
            *module.leave_out,
        ],
    }
    with (work / "pyproject.toml").open("a", encoding="utf-8") as fh:
        fh.write("\n[tool.mutmut]\n")
        for key, value in config.items():
            fh.write(f"{key} = {json.dumps(value)}\n")
    return work


def figures(work: Path, module: Module, listed: set[str]) -> tuple[int, int, int, list[str]]:
    """(mutants, killed, equivalent, survivors not listed) from mutmut's own record."""
    meta = json.loads((work / "mutants" / f"{module.source}.meta").read_text("utf-8"))
    codes: dict[str, int | None] = meta["exit_code_by_key"]
    killed = sum(code in KILLED for code in codes.values())
    survivors = sorted(m for m, code in codes.items() if code not in KILLED)
    equivalent = [m for m in survivors if m in listed]
    return len(codes), killed, len(equivalent), [m for m in survivors if m not in listed]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="./dev mutate", description=__doc__.splitlines()[0])
    parser.add_argument(
        "modules",
        nargs="*",
        metavar="MODULE",
        help=f"one or more of {', '.join(MODULES)} (default: all, in turn)",
    )
    parser.add_argument("--jobs", type=int, default=1, help="mutants run at once (default 1)")
    args = parser.parse_args(argv)
    unknown = [m for m in args.modules if m not in MODULES]
    if unknown:
        parser.exit(
            2, f"./dev mutate: no module {unknown[0]!r}; choose from {', '.join(MODULES)}.\n"
        )
    mutmut = Path(sys.executable).with_name("mutmut")
    listed = equivalents()
    failed = False
    rows = []
    for name in args.modules or list(MODULES):
        module = MODULES[name]
        work = prepare(name, module)
        print(f"mutate: {module.source} against {' '.join(module.tests)}", flush=True)
        subprocess.run(
            [str(mutmut), "run", "--max-children", str(args.jobs)],
            cwd=work,
            check=True,
            stdout=subprocess.DEVNULL,
        )
        total, killed, equivalent, open_ = figures(work, module, listed)
        rate = killed / max(1, total - equivalent)
        failed |= rate < TARGET
        rows.append(
            f"{module.source}: {killed} killed / {total} mutants, {equivalent} "
            f"equivalent, {len(open_)} survived: {rate:.0%} of the non-equivalent killed"
        )
        for mutant in open_:
            print(
                f"  survived: {mutant}  (cd {work.relative_to(ROOT)} && "
                f"../../../.venv/bin/mutmut show {mutant})"
            )
    print("\n".join(rows))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
