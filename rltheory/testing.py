"""Public hypothesis strategies for property-based tests of rltheory and its users.

Strategies draw the *structure* of a model (sizes, discount, which rows are
absorbing or deterministic, whether rewards tie) through hypothesis, and the
numerical entries from a numpy Generator seeded by a hypothesis-drawn integer,
so examples are reproducible, shrink in size, and cover the corner cases that
break solvers: ``S = 1``, ``A = 1``, absorbing states, exact ties, ``γ = 0``.

Examples
--------
>>> from hypothesis import given
>>> from rltheory.testing import finite_mdps
>>> @given(finite_mdps(max_states=4))
... def test_rows(mdp):
...     assert mdp.P.shape[-1] == mdp.S
"""

from __future__ import annotations

import itertools
from fractions import Fraction
from typing import Any

import numpy as np
from hypothesis import strategies as st

from .mdp.model import FiniteMDP

__all__ = [
    "discounts",
    "transition_kernels",
    "finite_mdps",
    "average_reward_mdps",
    "policies",
    "deterministic_policies",
    "matrix_games",
    "zero_sum_markov_games",
    "finite_horizon_mdps",
    "constrained_mdps",
    "networked_mdps",
    "exact_solve",
    "dyadic_model",
    "exact_policy_values",
    "exact_optimal_values",
]


def discounts(min_value: float = 0.0, max_value: float = 0.99) -> st.SearchStrategy[float]:
    """Discount factors in ``[min_value, max_value]``, always able to draw the endpoints."""
    return st.one_of(
        st.sampled_from(sorted({min_value, max_value, 0.5 if min_value <= 0.5 <= max_value else min_value})),
        st.floats(min_value, max_value, allow_nan=False),
    )


def _kernel(rng: np.random.Generator, lead: tuple[int, ...], S: int, frac_det: float, sparse: bool) -> np.ndarray:
    P = rng.random(lead + (S,))
    if sparse and S > 1:  # zero out some successors but keep one per row
        mask = rng.random(P.shape) < 0.5
        keep = rng.integers(0, S, size=lead)
        np.put_along_axis(mask, keep[..., None], False, axis=-1)
        P[mask] = 0.0
    P /= P.sum(-1, keepdims=True)
    det = rng.random(lead) < frac_det  # deterministic rows, incl. self-loops (absorbing)
    if det.any():
        tgt = rng.integers(0, S, size=lead)
        onehot = np.eye(S)[tgt]
        P = np.where(det[..., None], onehot, P)
    return P


@st.composite
def transition_kernels(draw: Any, S: int, A: int, batch_shape: tuple[int, ...] = ()) -> np.ndarray:
    """Row-stochastic ``P[..., s, a, s']`` with some deterministic/absorbing rows and sparsity."""
    seed = draw(st.integers(0, 2**32 - 1))
    frac_det = draw(st.sampled_from([0.0, 0.0, 0.3, 1.0]))
    sparse = draw(st.booleans())
    rng = np.random.default_rng(seed)
    P = _kernel(rng, tuple(batch_shape) + (S, A), S, frac_det, sparse)
    if draw(st.booleans()) and S > 1:  # make state 0 absorbing under every action
        P[..., 0, :, :] = 0.0
        P[..., 0, :, 0] = 1.0
    return P


@st.composite
def finite_mdps(
    draw: Any,
    *,
    min_states: int = 1,
    max_states: int = 6,
    min_actions: int = 1,
    max_actions: int = 4,
    gamma: st.SearchStrategy[float] | None = None,
    batch_shape: tuple[int, ...] = (),
    with_mu: bool | None = None,
) -> FiniteMDP:
    """Discounted :class:`FiniteMDP` with ``S ∈ [min_states, max_states]``, ``A ∈ [min_actions, max_actions]``.

    Rewards are either generic floats in [0, 1] or drawn from {0, 1} (many exact
    ties between actions). ``gamma`` defaults to :func:`discounts` (includes 0).
    """
    S = draw(st.integers(min_states, max_states))
    A = draw(st.integers(min_actions, max_actions))
    g = draw(gamma if gamma is not None else discounts())
    P = draw(transition_kernels(S, A, batch_shape))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    ties = draw(st.booleans())
    R = rng.integers(0, 2, size=tuple(batch_shape) + (S, A)).astype(float) if ties else rng.random(tuple(batch_shape) + (S, A))
    mu = None
    if with_mu if with_mu is not None else draw(st.booleans()):
        mu = rng.random(S) + (rng.random(S) < 0.5)  # some states may get small mass
        mu /= mu.sum()
    return FiniteMDP(P, R, g, mu)


@st.composite
def average_reward_mdps(draw: Any, *, unichain: bool = True, **kwargs: Any) -> FiniteMDP:
    """Average-reward models (``gamma=None``); with ``unichain=True`` every kernel row is
    mixed with a small uniform component so every policy's chain is irreducible."""
    mdp = draw(finite_mdps(gamma=st.just(0.5), **kwargs))
    P = np.asarray(mdp.P)
    if unichain:
        eps = draw(st.sampled_from([0.05, 0.2]))
        P = (1 - eps) * P + eps / mdp.S
    return FiniteMDP(P, mdp.R, None, mdp.mu)


@st.composite
def policies(draw: Any, S: int, A: int, batch_shape: tuple[int, ...] = (), deterministic_rows: bool = True) -> np.ndarray:
    """Stochastic policies ``π[..., s, a]``; some rows may be deterministic or have zeros."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    frac = draw(st.sampled_from([0.0, 0.5, 1.0])) if deterministic_rows else 0.0
    return _kernel(rng, tuple(batch_shape) + (S,), A, frac, draw(st.booleans()))


@st.composite
def deterministic_policies(draw: Any, S: int, A: int, batch_shape: tuple[int, ...] = ()) -> np.ndarray:
    """Deterministic policies as integer arrays ``π[..., s] ∈ [0, A)``."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    return rng.integers(0, A, size=tuple(batch_shape) + (S,))


@st.composite
def matrix_games(
    draw: Any, *, min_actions: int = 1, max_actions: int = 5, batch_shape: tuple[int, ...] = (), ties: bool = True
) -> np.ndarray:
    """Zero-sum payoff matrices ``A[..., m, n]``, including ``1×n``, ``m×1``, integer payoffs with
    ties, duplicated (dominated) rows/columns and constant games when ``ties=True``."""
    m = draw(st.integers(min_actions, max_actions))
    n = draw(st.integers(min_actions, max_actions))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    kind = draw(st.sampled_from(["normal", "normal", "integer", "duplicate", "constant"] if ties else ["normal"]))
    shape = tuple(batch_shape) + (m, n)
    scale = draw(st.sampled_from([1.0, 1e-3, 1e3]))
    if kind == "integer":
        A = rng.integers(-2, 3, size=shape).astype(float)
    elif kind == "constant":
        A = np.full(shape, float(rng.integers(-3, 4)))
    else:
        A = rng.standard_normal(shape)
        if kind == "duplicate" and m > 1:
            A[..., -1, :] = A[..., 0, :] - rng.random() * (rng.random() < 0.5)  # equal or dominated row
    return A * scale


@st.composite
def zero_sum_markov_games(
    draw: Any, *, max_states: int = 5, max_actions: int = 3, gamma: Any = None, batch_shape: tuple[int, ...] = ()
) -> Any:
    """Random :class:`~rltheory.games.ZeroSumMarkovGame` with ``S, A, B ≥ 1`` (absorbing and
    deterministic rows via :func:`transition_kernels`' generator), rewards in ``[−1, 1]``."""
    from .games.markov import ZeroSumMarkovGame  # noqa: PLC0415

    S = draw(st.integers(1, max_states))
    A = draw(st.integers(1, max_actions))
    B = draw(st.integers(1, max_actions))
    g = draw(gamma if gamma is not None else discounts(0.0, 0.95))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    P = _kernel(rng, tuple(batch_shape) + (S, A, B), S, draw(st.sampled_from([0.0, 0.3, 1.0])), draw(st.booleans()))
    R = rng.uniform(-1.0, 1.0, size=tuple(batch_shape) + (S, A, B))
    if draw(st.booleans()):
        R = np.round(R)  # integer rewards: ties in the stage games
    return ZeroSumMarkovGame(P, R, g)


@st.composite
def finite_horizon_mdps(
    draw: Any, *, max_horizon: int = 4, max_states: int = 4, max_actions: int = 3, with_mu: bool | None = None
) -> Any:
    """Time-dependent :class:`~rltheory.mdp.FiniteHorizonMDP` with rewards in ``[0, 1]``
    (generic or {0, 1} with ties), ``H, S, A ≥ 1`` and the kernels of :func:`transition_kernels`."""
    from .mdp.model import FiniteHorizonMDP  # noqa: PLC0415

    H = draw(st.integers(1, max_horizon))
    S = draw(st.integers(1, max_states))
    A = draw(st.integers(1, max_actions))
    P = draw(transition_kernels(S, A, batch_shape=(H,)))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    R = rng.integers(0, 2, size=(H, S, A)).astype(float) if draw(st.booleans()) else rng.random((H, S, A))
    mu = None
    if with_mu if with_mu is not None else draw(st.booleans()):
        mu = rng.random(S) + 0.1
        mu /= mu.sum()
    return FiniteHorizonMDP(P, R, mu)


@st.composite
def constrained_mdps(
    draw: Any, *, min_states: int = 2, max_states: int = 5, max_actions: int = 3, max_constraints: int = 2,
    gamma: st.SearchStrategy[float] | None = None, slater: bool = True,
) -> Any:
    """Discounted :class:`~rltheory.mdp.constrained.ConstrainedMDP` with rewards and costs in ``[0, 1]``.

    With ``slater=True`` each threshold ``b_i`` lies strictly between the smallest
    and largest achievable ``V_{c_i}`` (a fraction in [0.2, 0.8] of the way), and
    the uniform-slack problem of the constraints together is strictly feasible
    (the fractions are chosen so the min-cost-of-the-sum policy is strictly inside).
    """
    from .mdp.constrained import ConstrainedMDP  # noqa: PLC0415
    from .mdp.discounted import policy_iteration  # noqa: PLC0415

    S = draw(st.integers(min_states, max_states))
    A = draw(st.integers(2, max_actions))
    m = draw(st.integers(1, max_constraints))
    g = draw(gamma if gamma is not None else st.sampled_from([0.5, 0.7, 0.9]))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    P = rng.dirichlet(np.full(S, draw(st.sampled_from([0.3, 1.0]))), size=(S, A))
    R = rng.random((S, A))
    C = rng.random((m, S, A))
    mdp = FiniteMDP(P, R, g)
    mu = np.full(S, 1.0 / S)
    frac = draw(st.floats(0.2, 0.8)) if slater else draw(st.floats(0.0, 1.0))
    # thresholds relative to the policy minimising the summed cost: strictly feasible for frac > 0
    pi_min = policy_iteration(mdp.replace(R=-C.sum(0))).policy
    Pm = P[np.arange(S), pi_min]
    M = np.linalg.inv(np.eye(S) - g * Pm)
    b = np.empty(m)
    for i in range(m):
        lo = mu @ M @ C[i][np.arange(S), pi_min]
        hi = float(mu @ policy_iteration(mdp.replace(R=C[i])).V)
        b[i] = lo + frac * max(hi - lo, 0.0) + (0.05 if slater else 0.0)
    return ConstrainedMDP(mdp, C, b)


@st.composite
def networked_mdps(
    draw: Any, *, min_agents: int = 2, max_agents: int = 4, max_local_states: int = 2, max_local_actions: int = 2,
    policy_radius: int | None = None, gamma: st.SearchStrategy[float] | None = None,
) -> Any:
    """:class:`~rltheory.algorithms.networked.NetworkedMDP` on a random connected graph
    (path, cycle, star or a random tree) with Dirichlet local kernels and rewards in [0, 1]."""
    import networkx as nx  # noqa: PLC0415

    from .algorithms.networked import NetworkedMDP, neighborhoods  # noqa: PLC0415

    n = draw(st.integers(min_agents, max_agents))
    kind = draw(st.sampled_from(["path", "cycle", "star", "tree"]))
    seed = draw(st.integers(0, 2**32 - 1))
    if kind == "path" or n < 3:
        G = nx.path_graph(n)
    elif kind == "cycle":
        G = nx.cycle_graph(n)
    elif kind == "star":
        G = nx.star_graph(n - 1)
    else:
        G = nx.random_labeled_tree(n, seed=seed % (2**31)) if hasattr(nx, "random_labeled_tree") else nx.path_graph(n)
    Sl = draw(st.integers(2, max_local_states))
    Al = draw(st.integers(1, max_local_actions))
    rng = np.random.default_rng(seed)
    nb = neighborhoods(G, 1)
    Ps = tuple(rng.dirichlet(np.ones(Sl), size=(Sl,) * len(nb[i]) + (Al,)) for i in range(n))
    R = rng.random((n, Sl, Al))
    r = draw(st.sampled_from([0, 1])) if policy_radius is None else policy_radius
    g = draw(gamma if gamma is not None else st.sampled_from([0.0, 0.5, 0.9]))
    return NetworkedMDP(G, Ps, R, g, None, r)


# -- exact references (rational arithmetic) -------------------------------------------------------


def dyadic_model(
    seed: int, S: int = 4, A: int = 2, *, sticky: bool = False, scale: float = 1.0
) -> tuple[np.ndarray, np.ndarray]:
    """``(P, R)`` with transition entries ``k/64``: the stored rows sum to 1 exactly, so exact
    rational references (:func:`exact_policy_values`) are the values of the stored model.

    ``sticky``: ``P(s, s) ≥ 63/64`` (slow mixing; some seeds split into closed classes).
    ``R = scale·N(0, 1)``. Seeded by ``numpy.random.default_rng(seed)``, the same draws for the
    same arguments. Used by the near-``γ = 1`` accuracy tests of evaluation and advantages.
    """
    rng = np.random.default_rng(seed)
    if sticky:
        cnt = np.zeros((S, A, S))
        for s in range(S):
            for a in range(A):
                cnt[s, a, s] = 63
                cnt[s, a, rng.integers(S)] += 1
    else:
        cnt = rng.multinomial(64, np.full(S, 1.0 / S), size=(S, A)).astype(float)
    return cnt / 64.0, scale * rng.standard_normal((S, A))


def exact_solve(M: list[list[Fraction]], b: list[Fraction]) -> list[Fraction]:
    """``x`` with ``M x = b`` in exact rational arithmetic (Gauss–Jordan with row pivoting on
    nonzeros): a reference for checking floating-point certificates on tiny instances.

    Raises ``StopIteration`` for a singular ``M``.

    Examples
    --------
    >>> from fractions import Fraction as F
    >>> exact_solve([[F(2), F(1)], [F(1), F(3)]], [F(3), F(5)])
    [Fraction(4, 5), Fraction(7, 5)]
    """
    n = len(b)
    M = [list(row) + [bi] for row, bi in zip(M, b, strict=True)]
    for c in range(n):
        p = next(i for i in range(c, n) if M[i][c] != 0)
        M[c], M[p] = M[p], M[c]
        for i in range(n):
            if i != c and M[i][c] != 0:
                f = M[i][c] / M[c][c]
                M[i] = [x - f * y for x, y in zip(M[i], M[c], strict=True)]
    return [M[i][n] / M[i][i] for i in range(n)]


def exact_policy_values(P: Any, R: Any, gamma: float, pi: Any) -> list[Fraction]:
    """``V^π`` in exact rational arithmetic for the model every certificate of rltheory is about:
    the stored ``P`` (``(S, A, S)``) with its rows normalised, and ``π`` (``(S, A)``) with its rows
    normalised; ``R`` is ``(S, A)``. Every float is read exactly (``Fraction(float(x))``).

    Examples
    --------
    >>> import numpy as np
    >>> exact_policy_values(np.ones((1, 2, 1)), np.array([[0.0, 1.0]]), 0.5, np.array([[0.5, 0.5]]))
    [Fraction(1, 1)]
    """
    P, R, pi = np.asarray(P, dtype=np.float64), np.asarray(R, dtype=np.float64), np.asarray(pi, dtype=np.float64)
    S, A = R.shape
    G = Fraction(float(gamma))
    M = [[Fraction(int(s == t)) for t in range(S)] for s in range(S)]
    b = [Fraction(0)] * S
    for s in range(S):
        w = [Fraction(float(x)) for x in pi[s]]
        w = [x / sum(w) for x in w]
        for a in range(A):
            row = [Fraction(float(x)) for x in P[s, a]]
            sig = sum(row)
            b[s] += w[a] * Fraction(float(R[s, a]))
            for t in range(S):
                M[s][t] -= G * w[a] * row[t] / sig
    return exact_solve(M, b)


def exact_optimal_values(P: Any, R: Any, gamma: float) -> list[Fraction]:
    """``V*`` in exact rational arithmetic: the componentwise best of the ``A^S`` deterministic
    policies' :func:`exact_policy_values` (an optimal deterministic policy exists and dominates
    every policy at every state, Puterman 1994, Thm 6.2.10). For tiny models only.

    Examples
    --------
    >>> import numpy as np
    >>> exact_optimal_values(np.ones((1, 2, 1)), np.array([[0.0, 1.0]]), 0.5)
    [Fraction(2, 1)]
    """
    R = np.asarray(R, dtype=np.float64)
    S, A = R.shape
    best: list[Fraction] | None = None
    for actions in itertools.product(range(A), repeat=S):
        pi = np.zeros((S, A))
        pi[np.arange(S), actions] = 1.0
        v = exact_policy_values(P, R, gamma, pi)
        best = v if best is None else [max(x, y) for x, y in zip(best, v, strict=True)]
    assert best is not None  # (A^S >= 1 policies)
    return best
