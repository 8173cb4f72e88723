r"""Markov (stochastic) games as validated, frozen models, and the MDPs they induce.

A two-player zero-sum Markov game (Shapley 1953) is ``(S, A, B, P, r, γ, μ)``:
in state ``s`` the row player picks ``a``, the column player ``b``, the row
player receives ``r(s, a, b)`` (the column player ``−r``) and the state moves to
``s' ~ P(·|s, a, b)``. An n-player general-sum Markov game has one reward table
per player, ``R[i, s, a_1, ..., a_n]``.

Fixing every player but one turns the game into an MDP for the remaining
player (the *induced MDP*): for the row player against a stationary column
policy ``ν``

    ``P_ν(s'|s, a) = Σ_b ν(b|s) P(s'|s, a, b)``,   ``r_ν(s, a) = Σ_b ν(b|s) r(s, a, b)``,

so best responses, exploitability and policy evaluation all reuse the MDP layer
(:class:`~rltheory.mdp.FiniteMDP`, :mod:`rltheory.mdp.bellman`,
:mod:`rltheory.mdp.discounted`).

Validation is that of :class:`~rltheory.mdp.FiniteMDP`: located
:class:`~rltheory.errors.InvalidModelError` for wrong shapes, non-finite entries,
negative probabilities or rows not summing to 1 (tolerance ``PROB_ATOL = 1e-8``).

References
----------
Shapley, L. S. (1953). Stochastic games. PNAS 39(10), 1095–1100.
Littman, M. L. (1994). Markov games as a framework for multi-agent reinforcement learning. ICML.
Filar, J. & Vrieze, K. (1997). *Competitive Markov Decision Processes*. Springer. §3.9 (induced MDPs).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .._validate import (
    _input_atol,
    _where,
    as_policy_array,
    check_discount,
    check_finite,
    check_ndim,
    check_probability,
)
from ..backend import array_namespace, as_float, to_numpy
from ..errors import InvalidModelError
from ..mdp._batch_indexing import select_batch
from ..mdp.model import FiniteMDP, _ArrayModel, _discount_in_dtype, _prepare_mu, _prepare_rewards

__all__ = ["ZeroSumMarkovGame", "MarkovGame", "as_policy", "check_batches"]


def _in_dtype(xp: Any, X: Any, dtype: Any, field: str, names: tuple[str, ...], why: str) -> Any:
    """``X`` cast to ``dtype``; a finite entry that overflows in the cast is an
    :class:`~rltheory.errors.InvalidModelError` giving its index, its value and the dtype (the
    finiteness check after the cast would report ``inf``, a value the caller never passed).
    ``names`` name ``X``'s trailing axes; ``why`` ends the message."""
    src = as_float(X, xp, field=field)
    with np.errstate(over="ignore"):  # an overflowing cast is reported below, with its index
        out = as_float(src, xp, dtype)
    if bool(xp.all(xp.isfinite(out) | ~xp.isfinite(src))):
        return out
    h_src, h_out = to_numpy(src), to_numpy(out)
    idx = tuple(int(i) for i in np.argwhere(np.isfinite(h_src) & ~np.isfinite(h_out))[0])
    raise InvalidModelError(
        f"{field}{_where(idx, names[-min(len(names), len(idx)) :])} = {float(h_src[idx]):.6g} is beyond the "
        f"range of {why}"
    )


def _rewards_in_dtype(xp: Any, R: Any, dtype: Any, names: tuple[str, ...]) -> Any:
    """``R`` cast to the model's dtype (``P``'s), an overflowing entry located (:func:`_in_dtype`)."""
    name = getattr(dtype, "name", dtype)
    why = f"P's dtype {name} (largest {float(xp.finfo(dtype).max):.4g}); rewards are stored in P's dtype"
    return _in_dtype(xp, R, dtype, "R", names, why)


def _values_in_dtype(game: Any, V: Any, field: str) -> Any:
    """A value vector ``V[..., S]`` cast to ``game``'s dtype; a finite entry beyond that dtype's range
    is an :class:`~rltheory.errors.InvalidModelError` naming ``field``, the entry and the dtype (a
    float64 ``V = 1e300`` for a float32 game was reported as ``V(s=0) = inf``)."""
    xp, dtype = game.xp, game.dtype
    name = getattr(dtype, "name", dtype)
    why = (
        f"the game's dtype {name} (largest {float(xp.finfo(dtype).max):.4g}); values are computed "
        f"in the dtype of P"
    )
    return _in_dtype(xp, V, dtype, field, ("s",), why)


def check_batches(named: list[tuple[str, tuple[int, ...]]]) -> tuple[int, ...]:
    """The broadcast of the batch shapes in ``named`` (``(name, shape)`` pairs), or a ``ValueError``
    naming those that do not broadcast together, e.g. ``"the batch shapes of the game (2,) and nu
    (3,) do not broadcast together"``."""
    shape: tuple[int, ...] = ()
    for k, (_, b) in enumerate(named):
        try:
            shape = tuple(np.broadcast_shapes(shape, tuple(b)))
        except ValueError:
            items = [f"{n} {tuple(bb)}" for n, bb in named[: k + 1]]
            listed = ", ".join(items[:-1]) + " and " + items[-1]
            raise ValueError(f"the batch shapes of {listed} do not broadcast together") from None
    return shape


def as_policy(
    pi: Any, S: int, n: int, xp: Any, dtype: Any, field: str, action_axis: str = "A"
) -> Any:
    """A stationary stochastic policy ``pi[..., S, n]`` (an int array ``[..., S]`` is one-hot encoded).

    Checked by :func:`rltheory._validate.as_policy_array`, the check every model shares; accepted
    rows are then divided by their sums (within tolerance of 1): a row of ``n`` actions passes
    within ``1e-8·(1 + √n)`` of 1, but the induced MDPs built from it are checked row by row at
    ``1e-8·(1 + √S)``.

    Raises
    ------
    ValueError
        Wrong shape, action index out of range, or rows that are not distributions.
    """
    pi = as_policy_array(pi, S, n, xp, dtype, field, action_axis)
    return pi / xp.sum(pi, axis=-1, keepdims=True)


@dataclass(frozen=True, eq=False)
class ZeroSumMarkovGame(_ArrayModel):
    """Two-player zero-sum discounted Markov game; the row player maximises.

    Parameters
    ----------
    P : array, shape (..., S, A, B, S)
        ``P[..., s, a, b, s'] = Pr(s' | s, a, b)``.
    R : array, shape (..., S, A, B) or (..., S, A, B, S)
        Reward to the row player (the column player receives ``−R``); per-transition
        rewards are reduced to ``r(s, a, b) = Σ_s' P R``.
    gamma : float in [0, 1)
        Below 1 also in ``P``'s dtype, in which the game is computed (float32: at most
        ``1 − 2^-24``).
    mu : array, shape (S,) or (..., S), optional
        Initial distribution (uniform when omitted).

    Raises
    ------
    InvalidModelError
        Wrong shapes, non-finite entries, negative probabilities, rows of ``P`` not summing
        to 1 (worst row and sum reported), ``gamma`` outside [0, 1) or rounding to 1 in ``P``'s
        dtype, or a bad ``mu``.

    Examples
    --------
    A one-state game with matching-pennies payoffs has value ``0/(1−γ) = 0``:

    >>> import numpy as np
    >>> g = ZeroSumMarkovGame(np.ones((1, 2, 2, 1)), np.array([[[1.0, -1.0], [-1.0, 1.0]]]), 0.9)
    >>> g.S, g.A, g.B
    (1, 2, 2)
    """

    P: Any
    R: Any
    gamma: float
    mu: Any = None

    def __post_init__(self) -> None:
        xp = array_namespace(self.P, self.R, self.mu)
        P = as_float(self.P, xp)
        check_ndim(P, "P", 4, "(..., S, A, B, S)")
        S, A, B = P.shape[-4], P.shape[-3], P.shape[-2]
        if P.shape[-1] != S or min(S, A, B) < 1:
            raise InvalidModelError(
                f"P must have shape (..., S, A, B, S) with S, A, B >= 1 and matching state axes; got {tuple(P.shape)}"
            )
        names = ("s", "a", "b", "s'")
        R = as_float(self.R, xp, field="R")
        R = _rewards_in_dtype(xp, R, P.dtype, names if R.ndim == P.ndim else names[:-1])
        check_probability(P, "P", names, "P[s, a, b, :]")
        R = _prepare_rewards(xp, P, R, "R", names, layout="(…, S, A, B)")
        gamma = _discount_in_dtype(
            xp, check_discount(self.gamma, allow_none=False), P.dtype, "game"
        )
        mu = _prepare_mu(xp, self.mu, S, tuple(P.shape[:-4]), P.dtype)
        object.__setattr__(self, "P", P)
        object.__setattr__(self, "R", R)
        object.__setattr__(self, "gamma", gamma)
        object.__setattr__(self, "mu", mu)

    @property
    def S(self) -> int:
        return int(self.P.shape[-4])

    @property
    def A(self) -> int:
        """Number of row-player actions."""
        return int(self.P.shape[-3])

    @property
    def B(self) -> int:
        """Number of column-player actions."""
        return int(self.P.shape[-2])

    @property
    def batch_shape(self) -> tuple[int, ...]:
        return tuple(self.P.shape[:-4])

    def __getitem__(self, index: Any) -> ZeroSumMarkovGame:
        """Select games along the batch axes: ``batch[3]`` is the fourth game.

        As :meth:`rltheory.mdp.FiniteMDP.__getitem__`: the index addresses the batch axes only
        (an Ellipsis selects along the last batch axis, never along ``s``, ``a``, ``b`` or ``s'``),
        numpy's indexing rules apply on every array namespace, and an unbatched game or an index
        reaching into the model axes raises ``IndexError``.
        """
        idx = self._batch_index(index, "(S, A, B, S')")
        mu = self.mu
        if mu is not None and mu.ndim > 1:
            mu = select_batch(self.initial_distribution(), idx, 1)
        return ZeroSumMarkovGame(
            select_batch(self.P, idx, 4), select_batch(self.R, idx, 3), self.gamma, mu
        )

    def stage_games(self, V: Any) -> Any:
        r"""``Q_V(s, a, b) = r(s, a, b) + γ Σ_s' P(s'|s, a, b) V(s')`` for ``V[..., S]``.

        Raises
        ------
        ValueError
            ``V`` not of shape ``(..., S)`` with a batch that broadcasts against the game's, not
            finite, or beyond the range of the game's dtype (the first offending entry located).
        """
        V = _values_in_dtype(self, V, "V")
        if V.ndim < 1 or tuple(V.shape[-1:]) != (self.S,):
            raise ValueError(f"V must have shape (..., S) = (..., {self.S}); got {tuple(V.shape)}")
        check_batches([("the game", self.batch_shape), ("V", tuple(V.shape[:-1]))])
        check_finite(V, "V", ("s",))
        return self._stage_games(V)

    def _stage_games(self, V: Any) -> Any:
        """:meth:`stage_games` of a validated floating ``V`` (Shapley's sweeps)."""
        xp = self.xp
        S, A, B = self.S, self.A, self.B
        PV = xp.reshape(self.P, self.batch_shape + (S * A * B, S)) @ V[..., None]
        return self.R + self.gamma * xp.reshape(PV, tuple(PV.shape[:-2]) + (S, A, B))

    def row_policy(self, mu: Any) -> Any:
        """``mu`` as a row policy ``[..., S, A]`` (validated; int ``[..., S]`` allowed; its batch must
        broadcast against the game's)."""
        mu = as_policy(mu, self.S, self.A, self.xp, self.dtype, "mu")
        check_batches([("the game", self.batch_shape), ("mu", tuple(mu.shape[:-2]))])
        return mu

    def col_policy(self, nu: Any) -> Any:
        """``nu`` as a column policy ``[..., S, B]`` (validated; int ``[..., S]`` allowed; its batch must
        broadcast against the game's)."""
        nu = as_policy(nu, self.S, self.B, self.xp, self.dtype, "nu", "B")
        check_batches([("the game", self.batch_shape), ("nu", tuple(nu.shape[:-2]))])
        return nu

    def row_mdp(self, nu: Any) -> FiniteMDP:
        r"""The row player's MDP against ``ν``: ``P_ν(s'|s,a) = Σ_b ν(b|s) P(s'|s,a,b)``, ``r_ν = Σ_b ν r``."""
        nu = self.col_policy(nu)
        P = xp_sum_b(self.xp, self.P, nu)
        R = self.xp.sum(self.R * nu[..., :, None, :], axis=-1)
        return FiniteMDP(P, R, self.gamma, self.mu)

    def col_mdp(self, mu: Any) -> FiniteMDP:
        r"""The column player's MDP against ``μ`` (rewards ``−r``, so it maximises):
        ``P_μ(s'|s,b) = Σ_a μ(a|s) P(s'|s,a,b)``, ``r_μ(s, b) = −Σ_a μ(a|s) r(s,a,b)``."""
        xp = self.xp
        mu = self.row_policy(mu)
        P = xp.sum(self.P * mu[..., :, :, None, None], axis=-3)
        R = -xp.sum(self.R * mu[..., :, :, None], axis=-2)
        return FiniteMDP(P, R, self.gamma, self.mu)

    def as_markov_game(self) -> MarkovGame:
        """The same game as a 2-player :class:`MarkovGame` with rewards ``(r, −r)`` (unbatched only)."""
        if self.batch_shape:
            raise ValueError(
                f"as_markov_game needs an unbatched game; got batch_shape={self.batch_shape} (index the batch first)"
            )
        xp = self.xp
        return MarkovGame(self.P, xp.stack([self.R, -self.R]), self.gamma, self.mu)

    def __repr__(self) -> str:
        b = f", batch={self.batch_shape}" if self.batch_shape else ""
        return f"ZeroSumMarkovGame(S={self.S}, A={self.A}, B={self.B}, gamma={self.gamma}{b})"


def xp_sum_b(xp: Any, P: Any, nu: Any) -> Any:
    """``Σ_b ν(b|s) P(s'|s, a, b)`` for ``P[..., S, A, B, S]``, ``ν[..., S, B]``."""
    return xp.sum(P * nu[..., :, None, :, None], axis=-2)


@dataclass(frozen=True, eq=False)
class MarkovGame(_ArrayModel):
    """n-player general-sum discounted Markov game (unbatched).

    Parameters
    ----------
    P : array, shape (S, A_1, ..., A_n, S)
        ``P[s, a_1, ..., a_n, s']``; the number of players is ``n = P.ndim − 2``.
    R : array, shape (n, S, A_1, ..., A_n)
        ``R[i, s, a]``: reward of player ``i``.
    gamma : float in [0, 1), or None
        ``None`` means undiscounted; only the finite-horizon routines accept it. A discount
        must stay below 1 in ``P``'s dtype (as for :class:`ZeroSumMarkovGame`).
    mu : array, shape (S,), optional

    Raises
    ------
    InvalidModelError
        As for :class:`ZeroSumMarkovGame`; also ``R.shape[0] != n``.

    Examples
    --------
    >>> import numpy as np
    >>> g = MarkovGame(np.ones((1, 2, 3, 1)), np.zeros((2, 1, 2, 3)), 0.5)
    >>> g.n_players, g.S, g.actions
    (2, 1, (2, 3))
    """

    P: Any
    R: Any
    gamma: float | None
    mu: Any = None

    def __post_init__(self) -> None:
        xp = array_namespace(self.P, self.R, self.mu)
        P = as_float(self.P, xp)
        check_ndim(P, "P", 3, "(S, A_1, ..., A_n, S)")
        S, n = P.shape[0], P.ndim - 2
        if P.shape[-1] != S or min(P.shape) < 1:
            raise InvalidModelError(
                f"P must have shape (S, A_1, ..., A_n, S) with matching state axes and non-empty action sets; "
                f"got {tuple(P.shape)}"
            )
        names = ("s",) + tuple(f"a{k + 1}" for k in range(n)) + ("s'",)
        R = as_float(self.R, xp, field="R")
        check_probability(P, "P", names, "P[s, a_1, ..., a_n, :]")
        if R.ndim != n + 2 or R.shape[0] != n:
            raise InvalidModelError(
                f"R must have shape (n, S, A_1, ..., A_n) = {(n,) + tuple(P.shape[:-1])} for n = {n} players; "
                f"got {tuple(R.shape)}"
            )
        # cast after the shape check: an entry beyond P's dtype is located on R's own axes
        R = _rewards_in_dtype(xp, R, P.dtype, ("i",) + names[:-1])
        R = _prepare_rewards(xp, P, R, "R", names, layout="(S, A_1, ..., A_n)", lead=n)
        gamma = _discount_in_dtype(xp, check_discount(self.gamma, allow_none=True), P.dtype, "game")
        mu = _prepare_mu(xp, self.mu, S, (), P.dtype)
        object.__setattr__(self, "P", P)
        object.__setattr__(self, "R", R)
        object.__setattr__(self, "gamma", gamma)
        object.__setattr__(self, "mu", mu)

    @property
    def n_players(self) -> int:
        return int(self.P.ndim - 2)

    @property
    def S(self) -> int:
        return int(self.P.shape[0])

    @property
    def actions(self) -> tuple[int, ...]:
        """Action-set sizes ``(A_1, ..., A_n)``."""
        return tuple(int(a) for a in self.P.shape[1:-1])

    @property
    def batch_shape(self) -> tuple[int, ...]:
        """Always ``()``: general-sum games are unbatched."""
        return ()

    def discount(self) -> float:
        """``γ``, or 1.0 for an undiscounted (finite-horizon) game."""
        return 1.0 if self.gamma is None else float(self.gamma)

    def policies(self, policies: Any) -> list[Any]:
        """Validate a list of n stationary policies ``pi_i[S, A_i]`` (int ``[S]`` allowed)."""
        if len(policies) != self.n_players:
            raise ValueError(f"need one policy per player ({self.n_players}); got {len(policies)}")
        return [
            as_policy(p, self.S, a, self.xp, self.dtype, f"policies[{i}]")
            for i, (p, a) in enumerate(zip(policies, self.actions, strict=True))
        ]

    def joint_policy(self, policies: Any) -> Any:
        r"""Product policy ``π(a|s) = Π_i π_i(a_i|s)`` as an array ``[S, A_1, ..., A_n]``."""
        xp = self.xp
        pis = self.policies(policies)
        n = self.n_players
        out = xp.ones((self.S,) + (1,) * n, dtype=self.dtype, device=self.P.device)
        for i, p in enumerate(pis):
            shape = (self.S,) + tuple(self.actions[i] if k == i else 1 for k in range(n))
            out = out * xp.reshape(p, shape)
        return out

    def check_joint(self, pi: Any, field: str = "pi") -> Any:
        """Validate a correlated stationary policy ``pi[S, A_1, ..., A_n]`` (each ``pi[s]`` a distribution).

        A policy given at a coarser precision than the game's (float32 for a float64 game) is judged
        at its own ``16·eps``. Accepted rows are divided by their sums (a sum within tolerance of 1,
        so the change is at most that tolerance): the chains and induced MDPs built from ``pi`` are
        checked row by row at the tighter tolerance of ``S`` entries.
        """
        xp = self.xp
        if isinstance(pi, (list, tuple)):
            pi = np.asarray(pi)
        # a float32 policy is judged at float32's 16·eps (read before any cast: xp.asarray of a
        # numpy float16 pi failed for array_api_strict, naming nothing) ...
        atol = _input_atol(pi)
        pi = as_float(pi, xp, self.dtype, field=field)
        want = (self.S,) + self.actions
        if tuple(pi.shape) != want:
            raise ValueError(
                f"{field} must have shape (S, A_1, ..., A_n) = {want}; got {tuple(pi.shape)}"
            )
        rows = xp.reshape(pi, (self.S, -1))
        check_probability(rows, field, ("s", "a"), f"{field}[s, ...]", atol=atol)
        # ... and renormalised: a row of K entries is accepted within atol·(1 + √K) of 1, but the
        # chains and induced MDPs built from it are judged row by row at atol·(1 + √S)
        return xp.reshape(rows / xp.sum(rows, axis=-1, keepdims=True), want)

    def evaluate(self, pi: Any) -> Any:
        r"""Values ``V_i^π = (I − γP_π)^{-1} r_{i,π}`` of a joint (product or correlated) policy, shape (n, S).

        Uses :func:`rltheory.mdp.evaluate_policy` on the one-action chain ``(P_π, r_{i,π})``.
        """
        from ..mdp.bellman import evaluate_policy  # noqa: PLC0415

        xp = self.xp
        pi = self.check_joint(pi)
        S, n = self.S, self.n_players
        K = 1
        for a in self.actions:
            K *= a
        pf = xp.reshape(pi, (S, K))
        Ppi = xp.sum(xp.reshape(self.P, (S, K, S)) * pf[:, :, None], axis=1)  # (S, S)
        rpi = xp.sum(xp.reshape(self.R, (n, S, K)) * pf[None, :, :], axis=-1)  # (n, S)
        chain = FiniteMDP(
            xp.broadcast_to(Ppi[None, :, None, :], (n, S, 1, S)),
            rpi[:, :, None],
            self.discount_or_raise(),
        )
        return evaluate_policy(chain, xp.zeros((n, S), dtype=xp.int64, device=self.P.device))

    def discount_or_raise(self) -> float:
        if self.gamma is None:
            raise ValueError(
                "this routine needs a discounted game (gamma in [0, 1)); got gamma=None"
            )
        return float(self.gamma)

    def _others_axes(self, i: int) -> tuple[int, ...]:
        return tuple(1 + k for k in range(self.n_players) if k != i)

    def induced_mdp(self, i: int, pi: Any) -> FiniteMDP:
        r"""Player ``i``'s MDP when the others follow the joint policy ``pi`` (coarse deviation).

        ``P_i(s'|s, a_i) = Σ_{a} π(a|s) P(s'|s, a_i, a_{−i})``,
        ``r_i(s, a_i) = Σ_a π(a|s) R_i(s, a_i, a_{−i})`` — player ``i`` ignores its own
        component of ``π``. For a product ``π`` this is the usual best-response MDP; for a
        correlated ``π`` its optimum is the CCE deviation value.
        """
        xp = self.xp
        pi = self.check_joint(pi)
        if isinstance(i, bool) or not (
            isinstance(i, (int, np.integer)) and 0 <= i < self.n_players
        ):
            raise ValueError(f"player index i must be in [0, {self.n_players}); got {i!r}")
        i = int(i)
        others = xp.sum(pi, axis=1 + i, keepdims=True)  # marginal of a_{−i}: (S, ..., 1, ...)
        P = xp.sum(self.P * others[..., None], axis=self._others_axes(i))  # (S, A_i, S)
        R = xp.sum(self.R[i, ...] * others, axis=self._others_axes(i))  # (S, A_i)
        return FiniteMDP(P, R, self.discount_or_raise(), self.mu)

    def __repr__(self) -> str:
        return f"MarkovGame(n={self.n_players}, S={self.S}, actions={self.actions}, gamma={self.gamma})"
