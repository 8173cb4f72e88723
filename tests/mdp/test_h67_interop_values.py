"""Reference values of the from_gymnasium docstring (helper 67)."""

import numpy as np
import pytest

from rltheory.mdp import policy_iteration
from rltheory.mdp.interop import from_gymnasium

gym = pytest.importorskip("gymnasium")


def test_frozenlake_truncation_values_of_the_docstring():
    # gamma = 0.999: V*(0) = 0.786 untruncated; the same stationary policy over 100 steps (the
    # TimeLimit of FrozenLake-v1) 0.713; the best 100-step policy (backward induction, allowed to
    # use the time left) 0.717; the docstring said '0.713 for episodes cut at 100 steps' as if that
    # were the optimum of the cut episodes
    m = from_gymnasium(gym.make("FrozenLake-v1"), gamma=0.999)
    P, R = np.asarray(m.P), np.asarray(m.R)
    sol = policy_iteration(m)
    assert round(float(sol.V[0]), 3) == 0.786
    pi = np.asarray(sol.policy)
    Pp, Rp = P[np.arange(16), pi], R[np.arange(16), pi]
    v_pi, v_best = np.zeros(16), np.zeros(16)
    for _ in range(100):
        v_pi = Rp + 0.999 * Pp @ v_pi
        v_best = np.max(R + 0.999 * P @ v_best, axis=1)
    assert round(float(v_pi[0]), 3) == 0.713
    assert round(float(v_best[0]), 3) == 0.717
    # the gap bound of the docstring at gamma = 0.9: gamma^100 / (1 - gamma) = 2.7e-4, about 3e-4
    assert round(0.9**100 / 0.1, 4) == 0.0003
