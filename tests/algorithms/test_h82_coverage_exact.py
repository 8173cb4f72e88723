"""Coverage coefficients against exact rational computations on small seeded models (helper-82).

References in ``fractions.Fraction``: occupancies by the forward recursion
``d_{h+1}(s') = Σ_{s,a} d_h(s) π_h(a|s) P_h(s'|s,a)``; suprema over policies by enumerating every
deterministic Markov policy (a pointwise occupancy ``Pr(s_h = s)`` is maximised by one); for games,
every deterministic Markov deviation of each player against the others' fixed policies.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest

from rltheory.bounds import (
    all_policy_concentrability,
    single_policy_concentrability,
    unilateral_concentrability,
)
from rltheory.mdp import FiniteHorizonMDP


def _law(rng: np.random.Generator, n: int, p_zero: float) -> list[Fraction]:
    w = [0 if rng.random() < p_zero else int(k) for k in rng.integers(1, 5, n)]
    if sum(w) == 0:
        w[int(rng.integers(n))] = 1
    return [Fraction(k, sum(w)) for k in w]


def _occupancy(P, pi, mu, H, S, A):  # noqa: ANN001, ANN202 - nested rational lists
    d, ds = [], list(mu)
    for h in range(H):
        dh = [[ds[s] * pi[h][s][a] for a in range(A)] for s in range(S)]
        d.append(dh)
        ds = [sum(dh[s][a] * P[h][s][a][t] for s in range(S) for a in range(A)) for t in range(S)]
    return d


def _max_ratio(t: list[Fraction], d: list[Fraction]) -> float:
    ratios = [x / y if y > 0 else math.inf for x, y in zip(t, d, strict=True) if x > 0]
    return float(max(ratios))


def _flat(d):  # noqa: ANN001, ANN202
    return [x for step in d for row in step for x in row]


@pytest.mark.parametrize("seed", range(12))
def test_single_and_all_policy_concentrability_are_exact(seed):
    rng = np.random.default_rng(seed)
    H, S, A = int(rng.integers(1, 4)), int(rng.integers(1, 4)), int(rng.integers(1, 3))
    P = [[[_law(rng, S, 0.3) for _ in range(A)] for _ in range(S)] for _ in range(H)]
    mu = _law(rng, S, 0.3)
    target = [[_law(rng, A, 0.5) for _ in range(S)] for _ in range(H)]
    cover = 0.0 if seed % 3 else 0.3  # full-support data (finite C_all) on two seeds in three
    behaviour = [[_law(rng, A, cover) for _ in range(S)] for _ in range(H)]
    d_t, d_b = _occupancy(P, target, mu, H, S, A), _occupancy(P, behaviour, mu, H, S, A)
    sup = [[[Fraction(0)] * A for _ in range(S)] for _ in range(H)]
    for choice in itertools.product(range(A), repeat=H * S):
        det = [
            [[Fraction(int(choice[h * S + s] == a)) for a in range(A)] for s in range(S)]
            for h in range(H)
        ]
        d = _occupancy(P, det, mu, H, S, A)
        for h, s, a in itertools.product(range(H), range(S), range(A)):
            sup[h][s][a] = max(sup[h][s][a], sum(d[h][s]))  # reach s at h, then play any a
    fh = FiniteHorizonMDP(np.array(P, dtype=float), np.zeros((H, S, A)), np.array(mu, dtype=float))
    as_float = lambda d: np.array(d, dtype=float)  # noqa: E731
    C_star = single_policy_concentrability(as_float(d_t), as_float(d_b))
    C_all = all_policy_concentrability(fh, as_float(d_b))
    for got, want in (
        (C_star, _max_ratio(_flat(d_t), _flat(d_b))),
        (C_all, _max_ratio(_flat(sup), _flat(d_b))),
    ):
        assert got == want if math.isinf(want) else got == pytest.approx(want, rel=1e-13)
    assert 1.0 <= C_star <= C_all  # the definitions' order (C_all is a sup over π ∋ target)


@pytest.mark.parametrize("seed", range(8))
def test_unilateral_concentrability_is_the_sup_over_deviations(seed):
    rng = np.random.default_rng(100 + seed)
    H, S, acts = int(rng.integers(1, 3)), int(rng.integers(1, 3)), (2, int(rng.integers(1, 3)))
    J = acts[0] * acts[1]
    P = [[[_law(rng, S, 0.3) for _ in range(J)] for _ in range(S)] for _ in range(H)]
    mu = _law(rng, S, 0.3)
    pols = [[[_law(rng, a, 0.3) for _ in range(S)] for _ in range(H)] for a in acts]
    cover = 0.0 if seed % 3 else 0.2  # full-support data (finite C_uni) on two seeds in three
    rho = [_law(rng, S * J, cover) for _ in range(H)]  # one law per step over (s, a1, a2)
    rho_flat = [x for step in rho for x in step]
    worst = 0.0
    for i in range(2):
        for choice in itertools.product(range(acts[i]), repeat=H * S):
            dev = list(pols)
            dev[i] = [
                [[Fraction(int(choice[h * S + s] == a)) for a in range(acts[i])] for s in range(S)]
                for h in range(H)
            ]
            joint = [
                [
                    [
                        dev[0][h][s][a1] * dev[1][h][s][a2]
                        for a1 in range(acts[0])
                        for a2 in range(acts[1])
                    ]
                    for s in range(S)
                ]
                for h in range(H)
            ]
            worst = max(worst, _max_ratio(_flat(_occupancy(P, joint, mu, H, S, J)), rho_flat))
    got = unilateral_concentrability(
        np.array(P, dtype=float).reshape((H, S) + acts + (S,)),
        [np.array(p, dtype=float) for p in pols],
        np.array(rho, dtype=float).reshape((H, S) + acts),
        np.array(mu, dtype=float),
    )
    assert got == worst if math.isinf(worst) else got == pytest.approx(worst, rel=1e-13)
