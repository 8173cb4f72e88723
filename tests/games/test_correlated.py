"""Correlated / coarse correlated equilibria: LP constraints, Nash ⊆ CE ⊆ CCE, reference values."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rltheory.errors import InvalidModelError
from rltheory.games import (
    cce_constraints,
    cce_gap,
    ce_constraints,
    ce_gap,
    max_entropy_ce,
    max_welfare_cce,
    max_welfare_ce,
    nash_equilibria,
)
from rltheory.games.zoo import (
    battle_of_the_sexes,
    chicken,
    matching_pennies,
    prisoners_dilemma,
    random_bimatrix_game,
)


def _product(x, y):
    return np.outer(x, y)


@pytest.mark.parametrize("scale", [1e-12, 1e-9, 1e6])
def test_equilibrium_lps_are_invariant_to_the_payoff_scale(scale):
    """A common positive scale leaves the CE and CCE sets unchanged and scales the welfare: the
    solvers must return the same distributions (the max-entropy CE is unique; the LPs see the same
    normalised data). Before the payoffs were mapped to [0, 1], HiGHS dropped every incentive
    constraint of a game of size 1e-12 (|entries| < 1e-9 count as zero) and the welfare CCE moved
    by 0.98 in total variation."""
    U = random_bimatrix_game(np.random.default_rng(0), 3, 3)
    for solve in (max_welfare_ce, max_welfare_cce, max_entropy_ce):
        ref, out = solve(U), solve(scale * U)
        np.testing.assert_allclose(out.distribution, ref.distribution, atol=1e-8)
        assert out.welfare == pytest.approx(scale * ref.welfare, rel=1e-9)
        assert out.gap <= 1e-8 * scale


@given(st.integers(0, 2**31), st.integers(1, 4), st.integers(1, 4))
@settings(max_examples=20)
def test_nash_subset_ce_subset_cce(seed, m, n):
    """Every Nash product distribution is a CE; the max-welfare CE is a CCE; welfare ordered."""
    U = random_bimatrix_game(np.random.default_rng(seed), m, n)
    nash_w = -np.inf
    for x, y in nash_equilibria(U[0], U[1]):
        mu = _product(x, y)
        assert ce_gap(U, mu) <= 1e-9 and cce_gap(U, mu) <= 1e-9
        nash_w = max(nash_w, float((U[0] * mu).sum() + (U[1] * mu).sum()))
    ce = max_welfare_ce(U)
    assert ce.gap <= 1e-8 and cce_gap(U, ce.distribution) <= 1e-8
    cce = max_welfare_cce(U)
    assert cce.gap <= 1e-8
    assert nash_w <= ce.welfare + 1e-8 <= cce.welfare + 2e-8


@given(st.integers(0, 2**31))
@settings(max_examples=10)
def test_three_player_constraints_hold(seed):
    rng = np.random.default_rng(seed)
    U = rng.standard_normal((3, 2, 3, 2))
    ce = max_welfare_ce(U)
    mu = ce.distribution.reshape(-1)
    assert np.all(ce_constraints(U) @ mu <= 1e-8) and np.all(cce_constraints(U) @ mu <= 1e-8)
    assert mu.min() >= 0 and mu.sum() == pytest.approx(1.0)
    ent = max_entropy_ce(U)
    assert ent.gap <= 1e-6


def test_cce_rows_are_sums_of_ce_rows():
    U = random_bimatrix_game(np.random.default_rng(0), 3, 2)
    G, H = ce_constraints(U), cce_constraints(U)
    # player 0, deviation a' = 1: Σ_{a ≠ 1} CE rows (a, 1) (rows ordered (a, a'), a ≠ a')
    rows = [
        k
        for k, (a, b) in enumerate([(a, b) for a in range(3) for b in range(3) if a != b])
        if b == 1
    ]
    np.testing.assert_allclose(G[rows].sum(0), H[1], atol=1e-12)


def test_chicken_reference_values():
    # Aumann (1974): welfare-max CE of chicken = 1/2 (Sw,Sw) + 1/4 (Sw,St) + 1/4 (St,Sw): 5.25 each.
    ce = max_welfare_ce(chicken())
    np.testing.assert_allclose(ce.distribution, [[0.5, 0.25], [0.25, 0.0]], atol=1e-9)
    np.testing.assert_allclose(ce.payoffs, [5.25, 5.25], atol=1e-9)


def test_matching_pennies_unique_ce_and_pd_dominance():
    U = np.stack([matching_pennies(), -matching_pennies()])
    np.testing.assert_allclose(max_entropy_ce(U).distribution, np.full((2, 2), 0.25), atol=1e-6)
    np.testing.assert_allclose(max_welfare_ce(U).distribution, np.full((2, 2), 0.25), atol=1e-9)
    # Prisoner's dilemma: dominance leaves only (D, D) even for CCE.
    np.testing.assert_allclose(
        max_welfare_cce(prisoners_dilemma()).distribution, [[0, 0], [0, 1]], atol=1e-9
    )


def test_max_entropy_ce_is_a_ce_with_maximal_entropy():
    U = battle_of_the_sexes()
    ent = max_entropy_ce(U)
    H = -np.sum(ent.distribution * np.log(np.clip(ent.distribution, 1e-300, None)))
    for x, y in nash_equilibria(U[0], U[1]):  # every Nash distribution is a CE of lower entropy
        p = _product(x, y)
        assert -np.sum(p * np.log(np.clip(p, 1e-300, None))) <= H + 1e-6
    assert ent.gap <= 1e-6


def test_max_entropy_ce_on_a_face_of_the_simplex():
    """Where every CE is zero on some joint actions the entropy program has no strictly feasible
    point; it is solved on the CE support (one LP) instead.

    Prisoner's dilemma (closed form): D strictly dominates C for both players, so the point mass on
    (D, D) is the only CE; a support of one joint action leaves nothing to optimise, and the gap is
    the round-off allowance of 4 joint actions (~1e-15). The full program put 4e-9 on each other
    cell.

    The 2x3x2 game from seed 32707 (a stress-run find): the per-cell LP maxima ``max_CE μ(a)``
    sum to 1, so the CE is unique (any CE has ``μ(a) ≤ max_a`` and total mass 1) and lies on 4 of
    the 12 joint actions. Clarabel stalled on the full program ("optimal_inaccurate") with 4.3e-4 on a
    joint action no CE uses and a CE gap of 2.7e-6. Its feasibility tolerance is 1e-8 on rows
    scaled to a largest entry of 1, and the largest row scale here is 2.26, so a converged solve
    has gap ≤ 2.3e-8."""
    from scipy.optimize import linprog

    pd = max_entropy_ce(prisoners_dilemma())
    np.testing.assert_array_equal(pd.distribution, [[0.0, 0.0], [0.0, 1.0]])
    assert pd.gap <= 1e-14

    U = np.random.default_rng(32707).standard_normal((3, 2, 3, 2))
    G = ce_constraints(U)
    K = G.shape[1]
    ref = np.empty(K)
    for a in range(K):
        res = linprog(-np.eye(K)[a], A_ub=G, b_ub=np.zeros(len(G)), A_eq=np.ones((1, K)), b_eq=[1.0],
                      bounds=(0, None), method="highs")
        assert res.status == 0
        ref[a] = -res.fun
    assert ref.sum() == pytest.approx(1.0, abs=1e-7) and np.count_nonzero(ref > 1e-7) == 4  # the CE is unique
    ent = max_entropy_ce(U)
    np.testing.assert_allclose(ent.distribution.reshape(-1), ref, atol=1e-6)
    assert ent.gap <= 1e-8 * np.abs(G).max(axis=1).max()


def test_invalid_normal_form():
    with pytest.raises(InvalidModelError, match="one payoff table per player"):
        max_welfare_ce(np.zeros((3, 2, 2)))
    with pytest.raises(InvalidModelError, match=r"U must be finite"):
        max_welfare_ce(np.array([[[0.0, np.nan], [0.0, 0.0]], [[0.0, 0.0], [0.0, 0.0]]]))
    with pytest.raises(ValueError, match="joint-action shape"):
        ce_gap(chicken(), np.ones((3, 2)) / 6)
    with pytest.raises(InvalidModelError, match="sum to 1"):
        ce_gap(chicken(), np.ones((2, 2)))


@pytest.mark.parametrize("solve", [max_welfare_ce, max_welfare_cce, max_entropy_ce])
def test_equilibrium_lps_hold_every_players_constraints_at_mixed_scales(solve):
    """Player 1's payoffs are of size 1e-12, player 2's of size 1e9 (a 2×1 game). Action 0 strictly
    dominates for player 1 (1e-12 > 0), so the point mass on (0, 0) is the only CE and the only CCE,
    whatever player 2's payoffs. One common affine map of all payoffs left player 1's incentive
    rows at 1e-21, below HiGHS's resolution: the welfare LPs returned the point mass on (1, 0),
    which player 1 leaves for a gain of 1e-12, its whole payoff range."""
    U = np.array([[[1e-12], [0.0]], [[0.0], [1e9]]])
    out = solve(U)
    np.testing.assert_allclose(out.distribution, [[1.0], [0.0]], atol=1e-6)
    assert ce_gap(U, out.distribution) <= 1e-6 * 1e-12
    assert out.payoffs[0] == pytest.approx(1e-12, rel=1e-6)
