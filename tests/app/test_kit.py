"""`companion kit`: a tile size the paper cannot hold refused in one line, another folder's files
never overwritten, progress on a terminal only."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.cli import main
from vision.kit.printer import kit_files


def test_refused_tile_size_exits_2_with_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status = main(["kit", "--out", str(tmp_path / "kit"), "--tile-mm", "60"])
    err = capsys.readouterr().err
    assert status == 2
    assert len(err.strip().splitlines()) == 1
    assert "A3" in err and "Traceback" not in err
    assert list(tmp_path.iterdir()) == []


def test_kit_never_overwrites_other_files_and_replaces_an_old_kit(tmp_path: Path) -> None:
    out = tmp_path / "kit"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    assert main(["kit", "--out", str(out)]) == 2
    assert [p.name for p in out.iterdir()] == ["notes.txt"]
    (out / "notes.txt").unlink()
    (out / "README.txt").write_text("an old kit")
    assert main(["kit", "--out", str(out)]) == 0
    assert "Tile side 45 mm" in (out / "README.txt").read_text()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["kit"]  # no temporary left behind


@pytest.mark.slow
def test_the_kit_command_shows_progress_on_a_terminal_and_none_when_piped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import io
    import sys

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    assert main(["kit", "--out", str(tmp_path / "piped")]) == 0
    out, err = capsys.readouterr()
    assert err == ""
    assert out.startswith("Table kit written to ")
    terminal = Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    assert main(["kit", "--out", str(tmp_path / "shown")]) == 0
    count = len(kit_files())
    assert f"writing the kit [########################] {count}/{count}" in terminal.getvalue()
