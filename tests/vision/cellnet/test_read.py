"""A whole table read by the cell network (ReadConfig.recogniser = "net")."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from vision.box.pack import Pack
from vision.config import VisionConfig
from vision.reader.read import TableReader
from vision.synthetic.render import Effects, random_camera, render_table
from vision.synthetic.scene import keyed_cells, random_scene

pytestmark = pytest.mark.slow


def test_a_new_box_is_calibrated_once_and_its_table_read(pack_random: Pack, tmp_path: Path) -> None:
    base = VisionConfig()
    config = replace(
        base,
        read=replace(
            base.read,
            recogniser="net",
            net_tables=10,
            net_wrong_rate=0.05,
            net_fit_tables=4,
            net_metric_steps=5,  # its learning is tested in test_adapt
        ),
    )
    rng = np.random.default_rng(11)
    scene = random_scene(pack_random.catalogue, rng, 3, "front", "easy")
    rendered = render_table(
        scene, pack_random, random_camera(rng, scene, pack_random), Effects.easy(), rng
    )
    with TableReader(pack_random, config=config, cache=tmp_path) as reader:
        models = reader.prepare()
        table = reader.read(rendered.image)
    assert models.judge is None and models.calibration is not None
    assert models.calibration.tables == 10 and models.calibration.target == 0.05
    assert list(tmp_path.glob("calibration-*.json")), "the calibration is kept in the cache"
    right = wrong = 0
    got = dict(keyed_cells(table))
    for key, truth in keyed_cells(rendered.truth):
        read = got.get(key)
        if read is None or read.unknown or truth is None:
            continue
        same = (read.empty and truth.empty) or (
            read.tile is not None
            and truth.tile is not None
            and pack_random.catalogue.meaning(read.tile).rotated(read.rotation)
            == pack_random.catalogue.meaning(truth.tile).rotated(truth.rotation)
        )
        right += same
        wrong += not same
    assert right >= 30 and wrong <= 0.05 * (right + wrong) + 1
