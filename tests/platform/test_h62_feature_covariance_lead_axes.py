"""feature_covariance with weights that carry more than one leading axis.

``Σ_d = Σ_{s,a} d(s, a) φ(s, a) φ(s, a)ᵀ`` with leading axes broadcast (documented
``d[..., S, A]``). Each ``d[i, j]`` is a distribution over ``(s, a)``; the old check read the
first axis as the only step axis and summed ``d[i]`` over ``(j, s, a)``, refusing a valid
``(1, 2, S, A)`` input with "each d[h] must sum to 1; worst step h=0 sums to 2".
Reference: the covariance written out with ``numpy.einsum``.
"""

from __future__ import annotations

import numpy as np
import pytest

from rltheory.bounds import feature_covariance
from rltheory.errors import InvalidModelError


def _data():
    rng = np.random.default_rng(0)
    phi = rng.normal(size=(3, 1, 4, 2, 5))  # (H, 1, S, A, k)
    d = rng.dirichlet(np.ones(8), size=(1, 2)).reshape(1, 2, 4, 2)  # (1, B, S, A)
    return phi, d


def test_two_leading_axes_give_the_written_out_covariance():
    phi, d = _data()
    shape = (3, 2, 4, 2)
    p, w = np.broadcast_to(phi, shape + (5,)), np.broadcast_to(d, shape)
    ref = np.einsum("hbsa,hbsai,hbsaj->hbij", w, p, p)
    np.testing.assert_allclose(feature_covariance(phi, d), ref, rtol=0, atol=1e-14)


def test_a_bad_slice_is_located_by_its_leading_index():
    phi, d = _data()
    bad = d.copy()
    bad[0, 1, 2, 1] += 0.5
    with pytest.raises(
        InvalidModelError, match=r"d\[0, 1\] must sum to 1 over all its entries; it sums to 1\.5"
    ):
        feature_covariance(phi, bad)
    bad = d.copy()
    bad[0, 1, 2, 1] = -0.5
    with pytest.raises(InvalidModelError, match=r"d\[0, 1\]\(s=2, a=1\) = -0\.5"):
        feature_covariance(phi, bad)
