"""MLMC levels, combination and expectations against exact rational references (helper-82).

``J ~ Geom(1/2)`` on ``{1, 2, ...}``; ``X = x_0 + 2^J (X^{(J)} − X^{(J−1)})`` if ``2^J ≤ T_max``
else ``x_0``. Exactly, ``E_J[X] = Σ_{j ≤ j_max} 2^{-j} X_j + 2^{-j_max} x_0 = X^{(j_max)}`` for
any fixed sequence ``x`` (the levels telescope), ``j_max = ⌊log₂ T_max⌋``.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from rltheory.algorithms import mlmc_combine, mlmc_expectation, mlmc_level


class TestLevelNeedsAGenerator:
    @pytest.mark.parametrize("seed", [0, 3, np.int64(7)])
    def test_int_seed_is_refused(self, seed):
        # Bug fixed: an int seed built a fresh Generator on every call, so [mlmc_level(0) for _ in
        # range(n)] was [2, 2, ..., 2]: a loop that samples levels never left level 2.
        with pytest.raises(TypeError, match=r"int seed would re-seed on every call.*default_rng"):
            mlmc_level(seed)

    @pytest.mark.parametrize("rng", [None, True, 0.5, np.random.RandomState(0)])
    def test_other_non_generators_are_refused(self, rng):
        with pytest.raises(TypeError, match=r"needs a numpy.random.Generator"):
            mlmc_level(rng)

    def test_a_generator_is_advanced_by_each_draw(self):
        gen = np.random.default_rng(0)
        assert [mlmc_level(gen) for _ in range(6)] == [2, 1, 1, 1, 3, 4]  # default_rng(0)'s draws
        # P(J = 1) = 1/2, P(J = 2) = 1/4 (binomial, n = 4000: 4.5σ = 0.036 and 0.031)
        Js = np.array([mlmc_level(gen) for _ in range(4000)])
        assert abs(np.mean(Js == 1) - 0.5) < 0.036 and abs(np.mean(Js == 2) - 0.25) < 0.031


def _exact_mean(x: list[int], N: int) -> Fraction:
    return Fraction(sum(x[:N]), N)


@pytest.mark.parametrize("T_max", [1, 2, 3, 4, 7, 8, 9, 15, 16, 31, 32, 33, 40])
def test_combine_is_unbiased_for_the_truncated_average(T_max):
    # x_k = k² − 5k + 3 (integers: every mean over 2^j terms and every 2^{-j} weight is a dyadic
    # rational, exact in float64), so Σ_J P(J) X_J must equal the rational mean of x_{<2^{j_max}}
    x = [k * k - 5 * k + 3 for k in range(64)]
    xa = np.array(x, dtype=np.float64)
    jmax = T_max.bit_length() - 1
    E = Fraction(0)
    for J in range(1, jmax + 1):
        E += Fraction(1, 2**J) * Fraction(float(mlmc_combine(xa, J, T_max)))
    for J in (jmax + 1, jmax + 2, 60):  # every level above j_max returns x_0 (mass 2^{-j_max})
        assert float(mlmc_combine(xa, J, T_max)) == x[0]
    E += Fraction(1, 2**jmax) * x[0]
    assert E == _exact_mean(x, 2**jmax)


def _rational_chain() -> tuple[list[list[Fraction]], list[Fraction], list[Fraction]]:
    F = Fraction
    P = [[F(1, 2), F(1, 4), F(1, 4)], [F(0), F(1, 3), F(2, 3)], [F(3, 5), F(0), F(2, 5)]]
    nu = [F(1, 6), F(1, 2), F(1, 3)]
    f = [F(2), F(-1), F(1, 2)]
    return P, nu, f


@pytest.mark.parametrize("T_max", [1, 2, 5, 8, 13, 64, 100])
def test_expectation_matches_exact_rational_enumeration(T_max):
    # E x_k = νᵀ P^k f̄ in exact rationals; E X^{(j)} = 2^{-j} Σ_{k<2^j} E x_k and
    # E X^MLMC = Σ_{j ≤ j_max} 2^{-j} (E x_0 + 2^j (E X^{(j)} − E X^{(j−1)})) + 2^{-j_max} E x_0
    P, nu, f = _rational_chain()
    jmax = T_max.bit_length() - 1
    Ex, v = [], list(nu)
    for _ in range(2**jmax):
        Ex.append(sum(vi * fi for vi, fi in zip(v, f, strict=True)))
        v = [sum(v[s] * P[s][t] for s in range(3)) for t in range(3)]
    means = [sum(Ex[: 2**j]) / 2**j for j in range(jmax + 1)]
    E_mlmc = sum(
        (
            Fraction(1, 2**j) * (Ex[0] + 2**j * (means[j] - means[j - 1]))
            for j in range(1, jmax + 1)
        ),
        Fraction(1, 2**jmax) * Ex[0],
    )
    assert E_mlmc == means[jmax]  # the telescoping identity, exactly
    got_mlmc, got_trunc = mlmc_expectation(
        np.array(P, dtype=float), np.array(nu, dtype=float), np.array(f, dtype=float), T_max
    )
    assert float(got_trunc) == pytest.approx(float(means[jmax]), rel=1e-13, abs=1e-14)
    # the level sum carries 2^j (E X^{(j)} − E X^{(j−1)}): round-off grows like 2^{j_max} eps
    assert float(got_mlmc) == pytest.approx(float(means[jmax]), rel=0, abs=2**jmax * 1e-15)


@pytest.mark.parametrize("T_max", [2**10, 2**16, 2**16 + 1, 2**17, 2**20 - 1, 2**24])
def test_expectation_two_state_closed_form_on_both_branches(T_max):
    # P = [[1 − a, a], [b, 1 − b]], a = 1/4, b = 1/2: λ = 1 − a − b = 1/4, π = (b, a)/(a + b) = (2/3, 1/3).
    # From ν = e_0 with f̄ = e_0: E x_k = π_0 + λ^k (1 − π_0), so the mean of 2^j terms is
    # π_0 + (1 − π_0)(1 − λ^N)/(N (1 − λ)), N = 2^j, in exact rationals (top levels 10..24 cover the
    # enumeration (≤ 16) and the doubling branch)
    a, b = Fraction(1, 4), Fraction(1, 2)
    lam, pi0 = 1 - a - b, b / (a + b)
    N = 2 ** (T_max.bit_length() - 1)
    want = pi0 + (1 - pi0) * (1 - lam**N) / (N * (1 - lam))
    P = np.array([[0.75, 0.25], [0.5, 0.5]])
    E_mlmc, E_trunc = mlmc_expectation(P, np.array([1.0, 0.0]), np.array([1.0, 0.0]), T_max)
    assert float(E_trunc) == pytest.approx(float(want), rel=1e-13)
    assert float(E_mlmc) == pytest.approx(float(want), rel=1e-12)
