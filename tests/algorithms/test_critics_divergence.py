"""TD(λ) iterates that overflow are a located error, as for NAC's TDCritic."""

from __future__ import annotations

import numpy as np
import pytest

from rltheory.algorithms.critics import random_features, td_linear
from rltheory.mdp.zoo import random_mdp


@pytest.mark.parametrize("lam", [0.0, 0.5])
def test_td_linear_that_diverges_names_the_step(lam):
    # α = 50 with features of norm ~1 and γ = 0.9: |1 − α‖φ‖²| > 1 and the iterates grow
    # geometrically; the result was theta = NaN with numpy's overflow warnings
    mdp = random_mdp(5, 2, gamma=0.9, rng=0)
    Phi = random_features(5, 3, rng=0)
    with pytest.raises(
        ValueError, match=r"td_linear diverged: theta overflowed at step t=\d+ of run \d"
    ):
        td_linear(
            mdp, np.full((5, 2), 0.5), Phi, steps=3000, step_size=50.0, rng=0, lam=lam, n_runs=2
        )


def test_td_linear_with_a_stable_step_is_unchanged():
    # same model, α = 0.05: converges towards θ* (final error well below the initial ‖Φθ*‖_D)
    mdp = random_mdp(5, 2, gamma=0.9, rng=0)
    res = td_linear(
        mdp, np.full((5, 2), 0.5), random_features(5, 3, rng=0), steps=3000, step_size=0.05, rng=0
    )
    assert res.trace["error_avg"][-1, 0] < 0.5 * res.trace["error"][0, 0]
