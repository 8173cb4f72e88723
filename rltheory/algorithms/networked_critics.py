r"""Sample-based local critics of a networked MDP: geometric-horizon roll-outs and κ-hop critic tables.

For a :class:`~rltheory.algorithms.networked_model.NetworkedMDP` under localized
softmax policies ``π_θ``:

* :func:`sample_rollouts` draws ``K`` independent ``(s_τ, a_τ) ~ d^π`` by stopping
  a roll-out from ``μ = ⊗μ_i`` at ``τ ~ Geom(1−γ)``, and continues it for an
  independent ``τ' ~ Geom(1−γ)`` steps, counting each agent's local pairs, so that
  ``G_j = ⟨r_j, counts_j⟩`` is an unbiased estimate of ``Q_j^π(s_τ, a_τ)`` for any
  local reward ``r_j`` (``Pr(τ' ≥ k) = γ^k``);
* :func:`local_critics` tabulates the empirical mean of ``G_j`` on each κ-hop block
  ``(s, a)_{N_j^κ}``: a consistent estimate of the occupancy-weighted truncated
  Q-function ``Q̃_j^κ = E_{d^π}[Q_j | (s, a)_{N_j^κ}]`` (Qu et al. 2020, Lemma 3);
* :func:`sampled_truncated_gradient` plugs the critics into the sample average of
  the truncated policy gradient ``Σ_{j∈N_i^κ} Q̂_j^κ ∇_{θ_i} log π_i`` (Ying et al.
  2023), unbiased when every ``L_i ⊆ N_j^κ`` for ``j ∈ N_i^κ`` (e.g.
  ``policy_radius = 0``).

Sampling is host-only (numpy) with an explicit seeded ``Generator``; the work is
``Θ(K n/(1−γ))`` draws, so a discount with ``1/(1−γ)`` above ``max_length`` is
refused before any draw. The primal-dual method that uses these estimates is
:mod:`rltheory.algorithms.networked_pd`.

References
----------
Qu, G., Wierman, A., Li, N. (2020). Scalable reinforcement learning of localized policies
for multi-agent networked systems. L4DC. Lemma 3 (truncated Q).
Ying, D., Zhang, Y., Ding, Y., Koppel, A., Lavaei, J. (2023). Scalable primal-dual
actor-critic method for safe multi-agent RL with general utilities. NeurIPS
(local critics from κ-hop neighbourhood samples).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..mdp.sample import _cdf, _check_rollout_length, _count, _rng
from ..mdp.sample import _draw as _draw_cdf
from .networked_joint import MAX_JOINT_BYTES, _check_thetas, local_softmax
from .networked_model import NetworkedMDP, _check_net, _check_radius, neighborhoods

__all__ = ["sample_rollouts", "local_critics", "sampled_truncated_gradient"]


def _policy_rows(net: NetworkedMDP, states: np.ndarray) -> list[np.ndarray]:
    """Row index ``x = s_{L_i}`` (mixed radix, first agent of ``L_i`` most significant) per agent."""
    S = net.S_local
    out = []
    for L in net.policy_sets():
        x = np.zeros(states.shape[0], dtype=np.int64)
        for k in L:
            x = x * S + states[:, k]
        out.append(x)
    return out


def _draw(prob: np.ndarray, gen: np.random.Generator) -> np.ndarray:
    """One categorical draw per row of ``prob[B, K]``: the first ``k`` with ``CDF(k) > u``,
    ``u ~ U[0, 1)`` (:mod:`rltheory.mdp.sample`'s inverse CDF), so an entry of probability 0 is
    never drawn. The old rule (the first ``k`` with ``CDF(k) ≥ u``) drew a leading zero at
    ``u = 0`` (a state of ``μ_i(s) = 0``) and a validated rounding negative such as ``−1e−10``
    for ``u`` between the two CDF values around it."""
    return _draw_cdf(_cdf(prob), gen.random(prob.shape[0]))


def _act(
    net: NetworkedMDP, pis: list[np.ndarray], states: np.ndarray, gen: np.random.Generator
) -> np.ndarray:
    rows = _policy_rows(net, states)
    return np.stack([_draw(pis[i][rows[i]], gen) for i in range(net.n)], axis=1)


def _step(
    net: NetworkedMDP, states: np.ndarray, actions: np.ndarray, gen: np.random.Generator
) -> np.ndarray:
    nbrs = neighborhoods(net.graph, 1)
    nxt = np.empty_like(states)
    for i in range(net.n):
        P = np.asarray(net.P_local[i])
        idx = tuple(states[:, k] for k in nbrs[i]) + (actions[:, i],)
        nxt[:, i] = _draw(P[idx], gen)
    return nxt


def sample_rollouts(
    net: NetworkedMDP,
    thetas: Any,
    n_samples: int,
    rng: np.random.Generator | int,
    *,
    max_length: float | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    r"""``K`` independent samples ``(s, a) ~ d^π`` with local visit counts of an independent continuation.

    Each roll-out starts at ``s_0 ~ μ = ⊗μ_i``, acts with ``π_θ`` and stops at
    ``τ ~ Geom(1−γ)`` (``Pr(τ = t) = (1−γ)γ^t``), so ``(s_τ, a_τ) ~ d^π``; it then
    continues for ``τ' ~ Geom(1−γ)`` further steps and counts, per agent, the local
    pairs ``(s_{j,τ+k}, a_{j,τ+k})``, ``k = 0..τ'``. For any local reward ``r_j``,
    ``G_j = ⟨r_j, counts_j⟩`` has ``E[G_j | s_τ, a_τ] = Q_j^π(s_τ, a_τ)`` (unnormalised,
    since ``Pr(τ' ≥ k) = γ^k``).

    Parameters
    ----------
    net : NetworkedMDP
        Host (numpy) model.
    thetas : list of arrays
        Local logits, shaped as :meth:`NetworkedMDP.theta_shapes`.
    n_samples : int ≥ 1
        ``K``.
    rng : numpy.random.Generator or int
    max_length : float ≥ 1, optional
        Largest accepted expected segment length ``1/(1−γ)``; ``None``: 10⁴
        (``γ ≤ 0.9999``).

    Returns
    -------
    states, actions : int arrays (K, n)
    counts : array (K, n, S_l, A_l)

    Raises
    ------
    ValueError
        ``1/(1−γ) > max_length`` (``γ`` and the expected length named), bad ``n_samples``
        or ``max_length``.

    Notes
    -----
    Cost: ``τ + 1`` and ``τ' + 1`` have mean ``1/(1−γ)``, so a call makes about
    ``2Kn/(1−γ)`` local draws in ``≈ 2 ln(K)/(1−γ)`` vectorised steps (the largest of
    ``K`` geometric times). Nothing is truncated: the samples are exact draws, and
    a discount with ``1/(1−γ) > max_length`` is refused before any work (about 16 s
    for ``K = 400`` on a ring of 4 at the default cap, ``γ = 0.9999``).
    """
    _check_net(net)
    net_thetas = _check_thetas(net, thetas)
    K = _count(n_samples, "n_samples")
    n, S, A, g = net.n, net.S_local, net.A_local, net.gamma
    _check_rollout_length(g, max_length, K)
    gen = _rng(rng)
    pis = [np.asarray(p) for p in local_softmax(net_thetas)]
    mu = np.full((n, S), 1.0 / S) if net.mu_local is None else np.asarray(net.mu_local)
    s = np.stack([_draw(np.broadcast_to(mu[i], (K, S)), gen) for i in range(n)], axis=1)
    a = _act(net, pis, s, gen)
    tau = gen.geometric(1.0 - g, size=K) - 1 if g > 0 else np.zeros(K, dtype=np.int64)
    for t in range(int(tau.max(initial=0))):
        live = tau > t
        s2 = _step(net, s[live], a[live], gen)
        s[live] = s2
        a[live] = _act(net, pis, s2, gen)
    s0, a0 = s.copy(), a.copy()
    counts = np.zeros((K, n, S, A))
    extra = gen.geometric(1.0 - g, size=K) - 1 if g > 0 else np.zeros(K, dtype=np.int64)
    rows, agents = np.arange(K)[:, None], np.arange(n)[None, :]
    np.add.at(counts, (rows, agents, s, a), 1.0)
    for t in range(int(extra.max(initial=0))):
        live = extra > t
        s2 = _step(net, s[live], a[live], gen)
        a2 = _act(net, pis, s2, gen)
        s[live], a[live] = s2, a2
        np.add.at(counts, (np.flatnonzero(live)[:, None], agents, s2, a2), 1.0)
    return s0, a0, counts


def _block_index(
    net: NetworkedMDP, states: np.ndarray, actions: np.ndarray, N: tuple[int, ...]
) -> np.ndarray:
    """Mixed-radix index of ``((s_k)_{k∈N}, (a_k)_{k∈N})``, states first."""
    S, A = net.S_local, net.A_local
    x = np.zeros(states.shape[0], dtype=np.int64)
    for k in N:
        x = x * S + states[:, k]
    for k in N:
        x = x * A + actions[:, k]
    return x


def _check_samples(
    net: NetworkedMDP, states: Any, actions: Any, returns: Any
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``states``/``actions`` integer ``(K, n)`` arrays with entries in ``[0, S_l)``/``[0, A_l)``,
    ``K ≥ 1``, and finite ``returns (K, n)``; located ``ValueError`` otherwise.

    An out-of-range local state used to land in another block's bin of the critic tables (or
    past their end) silently, a negative one failed inside ``np.bincount`` without a location,
    and ``K = 0`` returned all-NaN critics and gradients. Text ``returns`` failed in numpy's cast
    ("could not convert string to float") and complex ones lost their imaginary part: ``TypeError``."""
    st, ac = np.asarray(states), np.asarray(actions)
    kind = np.asarray(returns).dtype.kind
    if kind in ("U", "S", "c"):
        what = "complex numbers" if kind == "c" else "text"
        raise TypeError(
            f"returns must be a real array of shape (K, n={net.n}); got {what}: {returns!r}"
        )
    returns = np.asarray(returns, dtype=float)
    if st.shape != ac.shape or returns.shape != st.shape or st.ndim != 2 or st.shape[1] != net.n:
        raise ValueError(
            f"states, actions and returns must all have shape (K, n={net.n}); got "
            f"{st.shape}, {ac.shape}, {returns.shape}"
        )
    if st.shape[0] == 0:
        raise ValueError(
            "states, actions and returns must hold at least one sample (K >= 1); got K = 0"
        )
    for x, name, size in ((st, "states", net.S_local), (ac, "actions", net.A_local)):
        if x.dtype == bool or not np.issubdtype(x.dtype, np.integer):
            raise ValueError(
                f"{name} must be an integer array (local indices); got dtype {x.dtype}"
            )
        bad = np.argwhere((x < 0) | (x >= size))
        if bad.size:
            k, i = (int(v) for v in bad[0])
            raise ValueError(
                f"{name} entries must lie in [0, {size}); {name}[{k}, {i}] = {int(x[k, i])}"
            )
    if not np.all(np.isfinite(returns)):
        k, i = (int(v) for v in np.argwhere(~np.isfinite(returns))[0])
        raise ValueError(f"returns must be finite; returns[{k}, {i}] = {returns[k, i]}")
    return st.astype(np.int64, copy=False), ac.astype(np.int64, copy=False), returns


def local_critics(
    net: NetworkedMDP, states: np.ndarray, actions: np.ndarray, returns: np.ndarray, kappa: int
) -> list[np.ndarray]:
    r"""κ-hop truncated local critics ``Q̂_j^κ`` as tables over the κ-hop block of each agent.

    ``Q̂_j^κ(x) = Σ_k 1[(s,a)^{(k)}_{N_j^κ} = x] G_j^{(k)} / Σ_k 1[(s,a)^{(k)}_{N_j^κ} = x]``
    for samples ``(s, a)^{(k)} ~ d^π`` with returns ``G_j^{(k)}`` (:func:`sample_rollouts`):
    the empirical conditional mean, consistent for the occupancy-weighted truncated
    Q-function ``Q̃_j^κ(x) = E_{d^π}[Q_j | (s,a)_{N_j^κ} = x]`` (Qu et al. 2020,
    Lemma 3, with the occupancy as weights). Unvisited blocks hold ``nan``.

    Parameters
    ----------
    states, actions : int arrays (K, n)
    returns : array (K, n)
        ``G_j`` per sample and agent.
    kappa : int >= 0

    Returns
    -------
    list of arrays, agent ``j``'s of length ``(S_l A_l)^{|N_j^κ|}``, indexed by the mixed-radix
    code ``(s_{N}, a_{N})`` (states first, agents in increasing order).

    Raises
    ------
    ValueError
        Bad samples (located), ``kappa`` not a non-negative integer, or a table of more than
        :data:`~rltheory.algorithms.networked_joint.MAX_JOINT_BYTES` (``2**31``) bytes (agent,
        ``|N_j^κ|``, entries and bytes named): the tables are dense, so large ``κ`` on many agents
        used to fail in numpy ("Unable to allocate 8.00 TiB", path of 20 at ``κ = 19``; "Python int
        too large to convert to C long" on a path of 40). :func:`sampled_truncated_gradient`
        needs the critics at the sampled blocks only and has no such limit.
    """
    _check_net(net)
    Nk = neighborhoods(net.graph, _check_radius(kappa, "kappa"))
    states, actions, returns = _check_samples(net, states, actions, returns)
    SA = net.S_local * net.A_local
    for j in range(net.n):
        size = SA ** len(Nk[j])
        if 8 * size > MAX_JOINT_BYTES:
            raise ValueError(
                f"local_critics: agent {j}'s table over its kappa-hop block (|N_{j}^kappa| = "
                f"{len(Nk[j])} agents at kappa = {kappa}) has (S_l A_l)^{len(Nk[j])} = {SA}^"
                f"{len(Nk[j])} entries, {float(8 * size):.3g} bytes, over the cap MAX_JOINT_BYTES = "
                f"2**31 bytes; use a smaller kappa (sampled_truncated_gradient evaluates the "
                f"critics at the sampled blocks only)"
            )
    out = []
    for j in range(net.n):
        idx = _block_index(net, states, actions, Nk[j])
        size = (net.S_local * net.A_local) ** len(Nk[j])
        num = np.bincount(idx, weights=returns[:, j], minlength=size)
        den = np.bincount(idx, minlength=size)
        with np.errstate(invalid="ignore", divide="ignore"):
            out.append(num / den)
    return out


def sampled_truncated_gradient(
    net: NetworkedMDP,
    thetas: Any,
    states: np.ndarray,
    actions: np.ndarray,
    returns: np.ndarray,
    kappa: int,
) -> list[np.ndarray]:
    r"""Actor step direction from the local critics: ``ĝ_i = (1/K) Σ_k Σ_{j∈N_i^κ} Q̂_j^κ ∇_{θ_i} log π_i``.

    The sample average of the truncated policy gradient of Ying et al. (2023) with
    the critics of :func:`local_critics` evaluated at each sample's κ-hop block;
    ``∂ log π_i(a_i|x)/∂θ_i[x', b] = 1[x = x'](1[a_i = b] − π_i(b|x))``. Estimates
    ``E_d[Σ_{j∈N_i^κ} Q̃_j^κ ∇ log π_i]`` (``= ∇_θ L`` at ``κ ≥ diam``, with the
    returns of the shadow rewards); unbiased when every ``L_i ⊆ N_j^κ`` for
    ``j ∈ N_i^κ`` (module docstring), consistent otherwise.
    """
    _check_net(net)
    thetas = _check_thetas(net, thetas)
    kappa = _check_radius(kappa, "kappa")
    states, actions, returns = _check_samples(net, states, actions, returns)
    pis = [np.asarray(p) for p in local_softmax(thetas)]
    K = states.shape[0]
    Nk = neighborhoods(net.graph, kappa)
    # the critic Q̂_j^κ at each sample's own block: the mean of G_j over the samples sharing it
    # (as local_critics, whose dense tables of (S_l A_l)^|N_j^κ| entries were built here and
    # failed in numpy for large κ on many agents; the samples hit at most K blocks)
    qs = np.empty((K, net.n))
    for j in range(net.n):
        cols = list(Nk[j])
        _, grp = np.unique(
            np.concatenate([states[:, cols], actions[:, cols]], axis=1), axis=0, return_inverse=True
        )
        grp = grp.reshape(-1)
        qs[:, j] = (np.bincount(grp, weights=returns[:, j]) / np.bincount(grp))[grp]
    rows = _policy_rows(net, states)
    out = []
    for i in range(net.n):
        w = qs[:, list(Nk[i])].sum(axis=1)
        score = -pis[i][rows[i]]
        score[np.arange(K), actions[:, i]] += 1.0
        gi = np.zeros_like(pis[i])
        np.add.at(gi, rows[i], w[:, None] * score)
        out.append(gi / K)
    return out
