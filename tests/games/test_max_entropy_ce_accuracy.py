"""max_entropy_ce to round-off: closed forms and the KKT conditions.

Clarabel alone stopped within about 1e-6 of the maximiser (one player, three actions, constant
payoffs: [0.33333285, 0.33333341, 0.33333374]); the answer is now refined by Newton's method on the
dual of the entropy program.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import linprog, nnls

from rltheory.games.correlated import ce_constraints, max_entropy_ce
from rltheory.games.zoo import battle_of_the_sexes, chicken

EPS = float(np.finfo(np.float64).eps)


@pytest.mark.parametrize("shape", [(1, 3), (2, 3, 3), (2, 1, 4), (3, 2, 3, 2)])
def test_constant_games_give_the_uniform_distribution(shape):
    # every distribution is a CE of a constant game (all incentive rows are 0), and the uniform
    # distribution is the unique entropy maximiser on the simplex
    mu = max_entropy_ce(np.full(shape, 2.5)).distribution
    K = mu.size
    np.testing.assert_allclose(mu, np.full(shape[1:], 1.0 / K), rtol=0, atol=4 * EPS / K)


def test_chicken_closed_form():
    # Chicken (Sw, St): (6,6), (2,7), (7,2), (0,0). By symmetry and uniqueness the maximiser is
    # [[p, q], [q, r]]. Player 0's CE rows: told Sw, 1·p − 2·q ≤ 0; told St, −1·q + 2·r ≤ 0.
    # Uniform violates the second (1/4 > 0), so r = q/2 is tight and p = 1 − 5q/2. Maximising
    # −p log p − 2q log q − r log r over q: 5/2 log p = 2 log q + 1/2 log(q/2), i.e.
    # p = 2^(−1/5) q, so q = 1/(5/2 + 2^(−1/5)); then p ≈ 0.87 q ≤ 2q, the first row is slack.
    q = 1.0 / (2.5 + 2.0**-0.2)
    ref = np.array([[2.0**-0.2 * q, q], [q, q / 2.0]])
    np.testing.assert_allclose(max_entropy_ce(chicken()).distribution, ref, rtol=0, atol=8 * EPS)


def test_battle_of_the_sexes_closed_form():
    # (0,0) = (2,1), (1,1) = (1,2), else (0,0); mu = [[p, q], [r, s]]. CE rows: row player told 0,
    # -2p + q <= 0; told 1, 2r - s <= 0; column player told 0, -p + 2r <= 0; told 1, q - 2s <= 0.
    # The game is symmetric under swapping players and actions, so p = s, and the maximiser makes
    # 2r = s = p tight (uniform violates both). With q = 1 - 5p/2, maximising
    # -2p log p - q log q - (p/2) log(p/2) gives 5/2 log q = 5/2 log p - 1/2 log 2, i.e.
    # q = 2^(-1/5) p, p = 1/(5/2 + 2^(-1/5)); then q <= 2p and q <= 2s: those rows are slack.
    p = 1.0 / (2.5 + 2.0**-0.2)
    ref = np.array([[p, 2.0**-0.2 * p], [p / 2.0, p]])
    np.testing.assert_allclose(
        max_entropy_ce(battle_of_the_sexes()).distribution, ref, rtol=0, atol=8 * EPS
    )


def test_matching_pennies_is_uniform_to_round_off():
    # the only CE of matching pennies is uniform
    A = np.array([[1.0, -1.0], [-1.0, 1.0]])
    mu = max_entropy_ce(np.stack([A, -A])).distribution
    np.testing.assert_allclose(mu, np.full((2, 2), 0.25), rtol=0, atol=4 * EPS)


@pytest.mark.parametrize("seed", range(12))
def test_kkt_conditions_hold_to_round_off(seed):
    """KKT of max H(μ) s.t. Gμ ≤ 0, Σμ = 1 (sufficient: concave objective, linear constraints):
    on the support, log μ = −Gᵀλ − log Z with λ ≥ 0 supported on tight rows. Checked with an
    independent non-negative least-squares fit of λ on the rows tight to 1e-12 (rows scaled to a
    largest entry of 1)."""
    rng = np.random.default_rng(seed)
    shape = [(2, 2, 2), (2, 3, 3), (3, 2, 3, 2), (2, 3, 2)][seed % 4]
    U = rng.standard_normal(shape)
    if seed % 2:
        U = np.round(2 * U)  # ties and degenerate rows
    mu = max_entropy_ce(U).distribution.reshape(-1)
    G = ce_constraints(U)
    G = G / np.where(np.abs(G).max(1) > 0, np.abs(G).max(1), 1.0)[:, None]
    slack = G @ mu
    assert np.all(slack <= 1e-13)
    sup = mu > 0
    logmu = np.log(mu[sup])
    tight = np.abs(slack) <= 1e-12
    k = int(sup.sum())
    M = np.concatenate([G[tight][:, sup].T, np.ones((k, 1)), -np.ones((k, 1))], axis=1)
    _, resid = nnls(M, -logmu)
    assert resid <= 1e-12 * (1.0 + np.abs(logmu).max())


def test_maximiser_is_positive_on_every_joint_action_some_ce_uses():
    """The entropy's slope is infinite at 0 and some CE is positive on the whole CE support, so
    the maximiser is positive there. In this 3x2x2x3 game (standard normal payoffs) Clarabel put 0
    on joint action 7, which a CE plays with probability up to 1.5e-3 (the maximiser gives it
    ~9e-14), and the active set read from its point left Newton far off: the answer was
    Clarabel's, with a 7e-10 CE gap and the KKT fit failing. Reference: per-cell LPs
    max_CE mu(a) (HiGHS)."""
    U = np.array(
        [
            [
                [
                    [-0.3794818087942652, -0.04285928117080147, 0.7446360221342052],
                    [-1.6513692340144548, 0.6585149175912306, -0.4889903008337966],
                ],
                [
                    [0.17597737200563132, 0.654705782910391, -0.8988472490008901],
                    [-0.8354224277529628, -0.14355330180477358, 0.6942977525150766],
                ],
            ],
            [
                [
                    [-0.5751674779670808, -1.444579455982179, -0.7283405497256993],
                    [0.3490196943973513, 1.1230100647821142, -0.5424818359725327],
                ],
                [
                    [-0.36144570832375145, -0.21739360918173614, -0.17390503219955591],
                    [-0.985369008075908, -0.4816560268344461, 0.17265298031281545],
                ],
            ],
            [
                [
                    [0.060179276689459285, -0.020851508057299337, -1.0461062225141562],
                    [-0.5911703131109142, -0.7544743014621154, 1.0033729832342815],
                ],
                [
                    [1.4044267071270387, 0.297193164888161, 1.5445647298826877],
                    [-0.3351368252121369, -0.330331335671894, -1.3330366561650944],
                ],
            ],
        ]
    )
    G = ce_constraints(U)
    K = G.shape[1]
    used = np.empty(K, dtype=bool)
    for a in range(K):
        res = linprog(
            -np.eye(K)[a],
            A_ub=G,
            b_ub=np.zeros(len(G)),
            A_eq=np.ones((1, K)),
            b_eq=[1.0],
            bounds=(0, None),
            method="highs",
        )
        assert res.status == 0
        used[a] = -res.fun > 1e-6
    assert used[7]
    ce = max_entropy_ce(U)
    mu = ce.distribution.reshape(-1)
    assert np.all(mu[used] > 0)
    assert ce.gap <= 1e-13
