"""A diverging critic or actor is a located ValueError, not NaN results.

With critic features of size 10 and a critic step of 50 the linear critic's iterates overflow
within ~100 updates. Before: :func:`multilevel_actor_critic` returned ``η = nan``, ``ω = [nan, nan]``
(its AdaGrad sum turned NaN, so the actor silently stopped), :func:`differential_td` returned
``w = [nan, nan]``, and :func:`average_reward_actor_critic` failed at its next trace record with
"pi must be finite; pi(s=0, a=0) = nan", which names neither the critic nor the step size. An actor
whose logits overflowed drew its actions from a NaN policy (``_draw`` took the last action).
"""

from __future__ import annotations

import numpy as np
import pytest

from rltheory.algorithms.average_reward import (
    StepSchedule,
    average_reward_actor_critic,
    differential_td,
    multilevel_actor_critic,
)
from rltheory.mdp import FiniteMDP

# These runs diverge on purpose: numpy's overflow / invalid-value RuntimeWarnings on the way to
# the located ValueError are expected here (they are what the error reports), not noise in the
# suite's summary.
pytestmark = pytest.mark.filterwarnings(
    "ignore:overflow encountered:RuntimeWarning", "ignore:invalid value encountered:RuntimeWarning"
)


def _setup():
    rng = np.random.default_rng(0)
    mdp = FiniteMDP(rng.dirichlet(np.ones(3), size=(3, 2)), rng.random((3, 2)), None)
    return mdp, rng.standard_normal((3, 2)) * 10


def test_actor_critic_names_the_diverging_critic():
    mdp, Phi = _setup()
    with pytest.raises(
        ValueError,
        match=r"average_reward_actor_critic diverged at update t=\d+: the TD error δ = .* is not "
        r"finite .*critic_step\(\d+\) = 50\.0\); use smaller steps",
    ):
        average_reward_actor_critic(
            mdp, steps=3000, rng=0, critic_step=StepSchedule(50.0), features=Phi
        )


def test_mac_names_the_diverging_critic():
    mdp, Phi = _setup()
    with pytest.raises(
        ValueError,
        match=r"multilevel_actor_critic diverged at update t=\d+: an MLMC estimate .* is not "
        r"finite .*critic_step\(\d+\) = 50\.0\); use smaller steps",
    ):
        multilevel_actor_critic(
            mdp, iterations=3000, T_max=8, rng=0, critic_step=StepSchedule(50.0), features=Phi
        )


def test_differential_td_names_the_diverging_critic():
    mdp, Phi = _setup()
    with pytest.raises(
        ValueError,
        match=r"differential_td diverged at update t=\d+: the TD error δ = .* is not finite "
        r".*alpha\(\d+\) = 50\.0, beta\(\d+\) = .*; use smaller steps",
    ):
        differential_td(
            mdp, np.full((3, 2), 0.5), steps=3000, rng=0, alpha=StepSchedule(50.0), features=Phi
        )


@pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")
def test_actor_critic_names_overflowing_logits():
    mdp, _ = _setup()
    # equal logits 1.79e308 (a uniform policy): the first actor step, ±0.5·δ·1e308, pushes one
    # past the float range (the warning is numpy's, from that addition)
    with pytest.raises(
        ValueError,
        match=r"the actor's logits overflow at update t=\d+: theta\[\d\] = \[.*inf.*\] "
        r"\(actor_step\(\d+\) = 1e\+308\); use a smaller actor_step",
    ):
        average_reward_actor_critic(
            mdp,
            steps=2000,
            rng=0,
            actor_step=StepSchedule(1e308),
            theta0=np.full((3, 2), 1.79e308),
            record_every=10**6,
        )


def test_stable_runs_are_unchanged():
    # the checks only read the iterates: a stable run still returns finite results
    mdp, Phi = _setup()
    res = multilevel_actor_critic(mdp, iterations=300, T_max=8, rng=0, features=Phi / 10)
    assert np.all(np.isfinite(res.omega)) and np.isfinite(res.eta)
    assert np.all(np.isfinite(res.theta)) and np.any(res.theta != 0)
