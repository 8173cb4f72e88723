"""rbf_features where a coordinate difference leaves the float range but the scaled distance does not.

Reference: ``φ(x) = exp(−½ Σ_i ((x_i − c_i)/w)²)``; for ``x = 1e308``, ``c = −1e308`` and
``w = 1e308`` the scaled distance is 2 and ``φ = exp(−2) = 0.1353...`` (Sutton & Barto 2018, §9.5.5,
the Gaussian RBF). Consistency: scaling coordinates, centres and width by a power of 2 leaves ``φ``
unchanged (the scaled distance is invariant), so the features at ``2^1020·(x, c, w)`` equal those
at ``(x, c, w)``.

Before: ``x − c`` overflowed to ``inf`` and ``φ`` came out 0 for every such pair.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from rltheory.algorithms.critics import rbf_features


def test_reference_value_at_the_top_of_the_range():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        phi = rbf_features([[1e308]], [[-1e308]], width=1e308, bias=False)
    # a few roundings: 1e308 is not a power of 2, so (1e308/2 + 1e308/2)/1e308·2 may be 2 ± 1 ulp
    assert phi[0, 0] == pytest.approx(math.exp(-2.0), rel=1e-15)


def test_power_of_two_scaling_leaves_the_features_unchanged():
    rng = np.random.default_rng(0)
    x = np.concatenate([rng.uniform(-1.5, 1.5, size=(5, 2)), [[1.5, -1.25]]])
    c = np.concatenate([rng.uniform(-1.5, 1.5, size=(3, 2)), [[-1.0, 1.0]]])
    # at 2^1023 every |x_i − c_i| >= 2 leaves the float range (here at least the pair added last)
    assert np.any(np.abs(x[:, None, :] - c[None, :, :]) >= 2.0)
    ref = rbf_features(x, c, width=1.7)
    got = rbf_features(np.ldexp(x, 1023), np.ldexp(c, 1023), width=math.ldexp(1.7, 1023))
    np.testing.assert_array_equal(got, ref)


def test_a_distance_too_large_for_the_width_still_gives_zero():
    # (1e308 − (−1e308))/1 = 2e308: exp(−2e616) is 0 to every precision
    assert rbf_features([[1e308]], [[-1e308]], width=1.0, bias=False).tolist() == [[0.0]]
