r"""Q-learning variants along behaviour trajectories: experience replay, double Q-learning, VA-learning.

All share the trajectory machinery of :mod:`rltheory.algorithms.q_learning`
(host numpy, explicit Generator, traces against the exact ``Q*``):

* with experience replay: ``K`` extra updates from a sliding buffer every ``F``
  environment steps (:func:`q_learning_replay`; Szlak & Shamir 2021);
* double Q-learning, two tables that evaluate each other's greedy action
  (:func:`double_q_learning`; van Hasselt 2010);
* VA-learning: bootstrap a state value ``V`` and an advantage ``A`` directly
  (:func:`va_learning`; Tang et al. 2023).

References
----------
Szlak, L., Shamir, O. (2021). Convergence results for Q-learning with experience replay.
arXiv:2112.04213.
van Hasselt, H. (2010). Double Q-learning. NeurIPS.
Tang, Y., Rowland, M., Munos, R., Valko, M. (2023). VA-learning as a more efficient
alternative to Q-learning. ICML.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..mdp.model import FiniteMDP
from ._q_common import (
    QLearningResult,
    StepSize,
    _alpha,
    _check_diverged,
    _int,
    _metrics,
    _record_now,
    _Runs,
)

__all__ = ["q_learning_replay", "double_q_learning", "va_learning"]


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
    >>> from rltheory.algorithms import linear_step
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
    run = _Runs(
        mdp,
        behavior,
        steps,
        n_runs,
        rng,
        Q_star,
        reward_noise,
        record_every,
        "q_learning_replay",
        step_size,
    )
    Q = run.Q0
    n = np.zeros_like(Q)
    buf_r = np.zeros((run.n_runs, run.steps))
    run.record(0, Q, updates=np.zeros(run.n_runs))
    updates = 0

    for t in range(run.steps):
        s, a, s1 = run.transition(t)
        r = run.reward(t)
        buf_r[:, t] = r
        run.q_update(Q, n, step_size, s, a, r, s1)
        updates += 1
        if K and (t + 1) % F == 0:
            lo = max(0, t + 1 - B)
            for _ in range(K):
                j = run.gen.integers(lo, t + 1, size=run.n_runs)
                run.q_update(
                    Q,
                    n,
                    step_size,
                    run.tr.states[run.runs, j],
                    run.tr.actions[run.runs, j],
                    buf_r[run.runs, j],
                    run.tr.states[run.runs, j + 1],
                )
                updates += 1
        run.record(t + 1, Q, updates=np.full(run.n_runs, float(updates)))
    return QLearningResult(Q=run.out(Q), steps=run.steps, updates=updates, trace=run.rec.finish())


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
    >>> from rltheory.algorithms import linear_step
    >>> from rltheory.mdp import FiniteMDP
    >>> mdp = FiniteMDP(np.ones((1, 2, 1)), np.array([[0.0, 1.0]]), gamma=0.5)
    >>> res = double_q_learning(mdp, steps=6000, step_size=linear_step(), rng=0)
    >>> bool(res.trace["error"][-1, 0] < 0.05)
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
        "double_q_learning",
        step_size,
    )
    QA = run.Q0
    QB = np.zeros_like(QA)
    nA = np.zeros_like(QA)
    nB = np.zeros_like(QA)

    def rec(t: int) -> None:
        if _record_now(t, run.every, run.steps):
            m = _metrics(0.5 * (QA + QB), run.Qs, run.rho, run.c)
            if not np.all(np.isfinite(m["error"])):  # a non-finite table makes it inf or NaN
                _check_diverged(run.what, t, 0.5 * (QA + QB), ("run", "s", "a"))
            m["value_bias"] = _metrics(QA, run.Qs, run.rho, run.c)["value_bias"]
            run.rec.record(t, **m)

    rec(0)
    for t in range(run.steps):
        s, a, s1 = run.transition(t)
        r = run.reward(t)
        pick_a = run.gen.random(run.n_runs) < 0.5
        _double_q_step(QA, QB, nA, nB, (run.runs, s, a, r, s1), pick_a, run.g, step_size)
        rec(t + 1)
    return QLearningResult(
        Q=run.out(0.5 * (QA + QB)),
        steps=run.steps,
        updates=run.steps,
        trace=run.rec.finish(),
        extra={"Q_A": run.out(QA, "Q_A"), "Q_B": run.out(QB, "Q_B")},
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
    *Expected update.* With ``(T Q)(s, a) = r(s, a) + γ Σ_s' P(s'|s, a) max_b Q(s', b)``, a visit
    to ``s`` under the behaviour ``μ`` moves, in expectation over ``a ~ μ(·|s)`` and ``s'``,
    ``V(s)`` by ``α_{n(s)} (Σ_a μ(a|s) (T Q)(s, a) − V(s))`` and ``A(s, a)`` by
    ``μ(a|s) α_{n(s,a)} ((T Q)(s, a) − V(s) − A(s, a))``; nothing else moves (checked by exact
    enumeration in the test-suite). Both vanish exactly when ``V(s) = Σ_a μ(a|s)(T Q)(s, a)`` and
    ``A = T Q − V`` with ``Q = V + A``, i.e. ``Q = T Q = Q*``, ``V = Σ_a μ(a|·) Q*(·, a)``
    and ``A = Q* − V`` (so ``Σ_a μ(a|s) A(s, a) = 0``): for a behaviour with full support the
    unique fixed point gives ``V + A = Q*`` (checked in exact rational arithmetic).
    ``V(s)`` is updated by every action taken in ``s``, so information is shared across
    actions — the source of the sample-efficiency gain reported by Tang et al. (2023).

    *Unit steps.* Taken at every state at once, the update is the operator
    ``(V, A) ↦ (Σ_a μ(a|·)(T Q)(·, a), T Q − V)``; with one action ``Q_{k+1} = 2 T Q_k − T Q_{k−1}``,
    which is not a contraction: on a deterministic 2-cycle the error grows by
    ``γ + √(γ² + γ)`` per sweep, ``> 1`` exactly when ``γ > 1/3`` (Q-learning's unit step there is
    value iteration, error ``× γ``).

    *Relation to the paper.* This is rltheory's reading of the update from the paper's abstract
    (value and advantage bootstrapped without an explicit Q-table, learned off-policy); the
    paper's own update equations and step-size coupling were not available to compare it with,
    equation by equation. The abstract states that VA-learning "enjoys similar theoretical
    guarantees as Q-learning"; the rule here does not (the unit-step operator above, and the
    instabilities below), so treat it as an adaptation, not a transcription of Tang et al. (2023).

    *Stability (derived here; the update is not a convex combination).* A visit moves
    ``Q(s, a) = V(s) + A(s, a)`` by ``α(y − Q(s, a)) + α(y − V(s))``: with ``α = 1`` it sets
    ``Q(s, a) ← 2y − V_old(s)``, and the lag of ``V`` pushes ``Q`` a second time. With one action
    (``A* = 0``) the errors ``q = Q − Q*``, ``v = V − Q*`` of a state with successor ``s'`` follow
    ``q ← (1 − α) q − α v + 2αγ q(s')``, ``v ← (1 − α) v + αγ q(s')``. Two consequences, checked
    by the test-suite:

    * constant steps diverge above a threshold that shrinks with ``1 − γ``: on a deterministic
      2-cycle the map of one round has spectral radius ``> 1`` for ``α > 0.357, 0.190, 0.0396,
      0.0040`` at ``γ = 0.9, 0.95, 0.99, 0.999`` (about ``4(1 − γ)``), where Q-learning converges
      for every ``α ∈ (0, 1]``; a step "below 1/2" is not enough;
    * on a deterministic ``L``-cycle the mean dynamics ``q̇ = −q − v + 2γ q(s')``,
      ``v̇ = −v + γ q(s')`` have the eigenvalues ``λ = −1 + γω ± √(γω(γω − 1))``, ``ω`` an
      ``L``-th root of unity, and ``max Re λ > 0`` for ``L = 10`` at ``γ = 0.99`` (``+0.036``) and
      ``L = 20`` at ``γ = 0.9`` (``+0.058``): there no step-size schedule converges (on the
      20-cycle at ``γ = 0.95`` with ``α = 0.05`` the error grows from 20 to ``~1e2`` in ``2·10⁴``
      steps while Q-learning's falls to 1.6).

    A run whose table stops being finite raises ``ValueError`` naming the step (the first
    recorded one), the run and the entry; a run that grows but stays finite is returned as it is
    (its trace's ``error`` shows the growth).

    Examples
    --------
    >>> import numpy as np
    >>> from rltheory.algorithms import linear_step
    >>> from rltheory.mdp import FiniteMDP
    >>> mdp = FiniteMDP(np.ones((1, 2, 1)), np.array([[0.0, 1.0]]), gamma=0.5)
    >>> res = va_learning(mdp, steps=4000, step_size=linear_step(), rng=0)
    >>> bool(res.trace["error"][-1, 0] < 0.05)
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
        "va_learning",
        step_size,
    )
    V = np.zeros((run.n_runs, run.S))
    Adv = np.zeros((run.n_runs, run.S, run.A))
    nV = np.zeros_like(V)
    nA = np.zeros_like(Adv)
    run.record(0, V[..., None] + Adv)
    # steps near 1 overshoot and can diverge to inf/NaN: refused with a located error at the next
    # record or at the end (_check_diverged), not numpy's overflow warnings
    with np.errstate(over="ignore", invalid="ignore"):
        for t in range(run.steps):
            s, a, s1 = run.transition(t)
            _va_step(V, Adv, nV, nA, (run.runs, s, a, run.reward(t), s1), run.g, step_size)
            run.record(t + 1, V[..., None] + Adv)
    return QLearningResult(
        Q=run.out(V[..., None] + Adv),
        steps=run.steps,
        updates=run.steps,
        trace=run.rec.finish(),
        extra={"V": run.out(V, "V"), "A": run.out(Adv, "A")},
    )


# -- one-step updates (pure functions of the tables, in place; tested against their operators) ----

_Batch = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]
"""``(runs, s, a, r, s')``: one transition per entry; the ``(run, s, a)`` triples must be distinct."""


def _double_q_step(
    QA: np.ndarray,
    QB: np.ndarray,
    nA: np.ndarray,
    nB: np.ndarray,
    batch: _Batch,
    pick_a: np.ndarray,
    g: float,
    step_size: StepSize,
) -> None:
    r"""One double Q-learning update per entry of ``batch``, in place (:func:`double_q_learning`).

    Where ``pick_a``: ``Q_A(s, a) += α_{n_A(s,a)} (r + γ Q_B(s', argmax_b Q_A(s', b)) − Q_A(s, a))``,
    ``n_A(s, a) += 1``; elsewhere the same with ``A ↔ B``. All targets are formed before any entry
    moves, so a batch of distinct pairs is one synchronous sweep.
    """
    runs, s, a, r, s1 = batch
    tA = r + g * QB[runs, s1, QA[runs, s1].argmax(-1)]
    tB = r + g * QA[runs, s1, QB[runs, s1].argmax(-1)]
    for Q, n, tgt, pick in ((QA, nA, tA, pick_a), (QB, nB, tB, ~pick_a)):
        i, si, ai = runs[pick], s[pick], a[pick]
        Q[i, si, ai] += _alpha(step_size, n[i, si, ai]) * (tgt[pick] - Q[i, si, ai])
        n[i, si, ai] += 1


def _va_step(
    V: np.ndarray,
    Adv: np.ndarray,
    nV: np.ndarray,
    nA: np.ndarray,
    batch: _Batch,
    g: float,
    step_size: StepSize,
) -> None:
    r"""One VA-learning update per entry of ``batch``, in place (:func:`va_learning`).

    ``y = r + γ (V(s') + max_b A(s', b))``; ``V(s) += α_{n(s)} (y − V(s))``,
    ``A(s, a) += α_{n(s,a)} (y − V(s) − A(s, a))`` with the ``V(s)`` from before the step; then
    ``n(s) += 1``, ``n(s, a) += 1``. All targets are formed before any entry moves, so a batch of
    distinct states is one synchronous sweep.
    """
    runs, s, a, r, s1 = batch
    y = r + g * (V[runs, s1] + Adv[runs, s1].max(-1))
    v_old = V[runs, s].copy()
    V[runs, s] += _alpha(step_size, nV[runs, s]) * (y - v_old)
    Adv[runs, s, a] += _alpha(step_size, nA[runs, s, a]) * (y - v_old - Adv[runs, s, a])
    nV[runs, s] += 1
    nA[runs, s, a] += 1
