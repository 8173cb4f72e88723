"""Offline pessimism: theorems and cross-method consistency not covered by test_offline.py.

* PEVI with the self-normalised radius on linear MDPs whose features are *not* one-hot
  (Jin, Yang & Wang 2021, Thm 4.2 with Abbasi-Yadkori et al. 2011, Thm 2): ``V̂ ≤ V^π̂``
  pointwise and ``SubOpt ≤ 2 Σ_h E_π*[Γ_h]`` in at least ``1 − δ`` of the datasets.
* CQL's greedy value equals the CQL evaluation fixed point of its own policy
  (:func:`cql` vs :func:`conservative_evaluation`, two independent recursions).
"""

from __future__ import annotations

import numpy as np

from rltheory.algorithms.offline import conservative_evaluation, cql, pevi
from rltheory.bounds.coverage import finite_horizon_occupancy
from rltheory.bounds.offline import pessimism_suboptimality_bound
from rltheory.mdp import FiniteHorizonMDP, backward_induction, evaluate_finite_horizon
from rltheory.mdp.offline_data import empirical_model, sample_episodes


def _linear_mdp(rng: np.random.Generator, H: int, S: int, A: int, d: int):
    """φ(s, a) on the simplex of R^d, P_h(·|s, a) = Σ_i φ_i μ_{h,i}(·), r_h = φᵀθ_h, θ ∈ [0, 1]^d.

    Then ‖φ‖ ≤ 1, ‖θ_h‖ ≤ √d and ‖μ_h(S)‖ = √d, the assumptions of the PEVI radius.
    """
    phi = rng.dirichlet(np.full(d, 0.3), size=(S, A))
    mu = rng.dirichlet(np.full(S, 0.5), size=(H, d))
    theta = rng.uniform(size=(H, d))
    P = np.einsum("sai,hit->hsat", phi, mu)
    R = np.einsum("sai,hi->hsa", phi, theta)
    return FiniteHorizonMDP(P, R), phi


def test_pevi_self_normalised_pessimism_on_non_one_hot_linear_mdps():
    rng = np.random.default_rng(7)
    delta, runs, failures = 0.1, 0, 0
    for _ in range(30):
        H, S, A, d = (
            int(rng.integers(1, 4)),
            int(rng.integers(2, 5)),
            int(rng.integers(2, 4)),
            int(rng.integers(2, 4)),
        )
        fh, phi = _linear_mdp(rng, H, S, A, d)
        sol = backward_induction(fh)
        mu0 = np.asarray(fh.initial_distribution())
        v_star = float(np.asarray(sol.V)[0] @ mu0)
        d_star = np.asarray(finite_horizon_occupancy(fh, sol.policy))
        data = sample_episodes(
            fh,
            rng.dirichlet(np.ones(A), size=(H, S)),
            int(rng.integers(H, 200)),
            rng=rng,
            rewards="bernoulli",
        )
        for ridge in (0.01, 1.0):
            res = pevi(data, phi, beta="self-normalized", ridge=ridge, delta=delta, split=True)
            V = np.asarray(evaluate_finite_horizon(fh, res.policy))
            sub = v_star - float(V[0] @ mu0)
            ok = (
                np.all(res.V <= V + 1e-12)
                and sub <= pessimism_suboptimality_bound(d_star, res.bonus) + 1e-12
            )
            runs += 1
            failures += not ok
    assert failures <= delta * runs


def test_cql_value_is_the_cql_evaluation_of_its_policy():
    rng = np.random.default_rng(11)
    for _ in range(40):
        H, S, A = int(rng.integers(1, 4)), int(rng.integers(1, 4)), int(rng.integers(1, 4))
        fh = FiniteHorizonMDP(
            rng.dirichlet(np.ones(S), size=(H, S, A)), rng.uniform(size=(H, S, A))
        )
        data = sample_episodes(
            fh, rng.dirichlet(np.full(A, 0.5), size=(H, S)), int(rng.integers(1, 30)), rng=rng
        )
        m = empirical_model(data)
        alpha = float(rng.choice([0.0, 0.1, 1.0]))
        res = cql(data, alpha=alpha)
        seen = m.behaviour.sum(-1) > 0  # unvisited states carry V̂ = 0 in both
        V = conservative_evaluation(m, np.eye(A)[res.policy], alpha=alpha)
        np.testing.assert_allclose(V[:-1][seen], res.V[:-1][seen], rtol=0, atol=1e-12)
        assert np.all(V[:-1][~seen] == 0.0) and np.all(res.V[:-1][~seen] == 0.0)
