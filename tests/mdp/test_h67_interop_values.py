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


class _TableEnv:
    """A minimal toy-text env: a table ``P[s][a] = [(p, s', r, done)]`` and Discrete spaces."""

    def __init__(self, table, S, A):
        self.P = table
        self.observation_space = gym.spaces.Discrete(S)
        self.action_space = gym.spaces.Discrete(A)
        self.unwrapped = self


def test_from_gymnasium_refuses_a_transition_the_requested_dtype_deletes():
    from rltheory.errors import InvalidModelError
    from rltheory.mdp.structure import classify_mdp

    # state 0 leaves to 1 with probability 1e-50; in float32 that entry became 0 without a word
    # and the model's structure changed (state 0 became absorbing, state 1 transient)
    table = {
        0: {0: [(1.0 - 1e-50, 0, 0.0, False), (1e-50, 1, 0.0, False)]},
        1: {0: [(0.5, 0, 1.0, False), (0.5, 1, 1.0, False)]},
    }
    env = _TableEnv(table, 2, 1)
    m64 = from_gymnasium(env, 0.9)
    assert float(m64.P[0, 0, 1]) == 1e-50 and classify_mdp(m64).kind == "recurrent"
    with pytest.raises(
        InvalidModelError,
        match=r"env\.P\[0\]\[0\] moves to s'=1 with probability 1e-50, which rounds to 0 in float32 "
        r"and would delete the transition; use dtype=numpy.float64",
    ):
        from_gymnasium(env, 0.9, dtype=np.float32)
    # representable entries keep converting (a float32 table of 0.25 / 0.75)
    table[0][0] = [(0.75, 0, 0.0, False), (0.25, 1, 0.0, False)]
    m32 = from_gymnasium(_TableEnv(table, 2, 1), 0.9, dtype=np.float32)
    assert m32.P.dtype == np.float32 and float(m32.P[0, 0, 1]) == 0.25
