r"""Networked multi-agent MDPs: κ-hop truncation of the policy gradient, its error, correlation decay.

``n`` agents sit on the nodes of an undirected graph ``G`` (networkx). Agent
``i`` has a local state ``s_i ∈ {0..S_l−1}`` and action ``a_i ∈ {0..A_l−1}``;
its next state depends only on its 1-hop neighbourhood ``N_i`` (``i`` included)
and its own action,

    P(s' | s, a) = Π_i P_i(s'_i | s_{N_i}, a_i),

and it collects a local reward ``r_i(s_i, a_i)``. Agent ``i`` plays a localized
softmax policy ``π_i(a_i | s_{L_i})`` on the ``r``-hop set ``L_i = N_i^r``, so the
joint policy is the product ``π(a | s) = Π_i π_i(a_i | s_{L_i})``. The objective
is the aggregate ``J(θ) = Σ_j V_j^π(μ)`` with ``V_j`` the discounted value of
``r_j`` and ``μ = ⊗_i μ_i`` a product initial distribution.

Exact joint computations keep the factored form: joint arrays are tensors with
one axis per agent (``S_l^n`` states, ``A_l^n`` actions); the joint kernel
``P(s'|s, a)`` is never materialised (only ``P_π``, ``S_l^n × S_l^n``), and
``Σ_{s'} P(s'|s, a) V(s')`` is contracted one agent at a time. For small ``n``,
:func:`joint_mdp` builds the full :class:`~rltheory.mdp.FiniteMDP` so that the
factored computations can be checked against the Bellman layer.
Every function taking ``net`` raises ``TypeError`` for anything but a
:class:`NetworkedMDP` (a joint ``FiniteMDP`` included). The model, the κ-hop
neighbourhoods and the SIS example are defined in
:mod:`rltheory.algorithms.networked_model`, the exact joint computations
(joint policy, ``P_π``, Q-functions, occupancy, exact gradient) in
:mod:`rltheory.algorithms.networked_joint`; both are re-exported here, and this
module holds the truncation.

**κ-hop truncation** (Qu, Wierman & Li 2020; Ying et al. 2023). The truncated
Q-function of agent ``j`` depends only on the ``κ``-hop neighbourhood
``N_j^κ``: here it is the conditional expectation under the occupancy measure,

    Q̃_j^κ(s_{N_j^κ}, a_{N_j^κ}) = E_{(s,a) ~ d^π}[ Q_j(s, a) | (s, a)_{N_j^κ} ],

and the truncated policy gradient of agent ``i`` keeps only the agents in
``N_i^κ``:

    ĝ_i = 1/(1−γ) E_{d^π}[ Σ_{j ∈ N_i^κ} Q̃_j^κ(s, a) ∇_{θ_i} log π_i(a_i | s_{L_i}) ].

Under the (c, φ)-exponential-decay property the error ``‖ĝ − ∇J‖²`` is
``O(φ^{2κ})`` (Ying et al. 2023, the approximation error ``O(φ_0^{2κ})`` of
their sample-based theorem; Qu et al. 2020, Lemma 3 for the Q-truncation). For
``κ ≥ diam(G)``, ``N_i^κ`` contains every agent and the truncation is exact.
:func:`correlation_decay` measures the decay constant independently: the
largest total-variation change of an agent's discounted state marginal when the
initial state of one agent at distance ``d`` is flipped, as a function of ``d``.

References
----------
Qu, G., Wierman, A., Li, N. (2020). Scalable reinforcement learning of localized
policies for multi-agent networked systems. L4DC. Definition 1 (exponential decay),
Lemma 3 (truncated Q), Lemma 4 (truncated policy gradient).
Ying, D., Zhang, Y., Ding, Y., Koppel, A., Lavaei, J. (2023). Scalable primal-dual
actor-critic method for safe multi-agent RL with general utilities. NeurIPS.
"""

from __future__ import annotations

from typing import Any

import networkx as nx
import numpy as np

from .networked_joint import (
    MAX_JOINT_BYTES,
    _check_joint_size,
    _check_rewards,
    _check_thetas,
    _in_range,
    agent_q_functions,
    joint_mdp,
    joint_policy,
    joint_transition_matrix,
    local_occupancies,
    local_softmax,
    networked_occupancy,
    networked_policy_gradient,
)
from .networked_model import NetworkedMDP, _check_net, _check_radius, neighborhoods, sis_network

__all__ = [
    "MAX_JOINT_BYTES",
    "NetworkedMDP",
    "sis_network",
    "neighborhoods",
    "local_softmax",
    "joint_policy",
    "joint_transition_matrix",
    "joint_mdp",
    "agent_q_functions",
    "networked_occupancy",
    "networked_policy_gradient",
    "truncated_policy_gradient",
    "truncation_error",
    "truncation_errors",
    "correlation_decay",
    "local_occupancies",
]


def _truncate(net: NetworkedMDP, d: Any, Qj: Any, N: tuple[int, ...]) -> Any:
    r"""``Σ_{outside} w Q_j / Σ_{outside} w`` given ``(s, a)_N``, broadcast to ``(S^n, A^n)``;
    ``d`` holds the weights ``w`` (the occupancy, or ones for the plain average).

    A block ``(s, a)_N`` of zero total weight (never visited under ``d^π``: a zero in
    ``μ_i`` and an unreachable state, or a softmax probability underflowing to 0) has
    no conditional expectation; it takes the plain average there instead (any weights
    are allowed, Qu et al. 2020, Lemma 3), which the gradient multiplies by ``d = 0``.
    It used to be ``0/0 = nan``, and the NaN reached every gradient entry of the agent.

    The weights are normalised before they multiply ``Q_j`` (``Σ (w/Σw) Q_j``, and
    ``Σ Q_j/m`` for the plain average over ``m`` entries): the sum ``Σ w Q_j`` of the uniform
    weights ``w = 1`` overflowed where every ``Q_j`` was in range (``Q_j ≈ 7.5e307`` on a path of
    3, 16 entries averaged), and ``ĝ`` came back ``inf``/``nan`` for a finite exact value.
    """
    xp = net.xp
    n, S, A = net.n, net.S_local, net.A_local
    keep = N + tuple(n + k for k in N)
    drop = tuple(k for k in range(2 * n) if k not in keep)
    dT = xp.reshape(d, (S,) * n + (A,) * n)
    qT = xp.reshape(Qj, (S,) * n + (A,) * n)
    if not drop:
        return Qj
    den = xp.sum(dT, axis=drop, keepdims=True)
    visited = den > 0
    num = xp.sum((dT / xp.where(visited, den, xp.ones_like(den))) * qT, axis=drop, keepdims=True)
    m = 1
    for k in drop:
        m *= S if k < n else A
    plain = xp.sum(qT / m, axis=drop, keepdims=True)
    out = xp.where(visited, num, plain)
    out = xp.broadcast_to(out, (S,) * n + (A,) * n)
    return xp.reshape(out, (S**n, A**n))


def _projection_for(net: NetworkedMDP, W: Any, pi_i: Any, i: int) -> Any:
    """Agent ``i``'s row of :func:`_score_projection` only."""
    xp = net.xp
    n, S, A = net.n, net.S_local, net.A_local
    L = net.policy_sets()[i]
    keep = L + (n + i,)
    T = xp.reshape(W, (S,) * n + (A,) * n)
    M = xp.reshape(
        xp.sum(T, axis=tuple(k for k in range(2 * n) if k not in keep)), (S ** len(L), A)
    )
    return M - pi_i * xp.sum(M, axis=-1, keepdims=True)


def _truncated(
    net: NetworkedMDP, Qs: Any, d: Any, pis: list[Any], kappa: int, weights: str
) -> list[Any]:
    xp = net.xp
    if weights not in ("uniform", "occupancy"):
        raise ValueError(f"weights must be 'uniform' or 'occupancy'; got {weights!r}")
    Nk = neighborhoods(net.graph, kappa)
    w = d if weights == "occupancy" else xp.ones_like(d)
    out = []
    with np.errstate(over="ignore", invalid="ignore"):  # (an overflow is refused by the callers)
        Qt = [_truncate(net, w, Qs[j, ...], Nk[j]) for j in range(net.n)]
        for i in range(net.n):
            Qhat = Qt[Nk[i][0]]
            for j in Nk[i][1:]:
                Qhat = Qhat + Qt[j]
            out.append(_projection_for(net, d * Qhat, pis[i], i) / (1.0 - net.gamma))
    return out


def _gradients_in_range(net: NetworkedMDP, gs: list[Any], fname: str, what: str, R: Any) -> None:
    """Located ``ValueError`` for a gradient entry beyond the float range (it came back as
    ``inf`` or ``nan`` where the exact gradient, ``~ n max|r|/(1−γ)²``, overflows)."""
    for i, gi in enumerate(gs):
        _in_range(net, gi, fname, f"{what} of agent {i}", R, "n max|r_j|/(1-gamma)^2")


def truncated_policy_gradient(
    net: NetworkedMDP, thetas: Any, kappa: int, R_agents: Any = None, *, weights: str = "uniform"
) -> list[Any]:
    r"""κ-hop truncated gradient ``ĝ_i = 1/(1−γ) E_d[Σ_{j∈N_i^κ} Q̃_j^κ ∇_{θ_i} log π_i]``.

    ``Q̃_j^κ(s_{N_j^κ}, a_{N_j^κ}) = Σ w·Q_j / Σ w`` over the states and actions of
    the agents outside ``N_j^κ``: ``weights="uniform"`` averages them uniformly
    (the "average over the agents outside the κ-hop set" of Ying et al. 2023 and
    Qu et al. 2020, Lemma 3, which allow any weights), ``weights="occupancy"``
    uses ``w = d^π`` (the conditional expectation given the κ-hop block; on a block
    with zero occupancy, where it is undefined and ``ĝ`` does not depend on it, the
    plain average). For
    ``κ ≥ diam(G)`` both equal :func:`networked_policy_gradient` exactly.

    Raises
    ------
    ValueError
        ``kappa`` negative or not an integer; unknown ``weights``; wrong ``thetas`` shapes; a
        dense joint array beyond :data:`~rltheory.algorithms.networked_joint.MAX_JOINT_BYTES`
        (``2**31`` bytes) or more than 64 joint axes.
        A result beyond the float range of the model's dtype (the exact value overflows:
        ``Q_j ~ max|r|/(1−γ)``, the gradient ``~ n max|r|/(1−γ)²``), the function, the
        quantity and ``max|r_j|`` named.
    """
    _check_net(net)
    _check_joint_size(net, "truncated_policy_gradient")
    kappa = _check_radius(kappa, "kappa")
    thetas = _check_thetas(net, thetas)
    Qs = agent_q_functions(net, thetas, R_agents)
    d = networked_occupancy(net, thetas)
    out = _truncated(net, Qs, d, local_softmax(thetas), kappa, weights)
    R = _check_rewards(net, R_agents)
    _gradients_in_range(net, out, "truncated_policy_gradient", "the truncated gradient", R)
    return out


def truncation_errors(
    net: NetworkedMDP, thetas: Any, kappas: Any, R_agents: Any = None, *, weights: str = "uniform"
) -> np.ndarray:
    r"""``‖ĝ^κ − ∇J‖² = Σ_i ‖ĝ_i^κ − ∇_{θ_i} J‖_F²`` for each ``κ`` in ``kappas`` (host array).

    The exact Q-functions and occupancy are computed once and shared by all ``κ``.

    Raises
    ------
    ValueError
        An entry of ``kappas`` that is not a non-negative integer (bools and floats
        included; the entry's index named), unknown ``weights``, wrong ``thetas``; a dense joint
        array beyond :data:`~rltheory.algorithms.networked_joint.MAX_JOINT_BYTES` (``2**31``
        bytes) or more than 64 joint axes (number of agents, joint states and actions, bytes named).
        A result beyond the float range of the model's dtype (the exact value overflows:
        ``Q_j ~ max|r|/(1−γ)``, the gradient ``~ n max|r|/(1−γ)²``, the squared error its
        square), the function, the quantity and ``max|r_j|`` named.
    TypeError
        ``kappas`` a set or a dict (unordered: the errors would come in no defined order).

    Examples
    --------
    >>> import numpy as np, networkx as nx
    >>> net = sis_network(nx.path_graph(3))
    >>> th = [np.zeros(s) for s in net.theta_shapes()]
    >>> float(truncation_errors(net, th, [net.diameter])[0]) < 1e-20
    True
    """
    _check_net(net)
    _check_joint_size(net, "truncation_errors")
    xp = net.xp
    thetas = _check_thetas(net, thetas)
    # each entry is checked as given: np.asarray([1, True]) made True the integer 1 (accepted), and
    # np.asarray([1, 2.5]) blamed kappas[0] = 1.0 for the float 2.5
    if isinstance(kappas, np.ndarray):
        items = np.atleast_1d(kappas).tolist()
    elif isinstance(kappas, (str, bytes)) or not hasattr(kappas, "__iter__"):
        items = [kappas]
    elif isinstance(kappas, (set, frozenset, dict)):  # no order for the errors to follow
        raise TypeError(
            f"kappas must be an integer or an ordered sequence of integers; got {type(kappas).__name__}"
        )
    else:
        items = list(kappas)
    ks = [_check_radius(k, f"kappas[{i}]") for i, k in enumerate(items)]
    Qs = agent_q_functions(net, thetas, R_agents)
    d = networked_occupancy(net, thetas)
    pis = local_softmax(thetas)
    R = _check_rewards(net, R_agents)
    with np.errstate(over="ignore", invalid="ignore"):  # (an overflow is refused below, located)
        Q = xp.sum(Qs, axis=0)
        g = [_projection_for(net, d * Q, pis[i], i) / (1.0 - net.gamma) for i in range(net.n)]
    _gradients_in_range(net, g, "truncation_errors", "the gradient", R)
    out = []
    for k in ks:
        h = _truncated(net, Qs, d, pis, k, weights)
        _gradients_in_range(net, h, "truncation_errors", f"the truncated gradient (kappa = {k})", R)
        with np.errstate(over="ignore"):
            e = sum(float(xp.sum((a - b) ** 2)) for a, b in zip(g, h, strict=True))
        if not np.isfinite(e):  # the squared error ~ (n max|r|/(1-γ)^2)^2 overflows first
            _in_range(
                net,
                xp.asarray([e], dtype=net.R_local.dtype),
                "truncation_errors",
                f"the squared error ||g^kappa - grad J||^2 (kappa = {k})",
                R,
                "(n max|r_j|/(1-gamma)^2)^2",
            )
        out.append(e)
    return np.asarray(out)


def truncation_error(
    net: NetworkedMDP, thetas: Any, kappa: int, R_agents: Any = None, *, weights: str = "uniform"
) -> float:
    r"""``‖ĝ^κ − ∇J‖²`` for one ``κ`` (see :func:`truncation_errors`, whose errors it raises)."""
    _check_net(net)
    _check_joint_size(net, "truncation_error")
    return float(
        truncation_errors(net, thetas, [_check_radius(kappa, "kappa")], R_agents, weights=weights)[
            0
        ]
    )


def correlation_decay(net: NetworkedMDP, thetas: Any) -> tuple[np.ndarray, np.ndarray]:
    r"""Exact decay of influence with graph distance under ``π_θ``.

    ``δ(d) = max_{i, j: dist(i,j)=d} max_{s} TV(λ_i(s), λ_i(s^{(j)}))``, where
    ``λ_i(s) = (1−γ) Σ_t γ^t Pr(s_{i,t} = · | s_0 = s)`` is agent ``i``'s
    discounted state marginal from the joint state ``s`` and ``s^{(j)}`` is ``s``
    with agent ``j``'s local state changed (every alternative value). A straight
    semilog line ``δ(d) ≈ c φ^d`` measures the decay constant ``φ`` of the
    (c, φ)-exponential-decay property (Qu et al. 2020, Definition 1) without
    reference to any gradient.

    Returns
    -------
    d : ndarray of int, shape (diam+1,)
    delta : ndarray, shape (diam+1,)

    Raises
    ------
    ValueError
        ``P_π`` or its resolvent beyond
        :data:`~rltheory.algorithms.networked_joint.MAX_JOINT_BYTES` (``2**31`` bytes).
    """
    _check_net(net)
    _check_joint_size(net, "correlation_decay")
    xp = net.xp
    n, S = net.n, net.S_local
    Ppi = joint_transition_matrix(net, thetas)
    Mi = (1.0 - net.gamma) * xp.linalg.inv(xp.eye(S**n, dtype=Ppi.dtype) - net.gamma * Ppi)
    T = xp.reshape(Mi, (S**n,) + (S,) * n)
    dist = dict(nx.all_pairs_shortest_path_length(net.graph))
    diam = net.diameter
    delta = np.zeros(diam + 1)
    for i in range(n):
        lam = xp.sum(T, axis=tuple(1 + k for k in range(n) if k != i))  # (S^n, S): λ_i(s)
        lam = xp.reshape(lam, (S,) * n + (S,))
        for j in range(n):
            dd = dist[i][j]
            for shift in range(1, S):
                idx = xp.asarray(np.roll(np.arange(S), -shift))
                other = xp.take(lam, idx, axis=j)
                tv = 0.5 * xp.sum(xp.abs(lam - other), axis=-1)
                delta[dd] = max(delta[dd], float(xp.max(tv)))
    return np.arange(diam + 1), delta
