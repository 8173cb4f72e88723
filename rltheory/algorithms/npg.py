r"""Exact natural policy gradient, batched over MDP instances.

* NPG, tabular softmax closed form ``π_{t+1}(a|s) ∝ π_t(a|s) exp(η A^{π_t}(s, a)/(1−γ))``
  (:func:`npg_step`, :func:`natural_policy_gradient`); from uniform ``π_0``
  ``V*(ρ) − V^{π_T}(ρ) ≤ log|A|/(ηT) + 1/((1−γ)^2 T)`` for every ``ρ``
  (Agarwal et al. 2021, Thm 16).
* Entropy-regularised NPG (Cen et al. 2022): :mod:`rltheory.algorithms.regularized_npg`,
  re-exported here (:func:`entropy_npg_step`, :func:`entropy_regularized_npg`).

The driver checks its inputs once and then runs unchecked kernels. It evaluates each
iterate with the certified warm-started evaluator of
:mod:`rltheory.algorithms._warm_eval` (extrapolated start, Richardson steps
preconditioned by a stored inverse, LU solves only where needed; on a host the batch
runs in cache-sized chunks). On a host, once most rows ``(s, a)`` have ``log π(a|s) < −50``,
the arrays keep only the live rows (:mod:`rltheory.algorithms._live_rows`: dead logits in
closed form, their share of the residual in the certificate). Re-exported by
:mod:`rltheory.algorithms.policy_gradient`; the bounds are in
:mod:`rltheory.bounds.policy_optimization`.

References
----------
Kakade, S. (2001). A natural policy gradient. NeurIPS.
Agarwal, A., Kakade, S. M., Lee, J. D., Mahajan, G. (2021). On the theory of policy
gradient methods: optimality, approximation, and distribution shift. JMLR 22(98).
"""

from __future__ import annotations

import math
import time
import warnings
from typing import Any

import numpy as np

from ..backend import device_clock, is_host, is_numpy, to_numpy
from ..errors import ConvergenceWarning
from ..mdp.bellman import advantage, as_stochastic_policy
from ..mdp.model import FiniteMDP
from ..trace import Trace, stack_rows
from ._live_rows import SWITCH, LiveRows, live_counts
from ._policy_opt import (
    PolicyOptimizationResult,
    check_iterations,
    check_positive,
    discount,
    gap_metrics,
    logit_step,
    multiplicative_update,
    prepare_certified,
    safe_log,
    softmax_sum_defect,
    underflow_error,
    warn_at_cap,
    weighting_error,
)
from ._warm_eval import WarmEvaluator, action_major, compact
from .regularized_npg import entropy_npg_step, entropy_regularized_npg

__all__ = ["npg_step", "entropy_npg_step", "natural_policy_gradient", "entropy_regularized_npg"]


def npg_step(mdp: FiniteMDP, pi: Any, *, eta: float) -> Any:
    r"""One natural policy gradient step: ``π'(a|s) ∝ π(a|s) exp(η A^π(s, a)/(1−γ))``.

    Parameters
    ----------
    mdp : FiniteMDP
        Discounted model, possibly batched.
    pi : array, shape (..., S, A)
        Current stochastic policy (zeros stay zero).
    eta : float > 0
        Step size.

    Returns
    -------
    array, shape of ``pi``
        The next policy.

    Raises
    ------
    ValueError
        ``eta ≤ 0`` or not finite, ``η/(1−γ)`` beyond the largest number of the model's dtype,
        ``pi`` not a policy of the model's shape.

    Notes
    -----
    For the tabular softmax parameterisation the Fisher-preconditioned step
    ``θ ← θ + η F(θ)^† ∇V^{π_θ}(ρ)`` equals ``θ ← θ + η A^{π_θ}/(1−γ)`` up to a
    per-state constant, independent of ``ρ`` (Agarwal et al. 2021, §5.3). Every
    step improves every state: ``V^{π'}(s) ≥ V^π(s)`` (the improvement lemma in
    the proof of their Thm 16). It is also policy mirror descent with the KL
    proximity and step ``η/(1−γ)`` on ``Q^π`` (Xiao 2022, §4).

    References
    ----------
    Kakade (2001); Agarwal et al. (2021), §5.3 and Theorem 16.

    Examples
    --------
    >>> import numpy as np
    >>> from rltheory.mdp import FiniteMDP
    >>> mdp = FiniteMDP(np.ones((1, 2, 1)), np.array([[0.0, 1.0]]), gamma=0.0)
    >>> p = npg_step(mdp, np.full((1, 2), 0.5), eta=np.log(3))
    >>> np.round(p, 12).tolist()   # A = (-1/2, 1/2): weights exp(∓ log(3)/2) -> (1/4, 3/4)
    [[0.25, 0.75]]
    """
    g = discount(mdp, "npg_step")
    eta = check_positive(eta, "eta")
    _check_step(mdp, eta, g)
    xp = mdp.xp
    pi = as_stochastic_policy(mdp, pi)
    # advantage forms A^π without subtracting Q^π and V^π, both of size max|r|/(1−γ): the direct
    # Q − V erred by up to ~1e12·ε·max|r| at γ = 1 − 1e-12, and the step multiplies it by η/(1−γ)
    adv = advantage(mdp, pi)
    return multiplicative_update(pi, (eta / (1.0 - g)) * adv, xp)


def _check_step(mdp: FiniteMDP, eta: float, g: float) -> None:
    """The step ``η/(1−γ)`` multiplies arrays of the model's dtype, so it must be finite there.

    A Python float meeting a float32 array is rounded to float32: ``η = 1e39`` became ``inf``,
    ``inf·0 = NaN`` at every zero advantage, and NPG returned an all-NaN policy without a word
    (float32, ``γ = 0.5``, any rewards).
    """
    xp = mdp.xp
    big = float(xp.finfo(mdp.dtype).max)
    if eta / (1.0 - g) > big:
        raise ValueError(
            f"eta={eta!r} is too large for a {mdp.dtype} model: the step eta/(1 - gamma) = {eta / (1.0 - g):.3g} "
            f"exceeds the largest {mdp.dtype} number {big:.3g}; use a float64 model or a smaller eta"
        )


def _check_logit_range(mdp: FiniteMDP, eta: float, iterations: int, g: float) -> None:
    """Reject a step whose logit updates could leave the dtype's range (they would turn to NaN).

    The logits move by ``η/(1−γ)·A`` per iteration with ``|A| ≤ 2‖R‖∞/(1−γ)``; over ``T``
    iterations (and the closed-form advance of settled instances) that is at most
    ``T·η·2‖R‖∞/(1−γ)²``, which must stay below an eighth of the largest float.
    """
    xp = mdp.xp
    r_max = float(xp.max(xp.abs(mdp.R))) if math.prod(mdp.R.shape) else 0.0
    reach = max(iterations, 1) * eta * 2.0 * r_max / (1.0 - g) ** 2
    limit = float(xp.finfo(mdp.dtype).max) / 8.0
    if reach > limit:
        raise ValueError(
            f"eta={eta:g} is too large for this model: over {iterations} iterations the logit updates "
            f"eta*A/(1-gamma) can exceed {limit:.3g} (an eighth of the largest {mdp.dtype} number) and turn to "
            "NaN; any eta with eta*max|R|/(1-gamma)^2 >> 1 already takes policy iteration's steps"
        )
    _check_step(mdp, eta, g)


def natural_policy_gradient(
    mdp: FiniteMDP,
    *,
    eta: float,
    iterations: int,
    pi0: Any = None,
    rho: Any = None,
    tol: float | None = None,
    V_star: Any = None,
) -> PolicyOptimizationResult:
    r"""Run exact tabular NPG ``π_{t+1} ∝ π_t exp(η A^{π_t}/(1−γ))`` on all instances at once.

    Parameters
    ----------
    mdp : FiniteMDP
        Discounted model, possibly batched.
    eta : float > 0
        Step size.
    iterations : int ≥ 0
        Number of updates ``T`` (the cap when ``tol`` is given).
    pi0 : array, optional
        Initial policy (uniform by default, as in the theorem).
    rho : array, optional
        Distribution of the traced suboptimality ``V*(ρ) − V^{π_t}(ρ)``
        (the model's ``μ`` by default). NPG itself does not depend on ``ρ``.
    tol : float, optional
        Stop once the certified ``suboptimality_bound ≥ V*(ρ) − V^{π_t}(ρ)`` is ``≤ tol`` for
        every instance; ``None`` runs the fixed budget (``converged=None``). A run that reaches
        ``iterations`` with ``tol`` below the certificate's round-off floor says so in its warning.
    V_star : array (..., S), optional
        Optimal values (default: :func:`rltheory.mdp.policy_iteration`).

    Returns
    -------
    PolicyOptimizationResult
        Trace metrics ``suboptimality`` (``V*(ρ) − V^{π_t}(ρ)``),
        ``suboptimality_inf`` (``max_s V*(s) − V^{π_t}(s)``) and ``evaluation_bound``
        (a certified bound on ``‖V_t − V^{π_t}‖∞`` for the values used at iterate ``t``:
        (residual + its round-off) / (1 − γ), a few times an LU solve's own error) and
        ``suboptimality_bound`` (certified: the computed suboptimality plus
        ``evaluation_bound``, the error of ``V*`` — ``policy_iteration``'s certified bound and
        its evaluation's error, or 0 for a ``V_star`` passed in, which is taken as exact — and
        of the ``ρ``-weighting; :class:`~rltheory.algorithms._policy_opt.GapCertificate`),
        ``t = 0..T``.

    Raises
    ------
    ValueError
        Bad ``eta`` (also ``η`` too large for the model: the logit range, or ``η/(1−γ)`` beyond the
        dtype's largest number), ``iterations``, ``tol``, ``pi0``, ``rho`` or ``V_star``.

    Notes
    -----
    Theorem (Agarwal et al. 2021, Thm 16): rewards in ``[0, 1]``, ``π_0`` uniform,
    any ``η > 0``: ``V*(ρ) − V^{π_T}(ρ) ≤ log|A|/(ηT) + 1/((1−γ)^2 T)`` for every
    ``ρ`` and ``T ≥ 1`` — no distribution-mismatch factor, no dependence on ``S``.
    Cost per iteration: one product with ``P`` per instance once the policy settles (more
    while it moves fast: an ``S×S`` LU solve in each of the first ten iterations, then
    further Richardson steps, Newton–Schulz refreshes of the stored inverse, and LU solves
    where the steps would be too many) — see :mod:`rltheory.algorithms._warm_eval`. On
    numpy the product reads only the live rows (``log π ≥ −50``; on the NPG benchmark 55 of
    250 per instance from iteration 200 on; :mod:`rltheory.algorithms._live_rows`). Batched and
    single-instance runs agree to round-off (single instances solve by LU every iteration).
    On numpy an instance whose value ``V`` stays certified for every later iterate leaves
    the run and costs nothing more: with ``A`` fixed, the residual
    ``Σ_a π_k(a|s) A(s, a)`` along ``π_k ∝ exp(θ + k·η A/(1−γ))`` is non-decreasing in ``k``
    (derivative ``η/(1−γ)·Var_{π_k} A(s, ·)``), so it stays between its current value and
    ``max_a A(s, a)``; once both are at the certificate's level the trace keeps the
    instance's values (with that bound) and its logits advance in closed form. Checked
    every few iterations; converged instances of long runs stop costing time (29 % of the
    instance-iterations of the NPG benchmark).

    Examples
    --------
    >>> import numpy as np
    >>> from rltheory.mdp import FiniteMDP
    >>> mdp = FiniteMDP(np.ones((1, 2, 1)), np.array([[0.0, 1.0]]), gamma=0.5)
    >>> res = natural_policy_gradient(mdp, eta=1.0, iterations=50)
    >>> bool(res.trace["suboptimality"][-1] < 1e-6), res.converged
    (True, None)
    """
    eta = check_positive(eta, "eta")
    _check_logit_range(mdp, eta, check_iterations(iterations), discount(mdp, "natural_policy_gradient"))
    g, iterations, tol, rho, cert, pi, _ = prepare_certified(
        mdp, "natural_policy_gradient", iterations=iterations, tol=tol, rho=rho, V_star=V_star, pi0=pi0
    )
    xp, S, A, batch = mdp.xp, mdp.S, mdp.A, mdp.batch_shape
    n = math.prod(batch)
    V_star = cert.V_star
    # suboptimality_bound = (computed gap + evaluation_bound·(1 + c_ρ) + e* + c_ρ(‖V*‖∞ + ‖R‖∞/(1−γ)))(1 + 4u):
    # the ρ-weighting's error is c_ρ·max|V* − V| (weighting_error) with |V| ≤ ‖R‖∞/(1−γ) + evaluation_bound
    c_rho = weighting_error(xp.ones_like(V_star), rho, cert.ro.u)
    r_max = xp.max(xp.reshape(xp.abs(mdp.R), batch + (-1,)), axis=-1)
    fixed = (cert.e_star + c_rho * (xp.max(xp.abs(V_star), axis=-1) + r_max / (1.0 - g))
             + underflow_error(S + 4, mdp.dtype, xp))  # (weighting_error's absolute part)
    fixed, c_rho = (xp.reshape(xp.broadcast_to(xp.asarray(x, dtype=mdp.dtype, device=mdp.P.device), batch), (n,))
                    for x in (fixed, c_rho))
    flat = (xp.reshape(mdp.P, (n, S, A, S)), xp.reshape(mdp.R, (n, S, A)), xp.reshape(pi, (n, S, A)),
            xp.reshape(V_star, (n, S)), xp.reshape(rho, (n, S)), fixed, c_rho)
    # On a host, run the batch in chunks whose copy of P stays in cache across iterations.
    size = n if not is_host(xp) else max(1, min(n, _CHUNK_BYTES // (S * A * S * xp.finfo(mdp.dtype).bits // 8)))
    size = -(-n // -(-n // size))  # equal chunks: ceil(n / number of chunks)
    runs = [_NPGChunk(*(x[lo:lo + size, ...] for x in flat), gamma=g, step=eta / (1.0 - g), u=cert.ro.u, xp=xp)
            for lo in range(0, n, size)]
    t_end = max(run.advance(iterations, tol) for run in runs)
    for run in runs:  # chunks that met tol earlier continue to the common final iterate
        run.advance(t_end, None)
    rows, walls = zip(*(run.trace_rows() for run in runs), strict=True)
    metrics = {k: np.concatenate([r[k] for r in rows], axis=1).reshape((t_end + 1,) + batch) for k in rows[0]}
    trace = Trace(metrics=metrics, iteration=np.arange(t_end + 1, dtype=np.int64),
                  wall_time=np.sum(walls, axis=0))
    converged = None
    if tol is not None:
        worst = float(np.max(metrics["suboptimality_bound"][-1]))
        converged = worst <= tol
        floor = float(np.max(metrics["suboptimality_bound"][-1] - metrics["suboptimality"][-1]))
        if not converged and floor >= tol:
            warnings.warn(
                f"natural_policy_gradient reached iterations={iterations} with certified suboptimality "
                f"{worst:.3g} > tol={tol:g}; tol is below the round-off floor {floor:.3g} of the "
                "certificate in this dtype",
                ConvergenceWarning,
                stacklevel=2,
            )
        elif not converged:
            warn_at_cap("natural_policy_gradient", iterations, worst, tol, stacklevel=3)
    policy = xp.permute_dims(xp.concat([run.policy() for run in runs], axis=0), (0, 2, 1))
    return PolicyOptimizationResult(policy=xp.reshape(policy, batch + (S, A)), iterations=t_end,
                                    converged=converged, trace=trace)


_CHUNK_BYTES = 32 * 2**20
_SETTLE = True  # settled instances leave the run (switched off only to measure what that saves)
_ROWS = True  # the live-row layout (switched off only to measure what it saves)
_SETTLE_EVERY = 4  # iterations between checks (each costs ~ a tenth of an iteration; settling later by < 4 is free)


class _NPGChunk:
    """A resumable NPG run on a flat batch of instances (action-major policy arrays).

    Evaluation is :class:`~rltheory.algorithms._warm_eval.WarmEvaluator` (exact up to a
    per-iterate certificate, recorded as the trace metric ``evaluation_bound``). The policy
    is kept as logits ``θ`` shifted to maximum 0 per state (``π ∝ exp θ``), updated by
    :func:`~rltheory.algorithms._policy_opt.logit_step`: ``θ ← θ + η A/(1−γ)``.

    Settled instances (numpy): once an instance's value is certified for every later
    iterate (:meth:`WarmEvaluator.settled`: the residual of a fixed value along
    ``θ + k·c·A`` is monotone in ``k``), it leaves the active arrays. Its trace rows stay
    constant (with the bound that holds for all later iterates) and its logits are advanced
    in closed form, ``θ_T = θ_t + (T − t)·η A/(1−γ)`` shifted to maximum 0, when the policy
    is read — the same policy as ``T − t`` further steps, without their cost.

    Live rows (numpy, warm evaluator): every ``_SETTLE_EVERY`` iterations a chunk on the
    full ``(B, A, S)`` layout checks how many rows have ``log π ≥ −50``; once no instance
    has more than ``SWITCH`` of them it moves to a :class:`~rltheory.algorithms._live_rows.LiveRows`
    layout (rebuilt as rows die, and before any dead row that may revive is evaluated).
    """

    def __init__(self, P: Any, R: Any, pi: Any, V_star: Any, rho: Any, fixed: Any, c_rho: Any, *, gamma: float,
                 step: float, u: float, xp: Any) -> None:
        self.ev = WarmEvaluator(P, R, gamma, xp)
        self.pi = action_major(xp, pi)
        self.theta = safe_log(self.pi, xp)  # logits, shifted to max 0 by every update
        self.V_star, self.rho, self.step, self.xp = V_star, rho, step, xp
        self.nu_step = softmax_sum_defect(self.pi.shape[1], xp.finfo(self.pi.dtype).eps)  # of logit_step's policies
        # per instance, in chunk order (never compacted): the certificate's fixed part and ρ's weighting factor
        # suboptimality_bound = up·gap + a·evaluation_bound + f with a = (1 + c_ρ)·up, f = fixed·up
        self.up = 1.0 + 4.0 * u
        self.stopping = False  # whether advance() needs suboptimality_bound at every iterate (tol given)
        self.frozen_rows: dict[str, np.ndarray] | None = None  # the constant rows once every instance settled
        self.a_up, self.f_up = (1.0 + c_rho) * self.up, fixed * self.up
        self.t, self.adv, self.last = 0, None, None
        self.rows: dict[str, list[Any]] = {}
        self.wall: list[float] = []
        self.elapsed = 0.0
        # On a device the rows stay there until the end and each iterate's time is a CUDA
        # event: no synchronisation per iteration (launches overlap the GPU's work).
        self.clock = device_clock(xp)
        n = P.shape[0]
        self.n = n
        self.freeze = _SETTLE and is_numpy(xp)  # host-side decisions only (a device would sync every iteration)
        # live-row layout (numpy, warm evaluator): rows with log π < −50 leave the arrays (_live_rows)
        self.rowwise = self.freeze and _ROWS and self.ev.warm
        self.live: LiveRows | None = None
        self.bound: Any = None  # the active instances' evaluation bound of the last iterate
        if self.freeze:
            self.V_star, self.rho = np.array(V_star, copy=True), np.array(rho, copy=True)  # compacted in place
            self.slot = np.arange(n)  # chunk position of each active row
            self.open_actions = None if not np.isneginf(self.theta).any() else ~np.isneginf(self.theta)
            self.frozen = np.zeros(n, dtype=bool)
            self.f_theta = np.zeros((n,) + self.theta.shape[1:], dtype=self.theta.dtype)
            self.f_score = np.zeros_like(self.f_theta)
            self.f_t = np.zeros(n, dtype=np.int64)
            self.f_rows: dict[str, np.ndarray] = {}

    def _certify(self, rows: dict[str, Any]) -> None:
        """Add ``suboptimality_bound`` to a full (chunk-order) row of metrics (see the driver)."""
        if isinstance(rows["evaluation_bound"], np.ndarray):  # in place: single instances feel each op
            b = np.multiply(rows["evaluation_bound"], self.a_up)
            b += self.f_up
            b += self.up * rows["suboptimality"]
        else:
            b = rows["evaluation_bound"] * self.a_up + self.f_up + self.up * rows["suboptimality"]
        rows["suboptimality_bound"] = b

    def _evaluate(self) -> None:
        if not self.freeze:
            V, self.adv, bound = self.ev.evaluate(self.pi, self._nu())
            self.last = gap_metrics(self.xp, self.V_star, V, self.rho) | {"evaluation_bound": bound}
            self._certify(self.last)
            for k, v in self.last.items():
                self.rows.setdefault(k, []).append(v if self.clock else np.asarray(to_numpy(v), dtype=float))
            if self.clock:
                self.clock.mark()
            else:
                self.wall.append(self.elapsed)
            return
        if not self.slot.shape[0] and self.frozen_rows is not None:  # all settled: the rows stay constant
            self.last = self.frozen_rows
            for k, v in self.frozen_rows.items():
                if k != "suboptimality_bound":
                    self.rows[k].append(v)
            self.wall.append(self.elapsed)
            return
        full = {k: v.copy() for k, v in self.f_rows.items()}  # the settled rows' constant values
        if self.slot.shape[0]:
            V, self.adv, bound = self.ev.evaluate(self.pi, self._nu())
            self.bound = bound
            last = gap_metrics(np, self.V_star, V, self.rho) | {"evaluation_bound": bound}
            if full:
                for k, v in last.items():
                    full[k][self.slot] = v
            else:  # none settled yet: the active rows are the chunk in order
                full = {k: np.asarray(v, dtype=float) for k, v in last.items()}
            if self.t % _SETTLE_EVERY == 0:
                done, f_bound = self.ev.settled(self.open_actions if self.live is None else self.live.dead_top())
                if done.any():
                    self._retire(done, last | {"evaluation_bound": f_bound})
            if self.rowwise and self.slot.shape[0]:
                self._rows()
        for k, v in full.items():
            self.rows.setdefault(k, []).append(v)
        if self.stopping or not self.slot.shape[0]:  # (the trace's rows are formed at the end: trace_rows)
            self._certify(full)
        self.last = full
        if not self.slot.shape[0]:
            self.frozen_rows = full
        self.wall.append(self.elapsed)

    def _nu(self) -> float | None:
        """The action-sum defect of the evaluated policy: measured on ``π_0``, a priori afterwards."""
        return None if self.t == 0 else self.nu_step

    def _rows(self) -> None:
        """Switch to the live-row layout once few rows are live, rebuild it when it is due (_live_rows)."""
        if self.live is None:
            if self.t == 0 or self.t % _SETTLE_EVERY:
                return
            A, S = self.theta.shape[1:]
            if int(np.max(live_counts(self.theta))) > SWITCH * A * S:
                return
            theta = self.theta
        elif self.live.needs_rebuild(self.t):
            theta = self.live.full_theta(self.t)
        else:
            return
        self._rebuild(theta, self.t)

    def _rebuild(self, theta: np.ndarray, t: int) -> None:
        """A new live-row layout from the full logits ``theta`` of iterate ``t``."""
        self.live = LiveRows(self.ev, theta, self.step, t)
        self.ev, self.theta, self.pi = self.live.ev, self.live.theta, self.live.pi
        self.adv, self.open_actions = self.ev.history[-1][1], None

    def _retire(self, done: np.ndarray, last: dict[str, np.ndarray]) -> None:
        """Move the settled rows ``done`` out of the active arrays (see the class docstring)."""
        j, at = np.flatnonzero(done), self.slot[done]
        self.frozen[at] = True
        if self.live is None:
            self.f_theta[at] = self.theta[j]
            self.f_score[at] = self.step * self.adv[j]
        else:  # the full logits and advantages, dead rows in closed form
            self.f_theta[at] = self.live.full_theta(self.t, j)
            self.f_score[at] = self.step * self.live.full_advantage(j)
        self.f_t[at] = self.t
        for k, v in last.items():
            self.f_rows.setdefault(k, np.zeros(self.n))[at] = v[j]
        holes, movers, n = self.ev.retire(done)
        self.V_star, self.rho, self.slot, self.bound = (
            compact(x, holes, movers, n) for x in (self.V_star, self.rho, self.slot, self.bound))
        if self.live is None:
            self.theta, self.pi = (compact(x, holes, movers, n) for x in (self.theta, self.pi))
        else:
            self.live.retire(holes, movers, n)
            self.theta, self.pi = self.live.theta, self.live.pi
        if self.open_actions is not None:
            self.open_actions = compact(self.open_actions, holes, movers, n)
        self.adv = self.ev.history[-1][1]

    def trace_rows(self) -> tuple[dict[str, np.ndarray], np.ndarray]:
        """The host trace of this chunk: metric rows ``(t + 1, n)`` and wall times ``(t + 1,)``.

        On a device this is the run's one transfer (and one synchronisation); the wall
        times are the device clock's, from the chunk's creation to the end of each
        iterate's evaluation.
        """
        if self.clock is None:
            rows = {k: np.asarray(v, dtype=float) for k, v in self.rows.items()}
            if self.freeze:  # suboptimality_bound for all iterates at once (the same operations as _certify)
                self._certify(rows)
            return rows, np.asarray(self.wall)
        return {k: stack_rows(v) for k, v in self.rows.items()}, self.clock.times()

    def policy(self) -> Any:
        """The action-major policy ``(n, A, S)`` of the current iterate, settled rows in closed form."""
        if not self.freeze:
            return self.pi
        out = np.empty_like(self.f_theta)
        if self.live is None:
            out[self.slot] = self.pi
        elif self.slot.shape[0]:  # the full policy of the live logits and the dead rows' closed form
            out[self.slot] = logit_step(self.live.full_theta(self.t), 0.0, np)[0]
        at = np.flatnonzero(self.frozen)
        if at.shape[0]:
            k = (self.t - self.f_t[at]).astype(self.f_theta.dtype)[:, None, None]
            out[at] = logit_step(self.f_theta[at], k * self.f_score[at], np)[0]
        return out

    def advance(self, T: int, tol: float | None) -> int:
        """Iterate up to ``t = T``, or until every instance's certified suboptimality is ``≤ tol``; return ``t``."""
        xp, t0 = self.xp, time.perf_counter()
        self.stopping = tol is not None
        if self.last is None:
            self._evaluate()
        self.stopping = tol is not None
        if self.stopping and self.last is not None and "suboptimality_bound" not in self.last:
            self._certify(self.last)
        while self.t < T and not (tol is not None and float(xp.max(self.last["suboptimality_bound"])) <= tol):
            if self.live is not None and self.slot.shape[0]:
                self.pi, self.theta = self.live.step(self.adv, self.bound)
                if self.live.reviving():  # a dead row may be back: rebuild before it is evaluated
                    self._rebuild(self.live.full_theta(self.t + 1), self.t + 1)
            elif not self.freeze or self.slot.shape[0]:
                self.pi, self.theta = logit_step(self.theta, self.step * self.adv, xp)
            self.t += 1
            self.elapsed += time.perf_counter() - t0
            t0 = time.perf_counter()
            self._evaluate()
        self.elapsed += time.perf_counter() - t0
        return self.t
