"""``hybrid_npg_bound`` as a theorem for arbitrary critics, with ``E_t`` computed from its definition (helper-82).

Exponential-weights updates ``π_{t+1,h} ∝ π_{t,h} exp(η Q̂_{t,h})`` from the uniform policy, with
``Q̂_t = Q^{π_t} + noise`` (any critic), on seeded finite-horizon MDPs with rewards in ``[0, 1]``.
``E_t = Σ_h E_{s~d*_h}[⟨π_{t+1,h} − π*_h, δ_{t,h}⟩(s) + Σ_{h'>h} E^{π_{t+1}}[g_{t,h'}(s_{h'}) | s_h = s]]``,
``δ_t = Q̂_t − Q^{π_t}``, ``g_{t,h} = ⟨π_{t+1,h} − π_{t,h}, δ_{t,h}⟩``, is computed here by a backward
recursion independent of :mod:`rltheory.algorithms.hybrid`; the running average suboptimality must
stay below the bound at every ``T``.
"""

from __future__ import annotations

import numpy as np
import pytest

from rltheory.bounds import hybrid_npg_bound


def _run(
    seed: int, noise: float, H: int = 3, S: int = 3, A: int = 3, T: int = 30, eta: float = 0.7
):  # noqa: ANN202
    rng = np.random.default_rng(seed)
    P = rng.dirichlet(np.ones(S), size=(H, S, A))
    R = rng.random((H, S, A))
    mu = rng.dirichlet(np.ones(S))

    def q_values(pi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        Q, V = np.zeros((H, S, A)), np.zeros((H + 1, S))
        for h in range(H - 1, -1, -1):
            Q[h] = R[h] + P[h] @ V[h + 1]
            V[h] = (pi[h] * Q[h]).sum(-1)
        return Q, V

    V_star, pi_star = np.zeros((H + 1, S)), np.zeros((H, S, A))
    for h in range(H - 1, -1, -1):
        Qh = R[h] + P[h] @ V_star[h + 1]
        pi_star[h] = np.eye(A)[Qh.argmax(-1)]
        V_star[h] = Qh.max(-1)
    d_star, ds = np.zeros((H, S)), mu.copy()
    for h in range(H):
        d_star[h] = ds
        ds = np.einsum("s,sa,sat->t", ds, pi_star[h], P[h])
    pi = np.full((H, S, A), 1.0 / A)
    subopt, E = [], []
    for _ in range(T):
        Q, V = q_values(pi)
        subopt.append(float(V_star[0] @ mu - V[0] @ mu))
        Q_hat = Q + noise * rng.standard_normal(Q.shape)
        delta = Q_hat - Q
        new = pi * np.exp(eta * (Q_hat - Q_hat.max(-1, keepdims=True)))
        new /= new.sum(-1, keepdims=True)
        g = ((new - pi) * delta).sum(-1)
        W = np.zeros((H, S))  # W_h(s) = E^{π_{t+1}}[Σ_{h'>h} g_{h'}(s_{h'}) | s_h = s]
        for h in range(H - 2, -1, -1):
            W[h] = np.einsum("sa,sat,t->s", new[h], P[h], g[h + 1] + W[h + 1])
        E.append(float((d_star * (((new - pi_star) * delta).sum(-1) + W)).sum()))
        pi = new
    return np.cumsum(subopt) / np.arange(1, T + 1), hybrid_npg_bound(H, A, eta, E), E


@pytest.mark.parametrize("seed", range(12))
def test_running_suboptimality_below_the_bound_for_any_critic(seed):
    noise = (0.0, 0.3, 2.0)[seed % 3]
    avg, bound, E = _run(seed, noise)
    assert np.all(avg <= bound + 1e-12)
    if noise == 0.0:
        assert max(abs(e) for e in E) == 0.0  # exact critic: E_t = 0 (δ = 0)
