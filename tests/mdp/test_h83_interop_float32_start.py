"""``from_gymnasium`` judges a float32 ``initial_state_distrib`` at float32's tolerance, as FiniteMDP does.

A distribution normalised in float32 sums to 1 only to float32 rounding (``1 + 3.7e-8``, say).
FiniteMDP accepts such a ``mu`` (judged at float32's tolerance and divided by its sum), but
``from_gymnasium`` cast it to float64 first, so it was judged at 1e-8: refused for 22 of 50 random
5-state distributions, and the others kept their float32 sums (``1 − 2.7e-8``) undivided.
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

from rltheory.errors import InvalidModelError
from rltheory.mdp import FiniteMDP
from rltheory.mdp.interop import from_gymnasium


class _TableEnv:
    """A minimal toy-text env: a table ``P[s][a] = [(p, s', r, done)]``, Discrete spaces, a start law."""

    def __init__(self, table, S, A, mu):
        self.P = table
        self.observation_space = gym.spaces.Discrete(S)
        self.action_space = gym.spaces.Discrete(A)
        self.initial_state_distrib = mu
        self.unwrapped = self


def _cycle(S: int) -> dict:
    return {s: {0: [(1.0, (s + 1) % S, float(s), False)]} for s in range(S)}


@pytest.mark.parametrize("terminal", ["inplace", "extra"])
def test_a_float32_start_distribution_is_accepted_as_finite_mdp_accepts_it(terminal):
    rng = np.random.default_rng(0)
    S = 5
    P = np.zeros((S, 1, S))
    P[np.arange(S), 0, (np.arange(S) + 1) % S] = 1.0
    R = np.arange(S, dtype=float)[:, None]
    sums_off = 0
    for _ in range(50):
        mu = rng.random(S).astype(np.float32)
        mu = mu / mu.sum()
        sums_off += abs(float(mu.astype(np.float64).sum()) - 1.0) > 1e-8
        got = from_gymnasium(_TableEnv(_cycle(S), S, 1, mu), 0.9, terminal=terminal)
        ref = FiniteMDP(P, R, 0.9, mu=mu)  # the same distribution given to the model directly
        want = np.asarray(ref.initial_distribution())
        if terminal == "extra":
            want = np.concatenate([want, [0.0]])
        np.testing.assert_array_equal(np.asarray(got.initial_distribution()), want)
        # (old: one it accepted kept its float32 sum, 1 − 2.7e-8 on the first draw, undivided)
        assert abs(float(np.sum(got.initial_distribution())) - 1.0) <= 4e-16
    assert sums_off >= 10  # the draws include distributions off by more than float64's 1e-8


def test_a_start_distribution_of_complex_numbers_is_refused_by_name():
    mu = np.array([0.5 + 0j, 0.5 + 1j])
    with pytest.raises(
        InvalidModelError, match=r"env.initial_state_distrib must hold real numbers"
    ):
        from_gymnasium(_TableEnv(_cycle(2), 2, 1, mu), 0.9)
