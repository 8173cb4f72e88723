r"""Average-reward policy iteration (Howard), unichain and multichain, with its certificates.

*Unichain* (Puterman 1994, §8.6.1): evaluate ``(g_n, h_n)`` with ``μᵀh = 0``, improve
``π_{n+1}(s) ∈ argmax_a r(s,a) + P(·|s,a)ᵀh_n`` keeping ``π_n(s)`` when it attains the maximum
(finite convergence, Thm 8.6.6). *Multichain* (§9.2.1): improve the gain ``P g`` first and,
where that changes nothing, ``r + P h`` over the gain-maximising actions (Thm 9.2.3).

The comparisons are formed centred (``Σ_j P(j|s,a)(v(j) − v(s))``) with a tie tolerance relative
to the model's size and the dtype's round-off, and the returned bounds are certified: Odoni's gap
``max_s (T h − h)(s) − min_s (T^π h − h)(s)`` for unichain models (Odoni 1969; also used by the
unichain LP) and the residual of the two optimality equations for multichain ones, each with an
explicit round-off allowance (Higham 2002, §3.1).

References
----------
Puterman, M. L. (1994). *Markov Decision Processes*. Wiley. §8.6 (unichain PI), §9.2 (multichain PI).
Odoni, A. R. (1969). On finding the maximal gain for Markov decision processes.
*Operations Research* 17(5), 857–860.
Higham, N. J. (2002). *Accuracy and Stability of Numerical Algorithms*, 2nd ed. SIAM. §3.1.
"""

from __future__ import annotations

import warnings
from typing import Any

from .._validate import check_positive_int
from ..backend import to_numpy
from ..errors import ConvergenceWarning, InvalidModelError
from ..trace import TraceRecorder
from .average_evaluation import AverageRewardSolution, _evaluate, _require_average, _roundoff
from .bellman import _greedy, as_stochastic_policy, policy_reward, policy_transition_matrix
from .discounted import _Roundoff
from .model import FiniteMDP
from .stationary import _first_violation, _flag

__all__ = ["average_policy_iteration"]


def _select(xp: Any, Q: Any, pi: Any) -> Any:
    onehot = pi[..., None] == xp.arange(Q.shape[-1], device=Q.device)
    return xp.sum(xp.where(onehot, Q, xp.zeros_like(Q)), axis=-1)


def _per_instance(xp: Any, x: Any, mdp: FiniteMDP, field: str, what: str) -> Any:
    """``x[..., S]`` broadcast to the model's ``batch_shape + (S,)``, or a ``ValueError`` naming ``field``.

    (numpy's ``broadcast_to`` said only "input operand has more dimensions than allowed by the axis
    remapping" or "operands could not be broadcast together", naming neither the argument nor the
    model's batch shape.)"""
    lead, batch = tuple(x.shape[:-1]), mdp.batch_shape
    if len(lead) > len(batch) or any(
        n not in (1, b) for n, b in zip(lead[::-1], batch[::-1], strict=False)
    ):
        raise ValueError(
            f"{field}'s batch shape {lead} does not broadcast to the model's batch shape {batch} "
            f"(one {what} per instance)"
        )
    return xp.broadcast_to(x, batch + (mdp.S,))


def _centered(xp: Any, P: Any, v: Any) -> Any:
    """``Σ_j P(j|s,a) (v(j) − v(s))`` of shape ``[..., S, A]``: ``(P v)(s, a) − v(s)`` without forming ``P v``.

    Rounding is then relative to the differences ``|v(j) − v(s)|`` over the successors, not to ``|v|``:
    a bias of size ``1/δ`` (states coupled with probability ``δ``) otherwise puts a round-off of
    ``ε/δ`` into every comparison at every state."""
    return xp.sum(P * (v[..., None, None, :] - v[..., :, None, None]), axis=-1)


def _tie_rtol(u: float) -> float:
    """Relative tie tolerance of PI's improvement steps: ``max(1e-10, 2¹⁰u)`` (``u`` the unit round-off).

    1e-10 in float64; ``2¹⁰u ≈ 6.1e-5`` in float32, where the evaluation's round-off (``~u·max|r|``
    times the conditioning of the chains) exceeds 1e-10 of the model's size: with 1e-10 a float32
    multichain model with rewards ~2e8 read noise of size 128 in ``P g − g`` as an improvement and
    cycled between two policies up to ``max_iter``."""
    return max(1e-10, 1024.0 * u)


def _gain_rtol(u: float, S: int) -> float:
    """Gain resolution of the multichain step (a) per unit of probability: ``64(S + 2)u``.

    ``g = P* r`` is within about ``(S + 2)u·max|r|`` of the exact gain (``P*`` accurate to a few
    ``u``); 64 is the margin. :func:`_gain_step` scales it by ``max|r|`` and by the probability that
    an action moves to a state of a different computed gain (1e-10·max|r| per state, the step (b)
    tolerance, hid gain improvements ``p·Δg`` through a door crossed with probability ``p ≤ 1e-10``:
    on ``two_room_mdp(4, 1e-12)`` (communicating, ``g* = 1/3``) PI stopped, converged, with gain 0
    in the left room)."""
    return 64.0 * (S + 2) * u


def _gain_step(xp: Any, P: Any, g: Any, pi: Any, tau: Any, a: float) -> tuple[Any, Any, Any]:
    r"""Multichain step (a): ``π(s) ∈ argmax_a D(s, a)``, ``D(s, a) = Σ_j P(j|s,a)(g(j) − g(s))``.

    Each computed ``D(s, a)`` gets an error bar ``N(s, a) = τ·m(s, a) + a·Σ_j P(j|s,a)|g(j) − g(s)|``
    with ``m(s, a)`` the probability of moving to a state whose computed gain differs from
    ``g(s)`` (the other terms are exact zeros: ``g`` is the same number on a recurrent class),
    ``τ`` the gain resolution (:func:`_gain_rtol` times ``max|r|``) and ``a = γ_{S+2}`` the summation's
    round-off. ``π(s)`` is kept while ``D + N`` at ``π(s)`` reaches ``max_b (D − N)(s, b)``;
    otherwise the action maximising ``D − N`` is taken, a genuine improvement. The error bar
    scales with the mass that leaves, not with the state: a per-state tolerance of
    ``64(S + 2)u·max|r|`` took ``D = p·Δg`` for a tie when ``p ≲ 64(S + 2)u`` and PI returned,
    ``converged=True``, a policy whose gain was ``Δg = max|r|`` below ``g*`` (gain 0 at a state
    where one action reaches a reward-1 absorbing state with probability ``p = 2e-14``).

    Returns ``(policy, D, allowed)`` with ``allowed`` the actions whose ``D + N`` reaches
    ``max_b (D − N)(s, b)`` (the set ``B_s`` of step (b))."""
    diff = g[..., None, None, :] - g[..., :, None, None]  # g(j) − g(s), [..., S, 1, S]
    D = xp.sum(P * diff, axis=-1)
    moved = xp.sum(xp.where(diff != 0, P, xp.zeros_like(P)), axis=-1)
    N = tau[..., None, None] * moved + a * xp.sum(P * xp.abs(diff), axis=-1)
    best_lo = xp.max(D - N, axis=-1)
    allowed = D + N >= best_lo[..., None]
    keep = _select(xp, D + N, pi) >= best_lo
    return xp.where(keep, pi, _greedy(D - N)), D, allowed


def _improve(
    xp: Any, Q: Any, pi: Any, scale: Any, allowed: Any = None, rtol: float = 1e-10
) -> tuple[Any, Any, Any]:
    """Greedy step keeping ``π(s)`` when it is within the tie tolerance of the best allowed action.

    The tolerance at state ``s`` is ``rtol·(scale + max_a|Q(s, a)|)`` (``rtol`` from :func:`_tie_rtol`)
    with ``scale = max|r|`` per instance: relative to the model's size (an absolute floor of 1e-10
    made every action a tie at reward size 1e-12) and to the compared values of that state only (one
    tolerance from the largest ``|Q|`` of the model made improvements of size 0.8 ties at the states
    where ``Q`` is of order 1 when elsewhere it was 1e10). Returns ``(policy, max_a Q, tolerance[..., S])``."""
    if allowed is not None:
        Q = xp.where(allowed, Q, xp.full_like(Q, -float("inf")))
    qmax = xp.max(Q, axis=-1)
    tol = rtol * (
        scale[..., None] + xp.max(xp.abs(xp.where(xp.isfinite(Q), Q, xp.zeros_like(Q))), axis=-1)
    )
    keep = _select(xp, Q, pi) >= qmax - tol
    return xp.where(keep, pi, _greedy(Q)), qmax, tol


def _policy_gap(xp: Any, mdp: FiniteMDP, ro: _Roundoff, pi: Any, g: Any, h: Any) -> Any:
    r"""Certified ``|g − g*|`` and ``g* − g^π`` from any ``h`` (Odoni; unichain PI and the LP).

    With ``x(s, a) = r(s,a) + Σ_j P(j|s,a)(h(j) − h(s))`` (:func:`_centered`), Odoni's bounds
    ``min_s x(s, π(s)) ≤ g^π(s') ≤ g* ≤ max_{s,a} x(s, a)`` hold for the exact ``x`` of the
    row-normalised model; the computed one is within ``e = a‖r‖∞ + 2(a + δ)sp(h)``
    (:func:`_roundoff` at ``2·sp(h)``, which covers the rounded differences ``h(j) − h(s)``). So
    ``hi = max x + e`` and ``lo = min_s x(s, π(s)) − e`` enclose ``g*`` and ``g^π``, and
    ``max(hi − lo, hi − g, g − lo)`` bounds ``|g − g*|`` and ``g* − g^π`` whatever the computed
    gain ``g`` is (rounded differences: ``2u(|hi| + |lo| + |g|)``, the sum ``4u``). Without it the
    computed gap was 0 while ``|g − g*|`` was 0.0015 (float32, rewards 1e6).
    """
    x = mdp.R + _centered(xp, mdp.P, h)
    sp_h = xp.max(h, axis=-1) - xp.min(h, axis=-1)
    e = ro._sweep(2.0 * sp_h)
    hi = xp.max(x, axis=(-2, -1)) + e
    lo = xp.min(_select(xp, x, pi), axis=-1) - e
    gap = xp.maximum(hi - lo, xp.maximum(hi - g, g - lo))
    return (gap + 2.0 * ro.u * (xp.abs(hi) + xp.abs(lo) + xp.abs(g))) * (1.0 + 4.0 * ro.u)


def _centred_error(xp: Any, ro: _Roundoff, v: Any) -> Any:
    r"""Error of a computed ``r(s,a) + Σ_j P(j|s,a)(v(j) − v(s))`` (:func:`_centered`) against the
    row-normalised model's, per instance: ``a‖r‖∞ + 2(a + δ)sp(v)`` (:func:`_roundoff` at ``2·sp(v)``,
    which covers the rounded differences ``v(j) − v(s)``; also bounds the error without ``r``)."""
    return ro._sweep(2.0 * (xp.max(v, axis=-1) - xp.min(v, axis=-1)))


def _multichain_pi_residual(xp: Any, ro: _Roundoff, D: Any, g: Any, h: Any, amax: Any) -> Any:
    r"""Certified residual of the multichain optimality equations at the computed ``(g, h)``.

    ``ρ₁ = max_s |max_a (P g)(s, a) − g(s)|`` and ``ρ₂ = max_s |max_{a∈B_s} (r + P h)(s, a) − g(s) − h(s)|``
    (``B_s`` the actions the solver took as attaining the first maximum) of the row-normalised model
    ``P/σ``: the computed ``D = P g − g`` and ``amax = max_{B_s}(r + P h − h)`` (:func:`_centered`)
    are within ``_centred_error`` at ``g`` and ``h`` of the exact ones, and ``amax − g`` is rounded by
    ``u``. Returns ``max(ρ₁, ρ₂)`` rounded up. Without the allowance the computed residual was 0
    while the exact one of the returned ``(g, h)`` was 0.027 (float32, rewards ~1e6) and 1.5e-11
    (float64, rewards ~1e3). (``max_a`` is two-sided: a state whose every action has
    ``P g < g`` by round-off also violates the equation.)
    """
    rho1 = xp.max(xp.abs(xp.max(D, axis=-1)), axis=-1) + _centred_error(xp, ro, g)
    d2 = xp.max(xp.abs(amax - g), axis=-1)
    rho2 = d2 * (1.0 + 2.0 * ro.u) + _centred_error(xp, ro, h)
    return xp.maximum(rho1, rho2) * (1.0 + 4.0 * ro.u)


def average_policy_iteration(
    mdp: FiniteMDP, *, multichain: bool = False, pi0: Any = None, max_iter: int = 10_000
) -> AverageRewardSolution:
    r"""Average-reward policy iteration (Howard), unichain or multichain.

    *Unichain* (Puterman 1994, §8.6.1): evaluate ``(g_n, h_n)`` by :func:`gain_bias`
    (``μᵀh = 0``), then ``π_{n+1}(s) ∈ argmax_a r(s,a) + P(·|s,a)ᵀh_n``, keeping
    ``π_n(s)`` when it attains the maximum; stop when ``π_{n+1} = π_n``. Finite
    convergence to an optimal policy in unichain models (Puterman Thm 8.6.6). Each
    evaluated chain is checked: a multichain ``P_π`` raises, naming its classes.

    *Multichain* (Puterman §9.2.1): evaluate ``(g_n, h_n)`` with per-state gains and
    ``P*h = 0``; (a) ``π_{n+1}(s) ∈ argmax_a P(·|s,a)ᵀg_n`` keeping ``π_n(s)`` if
    possible; if that changes nothing, (b) maximise ``r + P h_n`` over the actions
    ``B_s`` attaining (a). Terminates in finitely many steps with an optimal policy
    (Puterman Thm 9.2.3 via lexicographic improvement of ``(g, h)``).

    "Attains the maximum" is decided with the tie tolerance ``rtol·(max|r| + max_a |x(s, a)|)``
    at each state, for the compared quantities ``x(s, a) = r(s,a) + Σ_j P(j|s,a)(h(j) − h(s))``
    (``rtol = max(1e-10, 2¹⁰u)``: 1e-10 in float64, 6.1e-5 in float32, whose evaluation round-off
    otherwise read as improvements and made policies cycle). ``D(s, a) = Σ_j P(j|s,a)(g(j) − g(s))``
    is compared with the error bar ``64(S + 2)u·max|r|`` times the probability of moving to a state
    of different computed gain (plus the summation's round-off; :func:`_gain_step`): ``g`` is one
    number on each recurrent class, so a gain improvement ``p·Δg`` through a transition of any
    probability ``p > 0`` is seen once ``Δg`` exceeds the gain's resolution ``~64(S + 2)u·max|r|``
    (a per-state tolerance hid it for ``p ≲ S·u`` and returned a gain ``Δg`` below ``g*`` as
    converged). These are
    the same comparisons as ``r + Ph`` and ``Pg``, formed without the size of ``h(s)``, which is
    ``~1/δ`` when parts of the chain are coupled with probability ``δ``.

    Parameters
    ----------
    mdp : FiniteMDP
        Average-reward model, possibly batched.
    multichain : bool
        Use the multichain algorithm (gain per state).
    pi0 : int array (..., S), optional
        Initial policy (default: greedy with respect to ``r``).
    max_iter : int
        Cap on improvement steps (ConvergenceWarning when reached). A step that returns to an
        already evaluated policy (possible only through round-off: exact PI improves strictly)
        also stops the iteration early, with ``converged=False`` and a ConvergenceWarning.

    Returns
    -------
    AverageRewardSolution
        ``bound``: unichain — Odoni gap ``max_s (T h − h)(s) − min_s (T^π h − h)(s)`` (and
        ``|g − those|``) plus its round-off (:func:`_policy_gap`), ``≥ |g − g*|, g* − g^policy``;
        multichain — residual of the two optimality equations plus its round-off
        (:func:`_multichain_pi_residual`), ``≥`` the exact residual of the returned ``(g, h)`` (not a
        bound on ``|g − g*|``). Trace metric ``changed``.

    Raises
    ------
    InvalidModelError
        Unichain mode meets a policy whose chain has several recurrent classes.

    Examples
    --------
    >>> import numpy as np
    >>> from rltheory.mdp import FiniteMDP
    >>> P = np.array([[[0.9, 0.1], [0.2, 0.8]], [[0.5, 0.5], [0.1, 0.9]]])
    >>> R = np.array([[1.0, 0.0], [0.0, 2.0]])
    >>> res = average_policy_iteration(FiniteMDP(P, R, gamma=None))
    >>> res.policy, round(float(res.gain), 12), res.iterations  # g* = 16/9
    (array([1, 1]), 1.777777777778, 2)
    """
    _require_average(mdp, "average_policy_iteration")
    multichain = _flag(multichain, "multichain")
    max_iter = check_positive_int(max_iter, "max_iter")
    xp = mdp.xp
    S = mdp.S
    if pi0 is None:
        pi = _greedy(mdp.R)
    else:
        pi = xp.asarray(pi0)
        if not xp.isdtype(pi.dtype, "integral"):
            raise ValueError("pi0 must be a deterministic policy (integer array of shape (..., S))")
        as_stochastic_policy(mdp, pi, field="pi0")
        pi = _per_instance(xp, pi, mdp, "pi0", "start policy")
    rscale = xp.max(xp.abs(mdp.R), axis=(-2, -1))  # the model's size, for the tie tolerances
    ro = _roundoff(mdp)
    rtol = _tie_rtol(ro.u)
    rec = TraceRecorder()
    seen: set[bytes] = set()
    it = 0
    while True:
        P = policy_transition_matrix(mdp, pi)
        r = policy_reward(mdp, pi)
        bad = None if multichain else _first_violation(P, lambda cs: cs.unichain)
        if bad is not None:
            where, cs, idx = bad
            raise InvalidModelError(
                f"unichain policy iteration met the policy {to_numpy(pi)[idx].tolist()}{where} whose chain "
                f"has {cs.describe()}: the model is multichain; use average_policy_iteration(mdp, multichain=True)"
            )
        g, h = _evaluate(xp, P, r, True if multichain else None)
        # the improvement steps compare r + P h − h and P g − g at each state (same argmax and
        # differences as r + P h and P g), formed without the magnitudes of h(s) and g(s)
        adv = mdp.R + _centered(xp, mdp.P, h)
        it += 1
        if multichain:
            tau = _gain_rtol(ro.u, S) * rscale
            new_a, D, allowed = _gain_step(xp, mdp.P, g, pi, tau, ro.a)  # D = P(·|s,a)ᵀ g − g(s)
            changed_a = xp.any(new_a != pi, axis=-1)
            new_b, amax, _ = _improve(xp, adv, pi, rscale, allowed, rtol=rtol)
            new = xp.where(changed_a[..., None], new_a, new_b)
            resid = _multichain_pi_residual(xp, ro, D, g, h, amax)
        else:
            new, amax, _ = _improve(xp, adv, pi, rscale, rtol=rtol)
            resid = _policy_gap(xp, mdp, ro, pi, g, h)
        changed = xp.sum(xp.astype(new != pi, xp.int64), axis=-1)
        rec.record(it, changed=changed, bound=resid)
        n_changed = int(xp.max(changed))
        seen.add(to_numpy(pi).tobytes())
        # exact PI improves strictly, so a policy met again is a round-off cycle: stop it there
        cycle = n_changed > 0 and to_numpy(new).tobytes() in seen
        if n_changed == 0 or it >= max_iter or cycle:
            if n_changed:
                where = (
                    f"after {it} steps: the next policy was already evaluated (a round-off cycle "
                    f"between policies whose values tie to within the {mdp.dtype} evaluation error)"
                    if cycle
                    else f"at max_iter={max_iter}"
                )
                warnings.warn(
                    f"average_policy_iteration stopped {where} with {n_changed} states still changing",
                    ConvergenceWarning,
                    stacklevel=2,
                )
            method = "multichain_policy_iteration" if multichain else "unichain_policy_iteration"
            return AverageRewardSolution(pi, g, h, it, n_changed == 0, resid, rec.finish(), method)
        pi = new
