r"""Bellman operators, exact policy evaluation and occupancy measures.

Notation (discounted, ``γ ∈ [0, 1)``):

* ``Q_V(s, a) = r(s, a) + γ Σ_s' P(s'|s, a) V(s')``                    (:func:`q_values`)
* ``(T V)(s) = max_a Q_V(s, a)``                                       (:func:`bellman_optimality_operator`)
* ``(T^π V)(s) = Σ_a π(a|s) Q_V(s, a)``                                (:func:`bellman_operator`)
* ``V^π = (I − γ P_π)^{-1} r_π``                                      (:func:`evaluate_policy`)
* ``d^π_μ(s) = (1 − γ) Σ_t γ^t Pr(s_t = s | s_0 ~ μ, π)``, i.e.
  ``d^π_μ = (1 − γ) μ^T (I − γ P_π)^{-1}``                             (:func:`state_occupancy`)
* ``d^π_μ(s, a) = d^π_μ(s) π(a|s)``                                    (:func:`occupancy_measure`)

``T`` and ``T^π`` are monotone γ-contractions in the sup norm (Puterman 1994,
Prop. 6.2.4). All functions accept batched models (leading axes of ``P``) and
stochastic ``π[..., s, a]`` or deterministic integer ``π[..., s]`` policies,
and use only array-API calls, so they run on numpy, cupy and array_api_strict.

References
----------
Puterman, M. L. (1994). *Markov Decision Processes*. Wiley. §6.1–6.2.
Kakade, S. & Langford, J. (2002). Approximately optimal approximate RL. ICML. Lemma 6.1.
Agarwal, A., Kakade, S., Lee, J., Mahajan, G. (2021). On the theory of policy gradient
methods. JMLR 22(98). §2 (normalised occupancy measures).

Policies, ``P_π``, ``r_π``, :func:`greedy` and the shared argument and range checks live in
:mod:`rltheory.mdp.policy_chain` and are re-exported here.
The difference-form kernels that keep evaluation and advantages accurate as γ → 1 (the
leave-rate diagonal, the refined solve, the flow-form advantages) live in
:mod:`rltheory.mdp.difference_form`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._validate import as_distribution, as_real_array, check_real
from ..backend import array_namespace, as_float
from .difference_form import _evaluation_matrix, _eye, _flow_advantages, _policy_values
from .model import FiniteMDP

# split out of this module (policies, P_π, r_π, the shared checks); importable from here as before
from .policy_chain import (
    _batches,
    _check_in_range,
    _discount,
    _discounted_scale,
    _greedy,  # noqa: F401  (re-exported: value sweeps, policy iteration, horizon, DOMO)
    _reward,
    _transition,
    _validated_policy,
    as_stochastic_policy,
    greedy,
    policy_reward,
    policy_transition_matrix,
)

__all__ = [
    "as_stochastic_policy",
    "q_values",
    "expected_next",
    "bellman_optimality_operator",
    "bellman_operator",
    "greedy",
    "policy_transition_matrix",
    "policy_reward",
    "evaluate_policy",
    "q_function",
    "advantage",
    "state_occupancy",
    "occupancy_measure",
    "performance_difference",
    "expected_value",
]


def q_values(mdp: FiniteMDP, V: Any, *, gamma: float | None = None) -> Any:
    r"""``Q_V(s, a) = r(s, a) + γ Σ_s' P(s'|s, a) V(s')`` for ``V[..., S]``.

    For an average-reward model (``gamma=None``) the undiscounted backup (γ = 1)
    is used unless ``gamma`` is given; a given ``gamma`` must be a finite number in
    ``[0, 1]`` (``ValueError`` otherwise).

    Examples
    --------
    >>> import numpy as np
    >>> from rltheory.mdp import FiniteMDP
    >>> mdp = FiniteMDP(np.ones((1, 2, 1)), np.array([[1.0, 2.0]]), gamma=0.5)
    >>> q_values(mdp, np.array([4.0]))
    array([[3., 4.]])
    """
    if gamma is not None:
        gamma = check_real(gamma, "gamma", low=0.0, high=1.0)
    V = _as_values(mdp, V)
    with np.errstate(over="ignore", invalid="ignore"):  # (an overflow is refused below, located)
        Q = _q_values(mdp, V, gamma)
    g = (mdp.gamma if mdp.gamma is not None else 1.0) if gamma is None else gamma
    return _check_in_range(
        mdp, Q, "q_values", "Q_V = r + gamma P V", ("s", "a"), lambda M: f"at gamma = {g!r}"
    )


def _q_values(mdp: FiniteMDP, V: Any, gamma: float | None = None) -> Any:
    """:func:`q_values` without the checks of ``V`` and ``gamma``: the library's own loops,
    whose ``V`` it computed (one finiteness reduction per iteration, a host sync on a GPU,
    cost 15–20 % of a soft-VI or softmax-PG iteration at S = 50, A = 5)."""
    g = (mdp.gamma if mdp.gamma is not None else 1.0) if gamma is None else gamma
    return mdp.R + g * _expected_next(mdp, V)


def expected_next(mdp: FiniteMDP, V: Any) -> Any:
    r"""``(P V)(s, a) = Σ_s' P(s'|s, a) V(s')`` for ``V[..., S]``; shape ``[..., S, A]``.

    Uses the model's padded successor lists (:attr:`FiniteMDP.successors`) when
    ``P`` is sparse — ``O(SAK)`` gathers — and one dense matrix product otherwise.
    ``V`` must have shape ``(..., S)`` and be finite (located ``ValueError`` otherwise).
    """
    return _expected_next(mdp, _as_values(mdp, V))


def _as_values(mdp: FiniteMDP, V: Any) -> Any:
    """``V[..., S]`` checked (shape, finiteness) and with a batch that broadcasts against the
    model's: a (4, S) ``V`` on a (3,)-batch failed inside numpy's matmul, naming neither."""
    V = as_real_array(V, "V", (mdp.S,), ("s",), mdp.xp, mdp.dtype)
    try:
        np.broadcast_shapes(tuple(V.shape[:-1]), mdp.batch_shape)
    except ValueError:
        raise ValueError(
            f"V's batch shape {tuple(V.shape[:-1])} does not broadcast against the model's batch shape "
            f"{mdp.batch_shape}"
        ) from None
    return V


def _expected_next(mdp: FiniteMDP, V: Any) -> Any:
    xp = mdp.xp
    V = as_float(V, xp, mdp.dtype)
    S, A = mdp.S, mdp.A
    succ = mdp.successors
    if succ is None:
        Pf = xp.reshape(mdp.P, mdp.batch_shape + (S * A, S))
        PV = Pf @ V[..., None]
        return xp.reshape(PV, tuple(PV.shape[:-2]) + (S, A))
    idx, prob = succ
    K = idx.shape[-1]
    batch = tuple(np.broadcast_shapes(tuple(V.shape[:-1]), mdp.batch_shape))
    Vb = xp.broadcast_to(V, batch + (S,))
    ib = xp.broadcast_to(xp.reshape(idx, mdp.batch_shape + (S * A * K,)), batch + (S * A * K,))
    Vg = xp.reshape(xp.take_along_axis(Vb, ib, axis=-1), batch + (S, A, K))
    return xp.sum(prob * Vg, axis=-1)


def bellman_optimality_operator(mdp: FiniteMDP, V: Any) -> Any:
    r"""``(T V)(s) = max_a [ r(s, a) + γ Σ_s' P(s'|s, a) V(s') ]``.

    A monotone γ-contraction in ``‖·‖∞`` whose unique fixed point is ``V*``.
    """
    return mdp.xp.max(q_values(mdp, V), axis=-1)


def bellman_operator(mdp: FiniteMDP, V: Any, pi: Any) -> Any:
    r"""``(T^π V)(s) = Σ_a π(a|s) [ r(s, a) + γ Σ_s' P(s'|s, a) V(s') ]``.

    The sum runs over the actions ``π`` takes (``π(a|s) ≠ 0``), so a ``Q_V(s, a)`` beyond the
    float range of an action ``π`` never takes does not matter; a result beyond the range is a
    located ``ValueError``.
    """
    xp = mdp.xp
    pi = as_stochastic_policy(mdp, pi)
    V = _as_values(mdp, V)
    _batches(
        "bellman_operator",
        ("pi", tuple(pi.shape[:-2])),
        ("V", tuple(V.shape[:-1])),
        ("the model", mdp.batch_shape),
    )
    zero = xp.zeros((), dtype=mdp.dtype, device=mdp.P.device)
    # Q_V of an untaken action may overflow while T^pi V is finite: q_values refused it, and
    # 0 * inf = nan would have too
    with np.errstate(over="ignore", invalid="ignore"):  # (an overflow is refused below, located)
        out = xp.sum(xp.where(pi != 0, pi * _q_values(mdp, V), zero), axis=-1)
    g = mdp.gamma if mdp.gamma is not None else 1.0
    return _check_in_range(
        mdp, out, "bellman_operator", "T^pi V", ("s",), lambda M: f"at gamma = {g!r}"
    )


def evaluate_policy(mdp: FiniteMDP, pi: Any) -> Any:
    r"""Exact discounted value ``V^π = (I − γ P_π)^{-1} r_π`` by one linear solve.

    Parameters
    ----------
    mdp : FiniteMDP
        Discounted model (``gamma`` not None), possibly batched.
    pi : array
        Stochastic ``[..., S, A]`` or deterministic integer ``[..., S]`` policy.

    Returns
    -------
    V : array, shape (..., S)

    Raises
    ------
    ValueError
        ``V^π`` beyond the float range of the model's dtype (``‖V^π‖∞ ≤ max|r|/(1−γ)``; rewards
        1e307 at γ = 0.99 gave ``inf``): the message names the entry, ``max|R|`` and ``γ``.

    Notes
    -----
    Cost ``O(S^3)`` per instance (LU). ``I − γP_π`` is strictly diagonally dominant for
    γ < 1 with condition number ``≤ (1+γ)/(1−γ)`` in ``‖·‖∞``, so a plain solve errs by up to
    ``eps‖V‖/(1−γ)`` (7e-5 relative at γ = 1 − 10⁻¹² in float64, 2 % at γ = 1 − 2⁻²⁰ in
    float32). The matrix is formed with the cancellation-free diagonal
    ``(1−γ) + γΣ_{j≠s}P_π(s, j)`` and, where the condition bound exceeds 64, the solve is refined
    with a residual in difference form (usually one or two extra ``O(S^3)`` solves). Where
    ``ε(1+γ)/(1−γ) > 2⁻⁵`` (γ above ``1 − 1.4e-14`` in float64, ``1 − 7.6e-6`` in float32) the
    pivoted LU's error reaches the size of the smallest eigenvalue ``1−γ`` and the refinement
    stalled (at γ = 1 − 2⁻⁵³ values 70 % off, or numpy's "Singular matrix"); there the solves
    eliminate on the leave rates instead (entrywise accurate factors, ``S`` steps of ``O(S²)``
    array work: 0.3 s at ``S = 1000``). ``V`` is within a few ``eps·max|r_π|/(1−γ)`` of the
    exact value of the stored model at any γ < 1: measured at most ``1.3·eps·max|r_π|/(1−γ)``
    against exact rationals on random models (``S ≤ 6``, dyadic and Dirichlet rows, stochastic
    policies) for γ from 0.999 to ``1 − 2⁻⁵³`` in float64 and to ``1 − 2⁻²⁴`` in float32. The
    bound is in ``max|r_π|/(1−γ)``, not ``max|V|``: where rewards of both signs cancel in ``V``
    the error relative to ``max|V|`` is larger (up to ``94·eps·max|V|`` on those models).

    Examples
    --------
    A single absorbing state with reward 1 has ``V = 1/(1−γ)``:

    >>> import numpy as np
    >>> from rltheory.mdp import FiniteMDP
    >>> evaluate_policy(FiniteMDP(np.ones((1, 1, 1)), np.ones((1, 1)), gamma=0.9), np.array([0]))
    array([10.])
    """
    g = _discount(mdp, None, "evaluate_policy")
    det, pi = _validated_policy(mdp, pi)  # validate once, then two unchecked kernels
    with np.errstate(over="ignore", invalid="ignore"):  # (an overflow is refused below, located)
        V = _policy_values(mdp.xp, g, _transition(mdp, det, pi), _reward(mdp, det, pi)[..., None])
    V = V[..., 0]
    return _check_in_range(
        mdp, V, "evaluate_policy", "the values V^pi", ("s",), _discounted_scale(g)
    )


def q_function(mdp: FiniteMDP, pi: Any) -> Any:
    r"""``Q^π(s, a) = r(s, a) + γ Σ_s' P(s'|s, a) V^π(s')``.

    Raises ``ValueError`` (located, with ``max|R|`` and ``γ``) when ``V^π`` or ``Q^π`` lies
    beyond the float range of the model's dtype (it was returned as ``inf``).
    """
    V = evaluate_policy(mdp, pi)
    with np.errstate(over="ignore", invalid="ignore"):  # (an overflow is refused below, located)
        Q = _q_values(mdp, V)
    return _check_in_range(
        mdp, Q, "q_function", "Q^pi", ("s", "a"), _discounted_scale(float(mdp.gamma))
    )


def advantage(mdp: FiniteMDP, pi: Any) -> Any:
    r"""``A^π(s, a) = Q^π(s, a) − V^π(s)``; satisfies ``Σ_a π(a|s) A^π(s, a) = 0``.

    Raises ``ValueError`` (located, with ``max|R|`` and ``γ``) when ``V^π`` or ``A^π`` lies beyond
    the float range of the model's dtype.

    Notes
    -----
    ``V^π`` comes from :func:`evaluate_policy`, and ``A^π`` from it in flow form,
    ``r(s, a) − (1−γ)V^π(s) + γ Σ_j P(j|s, a)(V^π(j) − V^π(s))``, corrected by one more solve for
    the rounding of the stored ``V^π`` (:func:`_values_and_advantages`). The terms have the size
    of the rewards and of ``J = max_{P(j|s,a) > 0} |V^π(j) − V^π(s)|``, not of ``V^π``, and the
    entries are within a few ``ε·(max|r| + J)`` of the exact ones (``J`` reaches
    ``max|r|/(1−γ)`` only where ``A^π`` does, a pair leading into another closed class): on
    dyadic models against a rational reference at γ from 0 to ``1 − 10⁻¹²`` (float64) and
    ``1 − 2⁻²⁰`` (float32), at most ``0.7·ε·(max|r| + J)``. The direct ``Q^π − V^π``
    subtracts two numbers of size ``max|r|/(1−γ)`` and erred by up to ``0.7·ε·max|r|/(1−γ)``
    (150 on rewards of size 10⁶ at γ = 1 − 10⁻¹²). Cost: two solves (``O(S³)``) plus
    ``O(S²A)`` per instance.
    """
    _, A = _values_and_advantages(mdp, pi)
    return _check_in_range(
        mdp, A, "advantage", "Q^pi or A^pi", ("s", "a"), _discounted_scale(float(mdp.gamma))
    )


def _values_and_advantages(mdp: FiniteMDP, pi: Any) -> tuple[Any, Any]:
    r"""``(V^π, A^π)`` with ``A^π`` in flow form and corrected for the rounding of ``V^π``.

    A stored ``V`` is off the exact ``V^π`` by its rounding, ``ε‖V^π‖∞`` per entry and different
    from entry to entry, and any advantage formed from it inherits that in its differences
    ``V(j) − V(s)``. The correction ``δ = (I − γP_π)^{-1} ρ`` of the residual
    ``ρ = Σ_a π(a|s)(Q_V − V)(s, a)`` (flow form: of the size of the rewards and of ``V``'s
    differences, not of ``V``) is kept apart instead of being added to ``V``, where it would
    round away again: ``A^π = D(V) + D₀(δ)`` with ``D`` the flow advantages and ``D₀`` their
    linear part (:func:`_flow_advantages`). ``δ``'s own solve error lies mostly along the
    constant vector, which ``D₀`` scales by ``1 − γ``. Non-finite entries (values spanning more
    than the float range) skip the correction; the callers refuse what is left non-finite.
    """
    V = evaluate_policy(mdp, pi)
    A = _advantages_of(mdp, V)
    if not bool(mdp.xp.all(mdp.xp.isfinite(A))):
        return V, A
    return V, _corrected_advantages(mdp, as_stochastic_policy(mdp, pi), A)


def _corrected_advantages(mdp: FiniteMDP, pi_s: Any, A: Any) -> Any:
    """``A + D₀(δ)``: the flow advantages ``A`` of a computed ``V ≈ V^π`` (finite; ``π`` as a
    stochastic ``pi_s``) corrected by the solve ``δ`` of their residual
    ``ρ = Σ_a π(a|s) A(s, a)`` (:func:`_values_and_advantages`); ``A`` unchanged where ``δ``
    is not finite."""
    xp = mdp.xp
    g = float(mdp.gamma)
    zero = xp.zeros((), dtype=mdp.dtype, device=mdp.P.device)
    with np.errstate(over="ignore", invalid="ignore"):
        rho = xp.sum(xp.where(pi_s != 0, pi_s * A, zero), axis=-1)
        # one solve, unrefined: δ has the size of ε‖V‖∞/(1−γ) at most, so its solve error
        # ε·κ·‖δ‖ is ε² small off the constant direction (the refinement's extra solves doubled
        # the cost of advantage at S = 1000 and changed nothing at this size)
        Ppi = policy_transition_matrix(mdp, pi_s)
        delta = _policy_values(xp, g, Ppi, rho[..., None], max_refine=0)[..., 0]
        if bool(xp.all(xp.isfinite(delta))):
            A = A + _flow_advantages(mdp, delta, rewards=False)
    return A


def _advantages_of(mdp: FiniteMDP, V: Any) -> Any:
    """``Q_V − V`` in flow form (:func:`_flow_advantages`), with the direct ``Q_V − V`` where a
    difference ``V(j) − V(s)`` left the float range (``V`` spanning more than the largest float);
    non-finite where both are (the callers refuse it, located)."""
    xp = mdp.xp
    with np.errstate(over="ignore", invalid="ignore"):  # (an overflow is refused by the callers)
        A = _flow_advantages(mdp, V)
        if not bool(xp.all(xp.isfinite(A))):
            A = xp.where(xp.isfinite(A), A, _q_values(mdp, V) - V[..., None])
    return A


def state_occupancy(mdp: FiniteMDP, pi: Any, mu: Any = None) -> Any:
    r"""Normalised discounted state occupancy ``d^π_μ = (1−γ) μ^T (I − γ P_π)^{-1}``.

    ``d^π_μ(s) = (1 − γ) Σ_t γ^t Pr(s_t = s)`` with ``s_0 ~ μ`` (the model's
    ``mu`` when ``mu`` is None). It is a probability vector; the unnormalised
    occupancy is ``d / (1 − γ)``.

    Notes
    -----
    One linear solve of ``(I − γP_π)^T``, ``O(S^3)`` per instance, with the diagonal
    ``(1−γ) + γΣ_{j≠s}P_π(s, j)`` (no cancellation), then a division by ``Σ_s d(s)`` (1 in exact
    arithmetic), so the computed ``d`` sums to 1 to round-off for every γ < 1. That solve errs by
    about ``eps·κ``, ``κ = (1+γ)/(1−γ)``; where this exceeds both ``64·eps`` and ``2^-30`` (and
    ``S ≤ 512``), ``d`` is instead ``μᵀW`` with the columns of ``W = (1−γ)(I − γP_π)^{-1}``
    solved and refined to a few ``eps`` each (``O(S^3)`` elementwise work per refinement step,
    several times the cost of the plain solve), so its entries are within a few ``eps`` of the
    exact ones at any γ (at γ = 1 − 10⁻¹² the plain solve misplaced 5.5e-6 of mass between two
    closed classes, in float32 at γ = 1 − 2⁻²⁰ 2.9e-3). The flow constraints hold to the error times ``1−γ``.
    """
    _discount(mdp, None, "state_occupancy")
    if mu is not None:
        mu = as_distribution(mu, "mu", mdp.S, mdp.xp, mdp.dtype)
        det, p = _validated_policy(mdp, pi)
        _batches(
            "state_occupancy",
            ("mu", tuple(mu.shape[:-1])),
            ("pi", tuple(p.shape[: p.ndim - (1 if det else 2)])),
            ("the model", mdp.batch_shape),
        )
    return _state_occupancy(mdp, pi, mu)


def _state_occupancy(mdp: FiniteMDP, pi: Any, mu: Any = None) -> Any:
    """:func:`state_occupancy` without the check of ``mu`` (the drivers check ``ρ`` once; the
    check costs about as much as the solve at S = 50)."""
    g = float(mdp.gamma)
    xp = mdp.xp
    mu = mdp.initial_distribution() if mu is None else as_float(mu, xp, mdp.dtype)
    Ppi = policy_transition_matrix(mdp, pi)
    # the batch of mu may be the larger one (several initial distributions on one model and
    # policy): broadcasting mu to M's batch alone failed with numpy's 'input operand has more
    # dimensions than allowed by the axis remapping'
    kappa = (1.0 + g) / (1.0 - g)  # ‖(I − γP_π)^{-1}‖∞‖I − γP_π‖∞ ≤ κ
    if kappa <= 64.0 or kappa * float(xp.finfo(Ppi.dtype).eps) <= 2.0**-30 or mdp.S > 512:
        # one solve of the transposed system, within about ε·κ of d (≤ 64ε, or ≤ 1e-9); the
        # cancellation-free diagonal where 1 − γ is below 1/32. (Beyond S = 512 the columns'
        # refinement below, O(S³) elementwise work per step, would cost 10–100 solves.)
        M = xp.matrix_transpose(
            _eye(xp, mdp.S, Ppi) - g * Ppi if kappa <= 64.0 else _evaluation_matrix(xp, g, Ppi)[0]
        )
        batch = tuple(np.broadcast_shapes(tuple(M.shape[:-2]), tuple(mu.shape[:-1])))
        M = xp.broadcast_to(M, batch + (mdp.S, mdp.S))
        rhs = xp.broadcast_to((1.0 - g) * mu, batch + (mdp.S,))
        d = xp.linalg.solve(M, rhs[..., None])[..., 0]
    else:
        # d(j) = Σ_s μ(s) W(s, j) with W = (1−γ)(I − γP_π)^{-1}: W's columns are values for the
        # rewards (1−γ)e_j, solved and refined to a few ε each (_policy_values), and the sum has
        # no cancellation. The transposed solve, refined, still misplaced up to 7.9e-12 of mass
        # between closed classes at γ = 1 − 1e-12 (its residual sums outflows and inflows that
        # cancel per class only in exact arithmetic); unrefined 5.5e-6 (float32 at 1 − 2^-20: 2.9e-3)
        W = _policy_values(xp, g, Ppi, (1.0 - g) * _eye(xp, mdp.S, Ppi))
        d = xp.sum(mu[..., :, None] * W, axis=-2)
    # Σ_s d(s) = 1 exactly, but the solve's error grows like eps/(1−γ) (I − γP_π^T is nearly
    # singular as γ → 1): at γ = 1 − 1e-9 the sum was off by 1.7e-7 (beyond the 1e-8 every
    # occupancy check allows), at γ = 1 − 1e-16 by 6. Dividing by the sum, a change within the
    # solve's error, keeps d a distribution.
    return d / xp.sum(d, axis=-1, keepdims=True)


def occupancy_measure(mdp: FiniteMDP, pi: Any, mu: Any = None) -> Any:
    r"""Normalised state-action occupancy ``d^π_μ(s, a) = d^π_μ(s) π(a|s)``.

    It satisfies the flow constraints
    ``Σ_a d(s', a) = (1 − γ) μ(s') + γ Σ_{s,a} P(s'|s, a) d(s, a)`` and sums to 1.
    """
    pi_s = as_stochastic_policy(mdp, pi)
    return state_occupancy(mdp, pi_s, mu)[..., None] * pi_s


def expected_value(V: Any, mu: Any) -> Any:
    """``V(μ) = Σ_s μ(s) V(s)`` over the last axis."""
    xp = array_namespace(V, mu)
    V = as_float(V, xp)
    if V.ndim < 1:
        raise ValueError(f"V must have shape (..., S); got {tuple(V.shape)}")
    V = as_real_array(V, "V", (V.shape[-1],), ("s",), xp)
    mu = as_distribution(mu, "mu", V.shape[-1], xp, V.dtype)
    _batches("expected_value", ("V", tuple(V.shape[:-1])), ("mu", tuple(mu.shape[:-1])))
    return xp.sum(V * mu, axis=-1)


def performance_difference(mdp: FiniteMDP, pi_new: Any, pi_old: Any, mu: Any = None) -> Any:
    r"""Right-hand side of the performance-difference identity (Kakade & Langford 2002).

    ``V^{π'}(μ) − V^{π}(μ) = 1/(1−γ) Σ_s d^{π'}_μ(s) Σ_a π'(a|s) A^{π}(s, a)``

    Returns the right-hand side computed from ``d^{π'}_μ`` and ``A^π``; the test
    suite checks it equals the left-hand side computed by two policy evaluations. ``A^π`` is
    :func:`advantage`'s (flow form, corrected), so the result is within a few
    ``ε·(max|r| + J)/(1−γ)`` of the exact difference, ``J`` the largest ``|V^π(j) − V^π(s)|``
    along a transition (at most ``0.33`` of it on the rational-reference models of
    :func:`advantage`): the error of the values themselves, not less. With ``Q^π − V^π`` formed
    directly it was up to ``3·10¹¹·ε·max|r|/(1−γ)`` at γ = 1 − 10⁻¹², i.e. ``ε·max|r|/(1−γ)²``.
    The sum runs over the pairs with ``d^{π'}_μ(s, a) ≠ 0``: an advantage beyond the float
    range at a pair ``π'`` never visits from ``μ`` does not matter. ``V^π`` and a result
    beyond the range are located ``ValueError``\ s.
    """
    g = _discount(mdp, None, "performance_difference")
    xp = mdp.xp
    pn = as_stochastic_policy(mdp, pi_new, field="pi_new")
    po = as_stochastic_policy(mdp, pi_old, field="pi_old")
    _batches(
        "performance_difference",
        ("pi_new", tuple(pn.shape[:-2])),
        ("pi_old", tuple(po.shape[:-2])),
        ("the model", mdp.batch_shape),
    )
    d = occupancy_measure(mdp, pn, mu)
    _, adv = _values_and_advantages(mdp, po)  # (flow form, corrected: no ε·max|r|/(1−γ) loss)
    zero = xp.zeros((), dtype=mdp.dtype, device=mdp.P.device)
    # A^pi at a pair pi' never visits from mu may overflow while the sum is finite: advantage()
    # refused it (and 0 * inf = nan would have too); only the visited pairs enter the sum
    with np.errstate(over="ignore", invalid="ignore"):  # (an overflow is refused below, located)
        out = xp.sum(xp.where(d != 0, d * adv, zero), axis=(-2, -1)) / (1.0 - g)
    return _check_in_range(
        mdp, out, "performance_difference", "the value difference", (), _discounted_scale(g)
    )
