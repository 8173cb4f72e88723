"""What ``ShapleyStep.gap`` certifies, checked exactly (fractions) on two adversarial sweeps.

``gap`` bounds ``|TV(s) − val Q̃(s)|`` for the computed stage games ``Q̃ = fl(r + γPV)``; against
the exact operator the rounding ``e(V)`` of ``Q̃`` must be added (shapley_value_iteration does).
The old Notes claimed ``gap ≤ 1e-9·max(1, range)``, false on the first game below (gap 4e-6).
Documentation fix: these tests pass on the old code too; they pin the documented statements.
"""

from fractions import Fraction

import numpy as np

from rltheory.games.markov import ZeroSumMarkovGame
from rltheory.games.shapley import _roundoff, shapley_operator


def test_gap_is_not_below_1e9_range_but_certifies_the_computed_stage_game():
    """A one-state 3 x 3 game 1e9 + O(1e-3): range 1e-3, so the old claim was gap <= 1e-9, but
    the solve's round-off allowance is ~(3 + 3 + 6)·u·1e9 = 2.7e-6. The exact value of the
    computed stage game (a pure saddle point: row 1, column 2, value 1e9 + 3e-4 + 2.7) lies
    within gap of TV."""
    offsets = np.array([[0.1, 0.5, 0.2], [0.4, 0.6, 0.3], [0.2, 0.9, 0.0]]) * 1e-3
    R = 1e9 + offsets[None]
    g = ZeroSumMarkovGame(np.ones((1, 3, 3, 1)), R, 0.9)
    V = np.array([3.0])
    st = shapley_operator(g, V)
    Q = np.asarray(g.stage_games(V))[0]
    Mq = [[Fraction(float(v)) for v in row] for row in Q]
    # saddle point of the computed game: an entry that is the least of its row and the largest
    # of its column has value = that entry
    saddle = [
        Mq[i][j]
        for i in range(3)
        for j in range(3)
        if Mq[i][j] == min(Mq[i]) and Mq[i][j] == max(Mq[k][j] for k in range(3))
    ]
    assert saddle, "the game was built with a pure saddle point"
    gap = float(np.asarray(st.gap)[0])
    assert gap > 1e-9  # the old Notes' bound 1e-9·max(1, range) does not hold
    assert abs(Fraction(float(np.asarray(st.TV)[0])) - saddle[0]) <= Fraction(gap)


def test_gap_excludes_the_rounding_of_the_stage_payoffs():
    """40 states, one action each, r = 0, |V| ~ 1e6 with (PV)(0) = 0 up to rounding: the stage
    game is 1 x 1, so TV(0) = Q̃(0) exactly and gap ~ 1e-25, while the exact (TV)(0) differs from
    Q̃(0) by the rounding of the 40-term sum (~5e-12). gap + e(V) covers it at every state."""
    rng = np.random.default_rng(1)
    S = 40
    P = rng.exponential(size=(S, 1, 1, S))
    P /= P.sum(-1, keepdims=True)
    V = rng.uniform(-1.0, 1.0, size=S) * 1e6
    V[-1] = -float(P[0, 0, 0, :-1] @ V[:-1]) / P[0, 0, 0, -1]
    g = ZeroSumMarkovGame(P, np.zeros((S, 1, 1)), 0.9)
    st = shapley_operator(g, V)
    TV, gap = np.asarray(st.TV), np.asarray(st.gap)
    Qt = np.asarray(g.stage_games(V))[:, 0, 0]
    e = float(np.asarray(_roundoff(g).sweep(V)))
    Vf = [Fraction(float(v)) for v in V]
    gamma = Fraction(0.9)
    excess = []
    for s in range(S):
        row = [Fraction(float(p)) for p in P[s, 0, 0]]
        sigma = sum(row)  # the model certified is the stochastic P / sigma
        exact = gamma * sum(p * v for p, v in zip(row, Vf, strict=True)) / sigma
        assert Fraction(float(TV[s])) == Fraction(float(Qt[s]))  # 1 x 1: TV is the computed Q
        err = abs(Fraction(float(TV[s])) - exact)
        assert err <= Fraction(float(gap[s])) + Fraction(e)
        excess.append(err - Fraction(float(gap[s])))
    assert max(excess) > 0  # at state 0 the rounding of Q exceeds the stage gap alone
