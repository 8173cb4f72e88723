"""Selective concentrability (Zhang, Bai & Jiang 2023, tabular form): argument checks at the edges."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rltheory.bounds.selective_coverage import (
    selective_concentrability,
    selective_concentrability_bruteforce,
    selective_coverage_witness,
)
from rltheory.errors import InvalidModelError

BOTH = [selective_concentrability, selective_concentrability_bruteforce]


def _coordination():
    """One-shot 2×2 game, both players get 1 at (0, 0) and 0 elsewhere; data only at (0, 0);
    π = (0, 0): C_sel = 1 (the module docstring's example)."""
    P = np.ones((1, 1, 2, 2, 1))
    R = np.zeros((2, 1, 1, 2, 2))
    R[:, 0, 0, 0, 0] = 1.0
    pi = [np.array([[[1.0, 0.0]]])] * 2
    rho = np.array([[[[1.0, 0.0], [0.0, 0.0]]]])
    return P, R, pi, rho


@pytest.mark.parametrize("fn", BOTH)
def test_transition_kernel_is_checked(fn):
    """P was only checked for its number of axes: a NaN kernel, rows summing to 0.5 and negative
    entries all returned C_sel = 1.0 (NaN failed every value comparison), and a next-state axis of
    the wrong length reached numpy's bare 'cannot reshape array' error."""
    P, R, pi, rho = _coordination()
    assert fn(P, R, pi, rho) == 1.0
    with pytest.raises(InvalidModelError, match=r"P must be finite; P\(h=0, s=0, a1=0, a2=0, s'=0\) = nan"):
        fn(P * np.nan, R, pi, rho)
    with pytest.raises(InvalidModelError, match=r"must sum to 1 .*worst row \(h=0, s=0, a1=0, a2=0\) sums to 0\.5"):
        fn(P * 0.5, R, pi, rho)
    with pytest.raises(InvalidModelError, match=r"P must be non-negative; most negative entry P\(h=0, s=0, a1=0, a2=0, s'=0\) = -1"):
        fn(-P, R, pi, rho)
    with pytest.raises(ValueError, match=r"P must have shape \(H, S, A_1, \.\.\., A_n, S\).*got \(1, 1, 2, 2, 2\)"):
        fn(np.full((1, 1, 2, 2, 2), 0.5), R, pi, rho)


@pytest.mark.parametrize("fn", BOTH)
@pytest.mark.parametrize("tol", [math.nan, -1.0, math.inf, "1e-9", True])
def test_tol_must_be_a_finite_number_at_least_zero(fn, tol):
    """With R = ½ at (0, 0) the pessimistic completion of π is exact but the uncovered deviations'
    optimistic value 1 beats the best response ½: C_sel = ∞. tol = NaN failed both value
    conditions' comparisons and returned 1.0; a string raised numpy's UFuncTypeError."""
    P, R, pi, rho = _coordination()
    assert math.isinf(fn(P, R * 0.5, pi, rho))
    with pytest.raises(ValueError, match="tol must be a finite number >= 0; got "):
        fn(P, R * 0.5, pi, rho, tol=tol)


def test_witness_weight_must_be_a_number():
    """behaviour_weight='0.5' was parsed by float() and accepted."""
    with pytest.raises(ValueError, match=r"behaviour_weight must lie in \(0, 1\); got '0\.5'"):
        selective_coverage_witness(behaviour_weight="0.5")
    assert selective_coverage_witness(behaviour_weight=np.float32(0.5))["behaviour"][0, 0, 0, 0] == 0.5
