"""Edge cases of the exact policy-optimisation drivers (NPG, entropy-regularised NPG and PG): the
certificates against references in higher precision, and inputs the dtype cannot carry."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from rltheory.algorithms.npg import entropy_regularized_npg
from rltheory.algorithms.policy_gradient import softmax_policy_gradient
from rltheory.errors import ConvergenceWarning
from rltheory.mdp import FiniteMDP


def _bandit_soft_optimum(r: np.ndarray, tau: float) -> tuple[np.ndarray, float]:
    # one state, γ = 0: Q*_τ = r, log π*_τ(a) = r_a/τ − log Σ_b exp(r_b/τ), V*_τ = τ log Σ_b exp(r_b/τ).
    # The float32 rewards are exact in float64 and ~1e-40 is a normal float64 number, so this is
    # accurate to ~1e-14 relative (the errors checked below are ~1e-2).
    x = np.asarray(r, dtype=np.float64) / tau
    lse = float(np.max(x) + math.log(float(np.sum(np.exp(x - np.max(x))))))
    return x - lse, tau * lse


@pytest.mark.parametrize("tau", [1e-42, 3.3e-43, 1e-44])
@pytest.mark.parametrize("iterations", [0, 3])
def test_entropy_npg_log_policy_bound_counts_the_rounding_of_a_subnormal_temperature(
    tau, iterations
):
    # Bug found here: on a float32 model the kernels divide by τ rounded to float32, τ̂ (τ = 1e-42 is
    # subnormal there: τ̂ = 1.0005e-42), while the certificate is about τ. The reference's
    # log π*_τ̂ was 0.053 off log π*_τ (rewards 1e-40, 3e-41, 0), and the certified
    # log_policy_error_bound was below the true error of the iterate (85.37 > 85.36 at τ = 1e-42).
    r = np.array([[1e-40, 3e-41, 0.0]], dtype=np.float32)
    mdp = FiniteMDP(np.ones((1, 3, 1), dtype=np.float32), r, gamma=0.0)
    log_star, _ = _bandit_soft_optimum(r[0], tau)
    res = entropy_regularized_npg(mdp, eta=1e37, tau=tau, iterations=iterations)
    pi = np.asarray(res.policy, dtype=np.float64)[0]
    assert np.all(pi > 0)
    true_log_err = float(np.max(np.abs(log_star - np.log(pi / np.sum(pi)))))
    assert true_log_err <= float(res.trace["log_policy_error_bound"][-1])
    assert float(res.trace["q_error_bound"][-1]) >= 0.0  # Q*_τ = r = Q_τ^π exactly at γ = 0


@pytest.mark.parametrize("tau", [1e-42, 3.3e-43])
def test_entropy_pg_suboptimality_bound_counts_the_rounding_of_a_subnormal_temperature(tau):
    # the same for entropy-regularised softmax PG: V*_τ against the computed V_τ̂^π
    r = np.array([[1e-40, 3e-41, 0.0]], dtype=np.float32)
    mdp = FiniteMDP(np.ones((1, 3, 1), dtype=np.float32), r, gamma=0.0)
    _, v_star = _bandit_soft_optimum(r[0], tau)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        res = softmax_policy_gradient(mdp, eta=1e-40, tau=tau, iterations=2)
    pi = np.asarray(res.policy, dtype=np.float64)[0]
    pi = pi / np.sum(pi)
    pos = pi > 0
    v_pi = float(np.sum(pi * r[0].astype(np.float64)) - tau * np.sum(pi[pos] * np.log(pi[pos])))
    assert v_star - v_pi <= float(res.trace["suboptimality_bound"][-1])


@pytest.mark.parametrize("rewards", [(0.0, 0.0), (1e-40, 0.0), (1.0, 0.0)])
def test_a_step_beyond_the_dtype_is_refused_not_a_nan_policy(rewards):
    # Bug found here: η/(1−γ) is a Python float that meets float32 arrays and is rounded to float32:
    # η = 1e39 at γ = 0.5 became inf, inf·0 = NaN at every zero advantage, and npg_step and
    # natural_policy_gradient returned the policy [[nan, nan]] without a word (the logit-range
    # check passed: its reach is 0 for zero rewards). Now a ValueError naming eta and the dtype.
    from rltheory.algorithms.npg import entropy_npg_step, natural_policy_gradient, npg_step

    mdp = FiniteMDP(
        np.ones((1, 2, 1), dtype=np.float32), np.array([rewards], dtype=np.float32), gamma=0.5
    )
    pi = np.full((1, 2), 0.5, dtype=np.float32)
    msg = r"eta=1e\+39 is too large for a float32 model: the step eta/\(1 - gamma\) = 2e\+39 exceeds the largest"
    with pytest.raises(ValueError, match=msg):
        npg_step(mdp, pi, eta=1e39)
    if rewards[0] < 1.0:  # (unit rewards hit the logit-range check first)
        with pytest.raises(ValueError, match=msg):
            natural_policy_gradient(mdp, eta=1e39, iterations=3)
    with pytest.raises(ValueError, match=msg):
        entropy_npg_step(mdp, pi, eta=1e39, tau=1e-40)
    # the same step is finite in float64, and the largest float32 step still runs
    mdp64 = FiniteMDP(np.ones((1, 2, 1)), np.array([rewards]), gamma=0.5)
    assert np.all(np.isfinite(npg_step(mdp64, pi, eta=1e39)))
    assert np.all(np.isfinite(npg_step(mdp, pi, eta=1e38)))


def test_pmd_step_sizes_take_numpy_scalars_and_name_bad_sequences():
    # Bug found here: a numpy float32 or 0-d array step was taken for a sequence ("'numpy.float32'
    # object is not iterable", "iteration over a 0-d array"), sequence entries True / "1" were read
    # as 1.0, and [] with iterations=0 failed with IndexError (η_0 is recorded at the first iterate).
    from rltheory.algorithms.policy_mirror_descent import policy_mirror_descent

    mdp = FiniteMDP(np.ones((1, 2, 1)), np.array([[0.0, 1.0]]), gamma=0.5)
    ref = policy_mirror_descent(mdp, step_sizes=0.5, iterations=3)
    for eta in (np.float32(0.5), np.array(0.5), np.float64(0.5), [0.5, 0.5, 0.5], np.full(3, 0.5)):
        res = policy_mirror_descent(mdp, step_sizes=eta, iterations=3)
        np.testing.assert_array_equal(res.policy, ref.policy)
        np.testing.assert_array_equal(res.trace["step_size"], [0.5] * 4)
    with pytest.raises(ValueError, match=r"step_sizes\[1\] must be a finite number > 0; got True"):
        policy_mirror_descent(mdp, step_sizes=[0.5, True], iterations=2)
    with pytest.raises(ValueError, match=r"step_sizes\[0\] must be a finite number > 0; got '1'"):
        policy_mirror_descent(mdp, step_sizes=["1"], iterations=1)
    with pytest.raises(
        ValueError, match=r"step_sizes has 0 entries but iterations=0 steps need one"
    ):
        policy_mirror_descent(mdp, step_sizes=[], iterations=0)
    with pytest.raises(
        TypeError, match="step_sizes must be a number > 0, a sequence of them or a callable"
    ):
        policy_mirror_descent(mdp, step_sizes="0.5", iterations=1)


def test_softmax_pg_temperature_takes_numpy_scalars_and_refuses_inf():
    # Bug found here: softmax_gradient / softmax_policy_gradient refused tau=np.float32(0.1) and
    # np.array(0.1) with "tau must be a number >= 0" (entropy_regularized_npg accepts them), and
    # passed tau=inf on to the soft evaluation. Now any finite real scalar >= 0 is a temperature.
    from rltheory.algorithms.policy_gradient import softmax_gradient

    mdp = FiniteMDP(np.ones((1, 2, 1)), np.array([[0.0, 1.0]]), gamma=0.5)
    ref = softmax_gradient(mdp, np.zeros((1, 2)), tau=0.25)
    for tau in (np.float64(0.25), np.float32(0.25), np.array(0.25)):
        np.testing.assert_array_equal(softmax_gradient(mdp, np.zeros((1, 2)), tau=tau), ref)
    res = softmax_policy_gradient(mdp, eta=1.0, tau=np.float32(0.25), iterations=3)
    np.testing.assert_array_equal(
        res.policy, softmax_policy_gradient(mdp, eta=1.0, tau=0.25, iterations=3).policy
    )
    for bad in (math.inf, math.nan, True, -1.0):
        with pytest.raises(ValueError, match=r"tau must be a finite number >= 0; got "):
            softmax_gradient(mdp, np.zeros((1, 2)), tau=bad)


def test_a_euclidean_step_beyond_the_dtype_is_refused_not_a_nan_policy():
    # Bug found here: the projected steps multiply η into float32 arrays, where η = 1e308 is inf:
    # projected_policy_gradient and Euclidean PMD failed with "pi must be finite; pi(s=0, a=0) =
    # nan" (the next evaluation of the NaN policy), pmd_euclidean_step returned [[nan, nan]].
    from rltheory.algorithms.policy_gradient import (
        projected_gradient_step,
        projected_policy_gradient,
    )
    from rltheory.algorithms.policy_mirror_descent import pmd_euclidean_step, policy_mirror_descent

    mdp = FiniteMDP(
        np.ones((1, 2, 1), dtype=np.float32), np.array([[0.0, 1.0]], dtype=np.float32), gamma=0.5
    )
    pi = np.full((1, 2), 0.5, dtype=np.float32)
    msg = r"eta=1e\+308 is too large for a float32 model: it exceeds the largest float32 number"
    with pytest.raises(ValueError, match=msg):
        pmd_euclidean_step(mdp, pi, eta=1e308)
    with pytest.raises(ValueError, match=msg):
        projected_gradient_step(mdp, pi, eta=1e308)
    with pytest.raises(ValueError, match=msg):
        projected_policy_gradient(mdp, eta=1e308, iterations=3)
    with pytest.raises(ValueError, match=msg):
        policy_mirror_descent(mdp, step_sizes=1e308, iterations=3, update=pmd_euclidean_step)
    # float64 holds the step (the greedy policy), and so does float32 at its largest step
    mdp64 = FiniteMDP(np.ones((1, 2, 1)), np.array([[0.0, 1.0]]), gamma=0.5)
    np.testing.assert_array_equal(pmd_euclidean_step(mdp64, pi, eta=1e308), [[0.0, 1.0]])
    # (float32 at η = 3e38 takes the scaled form η·Π_{1/η}(π/η + Q): a few roundings of 1)
    eps32 = float(np.finfo(np.float32).eps)
    np.testing.assert_allclose(
        pmd_euclidean_step(mdp, pi, eta=3e38), [[0.0, 1.0]], rtol=0, atol=2 * eps32
    )


def test_a_softmax_pg_step_beyond_the_dtype_is_refused_not_a_nan_policy():
    # Bug found here: θ + η∇ in float32 with η = 1e39 (inf there): inf·0 = NaN in the logits and
    # softmax_policy_gradient failed with "pi must be finite; pi(s=0, a=0) = nan".
    mdp = FiniteMDP(
        np.ones((1, 2, 1), dtype=np.float32), np.array([[0.0, 1.0]], dtype=np.float32), gamma=0.5
    )
    with pytest.raises(ValueError, match=r"eta=1e\+39 is too large for a float32 model"):
        softmax_policy_gradient(mdp, eta=1e39, iterations=3)
    mdp64 = FiniteMDP(np.ones((1, 2, 1)), np.array([[0.0, 1.0]]), gamma=0.5)
    np.testing.assert_array_equal(
        softmax_policy_gradient(mdp64, eta=1e39, iterations=3).policy, [[0.0, 1.0]]
    )


@pytest.mark.parametrize(
    ("dtype", "eta", "inner_lr"),
    [(np.float64, 1e-300, 1.0), (np.float32, 1.0, 1e39), (np.float32, 1e-46, 1.0)],
)
def test_a_divergent_mdpo_inner_ascent_is_named_not_a_nan_policy(dtype, eta, inner_lr):
    # Bug found here: with inner_lr far beyond the surrogate's curvature d(s)/η (η = 1e-300; or a
    # step that is inf in float32, or 1/η with η = 1e-46 = 0 in float32) the ascent diverged and
    # mdpo_step returned [[nan, nan]] without a word. Now a ValueError naming inner_lr and eta.
    from rltheory.algorithms.policy_mirror_descent import mdpo_step

    mdp = FiniteMDP(np.ones((1, 2, 1), dtype=dtype), np.array([[0.0, 1.0]], dtype=dtype), gamma=0.5)
    pi = np.full((1, 2), 0.5, dtype=dtype)
    with pytest.raises(
        ValueError, match=r"mdpo_step's inner gradient ascent diverged .* inner_lr="
    ):
        mdpo_step(mdp, pi, eta=eta, inner_steps=5, inner_lr=inner_lr)
    # a step the ascent can take converges to the KL-PMD step π ∝ π exp(η A) (η = log 3: (1/4, 3/4))
    p = mdpo_step(mdp, pi, eta=math.log(3), inner_steps=2000, inner_lr=5.0)
    np.testing.assert_allclose(p, [[0.25, 0.75]], rtol=0, atol=1e-6)


def test_a_soft_reference_for_another_temperature_is_refused():
    # Bug found here: a `soft` computed at τ = 1 passed to a τ = 0.1 run was trusted, and
    # entropy_regularized_npg started at π*_1 certified log_policy_error_bound 1.2e-11 while the
    # true ‖log π*_0.1 − log π_0‖∞ is 8.69 (and the PG suboptimality was traced against the wrong
    # V*). Now the reference's soft Bellman residual is checked against (1 + γ)·soft.bound.
    from rltheory.algorithms.soft import soft_reference

    mdp = FiniteMDP(np.ones((1, 2, 1)), np.array([[0.0, 1.0]]), gamma=0.5)
    wrong, right = soft_reference(mdp, tau=1.0), soft_reference(mdp, tau=0.1)
    msg = r"soft is not a reference for this model at tau=0\.1: its soft Bellman residual"
    with pytest.raises(ValueError, match=msg):
        entropy_regularized_npg(mdp, eta=0.5, tau=0.1, iterations=0, soft=wrong, pi0=wrong.policy)
    with pytest.raises(ValueError, match=msg):
        softmax_policy_gradient(mdp, eta=1.0, tau=0.1, iterations=2, soft=wrong)
    with pytest.raises(TypeError, match="soft must be a SoftSolution"):
        entropy_regularized_npg(mdp, eta=0.5, tau=0.1, iterations=0, soft=np.asarray(right.Q))
    other = soft_reference(FiniteMDP(np.ones((3, 2, 3)) / 3, np.zeros((3, 2)), gamma=0.5), tau=0.1)
    with pytest.raises(
        ValueError, match=r"soft.Q must have the model's shape \(1, 2\); got \(3, 2\)"
    ):
        entropy_regularized_npg(mdp, eta=0.5, tau=0.1, iterations=0, soft=other)
    # the right reference passes: the same errors as without one, and bounds at or above (h66: a passed
    # reference's bound is the larger of soft.bound and its residual bound, which at soft_reference's
    # round-off floor is a few per cent larger, so the certificates agree to ~1e-14, no longer bit for bit)
    a = entropy_regularized_npg(mdp, eta=0.5, tau=0.1, iterations=3, soft=right, pi0=wrong.policy)
    b = entropy_regularized_npg(mdp, eta=0.5, tau=0.1, iterations=3, pi0=wrong.policy)
    np.testing.assert_array_equal(a.trace["log_policy_error"], b.trace["log_policy_error"])
    assert np.all(a.trace["log_policy_error_bound"] >= b.trace["log_policy_error_bound"])
    np.testing.assert_allclose(
        a.trace["log_policy_error_bound"], b.trace["log_policy_error_bound"], rtol=1e-12
    )
    assert (
        float(a.trace["log_policy_error"][0]) > 8.0
    )  # (the true error at π_0, now certified above it)
    assert float(a.trace["log_policy_error_bound"][0]) >= float(a.trace["log_policy_error"][0])


def test_entropy_npg_constant_refuses_a_soft_reference_for_another_temperature():
    # the same for Cen et al.'s C_1: with the τ = 1 reference at τ = 0.1 (η = (1−γ)/τ, Q-part only)
    # it was 0.744 against 0.431 with the right one: the bound built on it was not Theorem 1's
    from rltheory.algorithms.soft import soft_reference
    from rltheory.bounds import entropy_npg_constant

    mdp = FiniteMDP(np.ones((1, 2, 1)), np.array([[0.0, 1.0]]), gamma=0.5)
    with pytest.raises(ValueError, match=r"soft is not a reference for this model at tau=0\.1"):
        entropy_npg_constant(mdp, eta=5.0, tau=0.1, soft=soft_reference(mdp, tau=1.0))
    right = soft_reference(mdp, tau=0.1)
    assert float(entropy_npg_constant(mdp, eta=5.0, tau=0.1, soft=right)) == float(
        entropy_npg_constant(mdp, eta=5.0, tau=0.1)
    )


@pytest.mark.parametrize("gamma", [0.5, 0.9])
@pytest.mark.parametrize("tau", [1e-40, 3e-41])
def test_entropy_npg_bounds_cover_the_true_errors_in_the_subnormal_range(gamma, tau):
    # Rewards ~1e-40 in float32 (subnormal: the errors are multiples of the subnormal spacing
    # 1.4e-45, which the relative round-off model misses). One state, so the references are
    # closed forms, computed in float64 where 1e-40 is a normal number (relative error ~1e-15,
    # absolute ~1e-55): (1 − γ)V*_τ = τ log Σ_a exp(r_a/τ), Q*_τ = r + γV*_τ, log π*_τ = (Q*_τ − V*_τ)/τ;
    # for the iterate π (normalised): (1 − γ)V_τ^π = Σ_a π_a (r_a − τ log π_a), Q_τ^π = r + γV_τ^π.
    # (A check of the q- and log-policy certificates in that range; it held before the temperature fix
    # for these cases.)
    r = np.array([[1e-40, 3e-41, 0.0]], dtype=np.float32)
    mdp = FiniteMDP(np.ones((1, 3, 1), dtype=np.float32), r, gamma=gamma)
    r64 = r[0].astype(np.float64)
    x = r64 / tau
    v_star = tau * (np.max(x) + math.log(float(np.sum(np.exp(x - np.max(x)))))) / (1.0 - gamma)
    q_star = r64 + gamma * v_star
    log_star = (q_star - v_star) / tau
    for T in range(6):
        res = entropy_regularized_npg(
            mdp, eta=min(1e37, (1.0 - gamma) / tau), tau=tau, iterations=T
        )
        pi = np.asarray(res.policy, dtype=np.float64)[0]
        pi = pi / np.sum(pi)
        v_pi = float(np.sum(pi * (r64 - tau * np.log(pi)))) / (1.0 - gamma)
        q_err = float(np.max(np.abs(q_star - (r64 + gamma * v_pi))))
        log_err = float(np.max(np.abs(log_star - np.log(pi))))
        assert q_err <= float(res.trace["q_error_bound"][-1]), (
            T,
            q_err,
            float(res.trace["q_error_bound"][-1]),
        )
        assert log_err <= float(res.trace["log_policy_error_bound"][-1])


@pytest.mark.parametrize("eta", [1e-6, 1e-12])
def test_an_mdpo_ascent_that_ends_below_its_start_is_named(eta):
    # Bug found here: at a small η with the default inner_lr = 1 the ascent overshot into a corner
    # of the simplex where the softmax gradient vanishes, and mdpo_step returned [[1, 0]] (the worse
    # action: r = (0, 1)) for a surrogate maximised at π·exp(η A)/Z ≈ (1/2, 1/2); its surrogate
    # value there is −log(2)·d/η < 0 = L(π), without a word. Then a ConvergenceWarning; now (helper-57,
    # session 17) a ValueError naming the state, inner_lr and eta: L_s(p) = (log Z − KL(p‖p*))/η, so such a
    # row is farther from the MDPO step p* than π itself, a wrong answer (test_h57_mdpo_overshoot.py).
    from rltheory.algorithms.policy_mirror_descent import mdpo_step

    mdp = FiniteMDP(np.ones((1, 2, 1)), np.array([[0.0, 1.0]]), gamma=0.5)
    pi = np.full((1, 2), 0.5)
    with pytest.raises(
        ValueError,
        match=r"ended below its start on the surrogate it maximises in state s=0 .* inner_lr=1 ",
    ):
        mdpo_step(mdp, pi, eta=eta)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)  # none at a step the ascent can take
        mdpo_step(mdp, pi, eta=1.0)
    # an inner_lr within the curvature moves towards the KL-PMD step π ∝ π exp(η A), A = (−1/2, 1/2):
    # action 1 gains, at most as much as the exact step's 1/(1 + e^{−η}) − 1/2 ≤ η/4
    p = mdpo_step(mdp, pi, eta=eta, inner_lr=eta)
    assert 0.5 <= float(p[0, 1]) <= 0.5 + eta / 4 + 1e-15
