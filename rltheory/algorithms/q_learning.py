r"""Tabular Q-learning and relatives: synchronous, asynchronous, experience replay, double Q, VA-learning, DoMo-VI.

Sample-based learners run on the host (numpy) with an explicit
``numpy.random.Generator``; every trace metric is measured against the exact
``Q*`` of :func:`rltheory.mdp.policy_iteration`.

* Synchronous Q-learning (generative model): at iteration ``t`` draw
  ``s'_{s,a} ~ P(·|s, a)`` for every pair and set
  ``Q_{t+1}(s, a) = (1−α_t) Q_t(s, a) + α_t (r(s, a) + γ max_b Q_t(s'_{s,a}, b))``
  (:func:`synchronous_q_learning`; batched over MDP instances). High-probability
  bound: :func:`rltheory.bounds.q_learning_bound`.
* Asynchronous Q-learning along a behaviour trajectory, step ``α_{n(s,a)}`` with the
  visit count ``n(s, a)`` (Watkins & Dayan 1992; Tsitsiklis 1994) (:func:`q_learning`).
* With experience replay: ``K`` extra updates from a sliding buffer every ``F``
  environment steps (:func:`q_learning_replay`).
* Double Q-learning (van Hasselt 2010) (:func:`double_q_learning`).
* VA-learning: bootstrap a state value ``V`` and an advantage ``A`` directly
  (:func:`va_learning`).
* DoMo-VI: exact doubly multi-step value iteration (:func:`domo_vi`).

References
----------
Watkins, C., Dayan, P. (1992). Q-learning. Machine Learning 8.
Tsitsiklis, J. N. (1994). Asynchronous stochastic approximation and Q-learning. MLJ 16.
van Hasselt, H. (2010). Double Q-learning. NeurIPS.
Li, G., Cai, C., Chen, Y., Wei, Y., Chi, Y. (2024). Is Q-learning minimax optimal? A tight
sample complexity analysis. Operations Research 72(1).
Szlak, L., Shamir, O. (2021). Convergence results for Q-learning with experience replay.
arXiv:2112.04213.
Tang, Y., Rowland, M., Munos, R., Valko, M. (2023). VA-learning as a more efficient
alternative to Q-learning. ICML.
Tang, Y., Kozuno, T., Rowland, M., et al. (2023). DoMo-AC: doubly multi-step off-policy
actor-critic algorithm. ICML.
Munos, R., Stepleton, T., Harutyunyan, A., Bellemare, M. (2016). Safe and efficient
off-policy reinforcement learning (Retrace). NeurIPS.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..backend import require_host
from ..errors import ConvergenceWarning
from ..mdp.bellman import as_stochastic_policy, greedy, q_values
from ..mdp.discounted import policy_iteration
from ..mdp.model import FiniteMDP
from ..mdp.sample import rollout, sample_transitions
from ..trace import Trace, TraceRecorder
from ._policy_opt import discount

__all__ = [
    "constant_step",
    "linear_step",
    "rescaled_linear_step",
    "polynomial_step",
    "QLearningResult",
    "synchronous_q_learning",
    "q_learning",
    "q_learning_replay",
    "double_q_learning",
    "va_learning",
    "DoMoResult",
    "domo_vi",
]

StepSize = Callable[[Any], Any]


# -- step-size schedules ----------------------------------------------------------------


def constant_step(alpha: float) -> StepSize:
    """``α_n = α`` for every count ``n``.

    Examples
    --------
    >>> float(constant_step(0.1)(5))
    0.1
    """
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not 0 < alpha <= 1:
        raise ValueError(f"alpha must lie in (0, 1]; got {alpha!r}")
    a = float(alpha)

    def rule(n: Any) -> Any:
        return a + 0.0 * np.asarray(n, dtype=float)

    return rule


def linear_step() -> StepSize:
    """``α_n = 1/(n + 1)`` (sample averages; Q-learning then converges only like ``n^{-(1−γ)}``, Szepesvári 1997).

    Examples
    --------
    >>> float(linear_step()(3))
    0.25
    """
    return lambda n: 1.0 / (np.asarray(n, dtype=float) + 1.0)


def rescaled_linear_step(gamma: float) -> StepSize:
    """``α_n = 1/(1 + (1−γ) n)`` (Wainwright 2019; the rescaled linear rule of the sharp analyses).

    Examples
    --------
    >>> float(rescaled_linear_step(0.5)(2))
    0.5
    """
    if not (isinstance(gamma, (int, float)) and 0 <= gamma < 1):
        raise ValueError(f"gamma must lie in [0, 1); got {gamma!r}")
    g = float(gamma)
    return lambda n: 1.0 / (1.0 + (1.0 - g) * np.asarray(n, dtype=float))


def polynomial_step(omega: float) -> StepSize:
    """``α_n = 1/(n + 1)^ω``, ``ω ∈ (1/2, 1]`` (Even-Dar & Mansour 2003).

    Examples
    --------
    >>> float(polynomial_step(1.0)(1))
    0.5
    """
    if not (isinstance(omega, (int, float)) and 0.5 < omega <= 1.0):
        raise ValueError(f"omega must lie in (1/2, 1]; got {omega!r}")
    w = float(omega)
    return lambda n: 1.0 / (np.asarray(n, dtype=float) + 1.0) ** w


# -- helpers ---------------------------------------------------------------------------


def _int(x: Any, name: str, minimum: int = 1) -> int:
    if isinstance(x, bool) or not isinstance(x, (int, np.integer)) or x < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}; got {x!r}")
    return int(x)


def _rng(rng: Any) -> np.random.Generator:
    if isinstance(rng, np.random.Generator):
        return rng
    if isinstance(rng, (int, np.integer)) and not isinstance(rng, bool):
        return np.random.default_rng(int(rng))
    raise TypeError(f"rng must be a numpy.random.Generator or an int seed; got {type(rng).__name__}")


def _model(mdp: Any, what: str, single: bool = True) -> tuple[np.ndarray, np.ndarray, float]:
    g = discount(mdp, what, single=single)
    return require_host(mdp.P, what), require_host(mdp.R, what), g


def _q_star(mdp: FiniteMDP, Q_star: Any) -> np.ndarray:
    if Q_star is None:
        return np.asarray(require_host(policy_iteration(mdp).Q, "Q_star"), dtype=float)
    Q_star = np.asarray(Q_star, dtype=float)
    if Q_star.shape != mdp.batch_shape + (mdp.S, mdp.A):
        raise ValueError(f"Q_star must have shape {mdp.batch_shape + (mdp.S, mdp.A)}; got {Q_star.shape}")
    return Q_star


def _noise(x: Any) -> float:
    if isinstance(x, bool) or not isinstance(x, (int, float)) or not (x >= 0 and math.isfinite(x)):
        raise ValueError(f"reward_noise must be a finite number >= 0; got {x!r}")
    return float(x)


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


# -- synchronous ----------------------------------------------------------------------


def synchronous_q_learning(
    mdp: FiniteMDP,
    *,
    iterations: int,
    step_size: StepSize,
    rng: np.random.Generator | int,
    Q0: Any = None,
    Q_star: Any = None,
    reward_noise: float = 0.0,
    record_every: int = 1,
) -> QLearningResult:
    r"""Synchronous Q-learning with a generative model, all instances of a batched model at once.

    ``Q_{t+1}(s, a) = (1−α_t) Q_t(s, a) + α_t (r(s, a) + ξ + γ max_b Q_t(s'_{t,s,a}, b))``,
    ``s'_{t,s,a} ~ P(·|s, a)`` independent, ``ξ ~ N(0, reward_noise²)``.

    Parameters
    ----------
    mdp : FiniteMDP
        Host model, possibly batched.
    iterations : int ≥ 0
        Number of synchronous sweeps ``T`` (``|S||A|`` samples each).
    step_size : callable
        ``t -> α_t`` (e.g. :func:`constant_step`, :func:`rescaled_linear_step`).
    rng : numpy.random.Generator or int
    Q0 : array, optional
        Start (default ``0``).
    Q_star : array, optional
        Exact ``Q*`` (default :func:`rltheory.mdp.policy_iteration`).
    reward_noise : float ≥ 0
        Standard deviation of zero-mean Gaussian reward noise.
    record_every : int ≥ 1

    Returns
    -------
    QLearningResult

    Notes
    -----
    With a constant step ``α`` and rewards ``ξ = 0``, with probability ``≥ 1 − δ``
    for all ``t ≤ T``: ``‖Q_t − Q*‖∞ ≤ (1−α(1−γ))^t ‖Q_0 − Q*‖∞ + γ sp(V*) √(α log(2|S||A|T/δ)/2)/(1−γ)``
    (:func:`rltheory.bounds.q_learning_bound`, derived there). Li et al. (2024, Thm 1)
    show ``Õ(|S||A|/((1−γ)^4 ε²))`` samples suffice and are necessary for Q-learning.

    Examples
    --------
    >>> import numpy as np
    >>> from rltheory.mdp import FiniteMDP
    >>> mdp = FiniteMDP(np.ones((1, 2, 1)), np.array([[0.0, 1.0]]), gamma=0.5)
    >>> res = synchronous_q_learning(mdp, iterations=60, step_size=constant_step(1.0), rng=0)
    >>> np.round(res.Q, 6).tolist()   # deterministic model: Q-learning with alpha = 1 is value iteration
    [[1.0, 2.0]]
    """
    P, R, g = _model(mdp, "synchronous_q_learning", single=False)
    iterations = _int(iterations, "iterations", 0)
    record_every = _int(record_every, "record_every")
    noise = _noise(reward_noise)
    gen = _rng(rng)
    Qs = _q_star(mdp, Q_star)
    rho = np.broadcast_to(require_host(mdp.initial_distribution(), "rho"), Qs.shape[:-1])
    shape = mdp.batch_shape + (mdp.S, mdp.A)
    Q = np.zeros(shape) if Q0 is None else np.broadcast_to(np.asarray(Q0, float), shape).copy()
    rec = TraceRecorder()
    rec.record(0, **_metrics(Q, Qs, rho))
    for t in range(iterations):
        nxt = np.argmax(sample_transitions(mdp, 1, gen), axis=-1)  # (..., S, A)
        V = Q.max(-1)
        target = R + g * np.take_along_axis(V, nxt.reshape(V.shape[:-1] + (-1,)), axis=-1).reshape(shape)
        if noise:
            target = target + noise * gen.standard_normal(shape)
        a = float(step_size(t))
        Q = (1.0 - a) * Q + a * target
        if _record_now(t + 1, record_every, iterations):
            rec.record(t + 1, **_metrics(Q, Qs, rho))
    return QLearningResult(Q=Q, steps=iterations, updates=iterations, trace=rec.finish())


# -- trajectory-based ------------------------------------------------------------------


def _behaviour(mdp: FiniteMDP, behavior: Any) -> np.ndarray:
    if behavior is None:
        return np.full((mdp.S, mdp.A), 1.0 / mdp.A)
    b = np.asarray(require_host(as_stochastic_policy(mdp, behavior), "behavior"), float)
    if b.shape != (mdp.S, mdp.A):
        raise ValueError(f"behavior must be one policy of shape ({mdp.S}, {mdp.A}); got {b.shape}")
    return b


class _Runs:
    """Shared state of trajectory-based learners: trajectories, counts, noise, recording."""

    def __init__(self, mdp, behavior, steps, n_runs, rng, Q_star, reward_noise, record_every, what):
        self.P, self.R, self.g = _model(mdp, what)
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

    def record(self, t: int, Q: np.ndarray, **more: Any) -> None:
        if _record_now(t, self.every, self.steps):
            self.rec.record(t, **_metrics(Q, self.Qs, self.rho), **more)


def q_learning(
    mdp: FiniteMDP,
    *,
    steps: int,
    step_size: StepSize,
    rng: np.random.Generator | int,
    behavior: Any = None,
    n_runs: int = 1,
    Q0: Any = None,
    Q_star: Any = None,
    reward_noise: float = 0.0,
    record_every: int = 1,
) -> QLearningResult:
    r"""Asynchronous (off-policy) Q-learning along ``n_runs`` behaviour trajectories.

    At step ``t`` with transition ``(s, a, r, s')`` of the behaviour policy:
    ``n(s, a) += 1``, ``Q(s, a) += α_{n(s,a)−1} (r + γ max_b Q(s', b) − Q(s, a))``.

    Parameters
    ----------
    steps : int ≥ 1
        Environment transitions per run.
    step_size : callable
        ``n -> α_n`` applied to the visit count (vectorised over runs).
    behavior : array (S, A), optional
        Fixed exploratory behaviour policy (uniform by default).
    n_runs : int ≥ 1
        Independent runs, updated together.
    Q0, Q_star, reward_noise, record_every
        As in :func:`synchronous_q_learning`.

    Returns
    -------
    QLearningResult
        ``Q`` of shape ``(n_runs, S, A)``.

    Notes
    -----
    Converges to ``Q*`` w.p. 1 when every pair is visited infinitely often and
    ``Σ_n α_n = ∞``, ``Σ_n α_n² < ∞`` (Watkins & Dayan 1992; Tsitsiklis 1994, Thm 4).

    Examples
    --------
    >>> import numpy as np
    >>> from rltheory.mdp import FiniteMDP
    >>> mdp = FiniteMDP(np.ones((1, 2, 1)), np.array([[0.0, 1.0]]), gamma=0.5)
    >>> res = q_learning(mdp, steps=4000, step_size=rescaled_linear_step(0.5), rng=0)
    >>> bool(res.trace["error"][-1, 0] < 0.01)
    True
    """
    run = _Runs(mdp, behavior, steps, n_runs, rng, Q_star, reward_noise, record_every, "q_learning")
    Q = np.zeros((run.n_runs, run.S, run.A)) if Q0 is None else np.broadcast_to(
        np.asarray(Q0, float), (run.n_runs, run.S, run.A)).copy()
    n = np.zeros((run.n_runs, run.S, run.A))
    run.record(0, Q)
    for t in range(run.steps):
        s, a, s1 = run.tr.states[:, t], run.tr.actions[:, t], run.tr.states[:, t + 1]
        target = run.reward(t) + run.g * Q[run.runs, s1].max(-1)
        alpha = step_size(n[run.runs, s, a])
        Q[run.runs, s, a] += alpha * (target - Q[run.runs, s, a])
        n[run.runs, s, a] += 1
        run.record(t + 1, Q)
    return QLearningResult(Q=Q, steps=run.steps, updates=run.steps, trace=run.rec.finish())


def q_learning_replay(
    mdp: FiniteMDP,
    *,
    steps: int,
    step_size: StepSize,
    rng: np.random.Generator | int,
    replay_every: int,
    replay_updates: int,
    buffer_size: int,
    behavior: Any = None,
    n_runs: int = 1,
    Q_star: Any = None,
    reward_noise: float = 0.0,
    record_every: int = 1,
) -> QLearningResult:
    r"""Q-learning with experience replay: ``K`` buffer updates every ``F`` environment steps.

    Every step performs the online update of :func:`q_learning` and appends
    ``(s, a, r, s')`` to a sliding buffer of the last ``buffer_size`` transitions;
    after every ``F``-th step, ``K`` transitions are drawn uniformly (with
    replacement) from the buffer and each gets the same Q-learning update. Step
    sizes use the per-pair update count (online and replayed updates both count).

    Parameters
    ----------
    replay_every : int ≥ 1
        ``F``.
    replay_updates : int ≥ 0
        ``K`` (0 is plain Q-learning).
    buffer_size : int ≥ 1
    other parameters
        As in :func:`q_learning`.

    Returns
    -------
    QLearningResult
        ``updates = steps + K·⌊steps/F⌋`` per run.

    Notes
    -----
    Replayed transitions are genuine samples of ``P(·|s, a)``, so the scheme is a
    stochastic approximation of the same fixed point ``Q*``; Szlak & Shamir (2021)
    bound its rate in terms of ``F`` and ``K`` and show a class of MDPs where replay
    strictly helps. Their theorem's constants are not transcribed here; the
    reproduction ``q-replay`` measures the effect against the exact ``Q*``.

    Examples
    --------
    >>> import numpy as np
    >>> from rltheory.mdp import FiniteMDP
    >>> mdp = FiniteMDP(np.ones((1, 2, 1)), np.array([[0.0, 1.0]]), gamma=0.5)
    >>> res = q_learning_replay(mdp, steps=200, step_size=linear_step(), rng=0,
    ...                         replay_every=1, replay_updates=4, buffer_size=50)
    >>> res.updates
    1000
    """
    F = _int(replay_every, "replay_every")
    K = _int(replay_updates, "replay_updates", 0)
    B = _int(buffer_size, "buffer_size")
    run = _Runs(mdp, behavior, steps, n_runs, rng, Q_star, reward_noise, record_every, "q_learning_replay")
    Q = np.zeros((run.n_runs, run.S, run.A))
    n = np.zeros_like(Q)
    buf_r = np.zeros((run.n_runs, run.steps))
    run.record(0, Q, updates=np.zeros(run.n_runs))
    updates = 0

    def update(s: np.ndarray, a: np.ndarray, r: np.ndarray, s1: np.ndarray) -> None:
        target = r + run.g * Q[run.runs, s1].max(-1)
        alpha = step_size(n[run.runs, s, a])
        Q[run.runs, s, a] += alpha * (target - Q[run.runs, s, a])
        n[run.runs, s, a] += 1

    for t in range(run.steps):
        s, a, s1 = run.tr.states[:, t], run.tr.actions[:, t], run.tr.states[:, t + 1]
        r = run.reward(t)
        buf_r[:, t] = r
        update(s, a, r, s1)
        updates += 1
        if K and (t + 1) % F == 0:
            lo = max(0, t + 1 - B)
            for _ in range(K):
                j = run.gen.integers(lo, t + 1, size=run.n_runs)
                update(run.tr.states[run.runs, j], run.tr.actions[run.runs, j], buf_r[run.runs, j],
                       run.tr.states[run.runs, j + 1])
                updates += 1
        run.record(t + 1, Q, updates=np.full(run.n_runs, float(updates)))
    return QLearningResult(Q=Q, steps=run.steps, updates=updates, trace=run.rec.finish())


def double_q_learning(
    mdp: FiniteMDP,
    *,
    steps: int,
    step_size: StepSize,
    rng: np.random.Generator | int,
    behavior: Any = None,
    n_runs: int = 1,
    Q_star: Any = None,
    reward_noise: float = 0.0,
    record_every: int = 1,
) -> QLearningResult:
    r"""Double Q-learning (van Hasselt 2010): two tables, each evaluated at the other's argmax.

    With probability 1/2 (independently per step and run):
    ``Q_A(s, a) += α (r + γ Q_B(s', argmax_b Q_A(s', b)) − Q_A(s, a))``, else the same
    with ``A ↔ B``. Counts and step sizes are per table.

    Returns
    -------
    QLearningResult
        ``Q = (Q_A + Q_B)/2``; ``extra = {"Q_A": ..., "Q_B": ...}``; the trace's
        ``value_bias`` is measured on ``Q_A`` (the table whose greedy value is reported).

    Notes
    -----
    The single estimator ``max_a Q̂(s, a)`` of ``max_a Q(s, a)`` is biased upwards
    (``E max ≥ max E``); the double estimator ``Q_B(s, argmax Q_A)`` is biased
    downwards (van Hasselt 2010, Lemma 1 and Thm 1). Converges to ``Q*`` w.p. 1 under
    the conditions of Q-learning (van Hasselt 2010, Thm 1).

    Examples
    --------
    >>> import numpy as np
    >>> from rltheory.mdp import FiniteMDP
    >>> mdp = FiniteMDP(np.ones((1, 2, 1)), np.array([[0.0, 1.0]]), gamma=0.5)
    >>> res = double_q_learning(mdp, steps=6000, step_size=linear_step(), rng=0)
    >>> bool(res.trace["error"][-1, 0] < 0.05)
    True
    """
    run = _Runs(mdp, behavior, steps, n_runs, rng, Q_star, reward_noise, record_every, "double_q_learning")
    QA = np.zeros((run.n_runs, run.S, run.A))
    QB = np.zeros_like(QA)
    nA = np.zeros_like(QA)
    nB = np.zeros_like(QA)

    def rec(t: int) -> None:
        if _record_now(t, run.every, run.steps):
            m = _metrics(0.5 * (QA + QB), run.Qs, run.rho)
            m["value_bias"] = _metrics(QA, run.Qs, run.rho)["value_bias"]
            run.rec.record(t, **m)

    rec(0)
    for t in range(run.steps):
        s, a, s1 = run.tr.states[:, t], run.tr.actions[:, t], run.tr.states[:, t + 1]
        r = run.reward(t)
        pick_a = run.gen.random(run.n_runs) < 0.5
        amaxA = QA[run.runs, s1].argmax(-1)
        amaxB = QB[run.runs, s1].argmax(-1)
        tA = r + run.g * QB[run.runs, s1, amaxA]
        tB = r + run.g * QA[run.runs, s1, amaxB]
        iA, iB = run.runs[pick_a], run.runs[~pick_a]
        QA[iA, s[iA], a[iA]] += step_size(nA[iA, s[iA], a[iA]]) * (tA[iA] - QA[iA, s[iA], a[iA]])
        nA[iA, s[iA], a[iA]] += 1
        QB[iB, s[iB], a[iB]] += step_size(nB[iB, s[iB], a[iB]]) * (tB[iB] - QB[iB, s[iB], a[iB]])
        nB[iB, s[iB], a[iB]] += 1
        rec(t + 1)
    return QLearningResult(
        Q=0.5 * (QA + QB), steps=run.steps, updates=run.steps, trace=run.rec.finish(), extra={"Q_A": QA, "Q_B": QB}
    )


def va_learning(
    mdp: FiniteMDP,
    *,
    steps: int,
    step_size: StepSize,
    rng: np.random.Generator | int,
    behavior: Any = None,
    n_runs: int = 1,
    Q_star: Any = None,
    reward_noise: float = 0.0,
    record_every: int = 1,
) -> QLearningResult:
    r"""Tabular VA-learning: learn a state value ``V`` and an advantage ``A`` by bootstrapping.

    For a behaviour transition ``(s, a, r, s')`` with target
    ``y = r + γ (V(s') + max_b A(s', b))``:

    ``V(s) += α_{n(s)} (y − V(s))``,   ``A(s, a) += α_{n(s,a)} (y − V(s) − A(s, a))``,

    with visit counts ``n(s)``, ``n(s, a)``; the Q-estimate is ``Q = V + A``.

    Returns
    -------
    QLearningResult
        ``Q = V + A``; ``extra = {"V": ..., "A": ...}``.

    Notes
    -----
    Expected updates vanish exactly when ``V(s) = Σ_a μ(a|s)(T Q)(s, a)`` and
    ``A = T Q − V`` with ``Q = V + A``, i.e. ``Q = T Q = Q*``, ``V = Σ_a μ(a|·) Q*(·, a)``
    and ``A = Q* − V``: the unique fixed point gives ``V + A = Q*`` (checked by the
    test-suite). ``V(s)`` is updated by every action taken in ``s``, so information
    is shared across actions — the source of the sample-efficiency gain reported by
    Tang et al. (2023, §3–4). This is the tabular update as read from that paper's
    description (value and advantage bootstrapped without an explicit Q-table);
    its exact step-size coupling could not be checked against the paper's text.
    Steps must stay below about 1/2: with ``α = 1`` a visit sets
    ``Q(s, a) ← 2y − V_old(s)`` (the two updates overshoot together), and schedules
    starting at ``α_0 = 1`` can diverge for γ close to 1.

    Examples
    --------
    >>> import numpy as np
    >>> from rltheory.mdp import FiniteMDP
    >>> mdp = FiniteMDP(np.ones((1, 2, 1)), np.array([[0.0, 1.0]]), gamma=0.5)
    >>> res = va_learning(mdp, steps=4000, step_size=linear_step(), rng=0)
    >>> bool(res.trace["error"][-1, 0] < 0.05)
    True
    """
    run = _Runs(mdp, behavior, steps, n_runs, rng, Q_star, reward_noise, record_every, "va_learning")
    V = np.zeros((run.n_runs, run.S))
    Adv = np.zeros((run.n_runs, run.S, run.A))
    nV = np.zeros_like(V)
    nA = np.zeros_like(Adv)
    run.record(0, V[..., None] + Adv)
    for t in range(run.steps):
        s, a, s1 = run.tr.states[:, t], run.tr.actions[:, t], run.tr.states[:, t + 1]
        y = run.reward(t) + run.g * (V[run.runs, s1] + Adv[run.runs, s1].max(-1))
        v_old = V[run.runs, s].copy()
        V[run.runs, s] += step_size(nV[run.runs, s]) * (y - v_old)
        Adv[run.runs, s, a] += step_size(nA[run.runs, s, a]) * (y - v_old - Adv[run.runs, s, a])
        nV[run.runs, s] += 1
        nA[run.runs, s, a] += 1
        run.record(t + 1, V[..., None] + Adv)
    return QLearningResult(
        Q=V[..., None] + Adv, steps=run.steps, updates=run.steps, trace=run.rec.finish(), extra={"V": V, "A": Adv}
    )


# -- DoMo-VI (exact) -------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class DoMoResult:
    """Result of :func:`domo_vi`.

    Attributes
    ----------
    Q : numpy.ndarray (..., S, A)
    policy : numpy.ndarray of int (..., S)
        Last greedy (improvement) policy.
    iterations : int
    converged : bool
    trace : Trace
        ``error`` = ``‖Q* − Q_k‖∞`` and ``bound`` = ``γ^{nk} ‖Q* − Q_0‖∞`` per instance.
    """

    Q: np.ndarray
    policy: np.ndarray
    iterations: int
    converged: bool
    trace: Trace


def _retrace(P: np.ndarray, R: np.ndarray, g: float, mu: np.ndarray, pi_det: np.ndarray, lam: float, Q: np.ndarray):
    """Exact Retrace(λ) operator ``R Q = Q + (I − γ P C)^{-1}(T^π Q − Q)`` for a deterministic ``π``."""
    S, A = R.shape[-2:]
    onehot = np.eye(A)[pi_det]  # (..., S, A)
    c = lam * onehot  # c = λ min(1, π/μ) vanishes off π and equals λ on it (μ ≤ 1)
    TpiQ = R + g * (P * (onehot * Q).sum(-1)[..., None, None, :]).sum(-1)
    # (P C)((s,a),(t,b)) = P(t|s,a) μ(b|t) c(t,b)
    PC = P[..., :, :, :, None] * (mu * c)[..., None, None, :, :]
    M = np.eye(S * A) - g * PC.reshape(P.shape[:-3] + (S * A, S * A))
    delta = (TpiQ - Q).reshape(P.shape[:-3] + (S * A, 1))
    return Q + np.linalg.solve(M, delta).reshape(Q.shape)


def domo_vi(
    mdp: FiniteMDP,
    *,
    behavior: Any = None,
    n_improve: int = 1,
    m_eval: int = 1,
    lam: float = 1.0,
    iterations: int = 100,
    tol: float = 1e-10,
    Q0: Any = None,
    Q_star: Any = None,
) -> DoMoResult:
    r"""DoMo-VI: ``n``-step policy improvement and ``m``-step off-policy (Retrace) evaluation, exactly.

    ``W_k = T^{n−1} Q_k``, ``π_{k+1} = greedy(W_k)``, ``Q_{k+1} = (R_{π_{k+1}})^m W_k`` with the
    Retrace(λ) operator for behaviour ``μ``,
    ``R_π Q = Q + (I − γ P C_π)^{-1}(T^π Q − Q)``, ``c(s, a) = λ min(1, π(a|s)/μ(a|s))``.

    Parameters
    ----------
    mdp : FiniteMDP
        Host model, possibly batched.
    behavior : array (S, A), optional
        Behaviour policy ``μ`` of the off-policy evaluation (uniform by default).
    n_improve : int ≥ 1
        Lookahead depth ``n`` of the improvement (1: greedy on ``Q_k``).
    m_eval : int ≥ 1
        Retrace applications per iteration.
    lam : float in [0, 1]
        Trace parameter (0: ``R_π = T^π``, one-step evaluation).
    iterations : int ≥ 0
        Cap.
    tol : float > 0
        Stops when ``‖Q_{k+1} − Q_k‖∞ ≤ tol``.
    Q0 : array, optional
        Start; default ``min(r)/(1−γ)``, which satisfies ``T Q_0 ≥ Q_0``.
    Q_star : array, optional

    Returns
    -------
    DoMoResult

    Notes
    -----
    Guarantee (derived here): if ``T Q_0 ≥ Q_0`` then for all ``k``
    ``T^n Q_k ≤ Q_{k+1} ≤ Q*`` and ``T Q_{k+1} ≥ Q_{k+1}``, hence
    ``‖Q* − Q_k‖∞ ≤ γ^{nk} ‖Q* − Q_0‖∞`` — a ``γ^n`` speed-up over value iteration.
    Proof: with ``π`` greedy for ``W = T^{n−1}Q_k ≥ Q_k``, ``T^π W = T W ≥ W``. ``R_π`` is
    monotone (``R_π Q = (I − γPC)^{-1}(r + γP(π − μc)Q)``, ``π − μc ≥ 0``) with fixed
    point ``Q^π ≥ W``, and ``R_π Q − Q = (I−γPC)^{-1}(T^πQ − Q) ≥ T^πQ − Q ≥ 0``, so
    ``T^n Q_k = T^π W ≤ R_π^m W ≤ Q^π ≤ Q*``; finally
    ``T^π(R_πQ) − R_πQ = γP(π − μc)(R_πQ − Q) ≥ 0`` keeps ``T Q_{k+1} ≥ Q_{k+1}``.
    Retrace is a γ-contraction towards ``Q^π`` for any ``μ`` (Munos et al. 2016, Thm 1).
    With ``n = m = 1`` and ``λ = 0`` this is value iteration on ``Q``. The
    algorithm's multi-step structure follows Tang et al. (2023); the bound is the one
    proved above (the paper's own constant was not available to transcribe).

    Examples
    --------
    >>> import numpy as np
    >>> from rltheory.mdp import FiniteMDP
    >>> mdp = FiniteMDP(np.ones((1, 2, 1)), np.array([[0.0, 1.0]]), gamma=0.5)
    >>> res = domo_vi(mdp, n_improve=2, m_eval=1, lam=1.0)
    >>> np.round(res.Q, 9).tolist(), res.converged
    ([[1.0, 2.0]], True)
    """
    P, R, g = _model(mdp, "domo_vi", single=False)
    n_improve = _int(n_improve, "n_improve")
    m_eval = _int(m_eval, "m_eval")
    iterations = _int(iterations, "iterations", 0)
    if isinstance(lam, bool) or not isinstance(lam, (int, float)) or not 0 <= lam <= 1:
        raise ValueError(f"lam must lie in [0, 1]; got {lam!r}")
    if not (isinstance(tol, (int, float)) and tol > 0):
        raise ValueError(f"tol must be > 0; got {tol!r}")
    mu = _behaviour(mdp, behavior)
    Qs = _q_star(mdp, Q_star)
    shape = mdp.batch_shape + (mdp.S, mdp.A)
    if Q0 is None:
        Q = np.broadcast_to(R.min(axis=(-2, -1))[..., None, None] / (1.0 - g), shape).copy()
    else:
        Q = np.broadcast_to(np.asarray(Q0, float), shape).copy()
    err0 = np.abs(Qs - Q).max(axis=(-2, -1))
    rec = TraceRecorder()
    rec.record(0, error=err0, bound=err0)
    pi = np.argmax(Q, axis=-1)
    converged = False
    k = 0
    for k in range(1, iterations + 1):
        W = Q
        for _ in range(n_improve - 1):  # W = T^{n-1} Q_k
            W = np.asarray(q_values(mdp, W.max(-1)))
        pi = np.asarray(greedy(W))
        new = W
        for _ in range(m_eval):
            new = _retrace(P, R, g, mu, pi, float(lam), new)
        step = float(np.abs(new - Q).max())
        Q = new
        rec.record(k, error=np.abs(Qs - Q).max(axis=(-2, -1)), bound=g ** (n_improve * k) * err0)
        if step <= tol:
            converged = True
            break
    if not converged and iterations > 0:
        warnings.warn(f"domo_vi reached iterations={iterations} before ‖Q_k+1 − Q_k‖∞ <= {tol:g}",
                      ConvergenceWarning, stacklevel=2)
    return DoMoResult(Q=Q, policy=pi, iterations=k, converged=converged, trace=rec.finish())
