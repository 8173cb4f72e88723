"""Experiment.config / reproduce / seed_robustness take ``full`` as a bool only."""

from __future__ import annotations

import numpy as np
import pytest

from rltheory import experiments
from rltheory.experiments.robustness import seed_robustness


@pytest.mark.parametrize("full", ["no", "false", 0, None, 1.0])
def test_a_full_flag_that_is_not_a_bool_is_named(full):
    # "no" and "false" are truthy: the full preset (minutes to hours) was run for them
    exp = experiments.get("discount-to-gain")
    with pytest.raises(
        TypeError, match=r"experiment 'discount-to-gain': full must be a bool \(True for the full"
    ):
        exp.config(full)
    with pytest.raises(TypeError, match=r"full must be a bool"):
        exp.reproduce(full=full)
    with pytest.raises(TypeError, match=r"full must be a bool"):
        seed_robustness(exp, [0], full=full)


def test_bools_choose_the_presets():
    exp = experiments.get("discount-to-gain")
    assert (
        exp.config(False) == exp.config_cls.quick()
        and exp.config(np.True_) == exp.config_cls.full()
    )
