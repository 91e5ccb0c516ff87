"""The learned judge: features, calibration, the abstain threshold, the cache."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from companion.reading import CellRead
from companion.tiles import Kind
from vision.box import judge as judge_module
from vision.box.judge import (
    EMPTY_CLASS,
    FEATURES,
    NEITHER,
    TILE,
    CellJudge,
    Examples,
    calibration_error,
    cell_features,
    fit_judge,
    judge_for,
)
from vision.box.pack import Pack
from vision.box.tilemodel import TileModel
from vision.config import JudgeConfig, VisionConfig
from vision.reader.recognise import LOOK_STATS, TILE_STATS, CellMatch


def _match(**kw: object) -> CellMatch:
    base = CellMatch(
        CellRead(),
        proposal=0,
        tile_stats=(0.9,) * len(TILE_STATS),
        look_stats=(1.0,) * len(LOOK_STATS),
    )
    return replace(base, **kw)  # type: ignore[arg-type]


def test_features_follow_their_names() -> None:
    assert cell_features(_match(), [Kind.END]).shape == (len(FEATURES),)
    assert cell_features(CellMatch(CellRead(empty=True)), [Kind.END]).shape == (len(FEATURES),)


def test_figures_that_do_not_apply_are_marked_missing_not_invented() -> None:
    looks = list((1.0,) * len(LOOK_STATS))
    looks[LOOK_STATS.index("gain")] = float("nan")
    x = cell_features(_match(look_stats=tuple(looks)), [Kind.WATER])
    assert x[FEATURES.index("look_gain_missing")] == 1.0
    assert x[FEATURES.index("look_gain")] == 0.0
    assert np.isfinite(x).all()


def test_the_proposal_kind_is_one_hot() -> None:
    x = cell_features(_match(proposal=1), [Kind.WATER, Kind.MIDDLE])
    kinds = [x[FEATURES.index(f"kind_{k.value}")] for k in Kind]
    assert sorted(kinds) == [0.0] * (len(kinds) - 1) + [1.0]
    assert x[FEATURES.index("kind_middle")] == 1.0


def test_calibration_error_tells_an_overconfident_reader() -> None:
    rng = np.random.default_rng(0)
    confidence = rng.uniform(0.5, 1.0, 20_000)
    honest = rng.random(20_000) < confidence
    assert calibration_error(confidence, honest) < 0.02
    overconfident = rng.random(20_000) < confidence - 0.3
    assert calibration_error(confidence, overconfident) > 0.25


def test_the_threshold_keeps_wrong_answers_under_the_rate() -> None:
    # 2000 cells: the 10 least sure are wrong, one more wrong hides at 0.95.
    confidence = np.linspace(0.5, 1.0, 2000)
    right = np.ones(2000, bool)
    right[:10] = False
    right[np.searchsorted(confidence, 0.95)] = False
    cfg = JudgeConfig(wrong_rate=0.0005)  # one wrong answer allowed among 2000 cells
    threshold = judge_module._threshold(confidence, right, 2000, cfg)
    answered = confidence >= threshold
    assert int((answered & ~right).sum()) == 1
    assert threshold <= 0.95 + 1e-9  # the one wrong at 0.95 is allowed, the ten are not
    assert not answered[:10].any()
    strict = judge_module._threshold(confidence, right, 2000, JudgeConfig(wrong_rate=0.0004))
    assert strict > 0.95  # no room for any wrong answer: above the one at 0.95


def test_the_threshold_never_falls_below_the_least() -> None:
    confidence = np.linspace(0.0, 1.0, 5000)
    right = np.ones(5000, bool)
    least = JudgeConfig(least_threshold=0.6)
    assert judge_module._threshold(confidence, right, 5000, least) == 0.6


def _separable(n_tables: int, seed: int) -> Examples:
    """Cells whose class one figure tells (evidence), the rest noise."""
    rng = np.random.default_rng(seed)
    ex = Examples()
    for table in range(n_tables):
        for _ in range(60):
            y = int(rng.choice([TILE, EMPTY_CLASS, NEITHER], p=[0.6, 0.35, 0.05]))
            x = rng.normal(0, 1, len(FEATURES))
            x[FEATURES.index("proposed")] = 1.0
            x[FEATURES.index("tile_evidence")] = {TILE: 3.0, EMPTY_CLASS: -3.0, NEITHER: 0.0}[
                y
            ] + rng.normal(0, 0.3)
            x[FEATURES.index("look_rms")] = {TILE: 3.0, EMPTY_CLASS: 0.0, NEITHER: 3.0}[
                y
            ] + rng.normal(0, 0.3)
            ex.features.append(x)
            ex.labels.append(y)
            ex.tables.append(table)
    return ex


@pytest.mark.slow
def test_a_judge_learns_a_separable_problem_and_answers_most_cells_right() -> None:
    judge = fit_judge(_separable(100, 1), JudgeConfig(steps=300))
    test = _separable(30, 2)
    x, y, _t = test.arrays()
    p = judge.probabilities(x)
    answer = p[:, :2].argmax(axis=1)
    answered = p[np.arange(len(y)), answer] >= judge.threshold
    assert answered.mean() > 0.9
    assert not (answered & (answer != y)).any()
    assert judge.report["ece"] < 0.05


def test_a_judge_round_trips_through_json() -> None:
    judge = fit_judge(_separable(20, 3), JudgeConfig(steps=50))
    again = CellJudge.from_json(json.loads(json.dumps(judge.to_json())))
    x, _y, _t = _separable(2, 4).arrays()
    assert np.allclose(judge.probabilities(x), again.probabilities(x))
    assert again.threshold == judge.threshold


def test_the_judges_probability_is_the_mean_of_its_networks() -> None:
    """Each network alone, and the judge: its probability is their mean at its temperature;
    the networks start apart and end apart."""
    judge = fit_judge(_separable(20, 3), JudgeConfig(steps=50, members=3))
    assert judge.w1.shape[0] == judge.w2.shape[0] == 3
    assert not np.allclose(judge.w1[0], judge.w1[1])
    x, _y, _t = _separable(2, 4).arrays()
    alone = [
        replace(
            judge,
            w1=judge.w1[i : i + 1],
            b1=judge.b1[i : i + 1],
            w2=judge.w2[i : i + 1],
            b2=judge.b2[i : i + 1],
        ).probabilities(x)
        for i in range(3)
    ]
    assert np.allclose(judge.probabilities(x), np.mean(alone, axis=0))
    assert np.allclose(judge.probabilities(x).sum(axis=1), 1.0)


def test_one_network_learns_as_the_first_of_several() -> None:
    """The networks of a judge start from one seed in turn: the first of three is the one a
    judge of one network learns."""
    one = judge_module._train(*_separable(5, 1).arrays()[:2], JudgeConfig(steps=20, members=1))
    three = judge_module._train(*_separable(5, 1).arrays()[:2], JudgeConfig(steps=20, members=3))
    assert np.allclose(one.w1[0], three.w1[0]) and np.allclose(one.w2[0], three.w2[0])


def test_a_judge_of_another_version_or_shape_is_refused() -> None:
    data = fit_judge(_separable(20, 3), JudgeConfig(steps=10)).to_json()
    with pytest.raises(ValueError):
        CellJudge.from_json({**data, "version": -1})
    with pytest.raises(ValueError):
        CellJudge.from_json({**data, "w1": [[0.0]]})
    with pytest.raises(ValueError):
        CellJudge.from_json({**data, "w2": data["w2"][:1]})  # fewer networks than the rest
    with pytest.raises(ValueError):
        CellJudge.from_json({**data, "judge_version": -1})


@pytest.mark.parametrize(
    "damage",
    [
        {"threshold": float("nan")},
        {"threshold_unknown": 1.5},
        {"temperature": 0.0},
        {"temperature": float("inf")},
        {"scale": [0.0] * len(FEATURES)},
        {"mean": [0.0] * (len(FEATURES) - 1)},
        {"b2": [[float("nan")] * 3] * 3},
    ],
)
def test_a_judge_with_figures_no_judge_has_is_refused(damage: dict[str, object]) -> None:
    """A damaged cache file: thresholds that are not probabilities (NaN would answer every
    cell), a temperature or scale that is not positive, a mean of another length, weights
    that are not finite."""
    data = fit_judge(_separable(20, 3), JudgeConfig(steps=10, members=3)).to_json()
    CellJudge.from_json(data)
    with pytest.raises(ValueError):
        CellJudge.from_json({**data, **damage})
    with pytest.raises(ValueError):
        CellJudge.from_json([data])


def _counted_learning(
    pack: Pack, monkeypatch: pytest.MonkeyPatch
) -> tuple[list[int], VisionConfig, TileModel]:
    """Learning that draws no tables (a 1 per learning in the list returned), a quick
    judge's settings and the pack's tile model; no judge in memory."""
    from vision.box.tilemodel import learn_pack

    monkeypatch.setattr(judge_module, "_MEMORY", {})
    calls: list[int] = []

    def learn(*args: object, **kw: object) -> Examples:
        calls.append(1)
        return _separable(20, 5)

    monkeypatch.setattr(judge_module, "learning_set", learn)
    config = replace(VisionConfig(), judge=JudgeConfig(steps=20))
    return calls, config, learn_pack(pack, config.crops.px_per_mm, config.cells)


@pytest.mark.slow
def test_a_learnt_judge_is_kept_on_disk_and_read_back(
    pack_random: Pack, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MAORI_CACHE_DIR", str(tmp_path))
    calls, config, model = _counted_learning(pack_random, monkeypatch)
    first = judge_for(pack_random, model, config)
    assert calls == [1] and first is not None
    assert len(list(tmp_path.glob("judge-*.json"))) == 1
    assert len(list(tmp_path.glob("learning-*.npz"))) == 1
    monkeypatch.setattr(judge_module, "_MEMORY", {})
    second = judge_for(pack_random, model, config)
    assert calls == [1]  # read from disk, not learnt again
    assert second is not None and second.threshold == first.threshold
    # A damaged judge is fitted again from the kept cells, not trusted and not re-rendered.
    next(tmp_path.glob("judge-*.json")).write_text("{not json")
    monkeypatch.setattr(judge_module, "_MEMORY", {})
    third = judge_for(pack_random, model, config)
    assert calls == [1] and third is not None and third.threshold == first.threshold
    # Damaged kept cells are drawn again.
    next(tmp_path.glob("judge-*.json")).unlink()
    next(tmp_path.glob("learning-*.npz")).write_bytes(b"PK\x03\x04 torn")
    monkeypatch.setattr(judge_module, "_MEMORY", {})
    judge_for(pack_random, model, config)
    assert calls == [1, 1]
    # So are cells whose labels no judge learns from.
    next(tmp_path.glob("judge-*.json")).unlink()
    x, y, t = _separable(2, 5).arrays()
    np.savez(next(tmp_path.glob("learning-*.npz")), x=x, y=np.full_like(y, 7), tables=t)
    monkeypatch.setattr(judge_module, "_MEMORY", {})
    judge_for(pack_random, model, config)
    assert calls == [1, 1, 1]
    # So are empty ones (a power cut before the file's data reached the disk).
    next(tmp_path.glob("judge-*.json")).unlink()
    next(tmp_path.glob("learning-*.npz")).write_bytes(b"")
    monkeypatch.setattr(judge_module, "_MEMORY", {})
    judge_for(pack_random, model, config)
    assert calls == [1, 1, 1, 1]


def test_how_a_read_shares_out_its_work_does_not_learn_the_judge_again(
    pack_random: Pack, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Worker processes, the ship's thread and the lessons' prior leave the judge as it is;
    a setting of the cells' reading learns another."""
    calls, config, model = _counted_learning(pack_random, monkeypatch)
    judge_for(pack_random, model, config, cache=tmp_path)
    for shared_out in (
        replace(config, read=replace(config.read, cell_workers=0)),
        replace(config, read=replace(config.read, cell_workers=3, ship_beside_cells=False)),
        replace(config, read=replace(config.read, cells_here_weight=2.0)),
        replace(config, judge=replace(config.judge, lesson_prior=3.0)),
    ):
        monkeypatch.setattr(judge_module, "_MEMORY", {})
        judge_for(pack_random, model, shared_out, cache=tmp_path)
    assert calls == [1]
    assert len(list(tmp_path.glob("judge-*.json"))) == 1
    other = replace(config, cells=replace(config.cells, min_fit=config.cells.min_fit + 0.01))
    judge_for(pack_random, model, other, cache=tmp_path)
    assert calls == [1, 1]
    assert len(list(tmp_path.glob("judge-*.json"))) == 2


def test_a_network_setting_fits_a_new_judge_on_the_cells_already_drawn(
    pack_random: Pack, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The network's own settings learn another judge from the kept learning set; the
    tables drawn, or their seed, draw another set."""
    calls, config, model = _counted_learning(pack_random, monkeypatch)
    judge_for(pack_random, model, config, cache=tmp_path)
    settings = ({"decay": 0.05}, {"hidden": 8}, {"steps": 10}, {"wrong_rate": 0.01}, {"members": 1})
    for setting in settings:
        monkeypatch.setattr(judge_module, "_MEMORY", {})
        changed = replace(config, judge=replace(config.judge, **setting))
        other = judge_for(pack_random, model, changed, cache=tmp_path)
        assert other is not None
        assert other.b1.shape == (
            setting.get("members", config.judge.members),
            setting.get("hidden", config.judge.hidden),
        )
    assert calls == [1]
    assert len(list(tmp_path.glob("learning-*.npz"))) == 1
    assert len(list(tmp_path.glob("judge-*.json"))) == 1 + len(settings)
    for drawn in ({"tables": 7}, {"seed": 3}):
        changed = replace(config, judge=replace(config.judge, **drawn))  # type: ignore[arg-type]
        judge_for(pack_random, model, changed, cache=tmp_path)
    assert calls == [1, 1, 1]
    assert len(list(tmp_path.glob("learning-*.npz"))) == 3


def test_the_report_gives_the_out_of_fold_log_loss() -> None:
    """The log-loss of the out-of-fold weighings: small on cells easy to tell apart, large
    on cells whose labels the figures do not tell."""
    easy = fit_judge(_separable(30, 1), JudgeConfig(steps=60)).report["log_loss"]
    rng = np.random.default_rng(0)
    noise = _separable(30, 1)
    noise.labels = [int(v) for v in rng.integers(0, 3, len(noise.labels))]
    hard = fit_judge(noise, JudgeConfig(steps=60)).report["log_loss"]
    assert 0.0 <= easy < 0.3 < hard


def test_a_judge_turned_off_leaves_the_matchers_answers(pack_random: Pack) -> None:
    config = VisionConfig()
    off = replace(config, judge=replace(config.judge, enabled=False))
    from vision.box.tilemodel import learn_pack

    model = learn_pack(pack_random, config.crops.px_per_mm, config.cells)
    assert judge_for(pack_random, model, off) is None
