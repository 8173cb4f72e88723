"""temperature_error bounds the shift of V*_tau when the kernels use tau rounded to the dtype.

Claim (rltheory.algorithms.temperature.temperature_error): ``|V*_tau - V*_tau_hat| <=
|tau_hat - tau| log|A| / (1 - gamma)``, because ``V*_tau`` is a maximum of functions affine in tau
with slopes in ``[0, log|A|/(1-gamma)]``. Checked on one-state models, where
``V*_tau = tau log sum_a exp(r_a / tau) / (1 - gamma)`` in closed form (evaluated in float64 at
both temperatures); with equal rewards the slope is exactly ``log|A|/(1-gamma)`` and the bound is
attained.
"""

import math

import numpy as np
import pytest

from rltheory.algorithms.temperature import rounded_temperature, temperature_error
from rltheory.mdp import FiniteMDP


def _soft_part(r, tau):
    """``tau log sum_a exp((r_a - max r)/tau)``: ``V*_tau (1 - gamma) - max r``, computed without
    the cancellation against ``max r`` (the shift between two temperatures is this part's)."""
    z = (np.asarray(r, dtype=np.float64) - max(r)) / tau
    return tau * math.log(float(np.exp(z).sum()))


@pytest.mark.parametrize("tau", [1e-42, 3.3e-43, 1e-40, 0.1])
@pytest.mark.parametrize("rewards", [(0.0, 0.0, 0.0), (2e-42, 0.0, 1e-42), (1.0, 0.5, 0.0)])
def test_the_shift_of_v_star_is_within_the_bound(tau, rewards):
    gamma = 0.5
    mdp = FiniteMDP(
        np.ones((1, 3, 1), dtype=np.float32), np.array([rewards], dtype=np.float32), gamma
    )
    tau_hat, dtau = rounded_temperature(mdp, tau)
    assert tau_hat == float(np.float32(tau)) and dtau == abs(tau_hat - tau)
    r = np.asarray(mdp.R, dtype=np.float64)[0]
    a, b = _soft_part(list(r), tau_hat), _soft_part(list(r), tau)
    shift = abs(a - b) / (1.0 - gamma)
    u = np.finfo(np.float64).eps / 2
    rounding = 8 * u * (abs(a) + abs(b)) / (1.0 - gamma)  # the float64 reference's own error
    bound = temperature_error(mdp, tau)
    assert shift <= bound + rounding
    if len(set(rewards)) == 1:  # equal rewards: entropy log|A| at every tau, the bound is attained
        assert shift == pytest.approx(bound, rel=1e-9)


def test_float64_models_have_no_temperature_error():
    mdp = FiniteMDP(np.ones((1, 2, 1)), np.array([[1.0, 0.0]]), 0.9)
    assert temperature_error(mdp, 1e-42) == 0.0
