"""marlhf_equilibrium's deviation search: a located cap on the enumeration (beta > 0) and the
backward-induction best response (beta = 0), checked against the enumeration."""

from __future__ import annotations

import numpy as np
import pytest

from rltheory.algorithms import marlhf as M
from rltheory.algorithms.marlhf import bradley_terry_mle, marlhf_equilibrium
from rltheory.mdp.offline_data import sample_game_episodes, sample_preferences


def _game(H, S, A1, A2, seed, K=2):
    rng = np.random.default_rng(seed)
    P = rng.random((H, S, A1, A2, S))
    P /= P.sum(-1, keepdims=True)
    R = rng.random((2, H, S, A1, A2))
    beh = np.full((H, S, A1, A2), 1.0 / (A1 * A2))
    t1, t2 = (sample_game_episodes(P, R, beh, K, rng=seed + k) for k in (1, 2))
    return P, sample_preferences(t1, t2, R, rng=seed + 3)


def _uniform(H, S, A1, A2):
    return np.full((H, S, A1, A2), 1.0 / (A1 * A2))


def test_too_many_deviations_are_refused_before_any_work(monkeypatch):
    # H = 3, S = 5, A = 3: 3^15 = 14348907 deviations per player (the old code enumerated them)
    P, prefs = _game(3, 5, 3, 3, seed=0)

    def no_fit(*args, **kwargs):
        raise AssertionError("the reward fit ran before the size check")

    monkeypatch.setattr(M, "bradley_terry_mle", no_fit)
    with pytest.raises(
        ValueError,
        match=r"player 1: A_1\^\(H·S\) = 3\^\(3·5\) = 14348907 deviations, above "
        r"MAX_DEVIATIONS = 16384 \(rltheory\.algorithms\.marlhf\.MAX_DEVIATIONS\); beta = 0",
    ):
        marlhf_equilibrium(prefs, P, [_uniform(3, 5, 3, 3)], beta=1.0)


def test_the_count_names_the_player_over_the_cap_and_huge_counts(monkeypatch):
    # A_1 = 2 within a cap of 16 = 2^(2·2), A_2 = 3 over it (81): player 2 is named
    P, prefs = _game(2, 2, 2, 3, seed=1)
    monkeypatch.setattr(M, "MAX_DEVIATIONS", 16)
    with pytest.raises(ValueError, match=r"player 2: A_2\^\(H·S\) = 3\^\(2·2\) = 81 deviations"):
        marlhf_equilibrium(prefs, P, [_uniform(2, 2, 2, 3)], beta=0.5)
    P, prefs = _game(2, 2, 2, 2, seed=1)  # 16 deviations each: at the cap, enumerated
    out = marlhf_equilibrium(prefs, P, [_uniform(2, 2, 2, 2)], beta=0.5)
    assert out.gap_ucb.shape == (1,) and out.gap_ucb[0] >= 0
    # 2^(100·100) deviations: the count as a power of ten, no 3011-digit integer
    assert M._deviation_count(100, 100, 2) == (True, "about 10^3010.3")
    assert M._deviation_count(7, 1, 1) == (False, "1")


@pytest.mark.parametrize(
    ("H", "S", "A1", "A2", "seed"), [(1, 1, 2, 2, 4), (2, 2, 2, 3, 5), (3, 2, 3, 2, 6)]
)
def test_backward_induction_equals_the_enumeration(H, S, A1, A2, seed):
    # beta = 0: sum_i max_{pi_i'} theta_i^T (psi(pi_i', pi_-i) - psi(pi)) by backward induction in the
    # induced single-agent MDP, against the enumeration of every deterministic deviation
    # (marlhf_equilibrium's beta > 0 path at beta = 1e-300, whose norm term is below 1e-290)
    P, prefs = _game(H, S, A1, A2, seed=seed, K=60)
    fit = bradley_terry_mle(prefs)
    rng = np.random.default_rng(seed)
    cands = []
    for k in range(4):
        x = rng.dirichlet(np.ones(A1), size=(H, S))
        y = rng.dirichlet(np.ones(A2), size=(H, S))
        if k == 0:  # a deterministic player 1
            x = np.eye(A1)[rng.integers(A1, size=(H, S))]
        cands.append(x[..., :, None] * y[..., None, :])
    got = marlhf_equilibrium(prefs, P, cands, beta=0.0, fit=fit)
    ref = marlhf_equilibrium(prefs, P, cands, beta=1e-300, fit=fit)
    scale = H * max(1.0, float(np.max(np.abs(fit.theta))))
    np.testing.assert_allclose(got.gap_ucb, ref.gap_ucb, rtol=0, atol=1e-13 * scale)
    assert got.candidate == ref.candidate
    assert np.all(got.gap_ucb > 0)  # generic mixed candidates are not equilibria


def test_backward_induction_gap_vanishes_at_an_equilibrium_of_the_fitted_rewards():
    # One step, one state: theta_i(a1, a2) = fitted rewards of a 2 x 2 game. The pure profile that is
    # a Nash equilibrium of (theta_1, theta_2) has gap 0; the other profiles have the closed-form
    # gap sum_i max_b theta_i(b, a_-i) - theta_i(a), the 1-step NashConv
    P, prefs = _game(1, 1, 2, 2, seed=7, K=200)
    fit = bradley_terry_mle(prefs)
    th = fit.theta[:, 0, 0]  # (2, A1, A2)
    cands = [np.eye(4)[j].reshape(1, 1, 2, 2) for j in range(4)]
    out = marlhf_equilibrium(prefs, P, cands, beta=0.0, fit=fit)
    for j in range(4):
        a1, a2 = divmod(j, 2)
        want = (th[0, :, a2].max() - th[0, a1, a2]) + (th[1, a1, :].max() - th[1, a1, a2])
        assert out.gap_ucb[j] == pytest.approx(want, abs=1e-13 * max(1.0, np.abs(th).max()))


@pytest.mark.parametrize("beta", [0.0, 1.0])
def test_the_model_is_checked_before_any_work(beta, monkeypatch):
    # P's rows and mu were checked only by the occupancy computations after the reward fit (beta > 0),
    # and not at all by the backward induction of beta = 0 (which returned gaps for P = 2 P);
    # text P and mu were parsed (np.asarray(..., float64))
    P, prefs = _game(2, 2, 2, 2, seed=8)
    cands = [_uniform(2, 2, 2, 2)]

    def no_fit(*args, **kwargs):
        raise AssertionError("the reward fit ran before the model check")

    monkeypatch.setattr(M, "bradley_terry_mle", no_fit)
    with pytest.raises(ValueError, match=r"each P\[h, s, a, :\] must sum to 1 .* sums to 2"):
        marlhf_equilibrium(prefs, 2 * P, cands, beta=beta)
    with pytest.raises(ValueError, match=r"P must be finite; P\(h=0, s=0, a=0, s'=0\) = nan"):
        marlhf_equilibrium(prefs, P * np.nan, cands, beta=beta)
    with pytest.raises(ValueError, match=r"mu must have shape \(S,\) = \(2,\)"):
        marlhf_equilibrium(prefs, P, cands, beta=beta, mu=[1.0])
    with pytest.raises(ValueError, match=r"each mu\[:\] must sum to 1 .* sums to 2"):
        marlhf_equilibrium(prefs, P, cands, beta=beta, mu=[1.0, 1.0])
    with pytest.raises(TypeError, match=r"P must hold real numbers; got a string array"):
        marlhf_equilibrium(prefs, P.astype(str), cands, beta=beta)
    with pytest.raises(TypeError, match=r"mu must hold real numbers; got a string array"):
        marlhf_equilibrium(prefs, P, cands, beta=beta, mu=["0.5", "0.5"])


def test_candidates_are_checked_before_the_fit_and_may_be_any_iterable(monkeypatch):
    # old: a bad last candidate was found only after the reward fit and the other candidates' gaps;
    # a generator failed with "object of type 'generator' has no len()"
    P, prefs = _game(2, 2, 2, 2, seed=9)
    good = _uniform(2, 2, 2, 2)
    corr = np.zeros((2, 2, 2, 2))
    corr[..., 0, 0] = corr[..., 1, 1] = 0.5  # correlated, not a product
    fit = bradley_terry_mle(prefs)
    ref = marlhf_equilibrium(prefs, P, [good, good], beta=0.5, fit=fit)
    got = marlhf_equilibrium(prefs, P, (c for c in [good, good]), beta=0.5, fit=fit)
    np.testing.assert_array_equal(got.gap_ucb, ref.gap_ucb)

    def no_fit(*args, **kwargs):
        raise AssertionError("the reward fit ran before the candidates were checked")

    monkeypatch.setattr(M, "bradley_terry_mle", no_fit)
    with pytest.raises(ValueError, match=r"candidates\[2\] must be a product policy"):
        marlhf_equilibrium(prefs, P, [good, good, corr], beta=0.5)
    with pytest.raises(
        TypeError, match=r"candidates must be a list of product joint policies .* got int"
    ):
        marlhf_equilibrium(prefs, P, 5, beta=0.5)


def _product_of(x, y, dtype=np.float64):
    return (np.asarray(x)[:, None] * np.asarray(y)[None, :]).astype(dtype).reshape(1, 1, 2, -1)


def test_a_candidate_2e_minus_6_from_every_product_is_refused():
    # pi(a1, a2) = 1/4 + 2e-6 (-1)^(a1 + a2): its marginals are uniform, so the product of its
    # marginals is the uniform policy, 2e-6 away at every entry; np.allclose's rtol = 1e-5
    # accepted it. The float64 tolerance for a row of 4 joint actions is 1e-8 (1 + 2) = 3e-8.
    x = np.array([0.5, 0.5])
    pol = _product_of(x, x).copy()
    pol[0, 0] += 2e-6 * np.array([[1, -1], [-1, 1]])
    with pytest.raises(
        ValueError,
        match=r"candidates\[0\] must be a product policy π_1 ⊗ π_2 \(within 3e-08 = "
        r"1e-08·\(1 \+ √4\)\); at \(h=0, s=0, a1=0, a2=0\) it is 0\.250002, the product of "
        r"its marginals 0\.25 \(\|difference\| = 2e-06\)",
    ):
        M._product_policy(pol, 1, 1, (2, 2), 0)
    # within the tolerance (2.5e-8 < 3e-8) it passes
    pol[0, 0] = 0.25 + 2.5e-8 * np.array([[1, -1], [-1, 1]])
    assert np.array_equal(M._product_policy(pol, 1, 1, (2, 2), 0), pol)


def test_float32_products_and_their_float64_copies_are_products():
    # rounded to float32, the entries of x ⊗ y are ~1e-8 from the product of their marginals;
    # a float32 candidate is judged at float32's 16 eps ~ 1.9e-6, and a float64 copy whose rows
    # pass the float64 row-sum rule (1e-8 (1 + sqrt n)) passes the product test at the same rule
    rng = np.random.default_rng(7)
    copies = 0
    for _ in range(300):
        a1, a2 = (int(k) for k in rng.integers(1, 8, 2))
        x, y = rng.dirichlet(np.ones(a1)), rng.dirichlet(np.ones(a2))
        pol32 = (x[:, None] * y[None, :]).astype(np.float32).reshape(1, 1, a1, a2)
        p64 = pol32.astype(np.float64)
        out = M._product_policy(pol32, 1, 1, (a1, a2), 0)
        assert out.dtype == np.float64 and np.array_equal(out, p64)
        if abs(p64.sum() - 1.0) <= 1e-8 * (1 + (a1 * a2) ** 0.5):
            assert np.array_equal(M._product_policy(p64, 1, 1, (a1, a2), 0), p64)
            copies += 1
    assert copies >= 250  # most copies are float64 distributions (the rest fail the row rule)
    # the float32 rounding shows: 1e-9 absolute (the old atol without rtol) refused this one
    pol32 = _product_of([1 / 3, 2 / 3], [0.1, 0.2, 0.7], np.float32)
    p64 = pol32.astype(np.float64)
    m = p64.sum(axis=3)[..., :, None] * p64.sum(axis=2)[..., None, :]
    assert np.max(np.abs(p64 - m)) > 1e-9
    assert np.array_equal(M._product_policy(pol32, 1, 1, (2, 3), 0), p64)
