"""Edge cases of the CMDP layer beyond the ranges of test_constrained.py: argument types located by
field, values and multipliers beyond the float range, the infeasibility diagnosis at any scale."""

from __future__ import annotations

import numpy as np
import pytest

from rltheory.mdp import ConstrainedMDP, FiniteMDP


def _bandit(gamma: float = 0.5, R=(0.0, 1.0)) -> FiniteMDP:
    return FiniteMDP(np.ones((1, 2, 1)), np.array([R], dtype=float), gamma)


@pytest.mark.parametrize("field, C, b", [
    ("C", np.array([[[0.0, 1.0 + 1j]]]), np.array([1.0])),
    ("C", [[["a", "b"]]], np.array([1.0])),
    ("b", np.array([[[0.0, 1.0]]]), np.array([1.0 + 0j])),
    ("b", np.array([[[0.0, 1.0]]]), ["x"]),
])
def test_complex_or_text_costs_and_thresholds_name_their_field(field, C, b):
    # the type error said "input must hold real numbers" for either field
    with pytest.raises(TypeError, match=rf"^{field} must hold real numbers"):
        ConstrainedMDP(_bandit(), C, b)
