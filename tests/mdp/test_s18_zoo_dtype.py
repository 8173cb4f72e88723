"""Zoo generators take every spelling of float32/float64 for any array namespace.

Regression: ``random_mdp(..., xp=numpy, dtype="float32")`` was refused as "dtype must be float32
or float64; got 'float32'", and ``xp=array_api_strict, dtype=np.float32`` compared a numpy type
with the namespace's dtype (a UserWarning from array_api_strict) before it built the model.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from rltheory.mdp.gridworlds import gridworld
from rltheory.mdp.zoo import chain, random_mdp

strict = pytest.importorskip("array_api_strict")


@pytest.mark.parametrize("spelling", ["float32", np.float32, np.dtype("f4")])
def test_numpy_namespace_accepts_every_spelling(spelling):
    host = random_mdp(3, 2, gamma=0.9, rng=0, dtype=np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        m = random_mdp(3, 2, gamma=0.9, rng=0, xp=np, dtype=spelling)
    assert m.dtype == np.float32
    np.testing.assert_array_equal(m.P, host.P)  # the same float32 rounding as the host build


@pytest.mark.parametrize("spelling", ["float64", np.float64, "f8"])
def test_strict_namespace_maps_numpy_spellings_without_warning(spelling):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        m = chain(4, gamma=0.9, xp=strict, dtype=spelling)
        g = gridworld(
            2, gamma=0.9, xp=strict, dtype=np.float32 if spelling == "f8" else strict.float32
        )
    assert m.dtype == strict.float64
    assert g.mdp.dtype == strict.float32


@pytest.mark.parametrize("bad", [np.int64, "float16", np.float16, object()])
def test_other_dtypes_are_refused_by_name(bad):
    with pytest.raises(TypeError, match=r"dtype must be float32 or float64; got"):
        random_mdp(3, 2, gamma=0.9, rng=0, xp=strict, dtype=bad)
    with pytest.raises(TypeError, match=r"dtype must be float32 or float64; got"):
        random_mdp(3, 2, gamma=0.9, rng=0, xp=np, dtype=bad)


def test_strict_integer_dtype_is_refused():
    with pytest.raises(TypeError, match=r"got array_api_strict.int64"):
        random_mdp(3, 2, gamma=0.9, rng=0, xp=strict, dtype=strict.int64)
