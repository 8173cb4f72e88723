"""Edge cases of the CMDP layer beyond the ranges of test_constrained.py: argument types located by
field, values and multipliers beyond the float range, the infeasibility diagnosis at any scale."""

from __future__ import annotations

import numpy as np
import pytest

from rltheory.mdp import ConstrainedMDP, FiniteMDP, dual_function, lagrangian


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


@pytest.mark.parametrize("lam, what", [(np.array([1.0 + 2j]), "complex"), (["a"], "string")])
@pytest.mark.parametrize("fn", ["dual_function", "lagrangian"])
def test_complex_or_text_multipliers_are_refused_by_name(fn, lam, what):
    # λ = 1 + 2j was cast to 1.0 with only a ComplexWarning (D(1) = 1 returned); text raised numpy's
    # unlocated "could not convert string to float"
    cmdp = ConstrainedMDP(_bandit(), np.array([[[0.0, 1.0]]]), np.array([1.0]))
    call = {"dual_function": lambda: dual_function(cmdp, lam),
            "lagrangian": lambda: lagrangian(cmdp, np.array([[0.5, 0.5]]), lam)}[fn]
    with pytest.raises(TypeError, match=rf"^lam must hold real numbers; got a {what} array"):
        call()
