"""Entropy-regularised NPG at the edges of the float range.

* The logits ``(1 - eta*tau/(1 - gamma)) log pi + eta Q_tau/(1 - gamma)`` overflowed float32 with
  ``tau = 1.4e-45`` (float32's smallest subnormal), ``eta = 1e37``, ``gamma = 0.9``, unit rewards
  (``eta/(1 - gamma) = 1e38`` is a float32 number, ``eta Q/(1 - gamma) ~ 3e38`` is not for ``Q > 3.4``):
  ``entropy_npg_step`` returned NaN rows without a word and ``entropy_regularized_npg`` failed with
  "pi must be finite; pi(s=0, a=0) = nan". Now both are a ``ValueError`` naming ``eta``; the driver's
  check is a priori (the logits' spread is at most ``s_0 + min(t 2 eta qbar/(1 - gamma), 2 qbar/tau)``),
  and a step 1e7 times smaller still runs.
* The certified ``log_policy_error_bound`` was NaN where the reference's values over ``tau`` overflow
  (float64, rewards ~1e300, ``tau = 1e-10``: ``(values/tau = inf) * 0`` for a temperature that is exact
  in the dtype). A bound that cannot be computed is ``inf``, never NaN, and the ``q_error_bound``
  still covers the traced error.
"""

import warnings

import numpy as np
import pytest

from rltheory.algorithms.regularized_npg import entropy_npg_step, entropy_regularized_npg
from rltheory.mdp import FiniteMDP


def _model(dtype=np.float32, scale=1.0):
    rng = np.random.default_rng(0)
    P = rng.random((3, 2, 3))
    P /= P.sum(-1, keepdims=True)
    return FiniteMDP(P.astype(dtype), (scale * rng.random((3, 2))).astype(dtype), gamma=0.9)


def test_a_step_whose_logits_overflow_is_refused():
    mdp = _model()
    pi = np.full((3, 2), 0.5, dtype=np.float32)
    with pytest.raises(
        ValueError, match=r"eta=1e\+37 is too large .* leave the float32 range at \(s=\d, a=\d\)"
    ):
        entropy_npg_step(mdp, pi, eta=1e37, tau=1.4e-45)
    out = entropy_npg_step(mdp, pi, eta=1e30, tau=1.4e-45)
    assert np.all(np.isfinite(out)) and np.allclose(out.sum(-1), 1.0, atol=1e-6)


def test_a_run_whose_logits_could_overflow_is_refused_before_it_starts():
    mdp = _model()
    with pytest.raises(
        ValueError, match=r"eta=1e\+37 is too large .* over 3 iterations the logits .* float32"
    ):
        entropy_regularized_npg(mdp, eta=1e37, tau=1.4e-45, iterations=3)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        res = entropy_regularized_npg(mdp, eta=1e30, tau=1.4e-45, iterations=3)
    assert np.all(np.isfinite(res.policy))
    assert np.all(res.trace["q_error"] <= res.trace["q_error_bound"])


def test_the_log_policy_bound_is_never_nan():
    mdp = _model(np.float64, 1e300)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        res = entropy_regularized_npg(mdp, eta=1.0, tau=1e-10, iterations=3)
    lb = np.asarray(res.trace["log_policy_error_bound"])
    assert not np.any(np.isnan(lb))
    assert np.all(lb >= res.trace["log_policy_error"])
    assert np.all(res.trace["q_error"] <= res.trace["q_error_bound"])
