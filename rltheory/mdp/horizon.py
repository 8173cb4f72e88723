r"""Finite-horizon MDPs: backward induction and exact policy evaluation.

``V_H ≡ 0``; for ``h = H−1, …, 0``:
``Q_h(s, a) = r_h(s, a) + Σ_s' P_h(s'|s, a) V_{h+1}(s')`` and ``V_h(s) = max_a Q_h(s, a)``.
Backward induction returns an optimal (Markov, deterministic, time-dependent)
policy in exactly ``H`` sweeps (Puterman 1994, Thm 4.5.1); there is nothing to
certify beyond round-off.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .._validate import _input_atol, _renormalised, _where, check_probability
from ..backend import as_float, one_hot, to_numpy
from .bellman import _check_in_range, _greedy
from .model import FiniteHorizonMDP, FiniteMDP
from .policy_chain import _integral

__all__ = ["FiniteHorizonSolution", "backward_induction", "evaluate_finite_horizon"]


@dataclass(frozen=True, eq=False)
class FiniteHorizonSolution:
    """Result of :func:`backward_induction`.

    ``policy[..., h, s]`` (int), ``V[..., h, s]`` for ``h = 0..H`` (``V[..., H, :] = 0``),
    ``Q[..., h, s, a]``; ``value`` = ``Σ_s μ(s) V_0(s)``.
    """

    policy: Any
    V: Any
    Q: Any
    value: Any


def _q_step(fh: FiniteHorizonMDP, h: int, v_next: Any) -> Any:
    xp = fh.xp
    S, A = fh.S, fh.A
    Ph = fh.P[..., h, :, :, :]
    PV = xp.reshape(Ph, fh.batch_shape + (S * A, S)) @ v_next[..., None]
    # the batch of PV is that of the model broadcast with v's (a batch of policies on one model)
    return fh.R[..., h, :, :] + xp.reshape(PV, tuple(PV.shape[:-2]) + (S, A))


def _horizon_scale(fh: FiniteHorizonMDP) -> Any:
    return lambda M: f"over H = {fh.H} steps (|V_0| <= H max|R| = {fh.H * M:.4g})"


def backward_induction(fh: FiniteHorizonMDP) -> FiniteHorizonSolution:
    r"""Optimal values and policy of a finite-horizon MDP by backward induction.

    Ties are broken towards the lowest action index.

    Raises
    ------
    TypeError
        ``fh`` is not a :class:`FiniteHorizonMDP`.
    ValueError
        A value ``V_h`` or ``Q_h`` beyond the float range of the model's dtype
        (``|V_h| ≤ (H − h)·max|r|``; rewards 1e308 over H = 3 steps gave ``inf`` with overflow
        warnings, and a greedy policy read off infinite ties): the message names the entry,
        ``max|R|`` and ``H``. Values scale with ``R``, so divide it by a power of 2.

    Examples
    --------
    One state, two actions paying 0 and 1, horizon 3: ``V_0 = 3``.

    >>> import numpy as np
    >>> from rltheory.mdp import FiniteHorizonMDP
    >>> fh = FiniteHorizonMDP.stationary(np.ones((1, 2, 1)), np.array([[0., 1.]]), H=3)
    >>> sol = backward_induction(fh)
    >>> sol.V[:, 0], sol.policy[:, 0]
    (array([3., 2., 1., 0.]), array([1, 1, 1]))
    """
    if not isinstance(fh, FiniteHorizonMDP):
        raise TypeError(f"backward_induction expects a FiniteHorizonMDP; got {type(fh).__name__}")
    xp = fh.xp
    v = xp.zeros(fh.batch_shape + (fh.S,), dtype=fh.dtype, device=fh.P.device)
    Vs, Qs, pis = [v], [], []
    with np.errstate(over="ignore", invalid="ignore"):  # (an overflow is refused below, located)
        for h in range(fh.H - 1, -1, -1):
            Q = _q_step(fh, h, v)
            v = xp.max(Q, axis=-1)
            Vs.append(v)
            Qs.append(Q)
            pis.append(_greedy(Q))
    V = xp.stack(Vs[::-1], axis=-2)
    Q = _check_in_range(
        fh,
        xp.stack(Qs[::-1], axis=-3),
        "backward_induction",
        "Q_h",
        ("h", "s", "a"),
        _horizon_scale(fh),
    )
    pi = xp.stack(pis[::-1], axis=-2)
    V0 = V[..., 0, :]
    with np.errstate(over="ignore"):
        value = xp.sum(fh.initial_distribution() * V0, axis=-1)
    # Σ_s μ(s) V_0(s) is a convex combination and lies in [min V_0, max V_0]; μ is accepted with
    # row sums 1 ± 1e-8, and at V_0 = 1.797e308 in both states, μ = (0.5, 0.5 + 1e-9) the float sum
    # was inf (a finite V_0, returned as value = inf with numpy's overflow warning)
    value = xp.minimum(xp.maximum(value, xp.min(V0, axis=-1)), xp.max(V0, axis=-1))
    return FiniteHorizonSolution(pi, V, Q, value)


def evaluate_finite_horizon(fh: FiniteHorizonMDP, pi: Any) -> Any:
    r"""Exact values ``V^π_h`` (shape ``[..., H+1, S]``) of a Markov policy.

    ``pi`` is deterministic ``int[..., H, S]`` or stochastic ``[..., H, S, A]``;
    ``V_h = Σ_a π_h(a|s) (r_h + P_h V_{h+1})``. The batch axes of ``pi`` broadcast against
    the model's (a batch of policies on one model gives one value table per policy).

    Raises
    ------
    TypeError
        ``fh`` is not a :class:`FiniteHorizonMDP` (a discounted :class:`FiniteMDP` included:
        use :func:`~rltheory.mdp.evaluate_policy`).
    ValueError
        ``pi`` of the wrong shape or with a batch shape that does not broadcast against the
        model's, an action index outside ``[0, A)`` (located), a
        stochastic row off the simplex or non-finite (``InvalidModelError``, located), or a
        value beyond the float range of the model's dtype (located, with ``max|R|`` and ``H``).

    Examples
    --------
    >>> import numpy as np
    >>> from rltheory.mdp import FiniteHorizonMDP
    >>> fh = FiniteHorizonMDP.stationary(np.ones((1, 2, 1)), np.array([[0., 1.]]), H=2)
    >>> evaluate_finite_horizon(fh, np.full((2, 1, 2), 0.5))[:, 0]
    array([1. , 0.5, 0. ])
    """
    if not isinstance(fh, FiniteHorizonMDP):
        # (a FiniteMDP failed with AttributeError "'FiniteMDP' object has no attribute 'H'")
        raise TypeError(
            f"evaluate_finite_horizon expects a FiniteHorizonMDP; got {type(fh).__name__}"
            + (
                " (use evaluate_policy for a discounted FiniteMDP)"
                if isinstance(fh, FiniteMDP)
                else ""
            )
        )
    xp = fh.xp
    if isinstance(pi, (list, tuple)):
        pi = np.asarray(pi)
    H, S, A = fh.H, fh.S, fh.A
    # only integer tables move to the model's namespace as they are (xp.asarray of a numpy
    # float16 pi failed for array_api_strict, naming nothing)
    if _integral(pi):
        pi = xp.asarray(pi)
        if tuple(pi.shape[-2:]) != (H, S):
            raise ValueError(
                f"deterministic policy pi must have shape (..., H, S) = (..., {H}, {S}); got {tuple(pi.shape)}"
            )
        if bool(xp.any((pi < 0) | (pi >= A))):
            h = to_numpy(pi)
            idx = tuple(int(i) for i in np.argwhere((h < 0) | (h >= A))[0])
            raise ValueError(
                f"pi must hold action indices in [0, {A}); pi{_where(idx, ('h', 's'))} = {int(h[idx])}"
            )
        pi = one_hot(pi, A, xp, fh.dtype)
    else:
        # a float32 policy given to a float64 model was rounded in float32: judged at float32's
        # tolerance and divided by its row sums, as evaluate_policy does (as_policy_array)
        atol = _input_atol(pi)  # (before as_float promotes a float16 pi to float64)
        pi = as_float(pi, xp, fh.dtype, field="pi")
        if tuple(pi.shape[-3:]) != (H, S, A):
            raise ValueError(
                f"pi: stochastic policy must have shape (..., H, S, A) = (..., {H}, {S}, {A}); got {tuple(pi.shape)}"
            )
        check_probability(pi, "pi", ("h", "s", "a"), "pi[h, s, :]", atol=atol)
        pi = _renormalised(pi, atol, xp)
    return _evaluate_finite_horizon(fh, pi)


def _evaluate_finite_horizon(fh: FiniteHorizonMDP, pi: Any) -> Any:
    """:func:`evaluate_finite_horizon` of a stochastic ``pi[..., H, S, A]`` in ``fh``'s namespace and
    dtype, without checks (for loops over policies the library produced)."""
    xp = fh.xp
    try:  # a batch of policies on one model, or one policy per model instance
        batch = np.broadcast_shapes(fh.batch_shape, tuple(pi.shape[:-3]))
    except ValueError:
        raise ValueError(
            f"pi's batch shape {tuple(pi.shape[:-3])} does not broadcast against the model's batch shape "
            f"{fh.batch_shape}"
        ) from None
    v = xp.zeros(batch + (fh.S,), dtype=fh.dtype, device=fh.P.device)
    Vs = [v]
    zero = xp.zeros((), dtype=fh.dtype, device=fh.P.device)
    with np.errstate(over="ignore", invalid="ignore"):  # (an overflow is refused below, located)
        for h in range(fh.H - 1, -1, -1):
            p = pi[..., h, :, :]
            # Σ_a π(a|s) Q(s, a) over the entries π(a|s) ≠ 0 (0·Q = 0 for an untaken action; a
            # rounding negative within the tolerance still counts, so V stays linear in π): a Q_h of
            # an action π never takes may leave the float range while V^π stays finite, and
            # 0·inf = nan made a finite V^π a refused 'V^pi_h left the float64 range'
            v = xp.sum(xp.where(p != 0, p * _q_step(fh, h, v), zero), axis=-1)
            Vs.append(v)
    V = xp.stack(Vs[::-1], axis=-2)
    return _check_in_range(
        fh, V, "evaluate_finite_horizon", "V^pi_h", ("h", "s"), _horizon_scale(fh)
    )
