r"""Exact solvers for discounted finite MDPs, each with an a-posteriori certificate.

All four solvers return an :class:`MDPSolution` whose ``bound`` certifies the
answer: for the returned policy ``π`` and values ``V``,

    ‖V* − V^π‖∞ ≤ bound   and   ‖V − V*‖∞ ≤ bound.

The certificate comes from the span bounds of Puterman (1994, Thm 6.6.6 and
Prop. 6.6.5): for any ``v`` with ``Δ = T v − v`` and ``π`` greedy with respect to ``v``,

    T v + γ/(1−γ)·min Δ  ≤  V^π  ≤  V*  ≤  T v + γ/(1−γ)·max Δ,

hence ``V* − V^π ≤ γ/(1−γ)·sp(Δ)`` with the span seminorm ``sp(x) = max x − min x``
(≤ 2‖x‖∞, so it is never worse than the sup-norm rule of Puterman Thm 6.3.1,
and often much tighter). Value iteration stops as soon as this certificate is
below ``tol``; the iteration count is then at most
``⌈log(tol (1−γ) / (γ sp(Δ_0))) / log γ⌉ + 1`` since ``sp`` contracts by γ.

Every certificate also counts the rounding of the computed ``Q``, ``Tv`` and ``Tv − v``
(Higham's ``γ_{S+2}`` bound on a sum of ``S + 1`` terms; :class:`_Roundoff`): without it, a
float32 model at ``γ = 0.999`` reached a rounding fixed point with ``Tv − v = 0`` exactly and
was certified with bound 0 while ``‖V − V*‖∞`` was 0.14 (7.8 for MPI with rewards of size 100).
A ``tol`` below this round-off floor ends with ``converged=False`` and a warning that says so
(:func:`rltheory.bounds.vi_certificate_floor` gives the floor a priori).

Batched models are solved in one call: every sweep is one array operation over
all instances, and a run stops when every instance is certified. Reaching
``max_iter`` first is reported with ``converged=False`` and a
:class:`~rltheory.errors.ConvergenceWarning`.

References
----------
Puterman, M. L. (1994). *Markov Decision Processes*. §6.3 (VI), §6.4 (PI), §6.5 (MPI),
§6.6 (span bounds), §6.9 (LP).
Howard, R. A. (1960). *Dynamic Programming and Markov Processes*. MIT Press.
Scherrer, B. (2016). Improved and generalized upper bounds on the complexity of policy
iteration. Math. Oper. Res. 41(3).

Layout: policy iteration and the LP are here; value iteration and modified PI in
:mod:`rltheory.mdp.value_sweeps`; :class:`MDPSolution`, :func:`bellman_certificate` and the
round-off allowance in :mod:`rltheory.mdp.certificates`. All are re-exported here.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

from .._numerics import highs_linprog
from .._validate import check_positive_int, check_real
from ..backend import from_host, require_host, to_numpy
from ..errors import ConvergenceWarning, SolverError
from ..trace import TraceRecorder
from ._occupancy_lp import state_weights
from .bellman import (
    _check_in_range,
    _corrected_advantages,
    _discounted_scale,
    _greedy,
    _q_values,
    as_stochastic_policy,
    evaluate_policy,
    occupancy_measure,
)
from .certificates import (
    MDPSolution,
    _certificate_overflow,
    _check_batch,
    _require_discounted,
    _Roundoff,
    bellman_certificate,
)
from .model import FiniteMDP
from .value_sweeps import modified_policy_iteration, value_iteration

__all__ = [
    "MDPSolution",
    "value_iteration",
    "policy_iteration",
    "modified_policy_iteration",
    "linear_program",
    "bellman_certificate",
]


def policy_iteration(
    mdp: FiniteMDP, *, max_iter: int | None = None, pi0: Any = None, tie_tol: float | None = None
) -> MDPSolution:
    r"""Howard's policy iteration with exact evaluation and a no-cycling tie rule.

    ``V^{π_k} = (I − γP_{π_k})^{-1} r_{π_k}``; ``π_{k+1}(s) = π_k(s)`` if
    ``Q^{π_k}(s, π_k(s)) ≥ max_a Q^{π_k}(s, a) − tie_tol``, else the lowest-index
    maximiser. Stops when no state changes. Keeping the current action on
    (near-)ties makes ``V^{π_k}`` strictly increase at every changed step, so the
    method terminates (Puterman 1994, Thm 6.4.2); an instance whose switches would take it
    back to its previous policy (a round-off tie the tolerance missed) keeps its policy.
    Howard's PI needs at most ``O(SA/(1−γ) · log(1/(1−γ)))`` improvement steps
    (Scherrer 2016, Thm 3).

    Parameters
    ----------
    max_iter : int, optional
        Cap on improvement steps (default ``max(100, ⌈SA/(1−γ)·log(1/(1−γ))⌉)``, capped at 10⁵).
    pi0 : int array (..., S), optional
        Initial policy (default: greedy with respect to ``r``).
    tie_tol : float, optional
        Tie tolerance, a finite number ``≥ 0``. Default, per instance and iteration, the
        round-off of the computed advantages: ``4·res + 64ε‖Q‖∞`` with
        ``res = ‖r_π + γP_πV − V‖∞`` the evaluation's own residual. (The error of ``V`` itself,
        up to ``res/(1−γ)``, is mostly a constant shift, which cancels in ``Q(s, a) − Q(s, b)``;
        a fixed worst-case ``32ε·max|r|/(1−γ)²`` reached ``0.7·max|r|`` at ``γ = 1 − 10⁻⁷`` and
        stopped PI after one step, 1–20 % below ``V*``.) Where ``(1+γ)/(1−γ) > 64`` the
        switches are decided on the flow-form advantages corrected for ``V``'s rounding
        (:func:`rltheory.mdp.bellman._corrected_advantages`, within a few ``ε`` of the size of
        ``r`` and of ``V``'s jumps along transitions) with the default tolerance
        ``4·max_s|A(s, π(s))| + 4e`` (``e`` the rounding of the flow terms): ``Q − V`` carries
        ``ε‖V‖∞`` in every entry, and in float32 at γ = 0.9999 to 1 − 2⁻²⁰ PI stopped up to 7 %
        below ``V*``. The certificate ``bound`` holds whatever the tolerance.

    Returns
    -------
    MDPSolution
        ``bound = (max(TV − V)⁺ + ‖T^π V − V‖∞ + 2ε)/(1−γ)`` certifies ``‖V* − V^π‖∞`` and
        ``‖V − V*‖∞`` for the computed evaluation ``V`` of ``π`` (Puterman Prop. 6.6.1 applied to
        ``V``, plus ``‖V − V^π‖∞``), with ``ε`` the round-off of the computed ``TV − V`` and
        ``T^π V − V``: the smaller of the bounds from ``Q − V`` (:class:`_Roundoff`, ``ε`` of size
        ``ε_mach‖V‖∞``) and from the flow form ``r − (1−γ)V + γΣ_j P(j)(V(j) − V(s))``
        (:meth:`_Roundoff.flow_advantages`, ``ε`` of the size of ``r`` and of V's spread: at
        γ = 1 − 10⁻¹² 2e-4·‖V‖∞ at most where the first gave 2.5e-3); trace metric ``changed``
        counts switched states per instance.

    Examples
    --------
    >>> import numpy as np
    >>> from rltheory.mdp import FiniteMDP
    >>> P = np.array([[[1., 0.], [0., 1.]], [[0., 1.], [0., 1.]]])
    >>> R = np.array([[0., 0.], [1., 1.]])
    >>> res = policy_iteration(FiniteMDP(P, R, gamma=0.9))
    >>> res.policy, res.V, res.iterations
    (array([1, 0]), array([ 9., 10.]), 2)
    """
    g = _require_discounted(mdp, "policy_iteration")
    check_positive_int(max_iter, "max_iter", allow_none=True)
    tie_tol = check_real(tie_tol, "tie_tol", low=0.0, allow_none=True)
    _check_batch(mdp, "policy_iteration")
    xp = mdp.xp
    S, A = mdp.S, mdp.A
    eps = float(xp.finfo(mdp.dtype).eps)
    if max_iter is None:
        max_iter = int(
            min(1e5, max(100, math.ceil(S * A / (1.0 - g) * math.log(1.0 / (1.0 - g) + 1.0))))
        )
    if pi0 is None:
        pi = _greedy(mdp.R)
    else:
        pi = xp.asarray(pi0)
        if not xp.isdtype(pi.dtype, "integral"):
            raise ValueError(
                f"pi0 must be a deterministic policy (integer array of shape (..., S)); got dtype {pi.dtype}"
            )
        as_stochastic_policy(mdp, pi, field="pi0")  # validates shape and range
        # one policy per instance: a pi0 batch must broadcast to the model's (numpy's broadcast_to
        # said only "input operand has more dimensions than allowed by the axis remapping")
        lead = tuple(pi.shape[:-1])
        if len(lead) > len(mdp.batch_shape) or any(
            n not in (1, b) for n, b in zip(lead[::-1], mdp.batch_shape[::-1], strict=False)
        ):
            raise ValueError(
                f"pi0's batch shape {lead} does not broadcast to the model's batch shape "
                f"{mdp.batch_shape} (one start policy per instance)"
            )
        pi = xp.broadcast_to(pi, mdp.batch_shape + (S,))
    ar = xp.arange(A, device=mdp.P.device)
    rec = TraceRecorder()
    roundoff = _Roundoff(mdp)
    flow_form = (1.0 + g) > 64.0 * (1.0 - g)  # the flow-form certificate only near γ = 1 (below)
    it = 0
    prev = None
    while True:
        # (an overflow is refused below, located)
        with np.errstate(over="ignore", invalid="ignore"):
            V = evaluate_policy(mdp, pi)
            Q = _q_values(mdp, V)
        Q = _check_in_range(mdp, Q, "policy_iteration", "Q^pi", ("s", "a"), _discounted_scale(g))
        it += 1
        qmax = xp.max(Q, axis=-1)
        onehot = pi[..., None] == ar
        q_cur = xp.sum(xp.where(onehot, Q, xp.zeros_like(Q)), axis=-1)
        Df = ef = None
        if flow_form:  # Q − V in flow form, for the certificate below and the switches
            with np.errstate(over="ignore", invalid="ignore"):
                Df, ef = roundoff.flow_advantages(mdp, V)
        if Df is not None and bool(xp.all(xp.isfinite(Df))):
            # Near γ = 1 the switches are decided on the flow advantages corrected for V's
            # rounding (bellman._corrected_advantages: within a few ε of r's and V's jumps' size),
            # not on Q − V, which carries ε‖V‖∞ ~ ε·max|r|/(1−γ) in every entry: the tie
            # tolerance 64ε‖Q‖∞ below was 7.6 for rewards in [0, 1] in float32 at γ = 1 − 2⁻²⁰,
            # and PI stopped at policies up to 7 % below V* (11 of 30 random 4-state models;
            # 5 of 30 at γ = 0.9999), converged, within a bound of 10 %
            adv = _corrected_advantages(mdp, xp.astype(onehot, mdp.dtype), Df)
            a_cur = xp.sum(xp.where(onehot, adv, xp.zeros_like(adv)), axis=-1)
            if tie_tol is None:
                # ρ's solve residual (a_cur, ≈ 0 when exact) and the rounding of the flow terms
                tol = (4.0 * xp.max(xp.abs(a_cur), axis=-1) + 4.0 * ef)[..., None]
            else:
                tol = tie_tol
            keep = a_cur >= xp.max(adv, axis=-1) - tol
            new = xp.where(keep, pi, _greedy(adv))
        else:
            if tie_tol is None:
                # the round-off of the computed advantages: the evaluation's residual
                # res = ‖r_π + γP_πV − V‖∞ = ‖Q(·, π) − V‖∞ (free: Q is formed from V) and the
                # rounding of Q's entries. (V's own error, res/(1−γ) at worst, is mostly a
                # constant shift, which leaves the differences Q(s, a) − Q(s, b) alone.)
                scale = xp.max(xp.abs(Q), axis=(-2, -1))
                tol = (4.0 * xp.max(xp.abs(q_cur - V), axis=-1) + 64.0 * eps * scale)[..., None]
            else:
                tol = tie_tol
            keep = q_cur >= qmax - tol
            new = xp.where(keep, pi, _greedy(Q))
        # an instance returning to its previous policy is at a round-off tie: stay
        if prev is not None:
            back = xp.all(new == prev, axis=-1)[..., None]
            new = xp.where(back, pi, new)
        changed = xp.sum(xp.astype(new != pi, xp.int64), axis=-1)
        # V* − V ≤ max(TV − V)/(1−γ) for any V, and V − V^π ≤ ‖T^π V − V‖∞/(1−γ) (V is the
        # computed evaluation, not V^π itself); both computed quantities within ε of the exact.
        # An early policy's certificate may exceed the float range with every value in range
        # (V^π0 = −2^1022 where V* = +0.9·2^1022): it is inf in the trace, not a refusal
        # max(hi, 0): V − V* ≤ res/(1−γ) also where every T V − V < 0, so ‖V − V*‖∞ ≤ bound.
        # The same certificate from Q − V in flow form (flow_advantages), whose round-off has the
        # size of r and of V's spread, not of ‖V‖∞: the direct form's ε‖V‖∞/(1−γ) made the bound
        # 2.7 % of V at γ = 1 − 1e-12 where V itself is right to a few ulps. Both are valid: min.
        # Only where (1 + γ)/(1 − γ) > 64 (as evaluate_policy's refined solve): below, the direct
        # form's ε‖V‖∞/(1−γ) is already within 64ε‖V‖∞, and the flow form doubled the batched
        # PI benchmark's time (1000 MDPs, S = 20, γ = 0.95: 0.041 → 0.077 s).
        with np.errstate(over="ignore", invalid="ignore"):
            D = qmax - V
            res = xp.max(xp.abs(q_cur - V), axis=-1)
            hi = xp.max(D, axis=-1)
            eps_d = roundoff.sweep(V) + 2.0 * roundoff.u * xp.maximum(xp.abs(hi), res)
            bound = (xp.maximum(hi, 0.0) + res + 2.0 * eps_d) / (1.0 - g)
            if Df is not None:
                res_f = xp.max(
                    xp.abs(xp.sum(xp.where(onehot, Df, xp.zeros_like(Df)), axis=-1)), axis=-1
                )
                hi_f = xp.max(Df, axis=(-2, -1))
                bound_f = (xp.maximum(hi_f, 0.0) + res_f + 2.0 * ef) / (1.0 - g)
                bound_f = xp.where(xp.isnan(bound_f), xp.full_like(bound_f, float("inf")), bound_f)
                bound = xp.minimum(bound, bound_f)
        rec.record(it, changed=changed, bound=bound)
        n_changed = int(xp.max(changed)) if changed.ndim else int(changed)
        if n_changed == 0 or it >= max_iter:
            converged = n_changed == 0
            if converged and not math.isfinite(float(xp.max(bound))):  # (values in range)
                raise _certificate_overflow(mdp, "policy_iteration", bound)
            if not converged:
                warnings.warn(
                    f"policy_iteration stopped at max_iter={max_iter} with {n_changed} states still "
                    "changing",
                    ConvergenceWarning,
                    stacklevel=2,
                )
            return MDPSolution(pi, V, Q, it, converged, bound, rec.finish(), "policy_iteration")
        prev, pi = pi, new


def _relative_value_lp(P: np.ndarray, r: np.ndarray, w: np.ndarray, g: float) -> Any:
    r"""The discounted LP in relative values, for one instance (``P`` ``(S·A, S)``, ``r`` ``(S·A,)``
    scaled to ``max|r| ≤ 1``, weights ``w``): ``V = k/(1−γ)·1 + h`` with ``h(0) = 0``, so that

        min_{k, h} k + (1−γ) Σ_{j≥1} w(j)h(j)  s.t.  k + h(s) − γ Σ_j P(j|s, a)h(j) ≥ r(s, a)

    is the LP of :func:`linear_program` after an invertible change of variables (same rows, so the
    same duals, here without the factor ``1 − γ``: ``d = −marginals``). ``k`` is of the size of
    ``r`` and ``h`` of the values' spread, where ``u = (1−γ)V`` has rows that sum to ``1 − γ``;
    as γ → 1 it tends to the average-reward LP (Puterman 1994, §8.8), well posed for unichain
    models. HiGHS's result (``x = (k, h(1), ..., h(S−1))``).
    """
    from scipy.sparse import csr_matrix, eye, hstack, kron  # noqa: PLC0415

    SA, S = P.shape
    rows = (
        kron(eye(S, format="csr"), np.ones((SA // S, 1)), format="csr") - g * csr_matrix(P)
    ).tocsr()
    A_ub = -hstack([csr_matrix(np.ones((SA, 1))), rows[:, 1:]]).tocsr()
    c = np.concatenate([[1.0], (1.0 - g) * w[1:]])
    return highs_linprog(c, A_ub=A_ub, b_ub=-r, bounds=[(None, None)] * S, method="highs")


def linear_program(mdp: FiniteMDP, *, weights: Any = None) -> MDPSolution:
    r"""Solve the MDP by its linear program (scipy HiGHS); host only.

    Primal: ``min_V (1−γ) wᵀV  s.t.  V(s) ≥ r(s,a) + γ Σ_s' P(s'|s,a) V(s')  ∀(s,a)``.
    Dual:   ``max_{d ≥ 0} Σ d(s,a) r(s,a)  s.t.  Σ_a d(s',a) = (1−γ) w(s') + γ Σ_{s,a} P(s'|s,a) d(s,a)``.
    The dual optimum ``d*`` is the normalised occupancy measure of an optimal
    policy from ``w`` and strong duality gives ``(1−γ) wᵀV* = rᵀd*`` (Puterman
    1994, §6.9; SEEDS C3).

    Parameters
    ----------
    weights : array (S,) or (..., S), optional
        Strictly positive state weights ``w`` (a distribution); default: the model's
        ``mu`` if it is strictly positive, else uniform (positive weights make the
        primal solution equal ``V*`` in every state).

    Returns
    -------
    MDPSolution
        ``occupancy`` = ``duals`` = ``d*[..., S, A]``. The LP's greedy policy (lowest index on
        ties within ``1e-9·max|r|/(1−γ)`` of the instance) is checked by policy improvement with
        the exact evaluation (:func:`policy_iteration` from it: one evaluation when it is
        optimal), and the checked policy, its evaluation ``V``, ``Q``, ``bound`` and trace are
        returned; ``iterations`` counts the policies evaluated. ``converged`` means that check's
        stopping rule held (no state changes; ``False`` with a ConvergenceWarning at its
        ``max_iter``), so ``bound`` is policy iteration's round-off certificate. Where the check
        changed the policy, ``d*`` is the recovered policy's occupancy from ``w``
        (:func:`occupancy_measure`), not HiGHS's duals.

    Notes
    -----
    HiGHS meets the LP to its tolerances (``1e-10`` in ``(1−γ)V/max|r|``), so the LP's ``V`` is
    within about ``1e-10·max|r|/(1−γ)`` of ``V*``, and its advantages, which choose the policy,
    within that over ``1 − γ``: at γ = 1 − 10⁻⁹ (rewards in ``[0, 1]``) the LP's greedy policy was
    up to 4.7e8 below ``V*`` and was returned with ``converged=True`` and a bound of 1e9; the
    check recovers the optimal policy there. Near γ = 1 HiGHS may also end without an optimal
    solution of that LP (status 4 on one of four random 4-state models at γ = 1 − 10⁻⁹, on all
    of them at 1 − 10⁻¹²): where ``(1+γ)/(1−γ) > 64`` the same LP is then solved in relative
    values ``V = k/(1−γ) + h``, ``h(0) = 0`` (:func:`_relative_value_lp`, well posed as γ → 1 for
    unichain models), and a ``SolverError`` is raised only when both fail.

    Raises
    ------
    TypeError
        On device (GPU) arrays — this solver runs on the host.
    SolverError
        When HiGHS does not report an optimal solution (its status is attached), also after
        the retries of :func:`rltheory._numerics.highs_linprog` (and, near γ = 1, on the
        relative-value form too).
    """
    from scipy.sparse import csr_matrix, eye, kron  # noqa: PLC0415

    g = _require_discounted(mdp, "linear_program")
    P = require_host(mdp.P, "linear_program")
    _check_batch(mdp, "linear_program")
    R = to_numpy(mdp.R)
    S, A = mdp.S, mdp.A
    batch = mdp.batch_shape
    Wf = state_weights(mdp, weights)
    Pf = P.reshape((-1, S * A, S))
    Rf = R.reshape((-1, S * A))
    E = kron(eye(S, format="csr"), np.ones((A, 1)), format="csr")  # row (s,a) -> e_s
    Vs, Ds = [], []
    for i in range(Pf.shape[0]):
        A_ub = (g * csr_matrix(Pf[i]) - E).tocsr()
        # the LP is solved for r/ρ, ρ = max|r| (V scales by ρ, the duals d do not): HiGHS's
        # tolerances are absolute, and rewards of size 1e-12 left V 24% off
        rho = float(np.max(np.abs(Rf[i]))) or 1.0
        # ... and for u = (1−γ)V/ρ, of size ≤ 1 at every γ (the rows are the MDP's rows times
        # 1 − γ, so the duals d are the marginals times 1 − γ): at γ = 1 − 1e-5, V/ρ ~ 1e5 and the
        # absolute feasibility tolerance 1e-10 is below its round-off, and HiGHS declared the
        # (always feasible) LP infeasible
        res = highs_linprog(
            Wf[i],
            A_ub=A_ub,
            b_ub=-(1.0 - g) * Rf[i] / rho,
            bounds=[(None, None)] * S,
            method="highs",
        )
        if res.status == 0:
            # V = ρ·(u/(1−γ)): the factor u/(1−γ) = V/ρ is at most 1/(1−γ), while ρ/(1−γ)
            # overflowed for R = ±2^1023 at γ = 0.5 although V* = (1.5, 0.5)·2^1023 is in range
            with np.errstate(over="ignore"):  # (values beyond the float range: refused below)
                Vs.append(rho * (res.x / (1.0 - g)))
            Ds.append(-(1.0 - g) * res.ineqlin.marginals)
            continue
        # near γ = 1 the rows of the u-form sum to 1 − γ and its right-hand sides are of size
        # 1 − γ: at γ = 1 − 1e-9 HiGHS failed (status 4) on one of four random 4-state models;
        # the same LP in relative values solves (_relative_value_lp)
        rel = (
            _relative_value_lp(Pf[i], Rf[i] / rho, Wf[i], g)
            if (1.0 + g) > 64.0 * (1.0 - g)
            else None
        )
        if rel is None or rel.status != 0:
            where = (
                f" (batch index {tuple(int(j) for j in np.unravel_index(i, batch))})"
                if batch
                else ""
            )
            also = "" if rel is None else f"; on its relative-value form: {rel.message}"
            raise SolverError(
                f"HiGHS failed on the LP{where}: {res.message}{also}", status=res.status
            )
        with np.errstate(over="ignore"):  # (values beyond the float range: refused below)
            Vs.append(rho * (rel.x[0] / (1.0 - g) + np.concatenate([[0.0], rel.x[1:]])))
        Ds.append(-rel.ineqlin.marginals)
    xp = mdp.xp
    with np.errstate(over="ignore"):  # (rho/(1−γ)·x beyond the range: refused below)
        V = from_host(np.stack(Vs).reshape(batch + (S,)), mdp.P, mdp.dtype)
    V = _check_in_range(mdp, V, "linear_program", "V*", ("s",), _discounted_scale(g))
    d = from_host(np.clip(np.stack(Ds), 0.0, None).reshape(batch + (S, A)), mdp.P, mdp.dtype)
    Q = _q_values(mdp, V)
    # ties within 1e-9 of each instance's value scale (1e-9 first: max|R|/(1−γ) itself may
    # overflow with V* in range). Per instance: the batch's largest scale made an instance with
    # rewards (0, 1e-6) beside one with 1e6 pick action 0, 100 % of its V* off, with bound 0.1
    atol = from_host(
        (1e-9 * np.max(np.abs(Rf), axis=1) / (1.0 - g)).reshape(batch), mdp.P, mdp.dtype
    )
    near = Q >= xp.max(Q, axis=-1, keepdims=True) - atol[..., None, None]
    pi_lp = xp.argmax(xp.astype(near, xp.int8), axis=-1)  # the lowest index within atol of the max
    # The LP's V is only as good as HiGHS's tolerances, about 1e-10·max|r|/(1−γ) in V, i.e.
    # 1e-10·max|r|/(1−γ)² in the advantages that choose the policy: at γ = 1 − 1e-9 (rewards of
    # size 1) its greedy policy was 3e8 below V* (V* ~ 1e9), returned with converged=True and a
    # bound of 1e9. The policy-improvement check with the exact evaluation (policy iteration from
    # the LP's policy: one evaluation when that policy is optimal) decides it and recovers the
    # optimal policy; its certificate replaces the LP's (round-off instead of HiGHS's tolerances).
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ConvergenceWarning)
        sol = policy_iteration(mdp, pi0=pi_lp)
    for msg in caught:
        if not issubclass(msg.category, ConvergenceWarning):
            warnings.warn_explicit(msg.message, msg.category, msg.filename, msg.lineno)
    if not sol.converged:
        warnings.warn(
            f"linear_program: the policy-improvement check of the LP's policy (policy iteration "
            f"from it) stopped at its max_iter={sol.iterations} with states still changing; "
            f"certified bound {float(xp.max(sol.bound)):.3g}",
            ConvergenceWarning,
            stacklevel=2,
        )
    # d* is the occupancy of an optimal policy from w: HiGHS's where its policy passed the check,
    # else that of the recovered policy (the LP's duals are those of its inaccurate solution)
    same = xp.all(sol.policy == pi_lp, axis=-1)
    if not bool(xp.all(same)):
        W = from_host(Wf.reshape(batch + (S,)), mdp.P, mdp.dtype)
        d = xp.where(same[..., None, None], d, occupancy_measure(mdp, sol.policy, W))
    return MDPSolution(
        sol.policy,
        sol.V,
        sol.Q,
        sol.iterations,
        sol.converged,
        sol.bound,
        sol.trace,
        "linear_program",
        occupancy=d,
        duals=d,
    )
