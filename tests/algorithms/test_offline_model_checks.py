"""CQL on a hand-built (population) EmpiricalModel: the model is validated, not trusted.

``EmpiricalModel`` does not validate itself (models from ``empirical_model`` are valid by
construction), and :func:`cql` / :func:`conservative_evaluation` accept one to run on the
population model. Before, a NaN or unnormalised behaviour, a transition row off the simplex,
or arrays of mismatched shapes ran silently and returned numbers.
"""

from __future__ import annotations

import numpy as np
import pytest

from rltheory.algorithms.offline import (
    certainty_equivalence,
    conservative_evaluation,
    cql,
    lcb_vi,
    lcb_vi_discounted,
    pevi,
)
from rltheory.algorithms.offline_games import interval_gap_bound
from rltheory.bounds.offline import (
    elliptical_bonus,
    empirical_bernstein_radius,
    hoeffding_radius,
    pessimism_suboptimality_bound,
)
from rltheory.errors import InvalidModelError
from rltheory.mdp.offline_data import (
    EmpiricalModel,
    EpisodeDataset,
    TransitionDataset,
    sample_game_episodes,
)


def _model(**kw) -> EmpiricalModel:
    """H = 1, one state, two actions, rewards 1, behaviour (1/2, 1/2) unless overridden."""
    d = {
        "counts": np.ones((1, 1, 2)),
        "P": np.ones((1, 1, 2, 1)),
        "R": np.ones((1, 1, 1, 2)),
        "behaviour": np.full((1, 1, 2), 0.5),
    }
    d.update(kw)
    return EmpiricalModel(d["counts"], d["P"], d["R"], d["behaviour"], (2,))


def _cql(m: EmpiricalModel) -> None:
    cql(m, alpha=1.0)


def _evaluate(m: EmpiricalModel) -> None:
    conservative_evaluation(m, np.array([[[0.5, 0.5]]]), alpha=1.0)


def test_a_valid_model_keeps_its_closed_form_values():
    # π = π_b = (1/2, 1/2): D_CQL = Σ π²/π_b − 1 = 0, so V̂^π = V^π = 1. CQL's greedy value is
    # B − α(1/π_b − 1) = 1 − 1 = 0 for either action.
    assert conservative_evaluation(_model(), np.array([[[0.5, 0.5]]]), alpha=1.0).tolist() == [
        [1.0],
        [0.0],
    ]
    assert cql(_model(), alpha=1.0).V.tolist() == [[0.0], [0.0]]


@pytest.mark.parametrize("run", [_cql, _evaluate], ids=["cql", "conservative_evaluation"])
@pytest.mark.parametrize(
    ("kw", "msg"),
    [
        # old: behaviour (1, 1) gave cql V = 1 and conservative_evaluation 1.5 (> V^π = 1, the
        # underestimation property broken); NaN gave 0
        (
            {"behaviour": np.array([[[1.0, 1.0]]])},
            r"model\.behaviour\[h=0, s=0, :\] must sum to 1 .*got \[1\.0, 1\.0\]",
        ),
        (
            {"behaviour": np.array([[[np.nan, 0.5]]])},
            r"model\.behaviour must be finite and non-negative; model\.behaviour\(h=0, s=0, a=0\) = nan",
        ),
        (
            {"behaviour": np.array([[[-0.5, 1.5]]])},
            r"model\.behaviour must be finite and non-negative; model\.behaviour\(h=0, s=0, a=0\) = -0\.5",
        ),
        # old: a row summing to 3 tripled the continuation value without a word
        (
            {"P": np.full((1, 1, 2, 1), 3.0)},
            r"model\.P\[h=0, s=0, a=0, :\] must sum to 1 where the behaviour takes a; sums to 3",
        ),
        (
            {"P": np.ones((2, 1, 2, 1))},
            r"model\.P must have shape \(1, 1, 2, 1\) \(H, S, A from model\.counts\); got \(2, 1, 2, 1\)",
        ),
        # old: "operands could not be broadcast together with shapes (1,3) (1,2)" from numpy
        (
            {"R": np.ones((1, 1, 1, 3))},
            r"model\.R must have shape \(1, 1, 1, 2\) .*got \(1, 1, 1, 3\)",
        ),
        # old: "exceeds the float range (B̂ = nan ...)" for a NaN reward
        (
            {"R": np.array([[[[np.nan, 1.0]]]])},
            r"model\.R must be finite; model\.R\(i=0, h=0, s=0, a=0\) = nan",
        ),
        (
            {"counts": np.ones((1, 1, 2, 1))},
            r"model\.counts must have shape \(H, S, A\) with H, S, A >= 1; got \(1, 1, 2, 1\)",
        ),
    ],
)
def test_a_broken_model_is_located(run, kw, msg):
    with pytest.raises(InvalidModelError, match=msg):
        run(_model(**kw))


def test_unvisited_state_rows_may_be_zero():
    # empirical_model's convention: an unvisited state has an all-zero behaviour row and zero P
    # rows; that stays valid (V̂ = 0 there).
    m = _model(counts=np.zeros((1, 1, 2)), P=np.zeros((1, 1, 2, 1)), behaviour=np.zeros((1, 1, 2)))
    assert cql(m, alpha=1.0).V.tolist() == [[0.0], [0.0]]


@pytest.mark.parametrize("bonus", [np.array([[[True, False]]]), [[[True, False]]]])
def test_lcb_vi_refuses_a_boolean_bonus(bonus):
    # Old: read as the radii (1, 0): the once-seen action 1 (reward 1) got no penalty and was chosen
    # (policy [[1]]) although the well-covered action 0 has the better lower bound.
    a = np.array([[0]] * 10 + [[1]])
    r = np.array([[0.5]] * 10 + [[1.0]])
    d = EpisodeDataset(np.zeros((11, 2), int), a, r, S=1, A=2)
    with pytest.raises(
        TypeError, match=r"a given bonus must hold real numbers \(radii\); got a boolean array"
    ):
        lcb_vi(d, bonus=bonus)
    # the same radii as numbers are a valid given bonus
    assert lcb_vi(d, bonus=np.array([[[1.0, 0.0]]])).policy.tolist() == [[1]]


# --------------------------------------------------------------------------- booleans in the offline bounds
@pytest.mark.parametrize(
    ("call", "msg"),
    [
        # old: a count True was read as n = 1 (radius 1.0), a range True as B = 1
        (
            lambda: hoeffding_radius(True, 1.0, 0.1),
            r"n must hold real numbers; got a boolean value",
        ),
        (
            lambda: hoeffding_radius(np.array([True]), 1.0, 0.1),
            r"n must hold real numbers; got a boolean array",
        ),
        (
            lambda: hoeffding_radius(4, True, 0.1),
            r"value_range must hold real numbers; got a boolean value",
        ),
        (
            lambda: empirical_bernstein_radius(4, True, 1.0, 0.1),
            r"variance must hold real numbers; got a boolean value",
        ),
        # old: a support mask as d* returned 0.2
        (
            lambda: pessimism_suboptimality_bound(
                np.array([[[True, False]]]), np.array([[[0.1, 5.0]]])
            ),
            r"d_star must hold real numbers; got a boolean array",
        ),
    ],
)
def test_offline_bounds_refuse_booleans(call, msg):
    with pytest.raises(TypeError, match=msg):
        call()


def test_elliptical_bonus_refuses_beta_false_and_keeps_boolean_one_hot_features():
    L = 4.0 * np.eye(2)[None]
    # old: beta=False compared equal to 0 and gave zero bonuses
    with pytest.raises(ValueError, match=r"beta must be a positive finite number; got False"):
        elliptical_bonus(np.eye(2).reshape(1, 2, 2), L, False)
    # Γ = β √(φᵀ Λ⁻¹ φ) = 2 √(1/4) = 1 for one-hot φ, whether the one-hot array is float or bool
    assert elliptical_bonus(np.eye(2, dtype=bool).reshape(1, 2, 2), L, 2.0).tolist() == [
        [[1.0, 1.0]]
    ]
    assert elliptical_bonus(np.eye(2).reshape(1, 2, 2), L, np.float64(0.0)).tolist() == [
        [[0.0, 0.0]]
    ]


# --------------------------------------------------------------------------- candidate policies (games)
def _seven_action_game():
    P = np.ones((1, 1, 7, 1, 1))
    R = np.zeros((2, 1, 1, 7, 1))
    R[:, 0, 0, 0, 0] = 1.0
    return sample_game_episodes(P, R, np.full((1, 1, 7, 1), 1 / 7), 400, rng=0)


def test_a_float32_policy_is_a_distribution_at_its_own_precision():
    # A float32 uniform row over 7 joint actions sums to 1 − 4.5e-8 in float64; the old absolute
    # tolerance 1e-8 refused it ("must be a distribution over joint actions"). The certificate must
    # equal the float64 policy's up to the float32 rounding of the entries (~1e-8 relative).
    d = _seven_action_game()
    pol32 = np.full((1, 1, 7, 1), 1 / 7, dtype=np.float32)
    g32 = interval_gap_bound(d, pol32).gap_bound
    g64 = interval_gap_bound(d, np.full((1, 1, 7, 1), 1 / 7)).gap_bound
    np.testing.assert_allclose(g32, g64, rtol=1e-6, atol=0)


def test_a_policy_off_the_simplex_names_its_sum():
    d = _seven_action_game()
    with pytest.raises(
        ValueError,
        match=r"policy\[h=0, s=0\] must be a distribution over joint actions; it sums to 1\.05",
    ):
        interval_gap_bound(d, np.full((1, 1, 7, 1), 0.15))


def test_conservative_evaluation_takes_a_float32_policy():
    # π = π_b uniform over 7 actions, rewards 1, H = 1: D_CQL = Σ π²/π_b − 1 = 0, so V̂^π_0 = V^π_0 = 1.
    # In float32 the row sums to 1 − 4.5e-8; the old absolute 1e-8 check refused it. The value is 1
    # up to the float32 rounding of π (relative 6e-8 per entry).
    A = 7
    m = EmpiricalModel(
        np.ones((1, 1, A)),
        np.ones((1, 1, A, 1)),
        np.ones((1, 1, 1, A)),
        np.full((1, 1, A), 1 / A),
        (A,),
    )
    V = conservative_evaluation(m, np.full((1, 1, A), 1 / A, dtype=np.float32), alpha=1.0)
    assert abs(V[0, 0] - 1.0) <= 1e-6 and V[1, 0] == 0.0


@pytest.mark.parametrize(
    ("N", "gamma", "T"), [(1, 0.5, 1), (602, 0.5, 13), (602, 0.0, 7), (5, 0.99, 5)]
)
def test_lcb_vi_discounted_default_folds(N, gamma, T):
    # T = min(N, ⌈ln max(N, 2)/(1 − γ)⌉): ln 602 = 6.40, /0.5 → 13; γ = 0 → 7; N = 1 uses ln 2 (one
    # fold, not ⌈ln 1⌉ = 0 as the docstring's old "⌈ln N/(1 − γ)⌉" read); N = 5, γ = 0.99 → capped at N.
    d = TransitionDataset(
        np.zeros(N, int), np.zeros(N, int), np.full(N, 0.5), np.zeros(N, int), S=1, A=1
    )
    res = lcb_vi_discounted(d, gamma)
    assert res.iterations == T and res.counts.shape == (T, 1, 1) and int(res.counts.sum()) == N


def test_a_float32_occupancy_is_checked_at_its_own_precision():
    # A float32 occupancy normalised in float32: step 1 sums to 1 + 6.7e-8 in float64, which the old
    # code (cast to float64, then check_occupancy at float64's tolerance) refused — for 29% of random
    # such occupancies over 6 pairs. The bound is 2 Σ d·Γ, here 2 Σ d with Γ = 1.
    d = np.array(
        [
            [
                [0.49163663387298584, 0.02168198674917221],
                [0.2131413072347641, 0.028328636661171913],
                [0.23266243934631348, 0.012548997066915035],
            ],
            [
                [0.04867943376302719, 0.13670885562896729],
                [0.1493135690689087, 0.3570878505706787],
                [0.05639578402042389, 0.2518145740032196],
            ],
        ],
        dtype=np.float32,
    )
    assert pessimism_suboptimality_bound(d, np.ones((2, 3, 2))) == 2.0 * float(
        d.astype(np.float64).sum()
    )
    # a float64 occupancy 0.1% off is still refused
    with pytest.raises(
        InvalidModelError, match=r"each d_star\[h\] must sum to 1 .* worst step h=1 sums to 1\.001"
    ):
        pessimism_suboptimality_bound(d.astype(np.float64) * 1.001, np.ones((2, 3, 2)))


@pytest.mark.parametrize("ridge", [-1.0, float("nan"), "x", True])
def test_certainty_equivalence_checks_ridge_on_the_tabular_path(ridge):
    # Old: the tabular path (features=None) never looked at ridge, so ridge=-1, NaN, 'x' or True ran
    # and returned the greedy policy; the linear path already refused them with this message.
    d = EpisodeDataset(
        np.zeros((2, 2), int), np.array([[0], [1]]), np.array([[0.2], [0.9]]), S=1, A=2
    )
    with pytest.raises(ValueError, match=r"ridge must be a finite number >= 0; got"):
        certainty_equivalence(d, ridge=ridge)
    assert certainty_equivalence(d, ridge=0.0).policy.tolist() == [[1]]


@pytest.mark.parametrize("beta", [1.0, "self-normalized"])
@pytest.mark.parametrize("c", [-1.0, float("nan"), "x", True])
def test_pevi_checks_c_when_beta_is_given(beta, c):
    # Old: c is only used by the default β, so with a given β (a number or 'self-normalized') c=-1,
    # NaN, 'x' or True ran silently; with beta=None pevi_beta already refused them.
    d = EpisodeDataset(
        np.zeros((2, 2), int), np.array([[0], [1]]), np.array([[0.2], [0.9]]), S=1, A=2
    )
    phi = np.eye(2).reshape(1, 2, 2)
    with pytest.raises(ValueError, match=r"c must be a finite number > 0; got"):
        pevi(d, phi, beta=beta, c=c, split=True)
