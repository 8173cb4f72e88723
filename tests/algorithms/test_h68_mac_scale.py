"""MAC is invariant to the reward scale: rewards times ``2^k`` give the same actor, bit for bit.

Every MAC quantity is linear in the rewards — the gain estimate ``η``, the critic ``ω`` (and a
projection radius given in the rewards' units), the MLMC estimates ``f_t, h_t, g_t`` — while the
AdaGrad actor step ``actor_scale · g_t / √(Σ_k ‖g_k‖²)`` is homogeneous of degree 0 (Suttle et al.
2023, Algorithm 1). Multiplying rewards by a power of two is exact in floating point, so the
scaled run must reproduce the unit run's logits exactly and its ``η, ω`` times ``2^k``, as long as
the numbers stay in range. Before, ``Σ‖g_k‖²`` overflowed to ``inf`` once ``‖g_t‖ > 1e154`` and
the actor never moved (``θ = 0`` after 200 updates with rewards ``~1e301``); and the critic's
projection formed ``‖ω‖`` by ``np.linalg.norm``, which overflowed for entries beyond ``1e154`` and
set ``ω`` to 0 instead of onto the sphere.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from rltheory.algorithms.average_reward import multilevel_actor_critic
from rltheory.algorithms.mac import _adagrad_add, _project_ball
from rltheory.mdp import FiniteMDP


def _model(scale: float) -> FiniteMDP:
    rng = np.random.default_rng(21)
    P = rng.dirichlet(np.ones(4), size=(4, 3))
    return FiniteMDP(P, rng.random((4, 3)) * scale, None)


def _run(k: int, **kw):
    with warnings.catch_warnings():
        # the trace's exact ‖∇J‖² is beyond the float range at this scale (recorded as inf)
        warnings.filterwarnings("ignore", "overflow encountered", RuntimeWarning)
        return multilevel_actor_critic(
            _model(2.0**k), iterations=200, T_max=16, rng=7, record_every=50, **kw
        )


@pytest.mark.parametrize("k", [-200, 300, 1000])
def test_mac_actor_is_invariant_to_a_power_of_two_reward_scale(k):
    unit, scaled = _run(0), _run(k)
    assert np.any(unit.theta != 0)
    np.testing.assert_array_equal(scaled.theta, unit.theta)  # θ stayed 0 at k = 1000 before
    np.testing.assert_array_equal(scaled.omega, unit.omega * 2.0**k)
    assert scaled.eta == unit.eta * 2.0**k
    assert scaled.samples == unit.samples
    np.testing.assert_array_equal(scaled.trace["gain"], unit.trace["gain"] * 2.0**k)


@pytest.mark.parametrize("k", [0, 600])
def test_mac_critic_projection_is_invariant_to_the_reward_scale(k):
    # radius 0.05 binds: the critic sits on the sphere (and θ still moves)
    unit, scaled = _run(0, omega_radius=0.05), _run(k, omega_radius=0.05 * 2.0**k)
    assert np.linalg.norm(unit.omega) == pytest.approx(0.05, rel=1e-12)
    np.testing.assert_array_equal(scaled.omega, unit.omega * 2.0**k)  # ω = 0 at k = 600 before
    np.testing.assert_array_equal(scaled.theta, unit.theta)


def test_adagrad_sum_beyond_the_float_range():
    g = np.array([3e200, -4e200])
    G2, c = _adagrad_add(0.0, 1.0, g)
    assert c > 1.0  # ‖g‖² = 2.5e401 is beyond the float range; ‖g‖ = c·√G2 = 5e200 is not
    assert np.sqrt(G2) * c == pytest.approx(5e200, rel=1e-15)
    G2, c = _adagrad_add(G2, c, g)  # two equal terms: ‖·‖ = √2 · 5e200
    assert np.sqrt(G2) * c == pytest.approx(np.sqrt(2.0) * 5e200, rel=1e-15)
    # an ordinary sum keeps c = 1 and the plain float sum
    assert _adagrad_add(2.0, 1.0, np.array([3.0, 4.0])) == (27.0, 1.0)


def test_project_ball_beyond_the_float_range():
    w = np.array([3e200, 4e200])
    np.testing.assert_allclose(_project_ball(w, 1e100), [6e99, 8e99], rtol=1e-15)
    np.testing.assert_array_equal(_project_ball(np.array([3.0, 4.0]), 10.0), [3.0, 4.0])
    np.testing.assert_allclose(_project_ball(np.array([3.0, 4.0]), 1.0), [0.6, 0.8], rtol=1e-15)
