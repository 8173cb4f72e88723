"""Exact-critic natural actor-critic on near-deterministic policies: the compatible critic's numerics.

Kakade (2001); Agarwal et al. (2021, §5.3): with one-hot features and the exact compatible critic,
``θ ← θ + η w*/(1−γ)`` is the NPG step ``π' ∝ π·exp(ηA^π/(1−γ))``, because ``ψᵀw* = A^π`` and so
``w*(s, ·) = A^π(s, ·) + k_s`` on every state of ``d^π_ρ``. After a few steps the weights
``d(s)π(a|s)`` of the least-squares fit span 60+ orders of magnitude, below what an SVD of the
weighted design resolves.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from rltheory.algorithms.actor_critic import natural_actor_critic
from rltheory.algorithms.compatible import _one_hot_critic, _weighted_min_norm
from rltheory.algorithms.features import _compatible_features_loo, _is_one_hot
from rltheory.algorithms.policy_gradient import natural_policy_gradient
from rltheory.mdp import FiniteMDP, advantage, state_occupancy
from rltheory.mdp.zoo import random_mdp

# falsifying example of test_actor_critic.py::test_exact_critic_nac_with_tabular_features_is_npg
# replayed from the hypothesis database under the dev profile (S = A = 3, gamma = 0.9, eta = 1.9)
_P = np.array([
    [[0.0762183546581127, 0.2107353495713757, 0.7130462957705115],
     [0.5247456199855969, 0.08484509409916145, 0.3904092859152417],
     [0.34881511723148917, 0.11631186148916924, 0.5348730212793416]],
    [[0.11126421850190847, 0.3829411925776764, 0.5057945889204153],
     [0.24533513328862014, 0.3343077991043994, 0.42035706760698044],
     [0.506225169259573, 0.15044934509146027, 0.34332548564896676]],
    [[0.7029454131795903, 0.29555010060808395, 0.0015044862123258312],
     [0.6138422987572022, 0.18816514390645522, 0.19799255733634266],
     [0.45771406549133953, 0.300363331879039, 0.24192260262962137]],
])
_R = np.array([[0.0, 0.0, 0.0], [0.0, 1.0, 1.0], [1.0, 0.0, 0.0]])


def _tabular(S, A):
    return np.eye(S * A).reshape(S, A, S * A)


def test_exact_critic_nac_is_npg_when_the_fit_weights_reach_1e_66():
    # By t = 8 the weights d(s)pi(a|s) are 7.9e-66 and 3.6e-58 next to 0.37. The SVD of the weighted
    # design carries errors ~eps*sigma_max = 3e-22, so its direction at sigma = 3.4e-33 was noise, yet
    # the per-direction cut (4.9e-43) kept it: w* = (-4499, 9000, -4500) on state 2 for advantages below
    # 1, and NAC's suboptimality went 1.8e-12 -> 4.07 at t = 9 while NPG's went to -3e-16.
    mdp = FiniteMDP(_P, _R, gamma=0.9)
    nac = natural_actor_critic(mdp, _tabular(3, 3), eta=1.9, iterations=10)
    npg = natural_policy_gradient(mdp, eta=1.9, iterations=10)
    # |V| <= 1/(1-gamma) = 10: the traces agree to a few hundred eps of it at every step
    np.testing.assert_allclose(nac.trace["suboptimality"], npg.trace["suboptimality"], rtol=0, atol=1e-12)
    np.testing.assert_allclose(nac.policy, npg.policy, rtol=0, atol=1e-12)
    assert np.all(nac.trace["approximation_error"] < 1e-12)


def test_exact_critic_nac_moves_actions_whose_probability_underflowed():
    # eta = 67, gamma = 0.95 (a hypothesis stress example): after one step pi(a=0|s=0) = exp(-1e3)
    # underflows to 0. NPG (log space) still moves it, and it becomes the greedy action at t = 2;
    # the minimum-norm critic gave its zero-weight row w = 0, so NAC kept it at 0 (0.369 vs NPG's
    # 0.226 at t = 2). The closed form takes the limit pi -> 0+ of w* = A + k instead.
    P = np.zeros((4, 2, 4))
    for s, a, t in [(0, 0, 1), (0, 1, 2), (1, 0, 3), (1, 1, 3), (2, 0, 0), (2, 1, 2), (3, 0, 3), (3, 1, 1)]:
        P[s, a, t] = 1.0
    R = np.array([[0.80500292, 0.80794079], [0.51532556, 0.28580138],
                  [0.0539307, 0.38336888], [0.40847321, 0.04527519]])
    mdp = FiniteMDP(P, R, gamma=0.95)
    nac = natural_actor_critic(mdp, _tabular(4, 2), eta=67.0, iterations=6)
    npg = natural_policy_gradient(mdp, eta=67.0, iterations=6)
    assert np.any(natural_actor_critic(mdp, _tabular(4, 2), eta=67.0, iterations=1).policy == 0.0)
    np.testing.assert_allclose(nac.trace["suboptimality"], npg.trace["suboptimality"], rtol=0, atol=1e-12)


def test_svd_critic_drops_directions_below_the_svd_error_level():
    # The general (non-one-hot) solve at the t = 8 policy of the replayed example: the tabular design
    # through _weighted_min_norm's SVD. The exact minimum-norm critic is A(s, .) - mean_a A(s, .), so
    # |w| <= 2 max|A|; the rows the SVD resolves (weight >= 1e-20 here, sigma_max = 1.4e-6) must be fit.
    mdp = FiniteMDP(_P, _R, gamma=0.9)
    f = _tabular(3, 3)
    pi = natural_actor_critic(mdp, f, eta=1.9, iterations=8).policy
    psi, err = _compatible_features_loo(f, pi)
    wts = np.reshape(np.asarray(state_occupancy(mdp, pi))[:, None] * pi, 9)
    adv = np.reshape(np.asarray(advantage(mdp, pi)), 9)
    X = np.reshape(psi, (9, 9))
    w = np.asarray(_weighted_min_norm(X, wts, adv, np, err=np.reshape(err, (9, 9))))
    scale = np.abs(adv).max()
    assert np.abs(w).max() <= 2 * scale  # old: 9000
    big = wts >= 1e-20
    assert np.abs(X @ w - adv)[big].max() <= 1e-12 * scale


@settings(max_examples=60)
@given(st.integers(1, 5), st.integers(1, 4), st.floats(0.0, 0.95), st.floats(0.0, 120.0),
       st.integers(0, 2**32 - 1))
def test_one_hot_critic_is_the_advantage_plus_a_constant_for_every_weight(S, A, gamma, spread, seed):
    # phi(s, a) = c_sa e_j(s,a) (columns permuted and scaled, one spare column): w*_j(s,a) c_sa =
    # A(s, a) + k_s on every action, probabilities down to e^-300 and exact zeros (underflow) included,
    # with k_s the minimum-norm constant sum_a (A + k_s)/c_sa^2 = 0; the spare column gets 0.
    rng = np.random.default_rng(seed)
    mdp = random_mdp(S, A, gamma=gamma, rng=seed)
    logits = rng.normal(size=(S, A)) * spread
    logits[rng.random((S, A)) < 0.1] = -1e4  # exp underflows to exactly 0
    logits[np.arange(S), rng.integers(0, A, size=S)] = 0.0
    pi = np.exp(logits - logits.max(-1, keepdims=True))
    pi /= pi.sum(-1, keepdims=True)
    col = rng.permutation(S * A + 1)[: S * A].reshape(S, A)
    c = rng.choice([-1.0, 1.0], size=(S, A)) * 10.0 ** rng.uniform(-2, 2, size=(S, A))
    f = np.zeros((S, A, S * A + 1))
    f[np.arange(S)[:, None], np.arange(A)[None, :], col] = c
    j = int(col[0, 0])  # a used column, repeated: no longer one-hot
    assert _is_one_hot(f) and not _is_one_hot(np.concatenate([f, f[..., j : j + 1]], axis=-1))
    dsa = np.asarray(state_occupancy(mdp, pi))[:, None] * pi
    adv = np.asarray(advantage(mdp, pi))
    w = np.asarray(_one_hot_critic(f, dsa, adv, np))
    u = w[col] * c
    scale = max(float(np.abs(adv).max()), 1e-3)
    assert np.ptp(u - adv, axis=1).max() <= 1e-12 * scale
    assert np.abs(np.sum(w[col] / c, axis=1)).max() <= 1e-12 * scale * np.sum(1 / np.abs(c), axis=1).max()
    spare = np.setdiff1d(np.arange(S * A + 1), col.ravel())
    assert np.all(w[spare] == 0)
    if spread <= 2.0:  # well-conditioned weights: the SVD solve of the same problem agrees up to k_s
        psi, err = _compatible_features_loo(f, pi)  # (its minimum norm gives zero-weight rows w = 0)
        w_svd = np.asarray(_weighted_min_norm(np.reshape(psi, (S * A, -1)), dsa.ravel(), adv.ravel(), np,
                                              err=np.reshape(err, (S * A, -1))))
        for s in range(S):
            live = pi[s] > 0
            assert np.ptp((w_svd[col[s]] * c[s] - u[s])[live]) <= 1e-9 * scale
