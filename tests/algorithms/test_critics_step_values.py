"""td_linear names the value a step-size schedule returned."""

from __future__ import annotations

import numpy as np
import pytest

from rltheory.algorithms.critics import td_linear
from rltheory.mdp.zoo import two_state


@pytest.mark.parametrize(
    ("ret", "shown"),
    [
        (None, "None"),
        (True, "True"),
        (np.array([0.1]), r"array\(\[0\.1\]\)"),
        ("0.1", "'0\\.1'"),
        (-1.0, "-1\\.0"),
    ],
)
def test_a_bad_step_is_shown_as_returned(ret, shown):
    # old: the message showed the NaN the value was read as: 'step_size(0) = nan' for None, True,
    # a (1,) array and text alike
    with pytest.raises(
        ValueError, match=rf"step_size must return finite steps >= 0; step_size\(0\) = {shown}$"
    ):
        td_linear(
            two_state(), [0, 0], np.eye(2), steps=3, step_size=lambda t: ret, rng=0, d=[0.5, 0.5]
        )
