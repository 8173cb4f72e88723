"""A discount that rounds to 1 in the game's dtype is refused by name.

Games are computed in ``P``'s dtype: the stage payoffs ``r + γPV`` and the induced MDPs'
``(I − γP_π)``. For float32 ``P`` and ``γ = 1 − 2^-30`` (a valid Python float in [0, 1)) the
discount is 1 there: ``exploitability`` raised numpy's ``LinAlgError: Singular matrix`` on one
random game and returned 0 on another whose exact exploitability is 4.3e8.
"""

import numpy as np
import pytest

from rltheory.games.exploit import exploitability
from rltheory.games.markov import MarkovGame, ZeroSumMarkovGame
from rltheory.games.zoo import random_zero_sum_markov_game

G = 1.0 - 2.0**-30  # float32(G) == 1


def test_float32_game_with_a_discount_that_rounds_to_one_is_refused():
    assert float(np.float32(G)) == 1.0
    P, R = np.ones((1, 2, 2, 1), np.float32), np.zeros((1, 2, 2), np.float32)
    with pytest.raises(
        ValueError, match=r"gamma = 0\.99999999906\d* rounds to 1 in P's dtype float32"
    ):
        ZeroSumMarkovGame(P, R, G)
    with pytest.raises(ValueError, match=r"rounds to 1 in P's dtype float32"):
        MarkovGame(P, np.zeros((2, 1, 2, 2)), G)
    # the largest float32 below 1 is accepted, and float64 takes G
    assert ZeroSumMarkovGame(P, R, 1.0 - 2.0**-24).gamma == 1.0 - 2.0**-24
    assert ZeroSumMarkovGame(P.astype(np.float64), R, G).gamma == G
    assert MarkovGame(P, np.zeros((2, 1, 2, 2)), None).gamma is None


def test_the_float64_game_is_evaluated():
    """The game on which float32 returned exploitability 0: in float64 the two best responses
    are far apart: exact exploitability 430090836.05 (policy iteration in fractions on the same
    float64 model; the float64 result is 430090825.5, relative error 2.4e-8)."""
    rng = np.random.default_rng(39)
    S, A, B = (int(v) for v in rng.integers(1, 4, size=3))
    gm = random_zero_sum_markov_game(39, S, A, B, 0.5, branching=int(rng.integers(1, S + 1)))
    mu = rng.dirichlet(np.ones(A), size=S)
    nu = rng.dirichlet(np.ones(B), size=S)
    game = ZeroSumMarkovGame(np.asarray(gm.P), np.asarray(gm.R), G)
    gap = float(exploitability(game, mu, nu).gap)
    assert gap == pytest.approx(4.30091e8, rel=1e-5)
    with pytest.raises(ValueError, match="rounds to 1"):
        ZeroSumMarkovGame(np.asarray(gm.P, np.float32), np.asarray(gm.R, np.float32), G)
