"""Exact-mode drivers check an ``rng`` they do not use, as their sample modes do.

Regression: ``general_utility_primal_dual`` without ``rollouts`` and ``natural_actor_critic`` with the default
:class:`ExactCritic` accepted ``rng='abc'``, ``True``, ``1.5`` or ``-1`` without a word, while the
sample modes refuse them (``networked_primal_dual`` got the same rule in 690e530). A valid ``rng``
draws nothing: the results equal those of ``rng=None`` and a Generator is not advanced.
"""

from __future__ import annotations

import numpy as np
import pytest

from rltheory.algorithms.actor_critic import natural_actor_critic
from rltheory.algorithms.constrained import general_utility_primal_dual
from rltheory.mdp import FiniteMDP
from rltheory.mdp.utility import linear_utility
from rltheory.mdp.zoo import random_mdp

P = np.array([[[0.9, 0.1], [0.2, 0.8]], [[0.5, 0.5], [0.0, 1.0]]])
R = np.array([[1.0, 0.0], [0.0, 0.5]])
_GU = dict(iterations=3, eta_theta=1.0, eta_mu=1.0, Lambda=5.0)

BAD = [
    ("abc", TypeError, r"rng must be a numpy\.random\.Generator or an int seed .*got str"),
    (True, TypeError, r"rng must be a numpy\.random\.Generator or an int seed .*got bool"),
    (1.5, TypeError, r"rng must be a numpy\.random\.Generator or an int seed .*got float"),
    (-1, ValueError, r"rng must be a numpy\.random\.Generator or an int seed >= 0; got -1"),
]


def _gu(**kw):
    return general_utility_primal_dual(FiniteMDP(P, R, gamma=0.8), linear_utility(R), **_GU, **kw)


def _nac(**kw):
    mdp = random_mdp(3, 2, gamma=0.5, rng=0)
    return natural_actor_critic(mdp, np.eye(6).reshape(3, 2, 6), eta=1.0, iterations=3, **kw)


@pytest.mark.parametrize(("bad", "exc", "msg"), BAD)
def test_general_utility_exact_mode_names_a_bad_rng(bad, exc, msg):
    for mode in ({"rollouts": 2}, {}):  # the sample mode's message, now in both modes
        with pytest.raises(exc, match=msg):
            _gu(rng=bad, **mode)


@pytest.mark.parametrize(("bad", "exc", "msg"), BAD)
def test_nac_exact_critic_names_a_bad_rng(bad, exc, msg):
    with pytest.raises(exc, match=msg):
        _nac(rng=bad)


def test_a_valid_rng_draws_nothing_in_exact_mode():
    gen = np.random.default_rng(5)
    before = gen.bit_generator.state
    ref_gu, ref_nac = _gu(), _nac()
    for rng in (gen, 0, np.int64(9)):
        np.testing.assert_array_equal(_gu(rng=rng).policy, ref_gu.policy)
        np.testing.assert_array_equal(_nac(rng=rng).policy, ref_nac.policy)
    assert gen.bit_generator.state == before
