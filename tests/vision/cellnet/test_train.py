"""The cell network's learning helpers (vision.cellnet.train): they need PyTorch, which only
the learning's venv has (`./dev train`); elsewhere these tests are skipped."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from vision.cellnet.train import (  # noqa: E402
    DATA,
    WIDTHS,
    Embed,
    Head,
    checkpoint,
    distillation,
    embedded,
    main,
    slimmed,
    starting_network,
    to_tensor,
)


def _squares(n: int = 3) -> object:
    torch.manual_seed(1)
    return torch.rand(n, 3, 96, 96) * 255


def test_a_network_cut_to_its_own_widths_is_the_same_network() -> None:
    torch.manual_seed(0)
    wide = Embed().eval()
    same = slimmed(wide, WIDTHS).eval()
    x = _squares()
    with torch.no_grad():
        assert torch.equal(same(x), wide(x))
        assert float(distillation(same(x), wide(x))) == pytest.approx(0.0, abs=1e-5)


def test_a_narrower_cut_keeps_the_most_scaled_channels_and_the_maps_shape() -> None:
    torch.manual_seed(0)
    wide = Embed().eval()
    norm = wide.body[4]
    with torch.no_grad():
        norm.weight.copy_(torch.arange(24, dtype=torch.float32) - 3.5)  # |scale| largest at 23
    narrow = slimmed(wide, (16, 16, 32, 32, 64)).eval()
    assert narrow.widths == (16, 16, 32, 32, 64)
    kept = narrow.body[4].weight.detach()
    assert torch.equal(kept, torch.arange(8, 24, dtype=torch.float32) - 3.5)
    assert narrow(_squares()).shape == wide(_squares()).shape == (3, 32, 12, 12)
    with pytest.raises(ValueError, match="widen"):
        slimmed(narrow, WIDTHS)


def test_a_learning_starts_from_a_checkpoint_at_its_own_widths_or_cut_narrower(
    tmp_path: Path,
) -> None:
    torch.manual_seed(0)
    narrow = Embed((16, 16, 32, 32, 64))
    path = tmp_path / "checkpoint.pt"
    torch.save(checkpoint(narrow, Head()), path)
    embed, _head, teacher = starting_network(path, None)
    assert embed.widths == (16, 16, 32, 32, 64) and teacher is None
    embed, _head, teacher = starting_network(path, "8,16,16,32,32")
    assert embed.widths == (8, 16, 16, 32, 32) and teacher is not None
    assert teacher.widths == (16, 16, 32, 32, 64)
    with pytest.raises(ValueError):
        starting_network(path, ",".join(map(str, WIDTHS)))
    assert starting_network(None, None)[0].widths == WIDTHS


@pytest.mark.parametrize(
    "bad",
    [
        ["--widths", "8,16"],
        ["--widths", "a"],
        ["--packs", "100000"],
        ["--distil", "-1"],
        ["--evaluate"],
        ["--evaluate", "--init", str(DATA / "cellnet.pt"), "--widths", "8,16,16,32,32"],
        ["--val-packs", "17"],
        ["--val-looks", "-1"],
        ["--val-packs", "0", "--val-looks", "0", "--val-shapes", "0"],
        ["--val-shapes", "17"],
        ["--lr", "0"],
        ["--lr", "nan"],
    ],
)
def test_bad_settings_are_refused_before_anything_is_drawn(tmp_path: Path, bad: list[str]) -> None:
    with pytest.raises(SystemExit):
        main(["--data", str(tmp_path / "data"), "--out", str(tmp_path / "out"), *bad])
    assert not (tmp_path / "data").exists()


def test_the_committed_checkpoint_is_the_committed_network() -> None:
    """vision/data/cellnet.pt, the learning's weights of the committed network (`--init` to
    go on learning from it), gives the probabilities written with it (cellnet-check.npz)."""
    embed, head, _teacher = starting_network(DATA / "cellnet.pt", None)
    embed.eval()
    with np.load(DATA / "cellnet-check.npz") as check:
        kinds = torch.from_numpy(check["kinds"].astype(np.int64))
        with torch.no_grad():
            crops, boards, refs = embedded(
                embed,
                to_tensor(check["crops"]),
                to_tensor(check["boards"]),
                kinds,
                to_tensor(check["refs"]),
            )
            p = head(crops, refs, boards, kinds).softmax(dim=1).numpy()
        assert np.abs(p - check["probabilities"]).max() < 1e-4
