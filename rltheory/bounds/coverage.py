r"""Coverage coefficients of offline data, computed exactly from the model.

Offline guarantees are stated in terms of how well the data distribution
``ρ`` covers the state-action occupancies of the policies that matter:

* **single-policy concentrability** (Rashidinejad et al. 2021, Def. of ``C*``;
  Xie et al. 2021): ``C^{π*} = max_{h,s,a} d^{π*}_h(s,a) / ρ_h(s,a)`` (``∞`` if
  ``π*`` visits a pair the data never contain) — :func:`single_policy_concentrability`;
* **all-policy concentrability** ``C_all = sup_π max_{h,s,a} d^π_h(s,a)/ρ_h(s,a)``;
  the supremum is attained pointwise by a reachability MDP,
  ``sup_π d^π_h(s,a) = max_π Pr^π(s_h = s)`` (choose ``a`` at step ``h``), solved by
  dynamic programming (:func:`max_occupancy`, :func:`all_policy_concentrability`);
* the **relative condition number** of linear features (Agarwal, Kakade, Lee &
  Mahajan 2021, §6.2; Uehara & Sun 2022)
  ``κ = sup_x xᵀΣ_{π}x / xᵀΣ_ρ x`` with ``Σ_ν = E_{(s,a)~ν}[φφᵀ]``, the largest
  generalised eigenvalue (:func:`relative_condition_number`);
* for Markov games, **unilateral concentrability** (Cui & Du 2022, Assumption 2)
  ``C_uni = max_i sup_{π_i} max_{h,s,a} d^{(π_i, π*_{−i})}_h(s,a)/ρ_h(s,a)``: every
  unilateral deviation from the equilibrium must be covered
  (:func:`unilateral_concentrability`); the supremum over ``π_i`` is the reachability
  DP of the MDP that player ``i`` faces against ``π*_{−i}``; the weaker *selective*
  coverage of Zhang, Bai & Jiang (2023), which needs only the deviations that can look
  like best responses, is in :mod:`rltheory.bounds.selective_coverage`.

Occupancies are unnormalised per step: ``d^π_h(s, a) = Pr^π(s_h = s, a_h = a)``
(each ``d_h`` sums to 1), :func:`finite_horizon_occupancy`. Discounted models use the
normalised occupancy of :func:`rltheory.mdp.occupancy_measure`.

References
----------
Rashidinejad, P., Zhu, B., Ma, C., Jiao, J., Russell, S. (2021). Bridging offline RL and
imitation learning: a tale of pessimism. NeurIPS 34 (single-policy concentrability ``C*``).
Xie, T., Jiang, N., Wang, H., Xiong, C., Bai, Y. (2021). Policy finetuning: bridging
sample-efficient offline and online RL. NeurIPS 34 (``C*`` for episodic MDPs).
Munos, R. (2007). Performance bounds in Lp-norm for approximate value iteration. SIAM J.
Control Optim. 46(2) (all-policy concentrability).
Agarwal, A., Kakade, S., Lee, J., Mahajan, G. (2021). On the theory of policy gradient
methods. JMLR 22(98), Assumption 6.2 (relative condition number).
Cui, Q., Du, S. S. (2022). When are offline two-player zero-sum Markov games solvable?
NeurIPS 35 (unilateral concentrability).

The linear-feature coefficients (:func:`feature_covariance`, :func:`relative_condition_number`)
live in :mod:`rltheory.bounds.feature_coverage` and are re-exported here.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._validate import check_occupancy, check_probability
from ..backend import array_namespace, as_float
from ..mdp.bellman import as_stochastic_policy, occupancy_measure
from ..mdp.discounted import policy_iteration
from ..mdp.model import FiniteHorizonMDP, FiniteMDP
from .feature_coverage import feature_covariance, relative_condition_number

__all__ = [
    "finite_horizon_occupancy",
    "single_policy_concentrability",
    "max_occupancy",
    "all_policy_concentrability",
    "feature_covariance",
    "relative_condition_number",
    "induced_mdp",
    "unilateral_concentrability",
    "discounted_concentrability",
]


def _fh_policy(fh: FiniteHorizonMDP, pi: Any) -> Any:
    """``π`` as a stochastic ``[..., H, S, A]`` array (stationary ``[S, A]`` is repeated over ``h``)."""
    xp = fh.xp
    # a shape carrier for the policy checks
    step = FiniteMDP(fh.P[..., 0, :, :, :], fh.R[..., 0, :, :], 0.0)
    pi = as_stochastic_policy(step, pi)
    H, S, A = fh.H, fh.S, fh.A
    if pi.ndim == 2 or tuple(pi.shape[-3:-2]) != (H,):
        pi = xp.broadcast_to(pi[..., None, :, :], tuple(pi.shape[:-2]) + (H, S, A))
    return pi


def finite_horizon_occupancy(fh: FiniteHorizonMDP, pi: Any) -> Any:
    r"""State-action occupancy ``d^π_h(s, a) = Pr^π(s_h = s, a_h = a)`` of a finite-horizon MDP.

    Forward recursion ``d_0(s) = μ(s)``, ``d_h(s, a) = d_h(s) π_h(a|s)``,
    ``d_{h+1}(s') = Σ_{s,a} d_h(s, a) P_h(s'|s, a)``.

    Parameters
    ----------
    fh : FiniteHorizonMDP
    pi : array
        Stochastic ``[..., H, S, A]`` (or stationary ``[S, A]``) or deterministic ``int[..., H, S]``.

    Returns
    -------
    array, shape (..., H, S, A)
        Each ``d_h`` sums to 1.

    Examples
    --------
    >>> import numpy as np
    >>> from rltheory.mdp import FiniteHorizonMDP
    >>> P = np.array([[[0.0, 1.0], [1.0, 0.0]], [[0.0, 1.0], [0.0, 1.0]]])  # action 0 in s0 -> s1
    >>> fh = FiniteHorizonMDP.stationary(P, np.zeros((2, 2)), H=2, mu=[1.0, 0.0])
    >>> finite_horizon_occupancy(fh, np.zeros((2, 2), dtype=int)).tolist()
    [[[1.0, 0.0], [0.0, 0.0]], [[0.0, 0.0], [1.0, 0.0]]]
    """
    xp = fh.xp
    pi = _fh_policy(fh, pi)
    ds = fh.initial_distribution()
    out = []
    for h in range(fh.H):
        dsa = ds[..., :, None] * pi[..., h, :, :]
        out.append(dsa)
        # d_{h+1}(s') = Σ_{s,a} d_h(s,a) P_h(s'|s,a)
        flat = xp.reshape(dsa, tuple(dsa.shape[:-2]) + (1, fh.S * fh.A))
        Ph = xp.reshape(fh.P[..., h, :, :, :], fh.batch_shape + (fh.S * fh.A, fh.S))
        ds = (flat @ Ph)[..., 0, :]
    return xp.stack(out, axis=-3)


def single_policy_concentrability(d_target: Any, d_data: Any) -> float:
    r"""``C = max_{x : d_target(x) > 0} d_target(x) / d_data(x)`` (``∞`` if some such ``d_data(x) = 0``).

    ``x`` ranges over all entries (``(h, s, a)`` for finite horizon, ``(s, a)`` for
    discounted occupancies). With ``d_target = d^{π*}`` this is the single-policy
    concentrability ``C*`` of Rashidinejad et al. (2021); ``C* ≥ 1`` whenever both are
    distributions over the same set, with equality iff ``d_data = d^{π*}`` on the support.
    The result is at least 1: a computed ratio below 1 is the rounding of occupancy sums
    accepted to their dtype's tolerance (float32 arrays one ulp apart gave ``0.99999994``),
    and 1 is returned for it.

    Raises
    ------
    ValueError
        Shapes differ, negative / non-finite entries (the first is located), or an array
        that is not an occupancy: ``(S, A)`` (or flat) arrays must sum to 1, ``(H, S, A)``
        arrays must sum to 1 at each step ``h``.

    Examples
    --------
    >>> import numpy as np
    >>> single_policy_concentrability(np.array([0.5, 0.5, 0.0]), np.array([0.25, 0.25, 0.5]))
    2.0
    >>> single_policy_concentrability(np.array([1.0, 0.0]), np.array([0.0, 1.0]))
    inf
    """
    xp = array_namespace(d_target, d_data)
    t = as_float(d_target, xp)
    d = as_float(d_data, xp)  # each in its own float dtype; the ratio is taken in the promoted one
    if tuple(t.shape) != tuple(d.shape):
        raise ValueError(
            f"d_target has shape {tuple(t.shape)} but d_data has shape {tuple(d.shape)}"
        )
    check_occupancy(t, "d_target")
    check_occupancy(d, "d_data")
    return _at_least_one(_concentrability(t, d))


def _concentrability(t: Any, d: Any) -> float:
    """``max_{t > 0} t/d`` of validated arrays (``d_target`` may be a pointwise sup, not a law).

    Computed in the promoted dtype of ``t`` and ``d``: casting float64 data to a float32 target's
    dtype rounded a weight of 1e-50 to 0 and reported ``∞`` for a ratio of 5e49.
    """
    xp = array_namespace(t, d)
    dt = xp.result_type(t.dtype, d.dtype)
    t, d = xp.astype(t, dt, copy=False), xp.astype(d, dt, copy=False)
    support = t > 0
    if bool(xp.any(support & (d <= 0))):
        return float("inf")
    with np.errstate(over="ignore"):  # t/d beyond the float range (a subnormal d): the ratio is inf
        ratio = xp.where(support, t / xp.where(d > 0, d, xp.ones_like(d)), xp.zeros_like(t))
    return float(xp.max(ratio))


def _at_least_one(C: float) -> float:
    """``max(C, 1)`` for the ratio of a target that dominates a law to a data occupancy.

    Exactly, ``max_x t(x)/d(x) ≥ Σ_x t(x)/Σ_x d(x) ≥ 1`` when each step of ``t`` has mass
    ``≥ 1`` and each step of ``d`` mass 1; a computed ratio falls below 1 only by the rounding
    of sums that ``check_occupancy`` accepts (float32 occupancies one ulp apart gave
    ``C* = 0.99999994``, which :func:`rltheory.bounds.offline.lcb_vi_rate` refused as a
    coefficient below 1). The floor is the theorem's, and it is the conservative side for
    every rate in ``C``.
    """
    return max(C, 1.0)


def _reach(fh: FiniteHorizonMDP) -> Any:
    """``reach[h, s] = max_π Pr^π(s_h = s)`` by one backward max-DP per target step."""
    xp = fh.xp
    S, A = fh.S, fh.A
    if fh.batch_shape:
        raise ValueError(f"max_occupancy needs a single model; got batch_shape={fh.batch_shape}")
    mu = fh.initial_distribution()
    rows = [mu]
    eye = xp.eye(S, dtype=fh.dtype, device=fh.P.device)
    for h in range(1, fh.H):
        V = eye  # V[s, t]: best probability of being in target t at step h, from s at step j
        for j in range(h - 1, -1, -1):
            PV = xp.reshape(xp.reshape(fh.P[j, ...], (S * A, S)) @ V, (S, A, S))
            V = xp.max(PV, axis=1)
        rows.append(mu @ V)
    return xp.stack(rows, axis=0)


def max_occupancy(model: FiniteHorizonMDP | FiniteMDP) -> Any:
    r"""Pointwise supremum of occupancies over all policies, ``d̄(x) = sup_π d^π(x)``.

    Finite horizon: ``d̄_h(s, a) = max_π Pr^π(s_h = s)`` for every ``a`` (reach ``s``
    at step ``h`` optimally, then play ``a``), from a backward max-recursion per step,
    ``O(H² S³ A)``. Discounted: ``d̄(s, a) = (1 − γ) max_π E[Σ_t γ^t 1{s_t = s, a_t = a}]``,
    the optimal value of the indicator reward, from policy iteration on the
    ``S·A`` indicator-reward MDPs in one batch.

    Returns
    -------
    array, shape (H, S, A) or (S, A)

    Examples
    --------
    >>> import numpy as np
    >>> from rltheory.mdp import FiniteHorizonMDP
    >>> P = np.array([[[0.0, 1.0], [1.0, 0.0]], [[0.0, 1.0], [0.0, 1.0]]])
    >>> fh = FiniteHorizonMDP.stationary(P, np.zeros((2, 2)), H=2, mu=[1.0, 0.0])
    >>> max_occupancy(fh)[1].tolist()
    [[1.0, 1.0], [1.0, 1.0]]
    """
    if isinstance(model, FiniteHorizonMDP):
        reach = _reach(model)
        xp = model.xp
        return xp.broadcast_to(reach[:, :, None], (model.H, model.S, model.A))
    if not isinstance(model, FiniteMDP) or model.gamma is None:
        got = (
            "a FiniteMDP with gamma=None" if isinstance(model, FiniteMDP) else type(model).__name__
        )
        raise TypeError(
            f"max_occupancy needs a FiniteHorizonMDP or a discounted FiniteMDP; got {got}"
        )
    if model.batch_shape:
        raise ValueError(f"max_occupancy needs a single model; got batch_shape={model.batch_shape}")
    xp = model.xp
    S, A = model.S, model.A
    ind = xp.reshape(xp.eye(S * A, dtype=model.dtype, device=model.P.device), (S * A, S, A))
    mu = model.initial_distribution()
    batch = FiniteMDP(xp.broadcast_to(model.P, (S * A, S, A, S)), ind, model.gamma, mu)
    V = policy_iteration(batch).V  # [S*A, S]
    sup = xp.reshape((1.0 - model.gamma) * (V @ mu), (S, A))
    # The linear solves leave round-off (±1e-17) where the exact value is 0: a state no policy
    # reaches from μ. Zero it exactly (and clip negatives), or every uncovered unreachable pair
    # would make all_policy_concentrability infinite.
    reach = _reachable(model.P, mu, model.gamma > 0.0)
    return xp.where(reach[:, None], xp.maximum(sup, xp.zeros_like(sup)), xp.zeros_like(sup))


def _reachable(P: Any, mu: Any, steps: bool) -> Any:
    """``reach[s]``: some policy visits ``s`` with positive probability from ``μ`` (in ≥ 0 steps when ``steps``)."""
    xp = array_namespace(P)
    S = P.shape[-1]
    reach = mu > 0
    if not steps:
        return reach
    adj = xp.astype(xp.any(P > 0, axis=1), P.dtype)  # adj[s, t]: some action moves s to t
    for _ in range(S):
        nxt = reach | ((xp.astype(reach, P.dtype) @ adj) > 0)
        if bool(xp.all(nxt == reach)):
            break
        reach = nxt
    return reach


def all_policy_concentrability(model: FiniteHorizonMDP | FiniteMDP, d_data: Any) -> float:
    r"""``C_all = sup_π max_x d^π(x)/d_data(x) = max_x d̄(x)/d_data(x)`` with ``d̄`` from :func:`max_occupancy`.

    ``C_all ≥ C^{π}`` for every ``π``; it is finite only when the data cover every
    reachable state-action pair (the classical FQI assumption, Munos 2007).

    Examples
    --------
    >>> import numpy as np
    >>> from rltheory.mdp import FiniteHorizonMDP
    >>> fh = FiniteHorizonMDP.stationary(np.ones((1, 2, 1)), np.zeros((1, 2)), H=1)
    >>> all_policy_concentrability(fh, np.array([[[0.25, 0.75]]]))
    4.0
    """
    # first: its TypeError names a non-model (model.xp raised AttributeError)
    sup = max_occupancy(model)
    xp = model.xp
    d = as_float(d_data, xp)
    if tuple(d.shape) != tuple(sup.shape):
        raise ValueError(f"d_data must have shape {tuple(sup.shape)}; got {tuple(d.shape)}")
    check_occupancy(d, "d_data")
    return _at_least_one(_concentrability(sup, d))  # sup ≥ d^π for every π: a step's mass is ≥ 1


def _others_weight(
    xp: Any, policies: list[Any], player: int, H: int, S: int, acts: tuple[int, ...], like: Any
) -> Any:
    """``Π_{j≠i} π_{j,h}(a_j|s)`` as an array ``[H, S, A_1, …, A_n]`` (size-1 axis for player ``i``)."""
    n = len(acts)
    shape0 = [H, S] + [1] * n
    dtype = like.dtype
    W = xp.ones(tuple(shape0), dtype=dtype, device=like.device)
    for j in range(n):
        if j == player:
            continue
        # checked in its own float dtype, then cast to P's and renormalised there: a float32 policy
        # normalised in float32 (uniform over 7 actions: rows 1 + 4.5e-8) was refused at float64's
        # tolerance 1e-8 after the cast to a float64 P's dtype (and, checked as float32, its rows
        # would make the induced P̄ fail that tolerance)
        pj = as_float(policies[j], xp)
        if tuple(pj.shape) != (H, S, acts[j]):
            raise ValueError(
                f"policies[{j}] must have shape (H, S, A_{j}) = {(H, S, acts[j])}; got {tuple(pj.shape)}"
            )
        check_probability(pj, f"policies[{j}]", ("h", "s", "a"), f"policies[{j}][h, s, :]")
        if pj.dtype != dtype:
            pj = xp.astype(pj, dtype)
            pj = pj / xp.sum(pj, axis=-1, keepdims=True)
        shape = list(shape0)
        shape[2 + j] = acts[j]
        W = W * xp.reshape(pj, tuple(shape))
    return W


def induced_mdp(
    P: Any, R: Any, policies: list[Any], player: int, mu: Any = None
) -> FiniteHorizonMDP:
    r"""The finite-horizon MDP player ``i`` faces when the others play the product ``π_{−i}``.

    ``P̄_h(s'|s, a_i) = Σ_{a_{−i}} Π_{j≠i} π_{j,h}(a_j|s) P_h(s'|s, a)`` and
    ``r̄_h(s, a_i) = Σ_{a_{−i}} Π_{j≠i} π_{j,h}(a_j|s) r_{i,h}(s, a)``.

    Parameters
    ----------
    P : array, shape (H, S, A_1, …, A_n, S)
    R : array, shape (n, H, S, A_1, …, A_n) or None (zero rewards)
    policies : list of n arrays, each (H, S, A_j)
        Product policy; ``policies[player]`` is ignored.
    player : int
    mu : array (S,), optional

    Examples
    --------
    >>> import numpy as np
    >>> P = np.ones((1, 1, 2, 2, 1)); R = np.stack([np.eye(2), -np.eye(2)])[:, None, None]
    >>> m = induced_mdp(P, R, [None, np.array([[[0.25, 0.75]]])], player=0)
    >>> m.R.tolist()
    [[[0.25, 0.75]]]
    """
    xp = array_namespace(P)
    Pf = as_float(P, xp)
    if Pf.ndim < 4:
        raise ValueError(f"P must have shape (H, S, A_1, ..., A_n, S); got {tuple(Pf.shape)}")
    n = Pf.ndim - 3
    # an integer (Python or numpy, not bool): player=0.5 matched no j below and reached an unrelated
    # shape error, player='0' numpy's comparison TypeError, player=True acted as 1
    ok = not isinstance(player, bool) and isinstance(player, (int, np.integer)) and 0 <= player < n
    if not ok or len(policies) != n:
        raise ValueError(
            f"player must be in [0, {n}) and policies must list {n} policies; got player={player!r}, {len(policies)} policies"
        )
    player = int(player)
    H, S = Pf.shape[0], Pf.shape[1]
    acts = tuple(int(a) for a in Pf.shape[2:-1])
    W = _others_weight(xp, policies, player, H, S, acts, Pf)  # [H, S, A_1..A_n], 1 along axis i
    others = tuple(2 + j for j in range(n) if j != player)
    Pm = xp.sum(Pf * W[..., None], axis=others) if others else Pf
    Rm = None
    if R is not None:
        Rf = as_float(R, xp, Pf.dtype)
        if tuple(Rf.shape) != (n, H, S) + acts:
            raise ValueError(
                f"R must have shape (n, H, S, A_1, ..., A_n) = {(n, H, S) + acts}; got {tuple(Rf.shape)}"
            )
        Rm = xp.sum(Rf[player, ...] * W, axis=others) if others else Rf[player, ...]
    if Rm is None:
        Rm = xp.zeros(tuple(Pm.shape[:-1]), dtype=Pf.dtype, device=Pf.device)
    return FiniteHorizonMDP(Pm, Rm, mu)


def unilateral_concentrability(P: Any, policies: list[Any], d_data: Any, mu: Any = None) -> float:
    r"""``C_uni = max_i sup_{π_i} max_{h,s,a} d^{(π_i, π_{−i})}_h(s, a) / ρ_h(s, a)`` for a product policy ``π``.

    For a fixed ``π_{−i}``, ``sup_{π_i} d^{(π_i, π_{−i})}_h(s, a) = reach^{(i)}_h(s) · Π_{j≠i} π_{j,h}(a_j|s)``
    where ``reach^{(i)}_h(s)`` is the best probability with which player ``i`` can
    bring the game to ``s`` at step ``h`` (:func:`max_occupancy` of :func:`induced_mdp`),
    and ``a_i`` is free. ``C_uni ≥ C^{π}`` (take ``π_i`` itself).

    Parameters
    ----------
    P : array, shape (H, S, A_1, …, A_n, S)
    policies : list of n arrays (H, S, A_j)
        The target (equilibrium) product policy ``π*``.
    d_data : array, shape (H, S, A_1, …, A_n)
        Data occupancy ``ρ_h(s, a)``.
    mu : array (S,), optional

    Notes
    -----
    Cui & Du (2022), Assumption on unilateral coverage; offline Nash learning is
    possible with ``Õ(√(C_uni · poly(H, S, A)/N))`` gap and impossible under
    single-policy coverage alone (their Thm 3.1 lower bound), which the
    ``marlhf-coverage`` experiment reproduces.

    Examples
    --------
    A one-shot 2×2 game with uniform players: every joint action has ``sup`` occupancy 1/2.

    >>> import numpy as np
    >>> P = np.ones((1, 1, 2, 2, 1)); pi = np.full((1, 1, 2), 0.5)
    >>> unilateral_concentrability(P, [pi, pi], np.full((1, 1, 2, 2), 0.25))
    2.0
    """
    xp = array_namespace(P, d_data)
    Pf = as_float(P, xp)
    if Pf.ndim < 4:
        raise ValueError(f"P must have shape (H, S, A_1, ..., A_n, S); got {tuple(Pf.shape)}")
    n = Pf.ndim - 3
    H, S = Pf.shape[0], Pf.shape[1]
    acts = tuple(int(a) for a in Pf.shape[2:-1])
    rho = as_float(d_data, xp)
    if tuple(rho.shape) != (H, S) + acts:
        raise ValueError(
            f"d_data must have shape (H, S, A_1, ..., A_n) = {(H, S) + acts} (from P of shape {tuple(Pf.shape)}); "
            f"got {tuple(rho.shape)}"
        )
    check_occupancy(rho, "d_data", sums=False)  # data weights: only the ratio's support matters
    worst = 0.0
    for i in range(n):
        reach = max_occupancy(induced_mdp(Pf, None, policies, i, mu))[:, :, 0]  # [H, S]
        sup = xp.reshape(reach, (H, S) + (1,) * n) * _others_weight(xp, policies, i, H, S, acts, Pf)
        sup = xp.broadcast_to(sup, (H, S) + acts)
        worst = max(worst, _concentrability(sup, rho))
    return worst


def discounted_concentrability(mdp: FiniteMDP, target: Any, behaviour: Any) -> float:
    r"""``C* = max_{s,a} d^{π*}_ρ(s, a)/d^{π_b}_ρ(s, a)`` for normalised discounted occupancies.

    One unbatched model and one policy of each kind (``ValueError`` for a batch: the
    coefficient is one number, and a maximum over a batch would be returned as if it were
    one instance's).

    Examples
    --------
    >>> import numpy as np
    >>> from rltheory.mdp import FiniteMDP
    >>> mdp = FiniteMDP(np.ones((1, 2, 1)), np.zeros((1, 2)), gamma=0.5)
    >>> discounted_concentrability(mdp, np.array([1]), np.array([[0.5, 0.5]]))
    2.0
    """
    if mdp.batch_shape:
        raise ValueError(
            f"discounted_concentrability needs a single model; got batch_shape={mdp.batch_shape} "
            "(one coefficient per call: index the batch, mdp[i])"
        )
    t = as_stochastic_policy(mdp, target, field="target")
    b = as_stochastic_policy(mdp, behaviour, field="behaviour")
    for name, x in (("target", t), ("behaviour", b)):
        if x.ndim > 2:
            raise ValueError(
                f"discounted_concentrability needs a single {name} policy of shape (S,) or (S, A) = "
                f"({mdp.S}, {mdp.A}); got a batch of shape {tuple(x.shape[:-2])} (one coefficient per call)"
            )
    return _at_least_one(_concentrability(occupancy_measure(mdp, t), occupancy_measure(mdp, b)))
