"""Switches of the average-reward layer take True/False only (``numpy.bool_`` too).

``per_state=np.False_`` asked gain_bias to refuse a multichain chain but was not ``False``, so the
per-state gains came back unchecked; ``multichain="no"`` (truthy) ran the multichain algorithm and
``check=""`` (falsy) skipped stationary_distribution's unichain check.
"""

from __future__ import annotations

import numpy as np
import pytest

from rltheory.mdp import (
    FiniteMDP,
    average_linear_program,
    average_policy_iteration,
    gain_bias,
    stationary_distribution,
)

# two absorbing states: the chain of the only policy has two recurrent classes
_TWO_TRAPS = FiniteMDP(np.array([[[1.0, 0.0]], [[0.0, 1.0]]]), np.array([[1.0], [0.0]]), gamma=None)


def test_per_state_numpy_false_still_requires_a_unichain_chain():
    with pytest.raises(ValueError, match=r"per_state=False\) needs a unichain policy chain"):
        gain_bias(_TWO_TRAPS, np.array([0, 0]), per_state=np.False_)
    g, _ = gain_bias(_TWO_TRAPS, np.array([0, 0]), per_state=np.True_)
    np.testing.assert_array_equal(g, [1.0, 0.0])  # each trap keeps its own reward


@pytest.mark.parametrize("bad", [0, 1, "no", None, 0.0])
def test_per_state_and_multichain_reject_non_booleans(bad):
    if bad is not None:  # None is per_state's default
        with pytest.raises(ValueError, match=rf"per_state must be True or False; got {bad!r}"):
            gain_bias(_TWO_TRAPS, np.array([0, 0]), per_state=bad)
    with pytest.raises(ValueError, match=rf"multichain must be True or False; got {bad!r}"):
        average_policy_iteration(_TWO_TRAPS, multichain=bad)
    with pytest.raises(ValueError, match=rf"multichain must be True or False; got {bad!r}"):
        average_linear_program(_TWO_TRAPS, multichain=bad)


def test_multichain_numpy_true_is_the_multichain_algorithm():
    res = average_policy_iteration(_TWO_TRAPS, multichain=np.True_)
    assert res.method == "multichain_policy_iteration"
    np.testing.assert_allclose(res.gain, [1.0, 0.0])


@pytest.mark.parametrize("bad", ["", 0, None])
def test_stationary_distribution_check_rejects_non_booleans(bad):
    P = np.array([[1.0, 0.0], [0.0, 1.0]])  # multichain: a skipped check would return some μ
    with pytest.raises(ValueError, match=rf"check must be True or False; got {bad!r}"):
        stationary_distribution(P, check=bad)


def test_unichain_linear_program_refuses_weights():
    # weights enter only the multichain LP; with multichain=False they were validated and ignored
    P = np.array([[[0.5, 0.5]], [[0.5, 0.5]]])
    mdp = FiniteMDP(P, np.array([[1.0], [0.0]]), gamma=None)
    with pytest.raises(
        ValueError, match=r"weights apply to the multichain LP only \(multichain=True\)"
    ):
        average_linear_program(mdp, weights=np.array([0.5, 0.5]))
    res = average_linear_program(mdp, multichain=True, weights=np.array([0.5, 0.5]))
    np.testing.assert_allclose(res.gain, [0.5, 0.5])  # g = μᵀr = 1/2 from both states
