"""Float32 probabilities are judged at the tolerance of their own dtype.

differential_td (policies), mlmc_expectation (``P_π``, ``ν``) and mac_sample_terms (``π(·|s)``).

A float32 uniform policy over 7 actions has rows ``7 · fl32(1/7) = 1 + 4.5e-8`` when read in
float64; the reader judged them at float64's ``1e-8`` and refused the policy ("row s=0 sums to
1.0000000447034836"). Now float32 rows are judged at ``16·eps(float32) = 1.9e-6`` (the rule the
model constructors use for float32 inputs), then divided by their sums, so the run equals the
float64 run with the same distributions up to the float32 rounding of the policy.
"""

from __future__ import annotations

import numpy as np
import pytest

from rltheory.algorithms.average_reward import differential_td, mac_sample_terms, mlmc_expectation
from rltheory.mdp import FiniteMDP, policy_transition_matrix
from rltheory.mdp.average import gain_bias


def _mdp() -> FiniteMDP:
    rng = np.random.default_rng(4)
    return FiniteMDP(rng.dirichlet(np.ones(3), size=(3, 7)), rng.random((3, 7)), None)


def test_float32_uniform_policy_over_seven_actions_runs_as_the_float64_one():
    mdp = _mdp()
    pi32 = np.full((3, 7), 1 / 7, dtype=np.float32)
    assert abs(float(pi32[0].astype(float).sum()) - 1.0) > 1e-8  # outside float64's tolerance
    pi64 = np.full((3, 7), 1 / 7)
    r32 = differential_td(mdp, pi32, steps=3000, rng=2, record_every=1000)  # ValueError before
    r64 = differential_td(mdp, pi64, steps=3000, rng=2, record_every=1000)
    # the same draws (a uniform within an ulp of a CDF entry has probability ~1e-16 per step)
    np.testing.assert_allclose(r32.w, r64.w, rtol=0, atol=1e-12)
    assert r32.eta == pytest.approx(r64.eta, abs=1e-12)
    g, h = gain_bias(mdp, pi64, per_state=False)
    assert r32.gain == pytest.approx(float(g), abs=1e-12)
    np.testing.assert_allclose(r32.bias, np.asarray(h), atol=1e-12)


def test_policy_rows_are_still_judged():
    mdp = _mdp()
    off32 = np.full((3, 7), 1 / 7, dtype=np.float32)
    off32[1, 2] += np.float32(1e-3)
    with pytest.raises(ValueError, match=r"row s=1 sums to 1\.00100004.* \(atol=1\.9e-06\)"):
        differential_td(mdp, off32, steps=10, rng=0)
    # float64 rows keep float64's tolerance
    off64 = np.full((3, 7), 1 / 7)
    off64[2, 0] += 4.5e-8
    with pytest.raises(ValueError, match=r"row s=2 sums to 1\.00000004\d* \(atol=1e-08\)"):
        differential_td(mdp, off64, steps=10, rng=0)


def test_mlmc_expectation_accepts_a_float32_chain():
    # P_π of a float32 model has rows 1 ± 8e-8 in float64 (refused at 1e-8 before)
    rng = np.random.default_rng(9)
    P = rng.dirichlet(np.ones(7), size=(7, 3)).astype(np.float32)
    mdp = FiniteMDP(P, rng.random((7, 3)).astype(np.float32), None)
    Pp = np.asarray(policy_transition_matrix(mdp, np.full((7, 3), 1 / 3, dtype=np.float32)))
    nu = np.full(7, 1 / 7, dtype=np.float32)
    assert Pp.dtype == np.float32 and np.abs(Pp.astype(float).sum(-1) - 1).max() > 1e-8
    f = rng.standard_normal((7, 2))
    E_mlmc, E_avg = mlmc_expectation(Pp, nu, f, 100)  # top level j_max = 6, N = 64
    # reference: the float64 chain with the float32 rows renormalised, by direct enumeration
    Q = Pp.astype(float) / Pp.astype(float).sum(-1, keepdims=True)
    v, terms = nu.astype(float) / nu.astype(float).sum(), []
    for _ in range(64):
        terms.append(v @ f)
        v = v @ Q
    np.testing.assert_allclose(E_avg, np.mean(terms, axis=0), rtol=0, atol=1e-13)
    np.testing.assert_allclose(E_mlmc, E_avg, rtol=0, atol=1e-13)  # telescoping
    # rows off by more than float32 rounding are still refused
    bad = Pp.copy()
    bad[3, 0] += np.float32(1e-3)
    with pytest.raises(ValueError, match=r"each P_pi\[s, :\] must sum to 1 .*\(s=3\)"):
        mlmc_expectation(bad, nu, f, 100)


def test_mac_sample_terms_accept_a_float32_policy_row():
    pi32 = np.full(7, 1 / 7, dtype=np.float32)  # sums to 1 + 4.5e-8 in float64 (refused before)
    pi64 = pi32.astype(float) / pi32.astype(float).sum()
    Phi, omega = np.eye(3), np.array([0.25, -0.5, 1.0])
    got = mac_sample_terms(Phi, pi32, 2, 4, 0.75, 1, omega, 0.5)
    ref = mac_sample_terms(Phi, pi64, 2, 4, 0.75, 1, omega, 0.5)
    for a, b in zip(got, ref, strict=True):
        np.testing.assert_array_equal(a, b)
    # δ = r − η + ω(s') − ω(s) = 0.75 − 0.5 − 0.5 − 1 = −1.25; the actor row is δ (e_a − π)
    assert got[0] == 0.25
    np.testing.assert_allclose(got[2][2], -1.25 * (np.eye(7)[4] - pi64), rtol=0, atol=1e-15)
