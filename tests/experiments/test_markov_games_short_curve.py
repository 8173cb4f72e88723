"""markov-games names a discount whose Shapley VI error curve is too short to fit a rate.

Before: ``Config(gammas=(1e-5,))`` was accepted and ``Config(gammas=(1e-4,))`` at seed 0 ran the
reference solve and then failed in the rate fit with "a rate fit needs at least 3 points in the
window; got 2", naming neither the game nor γ: from ``V_0 = 0`` the error ``e_2 ≤ γ² ‖V*‖∞`` is
below the floor ``1e-9·‖V*‖∞`` whenever ``γ² < 1e-9``, and can be for somewhat larger γ.
"""

from __future__ import annotations

import pytest

from rltheory.experiments import markov_games as mg


@pytest.mark.parametrize("gamma", [1e-5, 3e-5])
def test_a_discount_below_the_square_root_of_the_floor_is_refused_by_the_config(gamma):
    with pytest.raises(
        ValueError,
        match=r"Config\.gammas\[1\] must be at least sqrt\(1e-09\) = 3\.16e-05 .*; got "
        + str(gamma).replace(".", r"\."),
    ):
        mg.Config(gammas=(0.5, gamma))


def test_the_square_root_of_the_floor_itself_is_accepted():
    g = 1e-9**0.5 * 1.0001
    assert mg.Config(gammas=(g,)).gammas == (g,)


def test_a_curve_that_reaches_the_floor_in_two_sweeps_names_the_game_and_gamma():
    # seed 0, S = 30, γ = 1e-4: e_0 = 0.764, e_1 = 1.09e-5, e_2 < 1e-9·‖V*‖∞
    with pytest.raises(
        ValueError,
        match=r"markov-games: Shapley VI on 'random S=30 γ=0\.0001' reached the floor "
        r"1e-09·‖V\*‖∞ after 2 sweep\(s\) .* use a larger γ \(got 0\.0001\)",
    ):
        mg.run(mg.Config(gammas=(1e-4,), npg_iterations=1), seed=0)
