"""CE / CCE gaps and the correlated-equilibrium solvers at payoffs near the float range.

A swap gain ``U_i(a_i', a_{-i}) − U_i(a)`` of payoffs ``±1e308`` is beyond the float range. Before,
the incentive rows held ``±inf``, a zero probability times ``inf`` was NaN, and the gap of a
distribution that is no CE read 0; the welfare LPs failed inside scipy. References: exact rational
arithmetic on ``μ/Σμ`` (the object the certificate is about).
"""

from __future__ import annotations

import itertools
import warnings
from fractions import Fraction

import numpy as np
import pytest

from rltheory.games import (
    cce_constraints,
    cce_gap,
    ce_constraints,
    ce_gap,
    max_entropy_ce,
    max_welfare_cce,
    max_welfare_ce,
)
from rltheory.games.zoo import chicken

FMAX = float(np.finfo(np.float64).max)


def _exact_gap(U: np.ndarray, mu: np.ndarray, swap: bool) -> Fraction:
    """Largest gain of a deviation (``swap``: per recommended action, CE; else CCE), exactly."""
    shape = U.shape[1:]
    joint = list(itertools.product(*map(range, shape)))
    w = [Fraction(float(mu[k])) for k in joint]
    total = sum(w)
    w = [p / total for p in w]
    best = Fraction(0)
    for i in range(U.shape[0]):
        for rec in range(shape[i]) if swap else [None]:
            for b in range(shape[i]):
                gain = Fraction(0)
                for k, p in zip(joint, w, strict=True):
                    if rec is not None and k[i] != rec:
                        continue
                    dev = k[:i] + (b,) + k[i + 1 :]
                    gain += p * (Fraction(float(U[(i, *dev)])) - Fraction(float(U[(i, *k)])))
                best = max(best, gain)
    return best


def test_gap_of_a_point_mass_in_huge_matching_pennies_is_not_zero():
    # mu = point mass on (0, 0): player 2 gains U_2(0, 1) − U_2(0, 0) = 2e308 > fmax by swapping,
    # so no finite number bounds the gap. Before: ce_gap = cce_gap = 0.0 (NaN read as 0).
    M = 1e308
    U = np.array([[[M, -M], [-M, M]], [[-M, M], [M, -M]]])
    mu = np.array([[1.0, 0.0], [0.0, 0.0]])
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        assert ce_gap(U, mu) == np.inf and cce_gap(U, mu) == np.inf
        # the uniform distribution is the CE: exact gap 0, certified at round-off of 1e308
        assert 0.0 <= ce_gap(U, np.full((2, 2), 0.25)) <= 1e-14 * M


@pytest.mark.parametrize("tiny_player", [False, True])
def test_gaps_at_the_float_range_bound_the_exact_gap(tiny_player):
    rng = np.random.default_rng(21)
    bad = []
    for t in range(30):
        shape = tuple(int(v) for v in rng.integers(1, 4, size=2))
        U = rng.uniform(-1.0, 1.0, size=(2, *shape)) * FMAX
        if tiny_player:  # player 2's payoffs of size 1e-310 keep their own allowance
            U[1] *= 2.0**-2046
        mu = rng.dirichlet(np.full(int(np.prod(shape)), 0.5)).reshape(shape)
        if t % 3 == 0:
            mu = np.zeros(shape)
            mu[tuple(int(rng.integers(a)) for a in shape)] = 1.0
        for swap, fn in ((True, ce_gap), (False, cce_gap)):
            with warnings.catch_warnings():
                warnings.simplefilter("error", RuntimeWarning)
                cert = fn(U, mu)
            exact = _exact_gap(U, mu, swap)
            if exact > FMAX:
                ok = cert == np.inf
            else:  # finite, at least the exact gap, and within round-off of it
                ok = (
                    np.isfinite(cert)
                    and Fraction(cert) >= exact
                    and cert - float(exact) <= 1e-13 * FMAX
                )
            if not ok:
                bad.append((t, fn.__name__, float(exact), cert))
    assert not bad, f"(game, which, exact, certified): {bad[:5]}"


@pytest.mark.parametrize("solve", [max_welfare_ce, max_welfare_cce, max_entropy_ce])
def test_solvers_on_chicken_at_the_float_range_match_chicken(solve):
    # CE / CCE sets and welfare maximisers are invariant under a common positive factor:
    # chicken x 2^1021 (payoffs up to 1.5e308) has the distributions of chicken and payoffs x 2^1021.
    # Before: the welfare LPs raised scipy's "c must not contain values inf, nan".
    s = 2.0**1021
    ref = solve(chicken())
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        out = solve(chicken() * s)
    np.testing.assert_allclose(out.distribution, ref.distribution, atol=1e-7)
    np.testing.assert_allclose(out.payoffs / s, ref.payoffs, rtol=1e-7)
    assert out.welfare == np.inf  # 2 * 5.25 * 2^1021 > fmax (max_entropy: 8.44 * 2^1021)
    assert out.gap <= 1e-6 * s
    assert out.gap >= float(_exact_gap(chicken() * s, out.distribution, True))


@pytest.mark.parametrize("constraints", [ce_constraints, cce_constraints])
def test_constraint_entries_beyond_the_range_are_signed_inf_without_a_warning(constraints):
    # matching pennies x 1e308: every gain is +-2e308 or 0; the float bound of +-2e308 is +-inf.
    # Before: the same matrix, with numpy's 'overflow encountered in subtract'.
    M = 1e308
    U = np.array([[[M, -M], [-M, M]], [[-M, M], [M, -M]]])
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        G = constraints(U)
    unit = constraints(U / 1e308)  # the unit game's gains are +-2 or 0
    np.testing.assert_array_equal(G, np.where(unit > 0, np.inf, np.where(unit < 0, -np.inf, 0.0)))
