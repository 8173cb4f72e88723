"""kappa-truncation refuses, located, a network whose correlation decay is at the rounding floor.

With independent agents (``infect = 0``) or ``γ = 0`` the influence ``δ(d)`` of an agent at
distance ``d ≥ 1`` is exactly 0; the computed values are 0 or rounding noise (8.7e-16 on the ring
of 8), and the old run died inside its helpers: "phi must lie in (0, 1); got 1.0006" (φ fitted to
noise) or "err must be positive and finite to take logs".
"""

from __future__ import annotations

import pytest

from rltheory.experiments.kappa_truncation import Config, run


@pytest.mark.parametrize(
    "config, d",
    [
        (Config(infect=0.0, ring_agents=8, line_agents=5), 1),
        (Config(gamma=0.0, ring_agents=8, line_agents=5), 1),
        (Config(infect=1e-6, ring_agents=8, line_agents=5), 3),  # δ(3) = 1.3e-15, δ(1) = 5.5e-7
    ],
)
def test_decay_at_rounding_floor_is_refused_located(config, d):
    with pytest.raises(
        ValueError,
        match=rf"ring of 8 agents: the correlation decay is not measurable at distance d = {d}: "
        r"delta\(\d\) = .* rounding floor",
    ):
        run(config, seed=0)


def test_weak_but_measurable_decay_still_runs():
    # infect = 1e-3: δ(d) = 5.5e-4, 7.5e-7, 1.1e-9 on the ring of 8, all above the floor 5.1e-13
    res = run(Config(infect=1e-3, ring_agents=8, line_agents=5), seed=0)
    assert len(res.checks) == 10
