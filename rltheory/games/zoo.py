r"""Classic games with known answers, and random generators.

Matrix games return the row player's payoff matrix ``A[m, n]`` (zero-sum) or a
normal-form payoff array ``U[2, m, n]`` (``U[0]`` row player, ``U[1]`` column
player) that :func:`~rltheory.games.nash_equilibria` takes as ``(U[0], U[1])`` and
the correlated-equilibrium LPs take as ``U``. Markov-game builders return validated
:class:`~rltheory.games.ZeroSumMarkovGame` / :class:`~rltheory.games.MarkovGame`.
Random generators take an explicit ``numpy.random.Generator`` or an int seed (as the MDP zoo;
never the global RNG): anything else is a ``TypeError``, a negative seed a ``ValueError``.

References
----------
Littman, M. L. (1994). Markov games as a framework for multi-agent reinforcement
learning. ICML, §5 and Figure 1 (the soccer game).
Osborne, M. J. & Rubinstein, A. (1994). *A Course in Game Theory*. MIT Press, ch. 2–3
(prisoner's dilemma, battle of the sexes, hawk–dove/chicken, matching pennies).
Aumann (1974), op. cit. (chicken and its correlated equilibria).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._validate import check_int, check_positive_int, check_real
from ..mdp.zoo import _generator
from .markov import MarkovGame, ZeroSumMarkovGame

__all__ = [
    "rock_paper_scissors",
    "matching_pennies",
    "prisoners_dilemma",
    "stag_hunt",
    "chicken",
    "battle_of_the_sexes",
    "random_matrix_games",
    "random_bimatrix_game",
    "littman_soccer",
    "random_zero_sum_markov_game",
    "cooperative_markov_game",
]


def rock_paper_scissors(weights: tuple[float, float, float] = (1.0, 1.0, 1.0)) -> np.ndarray:
    r"""(Weighted) rock-paper-scissors, rows/columns (rock, paper, scissors).

    ``weights = (a, b, c)``: rock beats scissors pays ``a``, paper beats rock pays ``b``,
    scissors beats paper pays ``c``; ``A = [[0, −b, a], [b, 0, −c], [−a, c, 0]]``.
    ``A`` is skew-symmetric, so the value is 0, and ``A x = 0`` for ``x ∝ (c, a, b)``:
    the unique equilibrium is ``x = y = (c, a, b)/(a + b + c)`` (uniform for the
    standard game).

    Examples
    --------
    >>> rock_paper_scissors().tolist()
    [[0.0, -1.0, 1.0], [1.0, 0.0, -1.0], [-1.0, 1.0, 0.0]]
    """
    w = _sequence(weights, "weights")
    if len(w) != 3:
        raise ValueError(
            f"weights must be three positive finite numbers (a, b, c); got {weights!r}"
        )
    a, b, c = (check_real(v, f"weights[{i}]", low=0.0, low_open=True) for i, v in enumerate(w))
    return np.array([[0.0, -b, a], [b, 0.0, -c], [-a, c, 0.0]])


def matching_pennies() -> np.ndarray:
    """Matching pennies ``[[1, −1], [−1, 1]]``: value 0, unique equilibrium uniform/uniform."""
    return np.array([[1.0, -1.0], [-1.0, 1.0]])


def prisoners_dilemma() -> np.ndarray:
    """Prisoner's dilemma ``U[2, 2, 2]`` (cooperate, defect): (C,C)=(3,3), (C,D)=(0,5), (D,C)=(5,0), (D,D)=(1,1).

    Defect strictly dominates; (D, D) is the unique equilibrium.
    """
    A = np.array([[3.0, 0.0], [5.0, 1.0]])
    return np.stack([A, A.T])


def stag_hunt() -> np.ndarray:
    """Stag hunt ``U[2, 2, 2]`` (stag, hare): (S,S)=(4,4), (S,H)=(0,3), (H,S)=(3,0), (H,H)=(3,3).

    Equilibria: (S, S), (H, H) and the mixed one with stag played w.p. 3/4
    (indifference ``4p = 3``).
    """
    A = np.array([[4.0, 0.0], [3.0, 3.0]])
    return np.stack([A, A.T])


def chicken() -> np.ndarray:
    """Chicken ``U[2, 2, 2]`` (swerve, straight): (Sw,Sw)=(6,6), (Sw,St)=(2,7), (St,Sw)=(7,2), (St,St)=(0,0).

    Nash: two pure asymmetric ones (welfare 9) and the mixed one, straight w.p. 1/3,
    paying 14/3 each. The welfare-maximal correlated equilibrium (1/2 on (Sw, Sw), 1/4
    on each asymmetric outcome) pays 5.25 each (Aumann 1974).
    """
    A = np.array([[6.0, 2.0], [7.0, 0.0]])
    return np.stack([A, A.T])


def battle_of_the_sexes() -> np.ndarray:
    """Battle of the sexes ``U[2, 2, 2]``: (0,0)=(2,1), (1,1)=(1,2), else (0,0).

    Equilibria: both pure coordinations and the mixed ``x = (2/3, 1/3)``, ``y = (1/3, 2/3)``.
    """
    return np.stack([np.array([[2.0, 0.0], [0.0, 1.0]]), np.array([[1.0, 0.0], [0.0, 2.0]])])


def random_matrix_games(
    rng: np.random.Generator | int, shape: tuple[int, ...], m: int, n: int
) -> np.ndarray:
    """``A[*shape, m, n]`` with i.i.d. standard normal entries (nondegenerate with probability 1)."""
    shape = _sequence(shape, "shape")
    for i, k in enumerate(shape):
        check_int(k, f"shape[{i}]", minimum=0)
    return _generator(rng).standard_normal(
        tuple(shape) + (check_positive_int(m, "m"), check_positive_int(n, "n"))
    )


def random_bimatrix_game(rng: np.random.Generator | int, m: int, n: int) -> np.ndarray:
    """``U[2, m, n]`` with i.i.d. standard normal payoffs (nondegenerate with probability 1)."""
    return _generator(rng).standard_normal(
        (2, check_positive_int(m, "m"), check_positive_int(n, "n"))
    )


def _sequence(value: Any, name: str) -> tuple[Any, ...]:
    """``value`` (a tuple, list or 1-d array) as a tuple; anything else is a ``TypeError`` naming ``name``.

    A bare number or a string was iterated (``'int' object is not iterable``, naming nothing) or
    read character by character.
    """
    if isinstance(value, np.ndarray) and value.ndim == 1:
        return tuple(value.tolist())
    if not isinstance(value, (tuple, list)):
        raise TypeError(
            f"{name} must be a tuple of numbers; got {value!r} ({type(value).__name__})"
        )
    return tuple(value)


#: Soccer action moves (row, col): N, S, E, W, stand.
_MOVES = ((-1, 0), (1, 0), (0, 1), (0, -1), (0, 0))


def littman_soccer(gamma: float = 0.9) -> ZeroSumMarkovGame:
    r"""Littman's (1994) soccer as a 760-state zero-sum Markov game (player A maximises).

    Layout (Littman 1994, §5, Fig. 1): a 4×5 grid (rows 0–3, columns 0–4); A starts at
    row 1, column 3 and B at row 2, column 1 (0-based); the ball goes to either player with probability 1/2. Goals occupy the two middle rows
    (1 and 2) beyond each end: A scores by carrying the ball west out of column 0, B by
    carrying it east out of column 4. Actions N, S, E, W, stand. Each step the two moves
    are executed in random order (probability 1/2 each); a move into the other player's
    square does not happen and the ball goes to the player who stood there; other moves
    off the grid (including into one's own goal) leave the player in place. A goal pays
    +1 (A) or −1 (B) and resets the board with random possession; γ = 0.9 as in the paper.

    States: ``(pos_A, pos_B, ball)`` with ``pos_A ≠ pos_B`` over the 20 cells and ``ball``
    ∈ {A, B}: 20·19·2 = 760. The model is symmetric: swapping the players' roles and
    mirroring the board maps the game to its negative.

    Returns
    -------
    ZeroSumMarkovGame
        ``mu`` is the reset distribution (the two starting states with probability 1/2).

    Examples
    --------
    >>> g = littman_soccer()
    >>> g.S, g.A, g.B, g.gamma
    (760, 5, 5, 0.9)
    """
    cells = [(r, c) for r in range(4) for c in range(5)]
    index: dict[tuple[int, int, int], int] = {}
    for pa in range(20):
        for pb in range(20):
            if pa != pb:
                for ball in (0, 1):
                    index[(pa, pb, ball)] = len(index)
    S = len(index)
    start_a, start_b = cells.index((1, 3)), cells.index((2, 1))
    reset = {index[(start_a, start_b, 0)]: 0.5, index[(start_a, start_b, 1)]: 0.5}
    P = np.zeros((S, 5, 5, S))
    R = np.zeros((S, 5, 5))

    def move(pos: list[int], ball: int, who: int, act: int) -> tuple[list[int], int, int]:
        """Apply one player's move; returns (positions, ball, goal) with goal +1/−1/0."""
        r, c = cells[pos[who]]
        dr, dc = _MOVES[act]
        nr, nc = r + dr, c + dc
        if ball == who and nr in (1, 2):
            if who == 0 and nc < 0:
                return pos, ball, 1
            if who == 1 and nc > 4:
                return pos, ball, -1
        if not (0 <= nr < 4 and 0 <= nc < 5):
            return pos, ball, 0
        tgt = cells.index((nr, nc))
        other = 1 - who
        if tgt == pos[other]:
            return pos, other, 0  # blocked: the stationary player gets the ball
        new = list(pos)
        new[who] = tgt
        return new, ball, 0

    for (pa, pb, ball), s in index.items():
        for a in range(5):
            for b in range(5):
                for first in (0, 1):
                    pos, bl = [pa, pb], ball
                    acts = (a, b)
                    goal = 0
                    for who in (first, 1 - first):
                        pos, bl, goal = move(pos, bl, who, acts[who])
                        if goal:
                            break
                    if goal:
                        R[s, a, b] += 0.5 * goal
                        for t, p in reset.items():
                            P[s, a, b, t] += 0.5 * p
                    else:
                        P[s, a, b, index[(pos[0], pos[1], bl)]] += 0.5
    mu = np.zeros(S)
    for t, p in reset.items():
        mu[t] = p
    return ZeroSumMarkovGame(P, R, gamma, mu)


def random_zero_sum_markov_game(
    rng: np.random.Generator | int,
    S: int,
    A: int,
    B: int,
    gamma: float,
    *,
    batch_shape: tuple[int, ...] = (),
    branching: int | None = None,
) -> ZeroSumMarkovGame:
    r"""Random zero-sum Markov game: ``r ~ U[−1, 1]``, ``P(·|s, a, b)`` Dirichlet(1) on ``branching`` random successors.

    ``branching=None`` uses all ``S`` successors (dense kernel); otherwise it must be a
    positive integer (``ValueError``), and ``branching ≥ S`` is the dense kernel too.
    ``S, A, B`` must be positive integers and ``batch_shape`` non-negative ones (``ValueError``
    naming the entry).

    Examples
    --------
    >>> import numpy as np
    >>> random_zero_sum_markov_game(np.random.default_rng(0), 4, 2, 3, 0.9, batch_shape=(5,))
    ZeroSumMarkovGame(S=4, A=2, B=3, gamma=0.9, batch=(5,))
    """
    if branching is not None and (
        isinstance(branching, bool) or not isinstance(branching, (int, np.integer)) or branching < 1
    ):
        raise ValueError(f"branching must be a positive integer or None; got {branching!r}")
    S, A, B = (check_positive_int(v, name) for v, name in ((S, "S"), (A, "A"), (B, "B")))
    batch = tuple(
        check_int(k, f"batch_shape[{i}]", minimum=0)
        for i, k in enumerate(_sequence(batch_shape, "batch_shape"))
    )
    lead = batch + (S, A, B)
    rng = _generator(rng)
    W = rng.exponential(size=lead + (S,))
    if branching is not None and branching < S:
        keep = np.argsort(rng.random(lead + (S,)), axis=-1) < branching
        W = np.where(keep, W, 0.0)
    P = W / W.sum(-1, keepdims=True)
    R = rng.uniform(-1.0, 1.0, size=lead)
    return ZeroSumMarkovGame(P, R, gamma)


def cooperative_markov_game(
    rng: np.random.Generator | int, S: int, actions: tuple[int, ...], gamma: float | None
) -> MarkovGame:
    r"""Identical-interest Markov game: every player receives the same ``r(s, a) ~ U[0, 1]``.

    Any optimal policy of the team MDP (joint actions) is a Nash equilibrium; the
    deterministic team-optimal joint policy is one in pure product form.

    ``S`` and each entry of ``actions`` (one per player) must be positive integers
    (``ValueError`` naming the entry otherwise).

    Examples
    --------
    >>> import numpy as np
    >>> cooperative_markov_game(np.random.default_rng(0), 3, (2, 2), 0.9)
    MarkovGame(n=2, S=3, actions=(2, 2), gamma=0.9)
    """
    S = check_positive_int(S, "S")
    sizes = tuple(
        check_positive_int(a, f"actions[{i}]") for i, a in enumerate(_sequence(actions, "actions"))
    )
    if not sizes:
        raise ValueError(
            f"actions must give one action count per player (at least one); got {tuple(actions)!r}"
        )
    lead = (S,) + sizes
    rng = _generator(rng)
    W = rng.exponential(size=lead + (S,))
    P = W / W.sum(-1, keepdims=True)
    r = rng.uniform(0.0, 1.0, size=lead)
    R: Any = np.broadcast_to(r, (len(sizes),) + lead).copy()
    return MarkovGame(P, R, gamma)
