r"""Networked multi-agent MDPs: the factored model, κ-hop neighbourhoods, a networked SIS epidemic.

``n`` agents sit on the nodes ``0..n−1`` of a connected undirected graph ``G``
(networkx). Agent ``i`` has a local state ``s_i ∈ {0..S_l−1}`` and action
``a_i ∈ {0..A_l−1}``; its next state depends only on its 1-hop neighbourhood
``N_i`` (``i`` included) and its own action,

    P(s' | s, a) = Π_i P_i(s'_i | s_{N_i}, a_i),

it collects a local reward ``r_i(s_i, a_i)``, starts from ``μ = ⊗_i μ_i``, and
plays a localized softmax policy on ``L_i = N_i^r`` (``r`` = ``policy_radius``).
:class:`NetworkedMDP` holds ``(G, {P_i}, {r_i}, γ, {μ_i}, r)`` and checks it once;
:func:`neighborhoods` gives the κ-hop sets ``N_i^κ = {j : dist(i, j) ≤ κ}``;
:func:`sis_network` builds the networked SIS epidemic used by the experiments.
The exact joint computations are in :mod:`rltheory.algorithms.networked_joint`,
the κ-hop truncation in :mod:`rltheory.algorithms.networked`.

References
----------
Qu, G., Wierman, A., Li, N. (2020). Scalable reinforcement learning of localized
policies for multi-agent networked systems. L4DC. Problem formulation (networked MDP, localized policies).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import networkx as nx
import numpy as np

from .._validate import check_discount, check_finite, check_probability, check_real
from ..backend import array_namespace, as_float
from ..errors import InvalidModelError
from ..mdp.model import _discount_in_dtype

__all__ = ["NetworkedMDP", "sis_network", "neighborhoods"]


def _check_radius(value: Any, name: str) -> int:
    """A hop count (``radius``, ``kappa``) must be a non-negative integer (not bool)."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
        raise ValueError(f"{name} must be a non-negative integer; got {value!r}")
    return int(value)


def _check_graph(graph: Any, *, model: bool) -> int:
    """Number of agents of a networkx graph on the nodes ``0..n−1``; located errors otherwise.

    Always undirected; ``model=True`` (a :class:`NetworkedMDP` graph): also non-empty and
    connected, and every failure is an :class:`InvalidModelError`. Other node labels used to fail inside
    networkx ("Source 0 is not in G") or, mixed with integers, in ``sorted`` ("'<' not supported").
    """
    # ``neighborhoods`` too refuses a directed graph: networkx's distances there follow out-edges, so
    # N_i^1 of the DiGraph 0->1->2 was (1, 2) for agent 1, dropping its in-neighbour 0, whose state
    # is what enters P_i; the model, the kernels' axes and the truncation all assume dist(i, j) = dist(j, i)
    if not isinstance(graph, nx.Graph) or graph.is_directed():
        kind = "an undirected" if model or isinstance(graph, nx.Graph) else "a"
        msg = f"graph must be {kind} networkx.Graph; got {type(graph).__name__}"
        raise InvalidModelError(msg) if model else TypeError(msg)
    n = graph.number_of_nodes()
    if model and n < 1:
        raise InvalidModelError("graph must have at least one node (agent); got an empty graph")
    # ``v in range(n)`` also held for True and 1.0 (equal to 1): a bool or float label was taken as an agent
    bad = [
        v
        for v in graph.nodes
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or not 0 <= v < n
    ]
    if bad:
        msg = (
            f"graph nodes must be labelled 0..n-1 (n={n}); got node {bad[0]!r} "
            f"(networkx.convert_node_labels_to_integers relabels)"
        )
        raise InvalidModelError(msg) if model else ValueError(msg)
    if model and not nx.is_connected(graph):
        raise InvalidModelError(
            f"graph must be connected; got {nx.number_connected_components(graph)} components"
        )
    return n


def neighborhoods(graph: nx.Graph, radius: int) -> list[tuple[int, ...]]:
    """``N_i^κ = {j : dist(i, j) ≤ κ}`` for every node ``i = 0..n−1`` (sorted tuples).

    ``dist`` is the hop distance of the undirected graph (symmetric: ``j ∈ N_i^κ`` iff ``i ∈ N_j^κ``).

    Raises
    ------
    TypeError
        ``graph`` not an undirected ``networkx.Graph`` (a ``DiGraph`` or ``MultiDiGraph`` included).
    ValueError
        ``radius`` negative or not an integer; nodes not labelled ``0..n−1``.
    """
    radius = _check_radius(radius, "radius")
    n = _check_graph(graph, model=False)
    out = []
    for i in range(n):
        dist = nx.single_source_shortest_path_length(graph, i, cutoff=int(radius))
        out.append(tuple(sorted(int(j) for j in dist)))
    return out


@dataclass(frozen=True, eq=False)
class NetworkedMDP:
    """Factored networked MDP ``(G, {P_i}, {r_i}, γ, {μ_i})``.

    Parameters
    ----------
    graph : networkx.Graph
        Connected undirected graph on the nodes ``0..n−1`` (agents). The model keeps a frozen
        copy (``networkx.freeze``): later changes to the caller's graph do not reach it.
    P_local : sequence of arrays
        ``P_local[i]`` has shape ``(S_l,)*|N_i| + (A_l, S_l)``: axis ``k < |N_i|``
        is the state of the ``k``-th agent of ``N_i`` (sorted), then ``a_i``, then
        ``s'_i``. Each ``P_local[i][..., a, :]`` is a distribution (rows accepted within
        the tolerance of :class:`~rltheory.mdp.FiniteMDP` are divided by their sums, and
        so are the rows of ``mu_local``, so that the joint model of :func:`joint_mdp`,
        whose rows are products of ``n`` local rows, is valid too).
    R_local : array, shape (n, S_l, A_l)
        Local rewards ``r_i(s_i, a_i)``.
    gamma : float in [0, 1)
    mu_local : array, shape (n, S_l), optional
        Local initial distributions (product initial law); uniform when omitted.
    policy_radius : int
        ``r``: agent ``i`` conditions on ``s_{N_i^r}`` (0: own state only).

    Raises
    ------
    InvalidModelError
        Graph not connected or not labelled ``0..n−1``, a kernel of the wrong
        shape or not stochastic (agent and row named), rewards of the wrong shape
        (``S_l = 0`` or ``A_l = 0`` included) or non-finite, ``gamma`` outside [0, 1) or
        rounding to 1 in ``R_local``'s dtype (in which the joint computations run), ``mu_local``
        not distributions.
    TypeError
        Text in ``R_local``, ``P_local[i]`` or ``mu_local`` (field named); ``P_local`` not a sequence.
    """

    graph: Any
    P_local: tuple
    R_local: Any
    gamma: float
    mu_local: Any = None
    policy_radius: int = 0

    def __post_init__(self) -> None:
        g = self.graph
        n = _check_graph(g, model=True)
        # a frozen copy: the kernels' axes follow the neighbourhoods of this graph, and the caller's
        # graph stayed mutable: rewiring the 4-ring 0-1-2-3 into 0-2-1-3 after construction (same
        # degrees, so the same kernel shapes) changed networked_policy_gradient by 0.198 silently,
        # and an added edge made it fail with numpy's "cannot reshape array of size 16"
        g = nx.freeze(g.copy())
        object.__setattr__(self, "graph", g)
        gamma = check_discount(self.gamma, allow_none=False)  # numpy scalars pass, bools do not
        if (
            isinstance(self.policy_radius, bool)
            or not isinstance(self.policy_radius, (int, np.integer))
            or self.policy_radius < 0
        ):
            raise InvalidModelError(
                f"policy_radius must be a non-negative integer; got {self.policy_radius!r}"
            )
        object.__setattr__(self, "policy_radius", int(self.policy_radius))
        if isinstance(self.P_local, (str, bytes)) or not hasattr(self.P_local, "__len__"):
            raise TypeError(
                f"P_local must be a sequence of n local kernels; got {type(self.P_local).__name__}"
            )
        # text used to reach array_namespace ("str is not a supported array type") or as_float ("input ...")
        for field, x in (
            ("R_local", self.R_local),
            ("mu_local", self.mu_local),
            *((f"P_local[{i}]", Pi) for i, Pi in enumerate(self.P_local)),
        ):
            if isinstance(x, (str, bytes)):
                raise TypeError(f"{field} must hold real numbers; got text {x!r}")
        xp = array_namespace(self.R_local, *self.P_local)
        R = as_float(self.R_local, xp, field="R_local")
        if R.ndim != 3 or R.shape[0] != n:
            raise InvalidModelError(
                f"R_local must have shape (n, S_l, A_l) with n={n}; got {tuple(R.shape)}"
            )
        check_finite(R, "R_local", ("i", "s_i", "a_i"))
        # every joint computation runs in R's dtype: a discount that rounds to 1 there made
        # I - γP_π singular (float32, γ = 1 - 2**-30: numpy's unlocated "Singular matrix")
        gamma = _discount_in_dtype(xp, gamma, R.dtype, "networked model")
        S, A = int(R.shape[1]), int(R.shape[2])
        if S < 1 or A < 1:  # empty kernels passed the stochasticity check vacuously
            raise InvalidModelError(
                f"R_local must have S_l >= 1 local states and A_l >= 1 local actions; "
                f"got shape {tuple(R.shape)}"
            )
        if len(self.P_local) != n:
            raise InvalidModelError(
                f"P_local must hold one kernel per agent (n={n}); got {len(self.P_local)}"
            )
        nbrs = neighborhoods(g, 1)
        Ps = []
        for i, Pi in enumerate(self.P_local):
            Pi = as_float(Pi, xp, R.dtype, field=f"P_local[{i}]")
            want = (S,) * len(nbrs[i]) + (A, S)
            if tuple(Pi.shape) != want:
                raise InvalidModelError(
                    f"P_local[{i}] must have shape (S_l,)*|N_i| + (A_l, S_l) = {want} for N_{i} = {nbrs[i]}; "
                    f"got {tuple(Pi.shape)}"
                )
            check_probability(
                Pi,
                f"P_local[{i}]",
                ("s_N",) * len(nbrs[i]) + ("a_i", "s'_i"),
                f"P_local[{i}][..., a_i, :]",
            )
            # rows accepted within the tolerance are divided by their sums (a change within it): the joint
            # rows are products of n local rows, so n deviations of 2.4e-8 added up beyond the joint
            # model's own tolerance and joint_mdp refused an accepted model
            Ps.append(Pi / xp.sum(Pi, axis=-1, keepdims=True))
        mu = self.mu_local
        if mu is not None:
            mu = as_float(mu, xp, R.dtype, field="mu_local")
            if tuple(mu.shape) != (n, S):
                raise InvalidModelError(
                    f"mu_local must have shape (n, S_l) = {(n, S)}; got {tuple(mu.shape)}"
                )
            check_probability(mu, "mu_local", ("i", "s_i"), "mu_local[i, :]")
            mu = mu / xp.sum(
                mu, axis=-1, keepdims=True
            )  # as the kernels: the product law sums to 1
        object.__setattr__(self, "P_local", tuple(Ps))
        object.__setattr__(self, "R_local", R)
        object.__setattr__(self, "mu_local", mu)
        object.__setattr__(self, "gamma", gamma)

    @property
    def xp(self) -> Any:
        return array_namespace(self.R_local)

    @property
    def n(self) -> int:
        """Number of agents."""
        return int(self.R_local.shape[0])

    @property
    def S_local(self) -> int:
        return int(self.R_local.shape[1])

    @property
    def A_local(self) -> int:
        return int(self.R_local.shape[2])

    @property
    def diameter(self) -> int:
        """Graph diameter: the smallest κ with ``N_i^κ`` = all agents for every ``i``."""
        return int(nx.diameter(self.graph))

    def policy_sets(self) -> list[tuple[int, ...]]:
        """``L_i = N_i^r``: the agents whose states ``π_i`` conditions on."""
        return neighborhoods(self.graph, self.policy_radius)

    def theta_shapes(self) -> list[tuple[int, int]]:
        """Shape ``(S_l^{|L_i|}, A_l)`` of agent ``i``'s softmax parameters."""
        return [(self.S_local ** len(L), self.A_local) for L in self.policy_sets()]

    def initial_distribution(self) -> Any:
        """The product initial law ``μ(s) = Π_i μ_i(s_i)`` as a vector over joint states."""
        xp = self.xp
        n, S = self.n, self.S_local
        mu = self.mu_local
        if mu is None:
            return xp.full((S**n,), 1.0 / S**n, dtype=self.R_local.dtype)
        out = xp.ones((1,) * n, dtype=self.R_local.dtype)
        for i in range(n):
            out = out * xp.reshape(mu[i, :], (1,) * i + (S,) + (1,) * (n - i - 1))
        return xp.reshape(out, (S**n,))

    def replace(self, **changes: Any) -> NetworkedMDP:
        return dataclasses.replace(self, **changes)

    def __repr__(self) -> str:
        return (
            f"NetworkedMDP(n={self.n}, S_l={self.S_local}, A_l={self.A_local}, gamma={self.gamma}, "
            f"policy_radius={self.policy_radius})"
        )


def _check_net(net: Any) -> NetworkedMDP:
    """``net`` must be a :class:`NetworkedMDP` (a ``FiniteMDP`` or other object used to fail with
    an ``AttributeError`` such as "'FiniteMDP' object has no attribute 'theta_shapes'")."""
    if not isinstance(net, NetworkedMDP):
        raise TypeError(f"net must be a NetworkedMDP; got {type(net).__name__}")
    return net


def sis_network(
    graph: nx.Graph,
    *,
    gamma: float = 0.8,
    infect: float = 0.3,
    recover: float = 0.2,
    treat: float = 0.5,
    treat_cost: float = 0.5,
    policy_radius: int = 0,
) -> NetworkedMDP:
    r"""A networked SIS epidemic: state 1 = infected, action 1 = treat.

    A healthy agent with ``k`` infected neighbours is infected with probability
    ``1 − (1 − infect)^k``; an infected agent recovers with probability
    ``recover + treat·a_i`` (capped at 1). Reward ``r_i(s_i, a_i) = −s_i − treat_cost·a_i``.
    ``infect``, ``recover`` and ``treat`` are probabilities in ``[0, 1]``; ``treat_cost`` is a
    finite number (``ValueError`` otherwise). ``graph`` is checked as in :class:`NetworkedMDP`
    (``InvalidModelError``).

    Examples
    --------
    >>> import networkx as nx
    >>> net = sis_network(nx.path_graph(3))
    >>> net.n, net.S_local, net.A_local, net.diameter
    (3, 2, 2, 2)
    """
    infect, recover, treat = (
        check_real(v, name, low=0.0, high=1.0)
        for v, name in ((infect, "infect"), (recover, "recover"), (treat, "treat"))
    )
    treat_cost = check_real(treat_cost, "treat_cost")
    n = _check_graph(graph, model=True)  # before the kernels are built on it
    nbrs = neighborhoods(graph, 1)
    Ps = []
    for i in range(n):
        N = nbrs[i]
        k = len(N)
        Pi = np.zeros((2,) * k + (2, 2))
        for idx in np.ndindex(*((2,) * k)):
            si = idx[N.index(i)]
            n_inf = sum(idx[m] for m in range(k) if N[m] != i)
            for a in range(2):
                if si == 0:
                    p1 = 1.0 - (1.0 - infect) ** n_inf
                else:
                    p1 = 1.0 - min(1.0, recover + treat * a)
                Pi[idx + (a, 1)] = p1
                Pi[idx + (a, 0)] = 1.0 - p1
        Ps.append(Pi)
    R = np.zeros((n, 2, 2))
    R[:, 1, :] -= 1.0
    R[:, :, 1] -= treat_cost
    return NetworkedMDP(graph, tuple(Ps), R, gamma, None, policy_radius)
