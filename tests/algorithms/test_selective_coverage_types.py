"""selective_concentrability reads numbers only: text, complex and boolean inputs are named.

Before, every array went through ``np.asarray(x, dtype=float64)``: the text "1" was parsed as
the number 1, a complex entry lost its imaginary part with only a ComplexWarning, and a boolean
coverage mask was read as the data occupancy 1 — each returned a coefficient.
"""

from __future__ import annotations

import numpy as np
import pytest

from rltheory.bounds.selective_coverage import (
    selective_concentrability,
    selective_concentrability_bruteforce,
)


def _game():
    """The module's coordination example: both get 1 at (0, 0); data only on (0, 0); C_sel = 1."""
    P = np.ones((1, 1, 2, 2, 1))
    R = np.zeros((2, 1, 1, 2, 2))
    R[:, 0, 0, 0, 0] = 1.0
    pi = [np.array([[[1.0, 0.0]]])] * 2
    rho = np.array([[[[1.0, 0.0], [0.0, 0.0]]]])
    return P, R, pi, rho


@pytest.mark.parametrize("fn", [selective_concentrability, selective_concentrability_bruteforce])
def test_numbers_give_the_reference_value(fn):
    P, R, pi, rho = _game()
    assert fn(P, R, pi, rho) == 1.0
    assert fn(P, R, pi, rho, mu=np.array([1.0])) == 1.0


@pytest.mark.parametrize("fn", [selective_concentrability, selective_concentrability_bruteforce])
@pytest.mark.parametrize(
    ("which", "bad", "msg"),
    [
        ("P", lambda P: P.astype(str), r"P must hold real numbers; got a string array"),
        ("R", lambda R: R.astype(bool), r"R must hold real numbers; got a boolean array"),
        ("rho", lambda r: r.astype(str), r"d_data must hold real numbers; got a string array"),
        # a coverage mask is not an occupancy: True was read as ρ = 1
        ("rho", lambda r: r.astype(bool), r"d_data must hold real numbers; got a boolean array"),
        (
            "pi",
            lambda p: [np.array([[["1", "0"]]])] * 2,
            r"policies\[0\] must hold real numbers; got a string array",
        ),
        (
            "pi",
            lambda p: [np.array([[[1 + 1j, 0]]])] * 2,
            r"policies\[0\] must hold real numbers; got a complex array",
        ),
        (
            "pi",
            lambda p: [np.array([[[True, False]]])] * 2,
            r"policies\[0\] must hold real numbers; got a boolean array",
        ),
        ("mu", None, r"mu must hold real numbers; got a string array"),
    ],
)
def test_non_numbers_are_named(fn, which, bad, msg):
    P, R, pi, rho = _game()
    args = {"P": P, "R": R, "pi": pi, "rho": rho}
    mu = None
    if which == "mu":
        mu = ["1"]
    else:
        args[which] = bad(args[which])
    with pytest.raises(TypeError, match=msg):
        fn(args["P"], args["R"], args["pi"], args["rho"], mu=mu)


@pytest.mark.parametrize("fn", [selective_concentrability, selective_concentrability_bruteforce])
def test_float32_policies_are_distributions_at_their_own_precision(fn):
    # One step, player 1 has 7 actions, player 2 one; rewards 0, data uniform ρ = 1/7. Every
    # deviation is greedy (all values tie at 0) and a deterministic one puts mass 1 on a pair of data
    # mass 1/7: C_sel = 7. The float32 uniform row sums to 1 − 4.5e-8 and the old absolute 1e-8 check
    # refused it ("policies[0][h=0, s=0] must be a distribution over A_0").
    P = np.ones((1, 1, 7, 1, 1))
    R = np.zeros((2, 1, 1, 7, 1))
    rho = np.full((1, 1, 7, 1), 1 / 7)
    pi32 = [np.full((1, 1, 7), 1 / 7, dtype=np.float32), np.ones((1, 1, 1), dtype=np.float32)]
    assert fn(P, R, pi32, rho) == pytest.approx(7.0, rel=1e-12)


@pytest.mark.parametrize("fn", [selective_concentrability, selective_concentrability_bruteforce])
def test_a_float32_transition_kernel_is_checked_at_its_own_precision(fn):
    # This float32 row (normalised in float32) sums to 1 − 3.0e-8 in float64; the old code cast P to
    # float64 first and check_probability refused it at float64's tolerance 1e-8·(1 + √2) (35% of
    # random normalised float32 rows with S = 2 fail that way). Rewards 0: every deviation is greedy;
    # a deterministic one against the uniform opponent puts μ(s)·1·1/2 = 1/4 on a pair of data mass
    # 1/8, so C_sel = 2 (as for the float64 kernel (1/2, 1/2)).
    row = np.array([0.4714048206806183, 0.5285951495170593], dtype=np.float32)
    P = np.broadcast_to(row, (1, 2, 2, 2, 2)).copy()
    R = np.zeros((2, 1, 2, 2, 2))
    pi = [np.full((1, 2, 2), 0.5)] * 2
    rho = np.full((1, 2, 2, 2), 1 / 8)
    assert fn(P, R, pi, rho) == pytest.approx(2.0, rel=1e-12)
