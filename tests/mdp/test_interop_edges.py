"""Interop outside the ranges of test_interop.py: every toy-text variant against its own table
and the real env, float32 round trips, NaN and tolerance edges, envs the table does not describe."""

from __future__ import annotations

import numpy as np
import pytest

from rltheory.errors import InvalidModelError
from rltheory.mdp import from_quantecon


# ---- QuantEcon ----------------------------------------------------------------------------------
@pytest.mark.parametrize("pad", [False, True])
def test_quantecon_product_form_nan_reward_is_not_an_infeasible_action(pad):
    # NaN > -inf is False, so a NaN reward was taken for an infeasible action: with
    # pad_infeasible=True it was silently replaced by the reward of action 0 (R[0, 1] became 1.0),
    # without it the message blamed an "infeasible" action.
    R = np.array([[1.0, np.nan], [0.0, 0.0]])
    Q = np.full((2, 2, 2), 0.5)
    with pytest.raises(InvalidModelError, match=r"product form; R\[0, 1\] = nan"):
        from_quantecon(R, Q, 0.9, pad_infeasible=pad)
    # -inf still marks an infeasible action
    R[0, 1] = -np.inf
    np.testing.assert_array_equal(
        from_quantecon(R, Q, 0.9, pad_infeasible=True).R, [[1.0, 1.0], [0.0, 0.0]]
    )
