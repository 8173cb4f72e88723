r"""Safe networked multi-agent primal-dual actor-critic with general utilities (exact and sample-based).

Model: a :class:`~rltheory.algorithms.networked.NetworkedMDP` with localized
softmax policies ``π_i(a_i | s_{L_i})``. Agent ``i`` has a *local utility*
``f_i(λ_i)`` (concave) and a *local safety constraint* ``g_i(λ_i) ≤ b_i``
(convex), both functions of its local occupancy
``λ_i(s_i, a_i) = Σ_{(s,a): s_i, a_i} d^π(s, a)`` (normalised discounted
state-action occupancy). The agents solve

    max_θ Σ_i f_i(λ_i^{π_θ})   s.t.   g_i(λ_i^{π_θ}) ≤ b_i,   i = 1..n,

through the Lagrangian ``L(θ, μ) = Σ_i [f_i(λ_i) − μ_i (g_i(λ_i) − b_i)]``. By
the chain rule (shadow rewards, Zhang et al. 2020, §3),

    ∇_{θ_i} L = E_{(s,a)~d^π}[ Σ_j Q_j^{r̃}(s, a) ∇_{θ_i} log π_i(a_i | s_{L_i}) ],
    r̃_j = ∇f_j(λ_j) − μ_j ∇g_j(λ_j)   (a local reward of agent j),

with ``Q_j^{r̃}`` the discounted Q-function of the local shadow reward ``r̃_j``
(unnormalised). The scalable algorithm of Ying et al. (2023) replaces ``Q_j`` by
the κ-hop truncated ``Q̃_j^κ`` (a function of ``(s, a)_{N_j^κ}`` only) and keeps
only ``j ∈ N_i^κ``:

    θ_i ← θ_i + η_θ ĝ_i^κ,    ĝ_i^κ = E_d[ Σ_{j∈N_i^κ} Q̃_j^κ ∇_{θ_i} log π_i ],
    μ_i ← Π_{[0,Λ]}( μ_i + η_μ (g_i(λ_i) − b_i − δ μ_i) ).

* Exact (:func:`networked_primal_dual` without ``samples``): ``λ``, ``Q̃^κ``
  (occupancy-weighted: ``Q̃_j^κ = E_d[Q_j | (s,a)_{N_j^κ}]``) and ``ĝ^κ`` from
  the factored joint model (:mod:`rltheory.algorithms.networked`).
* Sample-based actor-critic (``samples=K``, seeded ``Generator``): per iteration
  ``2K`` roll-outs of the networked system. ``K`` of them stop at a geometric
  time ``τ ~ Geom(1−γ)`` and give ``(s_τ, a_τ) ~ d^π`` exactly, whose local
  marginals estimate ``λ_i`` (with one pseudo-count per local pair, so entropy
  shadow rewards stay finite: ``λ̂ = (K λ̂_MC + 1)/(K + S_l A_l)``). The other
  ``K`` also continue from ``(s_τ, a_τ)`` for an independent geometric time
  ``τ' ~ Geom(1−γ)`` and return ``G_j = Σ_{k=0}^{τ'} r̃_j(s_{j,τ+k}, a_{j,τ+k})``,
  an unbiased estimate of ``Q_j^{r̃}(s_τ, a_τ)``
  (:func:`sample_rollouts`). The *local critic* of agent ``j`` is the table of
  empirical means of ``G_j`` over the samples sharing the κ-hop block
  ``(s,a)_{N_j^κ}`` (:func:`local_critics`) — a consistent estimate of the
  occupancy-weighted ``Q̃_j^κ`` — and the actor plugs it into the empirical
  ``ĝ_i^κ`` (:func:`sampled_truncated_gradient`). When each ``L_i ⊆ N_j^κ`` for
  ``j ∈ N_i^κ`` (e.g. ``policy_radius = 0``) the plug-in gradient equals
  ``(1/K) Σ G_j ∇ log π_i`` exactly and is unbiased for the exact ``ĝ^κ`` given
  the shadow reward. The roll-outs and critics are defined in
  :mod:`rltheory.algorithms.networked_critics` and re-exported here.

The FOSP measure traced at every iterate is computed exactly from the joint
model, with the *untruncated* gradient of the *unregularised* Lagrangian:
``‖∇_θ L(θ_t, μ_t)‖² + ‖(μ_t − Π_{[0,Λ]}(μ_t + η_μ (g − b)))/η_μ‖²``
(:func:`rltheory.algorithms.constrained.fosp_residual`).

Guarantees (Ying et al. 2023). Exact setting: with constant ``η_θ`` below the
inverse smoothness constant, ``η_μ`` constant and the dual regularisation
``δ ∝ T^{-1/3}`` (:func:`rltheory.bounds.constrained.fosp_schedule`), the average
over ``t < T`` of the FOSP measure is ``O(T^{-2/3})`` plus the truncation error
``O(φ_0^{2κ})``, which vanishes for ``κ ≥ diam(G)``. Sample-based: ``Õ(ε^{-3.5})``
samples for an ε-FOSP, up to ``O(φ_0^{2κ})``. The constants (smoothness of the
utilities, correlation-decay constants) are not stated in the abstract; rltheory
checks exponents, not constants.

References
----------
Ying, D., Zhang, Y., Ding, Y., Koppel, A., Lavaei, J. (2023). Scalable primal-dual
actor-critic method for safe multi-agent RL with general utilities. NeurIPS
(exact-setting FOSP rate O(T^{-2/3}); sample-based Õ(ε^{-3.5}) with approximation error O(φ_0^{2κ})).
Qu, G., Wierman, A., Li, N. (2020). Scalable reinforcement learning of localized policies
for multi-agent networked systems. L4DC. Lemma 3 (truncated Q).
Zhang, J. et al. (2020). Variational policy gradient method for RL with general utilities.
NeurIPS. §3 (shadow reward).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .._validate import check_real
from ..backend import require_host
from ..mdp.sample import _rng
from ..mdp.utility import OccupancyFunction, shadow_reward
from ..trace import Trace, TraceRecorder
from .constrained import _pd_settings, fosp_residual
from .networked import truncated_policy_gradient
from .networked_critics import (
    _check_rollout_length,
    local_critics,
    sample_rollouts,
    sampled_truncated_gradient,
)
from .networked_joint import (
    _check_joint_size,
    _check_thetas,
    local_occupancies,
    networked_occupancy,
)
from .networked_model import NetworkedMDP, _check_radius

__all__ = [
    "NetworkedPDResult",
    "SafeNetworkedProblem",
    "lagrangian_gradient",
    "sample_rollouts",
    "local_critics",
    "sampled_truncated_gradient",
    "networked_primal_dual",
]


@dataclass(frozen=True, eq=False)
class SafeNetworkedProblem:
    """Local utilities ``f_i`` and safety constraints ``g_i(λ_i) ≤ b_i`` on a networked MDP.

    Parameters
    ----------
    net : NetworkedMDP
        Host (numpy) model.
    objectives : sequence of OccupancyFunction, length n
        Concave (or affine) ``f_i`` of the local occupancy ``λ_i[S_l, A_l]``.
    constraints : sequence of OccupancyFunction, length n
        Convex (or affine) ``g_i``.
    b : array (n,)
        Thresholds.

    Raises
    ------
    TypeError, ValueError
        Wrong types, lengths or shapes (agent named); a convex objective or a concave constraint
        (``ValueError``, agent and function named).
    """

    net: NetworkedMDP
    objectives: tuple
    constraints: tuple
    b: np.ndarray

    def __post_init__(self) -> None:
        if not isinstance(self.net, NetworkedMDP):
            raise TypeError(f"net must be a NetworkedMDP; got {type(self.net).__name__}")
        require_host(self.net.R_local, "SafeNetworkedProblem")
        n, shape = self.net.n, (self.net.S_local, self.net.A_local)
        for field in ("objectives", "constraints"):
            fs = getattr(self, field)
            if isinstance(fs, OccupancyFunction) or not hasattr(
                fs, "__iter__"
            ):  # old: "'int' object is not iterable"
                raise TypeError(
                    f"{field} must be a sequence of n={n} OccupancyFunction; got {type(fs).__name__}"
                )
            fs = tuple(fs)
            if len(fs) != n:
                raise ValueError(f"{field} must hold one function per agent (n={n}); got {len(fs)}")
            for i, f in enumerate(fs):
                if not isinstance(f, OccupancyFunction):
                    raise TypeError(
                        f"{field}[{i}] must be an OccupancyFunction; got {type(f).__name__}"
                    )
                if tuple(f.shape) != shape:
                    raise ValueError(
                        f"{field}[{i}] has shape {f.shape}; local (S_l, A_l) = {shape}"
                    )
                # as general_utility_primal_dual: a convex objective or a concave constraint was run
                # as if the method's guarantee (concave f_i, convex g_i) applied
                want = ("affine", "concave") if field == "objectives" else ("affine", "convex")
                if f.curvature not in want:
                    raise ValueError(
                        f"{field}[{i}] ({f.name!r}) must be {want[1]} or affine "
                        f"({'f_i to maximise' if field == 'objectives' else 'g_i <= b_i'}); "
                        f"it is {f.curvature}"
                    )
            object.__setattr__(self, field, fs)
        object.__setattr__(self, "b", _real_vector(self.b, "b", n))

    def values(self, lam: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(f_i(λ_i))_i`` and ``(g_i(λ_i))_i`` for local occupancies ``lam[n, S_l, A_l]``."""
        F = np.array([f.value(lam[i]) for i, f in enumerate(self.objectives)])
        G = np.array([g.value(lam[i]) for i, g in enumerate(self.constraints)])
        return F, G

    def shadow_rewards(self, lam: np.ndarray, mu: np.ndarray) -> np.ndarray:
        """``r̃_i = ∇f_i(λ_i) − μ_i ∇g_i(λ_i)``, shape ``(n, S_l, A_l)``.

        Raises
        ------
        ValueError
            A gradient of the wrong shape or not finite (e.g. the entropy's at ``λ_i(s_i, a_i) = 0``),
            with the utility, agent, local pair and ``λ`` named; it used to surface as
            "R_agents must be finite" from the gradient code, an argument the caller never passed.
        """
        shape = (self.net.S_local, self.net.A_local)
        out = []
        for i, (f, g) in enumerate(zip(self.objectives, self.constraints, strict=True)):
            grads = []
            for field, F in (("objectives", f), ("constraints", g)):
                r = np.asarray(shadow_reward(F, lam[i]), dtype=float)
                if r.shape != shape:
                    raise ValueError(
                        f"{field}[{i}].gradient must return the local shape (S_l, A_l) = {shape}; "
                        f"got {r.shape}"
                    )
                if not np.all(np.isfinite(r)):
                    s, a = (int(v) for v in np.argwhere(~np.isfinite(r))[0])
                    raise ValueError(
                        f"{field}[{i}] ({F.name}) has no finite gradient at lambda_{i}: "
                        f"gradient(s_i={s}, a_i={a}) = {r[s, a]} at lambda_{i}(s_i={s}, a_i={a}) = "
                        f"{float(lam[i][s, a])!r}"
                    )
                grads.append(r)
            out.append(grads[0] - mu[i] * grads[1])
        return np.stack(out)


def lagrangian_gradient(
    problem: SafeNetworkedProblem, thetas: Any, mu: Any, kappa: int | None = None
) -> tuple[list[np.ndarray], np.ndarray, np.ndarray]:
    r"""Exact ``∇_θ L(θ, μ)`` (``kappa=None``) or its κ-hop truncation ``ĝ^κ`` (occupancy weights).

    ``∇_{θ_i} L = (1−γ) ∇_{θ_i} Σ_j V_{r̃_j}^{π_θ}(μ_0)`` with the shadow rewards
    ``r̃_j = ∇f_j(λ_j) − μ_j ∇g_j(λ_j)`` frozen at the current ``λ`` (chain rule,
    Zhang et al. 2020, §3); the truncated version is
    ``(1−γ)·``:func:`~rltheory.algorithms.networked.truncated_policy_gradient` with
    ``weights="occupancy"`` (Ying et al. 2023), equal to the exact gradient for
    ``κ ≥ diam(G)``.

    Returns
    -------
    grads : list of arrays shaped like ``θ_i``
    F, G : arrays (n,)
        ``f_i(λ_i)`` and ``g_i(λ_i)`` at ``π_θ``.
    """
    if not isinstance(problem, SafeNetworkedProblem):  # old: "'str' object has no attribute 'net'"
        raise TypeError(f"problem must be a SafeNetworkedProblem; got {type(problem).__name__}")
    net = problem.net
    _check_joint_size(
        net, "lagrangian_gradient"
    )  # before the occupancy, whose P_π alone may not fit
    thetas = _check_thetas(net, thetas)
    mu = _duals(problem, mu)
    lam = np.asarray(local_occupancies(net, networked_occupancy(net, thetas)))
    F, G = problem.values(lam)
    rt = problem.shadow_rewards(lam, mu)
    k = net.diameter if kappa is None else _check_radius(kappa, "kappa")
    try:
        g = truncated_policy_gradient(net, thetas, k, rt, weights="occupancy")
    except ValueError as e:  # (inputs checked above: only a value beyond the float range is left)
        # the message named agent_q_functions and "R_local (or R_agents)", neither of them given here
        raise ValueError(
            f"lagrangian_gradient: the shadow rewards r~_j = grad f_j - mu_j grad g_j (max|r~| = "
            f"{float(np.max(np.abs(rt))):.4g}, max mu = {float(np.max(mu)):.4g}) give values beyond "
            f"the float range; reduce mu or the utilities' scale. {e}"
        ) from e
    return [(1.0 - net.gamma) * np.asarray(gi) for gi in g], F, G


def _real_vector(x: Any, field: str, n: int) -> np.ndarray:
    """``x`` as a finite float array of shape ``(n,)``; text used to fail in numpy's cast
    ("could not convert string to float: 'abc'") without naming ``field``."""
    kind = np.asarray(x).dtype.kind
    if kind in ("U", "S", "c"):
        raise TypeError(f"{field} must be a real array of shape (n,) = {(n,)}; got {x!r}")
    v = np.asarray(x, dtype=float)
    if v.shape != (n,) or not np.all(np.isfinite(v)):
        raise ValueError(f"{field} must be a finite array of shape (n,) = {(n,)}; got {x!r}")
    return v


def _duals(problem: SafeNetworkedProblem, mu: Any) -> np.ndarray:
    return _real_vector(mu, "mu", problem.net.n)


@dataclass(frozen=True, eq=False)
class NetworkedPDResult:
    """Result of :func:`networked_primal_dual`.

    Attributes
    ----------
    thetas : list of arrays
        Final local logits.
    duals : array (n,)
    iterations : int
    converged : None
        Fixed iteration budget (no stopping rule).
    trace : Trace
        ``fosp`` (exact FOSP measure at ``(θ_t, μ_t)``), ``objective`` (``Σ_i f_i``),
        ``violation`` (``max_i [g_i − b_i]_+``), ``lam_norm`` (``Σ μ_i``),
        ``grad_error`` (``‖step direction − ∇_θ L‖²``), ``t = 0..T−1``.
    """

    thetas: list
    duals: np.ndarray
    iterations: int
    converged: None
    trace: Trace


def networked_primal_dual(
    problem: SafeNetworkedProblem,
    *,
    iterations: int,
    kappa: int,
    eta_theta: float,
    eta_mu: float,
    Lambda: float,
    delta: float = 0.0,
    thetas0: Any = None,
    samples: int | None = None,
    rng: np.random.Generator | int | None = None,
    max_length: float | None = None,
) -> NetworkedPDResult:
    r"""Scalable primal-dual (actor-critic) method for safe networked MARL with general utilities.

    ``θ_i ← θ_i + η_θ ĝ_i^κ``, ``μ_i ← Π_{[0,Λ]}(μ_i + η_μ (g_i(λ_i) − b_i − δ μ_i))``
    (module docstring; Ying et al. 2023). Exact when ``samples`` is None;
    otherwise the sample-based actor-critic with ``K = samples`` roll-outs per
    iteration for the occupancy and ``K`` for the local critics.

    Parameters
    ----------
    problem : SafeNetworkedProblem
    iterations : int
        ``T``.
    kappa : int
        Communication / truncation radius ``κ ≥ 0``.
    eta_theta, eta_mu, Lambda, delta : float
        Steps, dual radius, dual regularisation (``δ ∝ T^{-1/3}`` for the exact rate,
        :func:`rltheory.bounds.constrained.fosp_schedule`).
    thetas0 : list of arrays, optional
        Initial logits (uniform local policies by default).
    samples : int, optional
        Sample-based mode; needs ``rng``.
    rng : numpy.random.Generator or int, optional
        The roll-outs' generator (sample-based mode). The exact mode draws nothing: ``rng`` is
        checked as in sample mode (a Generator or an int seed ``>= 0``) and otherwise unused, a
        Generator is not advanced, and the result is the same for every ``rng``.
    max_length : float ≥ 1, optional
        Sample-based mode: the largest expected roll-out segment length ``1/(1−γ)``
        accepted (:func:`sample_rollouts`; ``None``: 10⁴).

    Returns
    -------
    NetworkedPDResult

    Raises
    ------
    ValueError
        Non-positive steps or ``Lambda``, negative ``delta`` or ``kappa``, sample mode without ``rng``,
        sample mode with ``1/(1−γ) > max_length`` (refused before the first iteration), a negative
        seed ``rng`` (either mode).
    TypeError
        ``rng`` neither a Generator, an int seed nor None (either mode).

    Notes
    -----
    Exact setting (Ying et al. 2023): average FOSP measure ``O(T^{-2/3}) + O(φ_0^{2κ})``.
    Every iterate's FOSP measure uses the exact, untruncated gradient of the
    unregularised Lagrangian, computed from the joint model (``S_l^n`` states):
    meant for small networks.

    Examples
    --------
    >>> import networkx as nx, numpy as np
    >>> from rltheory.algorithms.networked import sis_network
    >>> from rltheory.mdp.utility import linear_utility
    >>> net = sis_network(nx.path_graph(3))
    >>> R = np.asarray(net.R_local); C = np.array([[[0.0, 0.0], [1.0, 1.0]]] * 3)
    >>> pb = SafeNetworkedProblem(net, [linear_utility(R[i]) for i in range(3)],
    ...                           [linear_utility(C[i]) for i in range(3)], np.full(3, 0.3))
    >>> res = networked_primal_dual(pb, iterations=50, kappa=1, eta_theta=1.0, eta_mu=1.0, Lambda=10.0)
    >>> bool(res.trace["fosp"][-1] < res.trace["fosp"][0])
    True
    """
    if not isinstance(problem, SafeNetworkedProblem):
        raise TypeError(f"problem must be a SafeNetworkedProblem; got {type(problem).__name__}")
    net = problem.net
    _check_joint_size(
        net, "networked_primal_dual"
    )  # every iteration evaluates the exact joint model
    T, et, em, Lam, delta, K, gen = _pd_settings(
        iterations,
        eta_theta,
        eta_mu,
        Lambda,
        delta,
        samples,
        rng,
        "networked_primal_dual",
        "samples",
    )
    kappa = _check_radius(kappa, "kappa")
    if gen is not None:
        _check_rollout_length(net.gamma, max_length, K)
    else:  # max_length and rng are unused without samples, but not accepted silently:
        # rng='abc' or -1 used to run the exact mode without a word (the sample mode refuses them)
        if max_length is not None:
            check_real(max_length, "max_length", low=1.0)
        if rng is not None:
            _rng(rng)  # checks only: no draw, a Generator's state is unchanged
    thetas = (
        [np.zeros(s) for s in net.theta_shapes()]
        if thetas0 is None
        else [np.array(t, dtype=float) for t in _check_thetas(net, thetas0)]
    )
    n, S, A = net.n, net.S_local, net.A_local
    mu = np.zeros(n)
    rec = TraceRecorder()
    for t in range(T):
        exact, F, G = lagrangian_gradient(problem, thetas, mu)
        if gen is None:
            step = (
                exact
                if kappa >= net.diameter
                else lagrangian_gradient(problem, thetas, mu, kappa)[0]
            )
            Gd = G
        else:
            s, a, _ = sample_rollouts(net, thetas, K, gen, max_length=max_length)
            lam = np.zeros((n, S, A))
            np.add.at(lam, (np.arange(n)[None, :], s, a), 1.0)
            lam = (lam + 1.0) / (K + S * A)
            Gd = problem.values(lam)[1]
            rt = problem.shadow_rewards(lam, mu)
            s2, a2, counts = sample_rollouts(net, thetas, K, gen, max_length=max_length)
            ret = (counts * rt[None]).sum(axis=(2, 3))
            step = sampled_truncated_gradient(net, thetas, s2, a2, ret, kappa)
        flat = np.concatenate([gi.ravel() for gi in exact])
        rec.record(
            t,
            fosp=fosp_residual(flat, mu, G - problem.b, eta_mu=em, Lambda=Lam),
            objective=float(F.sum()),
            violation=float(np.max(np.maximum(G - problem.b, 0.0))),
            lam_norm=float(mu.sum()),
            grad_error=float(sum(np.sum((x - y) ** 2) for x, y in zip(step, exact, strict=True))),
        )
        thetas = [th + et * gi for th, gi in zip(thetas, step, strict=True)]
        mu = np.clip(mu + em * (Gd - problem.b - delta * mu), 0.0, Lam)
    return NetworkedPDResult(thetas, mu, T, None, rec.finish())
