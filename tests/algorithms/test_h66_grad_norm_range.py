"""The traced ``grad_norm`` of softmax PG is the Euclidean norm of the gradient at every scale.

``sqrt(sum grad^2)`` overflowed to ``inf`` once gradient entries passed ``1.3e154`` and underflowed to
0 below ``1e-162``. A two-action bandit with ``gamma = 0`` has the closed-form gradient
``pi(a)(r(a) - V)``: at uniform ``pi`` and ``r = (0, c)`` it is ``(-c/4, c/4)``, norm ``c/(2 sqrt 2)``
(Agarwal et al. 2021, Sec. 4.2 with ``d = rho``). Checked at ``c = 1e200``, ``1e-200`` and 1.
"""

import math

import numpy as np
import pytest

from rltheory.algorithms.policy_gradient import softmax_policy_gradient
from rltheory.mdp import FiniteMDP


@pytest.mark.parametrize("c", [1e200, 1e-200, 1.0])
def test_grad_norm_matches_the_closed_form_at_every_scale(c):
    bandit = FiniteMDP(np.ones((1, 2, 1)), np.array([[0.0, c]]), gamma=0.0)
    res = softmax_policy_gradient(bandit, eta=1e-300, iterations=0)
    exact = c / (2.0 * math.sqrt(2.0))
    assert res.trace["grad_norm"][0] == pytest.approx(exact, rel=4 * np.finfo(float).eps, abs=0.0)
