"""``selective_concentrability`` against an independent enumeration written from the definition (helper-82).

:func:`selective_concentrability_bruteforce` shares the module's completion and killed-occupancy
helpers with the dynamic programme; this reference shares nothing. From the module docstring:
``C_sel(π) = max(C_cov(π), max_i max_{π_i' ∈ G_i} C_cov(π_i', π_{−i}))`` when, for every player,
the pessimistic completion of ``π`` is exact (``V̲_i^∞(π) ≥ V_i^π − tol``) and no deviation's
optimistic completion beats the best response (``max V̄_i^∞ ≤ V_i^† + tol``), else ``∞``;
``C_cov`` is the largest ratio of the killed occupancy (paths stop at the first unvisited pair) to
``ρ`` on the visited pairs, and ``G_i`` the deterministic Markov deviations within ``tol`` of the
optimistic optimum.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from rltheory.bounds import selective_concentrability


def _reference(P, R, pols, rho, mu, tol=1e-9):  # noqa: ANN001, ANN202, C901 - plain loops on purpose
    H, S = P.shape[:2]
    acts = P.shape[2:-1]
    n = len(acts)
    joints = list(itertools.product(*[range(a) for a in acts]))

    def prob(pl, h, s, a):  # noqa: ANN001, ANN202
        return float(np.prod([pl[j][h, s, a[j]] for j in range(n)]))

    def value(pl, i, mode):  # noqa: ANN001, ANN202 - 'true', 'optimistic' or 'pessimistic' completion
        V = np.zeros(S)
        for h in range(H - 1, -1, -1):
            Vh = np.zeros(S)
            for s, a in itertools.product(range(S), joints):
                p = prob(pl, h, s, a)
                if p == 0.0:
                    continue
                if mode == "true" or rho[(h, s) + a] > 0:
                    q = R[(i, h, s) + a] + P[(h, s) + a] @ V
                else:
                    q = float(H - h) if mode == "optimistic" else 0.0
                Vh[s] += p * q
            V = Vh
        return float(mu @ V)

    def killed_ratio(pl):  # noqa: ANN001, ANN202
        ds, worst = mu.copy(), 0.0
        for h in range(H):
            nxt = np.zeros(S)
            for s, a in itertools.product(range(S), joints):
                if rho[(h, s) + a] > 0:
                    d = ds[s] * prob(pl, h, s, a)
                    worst = max(worst, d / rho[(h, s) + a])
                    nxt += d * P[(h, s) + a]
            ds = nxt
        return worst

    if any(value(pols, i, "pessimistic") < value(pols, i, "true") - tol for i in range(n)):
        return math.inf
    worst = killed_ratio(pols)
    for i in range(n):
        devs = []
        for choice in itertools.product(range(acts[i]), repeat=H * S):
            pl = list(pols)
            pl[i] = np.eye(acts[i])[np.array(choice).reshape(H, S)]
            devs.append((value(pl, i, "optimistic"), value(pl, i, "true"), pl))
        best_opt = max(d[0] for d in devs)
        if best_opt > max(d[1] for d in devs) + tol:
            return math.inf
        worst = max([worst] + [killed_ratio(pl) for v, _, pl in devs if v >= best_opt - tol])
    return worst


@pytest.mark.parametrize("seed", range(40))
def test_selective_concentrability_matches_the_definition(seed):
    rng = np.random.default_rng(3000 + seed)
    H, S = int(rng.integers(1, 3)), int(rng.integers(1, 3))
    acts = (int(rng.integers(1, 3)), int(rng.integers(1, 3)))
    P = rng.dirichlet(np.ones(S), size=(H, S) + acts)
    R = rng.random((2, H, S) + acts)
    R = np.where(
        rng.random(R.shape) < 0.3, 1.0, R
    )  # rewards at the range make greedy ties and finite C_sel
    if seed % 2:
        pols = [np.eye(a)[rng.integers(0, a, (H, S))] for a in acts]  # pure candidates
    else:
        pols = [rng.dirichlet(np.ones(a), size=(H, S)) for a in acts]
    rho = rng.random((H, S) + acts) * (rng.random((H, S) + acts) < 0.6)
    mu = rng.dirichlet(np.ones(S))
    got, want = selective_concentrability(P, R, pols, rho, mu), _reference(P, R, pols, rho, mu)
    assert got == want if math.isinf(want) else got == pytest.approx(want, rel=1e-12)
