"""Two of helper-85's open items in ``_policy_opt``.

* ``initial_policy(positive=True)`` said only "must have full support": the zero entry is now
  named (``pi0(s=1, a=1) = 0.0``; with a batch, its index too).
* ``evaluation_error`` added ``max|T^π V| + max|V|`` before scaling by ``2u``: for values
  ~1.3e308 the sum overflowed (numpy's "overflow encountered" RuntimeWarning; the bound itself
  is finite). The two terms are now scaled separately.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from rltheory.algorithms import entropy_regularized_npg
from rltheory.algorithms._policy_opt import evaluation_error
from rltheory.mdp import FiniteMDP, evaluate_policy
from rltheory.mdp.discounted import _Roundoff
from rltheory.mdp.zoo import random_mdp


def test_the_zero_entry_of_pi0_is_named():
    m = random_mdp(3, 2, gamma=0.9, rng=0)
    pi0 = np.array([[0.5, 0.5], [1.0, 0.0], [0.5, 0.5]])
    with pytest.raises(ValueError, match=r"must have full support .*; pi0\(s=1, a=1\) = 0\.0$"):
        entropy_regularized_npg(m, eta=0.5, tau=0.1, iterations=3, pi0=pi0)
    mb = random_mdp(3, 2, gamma=0.9, rng=0, batch_shape=(2,))
    pib = np.full((2, 3, 2), 0.5)
    pib[1, 2] = (1.0, 0.0)
    with pytest.raises(ValueError, match=r"pi0\(batch=\(1,\), s=2, a=1\) = 0\.0$"):
        entropy_regularized_npg(mb, eta=0.5, tau=0.1, iterations=3, pi0=pib)


def test_evaluation_error_near_the_float_range_warns_nothing():
    # one state, one action, r = 1.2e307, γ = 0.9: V = 1.2e308, T^π V = V
    m = FiniteMDP(np.ones((1, 1, 1)), np.array([[1.2e307]]), gamma=0.9)
    pi = np.ones((1, 1))
    V = evaluate_policy(m, pi)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        b = float(evaluation_error(m, pi, V, _Roundoff(m)))
    # the bound covers the rounding of V (a few ulps of 1.2e308) and stays finite
    assert np.isfinite(b) and b >= abs(float(V[0]) - 1.2e308)
