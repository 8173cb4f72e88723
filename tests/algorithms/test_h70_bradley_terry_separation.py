"""bradley_terry_mle reports separable labels, whose unpenalised MLE does not exist.

Regression: separable comparisons (the same side won every comparison of a pair) were fitted
and returned as ``converged=True`` with nothing to say that the estimate is finite only through
the ridge (``θ̂`` grows like ``log(1/λ)``, 3.52 at ``λ = 1e-3``, 13.2 at ``1e-12``). Now
``BradleyTerryResult.separable`` holds, per player, whether an LP finds a separating direction
(Albert & Anderson 1984).
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import brentq
from scipy.special import expit

from rltheory.algorithms.marlhf import bradley_terry_mle
from rltheory.mdp.offline_data import EpisodeDataset, PreferenceDataset


def _one_step(a, b, y):
    K = len(a)

    def ep(x):
        return EpisodeDataset(
            np.zeros((K, 2), int), np.asarray(x)[:, None], np.zeros((K, 1)), S=1, A=2
        )

    return PreferenceDataset(ep(a), ep(b), np.asarray(y)[:, None])


@pytest.mark.parametrize("ridge", [1e-3, 1e-6, 1e-12])
def test_four_wins_of_one_pair_are_separable_and_the_ridge_minimiser_is_exact(ridge):
    fit = bradley_terry_mle(_one_step([1] * 4, [0] * 4, [1] * 4), ridge=ridge, tol=1e-20)
    assert fit.separable == (True,) and fit.converged
    # θ = (−t, t): f(t) = 4 log(1 + e^{−2t}) + λ t², minimised where 4 σ(−2t) = λ t
    t = brentq(lambda t: 4.0 * expit(-2.0 * t) - ridge * t, 0.0, 100.0, xtol=1e-14)
    np.testing.assert_allclose(fit.theta[0, 0, 0], [-t, t], rtol=1e-9)


def test_a_pair_won_both_ways_is_not_separable():
    # (1 vs 0) won 3 times, (0 vs 1) won once: the two rows are opposite, so z = 0 is forced
    fit = bradley_terry_mle(_one_step([1, 1, 1, 0], [0, 0, 0, 1], [1, 1, 1, 1]), ridge=1e-9)
    assert fit.separable == (False,)
    assert float(fit.theta[0, 0, 0, 1] - fit.theta[0, 0, 0, 0]) == pytest.approx(
        np.log(3.0), abs=1e-6
    )
    # the same rows with the last comparison lost: separable
    assert bradley_terry_mle(_one_step([1, 1, 1, 0], [0, 0, 0, 1], [1, 1, 1, 0])).separable == (
        True,
    )
    # one comparison is separable; a comparison of a trajectory with itself is not
    assert bradley_terry_mle(_one_step([1], [0], [1])).separable == (True,)
    assert bradley_terry_mle(_one_step([1], [1], [1])).separable == (False,)


@pytest.mark.parametrize("seed", range(24))
def test_the_flag_agrees_with_the_regularisation_path(seed):
    # separable <=> ‖θ̂(λ)‖ → ∞ as λ → 0: from λ = 1e-2 to 1e-8 a separable fit grows by about
    # log(1e6)/‖x‖ ≥ 3, a non-separable one converges to the MLE (measured: 57 of 120 separable
    # on these sizes, every one agreeing)
    rng = np.random.default_rng(seed)
    H, K = (
        int(rng.integers(1, 3)),
        int(rng.integers(1, 25)) if seed % 2 else int(rng.integers(60, 200)),
    )

    def ep():
        return EpisodeDataset(
            rng.integers(0, 2, size=(K, H + 1)),
            rng.integers(0, 2, size=(K, H, 2)),
            np.zeros((K, H, 2)),
            S=2,
            A=(2, 2),
        )

    prefs = PreferenceDataset(ep(), ep(), rng.integers(0, 2, size=(K, 2)))
    coarse = bradley_terry_mle(prefs, ridge=1e-2, tol=1e-20, max_iter=500)
    fine = bradley_terry_mle(prefs, ridge=1e-8, tol=1e-20, max_iter=500)
    for i in range(2):
        grow = np.linalg.norm(fine.theta[i]) - np.linalg.norm(coarse.theta[i])
        assert coarse.separable[i] == fine.separable[i] == (grow > 3.0), (i, grow)
