"""Shared private machinery of the tabular Q-learning family.

Argument checks, the exact ``Q*`` the traces are measured against, the result
type :class:`QLearningResult` (re-exported by :mod:`rltheory.algorithms.q_learning`),
the trace metrics, and :class:`_Runs`, the state shared by the trajectory-based
learners (behaviour trajectories, reward noise, recording).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._validate import as_real_array, check_finite, check_real
from .._validate import check_int as _int
from ..backend import require_host
from ..mdp.bellman import as_stochastic_policy
from ..mdp.discounted import policy_iteration
from ..mdp.model import FiniteMDP
from ..mdp.sample import _rng, rollout
from ..trace import Trace, TraceRecorder
from ._policy_opt import discount

__all__ = ["QLearningResult", "StepSize"]

StepSize = Callable[[Any], Any]


# -- helpers ---------------------------------------------------------------------------


def _alpha(step_size: StepSize, n: Any) -> np.ndarray:
    """``step_size(n)`` as floats, each in ``[0, 1]`` (the Q-learning update is a convex combination).

    A NaN, an infinite, a negative or a ``> 1`` step raises ``ValueError`` naming the argument
    the schedule got and the value it returned (it used to turn the table into NaN silently).
    """
    a = np.asarray(step_size(n), dtype=float)
    ok = (a >= 0.0) & (a <= 1.0)
    if not np.all(ok):
        i = np.argwhere(~np.broadcast_to(ok, np.broadcast_shapes(ok.shape, np.shape(n))))[0]
        got = np.broadcast_to(a, np.broadcast_shapes(a.shape, np.shape(n)))[tuple(i)]
        arg = np.broadcast_to(np.asarray(n), np.broadcast_shapes(a.shape, np.shape(n)))[tuple(i)].item()
        raise ValueError(f"step_size must return steps in [0, 1]; step_size({arg!r}) = {float(got)!r}")
    return a


def _schedule(step_size: Any) -> StepSize:
    """``step_size`` must be a callable schedule (a bare number is a common slip: name it)."""
    if not callable(step_size):
        raise TypeError(f"step_size must be a callable n -> alpha_n (e.g. constant_step(0.1)); "
                        f"got {type(step_size).__name__} {step_size!r}")
    return step_size


def _model(mdp: Any, what: str, single: bool = True) -> tuple[np.ndarray, np.ndarray, float]:
    g = discount(mdp, what, single=single)
    return require_host(mdp.P, what), require_host(mdp.R, what), g


def _q0(mdp: FiniteMDP, Q0: Any, shape: tuple[int, ...]) -> np.ndarray:
    """A writable copy of the initial table ``Q0[..., S, A]`` (finite, located errors) broadcast to ``shape``."""
    Q = as_real_array(require_host(Q0, "Q0"), "Q0", (mdp.S, mdp.A), ("s", "a"), np, np.float64)
    try:
        return np.broadcast_to(Q, shape).copy()
    except ValueError:
        raise ValueError(f"Q0 must broadcast to {shape}; got {Q.shape}") from None


def _q_star(mdp: FiniteMDP, Q_star: Any) -> np.ndarray:
    if Q_star is None:
        return np.asarray(require_host(policy_iteration(mdp).Q, "Q_star"), dtype=float)
    Q_star = np.asarray(Q_star, dtype=float)
    if Q_star.shape != mdp.batch_shape + (mdp.S, mdp.A):
        raise ValueError(f"Q_star must have shape {mdp.batch_shape + (mdp.S, mdp.A)}; got {Q_star.shape}")
    check_finite(Q_star, "Q_star", ("s", "a"))
    return Q_star


def _noise(x: Any) -> float:
    return check_real(x, "reward_noise", low=0.0)


@dataclass(frozen=True, eq=False)
class QLearningResult:
    """Result of a tabular Q-learning variant.

    Attributes
    ----------
    Q : numpy.ndarray
        Final estimate: ``batch_shape + (S, A)`` (synchronous) or ``(n_runs, S, A)``.
    steps : int
        Iterations (synchronous) or environment transitions (trajectory-based).
    updates : int
        Total tabular updates per run (replay updates included).
    trace : Trace
        ``error`` = ``‖Q_t − Q*‖∞`` and ``value_bias`` = ``Σ_s ρ(s)(max_a Q_t(s, a) − V*(s))``
        per run / instance, at the recorded steps.
    converged : None
        Fixed sample budget (no stopping rule).
    extra : dict
        Variant-specific final quantities (``Q_B`` for double Q, ``V`` and ``A`` for VA).
    """

    Q: np.ndarray
    steps: int
    updates: int
    trace: Trace
    converged: None = None
    extra: dict | None = None


def _metrics(Q: np.ndarray, Q_star: np.ndarray, rho: np.ndarray) -> dict[str, np.ndarray]:
    return {
        "error": np.abs(Q - Q_star).max(axis=(-2, -1)),
        "value_bias": ((Q.max(-1) - Q_star.max(-1)) * rho).sum(-1),
    }


def _record_now(t: int, every: int, last: int) -> bool:
    return t % every == 0 or t == last



# -- trajectory-based ------------------------------------------------------------------


def _behaviour(mdp: FiniteMDP, behavior: Any) -> np.ndarray:
    if behavior is None:
        return np.full((mdp.S, mdp.A), 1.0 / mdp.A)
    b = np.asarray(require_host(as_stochastic_policy(mdp, behavior, field="behavior"), "behavior"), float)
    if b.shape != (mdp.S, mdp.A):
        raise ValueError(f"behavior must be one policy of shape ({mdp.S}, {mdp.A}); got {b.shape}")
    return b


class _Runs:
    """Shared state of trajectory-based learners: trajectories, counts, noise, recording."""

    def __init__(self, mdp, behavior, steps, n_runs, rng, Q_star, reward_noise, record_every, what, step_size):
        self.P, self.R, self.g = _model(mdp, what)
        self.step_size = _schedule(step_size)
        self.steps = _int(steps, "steps")
        self.n_runs = _int(n_runs, "n_runs")
        self.every = _int(record_every, "record_every")
        self.noise = _noise(reward_noise)
        self.gen = _rng(rng)
        self.Qs = _q_star(mdp, Q_star)
        self.rho = np.asarray(require_host(mdp.initial_distribution(), "rho"), float)
        self.tr = rollout(mdp, _behaviour(mdp, behavior), self.steps, self.n_runs, self.gen)
        self.S, self.A = mdp.S, mdp.A
        self.runs = np.arange(self.n_runs)
        self.rec = TraceRecorder()

    def reward(self, t: int) -> np.ndarray:
        r = self.tr.rewards[:, t]
        return r + self.noise * self.gen.standard_normal(self.n_runs) if self.noise else r

    def transition(self, t: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(s_t, a_t, s_{t+1})`` of every run."""
        return self.tr.states[:, t], self.tr.actions[:, t], self.tr.states[:, t + 1]

    def q_update(
        self, Q: np.ndarray, n: np.ndarray, step_size: StepSize,
        s: np.ndarray, a: np.ndarray, r: np.ndarray, s1: np.ndarray,
    ) -> None:
        """In place, every run: ``Q(s, a) += α_{n(s,a)} (r + γ max_b Q(s', b) − Q(s, a))``, then ``n(s, a) += 1``."""
        target = r + self.g * Q[self.runs, s1].max(-1)
        alpha = _alpha(step_size, n[self.runs, s, a])
        Q[self.runs, s, a] += alpha * (target - Q[self.runs, s, a])
        n[self.runs, s, a] += 1

    def record(self, t: int, Q: np.ndarray, **more: Any) -> None:
        if _record_now(t, self.every, self.steps):
            self.rec.record(t, **_metrics(Q, self.Qs, self.rho), **more)

