"""LCB-VI and PEVI against loop-by-loop implementations of their stated formulas (a check).

The references below are written from the docstrings' formulas with Python loops over episodes
and pairs, an implementation independent of the library's bincount grouping:

* lcb_vi (Hoeffding): ``Γ_h = min((H − h)√(ln(2HSA/δ)/(2n)), H − h)``;
  (Bernstein): ``Γ_h = min(√(2 V_n ln(4HSA/δ)/n) + 7 (H − h) ln(4HSA/δ)/(3(n − 1)), H − h)`` for
  ``n ≥ 2`` (Maurer & Pontil 2009, Thm 4, two-sided), ``H − h`` for ``n < 2``;
  ``Q̂_h = clip(ȳ − Γ_h, 0, H − h)`` on visited pairs, ``0`` with ``Γ_h = H − h`` on unseen ones;
  with splitting episode ``k`` feeds step ``k mod H`` only.
* pevi, ``beta="self-normalized"``: ``β_h = (H−h)/2 · √(2 ln(H/δ) + ln det(Λ_h/λ)) + √(λd)(H−h)``
  (Abbasi-Yadkori, Pál & Szepesvári 2011, Thm 2, with ``R = (H−h)/2`` and ``‖w_h‖ ≤ (H−h)√d``),
  ``Γ_h = β_h √(φᵀΛ_h⁻¹φ)``.

Datasets include one episode, unseen pairs (sparse behaviour) and K < H with splitting.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from rltheory.algorithms.offline import lcb_vi, pevi
from rltheory.mdp import FiniteHorizonMDP
from rltheory.mdp.offline_data import sample_episodes


def _lcb_reference(d, bonus: str, delta: float, split: bool):
    H, S, A, K = d.H, d.S, d.A, d.K
    V = np.zeros((H + 1, S))
    Q = np.zeros((H, S, A))
    G = np.zeros((H, S, A))
    L2 = math.log(2 * H * S * A / delta)
    L4 = math.log(4 * H * S * A / delta)
    for h in reversed(range(H)):
        B = H - h
        for s in range(S):
            for a in range(A):
                y = [
                    float(d.rewards[k, h]) + V[h + 1, int(d.states[k, h + 1])]
                    for k in range(K)
                    if (not split or k % H == h) and d.states[k, h] == s and d.actions[k, h] == a
                ]
                n = len(y)
                if n == 0:
                    G[h, s, a] = B
                    continue
                if bonus == "hoeffding":
                    b = min(B * math.sqrt(L2 / (2 * n)), B)
                elif n < 2:
                    b = B
                else:
                    m = sum(y) / n
                    var = sum((t - m) ** 2 for t in y) / (n - 1)
                    b = min(math.sqrt(2 * var * L4 / n) + 7 * B * L4 / (3 * (n - 1)), B)
                G[h, s, a] = b
                Q[h, s, a] = min(max(sum(y) / n - b, 0.0), B)
        V[h] = Q[h].max(axis=-1)
    return Q, G, V


def _dataset(seed: int, K: int):
    rng = np.random.default_rng(seed)
    H, S, A = int(rng.integers(1, 4)), int(rng.integers(1, 4)), int(rng.integers(1, 4))
    fh = FiniteHorizonMDP(
        rng.dirichlet(np.full(S, 0.3), size=(H, S, A)), rng.uniform(size=(H, S, A))
    )
    # a sparse behaviour policy: many (s, a) pairs are never seen
    beh = rng.dirichlet(np.full(A, 0.3), size=(H, S))
    return sample_episodes(fh, beh, K, rng=rng, rewards="bernoulli")


@pytest.mark.parametrize("seed, K", [(0, 1), (1, 2), (2, 40), (3, 150), (4, 7), (5, 300)])
@pytest.mark.parametrize("bonus", ["hoeffding", "bernstein"])
@pytest.mark.parametrize("split", [True, False])
def test_lcb_vi_matches_its_formulas(seed, K, bonus, split):
    d = _dataset(seed, K)
    for delta in (1e-3, 0.5):
        res = lcb_vi(d, bonus=bonus, delta=delta, split=split)
        Q, G, V = _lcb_reference(d, bonus, delta, split)
        # values ≤ H ≤ 3 built from sums of at most 300 terms: round-off ~1e-13
        np.testing.assert_allclose(res.bonus, G, rtol=0, atol=1e-12)
        np.testing.assert_allclose(res.Q, Q, rtol=0, atol=1e-12)
        np.testing.assert_allclose(res.V, V, rtol=0, atol=1e-12)


@pytest.mark.parametrize("seed", [0, 3, 5])
def test_pevi_self_normalised_bonus_matches_its_formula(seed):
    d = _dataset(seed, 200)
    H, S, A = d.H, d.S, d.A
    rng = np.random.default_rng(100 + seed)
    dim = 3
    phi = rng.dirichlet(np.ones(dim), size=(S, A))
    ridge, delta = 0.5, 0.05
    res = pevi(d, phi, beta="self-normalized", ridge=ridge, delta=delta, split=True)
    for h in range(H):
        Lam = ridge * np.eye(dim)
        for k in range(d.K):
            if k % H == h:
                f = phi[d.states[k, h], d.actions[k, h]]
                Lam = Lam + np.outer(f, f)
        np.testing.assert_allclose(res.Lambda[h], Lam, rtol=1e-14, atol=1e-13)
        B = H - h
        logdet = math.log(np.linalg.det(Lam / ridge))
        beta = 0.5 * B * math.sqrt(2 * math.log(H / delta) + logdet) + math.sqrt(ridge * dim) * B
        Linv = np.linalg.inv(Lam)
        want = np.array(
            [[beta * math.sqrt(phi[s, a] @ Linv @ phi[s, a]) for a in range(A)] for s in range(S)]
        )
        np.testing.assert_allclose(res.bonus[h], want, rtol=1e-10, atol=0)
