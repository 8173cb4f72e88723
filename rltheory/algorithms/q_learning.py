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
  environment steps (:func:`q_learning_replay`), double Q-learning (van Hasselt
  2010) (:func:`double_q_learning`) and VA-learning (:func:`va_learning`) live in
  :mod:`rltheory.algorithms.q_variants`; DoMo-VI, exact doubly multi-step value
  iteration (:func:`domo_vi`), in :mod:`rltheory.algorithms.domo`. All are
  re-exported here.

Every learner is positively homogeneous in the rewards, ``Q0`` and the reward noise for fixed random
draws; where ``max(|r|, |Q0|, σ)/(1−γ) > 2^1000`` it runs on these scaled by a power of two and
scales its tables and trace back (exact), so that tables near the float range do not overflow in
``target − Q`` (a NaN or ``inf`` table where ``Q*`` is finite). Elsewhere it computes the same bits.
A returned table (``Q`` and the tables in ``extra``) beyond the float range (rewards ``1e308`` at
``γ = 0.9`` with a finite ``Q_star`` given) raises the located ``ValueError`` of the exact solvers
(:func:`rltheory.mdp.bellman._check_in_range`), and iterates that diverge (VA-learning with steps
near 1) a ``ValueError`` naming the step, the run and the entry; both used to come back as ``inf``
or NaN tables with numpy's overflow warnings only.

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

from typing import Any

import numpy as np

from .._validate import real_scalar
from ..backend import require_host
from ..mdp.model import FiniteMDP
from ..mdp.sample import sample_transitions
from ..trace import TraceRecorder
from ._q_common import (
    QLearningResult,
    StepSize,
    _alpha,
    _factory,
    _int,
    _metrics,
    _model,
    _noise,
    _q0,
    _q_star,
    _record_now,
    _rng,
    _Runs,
    _scale,
    _schedule,
    _table_out,
)
from .domo import DoMoResult, domo_vi
from .q_variants import double_q_learning, q_learning_replay, va_learning

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


# -- step-size schedules ----------------------------------------------------------------


@_factory("constant_step(0.1)")
def constant_step(alpha: float) -> StepSize:
    """``α_n = α`` for every count ``n``.

    Examples
    --------
    >>> float(constant_step(0.1)(5))
    0.1
    """
    a = real_scalar(alpha)  # Python or numpy real; NaN for anything else (fails the range)
    if not 0 < a <= 1:
        raise ValueError(f"alpha must lie in (0, 1]; got {alpha!r}")

    def rule(n: Any) -> Any:
        return a + 0.0 * np.asarray(n, dtype=float)

    return rule


@_factory("linear_step()")
def linear_step() -> StepSize:
    """``α_n = 1/(n + 1)`` (sample averages; Q-learning then converges only like ``n^{-(1−γ)}``, Szepesvári 1997).

    Examples
    --------
    >>> float(linear_step()(3))
    0.25
    """
    return lambda n: 1.0 / (np.asarray(n, dtype=float) + 1.0)


@_factory("rescaled_linear_step(gamma)")
def rescaled_linear_step(gamma: float, *, alpha0: float = 1.0) -> StepSize:
    """``α_n = 1/(1/α₀ + (1−γ) n)`` (Wainwright 2019; the rescaled linear rule of the sharp analyses).

    With the default ``α₀ = 1`` this is ``1/(1 + (1−γ) n)``. A smaller ``α₀`` starts
    the schedule at ``α₀`` and keeps its ``1/((1−γ) n)`` tail: for updates that are
    unstable at steps near 1 (:func:`rltheory.algorithms.va_learning` moves ``Q(s, a)``
    by its ``V`` and its ``A`` update at once).

    Examples
    --------
    >>> float(rescaled_linear_step(0.5)(2))
    0.5
    >>> rule = rescaled_linear_step(0.5, alpha0=0.1)
    >>> float(rule(0)), float(rule(20))
    (0.1, 0.05)
    """
    g, a0 = real_scalar(gamma), real_scalar(alpha0)
    if not 0 <= g < 1:
        raise ValueError(f"gamma must lie in [0, 1); got {gamma!r}")
    if not 0 < a0 <= 1:
        raise ValueError(f"alpha0 must lie in (0, 1]; got {alpha0!r}")
    c = 1.0 / a0
    return lambda n: 1.0 / (c + (1.0 - g) * np.asarray(n, dtype=float))


@_factory("polynomial_step(0.8)")
def polynomial_step(omega: float) -> StepSize:
    """``α_n = 1/(n + 1)^ω``, ``ω ∈ (1/2, 1]`` (Even-Dar & Mansour 2003).

    Examples
    --------
    >>> float(polynomial_step(1.0)(1))
    0.5
    """
    w = real_scalar(omega)
    if not 0.5 < w <= 1.0:
        raise ValueError(f"omega must lie in (1/2, 1]; got {omega!r}")
    return lambda n: 1.0 / (np.asarray(n, dtype=float) + 1.0) ** w


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
        ``t -> α_t`` (e.g. :func:`constant_step`, :func:`rescaled_linear_step`); every ``α_t``
        must lie in ``[0, 1]`` (``ValueError`` naming ``t`` and the value otherwise, NaN included).
    rng : numpy.random.Generator or int
    Q0 : array, optional
        Start (default ``0``).
    Q_star : array, optional
        Exact ``Q*`` (default :func:`rltheory.mdp.policy_iteration` on the model sampled: for a
        float32 model its float64 row-normalised copy).
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
    step_size = _schedule(step_size)
    iterations = _int(iterations, "iterations", 0)
    record_every = _int(record_every, "record_every")
    noise = _noise(reward_noise)
    gen = _rng(rng)
    Qs = _q_star(mdp, Q_star)
    rho = np.broadcast_to(require_host(mdp.initial_distribution(), "rho"), Qs.shape[:-1])
    shape = mdp.batch_shape + (mdp.S, mdp.A)
    Q = np.zeros(shape) if Q0 is None else _q0(mdp, Q0, shape)
    c = _scale(g, R, Q, noise)  # run on c·(r, Q0, σ), exactly; c = 1 unless near the float range
    noisy = noise > 0  # before scaling: a σ that underflows still draws (same stream)
    # float32 r is cast first: no underflow
    R, Q, Qs, noise = np.asarray(R, dtype=np.float64) * c, Q * c, Qs * c, noise * c
    rec = TraceRecorder()
    rec.record(0, **_metrics(Q, Qs, rho, c))
    for t in range(iterations):
        nxt = np.argmax(sample_transitions(mdp, 1, gen), axis=-1)  # (..., S, A)
        V = Q.max(-1)
        Vnext = np.take_along_axis(V, nxt.reshape(V.shape[:-1] + (-1,)), axis=-1)
        target = R + g * Vnext.reshape(shape)
        if noisy:
            target = target + noise * gen.standard_normal(shape)
        a = float(_alpha(step_size, t))
        Q = (1.0 - a) * Q + a * target
        if _record_now(t + 1, record_every, iterations):
            rec.record(t + 1, **_metrics(Q, Qs, rho, c))
    # a table beyond the float range (rewards 1e308 at γ = 0.9 with a finite Q_star given) was returned
    # as inf with numpy's overflow warning only: the located error of the exact solvers
    Q = _table_out(mdp, Q, c, g, "synchronous_q_learning", iterations, "Q", ("s", "a"))
    return QLearningResult(Q=Q, steps=iterations, updates=iterations, trace=rec.finish())


# -- trajectory-based ------------------------------------------------------------------


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
        ``n -> α_n`` applied to the visit count (vectorised over runs); steps must lie in
        ``[0, 1]`` (``ValueError`` naming the count and the value otherwise, NaN included).
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
    run = _Runs(
        mdp,
        behavior,
        steps,
        n_runs,
        rng,
        Q_star,
        reward_noise,
        record_every,
        "q_learning",
        step_size,
        Q0,
    )
    Q = run.Q0
    n = np.zeros((run.n_runs, run.S, run.A))
    run.record(0, Q)
    for t in range(run.steps):
        s, a, s1 = run.transition(t)
        run.q_update(Q, n, step_size, s, a, run.reward(t), s1)
        run.record(t + 1, Q)
    return QLearningResult(Q=run.out(Q), steps=run.steps, updates=run.steps, trace=run.rec.finish())
