r"""Average-reward (gain) criterion: policy evaluation and exact optimal-gain solvers.

For a stationary policy ``π`` with chain ``P_π`` and reward ``r_π`` the *gain* and
*bias* are

    g^π = P_π* r_π,        h^π = H_π r_π,   H_π = (I − P_π + P_π*)^{-1}(I − P_π*),

where ``P_π*`` is the Cesàro limit (:func:`rltheory.mdp.mixing.limiting_matrix`)
and ``H_π`` the deviation matrix. They solve the evaluation equations

    (I − P_π) g = 0,      g + (I − P_π) h = r_π,      P_π* h = 0

(Puterman 1994, §8.2.3, eqs. (8.2.11)–(8.2.12) and Thm 8.2.6). For a unichain
``P_π`` the gain is the constant ``g = μ_πᵀ r_π`` and the normalisation reads
``μ_πᵀ h = 0``. Optimal gains solve the optimality equation
``g* + h*(s) = max_a [r(s,a) + Σ_s' P(s'|s,a) h*(s')]`` (unichain and weakly
communicating models, where ``g*`` is constant; Puterman §8.4 and Prop. 8.3.1),
or the nested multichain equations ``max_a Σ_s' P(s'|s,a) g(s') = g(s)``,
``max_{a∈B_s} [r(s,a) + P h](s) = g(s) + h(s)`` (§9.1).

Policy evaluation (:func:`gain_bias`) and the solvers' result type live in
:mod:`rltheory.mdp.average_evaluation`, policy iteration in :mod:`rltheory.mdp.average_pi`;
both are re-exported here.
Solvers: :func:`relative_value_iteration` (with the aperiodicity transform),
:func:`average_policy_iteration` (unichain §8.6 and multichain §9.2) and
:func:`average_linear_program` (unichain §8.8 and multichain §9.3; its dual
solution is the stationary state-action frequency of an optimal policy).
Solvers meant for unichain / weakly communicating models refuse other models with
an :class:`~rltheory.errors.InvalidModelError` that names the offending classes.

References
----------
Puterman, M. L. (1994). *Markov Decision Processes*. Wiley. Ch. 8 (unichain / weakly
communicating models), Ch. 9 (multichain models).
Odoni, A. R. (1969). On finding the maximal gain for Markov decision processes.
*Operations Research* 17(5), 857–860.
"""

from __future__ import annotations

import hashlib
import warnings
from typing import Any

import numpy as np

from .._numerics import highs_linprog
from .._validate import as_real_array, check_positive_int, check_tolerance, real_scalar
from ..backend import from_host, require_host, to_numpy
from ..errors import ConvergenceWarning, SolverError
from ..trace import TraceRecorder
from ._occupancy_lp import flow_matrix, state_weights
from .average_evaluation import (
    AverageRewardSolution,
    GainBias,
    _evaluate,
    _require_average,
    _roundoff,
    gain_bias,
)
from .average_lp_completion import _fastest_reach_actions, _reach_actions  # noqa: F401 (re-exported)
from .average_lp_residual import _UNBOUNDED, _multichain_lp_residual, _multichain_with_sum_row
from .average_pi import (
    _gain_rtol,
    _gain_step,
    _per_instance,
    _policy_gap,
    average_policy_iteration,
)
from .bellman import (
    _greedy,
    _q_values,
    policy_reward,
    policy_transition_matrix,
)
from .discounted import _Roundoff
from .model import FiniteMDP
from .stationary import _flag
from .structure import require_weakly_communicating

__all__ = [
    "GainBias",
    "AverageRewardSolution",
    "gain_bias",
    "aperiodicity_transform",
    "relative_value_iteration",
    "average_policy_iteration",
    "average_linear_program",
]


def _check_tau(tau: Any) -> float:
    """``tau`` must be a real number in ``(0, 1]`` (numpy scalars included; not a bool)."""
    v = real_scalar(tau)
    if not (0.0 < v <= 1.0):  # NaN (also what real_scalar gives for bools and strings) fails
        raise ValueError(f"tau must lie in (0, 1]; got {tau!r}")
    return v


def aperiodicity_transform(mdp: FiniteMDP, tau: float) -> FiniteMDP:
    r"""``P̃ = τP + (1−τ)I``, ``r̃ = τr``: same optimal policies, ``g̃ = τg``, ``h̃ = h``.

    For every policy, ``g̃^π = τ g^π`` and ``h̃^π = h^π`` (substitute into
    ``g̃ + h̃ = τ r_π + (1−τ) h̃ + τ P_π h̃``), and every transformed chain has a
    self-loop at each state, hence is aperiodic for ``τ < 1`` (Puterman 1994, §8.5.4).

    Examples
    --------
    >>> import numpy as np
    >>> from rltheory.mdp import FiniteMDP
    >>> swap = FiniteMDP(np.array([[[0., 1.]], [[1., 0.]]]), np.array([[1.], [0.]]), gamma=None)
    >>> aperiodicity_transform(swap, 0.5).P[0, 0]
    array([0.5, 0.5])
    """
    if not isinstance(mdp, FiniteMDP):
        raise TypeError(f"aperiodicity_transform expects a FiniteMDP; got {type(mdp).__name__}")
    tau = _check_tau(tau)
    xp = mdp.xp
    eye = xp.eye(mdp.S, dtype=mdp.dtype, device=mdp.P.device)[:, None, :]
    return mdp.replace(P=tau * mdp.P + (1.0 - tau) * eye, R=tau * mdp.R)


def _odoni(xp: Any, mdp: FiniteMDP, v: Any, ro: _Roundoff) -> tuple[Any, Any, Any, Any]:
    r"""``Q = r + P v``, ``Δ = max_a Q − v`` and certified Odoni bounds ``lo ≤ g* ≤ hi``.

    The computed ``Δ`` is within ``ε = e(v) + 3u‖Δ‖∞`` of the exact ``T v − v`` of the
    row-normalised model (:func:`_roundoff`; the subtraction and the span ``hi − lo`` are rounded
    relative to ``‖Δ‖∞``), so ``lo = min Δ − ε ≤ g* ≤ max Δ + ε = hi``, and the policy greedy for the
    computed ``Q`` (``T^π v = T v`` up to ``e``) has ``g^π ≥ lo``. Returns ``(Q, lo, hi, ε)``.
    """
    Q = _q_values(mdp, v, 1.0)
    D = xp.max(Q, axis=-1) - v
    d_lo, d_hi = xp.min(D, axis=-1), xp.max(D, axis=-1)
    eps = ro.sweep(v) + 3.0 * ro.u * xp.maximum(xp.abs(d_lo), xp.abs(d_hi))
    return Q, d_lo - eps, d_hi + eps, eps


def relative_value_iteration(
    mdp: FiniteMDP,
    *,
    tau: float = 0.5,
    tol: float = 1e-8,
    max_iter: int = 100_000,
    ref_state: int = 0,
    v0: Any = None,
) -> AverageRewardSolution:
    r"""Relative value iteration with the aperiodicity transform, certified by Odoni's bounds.

    On the transformed model ``P̃ = τP + (1−τ)I``, ``r̃ = τr`` (same optimal policies,
    ``g̃ = τg``, ``h̃ = h``; Puterman 1994, §8.5.4):

        w_k = T̃ v_k = max_a [τ r + τ P v_k + (1−τ) v_k],     v_{k+1} = w_k − w_k(ref_state) 1.

    With ``Δ_k = (w_k − v_k)/τ = T v_k − v_k`` (undiscounted ``T``), the Odoni bounds
    ``min Δ_k ≤ g* ≤ max Δ_k`` hold for every model with constant optimal gain, and
    the greedy policy satisfies ``g^π ≥ min Δ_k`` (Odoni 1969; Puterman §8.5.2).
    The iteration stops once ``bound ≤ tol``, ``bound = sp(Δ_k)`` plus the round-off of the
    computed ``Δ_k`` (:func:`_odoni`: ``2e(v_k) + 6u‖Δ_k‖∞`` with ``e`` Higham's ``γ_{S+2}``
    allowance and the row-sum defect of the stored ``P``, plus ``2u|gain|``); then
    ``|gain − g*| ≤ bound/2`` and ``g* − g^policy ≤ bound`` for the row-normalised model. Without
    the allowance a float32 model with rewards 1e6 was certified with bound 0 while the gain was off
    by 0.0015. A ``tol`` below that floor ends with ``converged=False`` and a warning naming it, and
    so does an iterate equal to an earlier one (the sweep is deterministic: a cycle, e.g. ``tau=1``
    on a periodic chain, which ran to ``max_iter`` before).

    Convergence: ``sp(Δ_k) → 0`` for weakly communicating models and ``τ < 1`` (all
    transformed chains aperiodic; Puterman §8.5.4, §9.5.3), geometrically with the
    rate of the optimal policy's chain ``max_{λ≠1}|τλ + 1 − τ|`` asymptotically (see
    :func:`rltheory.bounds.average.rvi_rate`). It is not a contraction in general,
    so no a-priori iteration count is stated.

    Parameters
    ----------
    mdp : FiniteMDP
        Average-reward model (``gamma=None``), possibly batched, weakly communicating.
    tau : float in (0, 1]
        Aperiodicity transform (``tau=1``: plain RVI, which may oscillate on periodic chains).
    tol : float
        Stop when ``max Δ − min Δ ≤ tol`` in every instance.
    max_iter : int
    ref_state : int
    v0 : array (..., S), optional

    Returns
    -------
    AverageRewardSolution
        ``gain`` = midpoint of the bounds, ``bias`` = ``v`` with ``v(ref_state) = 0``,
        ``bound`` = ``sp(Δ)`` plus its round-off; trace metrics ``span``, ``lower``, ``upper``
        (the certified Odoni bounds) and ``bound``.

    Raises
    ------
    InvalidModelError
        The model is not weakly communicating (its closed classes are named).
    ValueError
        Bad settings, or ``gamma`` is not None.

    Examples
    --------
    >>> import numpy as np
    >>> from rltheory.mdp import FiniteMDP
    >>> P = np.array([[[0.9, 0.1], [0.2, 0.8]], [[0.5, 0.5], [0.1, 0.9]]])
    >>> R = np.array([[1.0, 0.0], [0.0, 2.0]])
    >>> res = relative_value_iteration(FiniteMDP(P, R, gamma=None), tol=1e-10)
    >>> res.policy, round(float(res.gain), 6)  # g* = μᵀr = (1/9, 8/9)·(0, 2) = 16/9
    (array([1, 1]), 1.777778)
    """
    _require_average(mdp, "relative_value_iteration")
    tau = _check_tau(tau)
    tol = check_tolerance(tol)
    max_iter = check_positive_int(max_iter, "max_iter")
    if (
        isinstance(ref_state, bool)
        or not isinstance(ref_state, (int, np.integer))
        or not 0 <= ref_state < mdp.S
    ):
        raise ValueError(f"ref_state must be a state index in [0, {mdp.S}); got {ref_state!r}")
    require_weakly_communicating(mdp, "relative_value_iteration")
    xp = mdp.xp
    shape = mdp.batch_shape + (mdp.S,)
    v = (
        xp.zeros(shape, dtype=mdp.dtype, device=mdp.P.device)
        if v0 is None
        else _per_instance(
            xp, as_real_array(v0, "v0", (mdp.S,), ("s",), xp, mdp.dtype), mdp, "v0", "start vector"
        )
    )
    ro = _roundoff(mdp)
    rec = TraceRecorder()
    seen: dict[
        bytes, int
    ] = {}  # digests of the iterates: the map is deterministic, so a repeat is a cycle
    it = 0
    while True:
        key = hashlib.blake2b(to_numpy(v).tobytes(), digest_size=16).digest()
        cycle = seen.get(key)
        seen[key] = it
        Q, lo, hi, eps = _odoni(xp, mdp, v, ro)
        gain = 0.5 * (lo + hi)
        # certified lo ≤ g^π ≤ g* ≤ hi; the midpoint is rounded by u|gain|, the sum by ~4u
        floor = 2.0 * eps + 2.0 * ro.u * xp.abs(gain)
        bound = (hi - lo + 2.0 * ro.u * xp.abs(gain)) * (1.0 + 4.0 * ro.u)
        span = hi - lo - 2.0 * eps  # sp(Δ) of the computed Δ
        rec.record(it, span=span, lower=lo, upper=hi, bound=bound)
        done = bool(xp.all(bound <= tol))
        # an instance whose round-off allowance alone reaches tol and whose span part is down to
        # that level (bound ≤ 2·floor) cannot be certified by more sweeps: stop, unconverged
        stuck = bool(xp.all((bound <= tol) | ((floor >= tol) & (bound <= 2.0 * floor))))
        if done or stuck or it >= max_iter or cycle is not None:
            if not done:
                floor_max = float(xp.max(floor))
                where = f"at max_iter={max_iter}" if it >= max_iter else f"after {it} sweeps"
                why = (
                    f"; tol={tol:g} is below the round-off floor {floor_max:.3g} of the certificate in this dtype"
                    if floor_max >= tol
                    else ""
                )
                if cycle is not None and floor_max < tol:  # (tau=1 on a 2-cycle: 100000 sweeps)
                    why = (
                        f": v_{it} = v_{cycle}, a cycle of period {it - cycle} that no further sweep "
                        "leaves"
                        + (" (tau=1 on a periodic chain: use tau < 1)" if tau == 1.0 else "")
                    )
                warnings.warn(
                    f"relative_value_iteration stopped {where} with bound "
                    f"{float(xp.max(bound)):.3g} > tol={tol:g}{why}",
                    ConvergenceWarning,
                    stacklevel=2,
                )
            pi = _greedy(Q)
            h = v - v[..., ref_state : ref_state + 1]
            return AverageRewardSolution(
                pi, gain, h, it, done, bound, rec.finish(), "relative_value_iteration"
            )
        w = tau * xp.max(Q, axis=-1) + (1.0 - tau) * v
        v = w - w[..., ref_state : ref_state + 1]
        it += 1


def average_linear_program(
    mdp: FiniteMDP, *, multichain: bool = False, weights: Any = None
) -> AverageRewardSolution:
    r"""Average-reward linear programs (scipy HiGHS dual simplex); host only.

    *Unichain / weakly communicating* (Puterman 1994, §8.8): the dual LP

        max_x Σ r(s,a) x(s,a)  s.t.  Σ_a x(j,a) = Σ_{s,a} P(j|s,a) x(s,a) ∀j,  Σ x = 1,  x ≥ 0

    ranges over stationary state-action frequencies; its optimum ``x*`` is the
    stationary frequency of an optimal policy and its value is ``g*``. The primal
    ``min g s.t. g + h(s) ≥ r(s,a) + Σ_j P(j|s,a) h(j)`` gives ``(g*, h)`` as LP duals.
    Policy: on ``S_x = {s : Σ_a x*(s,a) > 0}`` (closed under the support of ``x*``)
    the action with the largest ``x*(s,·)``; elsewhere the actions minimising the expected time
    to reach ``S_x`` (:func:`~rltheory.mdp.average_lp_completion._fastest_reach_actions`), so
    those states are transient and the policy's gain is ``g*`` everywhere.

    *Multichain* (Puterman §9.3, Thm 9.3.8): variables ``x, y ≥ 0`` with
    ``Σ_a x(j,a) − Σ P(j|s,a) x(s,a) = 0`` and
    ``Σ_a x(j,a) + Σ_a y(j,a) − Σ P(j|s,a) y(s,a) = α_j``; value ``Σ_j α_j g*(j)``. The
    duals of the second block are ``g*``. Policy: argmax of ``x*(s,·)`` on ``S_x``,
    of ``y*(s,·)`` elsewhere. An *unbounded* verdict (never true: ``Σx = 1`` is implied; HiGHS's
    presolve gave it for transition probabilities ``~1e-7``) is re-solved with the row ``Σx = 1``
    stated (:func:`_multichain_with_sum_row`).

    Parameters
    ----------
    mdp : FiniteMDP
        Average-reward model (batched models are solved one instance at a time).
    multichain : bool
    weights : array (S,), optional
        Multichain only: strictly positive ``α`` (default: ``mu`` if positive, else uniform);
        ``ValueError`` when given with ``multichain=False``.

    Returns
    -------
    AverageRewardSolution
        ``occupancy = x*``. Unichain: ``gain = min_s g^policy(s)`` (equal to ``Σ r x*`` up to
        round-off when HiGHS returns a feasible ``x*``; a lower bound on ``g*`` even when a flow
        below its 1e-10 feasibility tolerance was ignored) and
        ``bound`` = the Odoni gap of the policy's bias ``h^π`` plus its round-off
        (:func:`_policy_gap`), so that ``|g* − gain| ≤ bound`` and ``g* − g^policy(s) ≤ bound``
        (Odoni) for the row-normalised model ``P/σ``, which is also the one the LP is built from.
        (``gain ≤ g*`` holds only up to the rounding of the computed ``g^policy``: 1.6e-10 above
        ``g* = 1068778.19...`` on a float64 model with rewards up to 2e6, bound 1.2e-8.)
        Multichain: ``gain`` = :func:`gain_bias` of the returned policy (per state; the LP's duals
        were off by 1.0 = max|r| when a transition of probability 2e-14 carried a gain
        improvement, below HiGHS's tolerances), ``bias`` = the LP's ``h``, and ``bound`` = LP
        optimality residual (primal
        infeasibility of ``(g, h)`` and ``|Σ α g − Σ r x*|``) plus its round-off
        (:func:`_multichain_lp_residual`), ``≥`` the exact residual of the returned ``(g, h, x*)``
        for ``P/σ`` (not a bound on ``|g − g*|``; the gap term bounds ``Σ_j α_j (g*(j) − g(j))``
        up to the LP's own error). ``converged=False`` with a ConvergenceWarning when the gain step
        of multichain policy iteration (:func:`rltheory.mdp.average_pi._gain_step`) finds a gain
        improvement of the returned policy that the LP's tolerances hid.

    Raises
    ------
    InvalidModelError
        Unichain mode on a model that is not weakly communicating (classes named).
    SolverError
        HiGHS does not report optimality (status attached).
    TypeError
        Device arrays (host-only routine).
    """
    _require_average(mdp, "average_linear_program")
    multichain = _flag(multichain, "multichain")
    P = require_host(mdp.P, "average_linear_program")
    R = to_numpy(mdp.R)
    if not multichain:
        if weights is not None:  # the unichain LP has no weights: they were silently ignored
            raise ValueError(
                "average_linear_program: weights apply to the multichain LP only (multichain=True); "
                "the unichain LP maximises the gain, which is the same from every state"
            )
        require_weakly_communicating(mdp, "average_linear_program")
    S, A = mdp.S, mdp.A
    batch = mdp.batch_shape
    W = state_weights(mdp, weights)
    E = np.kron(np.eye(S), np.ones((1, A)))  # [S, S*A]: row j sums x(j, ·)
    pis, gains, biases, occs = [], [], [], []
    # the LP is about the row-normalised model P/σ (the one the certificates are about): float32 rows
    # cast to float64 miss 1 by ~1e-8, far above HiGHS's 1e-10 feasibility tolerance, and the flow
    # constraints were then infeasible (13 of 40 float32 probe models raised SolverError)
    P = np.asarray(P, dtype=np.float64)
    P = P / P.sum(-1, keepdims=True)
    R = np.asarray(R, dtype=np.float64)
    for i, (Pi, Ri) in enumerate(
        zip(P.reshape((-1, S, A, S)), R.reshape((-1, S * A)), strict=True)
    ):
        flow = flow_matrix(Pi, 1.0)
        if multichain:
            Z = np.zeros_like(flow)
            A_eq = np.block([[flow, Z], [E, flow]])
            b_eq = np.concatenate([np.zeros(S), W[i]])
            c = np.concatenate([-Ri, np.zeros(S * A)])
        else:
            A_eq = np.vstack([flow, np.ones((1, S * A))])
            b_eq = np.concatenate([np.zeros(S), [1.0]])
            c = -Ri
        rho = float(np.max(np.abs(Ri))) or 1.0  # solved for r/ρ: the duals (g, h) scale by ρ
        res = highs_linprog(c / rho, A_eq=A_eq, b_eq=b_eq, bounds=(0, None))
        first = None
        if multichain and res.status == _UNBOUNDED:
            first, res = res, _multichain_with_sum_row(c / rho, A_eq, b_eq, S * A)
        if res.status != 0:
            where = (
                f" (batch index {tuple(int(j) for j in np.unravel_index(i, batch))})"
                if batch
                else ""
            )
            also = (
                f"; re-solved with the implied row Σx = 1 after its first verdict ({first.message}): "
                if first is not None
                else ": "
            )
            raise SolverError(
                f"HiGHS failed on the average-reward LP{where}{also}{res.message}",
                status=res.status,
            )
        y_dual = -rho * res.eqlin.marginals
        if first is not None:  # the Σx row's multiplier z: the gains are g + z (see below)
            y_dual = y_dual[: 2 * S] + np.concatenate([np.zeros(S), np.full(S, y_dual[2 * S])])
        x = np.clip(res.x[: S * A], 0.0, None).reshape(S, A)
        visited = x.sum(-1) > 1e-10
        pi = np.argmax(x, axis=-1)
        if multichain:
            g, h = y_dual[S:], y_dual[:S]
            y = np.clip(res.x[S * A :], 0.0, None).reshape(S, A)
            pi = np.where(visited, pi, np.argmax(y, axis=-1))
        else:
            g, h = y_dual[S], y_dual[:S]
            reach = _fastest_reach_actions(Pi, visited)
            pi = np.where(visited, pi, reach)
        pis.append(pi)
        gains.append(g)
        biases.append(h)
        occs.append(x)
    xp = mdp.xp
    pi = from_host(np.stack(pis).reshape(batch + (S,)), mdp.P)
    gain_shape = batch + ((S,) if multichain else ())
    gain = from_host(np.asarray(gains).reshape(gain_shape), mdp.P, mdp.dtype)
    bias = from_host(np.stack(biases).reshape(batch + (S,)), mdp.P, mdp.dtype)
    occ = from_host(np.stack(occs).reshape(batch + (S, A)), mdp.P, mdp.dtype)
    if multichain:
        # the LP's duals are only as good as HiGHS's 1e-10 tolerances: a constraint p·(g(1) − g(0)) ≥ 0
        # with p = 2e-14 (a rare door to a better class) is met by g(0) = 0, and gains came back 1.0
        # below g* (p = 2e-14) or 3e-8 above max r (p = 1e-9). The returned gain is the evaluation of
        # the returned policy (as in the unichain branch); h stays the LP's (the policy's own bias,
        # normalised by P*h = 0, need not satisfy g + h ≥ r + P h at the other actions). The residual
        # then shows where the duals' g and the policy's disagree
        gain = _evaluate(xp, policy_transition_matrix(mdp, pi), policy_reward(mdp, pi), True)[0]
        resid = _multichain_lp_residual(
            xp, mdp, gain, bias, occ, from_host(W.reshape(batch + (S,)), mdp.P, mdp.dtype)
        )
        # the residual is no bound on g* − g: a gain improvement p·Δg through a transition of
        # probability p is a residual of p·Δg. Policy iteration's gain step (with its error bars)
        # on the returned policy decides whether the LP's tolerances hid one (two-door ladder,
        # p = 1e-10: policy 0.8 below g* at two states, residual 1.1e-5)
        ro = _roundoff(mdp)
        tau = _gain_rtol(ro.u, S) * xp.max(xp.abs(mdp.R), axis=(-2, -1))
        better = to_numpy(_gain_step(xp, mdp.P, gain, pi, tau, ro.a)[0] != pi)
        if better.any():
            idx = tuple(int(j) for j in np.argwhere(better)[0])
            warnings.warn(
                f"average_linear_program(multichain=True): the LP's policy misses a gain improvement at "
                f"state {idx[-1]}{f' (batch index {idx[:-1]})' if idx[:-1] else ''} (a transition "
                "below HiGHS's 1e-10 tolerances); use average_policy_iteration(mdp, multichain=True, "
                "pi0=result.policy)",
                ConvergenceWarning,
                stacklevel=2,
            )
        converged = not better.any()
    else:
        # Odoni: value(x*) <= g* <= max_s (T h - h)(s) for a feasible x*. HiGHS meets the flow
        # constraints to 1e-10 only, so a flow δ·x(s, a) below that (a leak with probability
        # δ ≈ 1e-12) can be ignored and Σ r x* exceed g*; the gain of the returned policy is a lower
        # bound on g* whatever the solver did, and equals Σ r x* (up to round-off) when x* is feasible.
        # It alone is the gain (min(Σ r x*, g^π) was 2.1e-8 below g* = g^π = 1/2 on the two-state
        # chain switching w.p. 1e-10, whose x* = (0.49999998, 0.50000002) meets its flow rows to 4e-18)
        g_pi, h_pi = _evaluate(xp, policy_transition_matrix(mdp, pi), policy_reward(mdp, pi), True)
        gain = xp.min(g_pi, axis=-1)
        # certified from the policy's own bias (the LP's duals may be those of a float64 copy, or
        # of an infeasible x*): the Odoni gap of h^π plus its round-off (_policy_gap). The gap
        # max(T h − h) − gain of the LP's duals was −0.55 with |gain − g*| = 0.357 (float32) and 0
        # with |gain − g*| = 5.5e-11 (float64, rewards 1e6)
        resid = _policy_gap(xp, mdp, _roundoff(mdp), pi, gain, h_pi)
        converged = True
    rec = TraceRecorder()
    rec.record(1, bound=resid)
    method = "multichain_linear_program" if multichain else "unichain_linear_program"
    return AverageRewardSolution(
        pi, gain, bias, 1, converged, resid, rec.finish(), method, occupancy=occ
    )
