"""Batch indexing of models in every namespace: array_api_strict indexes as numpy does (helper 67)."""

import array_api_strict as xps
import numpy as np
import pytest

from rltheory.backend import to_numpy
from rltheory.mdp import FiniteHorizonMDP, FiniteMDP

_D1 = xps.Device("device1")
_INDICES = [
    1,
    (0, 2),
    (..., 1),
    (None,),
    (None, 1, None),
    (0, ..., None),
    (np.int64(1), slice(1, 3)),
    (True,),
    np.array(1),
    np.array([1, 0]),
    (slice(None), [3, 0, 0]),
    np.array([[True, False, True, True], [False] * 4]),
    ([0, 1], [2, 3]),
    (np.array([1]), ...),
    (..., np.array([[1, 2]])),
    (1, [True, False, True, False]),
]


def _strict(ix):
    entries = ix if isinstance(ix, tuple) else (ix,)
    return tuple(xps.asarray(i, device=_D1) if isinstance(i, np.ndarray) else i for i in entries)


@pytest.mark.parametrize("ix", _INDICES, ids=[repr(i).replace(" ", "") for i in _INDICES])
def test_strict_models_index_their_batch_as_numpy_models_do(ix):
    # a (2, 4)-batch of array_api_strict models could not be indexed at all: m[1] raised strict's
    # 'the multi-axes index only specifies 4 dimensions' (the standard wants every axis addressed)
    # and an integer array next to the model axes' slices 'Integer index arrays are only allowed
    # with integer indices'; numpy's rules now hold in both namespaces, on the model's device
    rng = np.random.default_rng(0)
    P = rng.dirichlet(np.ones(3), size=(2, 4, 3, 2))
    R = rng.random((2, 4, 3, 2))
    mu = rng.dirichlet(np.ones(3), size=(4,))
    want = FiniteMDP(P, R, 0.9, mu=mu)[ix]
    m = FiniteMDP(
        xps.asarray(P, device=_D1), xps.asarray(R, device=_D1), 0.9, mu=xps.asarray(mu, device=_D1)
    )
    got = m[_strict(ix)]
    assert got.batch_shape == want.batch_shape and got.P.device == _D1
    np.testing.assert_array_equal(to_numpy(got.P), want.P)
    np.testing.assert_array_equal(to_numpy(got.R), want.R)
    np.testing.assert_array_equal(to_numpy(got.initial_distribution()), want.initial_distribution())
    fh = FiniteHorizonMDP.stationary(xps.asarray(P, device=_D1), xps.asarray(R, device=_D1), 3)
    fw = FiniteHorizonMDP.stationary(P, R, 3)[ix]
    np.testing.assert_array_equal(to_numpy(fh[_strict(ix)].P), fw.P)
    np.testing.assert_array_equal(to_numpy(fh[_strict(ix)].R), fw.R)
