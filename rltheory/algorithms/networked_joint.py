r"""Exact joint computations of a networked MDP in factored form: policy, ``P_π``, Q-functions, occupancy, gradient.

For a :class:`~rltheory.algorithms.networked_model.NetworkedMDP` with localized
softmax policies ``π_i(a_i | s_{L_i}) = softmax(θ_i[s_{L_i}, :])``:

* the joint policy ``π(a | s) = Π_i π_i(a_i | s_{L_i})`` (:func:`joint_policy`);
* ``P_π(s, s') = Π_i Σ_{a_i} π_i(a_i|s_{L_i}) P_i(s'_i | s_{N_i}, a_i)``
  (:func:`joint_transition_matrix`) and, for small ``n``, the materialised
  :class:`~rltheory.mdp.FiniteMDP` (:func:`joint_mdp`);
* per-agent ``Q_j^π(s, a) = r_j(s_j, a_j) + γ Σ_{s'} P(s'|s, a) V_j^π(s')``
  (:func:`agent_q_functions`), the occupancy ``d^π`` (:func:`networked_occupancy`)
  and its local marginals (:func:`local_occupancies`);
* the exact ``∇_{θ_i} J`` of ``J(θ) = Σ_j V_j^π(μ)`` by the policy-gradient theorem
  (:func:`networked_policy_gradient`; Sutton et al. 2000).

Joint arrays are tensors with one axis per agent (``S_l^n`` states, ``A_l^n``
actions, mixed radix with agent 0 most significant); the joint kernel
``P(s'|s, a)`` is never materialised outside :func:`joint_mdp`, and
``Σ_{s'} P(s'|s, a) V(s')`` is contracted one agent at a time. The κ-hop
truncation built on these is in :mod:`rltheory.algorithms.networked`.

**Size cap.** The joint arrays grow like ``S_l^{2n}``: every exact joint function
(here and in :mod:`rltheory.algorithms.networked`) first checks the dense arrays it
will build and raises a located ``ValueError`` (function, number of agents, of
joint states and actions, bytes needed) when one of them would exceed
:data:`MAX_JOINT_BYTES` ``= 2**31`` bytes, or when its joint tensors would need
more than numpy's 64 axes (one per agent). With ``S_l = A_l = 2`` in float64 the
cap allows ``n ≤ 14`` for the policy, ``P_π`` and the occupancy, ``n ≤ 12`` for the
Q-functions and gradients, ``n ≤ 9`` for :func:`joint_mdp`.

References
----------
Qu, G., Wierman, A., Li, N. (2020). Scalable reinforcement learning of localized
policies for multi-agent networked systems. L4DC. Problem formulation (localized policies, product kernel).
Sutton, R., McAllester, D., Singh, S., Mansour, Y. (2000). Policy gradient methods for
reinforcement learning with function approximation. NeurIPS. Theorem 1.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._validate import check_finite
from ..backend import array_namespace, as_float, to_numpy
from ..mdp.model import FiniteMDP
from .networked_model import NetworkedMDP, _check_net, neighborhoods

__all__ = [
    "MAX_JOINT_BYTES",
    "local_softmax",
    "joint_policy",
    "joint_transition_matrix",
    "joint_mdp",
    "agent_q_functions",
    "networked_occupancy",
    "local_occupancies",
    "networked_policy_gradient",
]


#: Largest dense joint array, in bytes, that the exact joint functions build (2 GiB): above it they
#: raise a located ``ValueError`` (:func:`_check_joint_size`) instead of exhausting memory or failing
#: inside numpy. With ``S_l = A_l = 2`` in float64: ``P_π`` up to ``n = 14`` agents, the agents'
#: Q-functions up to ``n = 12``, :func:`joint_mdp` up to ``n = 9``.
MAX_JOINT_BYTES = 2**31

_MAX_AXES = (
    64  # numpy's limit on the number of axes of an array (the joint tensors have one per agent)
)


def _count(b: int, e: int) -> str:
    """``b^e`` written out: exact when small, else in scientific notation (no float overflow)."""
    v = b**e
    if v < 10**15:
        return f"{b}^{e} = {v}"
    digits = len(str(v)) - 1
    return f"{b}^{e} ≈ {v // 10 ** (digits - 2) / 100:.2f}e+{digits}"


def _joint_arrays(net: NetworkedMDP, what: str) -> tuple[dict[str, int], int]:
    """The dense joint arrays (name → number of entries) that ``what`` builds, and their number of axes."""
    n, S, A = net.n, net.S_local, net.A_local
    pi = {"π(a|s) (S_l^n × A_l^n)": S**n * A**n}
    Ppi = {"P_π (S_l^n × S_l^n)": S ** (2 * n)}
    # the Q-functions of all agents, and the widest intermediate of the agent-by-agent contraction
    # Σ_s' P(s'|s, a) V_j(s') of _expected_next, (n, S^n, A^(i+1), S^(n-i-1))
    q = {
        "Q_j of every agent (n × S_l^n × A_l^n)": n * S**n * A**n,
        "the contraction Σ_s' P(s'|s, a) V_j(s') (n × S_l^n × A_l × S_l^(n-1))": n
        * S**n
        * max(A ** (i + 1) * S ** (n - i - 1) for i in range(n)),
    }
    arrays = {
        "joint_policy": pi,
        "local_occupancies": {"d(s, a) (S_l^n × A_l^n)": S**n * A**n},
        "joint_transition_matrix": Ppi,
        "correlation_decay": Ppi,
        "networked_occupancy": {**Ppi, **pi},
        "joint_mdp": {"P(s'|s, a) (S_l^n × A_l^n × S_l^n)": S ** (2 * n) * A**n, **q},
    }.get(what, {**Ppi, **pi, **q})  # agent_q_functions and the gradients built on it
    return arrays, (3 * n if what == "joint_mdp" else 2 * n)


def _check_joint_size(net: NetworkedMDP, what: str) -> None:
    """Refuse, with a located ``ValueError``, a model whose dense joint arrays exceed :data:`MAX_JOINT_BYTES`.

    The message names the function, the number of agents, of joint states ``S_l^n`` and of joint
    actions ``A_l^n``, the memory of the largest dense array and of all of them, and the cap. A
    model whose joint tensors would need more than numpy's 64 axes (one per agent: ``2n``,
    ``3n`` for :func:`joint_mdp`) is refused likewise: it failed inside numpy with "maximum
    supported dimension for an ndarray is currently 64, found 66" (33 agents), and at ``n = 15``
    agents with two local states ``P_π`` alone needed 8.6 GB.
    """
    n, S, A = net.n, net.S_local, net.A_local
    arrays, axes = _joint_arrays(net, what)
    itemsize = int(net.xp.finfo(net.R_local.dtype).bits) // 8
    name, big = max(arrays.items(), key=lambda kv: kv[1])
    largest, total = big * itemsize, sum(arrays.values()) * itemsize
    if largest <= MAX_JOINT_BYTES and axes <= _MAX_AXES:
        return
    reason = (
        f"the largest, {name}, would need {largest:.3g} bytes ({itemsize}-byte entries; "
        f"{total:.3g} bytes for all the dense joint arrays it builds), over the cap MAX_JOINT_BYTES = "
        f"2**31 = {MAX_JOINT_BYTES} bytes per array"
        if largest > MAX_JOINT_BYTES
        else f"its joint tensors would need {axes} axes (one per agent), over numpy's limit of {_MAX_AXES}"
    )
    raise ValueError(
        f"{what}: the exact joint computation of a networked model with n = {n} agents, "
        f"S_l^n = {_count(S, n)} joint states and A_l^n = {_count(A, n)} joint actions is too large: "
        f"{reason}. The exact joint functions are for small n (consistency checks); use fewer agents"
    )


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


def _in_range(net: NetworkedMDP, x: Any, fname: str, what: str, R_agents: Any, bound: str) -> Any:
    """Return ``x`` if finite, else the located ``ValueError`` for a quantity beyond the float range.

    ``x`` is computed from finite, validated data, so a non-finite entry means the exact quantity is
    not representable in the model's dtype: local rewards of 1e308 at ``γ = 0.5`` give
    ``Q_j = 2e308``, which came back as ``inf`` and every gradient entry as ``nan`` without a
    word. The message names the function, the quantity, ``max|r_j|``, the a-priori scale
    ``bound`` (in units of ``max|r_j|``), the first non-finite entry and the remedy.
    """
    xp = net.xp
    if bool(xp.all(xp.isfinite(x))):
        return x
    h = np.asarray(to_numpy(x))
    idx = tuple(int(i) for i in np.argwhere(~np.isfinite(h))[0])
    M = float(np.max(np.abs(np.asarray(to_numpy(R_agents), dtype=np.float64))))
    dt = net.R_local.dtype
    raise ValueError(
        f"{fname}: {what} left the {dt} range: max|r_j| = {M:.4g}, gamma = {net.gamma!r} (scale "
        f"{bound}); largest {dt} number {float(xp.finfo(dt).max):.4g}; first non-finite entry "
        f"(index {idx}) = {h[idx]}. Values scale with the rewards: divide R_local (or R_agents) by a "
        f"power of 2, which is exact, and multiply the results back"
    )


def joint_policy(net: NetworkedMDP, thetas: Any) -> Any:
    r"""Joint product policy ``π(a|s) = Π_i π_i(a_i | s_{L_i})`` as an ``(S_l^n, A_l^n)`` array.

    Joint indices are mixed-radix with agent 0 most significant.

    Raises
    ------
    ValueError
        A dense joint array beyond :data:`MAX_JOINT_BYTES` (``2**31`` bytes) or more than 64
        joint axes (the number of agents, joint states and actions and the bytes named).
    """
    _check_net(net)
    _check_joint_size(net, "joint_policy")
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
    r"""``P_π(s, s') = Π_i Σ_{a_i} π_i(a_i|s_{L_i}) P_i(s'_i | s_{N_i}, a_i)``, shape ``(S_l^n, S_l^n)``.

    Raises
    ------
    ValueError
        A dense joint array beyond :data:`MAX_JOINT_BYTES` (``2**31`` bytes) or more than 64
        joint axes (the number of agents, joint states and actions and the bytes named).
    """
    _check_net(net)
    _check_joint_size(net, "joint_transition_matrix")
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

    Raises
    ------
    ValueError
        A dense joint array beyond :data:`MAX_JOINT_BYTES` (``2**31`` bytes) or more than 64
        joint axes (the number of agents, joint states and actions and the bytes named); a joint
        reward ``Σ_i r_i`` beyond the float range (``max|r_j|`` named).
    """
    _check_net(net)
    _check_joint_size(net, "joint_mdp")
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
    # Σ_i r_i of finite local rewards can overflow (two agents at 1e308): it reached FiniteMDP as
    # "R must be finite; R(s=0, a=0) = inf", naming a joint R the caller never gave
    with np.errstate(over="ignore", invalid="ignore"):  # (an overflow is refused below, located)
        R = _joint_reward(net, R_ag)
    R = _in_range(net, R, "joint_mdp", "the joint reward sum_i r_i(s_i, a_i)", R_ag, "n max|r_j|")
    return FiniteMDP(P, R, net.gamma, net.initial_distribution())


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

    Raises
    ------
    ValueError
        A dense joint array beyond :data:`MAX_JOINT_BYTES` (``2**31`` bytes) or more than 64
        joint axes (the number of agents, joint states and actions and the bytes named).
        A result beyond the float range of the model's dtype (the exact value overflows:
        ``Q_j ~ max|r|/(1−γ)``, the gradient ``~ n max|r|/(1−γ)²``), the function, the
        quantity and ``max|r_j|`` named.
    """
    _check_net(net)
    _check_joint_size(net, "agent_q_functions")
    xp = net.xp
    n, S = net.n, net.S_local
    R_ag = _check_rewards(net, R_agents)
    pi = joint_policy(net, thetas)
    Ppi = joint_transition_matrix(net, thetas)
    Rj = _agent_rewards(net, R_ag)  # (n, S^n, A^n)
    rpi = xp.sum(Rj * pi[None, ...], axis=-1)  # (n, S^n)
    M = xp.eye(S**n, dtype=Ppi.dtype) - net.gamma * Ppi
    with np.errstate(over="ignore", invalid="ignore"):  # (an overflow is refused below, located)
        V = xp.linalg.solve(M, xp.matrix_transpose(rpi))  # (S^n, n)
        Q = Rj + net.gamma * _expected_next(net, xp.matrix_transpose(V))
    return _in_range(
        net, Q, "agent_q_functions", "Q_j = r_j + gamma P V_j", R_ag, "max|r_j|/(1-gamma)"
    )


def networked_occupancy(net: NetworkedMDP, thetas: Any) -> Any:
    r"""Normalised state-action occupancy ``d^π(s, a) = (1−γ) [μ^T (I − γP_π)^{-1}](s) π(a|s)``.

    Raises
    ------
    ValueError
        A dense joint array beyond :data:`MAX_JOINT_BYTES` (``2**31`` bytes) or more than 64
        joint axes (the number of agents, joint states and actions and the bytes named).
    """
    _check_net(net)
    _check_joint_size(net, "networked_occupancy")
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
        numpy's "cannot reshape"), or not finite; a joint array ``(S_l^n, A_l^n)`` beyond
        :data:`MAX_JOINT_BYTES` (``2**31`` bytes) or more than 64 joint axes.
    """
    _check_net(net)
    _check_joint_size(net, "local_occupancies")
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

    Raises
    ------
    ValueError
        A dense joint array beyond :data:`MAX_JOINT_BYTES` (``2**31`` bytes) or more than 64
        joint axes (the number of agents, joint states and actions and the bytes named).
        A result beyond the float range of the model's dtype (the exact value overflows:
        ``Q_j ~ max|r|/(1−γ)``, the gradient ``~ n max|r|/(1−γ)²``), the function, the
        quantity and ``max|r_j|`` named.
    """
    _check_net(net)
    _check_joint_size(net, "networked_policy_gradient")
    xp = net.xp
    thetas = _check_thetas(net, thetas)
    with np.errstate(over="ignore", invalid="ignore"):  # (an overflow is refused below, located)
        Q = xp.sum(agent_q_functions(net, thetas, R_agents), axis=0)
        d = networked_occupancy(net, thetas)
        g = _score_projection(net, d * Q, local_softmax(thetas))
        g = [gi / (1.0 - net.gamma) for gi in g]
    R = _check_rewards(net, R_agents)
    for i, gi in enumerate(g):
        _in_range(
            net,
            gi,
            "networked_policy_gradient",
            f"the gradient of agent {i}",
            R,
            "n max|r_j|/(1-gamma)^2",
        )
    return g
