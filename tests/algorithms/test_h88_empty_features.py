"""Feature matrices with no rows or no columns are refused with the field and its shape.

Before: ``projected_fixed_point``, ``expected_td``, ``td_linear``, ``lstd`` and ``lstd_estimate``
failed on ``d = 0`` features with ``IndexError: index -1 is out of bounds for axis 0 with size 0``
(inside the rank test), naming nothing; ``rbf_features``, ``tile_features`` and
``state_action_features`` returned ``(0, ·)`` or ``(S, 0)`` matrices (or, for tile coding of
0-dimensional coordinates, ``n_tilings`` identical constant columns) without a word.
"""

from __future__ import annotations

import numpy as np
import pytest

from rltheory.algorithms.critics import (
    expected_td,
    lstd,
    lstd_estimate,
    projected_fixed_point,
    rbf_features,
    state_action_features,
    td_linear,
    tile_features,
)
from rltheory.mdp import FiniteMDP

MDP = FiniteMDP(np.full((2, 1, 2), 0.5), np.ones((2, 1)), gamma=0.5)
PI = np.zeros(2, dtype=int)
NONE = np.zeros((2, 0))


@pytest.mark.parametrize(
    "call",
    [
        lambda: projected_fixed_point(MDP, PI, NONE),
        lambda: expected_td(MDP, PI, NONE, step_size=0.1, iterations=2),
        lambda: td_linear(MDP, PI, NONE, steps=2, step_size=0.1, rng=0),
        lambda: lstd(MDP, PI, NONE, steps=5, rng=0),
    ],
)
def test_critics_refuse_features_without_columns(call):
    with pytest.raises(
        ValueError, match=r"Phi must have shape \(S, d\) = \(2, d\) with d >= 1.*\(2, 0\)"
    ):
        call()


def test_lstd_estimate_refuses_features_without_columns():
    with pytest.raises(ValueError, match=r"at least one feature \(d >= 1\); got \(3, 0\)"):
        lstd_estimate(np.zeros((3, 0)), np.zeros(3), np.zeros((3, 0)), gamma=0.5)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            lambda: rbf_features(np.zeros((0, 2)), np.zeros((1, 2)), width=1.0),
            r"coords .* state \(row\); got shape \(0, 2\)",
        ),
        (
            lambda: rbf_features(np.zeros((3, 2)), np.zeros((0, 2)), width=1.0, bias=False),
            r"centers .* center \(row\) when bias=False; got shape \(0, 2\)",
        ),
        (
            lambda: tile_features(np.zeros((0, 2)), low=0.0, high=1.0, n_tiles=2, n_tilings=2),
            r"coords .* state \(row\); got shape \(0, 2\)",
        ),
        (
            lambda: tile_features(np.zeros((3, 0)), low=0.0, high=1.0, n_tiles=2, n_tilings=2),
            r"coords .* coordinate \(column\); got shape \(3, 0\)",
        ),
        (
            lambda: state_action_features(np.zeros((0, 2)), 2),
            r"phi .* state \(row\); got shape \(0, 2\)",
        ),
        (
            lambda: state_action_features(np.zeros((2, 0)), 2),
            r"phi .* feature \(column\); got shape \(2, 0\)",
        ),
    ],
)
def test_feature_maps_refuse_empty_shapes(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_rbf_with_only_the_bias_is_the_constant_feature():
    # m = 0 centres with bias=True is a valid (S, 1) map: the constant feature
    assert rbf_features(np.zeros((3, 2)), np.zeros((0, 2)), width=1.0).tolist() == [[1.0]] * 3
