"""mixing_step_sizes names its own arguments when a step critic/tau_mix or actor/tau_mix underflows.

critic = 1e-300 and tau_mix = 1e308 each pass their checks, but the step 1e-608 rounds to 0.0 in
float64; the error used to come from StepSchedule ("StepSchedule.c ... got 0.0").
"""

import pytest

from rltheory.algorithms.step_schedules import StepSchedule, mixing_step_sizes


@pytest.mark.parametrize("name", ["critic", "actor"])
def test_underflowing_step_is_located(name):
    with pytest.raises(
        ValueError, match=rf"mixing_step_sizes: the step {name}/tau_mix = 1e-300/1e\+308"
    ) as e:
        mixing_step_sizes(1e308, **{name: 1e-300})
    assert "StepSchedule" not in str(e.value)


def test_subnormal_step_is_kept():
    # 1e-300 / 1e10 = 1e-310 is subnormal but > 0: a valid (tiny) step, not an error
    critic, actor = mixing_step_sizes(1e10, critic=1e-300)
    assert isinstance(critic, StepSchedule)
    assert critic(0) == 1e-300 / 1e10 > 0
    assert actor(0) == 0.05 / 1e10
