"""A lens that bends straight lines: measured from the kit's markers (`app.lens.photo_markers`:
every area at the kit's scale on one table plane), a bent table straightened read as a
straight one, the table told of its lens, and `companion lens`."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import cv2
import numpy as np
import pytest

from app.bench.rendered import Tally, score_read
from app.cli import main
from app.lens import photo_markers
from companion.catalogue import default_boards
from companion.reading import TableRead
from vision.box.pack import Pack
from vision.config import VisionConfig
from vision.reader.lens import Lens, LensMeasure, LensWatch, measure_lens
from vision.reader.read import read_table
from vision.synthetic.render import Effects, Rendered, random_camera, render_table
from vision.synthetic.scene import TableScene, random_scene


def _table(pack: Pack, lens_k: float, seed: int = 5) -> tuple[TableScene, Rendered]:
    rng = np.random.default_rng(seed)
    scene = random_scene(pack.catalogue, rng, n_seats=5, difficulty="easy")
    spec = replace(random_camera(rng, scene, pack, max_tilt_deg=10.0), lens_k=lens_k)
    return scene, render_table(scene, pack, spec, Effects.easy(), rng)


def _measured(pack: Pack, *frames: np.ndarray) -> LensMeasure | None:
    config = VisionConfig()
    photos = [(photo_markers(f, config), f.shape[1], f.shape[0]) for f in frames]
    return measure_lens(photos, pack.tile_mm, default_boards()["front"], config.areas)


def _scored(read: TableRead, rendered: Rendered, scene: TableScene, pack: Pack) -> Tally:
    tally = Tally()
    score_read(read, rendered, scene, pack.catalogue, tally)
    return tally


@pytest.mark.slow
@pytest.mark.parametrize("lens_k", [0.0, 0.06, 0.15])
def test_the_bend_is_measured_from_the_kit_markers(pack_ink: Pack, lens_k: float) -> None:
    # Two photos, the boards in other places (stickers sit up to 3 mm off: one photo's
    # measure may be some 0.02 out, docs/vision.md).
    frames = [_table(pack_ink, lens_k, seed)[1].image for seed in (5, 7)]
    measure = _measured(pack_ink, *frames)
    assert measure is not None and measure.areas == 10
    assert measure.k == pytest.approx(lens_k, abs=0.02)
    assert measure.straightened_off_pct < 2.0  # every seat at the kit's scale again
    if lens_k:
        assert measure.seen_off_pct > measure.straightened_off_pct


def test_no_bend_is_measured_without_two_areas_of_three_markers(pack_ink: Pack) -> None:
    _, rendered = _table(pack_ink, 0.1)
    only_display = {i: m for i, m in photo_markers(rendered.image, VisionConfig()).items() if i < 4}
    assert (
        measure_lens([(only_display, 2880, 1620)], pack_ink.tile_mm, default_boards()["front"])
        is None
    )


@pytest.mark.slow
def test_a_bent_table_straightened_reads_as_a_straight_one(pack_ink: Pack) -> None:
    scene, rendered = _table(pack_ink, 0.15)
    bent = _scored(read_table(rendered.image, pack_ink), rendered, scene, pack_ink)
    measure = _measured(pack_ink, rendered.image)
    assert measure is not None
    straight = read_table(Lens(measure.k).straighten(rendered.image), pack_ink)
    fixed = _scored(straight, rendered, scene, pack_ink)
    assert fixed.wrong == 0
    assert fixed.abstained <= 0.01 * fixed.visible
    assert fixed.wrong <= bent.wrong and fixed.abstained <= bent.abstained


@pytest.mark.slow
def test_the_table_is_told_once_of_a_lens_that_bends(pack_ink: Pack) -> None:
    config = VisionConfig()
    front = default_boards()["front"]
    bent = _table(pack_ink, 0.1, seed=7)[1].image
    watch = LensWatch(pack_ink.tile_mm, front)
    hint = watch.hint(photo_markers(bent, config), bent.shape[1], bent.shape[0])
    assert hint is not None and "lens_k = 0.1" in hint and "[camera]" in hint
    assert watch.hint(photo_markers(bent, config), bent.shape[1], bent.shape[0]) is None
    straight = _table(pack_ink, 0.0, seed=7)[1].image
    quiet = LensWatch(pack_ink.tile_mm, front)
    assert quiet.hint(photo_markers(straight, config), 2880, 1620) is None
    assert quiet.measured is not None  # measured once: later reads cost nothing
    # Frames straightened by too small a bend: the hint names the whole bend.
    half = Lens(0.05).straighten(bent)
    short = LensWatch(pack_ink.tile_mm, front, lens_k=0.05)
    hint = short.hint(photo_markers(half, config), half.shape[1], half.shape[0])
    assert hint is not None and "it is set to 0.05" in hint
    k = float(hint.split("lens_k = ")[1].split()[0])
    assert k == pytest.approx(0.1, abs=0.02)
    # Straightened by the right bend: nothing to say.
    right = Lens(0.1).straighten(bent)
    done = LensWatch(pack_ink.tile_mm, front, lens_k=0.1)
    assert done.hint(photo_markers(right, config), right.shape[1], right.shape[0]) is None


@pytest.fixture(scope="module")
def photos(tmp_path_factory: pytest.TempPathFactory, pack_ink: Pack) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("lens")
    out = {}
    for name, k in (("wide", 0.1), ("straight", 0.0)):
        _, rendered = _table(pack_ink, k, seed=8)
        out[name] = folder / f"{name}.jpg"
        cv2.imwrite(str(out[name]), rendered.image, [cv2.IMWRITE_JPEG_QUALITY, 92])
    # Only the display seen: the seats cut away.
    _, rendered = _table(pack_ink, 0.0, seed=8)
    display = rendered.homographies["display"] @ np.array([0.0, 0.0, 1.0])
    x, y = (display[:2] / display[2]).round().astype(int)
    out["display"] = folder / "display.png"
    cv2.imwrite(
        str(out["display"]), rendered.image[max(y - 340, 0) : y + 340, max(x - 340, 0) : x + 340]
    )
    out["large"] = folder / "large.png"
    cv2.imwrite(str(out["large"]), np.full((4000, 6000, 3), 128, np.uint8))
    out["blank"] = folder / "blank.png"
    cv2.imwrite(str(out["blank"]), np.full((900, 1600, 3), 128, np.uint8))
    return out


def test_companion_lens_prints_the_bend_to_set(
    capsys: pytest.CaptureFixture[str], photos: dict[str, Path]
) -> None:
    assert main(["lens", str(photos["wide"])]) == 0
    out = capsys.readouterr().out
    k = float(out.split("lens bend k = ")[1].split()[0])
    assert k == pytest.approx(0.1, abs=0.02)
    assert f"`lens_k = {k:.3f}` under [camera]" in out
    assert main(["lens", str(photos["straight"])]) == 0
    assert "Straight enough: nothing to set." in capsys.readouterr().out


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["lens", "{blank}"], "no markers of the table kit in the photo"),
        (["lens", "{wide}", "{blank}"], "blank.png: no markers of the table kit"),
        (["lens", "{display}"], "no photo shows two areas of the kit"),
        (["lens", "{missing}"], "no such file"),
        (["lens", "{straight}", "--tile-mm", "0"], "--tile-mm must be a positive length"),
        (["read", "{straight}", "--pack", "{missing}", "--lens", "2"], "--lens: a lens bend"),
        (["bench", "vision", "--straighten"], "--straighten needs --lens K"),
        (["bench", "vision", "--lens", "0.1", "--true-poses"], "not with --lens"),
        (
            ["read", "{large}", "--pack", "{pack}", "--lens", "0.5"],
            "large.png: straightened it would be 10333 x 6889 pixels",
        ),
    ],
)
def test_bad_lens_input_is_one_line(
    capsys: pytest.CaptureFixture[str],
    photos: dict[str, Path],
    tmp_path: Path,
    pack_dirs: dict[str, Path],
    argv: list[str],
    words: str,
) -> None:
    names = {key: str(path) for key, path in photos.items()}
    names["missing"] = str(tmp_path / "nothing-here.jpg")
    names["pack"] = str(pack_dirs["ink"])
    assert main([a.format(**names) for a in argv]) == 2
    out, err = capsys.readouterr()
    assert words in err
    assert err.count("\n") == 1
    assert out == ""  # nothing half-said: a good photo before a bad one prints nothing
