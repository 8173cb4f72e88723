r"""Finite-horizon equilibria of general-sum Markov games by backward induction.

For an undiscounted horizon-``H`` game (a :class:`MarkovGame` with ``gamma=None``
played for steps ``h = 0..H−1``), backward induction over stage games

    ``Q_{i,h}(s, a) = R_i(s, a) + Σ_s' P(s'|s, a) V_{i,h+1}(s')``,  ``V_{i,H} = 0``,

with an equilibrium ``π_h(·|s)`` of the stage game ``(Q_{1,h}(s), ..., Q_{n,h}(s))`` and
``V_{i,h}(s) = E_{a ~ π_h(s)} Q_{i,h}(s, a)`` yields a Markov perfect equilibrium of the
same kind: a stage-wise Nash equilibrium gives a Markov Nash equilibrium (Nash value
iteration), stage-wise CE / CCE give Markov CE / CCE (CE/CCE value iteration). This is
the planning oracle of Nash-VI / CE-VI / CCE-VI (Liu, Wang & Jin 2021, Alg. 1 with the
bonus set to 0; Song, Mei & Bai 2022, §3). Host-only: stage games are solved by
Lemke–Howson (two players, one equilibrium per stage game) or by the HiGHS CE/CCE LP.

The certificate is the finite-horizon NashConv with coarse deviations
(:func:`finite_horizon_nash_conv`): player ``i``'s best response to the others is the
backward induction of its induced finite-horizon MDP
(:func:`rltheory.mdp.backward_induction`).

References
----------
Liu, Q., Wang, T. & Jin, C. (2021). A sharp analysis of model-based reinforcement learning
with self-play. ICML, Algorithm 1 (Nash-VI) and §5 (CE/CCE variants).
Song, Z., Mei, S. & Bai, Y. (2022). When can we learn general-sum Markov games with a large
number of players sample-efficiently? ICLR, §3.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .._validate import PROB_ATOL, _where, check_finite, check_probability
from ..backend import as_float, require_host
from ..errors import InvalidModelError
from ..mdp.horizon import backward_induction
from ..mdp.model import FiniteHorizonMDP
from .bimatrix import _nash_conv, lemke_howson
from .correlated import max_welfare_cce, max_welfare_ce
from .markov import MarkovGame

__all__ = [
    "FiniteHorizonEquilibrium",
    "nash_value_iteration",
    "correlated_value_iteration",
    "finite_horizon_nash_conv",
    "finite_horizon_values",
]


@dataclass(frozen=True, eq=False)
class FiniteHorizonEquilibrium:
    """Result of a finite-horizon equilibrium value iteration.

    Attributes
    ----------
    policy : numpy array, shape (H, S, A_1, ..., A_n)
        Joint (product for Nash VI, correlated for CE/CCE VI) Markov policy ``π_h(a|s)``.
    V : numpy array, shape (n, H + 1, S)
        ``V[i, h, s]``: player ``i``'s value from step ``h`` (``V[:, H] = 0``).
    stage_gap : float
        Largest equilibrium violation over the ``H·S`` stage games (NashConv or CE/CCE gap of
        each computed stage game, with its round-off allowance: never below the exact one).
    """

    policy: np.ndarray
    V: np.ndarray
    stage_gap: float


def _undiscounted(game: Any, H: Any, name: str) -> MarkovGame:
    if not isinstance(game, MarkovGame):
        raise TypeError(f"{name} expects a MarkovGame; got {type(game).__name__}")
    if game.gamma is not None:
        raise ValueError(
            f"{name} uses the undiscounted H-step return; build the MarkovGame with gamma=None (got gamma={game.gamma})"
        )
    if isinstance(H, bool) or not isinstance(H, (int, np.integer)) or H < 1:
        raise ValueError(f"horizon H must be a positive integer; got {H!r}")
    require_host(game.P, name)
    return game


def _backup(game: MarkovGame, V_next: np.ndarray, h: int, name: str) -> np.ndarray:
    """``Q[i, s, a] = R_i(s, a) + Σ_s' P(s'|s, a) V_next[i, s']`` at step ``h``.

    A ``Q`` beyond the float range (the values of ``H − h`` steps of rewards can reach
    ``(H − h)·max|R|``) is a ``ValueError`` locating ``(h, i, s, a1, ...)``: the stage solvers would
    report their own arrays (``A``, ``U``) as non-finite, and values would silently be ``inf``.
    """
    P, R = np.asarray(game.P), np.asarray(game.R)
    with np.errstate(over="ignore", invalid="ignore"):
        Q = R + np.tensordot(V_next, P, axes=([1], [P.ndim - 1])).reshape(R.shape) * 1.0
    if not np.all(np.isfinite(Q)):
        idx = tuple(int(k) for k in np.argwhere(~np.isfinite(Q))[0])
        names = ("i", "s") + tuple(f"a{k + 1}" for k in range(game.n_players))
        where = ", ".join(f"{n}={k}" for n, k in zip(names, idx, strict=True))
        raise ValueError(
            f"{name}: the stage payoffs Q_{{i,h}}(s, a) = R_i(s, a) + sum_s' P V_{{i,h+1}}(s') overflow at "
            f"h={h}: Q({where}) = {Q[idx]} (max|R| = {float(np.max(np.abs(R))):.4g}); the values exceed the "
            f"float range. Equilibria are invariant under R -> cR (c > 0) and values scale with c: solve "
            f"with R divided by a power of 2 and scale V back"
        )
    return Q


def _values(Q: np.ndarray, pi: np.ndarray) -> np.ndarray:
    n, S = Q.shape[0], Q.shape[1]
    return (Q.reshape(n, S, -1) * pi.reshape(1, S, -1)).sum(-1)


def nash_value_iteration(game: MarkovGame, H: int) -> FiniteHorizonEquilibrium:
    r"""Markov Nash equilibrium of a two-player finite-horizon general-sum game.

    Backward induction with one Lemke–Howson equilibrium per stage game
    ``(Q_{1,h}(s), Q_{2,h}(s))`` (see the module docstring). Exact: the resulting product
    policy has finite-horizon NashConv 0 up to round-off.

    Raises
    ------
    ValueError
        Not two players, ``gamma`` not None, or a bad ``H``.

    Examples
    --------
    One-state repeated prisoner's dilemma: defect at every step, values ``H·1``.

    >>> import numpy as np
    >>> from rltheory.games.zoo import prisoners_dilemma
    >>> g = MarkovGame(np.ones((1, 2, 2, 1)), prisoners_dilemma()[:, None], None)
    >>> eq = nash_value_iteration(g, 3)
    >>> eq.V[:, 0, 0].tolist(), eq.policy[0, 0].tolist()
    ([3.0, 3.0], [[0.0, 0.0], [0.0, 1.0]])
    """
    game = _undiscounted(game, H, "nash_value_iteration")
    if game.n_players != 2:
        raise ValueError(
            f"nash_value_iteration handles two players; got n = {game.n_players} (use correlated_value_iteration)"
        )
    S, (A1, A2) = game.S, game.actions
    V = np.zeros((2, H + 1, S))
    pol = np.zeros((H, S, A1, A2))
    worst = 0.0
    for h in range(H - 1, -1, -1):
        Q = _backup(game, V[:, h + 1], h, "nash_value_iteration")
        for s in range(S):
            x, y = lemke_howson(Q[0, s], Q[1, s])
            pol[h, s] = np.outer(x, y)
            worst = max(worst, _nash_conv(Q[0, s], Q[1, s], x, y))
        V[:, h] = _values(Q, pol[h])
    return FiniteHorizonEquilibrium(pol, V, worst)


def correlated_value_iteration(
    game: MarkovGame, H: int, *, coarse: bool = False
) -> FiniteHorizonEquilibrium:
    r"""Markov CE (``coarse=False``) or CCE (``coarse=True``) of an n-player finite-horizon game.

    Backward induction with the welfare-maximising CE / CCE of every stage game
    (:func:`~rltheory.games.max_welfare_ce` / :func:`~rltheory.games.max_welfare_cce`, HiGHS).
    The joint policy has finite-horizon coarse NashConv 0 up to LP tolerance (CE ⊆ CCE).

    Raises
    ------
    ValueError
        ``gamma`` not None, a bad ``H``, or ``coarse`` not ``True``/``False``.

    Examples
    --------
    One-state repeated chicken: the stage CE pays 5.25 to each player per step.

    >>> import numpy as np
    >>> from rltheory.games.zoo import chicken
    >>> g = MarkovGame(np.ones((1, 2, 2, 1)), chicken()[:, None], None)
    >>> np.round(correlated_value_iteration(g, 2).V[:, 0, 0], 9).tolist()
    [10.5, 10.5]
    """
    game = _undiscounted(game, H, "correlated_value_iteration")
    if not isinstance(coarse, (bool, np.bool_)):  # "no" is truthy: it would pick the CCE silently
        raise ValueError(f"coarse must be True or False; got {coarse!r}")
    solve = max_welfare_cce if coarse else max_welfare_ce
    n, S = game.n_players, game.S
    V = np.zeros((n, H + 1, S))
    pol = np.zeros((H, S) + game.actions)
    worst = 0.0
    for h in range(H - 1, -1, -1):
        Q = _backup(game, V[:, h + 1], h, "correlated_value_iteration")
        for s in range(S):
            ce = solve(Q[:, s])
            pol[h, s] = ce.distribution
            worst = max(worst, ce.gap)
        V[:, h] = _values(Q, pol[h])
    return FiniteHorizonEquilibrium(pol, V, worst)


def _markov_policy(game: MarkovGame, policy: Any, name: str) -> np.ndarray:
    """``policy[H, S, A_1, ..., A_n]`` validated: real, finite, each ``policy[h, s]`` a distribution.

    Raises ``TypeError`` for text or complex entries, ``ValueError`` for a wrong shape and
    :class:`~rltheory.errors.InvalidModelError` (a ``ValueError``) naming ``(h, s, a1, ...)`` and
    the value for a NaN or negative entry, or ``(h, s)`` and the sum for a row off the simplex.
    A float32 policy is judged at float32's ``16·eps``; accepted rows are divided by their sums
    (within tolerance of 1), so the induced MDPs, checked row by row, are stochastic.
    """
    game = _undiscounted(game, 1, name)  # the type and gamma; H is checked below
    src = np.asarray(policy) if isinstance(policy, (list, tuple)) else policy
    atol = PROB_ATOL  # a float32 policy was rounded in float32: judged at its 16·eps
    if getattr(getattr(src, "dtype", None), "kind", None) == "f":
        atol = max(atol, 16.0 * float(np.finfo(src.dtype).eps))
    pol = np.asarray(as_float(src, np, field="policy"), dtype=np.float64)
    want = (game.S,) + game.actions
    if pol.ndim != 1 + len(want) or pol.shape[1:] != want:  # a 0-d policy included (no IndexError)
        raise ValueError(
            f"policy must have shape (H, S, A_1, ..., A_n) = (H, {', '.join(map(str, want))}); got {pol.shape}"
        )
    _undiscounted(game, pol.shape[0], name)
    names = ("h", "s") + tuple(f"a{k + 1}" for k in range(game.n_players))
    check_finite(pol, "policy", names)
    if np.any(pol < -atol):
        idx = tuple(int(i) for i in np.unravel_index(np.argmin(pol), pol.shape))
        raise InvalidModelError(
            f"policy must be non-negative; most negative entry policy{_where(idx, names)} = {pol[idx]:.6g}"
        )
    rows = pol.reshape(pol.shape[:2] + (-1,))
    check_probability(rows, "policy", ("h", "s", "a"), "policy[h, s, ...]", atol=atol)
    # accepted rows are divided by their sums: a row of K entries passes within atol·(1 + √K) of 1
    # (and a float32 one at float32's tolerance), but the induced MDPs are judged at atol·(1 + √S)
    return (rows / rows.sum(axis=-1, keepdims=True)).reshape(pol.shape)


def finite_horizon_values(game: MarkovGame, policy: Any) -> np.ndarray:
    r"""``V[i, h, s]`` of a joint Markov policy ``policy[H, S, A_1, ..., A_n]`` (undiscounted).

    Raises
    ------
    TypeError
        ``game`` not a :class:`MarkovGame`, or ``policy`` holding text or complex numbers.
    ValueError
        ``gamma`` not None, a wrong shape, or a ``policy[h, s]`` that is not a distribution over
        joint actions (NaN or negative entry located as ``(h, s, a1, ...)``, a bad sum as ``(h, s)``).
    """
    pol = _markov_policy(game, policy, "finite_horizon_values")
    H = pol.shape[0]
    V = np.zeros((game.n_players, H + 1, game.S))
    for h in range(H - 1, -1, -1):
        V[:, h] = _values(_backup(game, V[:, h + 1], h, "finite_horizon_values"), pol[h])
    return V


def finite_horizon_nash_conv(game: MarkovGame, policy: Any) -> float:
    r"""``Σ_i E_μ[max_{π_i'} V_{i,0}^{π_i', π_{−i}} − V_{i,0}^π]`` for a joint Markov policy.

    Deviations are coarse (player ``i`` ignores its recommendation), so this is NashConv
    for a product policy and the CCE gap for a correlated one; each player's term is
    clipped at 0 (a correlated policy can pay more than every deviation). Best responses are computed
    by :func:`rltheory.mdp.backward_induction` on player ``i``'s induced
    :class:`~rltheory.mdp.FiniteHorizonMDP`.
    """
    pol = _markov_policy(game, policy, "finite_horizon_nash_conv")
    V = finite_horizon_values(game, pol)
    H = pol.shape[0]
    P, R = np.asarray(game.P), np.asarray(game.R)
    n = game.n_players
    rho = np.asarray(game.initial_distribution())
    total = 0.0
    for i in range(n):
        axes = tuple(1 + k for k in range(n) if k != i)
        Ph, Rh = [], []
        for h in range(H):
            others = pol[h].sum(axis=1 + i, keepdims=True)
            Ph.append((P * others[..., None]).sum(axis=axes))
            Rh.append((R[i] * others).sum(axis=axes))
        br = backward_induction(FiniteHorizonMDP(np.stack(Ph), np.stack(Rh), game.mu))
        total += max(0.0, float(rho @ (np.asarray(br.V)[0] - V[i, 0])))
    return total
