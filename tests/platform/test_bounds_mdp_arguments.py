"""Argument checks of the discounted-MDP bounds (``rltheory.bounds.mdp``).

Their reader cast with ``np.asarray(x, dtype=float)`` and their counts with ``np.asarray(k)``:
``vi_error_bound("3", 0.5, 1.0)`` was the bound at k = 3, ``k=True`` and ``k=[True, 2]`` were
the counts 1 and (1, 2), ``vi_certificate(["0.1"], 0.9)`` returned 0.9 and
``span_stopping_iterations(..., sweep_error=True)`` read the error 1 (answer ``inf``).
``first_diff=[4.0, 2.0]`` and ``span0=[1.0, 2.0]`` failed in numpy's float conversion ("only
0-dimensional arrays can be converted"), ``initial_error=10**400`` with a bare
``OverflowError``, and a ``k`` and an ``initial_error`` of shapes (3,) and (2,) in numpy's
broadcasting. Each is now an error naming the argument (and the entry).
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from rltheory.bounds import mdp as B

TYPE_CASES = [
    (lambda: B.vi_error_bound("3", 0.5, 1.0), "k", "got '3' (str)"),
    (lambda: B.vi_error_bound(True, 0.5, 1.0), "k", "got True (bool)"),
    (lambda: B.vi_error_bound([True, 2], 0.5, 1.0), "k", "k[0] = True (bool)"),
    (lambda: B.vi_error_bound([1, 2 + 0j], 0.5, 1.0), "k", "k[1] = (2+0j) (complex)"),
    (lambda: B.vi_error_bound([10**400, "a"], 0.5, 1.0), "k", "k[1] = 'a' (str)"),
    (lambda: B.vi_error_bound(2, 0.5, "1"), "initial_error", "got '1' (str)"),
    (
        lambda: B.vi_error_bound(2, 0.5, [1.0, True]),
        "initial_error",
        "initial_error[1] = True (bool)",
    ),
    (lambda: B.vi_certificate(["0.1"], 0.9), "diff_norm", "diff_norm[0] = '0.1' (str)"),
    (lambda: B.vi_certificate(0.1 + 1j, 0.9), "diff_norm", "got (0.1+1j) (complex)"),
    (lambda: B.vi_iterations_to_threshold(1.0, 0.5, "4"), "first_diff", "got '4' (str)"),
    (lambda: B.span_stopping_iterations(0.5, 0.3, True), "span0", "got True (bool)"),
    (
        lambda: B.span_stopping_iterations(0.5, 0.3, 1.0, sweep_error=True),
        "sweep_error",
        "got True (bool)",
    ),
]


@pytest.mark.parametrize(("call", "name", "where"), TYPE_CASES)
def test_non_numbers_are_a_located_type_error(call, name, where):
    with pytest.raises(TypeError, match=rf"^{name} must hold real numbers; {re.escape(where)}$"):
        call()


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            lambda: B.vi_iterations_to_threshold(1.0, 0.5, [4.0, 2.0]),
            r"^first_diff must be a single number; got an array of shape \(2,\)$",
        ),
        (
            lambda: B.vi_iterations_to_threshold(1.0, 0.5, [[4.0]]),
            r"^first_diff must be a single number; got an array of shape \(1, 1\)$",
        ),
        (
            lambda: B.span_stopping_iterations(0.5, 0.3, [1.0, 2.0]),
            r"^span0 must be a single number; got an array of shape \(2,\)$",
        ),
        (
            lambda: B.span_stopping_iterations(0.5, 0.3, 1.0, sweep_error=np.zeros(2)),
            r"^sweep_error must be a single number; got an array of shape \(2,\)$",
        ),
        (
            lambda: B.vi_error_bound(1, 0.5, 10**400),
            r"^initial_error must be finite and non-negative; initial_error is an integer beyond the float range$",
        ),
        (
            lambda: B.vi_certificate([0.1, -(10**400)], 0.5),
            r"^diff_norm must be finite and non-negative; diff_norm\[1\] is an integer beyond the float range$",
        ),
        (
            lambda: B.vi_error_bound([1, 2, 3], 0.5, [1.0, 2.0]),
            r"^initial_error of shape \(2,\) does not broadcast against k of shape \(3,\)$",
        ),
    ],
)
def test_shape_and_range_errors_are_named(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_numbers_of_every_real_type_give_the_same_bounds():
    # γ^k e0 at γ = 1/2: k = 3, e0 = 2 gives 1/4 (Puterman 1994, Prop. 6.2.4, attained by one
    # state with reward 1); the integer, numpy and 0-d forms of the same numbers agree exactly
    for k in (3, np.int64(3), np.uint8(3), 3.0, np.float32(3.0), np.array(3)):
        for e0 in (2, 2.0, np.float32(2.0), np.array(2.0), np.int16(2)):
            assert B.vi_error_bound(k, 0.5, e0) == 0.25
    assert B.vi_iterations_to_threshold(1.0, 0.5, np.array(4.0)) == 4  # docstring example
    assert B.vi_iterations_to_threshold(1.0, 0.5, 4) == 4
    assert B.span_stopping_iterations(0.5, 0.3, np.float32(1.0), sweep_error=np.int64(0)) == 3
    np.testing.assert_array_equal(B.vi_error_bound([10**400, 1], 0.5, 1.0), [0.0, 0.5])
