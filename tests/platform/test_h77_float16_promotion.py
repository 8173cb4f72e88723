"""float16 (and long double) inputs are promoted to float64 in every namespace (helper 77).

The dtype policy (backend's module docstring, ``float_dtype``): float32 and float64 are the
working dtypes and keep their dtype; anything else real becomes float64. A numpy float16 or
long-double *scalar* given to ``as_float`` with another namespace went across as it was, and
array_api_strict refused it ("The array_api_strict namespace does not support the dtype
'float16'"), while the same value as a 0-d array, a 1-d array or a list was promoted.
"""

import array_api_strict as xps
import numpy as np
import pytest

from rltheory._validate import as_action_table, as_distribution, as_policy_array, as_real_array
from rltheory.backend import as_float, to_numpy
from rltheory.mdp import FiniteMDP
from rltheory.mdp.bellman import as_stochastic_policy, state_occupancy

FORMS = {
    "scalar": lambda v, dt: dt(v),
    "0-d array": lambda v, dt: np.array(v, dtype=dt),
    "1-d array": lambda v, dt: np.array([v], dtype=dt),
    "list": lambda v, dt: [dt(v)],
}


@pytest.mark.parametrize("dt", [np.float16, np.longdouble], ids=["float16", "longdouble"])
@pytest.mark.parametrize("form", list(FORMS))
@pytest.mark.parametrize("ns", [None, xps], ids=["numpy", "array_api_strict"])
def test_non_working_floats_become_float64_in_every_form_and_namespace(dt, form, ns):
    x = as_float(FORMS[form](0.375, dt), ns)  # 0.375 = 3/8 is exact in float16
    want = np.float64 if ns is None else xps.float64
    assert x.dtype == want
    assert np.all(to_numpy(x) == 0.375)


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_working_floats_keep_their_dtype_as_scalars_too(dt):
    assert as_float(dt(0.5), xps).dtype == getattr(xps, np.dtype(dt).name)
    assert as_float(dt(0.5)).dtype == dt


def test_a_float16_scalar_reaches_a_strict_kernel_as_float64():
    # the readers built on as_float inherit the rule (this one raised array_api_strict's TypeError)
    x = as_real_array(np.float16(0.25), "w", (), (), xps)
    assert x.dtype == xps.float64 and float(x) == 0.25


def _strict_uniform_model():
    # S = 7 states, one action, every row uniform: the uniform law is invariant, so from the
    # uniform start the discounted state occupancy is uniform, d(s) = 1/7
    P = xps.full((7, 1, 7), 1 / 7, dtype=xps.float64)
    return FiniteMDP(P, xps.zeros((7, 1), dtype=xps.float64), 0.5)


def test_float16_numpy_policies_and_laws_are_read_into_a_strict_model():
    # float16 1/7 = 0.1428..: a row sums to 0.99976, within float16's rounding (16 eps = 0.0156);
    # xp.asarray sent it to array_api_strict as float16 and it was refused without a name ("The
    # array_api_strict namespace does not support the dtype 'float16'"), float32 was accepted
    mdp = _strict_uniform_model()
    row = np.full((7, 1), 1.0, dtype=np.float16)
    pi = as_stochastic_policy(mdp, row)
    assert pi.dtype == xps.float64
    mu16 = np.full(7, 1 / 7, dtype=np.float16)
    d = state_occupancy(mdp, xps.zeros(7, dtype=xps.int64), mu=mu16)
    assert d.dtype == xps.float64
    np.testing.assert_allclose(to_numpy(d), np.full(7, 1 / 7), rtol=1e-12)  # renormalised μ
    # the same readers, one by one
    assert as_distribution(mu16, "mu", 7, xps).dtype == xps.float64
    assert as_action_table(np.ones((2, 3), np.float16), "Q", xps).dtype == xps.float64
    assert as_real_array(np.ones(3, np.float16), "R", (3,), ("a",), xps).dtype == xps.float64


def test_float16_rows_off_the_simplex_are_still_refused_at_float16_rounding():
    with pytest.raises(
        ValueError, match=r"each mu\[:\] must sum to 1 \(atol=0\.015625\); it sums to 1\.2"
    ):
        as_distribution(np.array([0.7, 0.5], np.float16), "mu", 2, xps)
    # (text named by the reader, not array_api_strict's "does not support the dtype '<U1'")
    with pytest.raises(TypeError, match=r"^pi must hold real numbers; got a string array$"):
        as_policy_array(np.array([["a"]]), 1, 1, xps, xps.float64)
