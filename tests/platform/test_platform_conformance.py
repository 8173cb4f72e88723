"""Array-API conformance of kernels the backend tests did not reach: each runs under every
backend (the ``xp`` fixture: numpy, array_api_strict, cupy on a GPU), agrees with numpy, keeps
its result in the input's namespace and reports bad input as it does on numpy.

Tolerances: the models are tiny (S ≤ 5) with values of size ≤ 1/(1 − γ) = 5; every kernel is a
few matrix products, max-reductions and ≤ 5×5 solves or eigendecompositions, whose results
differ between libraries only by summation order, i.e. by a few ulps of the value scale
(≈ 1e-15). ``atol = 1e-12`` leaves a factor 1000 for that and still catches any real mistake
(a wrong axis or a dropped term moves the results by O(1e-2) or more).
"""

from __future__ import annotations

import numpy as np
import pytest

from rltheory.backend import as_float, to_numpy
from rltheory.bounds import vi_sweep_error
from rltheory.bounds.coverage import (
    all_policy_concentrability,
    induced_mdp,
    max_occupancy,
    relative_condition_number,
    unilateral_concentrability,
)
from rltheory.games import MarkovGame, best_response, nash_conv
from rltheory.mdp import (
    ConstrainedMDP,
    FiniteHorizonMDP,
    FiniteMDP,
    average_linear_program,
    dual_function,
    evaluate_cmdp,
    lagrangian,
    linear_program,
    solve_cmdp,
)

strict = pytest.importorskip("array_api_strict")
ATOL = 1e-12


def _same_namespace(got, like) -> bool:
    """``got`` is an array of ``like``'s library (numpy may give a 0-d reduction as a numpy scalar)."""
    return type(got) is type(like) or (isinstance(got, np.generic) and isinstance(like, np.ndarray))


def _stochastic(rng, shape):
    P = rng.random(shape) ** 2
    return P / P.sum(-1, keepdims=True)


def test_general_sum_markov_game_kernels_under_every_backend(xp):
    # MarkovGame.induced_mdp indexed R[i] with one index into a 4-axis array (numpy-only
    # indexing): nash_conv and best_response failed under array_api_strict.
    rng = np.random.default_rng(11)
    P, R = _stochastic(rng, (3, 2, 2, 3)), rng.normal(size=(2, 3, 2, 2))
    pols = [_stochastic(rng, (3, 2)), _stochastic(rng, (3, 2))]
    ref = MarkovGame(P, R, 0.8)
    game = MarkovGame(xp.asarray(P), xp.asarray(R), 0.8)
    pols_x = [xp.asarray(p) for p in pols]
    got, want = nash_conv(game, pols_x), nash_conv(ref, pols)
    assert _same_namespace(got, game.P)
    np.testing.assert_allclose(float(got), float(want), rtol=0, atol=ATOL)
    for i in range(2):
        br, br_ref = best_response(game, pols_x, player=i), best_response(ref, pols, player=i)
        assert _same_namespace(br.V, game.P)
        np.testing.assert_allclose(to_numpy(br.V), np.asarray(br_ref.V), rtol=0, atol=ATOL)
        np.testing.assert_array_equal(to_numpy(br.policy), np.asarray(br_ref.policy))
        m, m_ref = game.induced_mdp(i, game.joint_policy(pols_x)), ref.induced_mdp(i, ref.joint_policy(pols))
        np.testing.assert_allclose(to_numpy(m.R), np.asarray(m_ref.R), rtol=0, atol=ATOL)


def test_coverage_coefficients_under_every_backend(xp):
    # max_occupancy / all_policy_concentrability indexed P[j] and relative_condition_number
    # Σ[b], the coverage induced_mdp R[player] (one index into a many-axis array): all failed
    # under array_api_strict.
    rng = np.random.default_rng(12)
    P, R = _stochastic(rng, (5, 3, 5)), rng.random((5, 3))
    ref = FiniteHorizonMDP.stationary(P, R, 3)
    fh = FiniteHorizonMDP.stationary(xp.asarray(P), xp.asarray(R), 3)
    got, want = max_occupancy(fh), max_occupancy(ref)
    assert _same_namespace(got, fh.P)
    np.testing.assert_allclose(to_numpy(got), np.asarray(want), rtol=0, atol=ATOL)
    d = np.full((3, 5, 3), 1.0 / 15)
    assert all_policy_concentrability(fh, xp.asarray(d)) == pytest.approx(
        all_policy_concentrability(ref, d), rel=1e-12
    )

    F = rng.normal(size=(2, 4, 3))
    T, D = F @ np.swapaxes(F, -1, -2), F @ np.swapaxes(F, -1, -2) + np.eye(4)  # two (4, 4) covariances each
    assert relative_condition_number(xp.asarray(T), xp.asarray(D)) == pytest.approx(
        relative_condition_number(T, D), rel=1e-12
    )

    Pg, Rg = _stochastic(rng, (2, 3, 2, 2, 3)), rng.normal(size=(2, 2, 3, 2, 2))
    pols = [_stochastic(rng, (2, 3, 2)), _stochastic(rng, (2, 3, 2))]
    pols_x = [xp.asarray(p) for p in pols]
    for player in range(2):
        m = induced_mdp(xp.asarray(Pg), xp.asarray(Rg), pols_x, player)
        m_ref = induced_mdp(Pg, Rg, pols, player)
        assert _same_namespace(m.R, xp.asarray(Pg))
        np.testing.assert_allclose(to_numpy(m.R), np.asarray(m_ref.R), rtol=0, atol=ATOL)
        np.testing.assert_allclose(to_numpy(m.P), np.asarray(m_ref.P), rtol=0, atol=ATOL)
    dd = np.full((2, 3, 2, 2), 1.0 / 12)
    assert unilateral_concentrability(xp.asarray(Pg), pols_x, xp.asarray(dd)) == pytest.approx(
        unilateral_concentrability(Pg, pols, dd), rel=1e-12
    )


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_vi_sweep_error_reads_the_namespace_dtype(xp, dtype):
    # vi_sweep_error took the unit roundoff from np.dtype(str(mdp.dtype)), which no
    # non-numpy dtype spells ("array_api_strict.float64"): TypeError for any other backend.
    rng = np.random.default_rng(13)
    P, R = _stochastic(rng, (4, 2, 4)), rng.random((4, 2))
    ref = FiniteMDP(P.astype(dtype), R.astype(dtype), 0.9)
    mdp = FiniteMDP(xp.asarray(P.astype(dtype)), xp.asarray(R.astype(dtype)), 0.9)
    assert mdp.dtype == getattr(xp, dtype)
    # the same float64 host arithmetic on the same entries: equal to the last bit
    assert vi_sweep_error(mdp) == vi_sweep_error(ref)


def test_complex_input_is_named_in_every_namespace(xp):
    # as_float detected complex arrays by numpy's dtype.kind only; a complex array_api_strict
    # array reached the cast, which array_api_strict refuses with an unlocated message.
    z = xp.asarray(np.ones((2, 1, 2), dtype=np.complex128) / 2)
    with pytest.raises(TypeError, match="P must hold real numbers; got a complex array"):
        FiniteMDP(z, xp.asarray(np.zeros((2, 1))), 0.9)
    with pytest.raises(TypeError, match="V must hold real numbers; got a complex array"):
        as_float(xp.asarray(np.ones(3, dtype=np.complex64)), xp, field="V")


@pytest.mark.parametrize("gamma", [0.8, None], ids=["discounted", "average"])
def test_cmdp_evaluation_under_every_backend(xp, gamma):
    # evaluate_cmdp and lagrangian indexed C[i] with one index into the (m, S, A) costs:
    # IndexError under array_api_strict.
    rng = np.random.default_rng(14)
    P, R, C = _stochastic(rng, (4, 2, 4)), rng.random((4, 2)), rng.random((2, 4, 2))
    b, pi, lam = np.array([3.0, 2.0]), _stochastic(rng, (4, 2)), np.array([0.5, 0.25])
    ref = ConstrainedMDP(FiniteMDP(P, R, gamma), C, b)
    cmdp = ConstrainedMDP(FiniteMDP(xp.asarray(P), xp.asarray(R), gamma), xp.asarray(C), xp.asarray(b))
    (v, costs), (v_ref, costs_ref) = evaluate_cmdp(cmdp, xp.asarray(pi)), evaluate_cmdp(ref, pi)
    assert _same_namespace(costs, cmdp.C)
    assert v == pytest.approx(v_ref, rel=0, abs=ATOL)
    np.testing.assert_allclose(to_numpy(costs), np.asarray(costs_ref), rtol=0, atol=ATOL)
    assert lagrangian(cmdp, xp.asarray(pi), xp.asarray(lam)) == pytest.approx(lagrangian(ref, pi, lam), rel=0, abs=ATOL)


@pytest.mark.parametrize("gamma", [0.8, None], ids=["discounted", "average"])
def test_host_solvers_return_on_the_models_device(gamma):
    # The LP solvers run on the host and returned their answer with xp.asarray(numpy), i.e. on the
    # namespace's default device, not the model's: with a model on array_api_strict's
    # Device("device1") (a stand-in for a second GPU) linear_program and average_linear_program
    # failed in their own certificate step ("Arrays from two different devices"), solve_cmdp
    # returned its arrays on the wrong device and dual_function failed the same way.
    dev = strict.Device("device1")
    rng = np.random.default_rng(15)
    P, R, C = _stochastic(rng, (4, 2, 4)), rng.random((4, 2)), rng.random((1, 4, 2))
    b = np.array([10.0 if gamma else 2.0])  # loose enough to be feasible

    def on_dev(x):
        return strict.asarray(x, device=dev)

    mdp, ref = FiniteMDP(on_dev(P), on_dev(R), gamma), FiniteMDP(P, R, gamma)
    solve = linear_program if gamma is not None else average_linear_program
    got, want = solve(mdp), solve(ref)
    fields = ("V", "Q", "occupancy", "bound") if gamma is not None else ("gain", "bias", "policy")
    for name in fields:
        x = getattr(got, name)
        assert x.device == dev, name
        # the same host LP on the same numbers; the certificate kernels differ only in summation order
        np.testing.assert_allclose(to_numpy(x), np.asarray(getattr(want, name)), rtol=0, atol=1e-9)
    cmdp = ConstrainedMDP(mdp, on_dev(C), on_dev(b))
    cref = ConstrainedMDP(ref, C, b)
    sol, sref = solve_cmdp(cmdp), solve_cmdp(cref)
    for name in ("policy", "costs", "duals", "occupancy", "slack", "state_duals"):
        x = getattr(sol, name)
        assert x.device == dev, name
        np.testing.assert_allclose(to_numpy(x), np.asarray(getattr(sref, name)), rtol=0, atol=1e-9)
    lam = np.array([0.5])
    d_val, d_pi = dual_function(cmdp, on_dev(lam))
    assert d_pi.device == dev
    assert d_val == pytest.approx(dual_function(cref, lam)[0], rel=0, abs=ATOL)
