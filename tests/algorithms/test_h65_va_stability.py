"""VA-learning's update is not a convex combination: its stability limits, against closed forms.

With one action (``A* = 0``) the errors ``q = Q − Q*``, ``v = V − Q*`` of a visited state with
successor ``s'`` follow ``q ← (1 − α) q − α v + 2αγ q(s')``, ``v ← (1 − α) v + αγ q(s')`` (the update
of :func:`va_learning` written out). Its Notes and its divergence message used to say that steps
"below about 1/2" are enough; on a deterministic 2-cycle at ``γ = 0.99`` the threshold is 0.0396,
and on long cycles the mean dynamics are unstable for every step size.
"""

from __future__ import annotations

import numpy as np
import pytest

from rltheory.algorithms.q_learning import constant_step, q_learning, va_learning
from rltheory.mdp import FiniteMDP


def _cycle(L: int, gamma: float, reward: float = 1.0) -> FiniteMDP:
    """Deterministic ``L``-cycle ``s → s + 1 mod L`` with one action: ``Q* = reward/(1 − γ)``."""
    P = np.eye(L)[(np.arange(L) + 1) % L][:, None, :]
    return FiniteMDP(P, np.full((L, 1), reward), gamma=gamma)


def _round_map(alpha: float, gamma: float) -> np.ndarray:
    """The error map of one round (visit 0, then 1) on the 2-cycle, errors ``(q0, v0, q1, v1)``."""
    visit0 = np.eye(4)
    visit0[0] = [1 - alpha, -alpha, 2 * alpha * gamma, 0]
    visit0[1] = [0, 1 - alpha, alpha * gamma, 0]
    swap = np.eye(4)[[2, 3, 0, 1]]
    return swap @ visit0 @ swap @ visit0


def _mean_jacobian(L: int, gamma: float) -> np.ndarray:
    """``q̇ = −q − v + 2γ q(s')``, ``v̇ = −v + γ q(s')`` on the ``L``-cycle, variables ``(q_s, v_s)``."""
    J = np.zeros((2 * L, 2 * L))
    for s in range(L):
        n = (s + 1) % L
        J[2 * s, [2 * s, 2 * s + 1]] = -1.0
        J[2 * s, 2 * n] += 2 * gamma
        J[2 * s + 1, 2 * s + 1] = -1.0
        J[2 * s + 1, 2 * n] += gamma
    return J


def test_constant_step_threshold_on_the_two_cycle_is_about_four_times_one_minus_gamma():
    # bisection on the spectral radius of the round map: 0.357, 0.190, 0.0396, 0.0040 (Notes)
    for gamma, thr in ((0.9, 0.3568), (0.95, 0.1895), (0.99, 0.03960), (0.999, 0.003996)):
        radius = [
            max(abs(np.linalg.eigvals(_round_map(a, gamma)))) for a in (thr * 0.99, thr * 1.01)
        ]
        assert radius[0] < 1.0 < radius[1]


def test_va_learning_diverges_above_the_threshold_at_the_rate_of_the_round_map():
    mdp = _cycle(2, 0.99)  # Q* = 100
    kw = dict(steps=40_000, rng=0, record_every=10_000)
    up = va_learning(mdp, step_size=constant_step(0.1), **kw).trace["error"][:, 0]
    rate = np.log(max(abs(np.linalg.eigvals(_round_map(0.1, 0.99)))))  # 1.69e-3 per round
    # 15,000 rounds between the records 1 and 4; the complex pair modulates the envelope by a few %
    assert (np.log(up[4]) - np.log(up[1])) / 15_000 == pytest.approx(rate, rel=0.05)
    assert up[-1] > 1e14
    # below the threshold (0.03 < 0.0396) the same run converges, and Q-learning at α = 0.1 does
    down = va_learning(mdp, step_size=constant_step(0.03), **kw).trace["error"][:, 0]
    assert down[-1] < 0.05 * down[0]
    q = q_learning(mdp, step_size=constant_step(0.1), **kw).trace["error"][:, 0]
    # Q-learning's sup-norm contraction: each visit scales the error by <= 1 − α(1 − γ) = 0.999,
    # 20,000 rounds from ‖Q0 − Q*‖ = 100
    assert q[-1] <= 100 * (1 - 0.1 * 0.01) ** 20_000


def test_mean_dynamics_on_long_cycles_have_an_unstable_mode():
    # Fourier modes ω = e^{2πik/L}: λ = −1 + γω ± √(γω(γω − 1)) (Notes), against the matrix
    for L, gamma, top in ((10, 0.99, 0.0363), (20, 0.9, 0.0575), (8, 0.99, -0.01)):
        w = np.exp(2j * np.pi * np.arange(L) / L)
        root = np.sqrt(gamma * w * (gamma * w - 1))
        closed = np.concatenate([-1 + gamma * w + root, -1 + gamma * w - root])
        eig = np.linalg.eigvals(_mean_jacobian(L, gamma))
        assert max(eig.real) == pytest.approx(max(closed.real), abs=1e-10)
        assert max(eig.real) == pytest.approx(top, abs=5e-4)
    # so on the 20-cycle at γ = 0.95 (max Re λ = +0.149) a small constant step diverges too
    mdp = _cycle(20, 0.95)  # Q* = 20
    kw = dict(steps=20_000, step_size=constant_step(0.05), rng=0, record_every=5_000)
    va = va_learning(mdp, **kw).trace["error"][:, 0]
    q = q_learning(mdp, **kw).trace["error"][:, 0]
    assert va[-1] > 4 * va[0] and q[-1] < 0.1 * q[0]


def test_the_divergence_message_does_not_promise_that_steps_below_one_half_are_enough():
    # α = 0.3 on the 2-cycle at γ = 0.99 (threshold 0.0396) from rewards 1e300: the table
    # overflows; the message used to blame steps "above about 1/2"
    with pytest.raises(ValueError) as err:
        va_learning(_cycle(2, 0.99, 1e300), steps=5_000, step_size=constant_step(0.3), rng=0)
    msg = str(err.value)
    assert msg.startswith(
        "va_learning: the iterates diverged: the table is not finite at step t = "
    )
    assert "about 1/2" not in msg
    assert "threshold that shrinks with 1 - gamma (about 4(1 - gamma)" in msg
    assert "for every step schedule on long deterministic cycles" in msg
