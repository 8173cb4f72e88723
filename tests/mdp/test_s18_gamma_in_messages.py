"""Overflow messages print the discount in full.

Regression (helper-76's open item): ``f"{g:g}"`` printed γ = 1 − 1e-9 as "gamma = 1", a value
the models refuse, in the messages of evaluate_policy/q_values/bellman_operator and of the NPG
primal-dual and two-stage checks. They now print ``repr(γ)``.
"""

from __future__ import annotations

import numpy as np
import pytest

from rltheory.mdp import FiniteMDP, evaluate_policy
from rltheory.mdp.bellman import bellman_operator, q_values


def test_the_discount_is_printed_in_full():
    m = FiniteMDP(np.ones((1, 1, 1)), np.array([[1e308]]), gamma=1 - 1e-9)
    with pytest.raises(ValueError, match=r"at gamma = 0\.999999999 \("):
        evaluate_policy(m, np.ones((1, 1)))
    big = m
    with pytest.raises(ValueError, match=r"at gamma = 0\.999999999\b"):
        q_values(big, np.array([1.7e308]))
    with pytest.raises(ValueError, match=r"at gamma = 0\.999999999\b"):
        bellman_operator(big, np.array([1.7e308]), np.ones((1, 1)))


def test_soft_range_message_prints_the_discount_in_full():
    from rltheory.algorithms.soft import soft_value_iteration

    m = FiniteMDP(np.ones((1, 2, 1)), np.array([[-1e308, 1e308]]), gamma=1 - 1e-9)
    with pytest.raises(ValueError, match=r"tau=1\.0, gamma = 0\.999999999 \("):
        soft_value_iteration(m, tau=1.0)
