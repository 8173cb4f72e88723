"""Edge inputs of the actor-critic, hybrid and MARLHF modules (second round): reward ranges the
methods assume, numpy scalars as settings, empty or mismatched inputs, and dtypes."""

from __future__ import annotations

import numpy as np
import pytest

from rltheory.algorithms.actor_critic import (
    improper_policy_gradient,
    mixture_policy,
    natural_actor_critic,
    softmax_linear_policy,
)
from rltheory.algorithms.hybrid import hybrid_actor_critic, hybrid_npg
from rltheory.algorithms.marlhf import bradley_terry_mle, marlhf_equilibrium
from rltheory.errors import InvalidModelError
from rltheory.mdp import EpisodeDataset, FiniteHorizonMDP, PreferenceDataset
from rltheory.mdp.zoo import random_mdp


# ------------------------------------------------------------------ hybrid: rewards in [0, 1]
@pytest.mark.parametrize("method", [hybrid_npg, hybrid_actor_critic])
@pytest.mark.parametrize(("R", "where"), [
    ([[-1.0, -0.5]], r"fh\.R\[h=0, s=0, a=0\] = -1"),  # old: every Q̂ clipped to 0, the policy never moved
    ([[0.0, 2.0]], r"fh\.R\[h=0, s=0, a=1\] = 2"),  # old: Q̂_h clipped to H − h on both actions
    ([[0.0, 1e307]], r"fh\.R\[h=0, s=0, a=1\] = 1e\+307"),  # old: "behaviour must be finite ... nan"
])
def test_hybrid_methods_reject_rewards_outside_the_unit_interval(method, R, where):
    fh = FiniteHorizonMDP.stationary(np.ones((1, 2, 1)), np.array(R), H=2)
    with pytest.raises(InvalidModelError, match=rf"{method.__name__} assumes rewards in \[0, 1\].*{where}"):
        method(fh, np.eye(2).reshape(1, 2, 2), None, iterations=5, n_online=20, eta=2.0, rng=0)


@pytest.mark.parametrize("method", [hybrid_npg, hybrid_actor_critic])
def test_hybrid_methods_reject_offline_rewards_outside_the_unit_interval(method):
    fh = FiniteHorizonMDP.stationary(np.ones((1, 2, 1)), np.array([[0.0, 1.0]]), H=2)
    off = EpisodeDataset(np.zeros((3, 3), int), np.ones((3, 2), int), np.array([[1.0, 1.0], [1.0, 5.0], [0.0, 1.0]]),
                         S=1, A=2)
    # old: accepted; the critic fit targets up to 6 and clipped them to H − h
    with pytest.raises(InvalidModelError, match=r"rewards in \[0, 1\].*rewards\[k=1, h=1\] = 5"):
        method(fh, np.eye(2).reshape(1, 2, 2), off, iterations=2, n_online=5, eta=1.0, rng=0)
    ok = EpisodeDataset(off.states, off.actions, np.clip(off.rewards, 0.0, 1.0), S=1, A=2)
    res = method(fh, np.eye(2).reshape(1, 2, 2), ok, iterations=2, n_online=5, eta=1.0, rng=0)
    assert res.trace["suboptimality"][-1] < res.trace["suboptimality"][0]


# ------------------------------------------------------------------ MARLHF: settings and inputs
def _bt_prefs():
    a = EpisodeDataset(np.zeros((4, 2), int), np.ones((4, 1), int), np.zeros((4, 1)), S=1, A=2)
    b = EpisodeDataset(np.zeros((4, 2), int), np.zeros((4, 1), int), np.zeros((4, 1)), S=1, A=2)
    return PreferenceDataset(a, b, np.array([[1], [1], [1], [0]]))


def _game_prefs():
    # all four comparisons are joint action (0, 0) against (1, 1), one state, one step
    K = 4
    a = EpisodeDataset(np.zeros((K, 2), int), np.zeros((K, 1, 2), int), np.zeros((K, 1, 2)), S=1, A=(2, 2))
    b = EpisodeDataset(np.zeros((K, 2), int), np.ones((K, 1, 2), int), np.zeros((K, 1, 2)), S=1, A=(2, 2))
    return PreferenceDataset(a, b, np.array([[1, 1], [1, 1], [1, 0], [0, 1]])), np.ones((1, 1, 2, 2, 1))


_CANDS = [np.eye(4)[j].reshape(1, 1, 2, 2) for j in range(4)]


def test_bradley_terry_takes_numpy_integer_max_iter():
    # old: "max_iter must be a positive integer; got np.int64(50)"
    ref = bradley_terry_mle(_bt_prefs(), max_iter=50)
    got = bradley_terry_mle(_bt_prefs(), max_iter=np.int64(50))
    assert got.converged and got.iterations == ref.iterations
    np.testing.assert_array_equal(got.theta, ref.theta)
    with pytest.raises(ValueError, match=r"max_iter must be a positive integer; got np.True_"):
        bradley_terry_mle(_bt_prefs(), max_iter=np.True_)


@pytest.mark.parametrize("beta", [np.float32(1.0), np.float64(1.0), np.int64(1)])
def test_marlhf_takes_numpy_scalar_beta(beta):
    prefs, P = _game_prefs()
    ref = marlhf_equilibrium(prefs, P, _CANDS, beta=1.0)
    got = marlhf_equilibrium(prefs, P, _CANDS, beta=beta)  # old: "beta must be a number >= 0; got np.float32(1.0)"
    np.testing.assert_array_equal(got.gap_ucb, ref.gap_ucb)
    assert got.candidate == ref.candidate


def test_marlhf_rejects_no_candidates_and_a_fit_of_other_data():
    prefs, P = _game_prefs()
    with pytest.raises(ValueError, match="candidates must hold at least one product joint policy"):
        marlhf_equilibrium(prefs, P, [], beta=1.0)  # old: "attempt to get argmin of an empty sequence"
    other = bradley_terry_mle(_bt_prefs())  # one player, two actions: theta (1, 1, 1, 2), gram (2, 2)
    # old: numpy's "matmul: Input operand 1 has a mismatch in its core dimension 0"
    with pytest.raises(ValueError, match=r"fit does not match prefs: fit\.theta must have shape .* = \(2, 1, 1, 2, 2\)"
                                         r" and fit\.gram \(4, 4\); got \(1, 1, 1, 2\) and \(2, 2\)"):
        marlhf_equilibrium(prefs, P, _CANDS, beta=1.0, fit=other)
    with pytest.raises(TypeError, match="fit must be a BradleyTerryResult"):  # old: AttributeError 'gram'
        marlhf_equilibrium(prefs, P, _CANDS, beta=1.0, fit="x")
    fit = bradley_terry_mle(prefs)
    np.testing.assert_array_equal(marlhf_equilibrium(prefs, P, _CANDS, beta=1.0, fit=fit).fit.theta, fit.theta)


# ------------------------------------------------------------------ improper mixtures: float32 controllers
def test_improper_policy_gradient_takes_float32_controllers_like_mixture_policy():
    # float32 rows (0.49999997, 0.49999997) sum to 1 − 6e-8 in float64: within float32's 16·eps, so
    # mixture_policy accepts them; improper_policy_gradient judged them at float64's 1e-8 after the
    # cast ("each controllers[0][s, :] must sum to 1 (atol=1e-08)"). Accepted rows are normalised,
    # so the run equals the one on the normalised float64 controllers.
    mdp = random_mdp(3, 2, gamma=0.5, rng=0)
    x = np.nextafter(np.float32(0.5), np.float32(0.0))
    K32 = np.array([[[x, x]] * 3, [[1.0, 0.0], [0.0, 1.0], [1.0, 0.0]]], dtype=np.float32)
    assert abs(float(K32.astype(np.float64).sum(-1)[0, 0]) - 1.0) > 1e-8
    mixture_policy(K32, np.zeros(2))
    K64 = K32.astype(np.float64)
    K64 /= K64.sum(-1, keepdims=True)
    for natural in (True, False):
        got = improper_policy_gradient(mdp, K32, eta=0.5, iterations=4, natural=natural)
        ref = improper_policy_gradient(mdp, K64, eta=0.5, iterations=4, natural=natural)
        np.testing.assert_array_equal(got.trace["value"], ref.trace["value"])
        assert got.trace["value"][-1] > got.trace["value"][0]
    with pytest.raises(InvalidModelError, match=r"each controllers\[0\]\[s, :\] must sum to 1"):
        improper_policy_gradient(mdp, K64 * 0.999, eta=0.5, iterations=1)  # still refused in float64


# ------------------------------------------------------------------ softmax-linear actor: non-finite logits
def test_softmax_linear_policy_rejects_non_finite_inputs_and_overflowing_logits():
    f = np.eye(2)[None]
    # old: [[nan, nan]] returned silently (with a RuntimeWarning at most)
    with pytest.raises(InvalidModelError, match=r"theta must be finite; theta\(j=0\) = nan"):
        softmax_linear_policy(f, np.array([np.nan, 0.0]))
    with pytest.raises(InvalidModelError, match=r"theta must be finite; theta\(j=0\) = inf"):
        softmax_linear_policy(f, np.array([np.inf, 0.0]))
    with pytest.raises(InvalidModelError, match=r"phi_sa must be finite; phi_sa\(s=0, a=0, j=0\) = nan"):
        softmax_linear_policy(f * np.nan, np.zeros(2))
    # theta^T phi(0, 1) = 1e308 + 1e308 overflows although both are finite
    g = np.array([[[1.0, 0.0], [1.0, 1.0]]])
    with pytest.raises(ValueError, match=r"softmax_linear_policy: the logits .* overflow; logits\(s=0, a=1\) = inf"):
        softmax_linear_policy(g, np.array([1e308, 1e308]))
    np.testing.assert_array_equal(softmax_linear_policy(g, np.array([1e308, -1e308])), [[1.0, 0.0]])  # logits 1e308, 0


def test_natural_actor_critic_names_an_overflowing_step_and_empty_features():
    mdp = random_mdp(3, 2, gamma=0.5, rng=0)
    f = np.eye(6).reshape(3, 2, 6)
    # old: InvalidModelError "pi must be finite; pi(s=0, a=0) = nan" from inside the critic
    with pytest.raises(ValueError, match=r"natural_actor_critic at iteration t=1 \(eta=1e\+308; use a smaller eta\): "
                                         r"the logits .* overflow"):
        natural_actor_critic(mdp, f, eta=1e308, iterations=3)
    # eta = 1e300 stays finite: theta_1 = eta w*/(1 - gamma) and the run completes at the greedy policy
    res = natural_actor_critic(mdp, f, eta=1e300, iterations=2)
    assert np.all(np.isfinite(res.trace["suboptimality"]))
    with pytest.raises(ValueError, match=r"features must have at least one column \(d >= 1\); got shape \(3, 2, 0\)"):
        natural_actor_critic(mdp, np.zeros((3, 2, 0)), eta=1.0, iterations=1)  # old: "cannot reshape array of size 0"


# ------------------------------------------------------------------ hybrid: step size, features and restarts
def _fh2():
    return FiniteHorizonMDP.stationary(np.ones((1, 2, 1)), np.array([[0.0, 1.0]]), H=2)


@pytest.mark.parametrize("method", [hybrid_npg, hybrid_actor_critic])
def test_hybrid_methods_name_an_overflowing_exponent_and_overflowing_features(method):
    phi = np.eye(2).reshape(1, 2, 2)
    kw = dict(iterations=3, n_online=5, rng=0)
    # old: eta·Q̂ = inf, inf − inf = NaN policy, then "behaviour must be finite; behaviour(...) = nan"
    with pytest.raises(ValueError, match=rf"{method.__name__}: eta·H must be finite .* got eta = 1e\+308, H = 2"):
        method(_fh2(), phi, None, eta=1e308, **kw)
    big = method(_fh2(), phi, None, eta=1e307, **kw)  # eta·H = 2e307 is finite: the greedy step, no NaN
    assert big.trace["suboptimality"][-1] == 0.0
    # old: Λ = Σ φφᵀ overflowed to inf, the solve gave Q̂ = 0 and the policy never moved (gap 1.0 throughout)
    with pytest.raises(ValueError, match=r"Λ_1 = .* overflows at step h=1; rescale the features \(max \|features\| = 1e\+200\)"):
        method(_fh2(), phi * 1e200, None, eta=1.0, ridge=1e-300, **kw)
    # at 1e150 the Gram matrix 1e300 fits: the same run as unit features with the ridge scaled by 1e300
    ref = method(_fh2(), phi, None, eta=1.0, ridge=1.0, **kw)
    got = method(_fh2(), phi * 1e150, None, eta=1.0, ridge=1e300, **kw)
    np.testing.assert_allclose(got.trace["suboptimality"], ref.trace["suboptimality"], rtol=1e-12)


@pytest.mark.parametrize("bad", ["complex", "text"])
def test_hybrid_restart_and_features_must_be_real(bad):
    phi = np.eye(2).reshape(1, 2, 2)
    kw = dict(iterations=1, n_online=2, eta=1.0, rng=0)
    restart = np.ones((2, 1)) + 1j if bad == "complex" else "x"
    feats = phi + 1j if bad == "complex" else "x"
    what = "complex" if bad == "complex" else "string"
    # old: the imaginary part dropped with a ComplexWarning only, or "could not convert string to float"
    with pytest.raises(TypeError, match=rf"hybrid_npg: restart must hold real numbers; got a {what} array"):
        hybrid_npg(_fh2(), phi, None, restart=restart, **kw)
    with pytest.raises(TypeError, match=rf"features must hold real numbers; got a {what} array"):
        hybrid_npg(_fh2(), feats, None, **kw)


# ------------------------------------------------------------------ sample-based critics: memory near gamma = 1
def test_geometric_time_samples_keep_rollouts_draws_without_storing_the_rollout():
    # s ~ d^pi_rho as the state at an independent Geometric(1 - gamma) time T of a roll-out. The old
    # _samples stored the whole (n, max T + 2) roll-out: at gamma = 0.999 and n = 2000 (max T ≈ 7600)
    # ~365 MB; at gamma = 0.99999 and n = 1000, 19 GB and 4 minutes (a MemoryError beyond). The
    # samples and the generator's state afterwards must stay those of rollout's draws.
    import tracemalloc

    from rltheory.algorithms import actor_critic as ac
    from rltheory.mdp.sample import rollout

    mdp = random_mdp(3, 2, gamma=0.999, rng=5)
    pi = np.array([[0.3, 0.7], [0.5, 0.5], [0.9, 0.1]])
    rho = np.array([0.2, 0.3, 0.5])
    n = 2000
    gen = np.random.default_rng(11)
    T = gen.geometric(1.0 - 0.999, size=n) - 1
    tr = rollout(mdp, pi, int(T.max()) + 2, n, gen, mu=rho)
    i = np.arange(n)
    want = (tr.states[i, T], tr.actions[i, T], tr.rewards[i, T], tr.states[i, T + 1], tr.actions[i, T + 1])
    after = gen.random()
    del tr
    gen = np.random.default_rng(11)
    tracemalloc.start()
    try:
        got = ac._samples(mdp, pi, rho, n, gen)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    for x, y in zip(got, want, strict=True):
        np.testing.assert_array_equal(x, y)
    assert gen.random() == after
    assert peak < 40e6, peak  # old: ~3.6e8 (three (n, max T + 2) arrays)


@pytest.mark.parametrize("method", [hybrid_npg, hybrid_actor_critic])
@pytest.mark.filterwarnings("ignore:hybrid_actor_critic. suboptimality above tol:rltheory.errors.ConvergenceWarning")
def test_hybrid_tol_certifies_the_exact_gap_of_a_float32_model(method):
    # One state, r = (0.9, 1.0) in float32, H = 3: V* = 3 r(1) and V^pi = sum_h sum_a pi_h(a) r(a),
    # exactly in rationals. The old trace evaluated the gap in float32 arithmetic, where 2.45e-8
    # rounded to 0, so tol = 1e-12 reported converged=True after 14 iterations at an exact gap 2.45e-8.
    from fractions import Fraction

    r32 = np.array([[0.9, 1.0]], dtype=np.float32)
    fh = FiniteHorizonMDP.stationary(np.ones((1, 2, 1), np.float32), r32, H=3)
    res = method(fh, np.eye(2).reshape(1, 2, 2), None, iterations=60, n_online=20, eta=2.0, rng=0, tol=1e-12)
    r = [Fraction(float(x)) for x in r32[0]]
    exact = 3 * r[1] - sum(Fraction(float(res.policy[h, 0, a])) * r[a] for h in range(3) for a in range(2))
    assert abs(float(exact) - res.trace["suboptimality"][-1]) <= 1e-15  # old: off by up to ~1e-7
    if res.converged:
        assert float(exact) <= 1e-12
    else:  # the actor-critic does not reach 1e-12 in 60 iterations here: honest, with its warning
        assert float(exact) > 1e-12
    assert res.converged is (method is hybrid_npg)
