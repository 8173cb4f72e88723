r"""The estimator study of ``mac-mixing``: exact biases of the MLMC and plain ∇J estimators.

At the uniform policy with the exact critic (``ω = h^π``, ``η = g^π``) the stationary mean of
the actor's per-sample term ``δ ∇log π`` is ``∇J``; from a fixed start state
:func:`estimator_bias` computes, without sampling, the relative bias of the MLMC estimator with
cap ``T_max`` and of the plain average of the same (rounded) expected number of samples, and
the bound ``span·(1/N)Σ_{k<N} d(k)`` on the MLMC bias (stated in full in
:mod:`rltheory.experiments.mac_mixing`).

References
----------
Dorfman, R., Levy, K. Y. (2022). Adapting to mixing time in stochastic optimization with
Markovian data. ICML.
Suttle, W. A. et al. (2023). Beyond exponentially fast mixing in average-reward RL via
multi-level Monte Carlo actor-critic. ICML. Algorithm 1.
"""

from __future__ import annotations

import numpy as np

from ..algorithms.average_reward import (
    average_reward_gradient,
    mac_expected_terms,
    mlmc_expectation,
)
from ..algorithms.mlmc import _mlmc_top_level
from ..algorithms.policy_gradient import softmax_policy
from ..bounds.average_reward import markov_average_bias, mlmc_expected_samples
from ..mdp import policy_transition_matrix
from ..mdp.average import gain_bias
from ..mdp.mixing import mixing_time, tv_distances
from ..mdp.mixing_zoo import ring_mdp

__all__ = ["estimator_bias"]


def estimator_bias(
    n: int, T_max: int, start: int | None = None, *, laziness: float = 0.5, reward: str = "sparse"
) -> dict[str, float]:
    """Exact relative biases of the MLMC and equal-cost plain estimators of ∇J on
    ``ring_mdp(n, laziness=laziness, reward=reward)`` at the uniform policy with the exact critic,
    from ``start`` (default ``n // 2``), and the bound check."""
    mdp = ring_mdp(n, laziness=laziness, reward=reward)
    if start is not None and (
        isinstance(start, bool) or not isinstance(start, (int, np.integer)) or not 0 <= start < n
    ):  # -1 silently meant state n − 1, True a (1, n) start law, n an IndexError
        raise ValueError(f"start must be a state index in [0, {n}) or None; got {start!r}")
    theta = np.zeros((n, 2))
    pi = softmax_policy(theta)
    P = np.asarray(policy_transition_matrix(mdp, pi))
    g, h = gain_bias(mdp, pi)
    _, _, gbar = mac_expected_terms(mdp, theta, np.asarray(h), float(g))
    grad, _ = average_reward_gradient(mdp, theta)
    nu = np.eye(n)[n // 2 if start is None else start]
    E_mlmc, _ = mlmc_expectation(P, nu, gbar, T_max)
    Nbar = max(1, int(round(mlmc_expected_samples(T_max))))
    v, acc = nu.copy(), np.zeros_like(grad)
    for _ in range(Nbar):
        acc += np.tensordot(v, gbar, axes=(0, 0))
        v = v @ P
    plain = acc / Nbar
    N = 2 ** _mlmc_top_level(T_max)
    tv = np.asarray(tv_distances(P, N))
    span = np.ptp(gbar, axis=0)
    scale = float(np.max(np.abs(grad)))
    b_mlmc = np.abs(E_mlmc - grad)
    avg_tv = float(markov_average_bias([N], tv[:N], 1.0)[0])
    return {
        "t_mix": int(mixing_time(P)),
        "mlmc": float(np.max(b_mlmc)) / scale,
        "plain": float(np.max(np.abs(plain - grad))) / scale,
        "abs_bias": b_mlmc.reshape(-1),
        "abs_bound": (span * avg_tv).reshape(-1),
        "avg_tv": avg_tv,
        "rel_bound": float(np.max(span * avg_tv)) / scale,
        "N_bar": Nbar,
    }
