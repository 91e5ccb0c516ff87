"""The second look: a tile told from its siblings at the crop's scale, along the matcher's pose."""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path

import cv2
import numpy as np
import pytest

from companion.reading import CellRead
from tests.vision.reader.test_recognise import lay_tile, photograph
from vision.box.pack import Pack, load_pack
from vision.box.tilemodel import Image, TileModel, learn_pack
from vision.config import PX_PER_MM
from vision.reader.recognise import CellMatch, match_cells
from vision.reader.second_look import SECOND_STATS, SIBLING_MAX_AREA, second_looks, sibling_model

#: Tiles of the ink pack and the tile each becomes with one small symbol added: siblings.
SYMBOL_ADDED = {
    "end-n-palm1": "end-n-palm1-shell",
    "end-e-palm1": "end-e-palm1-shell",
    "single-palm1": "single-palm1-shell",
    "middle-ns-palm1": "middle-ns-palm1-hut",
    "water": "water-shell",
}


def _with_symbol(picture: Image, radius_mm: float, tile_mm: float) -> Image:
    """The picture with a small disc drawn on it (a shell, a hut), darker than what lies
    under it."""
    out = np.array(picture, copy=True)
    side = out.shape[0]
    centre = (round(side * 0.62), round(side * 0.4))
    under = out[centre[1], centre[0], :3].astype(int)
    faint = tuple(int(v) for v in np.clip(under - 70, 0, 255))
    colour = (*faint, 255) if out.shape[2] == 4 else faint
    cv2.circle(out, centre, round(radius_mm * side / tile_mm), colour, -1, cv2.LINE_AA)
    return out


@pytest.fixture(scope="module")
def sibling_pack(pack_dirs: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> Pack:
    """The ink pack where each tile of SYMBOL_ADDED's values is its key's picture plus a
    faint 3 mm disc: pictures that differ in a small area only."""
    root = tmp_path_factory.mktemp("siblings") / "pack"
    shutil.copytree(pack_dirs["ink"], root)
    pack = load_pack(root)
    for plain, marked in SYMBOL_ADDED.items():
        picture = np.asarray(
            cv2.imread(str(root / "tiles" / f"{plain}.png"), cv2.IMREAD_UNCHANGED), np.uint8
        )
        cv2.imwrite(str(root / "tiles" / f"{marked}.png"), _with_symbol(picture, 1.5, pack.tile_mm))
    return load_pack(root)


@pytest.fixture(scope="module")
def model(sibling_pack: Pack) -> TileModel:
    return learn_pack(sibling_pack, PX_PER_MM)


def _k(model: TileModel, tile: str, rotation: int = 0) -> int:
    return next(
        k for k in range(model.candidates) if (model.ids[k], model.rotations[k]) == (tile, rotation)
    )


def test_siblings_mean_something_else_and_differ_in_a_small_area(
    model: TileModel, pack_random: Pack
) -> None:
    sib = sibling_model(model)
    assert len(sib.siblings) == model.candidates
    for plain, marked in SYMBOL_ADDED.items():
        assert _k(model, marked) in sib.siblings[_k(model, plain)]
        assert _k(model, plain) in sib.siblings[_k(model, marked)]
    # Islands drawn each on its own differ everywhere: no siblings.
    assert not any(sibling_model(learn_pack(pack_random, PX_PER_MM)).siblings)
    squares = sib.channels.transpose(1, 2, 0)  # (K, M, 3), each channel less its mean
    for k, mates in enumerate(sib.siblings):
        assert k not in mates
        for j in mates:
            assert model.groups[j] != model.groups[k]
            # Most of the two pictures are the same (up to the light model's offsets).
            apart = np.abs(squares[j] - squares[k]).max(axis=1)
            assert float((apart > 40).mean()) <= SIBLING_MAX_AREA + 0.05


def test_siblings_the_matcher_confuses_at_48_px_are_told_apart(
    model: TileModel, sibling_pack: Pack
) -> None:
    """Each tile with and without its faint symbol, a few mm off and askew, seen by a blurred
    3 px/mm camera: the matcher at 48 px a tile does not name some of them; the second
    look gives the tile proposed positive evidence against its siblings, and its sibling
    proposed instead negative evidence, beaten by the tile."""
    rng = np.random.default_rng(7)
    unnamed = 0
    for k, j in [
        (_k(model, a), _k(model, b))
        for plain, marked in SYMBOL_ADDED.items()
        for a, b in ((plain, marked), (marked, plain))
    ]:
        seen_at = lay_tile(sibling_pack.tiles[model.ids[k]], offset=(1.5, -1.0), turn=2.0, ppm=3.0)
        crop: Image = np.asarray(
            cv2.resize(
                photograph(seen_at, rng, blur=2.5, noise=4.0),
                (round(seen_at.shape[0] * PX_PER_MM / 3.0),) * 2,
                interpolation=cv2.INTER_AREA,
            ),
            np.uint8,
        )
        (match,) = match_cells([crop], model)
        assert match.pose is not None
        unnamed += match.read.tile != model.ids[k]
        for proposal in (j, k):
            (seen,) = second_looks([dataclasses.replace(match, proposal=proposal)], [crop], model)
            stats = dict(zip(SECOND_STATS, seen.second_stats, strict=True))
            assert seen.proposal == proposal
            assert stats["siblings"] == 1.0
            assert stats["fit"] > 0.5
            right = proposal == k
            assert (stats["evidence"] > 0.0) == right, (model.ids[k], model.ids[proposal])
            assert stats["beaten"] == float(not right)
    assert unnamed >= 1


def test_a_cell_without_a_place_or_siblings_is_left_as_it_is(model: TileModel) -> None:
    crop = np.full((round(57 * PX_PER_MM),) * 2 + (3,), 240, np.uint8)
    empty = CellMatch(CellRead(empty=True))
    (seen,) = second_looks([empty], [crop], model)
    assert seen.proposal is None
    assert seen.second_stats == (0.0,) * len(SECOND_STATS)
