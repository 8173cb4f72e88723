"""MAC sums its critic and actor terms as it draws them: the same estimates, O(d + S·A) memory.

Reference: the per-transition terms of the public :func:`mac_sample_terms`, stored and combined by
the public :func:`mlmc_combine` (what the loop did before). The loop stored ``N = 2^J`` copies of
the ``(S, A)`` actor term: with ``T_max ≥ 2^J`` one update at level ``J = 15`` on a 20 × 20 model
allocated 105 MB (8 GB at ``J = 20``, ``S·A = 1000``).
"""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest

from rltheory.algorithms import mac
from rltheory.algorithms._average_reward_base import _draw
from rltheory.algorithms.average_reward import (
    mac_sample_terms,
    mlmc_combine,
    multilevel_actor_critic,
)
from rltheory.mdp import FiniteMDP


def _stored_rollout(Phi, R, cP, pi, s, omega, eta, J, N, gen):
    cpi = np.cumsum(pi, axis=-1)
    fs, hs, gs = [], [], []
    for _ in range(N):
        a = _draw(cpi[s], gen.random())
        s2 = _draw(cP[s, a], gen.random())
        f, h, g = mac_sample_terms(Phi, pi[s], s, a, float(R[s, a]), s2, omega, eta)
        fs.append(f)
        hs.append(h)
        gs.append(g)
        s = s2
    T = N  # N = 2^J <= T_max (the MLMC estimate), or N = 1 (x_0; mlmc_combine(x, J >= 1, 1))
    return (
        mlmc_combine(np.array(fs), J, T),
        mlmc_combine(np.array(hs), J, T),
        mlmc_combine(np.array(gs), J, T),
        s,
    )


def _mdp(S: int, A: int, seed: int) -> FiniteMDP:
    rng = np.random.default_rng(seed)
    return FiniteMDP(rng.dirichlet(np.ones(S), size=(S, A)), rng.random((S, A)), None)


@pytest.mark.parametrize(
    ("S", "A", "d", "exact"),
    [(4, 3, None, True), (5, 2, 3, True), (1, 1, None, False), (3, 2, 1, False)],
)
def test_mac_equals_the_stored_terms_reference(S, A, d, exact, monkeypatch):
    mdp = _mdp(S, A, S * 10 + A)
    Phi = None if d is None else np.random.default_rng(1).standard_normal((S, d))
    kw = dict(iterations=300, T_max=64, rng=4, record_every=100, features=Phi)
    got = multilevel_actor_critic(mdp, **kw)
    monkeypatch.setattr(mac, "_mlmc_rollout", _stored_rollout)
    ref = multilevel_actor_critic(mdp, **kw)
    assert got.samples == ref.samples
    if exact:  # numpy's mean over axis 0 of (N, k >= 2) arrays is a sequential sum, as the loop's
        np.testing.assert_array_equal(got.theta, ref.theta)
        np.testing.assert_array_equal(got.omega, ref.omega)
        assert got.eta == ref.eta
    else:  # one feature or S·A = 1: numpy sums pairwise, the loop sequentially (round-off apart)
        np.testing.assert_allclose(got.theta, ref.theta, rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(got.omega, ref.omega, rtol=1e-9, atol=1e-12)
        assert got.eta == pytest.approx(ref.eta, rel=1e-9, abs=1e-12)


def test_a_deep_level_does_not_store_its_terms(monkeypatch):
    mdp = _mdp(20, 20, 3)
    monkeypatch.setattr(mac, "mlmc_level", lambda gen: 15)  # N = 2^15 transitions per update
    tracemalloc.start()
    try:
        res = multilevel_actor_critic(mdp, iterations=1, T_max=2**15, rng=0, record_every=10)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert res.samples == 2**15
    # the gain terms (2^15 floats, 0.26 MB) and O(S·A) sums; 105 MB (2^15 × 400 floats) before
    assert peak < 10e6
