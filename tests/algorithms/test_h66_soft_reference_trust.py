"""A caller's ``soft=`` reference is certified by its own Bellman residual, not by its claimed bound.

``check_soft_reference`` refutes a ``soft.bound`` that the residual proves false, but a residual within
``(1 + gamma) b`` does not prove ``||soft.Q - Q*_tau|| <= b``: ``Q*_tau - c`` (a constant shift) has residual
``(1 - gamma) c``. One state, ``r = (0, 1)``, ``gamma = 0.9``, ``tau = 1``, uniform start; closed forms
(mpmath, 50 digits): ``V*_tau = tau log(1 + e)/(1 - gamma)``, ``V_tau^(0) = (1/2 + tau log 2)/(1 - gamma)``,
``||Q*_tau - Q^(0)|| = gamma (V*_tau - V^(0))`` and the regularised gap ``V*_tau - V^(0)``. A reference from
40 sweeps of soft value iteration (``b = 0.175``), shifted by ``-15 b``, passed the check and softmax PG certified
the gap at -1.42 (true 1.20); the reference from ``soft_reference`` shifted by ``-15 b`` made entropy NPG
certify ``||Q*_tau - Q^(0)|| <= 1.0810305626106`` (true 1.0810305626245). Now the drivers use the larger of
``soft.bound`` and the residual bound ``||T_tau Q - Q||/(1 - gamma)`` (plus round-off), and ``V``,
``log_policy`` recomputed from ``soft.Q``: every certificate is at or above the truth.
"""

import dataclasses
import warnings

import mpmath as mp
import numpy as np
import pytest

from rltheory.algorithms.policy_gradient import softmax_policy_gradient
from rltheory.algorithms.regularized_npg import entropy_regularized_npg
from rltheory.algorithms.soft import check_soft_reference, soft_reference, soft_value_iteration
from rltheory.mdp import FiniteMDP

GAMMA, TAU = 0.9, 1.0


def _model():
    return FiniteMDP(np.ones((1, 2, 1)), np.array([[0.0, 1.0]]), gamma=GAMMA)


def _exact():
    mp.mp.dps = 50
    g = mp.mpf(GAMMA)
    v_star = TAU * mp.log(1 + mp.e) / (1 - g)
    v0 = (mp.mpf(1) / 2 + TAU * mp.log(2)) / (1 - g)
    return g * (v_star - v0), v_star - v0  # ||Q*_tau - Q^(0)||, the regularised gap at uniform


def _shifted(soft, k):
    b = float(np.asarray(soft.bound))
    return dataclasses.replace(soft, Q=soft.Q - k * b, V=soft.V - k * b)


def _references():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (40 sweeps: unconverged on purpose)
        coarse = soft_value_iteration(_model(), tau=TAU, max_iter=40)
    return {"soft_reference": soft_reference(_model(), tau=TAU), "40 sweeps": coarse}


@pytest.mark.parametrize("which", ["soft_reference", "40 sweeps"])
def test_shifted_references_cannot_push_certificates_below_the_truth(which):
    fake = _shifted(_references()[which], 15)
    q_exact, gap_exact = _exact()
    npg = entropy_regularized_npg(_model(), eta=0.05, tau=TAU, iterations=0, soft=fake)
    assert npg.trace["q_error_bound"][0] >= q_exact
    pg = softmax_policy_gradient(_model(), eta=0.05, tau=TAU, iterations=0, soft=fake)
    assert pg.trace["suboptimality_bound"][0] >= gap_exact


def test_the_checked_reference_is_rebuilt_from_q():
    soft = _references()["40 sweeps"]
    fake = dataclasses.replace(_shifted(soft, 15), log_policy=soft.log_policy + 3.0)
    checked = check_soft_reference(_model(), fake, TAU)
    # the residual of Q*_tau - c is (1 - gamma) c: the bound covers the shift c = 15 b
    assert float(np.asarray(checked.bound)) >= 15 * float(np.asarray(soft.bound))
    np.testing.assert_allclose(checked.V, soft.V - 15 * float(np.asarray(soft.bound)), rtol=1e-14)
    np.testing.assert_allclose(checked.log_policy, soft.log_policy, rtol=0, atol=1e-14)
    np.testing.assert_allclose(checked.policy, np.exp(soft.log_policy), rtol=1e-14)


def test_a_genuine_reference_keeps_about_its_bound():
    # after k sweeps the residual of Q_k is ||Q_{k+1} - Q_k|| <= gamma ||Q_k - Q_{k-1}||, so the residual
    # bound is soft value iteration's own gamma/(1 - gamma) ||Q_k - Q_{k-1}|| plus round-off terms of size
    # u ||Q|| / (1 - gamma) ~ 3e-14 (values ~13): the 40-sweep reference keeps its bound to 1e-11; at the
    # round-off floor both are the floor's size (within 2x)
    refs = _references()
    coarse = check_soft_reference(_model(), refs["40 sweeps"], TAU)
    b40 = float(np.asarray(refs["40 sweeps"].bound))
    assert b40 <= float(np.asarray(coarse.bound)) <= b40 + 1e-11
    fine = check_soft_reference(_model(), refs["soft_reference"], TAU)
    b = float(np.asarray(refs["soft_reference"].bound))
    assert b <= float(np.asarray(fine.bound)) <= 2 * b
    np.testing.assert_array_equal(fine.Q, refs["soft_reference"].Q)
