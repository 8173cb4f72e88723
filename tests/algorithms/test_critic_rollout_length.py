"""Sample-based compatible critics (LSTDCritic, TDCritic) as gamma -> 1: one roll-out-length rule,
shared with the networked sampler (rltheory.mdp.sample._check_rollout_length)."""

from __future__ import annotations

import numpy as np
import pytest

from rltheory.algorithms import actor_critic as ac
from rltheory.algorithms import networked_critics
from rltheory.algorithms.actor_critic import ExactCritic, LSTDCritic, TDCritic, natural_actor_critic
from rltheory.mdp import FiniteMDP
from rltheory.mdp import sample as mdp_sample


def _mdp(gamma: float) -> FiniteMDP:
    P = np.array([[[0.9, 0.1], [0.2, 0.8]], [[0.5, 0.5], [0.0, 1.0]]])
    R = np.array([[1.0, 0.0], [0.0, 0.5]])
    return FiniteMDP(P, R, gamma=gamma)


FEATURES = np.eye(4).reshape(2, 2, 4)


@pytest.mark.parametrize("critic", [LSTDCritic(samples=10), TDCritic(samples=10)])
def test_a_discount_with_unbounded_rollouts_is_refused_before_sampling(critic):
    # old: gamma = 1 - 1e-12 drew Geometric(1e-12) horizons (mean 1e12 steps) and stepped through
    # them one at a time (did not finish)
    gen = np.random.default_rng(0)
    before = gen.bit_generator.state
    with pytest.raises(
        ValueError,
        match=r"gamma = 0\.999999999999\d* gives an expected roll-out segment length "
        r"1/\(1-gamma\) = 1e\+12 steps \(one segment per sample, 10 samples\), above "
        r"max_length = 10000 \(gamma > 1 - 1/max_length = 0\.9999\): .* pass a larger max_length",
    ):
        natural_actor_critic(
            _mdp(1.0 - 1e-12), FEATURES, eta=0.1, iterations=1, critic=critic, rng=gen
        )
    assert gen.bit_generator.state == before  # refused before any draw


@pytest.mark.parametrize("make", [LSTDCritic, TDCritic])
def test_the_rollout_length_cap_is_the_expected_length(make):
    # 1/(1 - 0.75) = 4 steps: refused under a cap of 3.5; under 4.5 the same draws (and the same
    # critic) as under the default cap, since nothing is truncated
    mdp = _mdp(0.75)
    pi = np.array([[0.3, 0.7], [0.6, 0.4]])
    rho = np.array([0.5, 0.5])
    w0 = np.zeros(4)
    with pytest.raises(
        ValueError, match=r"gamma = 0\.75 gives .* 1/\(1-gamma\) = 4 steps .* max_length = 3\.5"
    ):
        make(samples=50, max_length=3.5).fit(mdp, pi, FEATURES, rho, np.random.default_rng(1), w0)
    got = make(samples=50, max_length=4.5).fit(mdp, pi, FEATURES, rho, np.random.default_rng(1), w0)
    ref = make(samples=50).fit(mdp, pi, FEATURES, rho, np.random.default_rng(1), w0)
    np.testing.assert_array_equal(got, ref)


@pytest.mark.parametrize("bad", [0.5, 0, -1.0, float("nan"), float("inf"), True, "10"])
@pytest.mark.parametrize("make", [LSTDCritic, TDCritic])
def test_a_bad_rollout_length_cap_is_named(make, bad):
    with pytest.raises(ValueError, match=r"max_length must be a finite number >= 1; got"):
        make(max_length=bad)


def test_one_rule_for_every_geometric_horizon_sampler():
    # the networked sampler and the critics use the same check (and so the same message form)
    assert networked_critics._check_rollout_length is mdp_sample._check_rollout_length
    assert ac._check_rollout_length is mdp_sample._check_rollout_length


@pytest.mark.parametrize(
    ("gamma", "cap"), [(0.9999, None), (0.9, 10), (0.99999, 1e5), (0.5, 2), (0.0, 1), (0.75, 4)]
)
def test_the_cap_accepts_gamma_one_minus_one_over_max_length_as_written(gamma, cap):
    # the double nearest 0.9999 is above 0.9999, so 1/(1 - gamma) = 10000.0000000011: the old rule
    # (1/(1 - gamma) > max_length) refused the documented default gamma = 0.9999 (and 0.9 under 10)
    assert mdp_sample._check_rollout_length(gamma, cap, 1) == (1e4 if cap is None else cap)
    above = np.nextafter(gamma, 1.0)
    with pytest.raises(ValueError, match=r"above max_length = .*\(gamma > 1 - 1/max_length = "):
        mdp_sample._check_rollout_length(above, cap, 1)


def test_the_critic_samples_at_the_default_cap():
    # gamma = 0.9999 (1/(1 - gamma) = 1e4, the default cap) is sampled: refused before. Two samples
    # from the absorbing state 1 under pi(.|1) = e_1 are (1, 1, 0.5, 1, 1) whatever their times
    mdp = _mdp(0.9999)
    pi = np.array([[0.5, 0.5], [0.0, 1.0]])
    got = ac._samples(mdp, pi, np.array([0.0, 1.0]), 2, np.random.default_rng(3))
    for x, want in zip(got, (1, 1, 0.5, 1, 1), strict=True):
        np.testing.assert_array_equal(x, np.full(2, want))


# ------------------------------------------------------------------ the critics keep the model's dtype
@pytest.mark.parametrize("make", [LSTDCritic, TDCritic])
def test_sample_based_critics_keep_a_float32_model_in_float32(make):
    # old: the critic's w came back float64, so theta, the policy and the trace of a float32 model
    # turned float64 after the first step (ExactCritic kept float32)
    mdp = FiniteMDP(
        np.array([[[0.9, 0.1], [0.2, 0.8]], [[0.5, 0.5], [0.0, 1.0]]], dtype=np.float32),
        np.array([[1.0, 0.0], [0.0, 0.5]], dtype=np.float32),
        gamma=0.9,
    )
    res = natural_actor_critic(mdp, FEATURES, eta=0.1, iterations=2, critic=make(samples=50), rng=0)
    assert res.theta.dtype == np.float32
    assert res.policy.dtype == np.float32
    ref = natural_actor_critic(mdp, FEATURES, eta=0.1, iterations=2, critic=ExactCritic())
    assert ref.theta.dtype == np.float32 and ref.policy.dtype == np.float32


def test_a_critic_beyond_a_float32_range_is_named():
    # one absorbing state, r = 1e30 in float32, gamma = 0.5: Q = 2e30 on features 1e-10, so the LSTD
    # weights are 2e40 > 3.4e38 (float32's largest); old: inf weights, then a logits overflow blamed
    # on eta one step later
    mdp = FiniteMDP(np.ones((1, 1, 1), np.float32), np.full((1, 1), 1e30, np.float32), gamma=0.5)
    f = np.full((1, 1, 1), 1e-10, np.float32)
    with pytest.raises(
        ValueError,
        match=r"LSTDCritic: the critic weights are beyond the model's float32 range: w\[0\] = 2\.0\d*e\+40",
    ):
        LSTDCritic(samples=5, ridge=0).fit(
            mdp, np.ones((1, 1)), f, np.ones(1), np.random.default_rng(0), np.zeros(1)
        )


@pytest.mark.parametrize("cls", [ExactCritic, LSTDCritic, TDCritic])
def test_a_critic_class_instead_of_an_instance_is_named(cls):
    # old: TypeError "LSTDCritic.fit() missing 1 required positional argument: 'w0'" (the class's
    # unbound fit called with the instance's arguments)
    with pytest.raises(
        TypeError,
        match=rf"critic must be a critic instance, e\.g\. {cls.__name__}\(\); got the class",
    ):
        natural_actor_critic(_mdp(0.5), FEATURES, eta=0.1, iterations=1, critic=cls, rng=0)
