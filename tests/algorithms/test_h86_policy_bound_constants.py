"""Problem constants of the policy-optimisation bounds: the ranges their definitions imply.

* ``‖d^{π*}_ρ/μ‖∞ ≥ 1`` (two distributions: the largest ratio is at least ``Σ d/Σ μ = 1``), and
  ``‖1/ρ‖∞ = 1/min_s ρ(s) ≥ S``; smaller values made :func:`softmax_pg_bound`,
  :func:`projected_pg_bound` and :func:`entropy_pg_bound` claim gaps below any model's (``0``
  for ``mismatch=0``). Values below by their dtype's rounding count as the floor.
* ``KL ≥ 0`` (Gibbs): :func:`kl_to_policy` returned ``−1.1e-16`` for policies equal up to
  rounding, which :func:`npg_bound` refused.
* Mei et al.'s ``c`` is a probability read as a number: ``True`` and ``"1"`` were the
  probability 1, ``10**400`` a bare ``OverflowError``; a count beyond the float range
  (``n_states=10**400``) was a bare ``OverflowError`` too (the bound is ``inf``).
"""

from fractions import Fraction

import numpy as np
import pytest

from rltheory.bounds.policy_optimization import (
    entropy_pg_bound,
    kl_to_policy,
    mismatch_coefficient,
    npg_bound,
    pmd_sublinear_bound,
    projected_pg_bound,
    softmax_pg_bound,
)
from rltheory.mdp import FiniteMDP
from rltheory.testing import exact_solve

_SPG = {"gamma": 0.5, "n_states": 2, "c": 0.5, "mismatch": 1.0, "inv_rho": 2.0}
_EPG = {"gamma": 0.5, "tau": 1.0, "n_actions": 2, "c": 0.5, "mismatch": 1.0, "inv_mu": 2.0}


@pytest.mark.parametrize(
    ("call", "where"),
    [
        (lambda m: softmax_pg_bound(4, **_SPG | {"mismatch": m}), "got"),
        (lambda m: projected_pg_bound(4, gamma=0.5, n_states=2, n_actions=2, mismatch=m), "got"),
        (lambda m: entropy_pg_bound(4, **_EPG | {"mismatch": m}), "got"),
        (lambda m: softmax_pg_bound(4, **_SPG | {"mismatch": [1.0, m]}), r"mismatch\[1\] ="),
    ],
)
@pytest.mark.parametrize("value", [0.5, 0.99])
def test_a_mismatch_below_one_is_refused(call, where, value):
    # old code: each returned a bound below the one at mismatch 1 (entropy_pg_bound took any
    # mismatch > 0)
    with pytest.raises(ValueError, match=rf"^mismatch must be >= 1 .*; {where} {value!r} \(values"):
        call(value)


def test_a_zero_mismatch_is_refused():
    # old code: softmax_pg_bound(..., mismatch=0.0) = 0.0 and projected_pg_bound(...) = 0.0, a claim
    # that the gap is 0 at every iterate (entropy_pg_bound keeps its "> 0" message for 0)
    with pytest.raises(ValueError, match=r"^mismatch must be >= 1 .*; got 0\.0 \(values"):
        softmax_pg_bound(4, **_SPG | {"mismatch": 0.0})
    with pytest.raises(ValueError, match=r"^mismatch must be >= 1 .*; got 0\.0 \(values"):
        projected_pg_bound(4, gamma=0.5, n_states=2, n_actions=2, mismatch=0.0)
    with pytest.raises(
        ValueError, match=r"^mismatch must be a number > 0 \(inf allowed\); got 0\.0$"
    ):
        entropy_pg_bound(4, **_EPG | {"mismatch": 0.0})


def test_a_mismatch_below_one_by_rounding_counts_as_one():
    one = softmax_pg_bound(4, **_SPG)
    assert softmax_pg_bound(4, **_SPG | {"mismatch": 1.0 - 1e-12}) == one
    # float32's rounding (2·16 eps = 3.8e-6) at least; a float16 value is judged at its own
    assert softmax_pg_bound(4, **_SPG | {"mismatch": 0.9999963}) == one
    with pytest.raises(ValueError, match=r"float32 distributions, count as 1\)$"):
        softmax_pg_bound(4, **_SPG | {"mismatch": 0.99999})
    assert softmax_pg_bound(4, **_SPG | {"mismatch": np.float16(0.99)}) == one


def test_inv_rho_below_the_number_of_states_is_refused():
    # 1/min_s ρ(s) ≥ S: inv_rho = 1 with S = 2 halved the bound (old code: 3932.16 for 7864.32)
    with pytest.raises(
        ValueError, match=r"^inv_rho must be >= 2 \(1/min_s rho\(s\) .*\); got 1\.0"
    ):
        softmax_pg_bound(4, **_SPG | {"inv_rho": 1.0})
    # the uniform float32 ρ over 3 states: 1/float32(1/3) = 2.99999991 counts as 3
    inv = 1.0 / float(np.float32(1.0 / 3.0))
    assert inv < 3.0
    b = softmax_pg_bound(4, **_SPG | {"n_states": 3, "inv_rho": inv})
    assert b == softmax_pg_bound(4, **_SPG | {"n_states": 3, "inv_rho": 3.0})


def test_mismatch_coefficient_of_a_stationary_start_is_exactly_one():
    # ρ stationary under π: d^π_ρ = (1−γ) Σ_t γ^t ρ P_π^t = ρ, so ‖d^π_ρ/ρ‖∞ = 1 exactly; the float32
    # model gave 0.99999992 (old code), below the floor the bounds now check
    rng = np.random.default_rng(72)
    P = rng.dirichlet(np.ones(5), size=(5, 2))
    m = FiniteMDP(P.astype(np.float32), rng.uniform(size=(5, 2)).astype(np.float32), gamma=0.9)
    Pp = np.asarray(m.P, dtype=float)[:, 0, :]
    w, v = np.linalg.eig(Pp.T)
    nu = np.real(v[:, np.argmin(abs(w - 1))])
    nu = (nu / nu.sum()).astype(np.float32)
    mm = mismatch_coefficient(m, np.zeros(5, dtype=int), rho=nu)
    assert float(mm) == 1.0
    assert softmax_pg_bound(4, **_SPG | {"mismatch": mm}) == softmax_pg_bound(4, **_SPG)


def _exact_occupancy(P, pi, rho, g):
    """``d^π_ρ`` in fractions: ``(I − γ P_π)ᵀ d = (1 − γ) ρ``."""
    S, A = P.shape[0], P.shape[1]
    Pp = [
        [sum(Fraction(pi[s, a]) * Fraction(P[s, a, t]) for a in range(A)) for t in range(S)]
        for s in range(S)
    ]
    M = [[(1 if i == j else 0) - Fraction(g) * Pp[j][i] for j in range(S)] for i in range(S)]
    return exact_solve(M, [(1 - Fraction(g)) * Fraction(r) for r in rho])


@pytest.mark.parametrize("seed", range(6))
def test_mismatch_coefficient_equals_the_exact_ratio(seed):
    # consistency with an independent computation in fractions (the model's stored P, ρ and μ)
    rng = np.random.default_rng(seed)
    S, A, g = 2 + seed % 3, 1 + seed % 3, [0.0, 0.5, 0.9][seed % 3]
    m = FiniteMDP(rng.dirichlet(np.ones(S), size=(S, A)), rng.uniform(size=(S, A)), gamma=g)
    P = np.asarray(m.P)
    P = P / P.sum(-1, keepdims=True)
    pi = rng.dirichlet(np.ones(A), size=S)
    rho, mu = rng.dirichlet(np.ones(S)), rng.dirichlet(np.ones(S))
    d = _exact_occupancy(P, pi / pi.sum(-1, keepdims=True), rho / rho.sum(), g)
    exact = max(d[s] / Fraction(mu[s] / mu.sum()) for s in range(S))
    got = float(mismatch_coefficient(m, pi, rho=rho, mu=mu))
    assert got == pytest.approx(float(max(exact, 1)), rel=64 * S * np.finfo(float).eps / (1 - g))


@pytest.mark.parametrize("x", [1.0 - 2.0**-53, 1.0 - 2.0**-52, 1.0 - 1e-15])
def test_kl_of_policies_equal_up_to_rounding_is_not_negative(x):
    # one action: every policy is the same policy and KL = 0; old code: x·log(x) = −1.1e-16, which
    # npg_bound and pmd_sublinear_bound refused ("kl0 must be a number >= 0")
    m = FiniteMDP(np.ones((1, 1, 1)), np.zeros((1, 1)), gamma=0.5)
    kl = kl_to_policy(m, np.array([[x]]), np.array([[1.0]]), np.ones(1))
    assert float(kl) == 0.0
    assert npg_bound(10, eta=1.0, gamma=0.5, kl0=kl) == npg_bound(10, eta=1.0, gamma=0.5, kl0=0.0)
    assert pmd_sublinear_bound(10, eta=1.0, gamma=0.5, kl0=kl) == pmd_sublinear_bound(
        10, eta=1.0, gamma=0.5, kl0=0.0
    )


@pytest.mark.parametrize(
    ("value", "kind", "msg"),
    [
        (True, TypeError, r"^c must hold real numbers; got True \(bool\)$"),
        (np.True_, TypeError, r"^c must hold real numbers; got True \(bool\)$"),
        ("1", TypeError, r"^c must hold real numbers; got '1' \(str\)$"),
        (np.array([True]), TypeError, r"^c must hold real numbers; got an array of dtype bool"),
        (
            10**400,
            ValueError,
            r"^c must be in \(0, 1\] and finite as a float; got an integer beyond",
        ),
    ],
)
@pytest.mark.parametrize("fn", ["softmax", "entropy"])
def test_c_must_be_a_number(fn, value, kind, msg):
    # old code: np.asarray(c, dtype=float) read True and "1" as the probability 1 (bounds 1966.08
    # and 13.505) and raised a bare OverflowError for 10**400
    with pytest.raises(kind, match=msg):
        if fn == "softmax":
            softmax_pg_bound(4, **_SPG | {"c": value})
        else:
            entropy_pg_bound(4, **_EPG | {"c": value})


def test_counts_beyond_the_float_range_give_an_infinite_bound():
    # old code: 16.0 * 10**400 and 64.0 * ... * 10**400 raised a bare OverflowError
    big = 10**400
    assert softmax_pg_bound(4, **_SPG | {"n_states": big, "inv_rho": np.inf}) == np.inf
    assert projected_pg_bound(4, gamma=0.5, n_states=big, n_actions=2, mismatch=1.0) == np.inf
    assert projected_pg_bound(4, gamma=0.5, n_states=2, n_actions=big, mismatch=1.0) == np.inf
