"""discounted_concentrability is one instance's coefficient: batches are refused, not maxed.

It returned one float for a batched model or a batch of policies, the maximum over the batch,
without saying so (reported by helper-40).
"""

import numpy as np
import pytest

from rltheory.bounds import discounted_concentrability
from rltheory.mdp import FiniteMDP


def _model(batch=()):
    rng = np.random.default_rng(3)
    P = rng.dirichlet(np.ones(2), size=batch + (2, 2))
    return FiniteMDP(P, rng.random(batch + (2, 2)), 0.5)


def test_a_batched_model_is_refused():
    with pytest.raises(ValueError, match=r"needs a single model; got batch_shape=\(2,\)"):
        discounted_concentrability(_model((2,)), np.array([0, 0]), np.full((2, 2), 0.5))


def test_a_batch_of_policies_is_refused():
    m = _model()
    with pytest.raises(ValueError, match=r"single behaviour policy .* got a batch of shape \(3,\)"):
        discounted_concentrability(m, np.array([0, 1]), np.full((3, 2, 2), 0.5))
    with pytest.raises(ValueError, match=r"single target policy .* got a batch of shape \(2,\)"):
        discounted_concentrability(m, np.array([[0, 1], [1, 0]]), np.full((2, 2), 0.5))


def _occupancy(P, pi, mu, gamma=0.5):
    Ppi = np.einsum("sa,sat->st", pi, P)
    d = (1.0 - gamma) * np.linalg.solve((np.eye(len(mu)) - gamma * Ppi).T, mu)
    return d[:, None] * pi


def test_each_instance_equals_its_own_model():
    mb = _model((2,))
    for i in range(2):
        mi = mb[i]
        c = discounted_concentrability(mi, np.array([0, 1]), np.full((2, 2), 0.5))
        # reference: the ratio of the two normalised occupancies, by direct linear solves
        P, mu = np.asarray(mi.P), np.full(2, 0.5)
        t, b = _occupancy(P, np.eye(2)[[0, 1]], mu), _occupancy(P, np.full((2, 2), 0.5), mu)
        ref = np.max(np.where(t > 0, t / b, 0.0))
        assert c == pytest.approx(ref, rel=1e-12)
