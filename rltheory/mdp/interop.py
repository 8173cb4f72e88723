r"""Interoperability: gymnasium toy-text environments, mdptoolbox and QuantEcon layouts.

=================================  ============================================
:func:`from_gymnasium`             a toy-text env's ``env.unwrapped.P`` → FiniteMDP
:func:`to_gymnasium`               FiniteMDP → a real ``gymnasium.Env``
:func:`to_mdptoolbox`              FiniteMDP → ``(P[A, S, S], R[S, A])``
:func:`from_mdptoolbox`            ``(P[A, S, S], R)`` → FiniteMDP
:func:`to_quantecon_sa`            FiniteMDP → state-action-pair form ``(R, Q, s_indices, a_indices)``
:func:`from_quantecon`             a ``DiscreteDP`` (or its arrays) → FiniteMDP
=================================  ============================================

All converters run on the host (numpy); device models raise ``TypeError``.
Arrays keep their floating dtype both ways (float32 stays float32, so a float32
model, whose rows sum to 1 only to float32 rounding, round-trips and is
validated at float32's tolerance); other inputs become float64.
Layouts of the other libraries are converted, never guessed: a wrong shape
raises :class:`~rltheory.errors.InvalidModelError` naming the argument, the
layout expected and the shape received, and the resulting model is validated
as every :class:`~rltheory.mdp.FiniteMDP` is (located messages on ``P``/``R``).

gymnasium is an optional dependency (extra ``gym``); it is imported only by the
two gymnasium functions. The mdptoolbox and QuantEcon converters live in
:mod:`rltheory.mdp.array_layouts` and are re-exported here.

References
----------
Towers, M. et al. (2024). Gymnasium: a standard interface for reinforcement learning
environments. arXiv:2407.17032 (the toy-text ``env.unwrapped.P`` table).
"""

from __future__ import annotations

from functools import cache
from typing import Any

import numpy as np

from .._validate import PROB_ATOL, check_discount
from ..backend import require_host
from ..errors import InvalidModelError
from ._gym_table import _beyond, _discrete_n, _entry
from .array_layouts import (
    _single_host,
    from_mdptoolbox,
    from_quantecon,
    to_mdptoolbox,
    to_quantecon_sa,
)
from .model import FiniteMDP
from .sample import _cdf

__all__ = [
    "from_gymnasium",
    "to_gymnasium",
    "to_mdptoolbox",
    "from_mdptoolbox",
    "to_quantecon_sa",
    "from_quantecon",
]


# -- gymnasium ----------------------------------------------------------------------


def from_gymnasium(
    env: Any, gamma: float, *, terminal: str = "inplace", dtype: Any = None
) -> FiniteMDP:
    r"""The FiniteMDP of a gymnasium toy-text environment, read from ``env.unwrapped.P``.

    ``env.unwrapped.P[s][a]`` is a list of ``(p, s', r, done)`` tuples (FrozenLake,
    Taxi, CliffWalking, and :func:`to_gymnasium` envs; ``P`` and ``P[s]`` may be dicts
    or lists). Entries are accumulated: ``P(s'|s, a) = Σ p`` over entries to ``s'``
    and ``r(s, a) = Σ p·r`` over all entries. Each ``p`` must lie in ``[0, 1]`` to
    :class:`FiniteMDP`'s tolerance ``atol = max(1e-8, 16·eps)`` (so a model's rounding
    entries such as ``−1e−10``, which :func:`to_gymnasium` writes, come back; they end
    no episode) and each row sum to 1 to ``atol·(1 + √S)``; nothing is renormalised.
    ``μ`` is ``env.unwrapped.initial_state_distrib`` when the env has it (uniform otherwise), passed
    to :class:`FiniteMDP` in its own float dtype (a float32 one is judged at float32's tolerance and
    divided by its sum).

    Episode ends (``done=True``) become absorbing zero-reward states, so the
    discounted value of the MDP equals the expected discounted episodic return:

    * ``terminal="inplace"`` (default): every state ``s'`` reached by a terminal
      transition from a reachable state (one an episode from ``μ`` visits before
      it ends) is made absorbing with reward 0 (its own rows in ``P`` are never
      used by the episode; terminal transitions in rows no episode uses end
      nothing). This is exact on every reachable state unless such a state,
      having dynamics of its own, is also entered by a non-terminal transition
      from a reachable state or has initial probability (every state has under
      the uniform ``μ`` of an env without ``initial_state_distrib``); that case
      raises with the offending transition named. (Taxi's states with the
      passenger already delivered but the taxi elsewhere are unreachable and
      keep their table rows.)
    * ``terminal="extra"``: one absorbing zero-reward state with index ``S`` is
      added and every terminal transition goes there; always exact. It has
      initial probability 0 (``μ`` is uniform over the env's ``S`` states when
      the env has no ``initial_state_distrib``).

    The reward of the terminal transition itself is kept (CliffWalking's −1 on
    entering the goal, FrozenLake's +1 on entering the goal).

    Time limits are not in the table: ``gym.make`` wraps toy-text envs in a
    ``TimeLimit`` (``max_episode_steps``: 100 for FrozenLake-v1, 200 for
    FrozenLake8x8-v1 and Taxi, none for CliffWalking) whose truncation the model
    does not have, so its value is that of the untruncated episode. The two
    differ by at most ``γ^H·max|r|/(1 − γ)`` for a limit ``H``, which is negligible
    at ``γ = 0.9`` (``3e-4`` on FrozenLake) but not near 1: at ``γ = 0.999`` FrozenLake
    4x4's optimal policy is worth 0.786 from the start, and 0.713 in episodes cut at
    100 steps (the best policy for such episodes, which may use the time left, 0.717).

    Parameters
    ----------
    env : gymnasium.Env
        Environment with ``Discrete`` observation and action spaces and ``unwrapped.P``.
    gamma : float in [0, 1)
        Discount of the resulting model.
    terminal : {"inplace", "extra"}
    dtype : {numpy.float64, numpy.float32}, optional
        Dtype of the model (validated at its tolerance); by default float64, or the
        model's own dtype for an env made by :func:`to_gymnasium` (``env.model_dtype``),
        so that a float32 model, whose rows sum to 1 only to float32 rounding, round-trips.

    Returns
    -------
    FiniteMDP
        Host model with ``S = observation_space.n`` (``+1`` for ``"extra"``), ``A = action_space.n``.

    Raises
    ------
    TypeError
        Non-discrete spaces, or no ``unwrapped.P`` table.
    ValueError
        A bad ``terminal`` or ``dtype``, or an env whose ``step`` does not follow its table
        (Taxi with ``fickle_passenger=True``).
    InvalidModelError
        A malformed table entry (located as ``env.P[s][a][k]``), probabilities that do
        not sum to 1 (reported by :class:`FiniteMDP`), an inexact in-place terminal, or
        a positive probability that ``dtype`` rounds to 0 (named: the transition would vanish).

    Examples
    --------
    >>> import gymnasium as gym
    >>> mdp = from_gymnasium(gym.make("FrozenLake-v1"), gamma=0.9)
    >>> mdp.S, mdp.A, float(mdp.P[15, 0, 15]), float(mdp.R[14, 2])
    (16, 4, 1.0, 0.3333333333333333)
    """
    if terminal not in ("inplace", "extra"):
        raise ValueError(f"terminal must be 'inplace' or 'extra'; got {terminal!r}")
    check_discount(gamma, allow_none=False)
    if dtype is None:
        dtype = getattr(getattr(env, "unwrapped", env), "model_dtype", np.float64)
    try:
        model_dtype = np.dtype(dtype)
    except TypeError:
        model_dtype = None
    if model_dtype not in (np.float32, np.float64):
        raise ValueError(f"dtype must be numpy.float32 or numpy.float64; got {dtype!r}")
    # FiniteMDP's rule for entries of P (rltheory._validate.check_probability)
    atol = max(PROB_ATOL, 16.0 * float(np.finfo(model_dtype).eps))
    u = getattr(env, "unwrapped", env)
    table = getattr(u, "P", None)
    if table is None:
        raise TypeError(
            f"from_gymnasium needs a toy-text env with a transition table env.unwrapped.P; "
            f"{type(u).__name__} has none"
        )
    if bool(getattr(u, "fickle_passenger", False)):
        # Taxi's step() redraws the destination outside the table (gymnasium >= 1.2)
        raise ValueError(
            f"{type(u).__name__} has fickle_passenger=True: step() changes the passenger's "
            "destination outside env.P, so the table is not the env's model; make it with "
            "fickle_passenger=False"
        )
    S = _discrete_n(env.observation_space, "env.observation_space")
    A = _discrete_n(env.action_space, "env.action_space")
    extra = terminal == "extra"
    n = S + 1 if extra else S
    P = np.zeros((n, A, n))
    R = np.zeros((n, A))
    r_ref = np.full((n, A), np.nan)  # first reward of each (s, a): R = r_ref + Σ p (r − r_ref)
    R_direct = np.zeros((n, A))  # Σ p r, where r − r_ref overflows (rewards near ±1.8e308)
    ends: list[tuple[int, int]] = []  # terminal entries (s, s') with p > 0
    live: list[tuple[int, int, int, int]] = []  # non-terminal entries (s, a, k, s') with p > 0
    # entries the spaces do not declare were dropped without a word (a state S of a table with
    # S + 1 rows, an action A): the model was not the table's
    extra_s = _beyond(table, S)
    if extra_s is not None:
        raise InvalidModelError(
            f"env.P has an entry for state {extra_s!r}, outside env.observation_space "
            f"(S={S} states 0..{S - 1})"
        )
    for s in range(S):
        row = _entry(table, s)
        if row is None:
            raise InvalidModelError(f"env.P has no entry for state s={s} (S={S})")
        extra_a = _beyond(row, A)
        if extra_a is not None:
            raise InvalidModelError(
                f"env.P[{s}] has an entry for action {extra_a!r}, outside env.action_space "
                f"(A={A} actions 0..{A - 1})"
            )
        for a in range(A):
            entries = _entry(row, a)
            if entries is None:
                raise InvalidModelError(f"env.P[{s}] has no entry for action a={a} (A={A})")
            for k, entry in enumerate(entries):
                try:
                    p, s2, r, done = entry
                    p, r, s2i = float(p), float(r), int(s2)
                except (TypeError, ValueError):
                    raise InvalidModelError(
                        f"env.P[{s}][{a}][{k}] must be a tuple (p, s', r, done); got {entry!r}"
                    ) from None
                if not (np.isfinite(p) and -atol <= p <= 1.0 + atol):
                    raise InvalidModelError(
                        f"env.P[{s}][{a}][{k}] has probability p={p}, not in [0, 1] (atol={atol:g})"
                    )
                if not 0 <= s2i < S or s2i != s2:
                    raise InvalidModelError(
                        f"env.P[{s}][{a}][{k}] has next state s'={s2!r}, not an int in [0, {S})"
                    )
                if not np.isfinite(r):
                    raise InvalidModelError(f"env.P[{s}][{a}][{k}] has reward r={r}, not finite")
                if not (
                    isinstance(done, np.bool_)
                    or (isinstance(done, (int, np.integer)) and done in (0, 1))
                ):  # bool("False") is True
                    raise InvalidModelError(
                        f"env.P[{s}][{a}][{k}] has done={done!r}, not a bool (or 0/1)"
                    )
                if p == 0.0:
                    continue
                if np.isnan(r_ref[s, a]):
                    r_ref[s, a] = r
                with np.errstate(over="ignore", invalid="ignore"):  # R_direct takes over there
                    R[s, a] += p * (r - r_ref[s, a])
                R_direct[s, a] += p * r
                if bool(done):
                    P[s, a, S if extra else s2i] += p
                    if p > 0.0:  # a rounding negative ends no episode
                        ends.append((s, s2i))
                else:
                    P[s, a, s2i] += p
                    if p > 0.0:
                        live.append((s, a, k, s2i))
    # Σ p r = r_ref + Σ p (r − r_ref) as Σ p = 1; the second form is exactly r when every entry has the
    # same reward (to_gymnasium's tables: Σ_t P(t|s,a)·r rounded r = 0.6017... by one ulp)
    R += np.where(np.isnan(r_ref), 0.0, r_ref)
    R = np.where(np.isfinite(R), R, R_direct)
    mu = getattr(u, "initial_state_distrib", None)
    if mu is not None:
        # a float32 distribution keeps its dtype, so FiniteMDP judges it at float32's tolerance (and
        # divides it by its sum): cast to float64 first, one normalised in float32 summed to 1 + 3.7e-8
        # and was refused at 1e-8 (22 of 50 random 5-state ones)
        mu = np.asarray(mu).reshape(-1)
        if mu.dtype.kind not in "fiub":
            raise InvalidModelError(
                f"env.initial_state_distrib must hold real numbers; got dtype {mu.dtype}"
            )
        if mu.dtype.kind != "f":
            mu = mu.astype(np.float64)
    if mu is not None and mu.shape != (S,):
        raise InvalidModelError(f"env.initial_state_distrib must have shape ({S},); got {mu.shape}")
    if extra:
        mu_dtype = np.float64 if mu is None else mu.dtype
        P[S, :, S] = 1.0
        # the added state is no start state (a uniform μ is uniform over the env's S states)
        mu = np.concatenate([np.full(S, 1.0 / S) if mu is None else mu, np.zeros(1, mu_dtype)])
        return FiniteMDP(_in_dtype(P, model_dtype), R, gamma, mu)
    # a state that is already absorbing with reward 0 loses nothing by being made so
    own_absorbing = np.all(P[np.arange(S), :, np.arange(S)] == 1.0, axis=1) & np.all(
        R == 0.0, axis=1
    )
    # without initial_state_distrib the model's μ is uniform: every state is a start state
    starts = np.full(S, 1.0 / S) if mu is None else mu
    # states whose rows an episode uses: the starts and what they reach without an episode ending
    used = starts > 0
    src = np.array([e[0] for e in live], dtype=np.int64)
    dst = np.array([e[3] for e in live], dtype=np.int64)
    while True:
        new = used.copy()
        new[dst[used[src]]] = True
        if np.array_equal(new, used):
            break
        used = new
    # the states episodes end in (rows of states no episode uses, e.g. terminal ones, end none)
    ends_into = np.zeros(S, dtype=bool)
    for s0, t0 in ends:
        ends_into[t0] |= bool(used[s0])
    bad_start = np.flatnonzero(ends_into & (starts > 0) & ~own_absorbing)
    if bad_start.size:
        t = int(bad_start[0])
        source = " (uniform: the env has no initial_state_distrib)" if mu is None else ""
        raise InvalidModelError(
            f"state s={t} ends episodes but has initial probability mu[{t}] = {starts[t]}{source}; "
            "use terminal='extra'"
        )
    # (entered from a state no episode ends in: one exists whenever any conflict does, and it
    # names where the episode first enters such a state)
    conflict = np.flatnonzero(used[src] & ~ends_into[src] & ends_into[dst] & ~own_absorbing[dst])
    if conflict.size:
        s0, a0, k0, t0 = live[int(conflict[0])]
        raise InvalidModelError(
            f"state s'={t0} ends episodes but is also entered without ending one, by "
            f"env.P[{s0}][{a0}][{k0}] from a reachable state; making it absorbing would change "
            "the model: use terminal='extra'"
        )
    terminal_states = np.flatnonzero(ends_into)
    P[terminal_states] = 0.0
    P[terminal_states, :, terminal_states] = 1.0
    R[terminal_states] = 0.0
    return FiniteMDP(_in_dtype(P, model_dtype), R, gamma, mu)


def _in_dtype(P: np.ndarray, dtype: Any) -> np.ndarray:
    """The accumulated table ``P`` in the model's dtype; a positive probability the cast rounds to
    0 is a located ``InvalidModelError`` (it would delete the transition: dtype=float32 made a
    table entry of 1e-50 vanish and the chain's structure change without a word)."""
    out = P.astype(dtype)
    lost = (P > 0.0) & ~(out > 0.0)
    if lost.any():
        s, a, t = (int(i) for i in np.argwhere(lost)[0])
        raise InvalidModelError(
            f"env.P[{s}][{a}] moves to s'={t} with probability {P[s, a, t]:.3g}, which rounds to 0 "
            f"in {np.dtype(dtype).name} and would delete the transition; use dtype=numpy.float64"
        )
    return out


@cache
def _env_class() -> type:
    import gymnasium  # noqa: PLC0415 - optional dependency

    class FiniteMDPEnv(gymnasium.Env):
        r"""A :class:`~rltheory.mdp.FiniteMDP` as a gymnasium environment.

        ``reset`` draws ``s_0 ~ μ``; ``step(a)`` draws ``s' ~ P(·|s, a)`` and returns
        the expected reward ``r(s, a)``. The MDP is continuing: ``terminated`` is
        True only on entering a state that is absorbing with zero reward under
        every action (nothing more can be earned there); ``truncated`` is True
        after ``max_episode_steps`` steps when that is set. Randomness comes from
        ``self.np_random`` (seeded by ``seed`` and by ``reset(seed=...)``).

        ``P`` (toy-text table ``P[s][a] = [(p, s', r, done), ...]``),
        ``initial_state_distrib`` and ``model_dtype`` are exposed, so
        :func:`from_gymnasium` recovers the model.
        """

        metadata = {"render_modes": []}

        def __init__(
            self,
            mdp: FiniteMDP,
            P: np.ndarray,
            R: np.ndarray,
            seed: int | None,
            max_steps: int | None,
            model_dtype: Any,
        ):
            super().__init__()
            self.mdp = mdp
            self.model_dtype = np.dtype(model_dtype)
            self.render_mode = None
            S, A = P.shape[0], P.shape[1]
            self.observation_space = gymnasium.spaces.Discrete(S, seed=seed)
            self.action_space = gymnasium.spaces.Discrete(A, seed=seed)
            self.initial_state_distrib = require_host(
                mdp.initial_distribution(), "to_gymnasium"
            ).astype(np.float64)
            ends = np.all(P[np.arange(S), :, np.arange(S)] == 1.0, axis=1) & np.all(
                R == 0.0, axis=1
            )
            self._ends = ends
            self._R = R
            self._cdf = _cdf(P)  # inverse-CDF sampling; last support entry is exactly 1
            self._cdf0 = _cdf(self.initial_state_distrib)
            self.P = {
                s: {
                    a: [
                        (float(P[s, a, t]), int(t), float(R[s, a]), bool(ends[t]))
                        for t in np.flatnonzero(P[s, a])
                    ]
                    for a in range(A)
                }
                for s in range(S)
            }
            self.max_episode_steps = max_steps
            self._state: int | None = None
            self._t = 0
            if seed is not None:
                # as reset(seed=seed) seeds it (the same PCG64 stream as default_rng(seed)), so that
                # np_random_seed reads the seed (set directly it read -1, "unknown")
                self._np_random, self._np_random_seed = gymnasium.utils.seeding.np_random(seed)

        def reset(
            self, *, seed: int | None = None, options: dict | None = None
        ) -> tuple[int, dict]:
            super().reset(seed=seed)
            self._state = int(np.argmax(self._cdf0 > self.np_random.random()))
            self._t = 0
            return self._state, {}

        def step(self, action: Any) -> tuple[int, float, bool, bool, dict]:
            if self._state is None:
                raise RuntimeError("call reset() before step()")
            if not self.action_space.contains(action):
                raise ValueError(
                    f"action {action!r} is not in the action space Discrete({self.action_space.n})"
                )
            s, a = self._state, int(action)
            s2 = int(np.argmax(self._cdf[s, a] > self.np_random.random()))
            self._state = s2
            self._t += 1
            truncated = self.max_episode_steps is not None and self._t >= self.max_episode_steps
            return s2, float(self._R[s, a]), bool(self._ends[s2]), bool(truncated), {}

    return FiniteMDPEnv


def to_gymnasium(
    mdp: FiniteMDP, *, seed: int | None = None, max_episode_steps: int | None = None
) -> Any:
    r"""A ``gymnasium.Env`` that simulates ``mdp`` (Discrete spaces, ``render_mode=None``).

    Semantics: ``reset()`` returns ``(s_0, {})`` with ``s_0 ~ μ``; ``step(a)`` returns
    ``(s', r(s, a), terminated, truncated, {})`` with ``s' ~ P(·|s, a)``. The MDP is
    continuing, so ``terminated`` is True only on entering a state that is
    absorbing with zero reward under every action (the discounted return after
    it is 0, so stopping there changes no return); ``truncated`` becomes True after
    ``max_episode_steps`` steps when given. The env's ``P`` table and
    ``initial_state_distrib`` (and ``model_dtype``) make
    ``from_gymnasium(to_gymnasium(m), m.gamma)`` reproduce ``m``, float32 models included.

    Parameters
    ----------
    mdp : FiniteMDP
        Single host model.
    seed : int, optional
        Seeds the env's ``np_random`` (and the spaces); ``reset(seed=...)`` reseeds.
    max_episode_steps : int, optional
        Truncation horizon.

    Returns
    -------
    gymnasium.Env

    Examples
    --------
    >>> from rltheory.mdp.zoo import two_state
    >>> env = to_gymnasium(two_state(), seed=0)
    >>> obs, info = env.reset(seed=1)
    >>> int(env.observation_space.n), int(env.action_space.n), obs, env.step(0)[1:]
    (2, 2, 1, (1.0, False, False, {}))
    """
    P, R = _single_host(mdp, "to_gymnasium")
    if max_episode_steps is not None and (
        isinstance(max_episode_steps, bool)
        or not isinstance(max_episode_steps, (int, np.integer))
        or max_episode_steps < 1
    ):
        raise ValueError(
            f"max_episode_steps must be a positive int or None; got {max_episode_steps!r}"
        )
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, (int, np.integer))):
        raise TypeError(f"seed must be an int or None; got {seed!r}")
    if seed is not None and seed < 0:  # (gymnasium's spaces raised their own Error class)
        raise ValueError(f"seed must be a non-negative int or None; got {seed!r}")
    return _env_class()(
        mdp,
        P.astype(np.float64),
        R.astype(np.float64),
        None if seed is None else int(seed),
        max_episode_steps,
        P.dtype,
    )
