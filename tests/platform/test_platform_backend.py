"""rltheory.backend: namespace resolution, dtype policy, host transfers and their errors."""

from __future__ import annotations

import numpy as np
import pytest

from rltheory.backend import (
    array_namespace,
    as_float,
    device_of,
    float_dtype,
    is_host,
    is_numpy,
    require_host,
    to_numpy,
)

strict = pytest.importorskip("array_api_strict")


def test_namespace_of_no_arrays_is_numpy_and_mixed_libraries_are_refused():
    assert is_numpy(array_namespace()) and is_numpy(array_namespace(None, 1.0, [1, 2]))
    assert not is_numpy(array_namespace(strict.asarray([1.0])))
    with pytest.raises(TypeError, match="inputs come from different array libraries"):
        array_namespace(np.zeros(2), strict.asarray([1.0]))


def test_dtype_policy_and_float_conversion():
    xp = array_namespace(np.zeros(1))
    assert float_dtype(xp) == xp.float64 and float_dtype(xp, np.zeros(1, np.float32)) == xp.float32
    assert float_dtype(xp, np.zeros(1, np.int32)) == xp.float64  # integers compute in float64
    with pytest.raises(TypeError, match="dtype must be float32 or float64, got"):
        float_dtype(xp, dtype=xp.int64)
    x = as_float([1, 2])
    assert isinstance(x, np.ndarray) and x.dtype == np.float64
    y = as_float(np.array([1, 2], np.int32), strict)  # a numpy input moved into another namespace
    assert type(y).__module__.startswith("array_api_strict") and y.dtype == strict.float64
    assert as_float(np.ones(2, np.float32)).dtype == np.float32  # float32 is kept
    # ... also when a numpy float32 array moves into another namespace (it became float64)
    assert as_float(np.ones(2, np.float32), strict).dtype == strict.float32
    assert as_float(np.ones(2, np.float32), strict, strict.float64).dtype == strict.float64  # dtype wins


def test_host_transfers():
    a = strict.asarray([1.0, 2.0])
    np.testing.assert_array_equal(to_numpy(a), [1.0, 2.0])
    assert to_numpy(3.0).shape == () and to_numpy([1, 2]).tolist() == [1, 2]
    z = np.zeros(2)
    assert to_numpy(z) is z and device_of(z) == "cpu"
    assert is_host(strict) and require_host(a, "a host routine").tolist() == [1.0, 2.0]
