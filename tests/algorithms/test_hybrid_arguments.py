"""hybrid_npg / hybrid_actor_critic read their scalar settings as real numbers (0-d arrays too)."""

from __future__ import annotations

import numpy as np
import pytest

from rltheory.algorithms.offline import hybrid_actor_critic, hybrid_npg
from rltheory.mdp import FiniteHorizonMDP
from rltheory.mdp.offline_data import sample_episodes

PHI = np.eye(2).reshape(1, 2, 2)


def _fh() -> FiniteHorizonMDP:
    return FiniteHorizonMDP.stationary(np.ones((1, 2, 1)), np.array([[0.0, 1.0]]), H=2)


def test_zero_dimensional_settings_equal_floats():
    # Old: eta=np.array(2.0) was refused ("eta must be a finite number > 0; got array(2.)") though
    # every other offline routine (lcb_vi's delta, elliptical_bonus's beta) takes 0-d arrays. Same
    # seed, same numbers: the runs must agree exactly.
    fh = _fh()
    off = sample_episodes(fh, np.full((2, 1, 2), 0.5), 10, rng=0)
    kw = dict(iterations=3, n_online=4, rng=7)
    a = hybrid_npg(fh, PHI, off, eta=2.0, ridge=1.0, offline_weight=0.5, **kw)
    b = hybrid_npg(
        fh, PHI, off, eta=np.array(2.0), ridge=np.array(1.0), offline_weight=np.array(0.5), **kw
    )
    np.testing.assert_array_equal(a.policy, b.policy)
    c = hybrid_actor_critic(fh, PHI, off, eta=np.float32(2.0), ridge=np.array(1.0), **kw)
    d = hybrid_actor_critic(fh, PHI, off, eta=2.0, ridge=1.0, **kw)
    np.testing.assert_array_equal(c.policy, d.policy)


@pytest.mark.parametrize(
    ("kw", "msg"),
    [
        # old: OverflowError "int too large to convert to float" from math.isfinite
        ({"eta": 10**400}, r"eta must be a finite number > 0; got 1000"),
        ({"ridge": 10**400}, r"ridge must be a finite number > 0; got 1000"),
        ({"offline_weight": 10**400}, r"offline_weight must be finite; got 1000"),
        ({"eta": True}, r"eta must be a finite number > 0; got True"),
        (
            {"offline_weight": np.array(np.nan)},
            r"offline_weight must be a number >= 0; got array\(nan\)",
        ),
    ],
)
def test_bad_scalars_are_named(kw, msg):
    args = dict(iterations=1, n_online=1, eta=1.0, rng=0)
    args.update(kw)
    with pytest.raises(ValueError, match=msg):
        hybrid_npg(_fh(), PHI, None, **args)


def test_a_float32_restart_distribution_is_accepted():
    # restart rows in float32 sum to 1 + 3e-8 once cast to float64; the old check ran at float64's
    # tolerance 1e-8 and refused them ("each restart[h, :] must sum to 1 ... sums to 1.0000000298").
    # Checked in float32 and renormalised, the run equals the float64 one (same seed, same ν up to 1e-16).
    rng = np.random.default_rng(0)
    P = rng.dirichlet(np.ones(3), size=(2, 3, 2)).astype(np.float32)
    P /= P.sum(-1, keepdims=True)
    fh = FiniteHorizonMDP(P, rng.uniform(size=(2, 3, 2)).astype(np.float32))
    phi = np.eye(6).reshape(3, 2, 6)
    kw = dict(iterations=3, n_online=5, eta=1.0, rng=0)
    a = hybrid_npg(fh, phi, None, restart=np.full((2, 3), 1 / 3), **kw)
    b = hybrid_npg(fh, phi, None, restart=np.full((2, 3), 1 / 3, dtype=np.float32), **kw)
    np.testing.assert_allclose(
        b.trace["suboptimality"], a.trace["suboptimality"], rtol=0, atol=1e-12
    )
