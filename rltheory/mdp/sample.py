r"""Sampling from a finite MDP: the generative model and trajectory roll-outs.

* Generative model (Kearns & Singh 1999): for every ``(s, a)`` draw ``n``
  independent next states ``s' ~ P(·|s, a)``. The counts give the empirical
  kernel ``P̂(s'|s, a) = N(s, a, s')/n`` (:func:`sample_transitions`,
  :func:`empirical_mdp`), the object of model-based sample-complexity bounds
  (Azar, Munos & Kappen 2013; Agarwal, Kakade & Yang 2020).
* Trajectories: ``s_0 ~ μ``, ``a_t ~ π(·|s_t)``, ``s_{t+1} ~ P(·|s_t, a_t)``,
  reward ``r_t = r(s_t, a_t)`` (:func:`rollout`).

Everything runs on the host in numpy with an explicit ``numpy.random.Generator``
(or int seed); a model on a device raises ``TypeError`` (move it with
:func:`rltheory.backend.to_numpy`-built arrays first).

References
----------
Kearns, M., Singh, S. (1999). Finite-sample convergence rates for Q-learning and
indirect algorithms. NIPS 11 (the generative model / "parallel sampling").
Azar, M. G., Munos, R., Kappen, H. J. (2013). Minimax PAC bounds on the sample
complexity of RL with a generative model. Machine Learning 91(3):325–349.
Weissman, T., Ordentlich, E., Seroussi, G., Verdú, S., Weinberger, M. (2003).
Inequalities for the L1 deviation of the empirical distribution. HP Labs HPL-2003-97, Thm 2.1.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._validate import PROB_ATOL, _source_atol, check_real, real_scalar
from .._validate import check_int as _count
from ..backend import require_host
from ..errors import InvalidModelError
from ._dataset_checks import _check_finite_host, _int_array, _real_host, _reward_host
from .bellman import as_stochastic_policy
from .model import FiniteMDP
from .zoo import _generator as _rng

__all__ = ["Trajectories", "sample_transitions", "empirical_mdp", "rollout", "MAX_ROLLOUT_BYTES"]

MAX_ROLLOUT_BYTES = 2**33
"""Largest :class:`Trajectories` (int64 states and actions, float64 rewards: ``8·K·(H+1) +
16·K·H`` bytes for ``K`` episodes of horizon ``H``) that :func:`rollout` allocates, 8 GiB."""


def _clip_rounding(p: np.ndarray) -> np.ndarray:
    """Probabilities with the validators' rounding negatives (``≥ −atol``) set to exactly 0.

    Validated rows may hold entries such as ``−1e−10`` (:func:`rltheory._validate.check_probability`
    accepts ``≥ −atol``); a sampler must treat them as probability 0: never drawn, and not
    a negative ``pvals`` for ``Generator.multinomial`` (which rejects them).
    """
    return np.maximum(p, 0.0)


def _cdf(p: np.ndarray) -> np.ndarray:
    """Row-wise CDF whose last positive entry is exactly 1 (so ``u < 1`` always lands on support).

    Rounding negatives count as 0 (:func:`_clip_rounding`), so the CDF is non-decreasing
    and an entry with ``p ≤ 0`` is never drawn.
    """
    c = np.cumsum(_clip_rounding(p), axis=-1)
    return c / c[..., -1:]


def _draw(cdf_rows: np.ndarray, u: np.ndarray) -> np.ndarray:
    """Inverse-CDF draw: first index ``j`` with ``cdf_rows[i, j] > u[i]``."""
    return np.argmax(cdf_rows > u[:, None], axis=-1)


_MAX_COUNT = int(np.iinfo(np.int64).max)
"""Largest number of draws per pair :func:`sample_transitions` counts (its counts are int64)."""

_MAX_ROLLOUT_LENGTH = 10_000
"""Default largest expected geometric roll-out segment length ``1/(1−γ)`` a sampler accepts."""


def _check_rollout_length(
    gamma: float, max_length: Any, n_samples: int, *, segments: int = 2
) -> float:
    """Refuse a discount whose expected roll-out segment length ``1/(1−γ)`` exceeds ``max_length``.

    The one rule of every geometric-horizon sampler (``τ ~ Geom(1−γ)``, ``E[τ + 1] = 1/(1−γ)``):
    its work is ``Θ(K/(1−γ))`` draws in ``Θ(log K/(1−γ))`` vectorised steps, unbounded as
    ``γ → 1`` (``γ = 1 − 1e-12`` did not finish). A discount is accepted when
    ``γ ≤ 1 − 1/max_length`` in floating point, so ``max_length = 10ᵏ`` accepts ``γ = 1 − 10⁻ᵏ`` as
    written (``None``: 10⁴, i.e. ``γ ≤ 0.9999``); ``max_length`` must be a finite number ``≥ 1``.
    ``γ`` outside ``[0, 1)`` (or NaN) is refused whatever ``max_length``: beyond ``2⁵³`` the bound
    ``1 − 1/max_length`` rounds to 1, and every ``γ < 1`` (expected length at most ``2⁵³``) passes.
    ``segments`` is the number of independent geometric segments each of the ``n_samples``
    samples draws (named in the message). Returns the accepted cap. Used by
    :func:`rltheory.algorithms.networked_critics.sample_rollouts`, the LSTD/TD critics of
    :mod:`rltheory.algorithms.actor_critic`, :func:`rltheory.algorithms.sample_npg_primal_dual` and
    the sample-based :func:`rltheory.algorithms.general_utility_primal_dual`.
    """
    cap = (
        _MAX_ROLLOUT_LENGTH if max_length is None else check_real(max_length, "max_length", low=1.0)
    )
    g = float(gamma)
    if not 0.0 <= g < 1.0:
        # (γ = 1 passed under max_length = 1e300, whose 1 − 1/cap rounds to 1.0: a segment
        # τ ~ Geom(1 − γ) that never ends, or numpy's "p <= 0" at the first draw; NaN passed too)
        raise ValueError(
            f"gamma = {g!r}: a geometric-horizon sampler needs gamma in [0, 1) (a segment "
            f"τ ~ Geom(1 - gamma) has expected length 1/(1-gamma), infinite at gamma = 1), "
            f"whatever max_length = {cap:g} allows"
        )
    length = 1.0 / (1.0 - g)
    # γ against 1 − 1/cap, both rounded: the double nearest 0.9999 lies above 0.9999, so its
    # 1/(1−γ) = 10000.0000000011 > 10⁴ and γ = 0.9999 was refused at the default cap (γ = 0.9 under
    # max_length = 10 likewise), although the cap stands for γ ≤ 1 − 1/max_length
    if g > 1.0 - 1.0 / cap:
        per = {1: "one segment", 2: "two segments"}.get(segments, f"{segments} segments")
        raise ValueError(
            f"gamma = {g!r} gives an expected roll-out segment length 1/(1-gamma) = {length:.4g} steps "
            f"({per} per sample, {n_samples} samples), above max_length = {cap:g} "
            f"(gamma > 1 - 1/max_length = {1.0 - 1.0 / cap!r}): the sampling work grows "
            f"like 1/(1-gamma); pass a larger max_length to accept it"
        )
    return cap


def sample_transitions(
    mdp: FiniteMDP, n_per_pair: int, rng: np.random.Generator | int
) -> np.ndarray:
    r"""Generative-model counts ``N[..., s, a, s']`` of ``n`` draws ``s' ~ P(·|s, a)`` per pair.

    Each row ``N[..., s, a, :]`` is ``Multinomial(n, P(·|s, a))``, independently
    over ``(s, a)`` and batch indices.

    Parameters
    ----------
    mdp : FiniteMDP
        Host model (numpy-convertible arrays), possibly batched.
    n_per_pair : int ≥ 1
        Draws per state-action pair, at most ``2**63 − 1`` (``ValueError`` naming it beyond).
    rng : numpy.random.Generator or int

    Returns
    -------
    numpy.ndarray of int64, shape (..., S, A, S)
        Counts; every row sums to ``n_per_pair``.

    Notes
    -----
    Concentration (Weissman et al. 2003, Thm 2.1): for each pair,
    ``Pr(‖P̂(·|s,a) − P(·|s,a)‖₁ ≥ ε) ≤ (2^S − 2) exp(−n ε²/2)``, so with probability
    ``≥ 1 − δ`` simultaneously over all ``SA`` pairs
    ``max_{s,a} ‖P̂ − P‖₁ ≤ √(2 (S ln 2 + ln(SA/δ)) / n)``: the ``√(log/n)`` rate.

    Examples
    --------
    >>> from rltheory.mdp.zoo import two_state
    >>> N = sample_transitions(two_state(), 100, rng=0)
    >>> N.sum(-1).tolist()
    [[100, 100], [100, 100]]
    """
    n = _count(n_per_pair, "n_per_pair")
    if n > _MAX_COUNT:  # Generator.multinomial raised "Python int too large to convert to C long"
        raise ValueError(
            f"n_per_pair must be at most 2**63 - 1 = {_MAX_COUNT} (the counts are int64); got {n}"
        )
    gen = _rng(rng)
    P = _clip_rounding(require_host(mdp.P, "sample_transitions").astype(np.float64))
    P = P / P.sum(-1, keepdims=True)  # float rounding only: the model is already validated
    return gen.multinomial(n, P).astype(np.int64)


def empirical_mdp(mdp: FiniteMDP, n_per_pair: int, rng: np.random.Generator | int) -> FiniteMDP:
    r"""Empirical model ``(P̂, r, γ, μ)`` with ``P̂ = N/n`` from :func:`sample_transitions`.

    Rewards, discount and initial distribution are those of ``mdp`` (known
    rewards, the standard generative-model setting of Azar et al. 2013).

    Returns
    -------
    FiniteMDP
        Host (numpy) model of the same batch shape.

    Examples
    --------
    >>> from rltheory.mdp.zoo import two_state
    >>> float(empirical_mdp(two_state(p=0.5), 1000, rng=0).P[0, 1, 1])
    0.489
    """
    n = _count(n_per_pair, "n_per_pair")
    counts = sample_transitions(mdp, n, rng)
    mu = None if mdp.mu is None else require_host(mdp.mu, "empirical_mdp")
    return FiniteMDP(counts / float(n), require_host(mdp.R, "empirical_mdp"), mdp.gamma, mu)


@dataclass(frozen=True, eq=False)
class Trajectories:
    """Roll-outs of a policy: ``states[e, t]``, ``actions[e, t]``, ``rewards[e, t]``.

    ``states`` has ``horizon + 1`` columns (the last state reached is kept);
    ``actions`` and ``rewards`` have ``horizon``. Rewards are ``r(s_t, a_t)``.

    Checked on construction (lists are read as arrays): ``states`` an integer array
    ``(K, H+1)``, ``actions`` an integer array ``(K, H)``, ``rewards`` finite real numbers
    ``(K, H)`` (stored as float64); otherwise a located
    :class:`~rltheory.errors.InvalidModelError` (text, complex or boolean rewards: ``TypeError``).
    """

    states: np.ndarray
    actions: np.ndarray
    rewards: np.ndarray

    def __post_init__(self) -> None:
        # (nothing was checked: rewards of shape (2, 5) with actions (2, 2) reached
        # discounted_returns as numpy's 'matmul: Input operand 1 has a mismatch in its core
        # dimension 0', and a list of states had no .shape)
        cls = "Trajectories"
        st = _int_array(self.states, "states", cls)
        ac = _int_array(self.actions, "actions", cls)
        rw = _reward_host(self.rewards, f"{cls}.rewards")
        if st.ndim != 2 or st.shape[1] < 1:
            raise InvalidModelError(f"{cls}.states must have shape (K, H+1); got {st.shape}")
        want = (st.shape[0], st.shape[1] - 1)
        for name, a in (("actions", ac), ("rewards", rw)):
            if a.shape != want:
                raise InvalidModelError(
                    f"{cls}.{name} must have shape (K, H) = {want} to match states {st.shape}; "
                    f"got {a.shape}"
                )
        _check_finite_host(rw, "rewards", cls, ("k", "t"))
        object.__setattr__(self, "states", st)
        object.__setattr__(self, "actions", ac)
        object.__setattr__(self, "rewards", rw)

    @property
    def n_episodes(self) -> int:
        return int(self.actions.shape[0])

    @property
    def horizon(self) -> int:
        return int(self.actions.shape[1])

    def discounted_returns(self, gamma: float) -> np.ndarray:
        r"""``G_e = Σ_{t<H} γ^t r_t`` for every episode, shape ``(n_episodes,)``.

        Near the top of the float range the sum is taken on the rewards times a power of two ``c``
        with ``c·max|r|·Σ_t γ^t < 2^1000`` and divided by ``c`` (exact but for subnormal terms): the
        partial sums of ``(1e308, 1e308, −1e308)`` at ``γ = 1`` overflowed and returned ``inf`` (with
        numpy's overflow warning) for the return ``1e308``. A return beyond the float range
        (``(1e308, 1e308)`` at ``γ = 0.9``) raises ``ValueError`` naming the episode.
        """
        g = real_scalar(gamma)  # numpy scalars and 0-d arrays too (np.array(0.5) was refused)
        if not 0 <= g <= 1:  # NaN (bools, text, non-reals) fails too
            raise ValueError(f"gamma must be a number in [0, 1]; got {gamma!r}")
        w = g ** np.arange(self.horizon)
        r = np.asarray(self.rewards, dtype=np.float64)
        big = float(np.abs(r).max(initial=0.0))
        e = math.frexp(big)[1] + math.frexp(float(w.sum()))[1]  # c·max|r|·Σw < 2^(e + log2 c)
        c = math.ldexp(1.0, 1000 - e) if big > 0 and math.isfinite(big) and e > 1000 else 1.0
        if c == 1.0:
            return r @ w
        with np.errstate(over="ignore"):
            G = ((r * c) @ w) / c
        bad = np.flatnonzero(~np.isfinite(G))
        if bad.size:
            i = int(bad[0])
            raise ValueError(
                f"the discounted return of episode {i} at gamma = {g!r} is beyond the float range "
                f"(its rewards reach max|r| = {big:.3g} over horizon {self.horizon})"
            )
        return G


def _initial_distribution(mu: Any, S: int) -> np.ndarray:
    """``mu`` as a float64 probability vector of shape ``(S,)``; a located ``ValueError`` otherwise.

    The rule is :class:`FiniteMDP`'s for ``μ`` (:func:`rltheory._validate.check_probability`):
    entries ``≥ −atol`` (rounding negatives, never drawn) and a sum within ``atol·(1 + √S)`` of 1,
    ``atol = max(1e-8, 16·eps)`` of the input's floating dtype (float16 too, as
    :func:`rltheory._validate.as_distribution` judges it), so a model's own ``μ`` passes.
    """
    what = f"mu must be a probability vector of shape ({S},)"
    try:
        given = np.asarray(mu)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{what}; got {mu!r} ({exc})") from None
    # text, complex and date entries are a TypeError, as FiniteMDP's μ: a float cast parsed
    # ['0.5', '0.5'] and dropped the imaginary part of a complex μ with only a ComplexWarning
    mu0 = _real_host(given, "mu")
    if mu0.shape != (S,):
        raise ValueError(f"{what}; got shape {mu0.shape}: {mu!r}")
    # (a float16 μ was judged at float64's 1e-8: the uniform law over 7 states, whose float16
    # entries sum to 0.99976, was refused, while as_distribution accepts it at 16·eps = 0.0156)
    atol = _source_atol(given) if given.dtype.kind == "f" else PROB_ATOL
    bad = np.flatnonzero(~np.isfinite(mu0) | (mu0 < -atol))
    if bad.size:
        i = int(bad[0])
        raise ValueError(f"{what}; entry mu[{i}] = {float(mu0[i])} is not a finite number >= 0")
    if not abs(mu0.sum() - 1) <= atol * (1 + S**0.5):
        raise ValueError(
            f"{what}; its entries sum to {mu0.sum():.12g}, not 1 (atol={atol:g}·(1 + √S))"
        )
    return mu0


def rollout(
    mdp: FiniteMDP,
    pi: Any,
    horizon: int,
    n_episodes: int,
    rng: np.random.Generator | int,
    mu: Any = None,
) -> Trajectories:
    r"""Simulate ``n_episodes`` trajectories of length ``horizon`` under policy ``π``.

    ``s_0 ~ μ``, ``a_t ~ π(·|s_t)``, ``s_{t+1} ~ P(·|s_t, a_t)``, ``r_t = r(s_t, a_t)``,
    all episodes advanced together (vectorised inverse-CDF sampling).

    Parameters
    ----------
    mdp : FiniteMDP
        A single (unbatched) host model.
    pi : array
        Stochastic ``[S, A]`` or deterministic integer ``[S]`` policy.
    horizon, n_episodes : int ≥ 1
    rng : numpy.random.Generator or int
    mu : array (S,), optional
        Initial distribution; the model's ``μ`` (uniform if unset) by default. Checked
        to :class:`FiniteMDP`'s tolerance for ``μ`` (a ``ValueError`` names the entry or the sum;
        a ``TypeError`` refuses text, complex or date entries).

    Returns
    -------
    Trajectories

    Raises
    ------
    ValueError
        A count below 1, a batched model or policy, a ``mu`` off the simplex (located), or
        trajectories above :data:`MAX_ROLLOUT_BYTES` (``8·K·(H+1) + 16·K·H`` bytes), before any draw.
    TypeError
        A device model, an ``rng`` that is neither a Generator nor an int seed, non-real ``mu``.

    Notes
    -----
    ``E[Σ_{t<H} γ^t r_t] = μᵀ Σ_{t<H} (γP_π)^t r_π = V^π(μ) − γ^H μᵀ P_π^H V^π``, so
    the truncation bias is at most ``γ^H ‖r‖∞/(1−γ)``; the sample mean of the
    returns is within ``z·σ/√n`` of it with the CLT's probability.

    Examples
    --------
    >>> from rltheory.mdp.zoo import two_state
    >>> tr = rollout(two_state(), [1, 0], horizon=3, n_episodes=2, rng=0, mu=[0.0, 1.0])
    >>> tr.states.tolist(), tr.rewards.tolist()
    ([[1, 1, 1, 1], [1, 1, 1, 1]], [[1.0, 1.0, 1.0], [1.0, 1.0, 1.0]])
    """
    H = _count(horizon, "horizon")
    n = _count(n_episodes, "n_episodes")
    nbytes = 8 * n * (H + 1) + 16 * n * H  # Python ints: no wrap-around
    if nbytes > MAX_ROLLOUT_BYTES:  # (numpy's unlocated 'array is too big', or swapping)
        raise ValueError(
            f"rollout stores n_episodes·(horizon+1) states and n_episodes·horizon actions and "
            f"rewards: {n}·{H + 1} entries, {nbytes:.3g} bytes, above MAX_ROLLOUT_BYTES = "
            f"{MAX_ROLLOUT_BYTES} (rltheory.mdp.sample.MAX_ROLLOUT_BYTES)"
        )
    gen = _rng(rng)
    if mdp.batch_shape:
        raise ValueError(
            f"rollout needs a single MDP; got batch_shape={mdp.batch_shape} (index it: mdp[i])"
        )
    P = require_host(mdp.P, "rollout").astype(np.float64)
    R = require_host(mdp.R, "rollout").astype(np.float64)
    pol = require_host(as_stochastic_policy(mdp, pi), "rollout").astype(np.float64)
    if pol.ndim != 2:
        raise ValueError(f"rollout needs one policy of shape (S, A) or (S,); got {pol.shape}")
    if mu is None:
        mu0 = require_host(mdp.initial_distribution(), "rollout").astype(np.float64)
    else:
        mu0 = _initial_distribution(mu, mdp.S)
    cdf_P, cdf_pi, cdf_mu = _cdf(P), _cdf(pol), _cdf(mu0[None, :])
    states = np.empty((n, H + 1), dtype=np.int64)
    actions = np.empty((n, H), dtype=np.int64)
    rewards = np.empty((n, H))
    states[:, 0] = _draw(np.broadcast_to(cdf_mu, (n, mdp.S)), gen.random(n))
    for t in range(H):
        s = states[:, t]
        a = _draw(cdf_pi[s], gen.random(n))
        actions[:, t] = a
        rewards[:, t] = R[s, a]
        states[:, t + 1] = _draw(cdf_P[s, a], gen.random(n))
    return Trajectories(states, actions, rewards)
