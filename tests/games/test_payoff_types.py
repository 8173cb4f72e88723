"""Text and complex payoffs are refused by name in the matrix-game solvers and certificates.

Before, the bimatrix solvers, the CE/CCE gaps and LPs and ``solve_zero_sum_highs`` cast payoffs with
``np.asarray(..., dtype=float64)``: ``'1'`` was parsed as the number 1 and ``1 + 1j`` lost its
imaginary part with only numpy's ComplexWarning; the batched zero-sum kernel refused them as
``input must hold real numbers`` without saying which argument.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from rltheory.games import (
    bimatrix_nash_conv,
    cce_gap,
    ce_gap,
    duality_gap,
    is_degenerate,
    lemke_howson,
    max_entropy_ce,
    max_welfare_cce,
    max_welfare_ce,
    nash_equilibria,
    solve_zero_sum,
    solve_zero_sum_highs,
)

EYE = np.eye(2)
TEXT = np.array([["1", "0"], ["0", "1"]])
COMPLEX = EYE + 1j
HALF = np.array([0.5, 0.5])
QUARTER = np.full((2, 2), 0.25)

CASES = [
    ("nash_equilibria A", lambda M: nash_equilibria(M, EYE), "A"),
    ("nash_equilibria B", lambda M: nash_equilibria(EYE, M), "B"),
    ("nash_equilibria zero-sum", lambda M: nash_equilibria(M), "A"),
    ("lemke_howson A", lambda M: lemke_howson(M, EYE), "A"),
    ("lemke_howson B", lambda M: lemke_howson(EYE, M), "B"),
    ("is_degenerate B", lambda M: is_degenerate(EYE, M), "B"),
    ("bimatrix_nash_conv A", lambda M: bimatrix_nash_conv(M, EYE, HALF, HALF), "A"),
    ("ce_gap U", lambda M: ce_gap(np.stack([M, M]), QUARTER), "U"),
    ("cce_gap U", lambda M: cce_gap(np.stack([M, M]), QUARTER), "U"),
    ("ce_gap mu", lambda M: ce_gap(np.stack([EYE, EYE]), M), "mu"),
    ("max_welfare_ce U", lambda M: max_welfare_ce(np.stack([M, M])), "U"),
    ("max_welfare_cce U", lambda M: max_welfare_cce(np.stack([M, M])), "U"),
    ("max_entropy_ce U", lambda M: max_entropy_ce(np.stack([M, M])), "U"),
    ("solve_zero_sum_highs A", lambda M: solve_zero_sum_highs(M), "A"),
    ("solve_zero_sum A", lambda M: solve_zero_sum(M), "A"),
    ("duality_gap A", lambda M: duality_gap(M, HALF, HALF), "A"),
]


@pytest.mark.parametrize("kind", ["string", "complex"])
@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_text_and_complex_payoffs_are_refused_by_name(case, kind):
    _, call, name = case
    M = {"string": TEXT, "complex": COMPLEX}[kind]
    if name == "mu":
        M = QUARTER.astype(str) if kind == "string" else QUARTER + 0j
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # numpy's ComplexWarning must not be the only signal
        with pytest.raises(
            TypeError, match=rf"^{name} must hold real numbers; got a {kind} array$"
        ):
            call(M)


def test_lists_and_float32_payoffs_are_still_accepted():
    # the same answers as float64 arrays (integers and float32 are real numbers)
    eqs = nash_equilibria([[2, 0], [0, 1]], np.array([[1, 0], [0, 2]], dtype=np.float32))
    assert len(eqs) == 3
    np.testing.assert_allclose(eqs[2][0], [2 / 3, 1 / 3], atol=1e-12)
    assert ce_gap(np.stack([EYE, EYE]).tolist(), QUARTER.astype(np.float32)) <= 1e-15
    v, x, _ = solve_zero_sum_highs([[2, 0], [0, 1]])
    assert float(v) == pytest.approx(2 / 3, abs=1e-9) and x.dtype == np.float64


@pytest.mark.parametrize("field", ["P", "R"])
@pytest.mark.parametrize("kind", ["string", "complex"])
def test_equilibrium_gap_refuses_text_and_complex_models(field, kind):
    # before: P or R as text gave gap 0.0 (parsed), complex R lost its imaginary part with a warning
    from rltheory.algorithms.stage_equilibria import equilibrium_gap

    P = np.ones((1, 1, 2, 2, 1))
    R = np.stack([np.eye(2), 1 - np.eye(2)])[:, None, None]
    args = {"P": P, "R": R}
    args[field] = args[field].astype(str) if kind == "string" else args[field] + 0j
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(
            TypeError, match=rf"^{field} must hold real numbers; got a {kind} array$"
        ):
            equilibrium_gap(args["P"], args["R"], np.full((1, 1, 2, 2), 0.25))
