"""The actor-critics' host softmax and index draw are the validated ones, bit for bit.

``_host_softmax`` takes plain numpy calls on float64 numpy input (the per-transition call of
:func:`average_reward_actor_critic` and :func:`multilevel_actor_critic`) instead of the array-API
softmax of :func:`rltheory.algorithms.policy_gradient.softmax_policy`; ``_draw`` calls the
``searchsorted`` method instead of the ``np.searchsorted`` wrapper; the loops read a constant
``StepSchedule``'s step once (``_constant_step``). All three were changed for speed only (the
mac-mixing quick run: 11.0 s -> 7.2 s CPU): these tests pin that the outputs, and so every seeded
trajectory, are unchanged.
"""

from __future__ import annotations

import numpy as np
import pytest

from rltheory.algorithms import _average_reward_base as base
from rltheory.algorithms import average_actor_critic as aac
from rltheory.algorithms import mac
from rltheory.algorithms.average_reward import (
    StepSchedule,
    average_reward_actor_critic,
    multilevel_actor_critic,
)
from rltheory.algorithms.policy_gradient import _softmax_policy, softmax_policy
from rltheory.mdp import FiniteMDP
from rltheory.mdp.mixing_zoo import ring_mdp


def _validated_softmax(theta):
    """The array-API path the loops used before (reference)."""
    return np.asarray(_softmax_policy(np.asarray(theta, dtype=float)))


def _validated_draw(cdf_row, u):
    return int(min(np.searchsorted(cdf_row, u, side="right"), cdf_row.shape[-1] - 1))


@pytest.mark.parametrize("shape", [(1,), (2,), (7,), (3, 4), (5, 1), (6, 9)])
@pytest.mark.parametrize("scale", [1e-300, 1e-5, 1.0, 30.0, 700.0, 1e5, 1e300])
def test_host_softmax_is_the_validated_softmax_bit_for_bit(shape, scale):
    rng = np.random.default_rng([*shape, int(np.log10(scale)) + 400])
    for _ in range(50):
        th = rng.standard_normal(shape) * scale
        got = base._host_softmax(th)
        assert got.dtype == np.float64
        np.testing.assert_array_equal(got, _validated_softmax(th))
        np.testing.assert_array_equal(
            got, np.asarray(softmax_policy(np.atleast_2d(th))).reshape(shape)
        )


def test_host_softmax_other_inputs_take_the_validated_path():
    # lists, float32 and integer arrays are cast to float64 first, as before
    for th in ([[0.0, 1.0], [2.0, -1.0]], np.array([[0.5, -3.0]], np.float32), np.array([1, 2, 3])):
        np.testing.assert_array_equal(base._host_softmax(th), _validated_softmax(th))


def test_draw_is_the_inverse_cdf_index():
    rng = np.random.default_rng(5)
    rows = [
        np.array([1.0]),
        np.array([0.5, 0.5, 1.0]),  # a zero-probability middle entry: u = 0.5 goes past it
        np.array([0.0, 0.0, 1.0]),
        np.cumsum(rng.dirichlet(np.ones(6))),
        np.array([0.25, 0.5, 0.75, 1.0 - 2**-53]),  # a row that ends below 1 (round-off)
    ]
    for c in rows:
        for u in [0.0, 0.25, 0.5, 0.75, 1.0 - 2**-53, *rng.random(200)]:
            assert base._draw(c, u) == _validated_draw(c, u)
            assert isinstance(base._draw(c, u), int)


def _runs():
    lazy = ring_mdp(6, laziness=0.875, reward="dense")
    rng = np.random.default_rng(11)
    rand = FiniteMDP(rng.dirichlet(np.ones(4), size=(4, 3)), rng.random((4, 3)), None)
    ac = dict(
        steps=3000, critic_step=StepSchedule(0.5), actor_step=StepSchedule(2.0), record_every=500
    )
    return [
        (average_reward_actor_critic, lazy, dict(ac, rng=3)),
        (
            average_reward_actor_critic,
            lazy,
            dict(
                ac,
                rng=6,
                actor_step=StepSchedule(1.0, t0=50.0, power=0.6),
                gain_step=StepSchedule(0.05),
            ),
        ),
        (
            average_reward_actor_critic,
            rand,
            dict(ac, rng=4, theta0=rng.standard_normal((4, 3)) * 40),
        ),
        (multilevel_actor_critic, lazy, dict(iterations=400, T_max=16, rng=3, record_every=100)),
        (
            multilevel_actor_critic,
            rand,
            dict(
                iterations=300,
                T_max=64,
                rng=5,
                record_every=100,
                critic_step=StepSchedule(0.2, t0=10.0, power=0.75),
                gain_step=StepSchedule(0.1),
            ),
        ),
    ]


@pytest.mark.parametrize("k", range(5))
def test_seeded_actor_critic_runs_are_unchanged(k, monkeypatch):
    """A seeded run with the fast softmax and draw equals the run with the validated ones exactly.

    (And with the constant steps of ``StepSchedule(c)`` read once instead of at every ``t``.)
    """
    fn, mdp, kw = _runs()[k]
    fast = fn(mdp, **kw)
    for module in (aac, mac):
        monkeypatch.setattr(module, "_host_softmax", _validated_softmax)
        monkeypatch.setattr(module, "_draw", _validated_draw)
        # every step from schedule(t), checked at each t, as before the constant steps were hoisted
        monkeypatch.setattr(module, "_constant_step", lambda schedule, name: None)
    ref = fn(mdp, **kw)
    np.testing.assert_array_equal(fast.theta, ref.theta)
    np.testing.assert_array_equal(fast.omega, ref.omega)
    assert fast.eta == ref.eta and fast.samples == ref.samples
    for key in ("gain", "gain_gap", "grad_norm_sq", "gain_estimate_error", "samples"):
        np.testing.assert_array_equal(fast.trace[key], ref.trace[key])
