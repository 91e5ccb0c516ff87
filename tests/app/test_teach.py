"""`companion teach`: the terminal flow from a folder of frames or the camera, through a bending
lens, stopped midway or refused; its corrections, plan and frame files (app/teach.py).

The box and its frames (`source`, `script`) are those of tests/vision/box/test_teach.py."""

from __future__ import annotations

import io
from pathlib import Path

import cv2
import numpy as np
import pytest

from app.cli import main
from app.teach import _frames, frame_files, parse_corrections, plan_lines
from companion.catalogue import Catalogue, default_catalogue
from tests.vision.bombs import png_deep, rle_bmp, webp_header
from tests.vision.box.test_teach import Script, _ncc
from vision.box.pack import Pack, load_pack
from vision.box.teach import CellAnswer, TeachError, TeachSession
from vision.reader.lens import Lens


def _write_frames(folder: Path, frames: list[np.ndarray]) -> None:
    folder.mkdir()
    cv2.imwrite(str(folder / "00-blurry.png"), np.full((400, 600, 3), 90, np.uint8))
    for i, frame in enumerate(frames, 1):
        cv2.imwrite(str(folder / f"{i:02d}.jpg"), frame, [cv2.IMWRITE_JPEG_QUALITY, 92])


def _cli(args: list[str], answers: str, monkeypatch: pytest.MonkeyPatch) -> int:
    monkeypatch.setattr("sys.stdin", io.StringIO(answers))
    return main(["teach", *args])


def test_the_terminal_flow_writes_the_pack(
    source: Pack,
    script: Script,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    _write_frames(tmp_path / "frames", script.frames)
    answers = "a1=1@90 b1=3 c1=2\n\n\n\n\n"  # correct batch 1, then keep everything
    args = [
        "--out",
        str(tmp_path / "pack"),
        "--frames",
        str(tmp_path / "frames"),
        "--catalogue",
        str(source.root),
        "--batch",
        "4",
        "--state-dir",
        str(tmp_path / "state"),
    ]
    assert _cli(args, answers, monkeypatch) == 0
    printed = capsys.readouterr().out
    assert "batch 2: 3 of 6 tile types taught" in printed
    assert "00-blurry.png" in printed and "trying the next picture" in printed
    pack = load_pack(tmp_path / "pack")
    assert pack.name == "pack"
    # The taught cells are the table's first lessons, in its state directory.
    from vision.box.lessons import LESSONS_DIR, LessonBook

    kept = LessonBook(tmp_path / "state" / LESSONS_DIR, pack).load()
    assert kept is not None and len(kept) >= 20
    assert f"{len(kept)} taught cells kept as lessons" in printed
    assert _ncc(pack.tiles[script.first_plan[0]], source.tiles[script.first_plan[0]]) > 0.9


LENS_K = 0.2  # a strong wide lens: unstraightened, the taught tiles match at some 0.77


@pytest.mark.slow
def test_pictures_through_a_bending_lens_are_straightened_first(
    source: Pack,
    script: Script,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # The same pictures as a wide lens takes them, the mat off in a corner of the frame
    # where the bend is strong; --lens K straightens each first.
    def bent(frame: np.ndarray) -> np.ndarray:
        h, w = frame.shape[:2]
        return Lens(LENS_K).bend(np.pad(frame, ((0, h // 2), (0, w // 2), (0, 0)), mode="edge"))

    _write_frames(tmp_path / "frames", [bent(f) for f in script.frames])
    answers = "a1=1@90 b1=3 c1=2\n\n\n\n\n"
    args = [
        "--out",
        str(tmp_path / "pack"),
        "--frames",
        str(tmp_path / "frames"),
        "--catalogue",
        str(source.root),
        "--batch",
        "4",
        "--lens",
        str(LENS_K),
    ]
    assert _cli(args, answers, monkeypatch) == 0
    capsys.readouterr()
    pack = load_pack(tmp_path / "pack")
    for tile in script.first_plan:
        assert _ncc(pack.tiles[tile], source.tiles[tile]) > 0.9


@pytest.mark.parametrize(
    ("extra", "words"),
    [
        (["--lens", "3"], "--lens: a lens bend k must lie between"),
        (["--lens", "0.1", "--camera", "x.toml"], "with --camera, set lens_k under [camera]"),
    ],
)
def test_a_lens_that_cannot_be_used_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: list[str], words: str
) -> None:
    status = main(
        [
            "teach",
            "--out",
            str(tmp_path / "pack"),
            *extra,
            *([] if "--camera" in extra else ["--frames", str(tmp_path)]),
        ]
    )
    assert status == 2
    err = capsys.readouterr().err
    assert words in err and err.count("\n") == 1
    assert not (tmp_path / "pack").exists()


@pytest.mark.parametrize("answers", ["\nq\n", "\n"], ids=["quit", "answers-run-out"])
def test_stopping_midway_writes_nothing(
    answers: str,
    source: Pack,
    script: Script,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    frames = tmp_path / "frames"
    frames.mkdir()
    cv2.imwrite(str(frames / "01.png"), script.frames[0])
    cv2.imwrite(str(frames / "02.png"), script.frames[1])
    args = [
        "--out",
        str(tmp_path / "pack"),
        "--frames",
        str(frames),
        "--catalogue",
        str(source.root),
        "--batch",
        "4",
    ]
    status = _cli(args, answers, monkeypatch)
    err = capsys.readouterr().err
    assert status in (1, 2)
    assert len(err.strip().splitlines()) == 1 and "nothing was written" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["frames"]


def test_an_occupied_output_folder_is_refused_before_teaching(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "pack"
    out.mkdir()
    (out / "holiday.jpg").write_bytes(b"x")
    (tmp_path / "frames").mkdir()
    status = main(["teach", "--out", str(out), "--frames", str(tmp_path / "frames")])
    assert status == 2
    assert "holiday.jpg" in capsys.readouterr().err
    assert [p.name for p in out.iterdir()] == ["holiday.jpg"]


def test_corrections_are_read_by_number_or_id() -> None:
    catalogue: Catalogue = default_catalogue()
    second = catalogue.types[1].id
    got = parse_corrections(f"b3=2@90 a1=- d4={second}", catalogue)
    assert got == {(2, 1): CellAnswer(second, 90), (0, 0): None, (3, 3): CellAnswer(second)}
    for bad in ("e1=2", "b3=0", "b3=2@45", "b3=nonsense"):
        with pytest.raises(TeachError):
            parse_corrections(bad, catalogue)


def test_the_plan_lists_every_type_once_one_picture_per_step() -> None:
    catalogue = default_catalogue()
    lines = plan_lines(TeachSession(catalogue, batch=16))
    pictures = [line for line in lines if line.startswith("picture ")]
    batches = -(-len(catalogue.types) // 16)
    assert len(pictures) == batches + 2  # the batches, the ship, the front board
    for tile in catalogue:
        assert sum(f"] {tile.id} (" in line for line in lines) == 1


def test_the_terminal_flow_takes_its_pictures_with_the_camera(
    source: Pack,
    script: Script,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # The service's TOML names the camera; here a recording stands in for it. Each Enter at
    # "take the picture" captures the next frame (the first is blurry and refused).
    _write_frames(tmp_path / "frames", script.frames)
    settings = tmp_path / "companion.toml"
    settings.write_text(f'[camera]\nkind = "folder"\npath = "{tmp_path / "frames"}"\n')
    # take (refused), take, correct batch 1 and confirm; then take and keep each other step
    answers = "\n" + "\na1=1@90 b1=3 c1=2\n\n" + "\n\n" * (len(script.frames) - 1)
    args = [
        "--out",
        str(tmp_path / "pack"),
        "--camera",
        str(settings),
        "--catalogue",
        str(source.root),
        "--batch",
        "4",
    ]
    assert _cli(args, answers, monkeypatch) == 0
    printed = capsys.readouterr().out
    assert "camera 1:" in printed and "trying the next picture" in printed
    assert "batch 2: 3 of 6 tile types taught" in printed
    pack = load_pack(tmp_path / "pack")
    assert _ncc(pack.tiles[script.first_plan[0]], source.tiles[script.first_plan[0]]) > 0.9


def test_teaching_wants_one_picture_source(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status = main(["teach", "--out", str(tmp_path / "pack")])
    assert status == 2
    assert "either --frames DIR or --camera FILE" in capsys.readouterr().err
    assert not (tmp_path / "pack").exists()


def test_frames_in_other_formats_are_skipped_without_decoding(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "01.bmp").write_bytes(rle_bmp(30_000, 30_000))
    (tmp_path / "02.webp").write_bytes(webp_header(16_384, 16_384))
    (tmp_path / "03.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    (tmp_path / "04.png").write_bytes(png_deep(7070, 7070))

    def never(*_args: object) -> None:
        raise AssertionError("a refused picture reached the decoder")

    monkeypatch.setattr(cv2, "imdecode", never)
    monkeypatch.setattr(cv2, "imread", never)
    said: list[str] = []
    assert list(_frames(frame_files(tmp_path), said.append, Lens(0.0))) == []
    assert said == [
        "  01.bmp: is a BMP picture; only PNG and JPEG pictures are read; skipped",
        "  02.webp: is a WebP picture; only PNG and JPEG pictures are read; skipped",
        "  03.png: is not a readable PNG picture (its header is damaged); skipped",
        "  04.png: says it is 7070 x 7070 px of 4 channels at 16 bits a channel, 399 MB "
        "decoded; a picture decodes to at most 150 MB (save it smaller or at 8 bits a "
        "channel); skipped",
    ]
