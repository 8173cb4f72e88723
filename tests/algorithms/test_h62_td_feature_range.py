"""projected_fixed_point and expected_td for features near the ends of the float range.

Consistency: scaling the features by an exact power of two ``2^p`` scales ``theta*`` by ``2^-p``,
``A`` by ``4^p``, ``b`` by ``2^p`` and leaves ``Phi theta*`` and every error unchanged; the mean
TD(lambda) path with step ``alpha / 4^p`` is the same path (Tsitsiklis & Van Roy 1997, the ODE
``theta' = b - A theta`` in the new coordinates).

Before: at ``|phi| ~ 2^990`` (1e298) ``A`` overflowed inside the products with numpy's warning and
came out as infinities of the wrong sign, and expected_td failed inside numpy
(``LinAlgError: Array must not contain infs or NaNs``) instead of naming the divergence; in
float32 at ``|phi| ~ 2^-100`` ``A`` underflowed to 0 and a convergent run was refused with
"rho(I - alpha A) = 1 > 1".
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from rltheory.algorithms.td_fixed_point import expected_td, projected_fixed_point
from rltheory.mdp import FiniteMDP
from rltheory.mdp.zoo import random_mdp


def _model(dtype=np.float64):
    mdp = random_mdp(6, 2, gamma=0.9, rng=3)
    Phi = np.random.default_rng(4).normal(size=(6, 3))
    m = FiniteMDP(mdp.P.astype(dtype), mdp.R.astype(dtype), gamma=0.9)
    return m, np.full((6, 2), 0.5, dtype=dtype), Phi.astype(dtype)


@pytest.mark.parametrize("lam", [0.0, 0.5, 1.0])
def test_huge_features_give_signed_infinite_A_and_the_same_fixed_point(lam):
    mdp, pi, Phi = _model()
    ref = projected_fixed_point(mdp, pi, Phi, lam=lam)
    p = 990
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # numpy's overflow warning was raised here
        fp = projected_fixed_point(mdp, pi, np.ldexp(Phi, p), lam=lam)
    A = np.asarray(fp.A)
    assert np.all(np.isinf(A))  # |A| ~ 4^990: beyond the float range
    np.testing.assert_array_equal(np.sign(A), np.sign(np.asarray(ref.A)))
    np.testing.assert_array_equal(np.asarray(fp.b), np.ldexp(np.asarray(ref.b), p))
    np.testing.assert_array_equal(np.asarray(fp.theta), np.ldexp(np.asarray(ref.theta), -p))
    np.testing.assert_array_equal(np.asarray(fp.values), np.asarray(ref.values))
    assert fp.error == ref.error and fp.projection_error == ref.projection_error


def test_expected_td_names_the_divergence_for_huge_features():
    mdp, pi, Phi = _model()
    # alpha * |A| ~ 1e-300 * 4^990: far beyond the stability limit; the message gives rho
    with pytest.raises(
        ValueError, match=r"expected_td diverged: .* rho\(I - alpha A\) = (inf|\d\.\d+e\+\d+) > 1"
    ):
        expected_td(mdp, pi, np.ldexp(Phi, 990), step_size=1e-300, iterations=5)


def test_expected_td_in_float32_with_tiny_features_is_the_unit_scale_path():
    mdp, pi, Phi = _model(np.float32)
    ref = expected_td(mdp, pi, Phi, step_size=0.5, iterations=60)
    p = -100  # |phi| ~ 1e-30 is a normal float32; |A| ~ 4^-100 is not (it underflowed to 0)
    tr = expected_td(
        mdp, pi, np.ldexp(Phi, p), step_size=float(np.ldexp(0.5, -2 * p)), iterations=60
    )
    np.testing.assert_allclose(tr["error"], ref["error"], rtol=1e-6, atol=0)
    np.testing.assert_allclose(
        np.ldexp(np.asarray(tr["theta"]), p), ref["theta"], rtol=1e-6, atol=0
    )
    assert float(tr["error"][-1]) < 1e-3 * float(tr["error"][0])  # it converges


@pytest.mark.parametrize("scale", [1e-310, 1e-320])
def test_subnormal_features_give_a_located_error_for_theta_beyond_the_range(scale):
    # theta* ~ V/|phi| ~ 1e310: not a float. Before: numpy's overflow warnings and
    # "LinAlgError: SVD did not converge" from inside the basis construction
    mdp, pi, Phi = _model()
    with pytest.raises(
        ValueError, match=r"projected_fixed_point: theta\*\[0\] = .* is beyond the float range"
    ):
        projected_fixed_point(mdp, pi, Phi * scale)
    with pytest.raises(
        ValueError, match=r"expected_td: theta\*\[0\] = .* is beyond the float range"
    ):
        expected_td(mdp, pi, Phi * scale, step_size=1.0, iterations=2)
