r"""Average-reward policy evaluation: gain and bias from the Poisson equation.

For a stationary policy ``π`` with chain ``P_π`` and reward ``r_π``,

    g^π = P_π* r_π,        h^π = (I − P_π + P_π*)^{-1}(r_π − g^π),

the unique solution of ``(I − P_π) g = 0``, ``g + (I − P_π) h = r_π``, ``P_π* h = 0``
(Puterman 1994, §8.2.3, eqs. (8.2.11)–(8.2.12), Thm 8.2.6; ``P_π*`` the Cesàro limit of
:func:`rltheory.mdp.mixing.limiting_matrix`). A unichain ``P_π`` has the scalar gain
``g = μ_πᵀ r_π`` and the normalisation ``μ_πᵀ h = 0`` (Thm A.7, §8.2.1).

Also here: :class:`AverageRewardSolution`, the certified result every average-reward solver
(:mod:`rltheory.mdp.average`, :mod:`rltheory.mdp.average_pi`, :mod:`rltheory.mdp.average_lp`)
returns, and the round-off model of ``r + P v`` at ``γ = 1`` that their certificates use.

References
----------
Puterman, M. L. (1994). *Markov Decision Processes*. Wiley. §8.2 (gain, bias, deviation matrix),
Appendix A.4 (limiting matrix).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from ..backend import to_numpy
from ..trace import Trace
from .bellman import policy_reward, policy_transition_matrix
from .discounted import _Roundoff
from .model import FiniteMDP
from .stationary import (
    _eye,
    _first_violation,
    _flag,
    _ill_conditioned,
    _limiting_single,
    _relative_values,
    _structures,
    _unichain_stationary,
)

__all__ = ["GainBias", "AverageRewardSolution", "gain_bias"]


class GainBias(NamedTuple):
    """``(g, h)`` with ``g + h = r_π + P_π h`` (``g`` scalar per instance for unichain chains)."""

    g: Any
    h: Any


@dataclass(frozen=True, eq=False)
class AverageRewardSolution:
    """Result of an average-reward solver.

    Attributes
    ----------
    policy : int array (..., S)
        Deterministic optimal (or, for RVI, ``bound``-optimal) policy.
    gain : array (...) or (..., S)
        Optimal gain: scalar per instance for unichain / weakly communicating
        solvers, per state for the multichain ones.
    bias : array (..., S)
        A solution ``h`` of the optimality equation (``h(ref_state) = 0`` for RVI; the
        bias of ``policy`` for PI; the LP's dual for the LP).
    iterations : int
    converged : bool
    bound : array (...)
        RVI: ``max Δ − min Δ`` with ``Δ = Tv − v`` plus its round-off, which bounds both
        ``2|gain − g*|`` and ``g* − g^policy``. Unichain PI / LP: the Odoni gap ``max_s (T h − h)(s) − gain``
        ``≥ g* − gain``. Multichain PI: residual of the optimality equations; multichain
        LP: LP optimality residual. Both are certified upper bounds on the exact residuals of the
        returned ``(g, h)`` (and ``x``) for the row-normalised model, round-off included, so never 0;
        they are not bounds on ``|gain − g*|``: in a multichain model a residual ``ρ`` moves the gain by
        up to ``ρ`` times a condition number (the deviation matrices of the chains), not computed here.
    trace : Trace
    method : str
    occupancy : array (..., S, A) or None
        LP only: optimal stationary state-action frequencies ``x*(s, a)``.
    """

    policy: Any
    gain: Any
    bias: Any
    iterations: int
    converged: bool
    bound: Any
    trace: Trace
    method: str
    occupancy: Any = None


def _require_average(mdp: Any, what: str) -> None:
    if not isinstance(mdp, FiniteMDP):
        raise TypeError(f"{what} expects a FiniteMDP; got {type(mdp).__name__}")
    if mdp.gamma is not None:
        raise ValueError(
            f"{what} is an average-reward routine but mdp.gamma = {mdp.gamma}; "
            "build the model with gamma=None (e.g. mdp.replace(gamma=None))"
        )


def _bias_single(
    P: np.ndarray, r: np.ndarray, g: np.ndarray, Pstar: np.ndarray, cs: Any
) -> np.ndarray:
    """Bias of one chain (host, float64) by :func:`_relative_values`: on each recurrent class
    ``C_k``, ``h = w − (μ_kᵀw)1`` with ``w`` relative to a state of ``C_k`` (``b = r − g``); on the
    transient states ``h = b + Q h`` with ``b = r − g + P_{T,R} h_R``. Then ``P*h = 0`` (each
    ``μ_kᵀh_{C_k} = 0``, and ``P*`` has no mass on transient states) and ``g + (I − P)h = r``."""
    h = np.zeros(P.shape[0])
    for C in cs.recurrent_classes:
        C = np.asarray(C)
        w = _relative_values(P[np.ix_(C, C)], r[C] - g[C], np.array([0]))
        h[C] = w - Pstar[C[0], C] @ w
    if cs.transient:
        R = np.flatnonzero(~np.isin(np.arange(P.shape[0]), cs.transient))
        # accepted round-off < 0 is no transition, as in _relative_values and the class structure
        # (P(2, 1) = −1e-9 with h(1) = 1/2 moved h(2) ≈ −5e11 by 500, a 1e-9 relative error)
        b = r - g + np.where(P[:, R] > 0, P[:, R], 0.0) @ h[R]
        h = h + _relative_values(P, b, R)
    return h


def _bias_by_reduction(
    xp: Any, P: Any, r: Any, g: Any, Pstar: Any, h: Any, ill: np.ndarray, structs: list
) -> Any:
    """Biases of the instances flagged ``ill`` recomputed on the host by :func:`_bias_single`; the
    other instances keep ``h``. ``g`` is per instance (scalar, unichain) or per state; ``Pstar`` is
    ``P*`` or, for unichain chains, ``μ``."""
    S = P.shape[-1]
    Ph = to_numpy(P).astype(np.float64).reshape((-1, S, S))
    rh = to_numpy(r).astype(np.float64).reshape((-1, S))
    gh = np.broadcast_to(to_numpy(g).astype(np.float64).reshape((rh.shape[0], -1)), rh.shape)
    Psh = to_numpy(Pstar).astype(np.float64)
    Psh = np.broadcast_to(Psh.reshape((rh.shape[0], -1, S)), (rh.shape[0], S, S))
    out = to_numpy(h).astype(np.float64).reshape((-1, S))
    for i in np.flatnonzero(ill):
        out[i] = _bias_single(Ph[i], rh[i], gh[i], Psh[i], structs[i])
    return xp.asarray(out.reshape(tuple(h.shape)), dtype=h.dtype, device=h.device)


def _evaluate(xp: Any, P: Any, r: Any, per_state: bool | None) -> GainBias:
    """Gain/bias of chains ``P[..., S, S]`` with rewards ``r[..., S]``.

    Where the conditioning estimate flags an instance, the bias is recomputed on the host by
    subtraction-free state reduction (:func:`_bias_single`): the solves lost ``u/δ`` relative to
    ``‖h‖∞`` on chains whose parts are coupled by ``δ``."""
    S = P.shape[-1]
    batch = tuple(P.shape[:-2])
    structs = _structures(P)
    uni = all(cs.unichain for cs in structs)
    if uni and per_state is not True:
        # GTH where the solve is ill-conditioned
        mu, ill = _unichain_stationary(xp, P, "gain_bias", guard=True)
        g = xp.sum(mu * r, axis=-1)
        M = _eye(xp, S, P) - P + xp.ones_like(P) * mu[..., None, :]
        try:
            h = xp.linalg.solve(M, (r - g[..., None])[..., None])[..., 0]
        except np.linalg.LinAlgError:  # coupled below round-off (μ then came from GTH)
            h, ill = xp.zeros_like(r), np.ones_like(ill)
        if ill.any():  # the same ill-conditioning costs the solve u/δ in h: state reduction instead
            h = _bias_by_reduction(xp, P, r, g, mu, h, ill, structs)
        return GainBias(g, h)
    Pf = xp.reshape(P, (-1, S, S))
    Pstar = xp.stack([_limiting_single(xp, Pf[i, ...], cs) for i, cs in enumerate(structs)])
    Pstar = xp.reshape(Pstar, batch + (S, S))
    g = (Pstar @ r[..., None])[..., 0]
    h, ill = _ill_conditioned(xp, _eye(xp, S, P) - P + Pstar, r - g)
    if ill.any():
        h = _bias_by_reduction(xp, P, r, g, Pstar, h, ill, structs)
    return GainBias(g, h)


def gain_bias(mdp: FiniteMDP, pi: Any, *, per_state: bool | None = None) -> GainBias:
    r"""Gain and bias of ``π``: ``g = P_π* r_π``, ``h = (I − P_π + P_π*)^{-1}(r_π − g)``.

    ``(g, h)`` solve the Poisson (evaluation) equations ``g = P_π g`` and
    ``g + h = r_π + P_π h`` with the bias normalisation ``P_π* h = 0`` (Puterman
    1994, §8.2.3, eqs. (8.2.11)–(8.2.12)). For a unichain ``P_π`` (one recurrent
    class) ``P_π* = 1μ_πᵀ``, the gain is the scalar ``g = μ_πᵀ r_π`` and
    ``μ_πᵀ h = 0``; ``h`` then solves ``(I − P_π + 1μ_πᵀ) h = r_π − g1``
    (Puterman Thm A.7 / §8.2.1; SEEDS C15).

    Parameters
    ----------
    mdp : FiniteMDP
        Average-reward model (``gamma=None``), possibly batched.
    pi : array
        Stochastic ``[..., S, A]`` or deterministic integer ``[..., S]`` policy.
    per_state : bool, optional
        ``None`` (default): ``g`` has shape ``(...)`` when every instance's chain is
        unichain, else ``(..., S)`` (multichain, Puterman ch. 9). ``True``: always
        ``(..., S)``. ``False``: require unichain chains (error otherwise).

    Returns
    -------
    GainBias
        ``(g, h)``.

    Raises
    ------
    ValueError
        ``mdp.gamma`` is not None, or ``per_state=False`` with a multichain ``P_π``
        (the recurrent classes are named).

    Notes
    -----
    The class structure of ``P_π`` is read from its support on the host; the linear
    algebra runs in the model's array namespace. Cost ``O(S³)`` per instance. For a unichain
    ``P_π``, ``μ_π`` comes from the batched solve, redone by GTH state reduction on the host for the
    instances whose system ``I − P_π + 11ᵀ`` is ill-conditioned (parts coupled by ``δ ≲ 1e-4``;
    :func:`rltheory.mdp.stationary._unichain_stationary`): the solve's gain erred like ``u/δ``
    (1.2e-2 relative at ``δ = 4.6e-15``), GTH's to a few ``u``. On those instances, and on
    multichain instances whose system ``I − P_π + P_π*`` is ill-conditioned (the same estimate), the
    bias is recomputed on the host by subtraction-free state reduction: ``h = w − (μ_kᵀw)1`` on each
    recurrent class with ``w`` relative to one of its states, then the transient states (the solve
    lost ``u/δ`` relative to ``‖h‖∞``).

    Examples
    --------
    Two states swapping deterministically with rewards 1 and 0: ``g = 1/2``,
    ``h = (1/4, −1/4)``:

    >>> import numpy as np
    >>> from rltheory.mdp import FiniteMDP
    >>> mdp = FiniteMDP(np.array([[[0., 1.]], [[1., 0.]]]), np.array([[1.], [0.]]), gamma=None)
    >>> g, h = gain_bias(mdp, np.array([0, 0]))
    >>> float(g), h
    (0.5, array([ 0.25, -0.25]))
    """
    _require_average(mdp, "gain_bias")
    # np.False_ is not False: it asked for unichain chains and got none checked
    if per_state is not None:
        per_state = _flag(per_state, "per_state")
    xp = mdp.xp
    P = policy_transition_matrix(mdp, pi)
    r = xp.broadcast_to(policy_reward(mdp, pi), tuple(P.shape[:-1]))
    if per_state is False:
        bad = _first_violation(P, lambda cs: cs.unichain)
        if bad is not None:
            raise ValueError(
                f"gain_bias(per_state=False) needs a unichain policy chain but P_π{bad[0]} has {bad[1].describe()}"
            )
    return _evaluate(xp, P, r, per_state)


def _roundoff(mdp: FiniteMDP) -> _Roundoff:
    """:class:`~rltheory.mdp.discounted._Roundoff` at ``γ = 1``: a computed ``Q = r + P v`` (and
    ``max_a Q``) is within ``e(v) = a‖r‖∞ + (a + δ)‖v‖∞`` of the row-normalised model's
    (``a = γ_{S+2}``, ``δ`` the row-sum defect of the stored ``P``)."""
    return _Roundoff(mdp, gamma=1.0)
