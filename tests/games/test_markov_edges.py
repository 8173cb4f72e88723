"""Edges of the Markov-game layer found by brute force: located errors for bad policies and
arguments, and certificates that never fall below the exact quantity they bound.

Exact references are rational (``fractions.Fraction`` of the stored floats): values of a fixed
policy pair solve ``(I − γP_π)V = r_π`` exactly, and a best response's value is the statewise
maximum over the deterministic stationary policies of the induced MDP (finitely many; one of
them is optimal, Puterman 1994, Thm 6.2.10).
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from rltheory.games import MarkovGame, ZeroSumMarkovGame, shapley_value_iteration
from rltheory.games.general_sum import finite_horizon_nash_conv, finite_horizon_values
from rltheory.games.zoo import matching_pennies, prisoners_dilemma


def _repeated_dilemma() -> MarkovGame:
    return MarkovGame(np.ones((1, 2, 2, 1)), prisoners_dilemma()[:, None], None)


# --------------------------------------------------------------------------- general_sum
@pytest.mark.parametrize("fn", [finite_horizon_values, finite_horizon_nash_conv])
@pytest.mark.parametrize(
    "policy, match",
    [
        # every entry 0.5: each pol[h, s] sums to 2. finite_horizon_values returned V_0 = 13.5 for
        # it (three times the uniform policy's 4.5) and finite_horizon_nash_conv blamed P
        (np.full((2, 1, 2, 2), 0.5), r"each policy\[h, s, \.\.\.\] must sum to 1 .* worst row \(h=0, s=0\) sums to 2"),
        # a negative entry with the right sums was accepted as a policy
        (np.array([[[[1.5, -0.5], [0.0, 0.0]]]]), r"policy must be non-negative; .*policy\(h=0, s=0, a1=0, a2=1\) = -0\.5"),
        # NaN: finite_horizon_values returned NaN values, finite_horizon_nash_conv blamed P
        (np.array([[[[np.nan, 0.5], [0.25, 0.25]]]]), r"policy must be finite; policy\(h=0, s=0, a1=0, a2=0\) = nan"),
    ],
)
def test_finite_horizon_policy_must_be_on_the_simplex(fn, policy, match):
    with pytest.raises(ValueError, match=match):
        fn(_repeated_dilemma(), policy)


@pytest.mark.parametrize("fn", [finite_horizon_values, finite_horizon_nash_conv])
@pytest.mark.parametrize("policy", [np.full((1, 1, 2, 2), "0.25"), np.full((1, 1, 2, 2), 0.25 + 1j)])
def test_finite_horizon_policy_refuses_text_and_complex(fn, policy):
    # text was parsed into numbers and a complex policy lost its imaginary part with a warning only
    with pytest.raises(TypeError, match="policy must hold real numbers"):
        fn(_repeated_dilemma(), policy)


def test_finite_horizon_values_of_a_valid_policy_are_exact():
    # Repeated dilemma, H = 2, both players mix uniformly: the stage payoff is (3 + 0 + 5 + 1)/4 =
    # 9/4 to each player, so V_0 = 2·9/4 = 9/2 and V_1 = 9/4 (exact in binary).
    V = finite_horizon_values(_repeated_dilemma(), np.full((2, 1, 2, 2), 0.25))
    assert V[:, :, 0].tolist() == [[4.5, 2.25, 0.0], [4.5, 2.25, 0.0]]
    # against a uniform opponent defecting pays (5 + 1)/2 = 3 per step and the policy 9/4, so each
    # player's best response gains 2·(3 − 9/4) = 3/2 and NashConv is 3
    assert Fraction(finite_horizon_nash_conv(_repeated_dilemma(), np.full((2, 1, 2, 2), 0.25))) == 3


# --------------------------------------------------------------------------- shapley
def test_shapley_settings_may_be_numpy_scalars():
    # A float32 game's own certificate is a np.float32 (not a Python float) and sizes computed with
    # numpy are np.int64: tol=np.float32(1e-4) raised "tol must be a positive number" and
    # max_iter=np.int64(500) "max_iter must be a positive integer or None". One state, rewards
    # matching pennies + 1: V* = 1/(1 − 0.5) = 2.
    g = ZeroSumMarkovGame(
        np.ones((1, 2, 2, 1), dtype=np.float32), (matching_pennies()[None] + 1).astype(np.float32), 0.5
    )
    res = shapley_value_iteration(g, tol=np.float32(1e-4), max_iter=np.int64(500))
    assert res.converged and abs(float(res.V[0]) - 2.0) <= float(res.bound) <= 1e-4
    for tol in (True, np.float32(-1.0), np.float64(np.nan), "1e-4"):
        with pytest.raises(ValueError, match="tol must be a positive number"):
            shapley_value_iteration(g, tol=tol)
    for max_iter in (np.True_, np.int64(0), np.float64(3.0)):
        with pytest.raises(ValueError, match="max_iter must be a positive integer or None"):
            shapley_value_iteration(g, max_iter=max_iter)
