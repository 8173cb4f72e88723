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
closed form, their share of the residual in the certificate), and at iterate 64 chunks that
all did so merge into one (:mod:`rltheory.algorithms._npg_chunk`). Re-exported by
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
import warnings
from typing import Any

import numpy as np

from ..backend import is_host, is_numpy
from ..errors import ConvergenceWarning
from ..mdp.bellman import advantage, as_stochastic_policy
from ..mdp.model import FiniteMDP
from ..trace import Trace
from ._npg_chunk import NPGChunk, merge_chunks
from ._policy_opt import (
    PolicyOptimizationResult,
    check_iterations,
    check_positive,
    discount,
    multiplicative_update,
    prepare_certified,
    underflow_error,
    warn_at_cap,
    weighting_error,
)
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
    _check_logit_range(
        mdp, eta, check_iterations(iterations), discount(mdp, "natural_policy_gradient")
    )
    g, iterations, tol, rho, cert, pi, _ = prepare_certified(
        mdp,
        "natural_policy_gradient",
        iterations=iterations,
        tol=tol,
        rho=rho,
        V_star=V_star,
        pi0=pi0,
    )
    xp, S, A, batch = mdp.xp, mdp.S, mdp.A, mdp.batch_shape
    n = math.prod(batch)
    V_star = cert.V_star
    # suboptimality_bound = (computed gap + evaluation_bound·(1 + c_ρ) + e* + c_ρ(‖V*‖∞ + ‖R‖∞/(1−γ)))(1 + 4u):
    # the ρ-weighting's error is c_ρ·max|V* − V| (weighting_error) with |V| ≤ ‖R‖∞/(1−γ) + evaluation_bound
    c_rho = weighting_error(xp.ones_like(V_star), rho, cert.ro.u)
    r_max = xp.max(xp.reshape(xp.abs(mdp.R), batch + (-1,)), axis=-1)
    # (c_ρ multiplies each norm on its own: their sum overflowed for ‖V*‖∞ near the largest float)
    # (underflow_error: weighting_error's absolute part)
    fixed = (
        cert.e_star
        + c_rho * xp.max(xp.abs(V_star), axis=-1)
        + c_rho * (r_max / (1.0 - g))
        + underflow_error(S + 4, mdp.dtype, xp)
    )
    fixed, c_rho = (
        xp.reshape(
            xp.broadcast_to(xp.asarray(x, dtype=mdp.dtype, device=mdp.P.device), batch), (n,)
        )
        for x in (fixed, c_rho)
    )
    flat = (
        xp.reshape(mdp.P, (n, S, A, S)),
        xp.reshape(mdp.R, (n, S, A)),
        xp.reshape(pi, (n, S, A)),
        xp.reshape(V_star, (n, S)),
        xp.reshape(rho, (n, S)),
        fixed,
        c_rho,
    )
    # On a host, run the batch in chunks whose copy of P stays in cache across iterations.
    size = (
        n
        if not is_host(xp)
        else max(1, min(n, _CHUNK_BYTES // (S * A * S * xp.finfo(mdp.dtype).bits // 8)))
    )
    size = -(-n // -(-n // size))  # equal chunks: ceil(n / number of chunks)
    runs = [
        NPGChunk(
            *(x[lo : lo + size, ...] for x in flat),
            gamma=g,
            step=eta / (1.0 - g),
            u=cert.ro.u,
            xp=xp,
        )
        for lo in range(0, n, size)
    ]
    # once the chunks keep only their live rows, one chunk holds them all
    if len(runs) > 1 and is_numpy(xp):
        for run in runs:
            run.advance(min(_MERGE_AT, iterations), tol)
        merged = merge_chunks(runs)
        runs = runs if merged is None else [merged]
    t_end = max(run.advance(iterations, tol) for run in runs)
    for run in runs:  # chunks that met tol earlier continue to the common final iterate
        run.advance(t_end, None)
    rows, walls = zip(*(run.trace_rows() for run in runs), strict=True)
    metrics = {
        k: np.concatenate([r[k] for r in rows], axis=1).reshape((t_end + 1,) + batch)
        for k in rows[0]
    }
    trace = Trace(
        metrics=metrics,
        iteration=np.arange(t_end + 1, dtype=np.int64),
        wall_time=np.sum(walls, axis=0),
    )
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
    return PolicyOptimizationResult(
        policy=xp.reshape(policy, batch + (S, A)),
        iterations=t_end,
        converged=converged,
        trace=trace,
    )


_CHUNK_BYTES = 8 * 2**20  # the full (B, A, S, S) layout of a chunk stays in cache
_MERGE_AT = 64  # the iterate at which chunks that all keep only their live rows merge into one
