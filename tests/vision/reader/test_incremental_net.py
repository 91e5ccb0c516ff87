"""Reading what changed with the cell network (vision.reader.incremental, ReadConfig.recogniser
"net"): the cells read again go through the network, nothing through the matcher."""

from __future__ import annotations

import random
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

import vision.reader.incremental
import vision.reader.read
from app.bench.changes import _content
from companion.bots import GreedyPlayer
from companion.reading import CellRead
from companion.rules import rules_for
from vision.box.pack import Pack
from vision.cellnet.calibrate import Calibration
from vision.config import VisionConfig
from vision.reader import cellpool
from vision.reader.incremental import IncrementalReader, _cell_reads
from vision.reader.read import Slot
from vision.synthetic import table_scene

from .test_incremental import _every_slot, _frame, _game

pytestmark = pytest.mark.slow


def _refuse(*args: object, **kwargs: object) -> None:
    raise AssertionError("the matcher is not asked when the cell network reads")


@pytest.mark.parametrize("workers", [0, 1])
def test_the_cells_read_again_go_through_the_network(
    pack_lagoon: Pack, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, workers: int
) -> None:
    pack = pack_lagoon
    monkeypatch.setattr(table_scene, "TILE_OFFSET_MM", 0.0)
    monkeypatch.setattr(table_scene, "TILE_TURN_DEG", 0.0)
    for name in ("learn_pack", "match_cells", "table_reads"):
        monkeypatch.setattr(vision.reader.incremental, name, _refuse, raising=False)
    monkeypatch.setattr(vision.reader.read, "learn_pack", _refuse)
    # A fixed threshold: what is tested is which cells are read, and by what.
    calibration = Calibration(0.5, 0.005, 0.95, 0.0, 1, 1, 1, 0)
    monkeypatch.setattr(vision.reader.read, "calibration_for", lambda *a, **k: calibration)
    sent: list[list[Slot]] = []
    sent_crops: list[list[Any]] = []
    real = vision.reader.read.net_reads

    def counted(crops: Any, refs: Any, slots: Any, *args: Any) -> list[CellRead]:
        sent.append(list(slots))
        sent_crops.append(list(crops))
        return real(crops, refs, slots, *args)

    monkeypatch.setattr(vision.reader.incremental, "net_reads", counted)
    base = VisionConfig()
    config = replace(base, read=replace(base.read, recogniser="net", cell_workers=workers))
    world, spec = _game(pack)
    rules = rules_for(world.variant, world.matching)
    with IncrementalReader(pack, config=config) as reader:
        image, truth0 = _frame(pack, world, spec, 1)
        first = reader(image)
        assert reader.report.kind == "whole" and not reader.matches
        assert reader.view is not None and set(reader.crops) == set(reader.view.crops)
        reader.accepted()
        rules.apply(world, GreedyPlayer(random.Random(3)).choose(rules, world))
        image, truth1 = _frame(pack, world, spec, 1)
        then = reader.read_turn(image, [1, 2, 3])
        assert reader.report.kind == "changes"
        slots = _every_slot(first)
        before, after = _cell_reads(truth0, slots), _cell_reads(truth1, slots)
        changed = {s for s in slots if _content(before[s]) != _content(after[s])}
        assert changed and changed <= set(reader.report.reread)
        # Only the cells read again were sent, once, through the network.
        assert sent == [list(reader.report.reread)]
        assert then.ship == truth1.ship
        kept, now = _cell_reads(first, slots), _cell_reads(then, slots)
        for slot in set(slots) - set(reader.report.reread):
            assert now[slot] == kept[slot]
        # The crops of the cells read again are the ones kept for a host's correction.
        assert set(reader.crops) == set(reader.view.crops)
        for slot, crop in zip(sent[0], sent_crops[0], strict=True):
            assert reader.crops[slot] is crop


def test_a_worker_for_the_network_learns_no_templates(
    pack_lagoon: Pack, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(cellpool, "learn_pack", _refuse)
    monkeypatch.setattr(cellpool, "_die_with_parent", lambda parent: None)
    monkeypatch.setattr(cellpool, "_MODEL", None)
    base = VisionConfig()
    net = replace(base, read=replace(base.read, recogniser="net"))
    digest = cellpool.pack_digest(pack_lagoon)
    cellpool._start(str(pack_lagoon.root), net, digest, 0)
    assert cellpool._MODEL is None
    with pytest.raises(AssertionError):
        cellpool._start(str(pack_lagoon.root), base, digest, 0)
