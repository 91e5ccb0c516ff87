"""The light model's fits (vision.box.tilemodel): batched fits agree with a plain
least-squares fit of each picture and candidate."""

from __future__ import annotations

import numpy as np

from vision.box.tilemodel import (
    design_terms,
    fit_light_many,
    fit_light_shared,
    light_basis,
    normal_inverse,
)

N = 12  # a square's side, px


def _candidates(rng: np.random.Generator, count: int) -> tuple[np.ndarray, np.ndarray]:
    """Candidates' channels (3, S, M) and their inverse normal matrices (S, 3, 6, 6)."""
    basis = light_basis(N)
    channels = rng.uniform(-1, 1, (3, count, N * N)).astype(np.float32)
    channels -= channels.mean(axis=2, keepdims=True)  # as a TileModel keeps them
    terms = np.stack([design_terms(channels[:, s].T, basis) for s in range(count)])
    return channels, normal_inverse(terms, basis)


def _lstsq_rss(channel: np.ndarray, x: np.ndarray) -> float:
    """What the light model leaves of picture x (3, M) with a candidate's channels (3, M),
    by a plain least-squares fit per channel."""
    basis = light_basis(N).astype(np.float64)
    left = 0.0
    for c in range(3):
        design = np.concatenate([channel[c, :, None] * basis, basis], axis=1)
        coef = np.linalg.lstsq(design, x[c], rcond=None)[0]
        left += float(((x[c] - design @ coef) ** 2).sum())
    return left


def test_fits_of_many_pictures_with_shared_candidates_agree_with_plain_least_squares() -> None:
    rng = np.random.default_rng(7)
    channels, ninv = _candidates(rng, 4)
    light = np.ascontiguousarray(light_basis(N).T)
    # Pictures: candidate 2 under some light plus a little noise, and pictures of noise.
    lit = channels[:, 2] * np.array([[60.0], [80.0], [50.0]]) + 120.0
    x = np.stack([lit + rng.normal(0, 1, lit.shape), *rng.uniform(0, 255, (5, 3, N * N))]).astype(
        np.float32
    )
    shared = fit_light_shared(channels, ninv, light, x)
    many, _coef = fit_light_many(
        np.ascontiguousarray(np.broadcast_to(channels[:, None], (3, len(x), 4, N * N))),
        np.ascontiguousarray(np.broadcast_to(ninv[None], (len(x), 4, 3, 6, 6))),
        light,
        x,
    )
    plain = np.array([[_lstsq_rss(channels[:, s], p) for s in range(4)] for p in x])
    assert shared.shape == many.shape == (len(x), 4)
    np.testing.assert_allclose(shared, plain, rtol=1e-3, atol=1.0)
    np.testing.assert_allclose(many, plain, rtol=1e-3, atol=1.0)
    assert int(np.argmin(shared[0])) == 2 and shared[0, 2] < 3 * N * N * 1.5
