r"""Networked multi-agent MDPs: factored exact model, κ-hop truncation and its error.

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
:mod:`rltheory.algorithms.networked_model` and re-exported here.

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

from .._validate import check_finite
from ..backend import array_namespace, as_float
from ..mdp.model import FiniteMDP
from .networked_model import NetworkedMDP, _check_net, _check_radius, neighborhoods, sis_network

__all__ = [
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


# ---------------------------------------------------------------------------- helpers
def _placed(
    xp: Any, arr: Any, axes: tuple[int, ...], ndim: int, extra: tuple[int, ...] = ()
) -> Any:
    """Reshape ``arr`` (axes = given joint axes in increasing order, then ``extra`` trailing
    sizes) so that it broadcasts against a tensor with ``ndim`` joint axes (+ extra)."""
    shape = [1] * ndim
    for k, ax in enumerate(axes):
        shape[ax] = int(arr.shape[k])
    return xp.reshape(arr, tuple(shape) + tuple(extra))


def local_softmax(thetas: Any) -> list[Any]:
    """``π_i(·|x) = softmax(θ_i[x, :])`` for each agent's parameter array ``θ_i[x, a]``."""
    out = []
    for th in thetas:
        xp = array_namespace(th)
        z = th - xp.max(th, axis=-1, keepdims=True)
        e = xp.exp(z)
        out.append(e / xp.sum(e, axis=-1, keepdims=True))
    return out


def _check_thetas(net: NetworkedMDP, thetas: Any) -> list[Any]:
    shapes = net.theta_shapes()
    if not hasattr(
        thetas, "__len__"
    ):  # a generator used to fail with "object of type ... has no len()"
        raise TypeError(
            f"thetas must be a sequence of n={net.n} arrays; got {type(thetas).__name__}"
        )
    if len(thetas) != net.n:
        raise ValueError(f"thetas must hold one array per agent (n={net.n}); got {len(thetas)}")
    out = []
    for i, (th, shp) in enumerate(zip(thetas, shapes, strict=True)):
        th = as_float(th, net.xp, net.R_local.dtype, field=f"thetas[{i}]")
        if tuple(th.shape) != shp:
            raise ValueError(
                f"thetas[{i}] must have shape (S_l^|L_i|, A_l) = {shp}; got {tuple(th.shape)}"
            )
        # a NaN logit used to turn every gradient, occupancy and Q-function into NaN silently
        # (or surface later as "d must be finite" from a utility): name it here
        check_finite(th, f"thetas[{i}]", ("x", "a_i"))
        out.append(th)
    return out


def _check_rewards(net: NetworkedMDP, R_agents: Any) -> Any:
    """``R_agents`` (``None``: the model's ``R_local``) as a finite ``(n, S_l, A_l)`` array, located errors."""
    if R_agents is None:
        return net.R_local
    R = as_float(R_agents, net.xp, net.R_local.dtype, field="R_agents")
    want = (net.n, net.S_local, net.A_local)
    if tuple(R.shape) != want:
        raise ValueError(f"R_agents must have shape (n, S_l, A_l) = {want}; got {tuple(R.shape)}")
    check_finite(R, "R_agents", ("i", "s_i", "a_i"))
    return R


def joint_policy(net: NetworkedMDP, thetas: Any) -> Any:
    r"""Joint product policy ``π(a|s) = Π_i π_i(a_i | s_{L_i})`` as an ``(S_l^n, A_l^n)`` array.

    Joint indices are mixed-radix with agent 0 most significant.
    """
    _check_net(net)
    xp = net.xp
    n, S, A = net.n, net.S_local, net.A_local
    pis = local_softmax(_check_thetas(net, thetas))
    out = xp.ones((1,) * (2 * n), dtype=net.R_local.dtype)
    for i, (L, pi_i) in enumerate(zip(net.policy_sets(), pis, strict=True)):
        t = xp.reshape(pi_i, (S,) * len(L) + (A,))
        out = out * _placed(xp, t, L + (n + i,), 2 * n)
    out = xp.broadcast_to(out, (S,) * n + (A,) * n)
    return xp.reshape(out, (S**n, A**n))


def _kernel_factor(net: NetworkedMDP, i: int) -> tuple[Any, tuple[int, ...]]:
    """``P_i`` as a tensor over the joint state axes in ``N_i`` followed by ``(a_i, s'_i)``."""
    N = neighborhoods(net.graph, 1)[i]
    return net.P_local[i], N


def joint_transition_matrix(net: NetworkedMDP, thetas: Any) -> Any:
    r"""``P_π(s, s') = Π_i Σ_{a_i} π_i(a_i|s_{L_i}) P_i(s'_i | s_{N_i}, a_i)``, shape ``(S_l^n, S_l^n)``."""
    _check_net(net)
    xp = net.xp
    n, S = net.n, net.S_local
    pis = local_softmax(_check_thetas(net, thetas))
    Ls = net.policy_sets()
    out = xp.ones((1,) * (2 * n), dtype=net.R_local.dtype)
    for i in range(n):
        Pi, N = _kernel_factor(net, i)
        # K_i(s_U, s'_i) = Σ_a π_i(a|s_L) P_i(s'|s_N, a)
        pi_b = _placed(
            xp, xp.reshape(pis[i], (S,) * len(Ls[i]) + (net.A_local,)), Ls[i], n, (net.A_local, 1)
        )
        P_b = _placed(xp, Pi, N, n, (net.A_local, S))
        K = xp.sum(pi_b * P_b, axis=n)  # (..joint s axes broadcast.., S')
        K = xp.reshape(K, tuple(K.shape[:n]) + (1,) * i + (S,) + (1,) * (n - i - 1))
        out = out * K
    out = xp.broadcast_to(out, (S,) * (2 * n))
    return xp.reshape(out, (S**n, S**n))


def joint_mdp(net: NetworkedMDP, R_agents: Any = None) -> FiniteMDP:
    r"""The materialised joint model: ``FiniteMDP`` with ``S_l^n`` states and ``A_l^n`` actions.

    ``R = Σ_i r_i(s_i, a_i)`` unless ``R_agents`` (shape ``(n, S_l, A_l)``) is given.
    Memory ``S_l^{2n} A_l^n``: meant for small ``n`` (consistency checks).
    """
    _check_net(net)
    xp = net.xp
    n, S, A = net.n, net.S_local, net.A_local
    P = xp.ones((1,) * (3 * n), dtype=net.R_local.dtype)
    for i in range(n):
        Pi, N = _kernel_factor(net, i)
        t = _placed(xp, Pi, N + (n + i,), 2 * n, (S,))  # (s-axes, a-axes, s'_i)
        t = xp.reshape(t, tuple(t.shape[: 2 * n]) + (1,) * i + (S,) + (1,) * (n - i - 1))
        P = P * t
    P = xp.reshape(xp.broadcast_to(P, (S,) * n + (A,) * n + (S,) * n), (S**n, A**n, S**n))
    R_ag = _check_rewards(net, R_agents)
    return FiniteMDP(P, _joint_reward(net, R_ag), net.gamma, net.initial_distribution())


def _joint_reward(net: NetworkedMDP, R_agents: Any) -> Any:
    """``Σ_i r_i(s_i, a_i)`` as an ``(S_l^n, A_l^n)`` array."""
    return net.xp.sum(_agent_rewards(net, R_agents), axis=0)


def _agent_rewards(net: NetworkedMDP, R_agents: Any) -> Any:
    """``r_j(s_j, a_j)`` for every agent as an ``(n, S_l^n, A_l^n)`` array."""
    xp = net.xp
    n, S, A = net.n, net.S_local, net.A_local
    rows = []
    for j in range(n):
        t = _placed(xp, R_agents[j, ...], (j, n + j), 2 * n)
        rows.append(xp.reshape(xp.broadcast_to(t, (S,) * n + (A,) * n), (S**n, A**n)))
    return xp.stack(rows, axis=0)


def _expected_next(net: NetworkedMDP, V: Any) -> Any:
    r"""``(P V)(s, a) = Σ_{s'} Π_i P_i(s'_i|s_{N_i}, a_i) V(s')`` for ``V[B, S_l^n]`` → ``[B, S_l^n, A_l^n]``.

    Contracts one agent at a time: never forms the joint kernel.
    """
    xp = net.xp
    n, S, A = net.n, net.S_local, net.A_local
    B = int(V.shape[0])
    T = xp.reshape(V, (B, 1, 1, S, S ** (n - 1)))  # (B, s, α, s'_0, rest)
    for i in range(n):
        Pi, N = _kernel_factor(net, i)
        G = xp.broadcast_to(_placed(xp, Pi, N, n, (A, S)), (S,) * n + (A, S))
        G = xp.reshape(G, (1, S**n, 1, A, S))
        T = G @ T  # (B, S^n, A^i, A, rest)
        rest = S ** (n - i - 1)
        if i < n - 1:
            T = xp.reshape(T, (B, S**n, A ** (i + 1), S, rest // S))
        else:
            T = xp.reshape(T, (B, S**n, A**n))
    return T


def agent_q_functions(net: NetworkedMDP, thetas: Any, R_agents: Any = None) -> Any:
    r"""``Q_j^π(s, a) = r_j(s_j, a_j) + γ Σ_{s'} P(s'|s, a) V_j^π(s')`` for every agent ``j``.

    ``V_j^π = (I − γ P_π)^{-1} r_{j,π}`` by one linear solve with ``n`` right-hand
    sides. Returns an array ``(n, S_l^n, A_l^n)``.
    """
    _check_net(net)
    xp = net.xp
    n, S = net.n, net.S_local
    R_ag = _check_rewards(net, R_agents)
    pi = joint_policy(net, thetas)
    Ppi = joint_transition_matrix(net, thetas)
    Rj = _agent_rewards(net, R_ag)  # (n, S^n, A^n)
    rpi = xp.sum(Rj * pi[None, ...], axis=-1)  # (n, S^n)
    M = xp.eye(S**n, dtype=Ppi.dtype) - net.gamma * Ppi
    V = xp.linalg.solve(M, xp.matrix_transpose(rpi))  # (S^n, n)
    return Rj + net.gamma * _expected_next(net, xp.matrix_transpose(V))


def networked_occupancy(net: NetworkedMDP, thetas: Any) -> Any:
    r"""Normalised state-action occupancy ``d^π(s, a) = (1−γ) [μ^T (I − γP_π)^{-1}](s) π(a|s)``."""
    _check_net(net)
    xp = net.xp
    pi = joint_policy(net, thetas)
    Ppi = joint_transition_matrix(net, thetas)
    M = xp.eye(int(Ppi.shape[0]), dtype=Ppi.dtype) - net.gamma * xp.matrix_transpose(Ppi)
    d = xp.linalg.solve(M, (1.0 - net.gamma) * net.initial_distribution()[:, None])[:, 0]
    return d[:, None] * pi


def local_occupancies(net: NetworkedMDP, d: Any) -> Any:
    r"""Local marginals ``λ_i(s_i, a_i) = Σ_{(s,a): s_i, a_i} d(s, a)``; shape ``(n, S_l, A_l)``.

    Raises
    ------
    ValueError
        ``d`` not of the joint shape ``(S_l^n, A_l^n)`` of :func:`networked_occupancy` (a
        transposed ``d`` of that size used to give wrong marginals silently, another size
        numpy's "cannot reshape"), or not finite.
    """
    _check_net(net)
    xp = net.xp
    n, S, A = net.n, net.S_local, net.A_local
    d = as_float(d, xp, net.R_local.dtype, field="d")
    if tuple(d.shape) != (S**n, A**n):
        raise ValueError(
            f"d must have the joint shape (S_l^n, A_l^n) = {(S**n, A**n)}; got {tuple(d.shape)}"
        )
    check_finite(d, "d", ("s", "a"))
    T = xp.reshape(d, (S,) * n + (A,) * n)
    rows = []
    for i in range(n):
        keep = (i, n + i)
        rows.append(xp.sum(T, axis=tuple(k for k in range(2 * n) if k not in keep)))
    return xp.stack(rows, axis=0)


def _score_projection(net: NetworkedMDP, W: Any, pis: list[Any]) -> list[Any]:
    r"""``g_i[x, b] = Σ_{s_{L_i}=x} Σ_{a_i=b} W − π_i(b|x) Σ_{s_{L_i}=x} Σ_a W`` for ``W[S^n, A^n]``:
    the exact ``E[W ∇_{θ_i} log π_i]`` contraction of the softmax score."""
    xp = net.xp
    n, S, A = net.n, net.S_local, net.A_local
    T = xp.reshape(W, (S,) * n + (A,) * n)
    out = []
    for i, L in enumerate(net.policy_sets()):
        keep = L + (n + i,)
        M = xp.sum(T, axis=tuple(k for k in range(2 * n) if k not in keep))
        M = xp.reshape(M, (S ** len(L), A))
        out.append(M - pis[i] * xp.sum(M, axis=-1, keepdims=True))
    return out


def networked_policy_gradient(net: NetworkedMDP, thetas: Any, R_agents: Any = None) -> list[Any]:
    r"""Exact ``∇_{θ_i} J`` for ``J(θ) = Σ_j V_j^π(μ)`` (policy-gradient theorem, Sutton et al. 2000):

    ``∇_{θ_i} J = 1/(1−γ) Σ_{s,a} d^π(s, a) Q^π(s, a) ∇_{θ_i} log π_i(a_i | s_{L_i})`` with
    ``Q = Σ_j Q_j``; for the softmax, ``∂ log π_i(a_i|y)/∂θ_i[x, b] = 1[y=x](1[a_i=b] − π_i(b|x))``.

    Returns one array per agent, shaped like ``θ_i``.
    """
    _check_net(net)
    xp = net.xp
    thetas = _check_thetas(net, thetas)
    Q = xp.sum(agent_q_functions(net, thetas, R_agents), axis=0)
    d = networked_occupancy(net, thetas)
    g = _score_projection(net, d * Q, local_softmax(thetas))
    return [gi / (1.0 - net.gamma) for gi in g]


def _truncate(net: NetworkedMDP, d: Any, Qj: Any, N: tuple[int, ...]) -> Any:
    r"""``Σ_{outside} w Q_j / Σ_{outside} w`` given ``(s, a)_N``, broadcast to ``(S^n, A^n)``;
    ``d`` holds the weights ``w`` (the occupancy, or ones for the plain average).

    A block ``(s, a)_N`` of zero total weight (never visited under ``d^π``: a zero in
    ``μ_i`` and an unreachable state, or a softmax probability underflowing to 0) has
    no conditional expectation; it takes the plain average there instead (any weights
    are allowed, Qu et al. 2020, Lemma 3), which the gradient multiplies by ``d = 0``.
    It used to be ``0/0 = nan``, and the NaN reached every gradient entry of the agent.
    """
    xp = net.xp
    n, S, A = net.n, net.S_local, net.A_local
    keep = N + tuple(n + k for k in N)
    drop = tuple(k for k in range(2 * n) if k not in keep)
    dT = xp.reshape(d, (S,) * n + (A,) * n)
    qT = xp.reshape(Qj, (S,) * n + (A,) * n)
    if not drop:
        return Qj
    num = xp.sum(dT * qT, axis=drop, keepdims=True)
    den = xp.sum(dT, axis=drop, keepdims=True)
    visited = den > 0
    plain = xp.mean(qT, axis=drop, keepdims=True)
    out = xp.where(visited, num / xp.where(visited, den, xp.ones_like(den)), plain)
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
    Qt = [_truncate(net, w, Qs[j, ...], Nk[j]) for j in range(net.n)]
    out = []
    for i in range(net.n):
        Qhat = Qt[Nk[i][0]]
        for j in Nk[i][1:]:
            Qhat = Qhat + Qt[j]
        out.append(_projection_for(net, d * Qhat, pis[i], i) / (1.0 - net.gamma))
    return out


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
        ``kappa`` negative or not an integer; unknown ``weights``; wrong ``thetas`` shapes.
    """
    _check_net(net)
    kappa = _check_radius(kappa, "kappa")
    thetas = _check_thetas(net, thetas)
    Qs = agent_q_functions(net, thetas, R_agents)
    d = networked_occupancy(net, thetas)
    return _truncated(net, Qs, d, local_softmax(thetas), kappa, weights)


def truncation_errors(
    net: NetworkedMDP, thetas: Any, kappas: Any, R_agents: Any = None, *, weights: str = "uniform"
) -> np.ndarray:
    r"""``‖ĝ^κ − ∇J‖² = Σ_i ‖ĝ_i^κ − ∇_{θ_i} J‖_F²`` for each ``κ`` in ``kappas`` (host array).

    The exact Q-functions and occupancy are computed once and shared by all ``κ``.

    Raises
    ------
    ValueError
        An entry of ``kappas`` that is not a non-negative integer (bools and floats
        included; the entry's index named), unknown ``weights``, wrong ``thetas``.

    Examples
    --------
    >>> import numpy as np, networkx as nx
    >>> net = sis_network(nx.path_graph(3))
    >>> th = [np.zeros(s) for s in net.theta_shapes()]
    >>> float(truncation_errors(net, th, [net.diameter])[0]) < 1e-20
    True
    """
    _check_net(net)
    xp = net.xp
    thetas = _check_thetas(net, thetas)
    # each entry is checked as given: np.asarray([1, True]) made True the integer 1 (accepted), and
    # np.asarray([1, 2.5]) blamed kappas[0] = 1.0 for the float 2.5
    if isinstance(kappas, np.ndarray):
        items = np.atleast_1d(kappas).tolist()
    elif isinstance(kappas, (str, bytes)) or not hasattr(kappas, "__iter__"):
        items = [kappas]
    else:
        items = list(kappas)
    ks = [_check_radius(k, f"kappas[{i}]") for i, k in enumerate(items)]
    Qs = agent_q_functions(net, thetas, R_agents)
    d = networked_occupancy(net, thetas)
    pis = local_softmax(thetas)
    Q = xp.sum(Qs, axis=0)
    g = [_projection_for(net, d * Q, pis[i], i) / (1.0 - net.gamma) for i in range(net.n)]
    out = []
    for k in ks:
        h = _truncated(net, Qs, d, pis, k, weights)
        out.append(sum(float(xp.sum((a - b) ** 2)) for a, b in zip(g, h, strict=True)))
    return np.asarray(out)


def truncation_error(
    net: NetworkedMDP, thetas: Any, kappa: int, R_agents: Any = None, *, weights: str = "uniform"
) -> float:
    r"""``‖ĝ^κ − ∇J‖²`` for one ``κ`` (see :func:`truncation_errors`)."""
    _check_net(net)
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
    """
    _check_net(net)
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
