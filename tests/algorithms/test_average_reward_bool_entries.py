"""Bools inside lists of numbers are refused by the average-reward readers.

``_real_array`` checked only the array's dtype, and numpy stores ``[True, 0.5]`` as floats, so
``dpg_gradient(m, [True, 0.5])`` equalled ``dpg_gradient(m, [1.0, 0.5])`` and
``mlmc_combine([1.0, True, 2.0, 3.0], 1, 4)`` returned 1.0 (reported by helper-45).
"""

import numpy as np
import pytest

from rltheory.algorithms.average_reward_dpg import SmoothActionMDP, dpg_gradient
from rltheory.algorithms.mlmc import mlmc_combine


def _model():
    return SmoothActionMDP(
        L=np.array([[0.9, 0.1], [0.2, 0.8]]),
        K=np.array([[0.1, 0.9], [0.7, 0.3]]),
        r0=np.array([0.0, 1.0]),
        r1=np.array([1.0, 0.0]),
        c=0.5,
    )


def test_a_bool_among_floats_is_named():
    with pytest.raises(
        TypeError, match=r"^theta must hold real numbers; theta\[0\] = True \(bool\)"
    ):
        dpg_gradient(_model(), [True, 0.5])
    with pytest.raises(TypeError, match=r"^x must hold real numbers; x\[1\] = True \(bool\)"):
        mlmc_combine([1.0, True, 2.0, 3.0], 1, 4)


def test_numbers_are_read_as_before():
    m = _model()
    np.testing.assert_array_equal(
        np.asarray(dpg_gradient(m, [1, 0.5])[0]),
        np.asarray(dpg_gradient(m, np.array([1.0, 0.5]))[0]),
    )
