"""differential_td accepts float32 policies: rows are judged at the tolerance of their own dtype.

A float32 uniform policy over 7 actions has rows ``7 · fl32(1/7) = 1 + 4.5e-8`` when read in
float64; the reader judged them at float64's ``1e-8`` and refused the policy ("row s=0 sums to
1.0000000447034836"). Now float32 rows are judged at ``16·eps(float32) = 1.9e-6`` (the rule the
model constructors use for float32 inputs), then divided by their sums, so the run equals the
float64 run with the same distributions up to the float32 rounding of the policy.
"""

from __future__ import annotations

import numpy as np
import pytest

from rltheory.algorithms.average_reward import differential_td
from rltheory.mdp import FiniteMDP
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
