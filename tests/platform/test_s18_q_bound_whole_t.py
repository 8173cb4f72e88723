"""q_learning_bound takes whole iteration counts only (helper-80's open item).

Regression: ``t = 0.5`` returned ``(1 − α(1−γ))^0.5 e0 + noise``, a value between two iterates
that the statement (``‖Q_t − Q*‖∞`` for ``t = 0..T``) never makes.
"""

from __future__ import annotations

import numpy as np
import pytest

from rltheory.bounds.td_q_learning import q_learning_bound

_QL = dict(
    alpha=0.1, gamma=0.5, initial_error=1.0, value_span=1.0, n_pairs=4, horizon=10, delta=0.1
)


def test_fractional_times_are_refused_and_located():
    with pytest.raises(ValueError, match=r"t must hold whole iteration counts; t\[1\] = 0\.5"):
        q_learning_bound([0, 0.5, 2], **_QL)


def test_whole_times_in_any_numeric_type_are_accepted():
    a = q_learning_bound([0, 3], **_QL)
    np.testing.assert_array_equal(q_learning_bound(np.array([0.0, 3.0]), **_QL), a)
    np.testing.assert_array_equal(q_learning_bound(np.array([0, 3], dtype=np.int64), **_QL), a)
