r"""A zoo of finite MDPs used throughout the theory literature.

Every model is built on the host with numpy, then moved once with
``xp.asarray`` when another array namespace is requested (``xp=``), in
``float64`` unless ``dtype=`` says otherwise. Random models take an explicit
``numpy.random.Generator`` or integer seed and never touch the global RNG, so
``garnet(50, 4, 3, gamma=0.9, rng=0)`` is the same model on every machine.

=====================  =====================================================
:func:`garnet`         sparse random MDPs (Archibald, McKinnon & Thomas 1995)
:func:`random_mdp`     dense random MDPs with Dirichlet rows, batched
:func:`gridworld`      slippery grid with walls and absorbing goals
:func:`cliff_walking`  Sutton & Barto (2018), Example 6.6
:func:`chain`          the n-state chain of Dearden, Friedman & Russell (1998)
:func:`riverswim`      RiverSwim of Strehl & Littman (2008)
:func:`two_state`      two states, closed-form ``V*`` and ``V^π``
=====================  =====================================================

Grid models return a :class:`GridWorld`: the model plus the geometry needed to
draw a value function as a heatmap (:meth:`GridWorld.to_grid`); they live in
:mod:`rltheory.mdp.gridworlds` and are re-exported here, as are the shared argument
checks of :mod:`rltheory.mdp._zoo_args`.

References
----------
Archibald, T. W., McKinnon, K. I. M., Thomas, L. C. (1995). On the generation of Markov
decision processes. *J. Operational Research Society* 46(3):354–361.
Dearden, R., Friedman, N., Russell, S. (1998). Bayesian Q-learning. AAAI.
Strehl, A. L., Littman, M. L. (2008). An analysis of model-based interval estimation for
Markov decision processes. *J. Computer and System Sciences* 74(8):1309–1331.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._validate import check_int, check_real
from ._zoo_args import _batch_shape, _build, _generator, _probability, _scalar
from .gridworlds import GRID_ACTIONS as GRID_ACTIONS
from .gridworlds import GridWorld, cliff_walking, gridworld
from .model import FiniteMDP

#: Largest dense transition array ``P[..., S, A, S]`` (float64 bytes, as built on the host, batch
#: included) that :func:`garnet`, :func:`random_mdp`, :func:`chain` and :func:`riverswim` build:
#: ``2**36`` bytes (64 GiB). A larger model is a located ``ValueError`` before any draw;
#: ``garnet(10**6, 1, 1001)`` (an 8e12-byte P) drew successor sets for hours before numpy refused P.
MAX_ZOO_P_BYTES = 2**36

__all__ = [
    "MAX_ZOO_P_BYTES",
    "GridWorld",
    "garnet",
    "random_mdp",
    "gridworld",
    "cliff_walking",
    "chain",
    "riverswim",
    "two_state",
]

# -- random models -------------------------------------------------------------------


def _check_dense_size(what: str, lead: tuple[int, ...], S: int) -> int:
    """Rows ``Π lead`` of a model whose dense float64 ``P[*lead, S]`` fits :data:`MAX_ZOO_P_BYTES`
    (Python integers: ``np.prod`` of a large ``batch_shape`` wrapped around in int64)."""
    n_rows = math.prod(lead)
    nbytes = n_rows * S * 8
    if nbytes > MAX_ZOO_P_BYTES:
        raise ValueError(
            f"{what}: the dense transition array P of shape {lead + (S,)} would need {nbytes:.3g} "
            f"bytes, more than MAX_ZOO_P_BYTES = 2**36 (rltheory.mdp.zoo); rltheory's models are dense"
        )
    return n_rows


def _distinct_subsets(gen: np.random.Generator, n: int, S: int, b: int) -> np.ndarray:
    """``n`` independent uniformly random ``b``-subsets of ``{0, …, S−1}`` (rows of an int array).

    For ``b² ≤ S`` rows of ``b`` i.i.d. uniform states are redrawn until their
    entries are distinct (rejection; a row is rejected w.p. ≤ b²/(2S) ≤ 1/2), which
    conditions an i.i.d. tuple on distinctness and so gives a uniform subset in
    ``O(n·b)``. Otherwise the subset is the ``b`` smallest of ``S`` i.i.d. uniform
    keys in increasing key order, drawn in chunks whose size depends on ``S`` only, so
    the rows depend on the seed only (up to exact ties among a row's keys, probability
    below ``S²·2⁻⁵⁴``).
    """
    if b * b <= S:
        succ = gen.integers(0, S, size=(n, b))
        bad = np.arange(n)
        while bad.size:
            srt = np.sort(succ[bad], axis=1)
            bad = bad[np.any(srt[:, 1:] == srt[:, :-1], axis=1)]
            succ[bad] = gen.integers(0, S, size=(bad.size, b))
        return succ
    out = np.empty((n, b), dtype=np.int64)
    chunk = max(1, (1 << 20) // S)
    for start in range(0, n, chunk):
        stop = min(n, start + chunk)
        keys = gen.random((stop - start, S))
        # argpartition returns the b smallest in an order that depends on numpy's partition
        # algorithm (its SIMD dispatch): with AVX2 disabled (NPY_DISABLE_CPU_FEATURES) the
        # successors of garnet(10, 3, 7, rng=1) came in another order, so P[0, 0] got other
        # probabilities from the same seed. Sorted by key, the order is the seed's alone.
        idx = np.argpartition(keys, b - 1, axis=1)[:, :b]
        order = np.argsort(np.take_along_axis(keys, idx, axis=1), axis=1, kind="stable")
        out[start:stop] = np.take_along_axis(idx, order, axis=1)
    return out


def garnet(
    S: int,
    A: int,
    b: int,
    *,
    gamma: float,
    rng: np.random.Generator | int,
    batch_shape: tuple[int, ...] = (),
    xp: Any = None,
    dtype: Any = None,
) -> FiniteMDP:
    r"""Garnet ``G(S, A, b)``: each ``(s, a)`` has ``b`` random successors, ``r(s, a) ~ U[0, 1]``.

    Construction, independently for every ``(s, a)`` (and every batch index):

    1. the successor set ``N(s, a)`` is a uniformly random subset of ``b``
       distinct states;
    2. ``b − 1`` cut points ``u_1 ≤ … ≤ u_{b−1}`` are drawn i.i.d. ``U[0, 1]`` and
       sorted; the probabilities of the successors (in the random order they
       were drawn) are the spacings ``u_1 − 0, u_2 − u_1, …, 1 − u_{b−1}``, i.e. a uniform
       point of the ``(b−1)``-simplex;
    3. the reward ``r(s, a)`` is drawn i.i.d. ``U[0, 1]``.

    Parameters
    ----------
    S, A : int
        Numbers of states and actions (≥ 1).
    b : int
        Branching factor, ``1 ≤ b ≤ S``.
    gamma : float
        Discount factor in [0, 1).
    rng : numpy.random.Generator or int
        Source of randomness (an int is a seed).
    batch_shape : tuple of int
        Leading batch axes: that many independent garnets in one model.
    xp, dtype :
        Array namespace and float dtype of the result (numpy / float64 by default).

    Returns
    -------
    FiniteMDP
        ``P`` of shape ``batch_shape + (S, A, S)`` with exactly ``b`` non-zeros per row
        (almost surely), ``R`` of shape ``batch_shape + (S, A)``, uniform ``μ``.

    Raises
    ------
    ValueError
        ``S``, ``A`` or ``b`` not positive integers, ``b > S``, or a dense ``P`` (batch included)
        beyond :data:`MAX_ZOO_P_BYTES`.
    TypeError
        ``rng`` is neither a Generator nor an int.

    Notes
    -----
    Cost ``O(|batch|·S·A·b)`` time when ``b² ≤ S`` (``O(|batch|·S²A)`` otherwise) plus
    the dense ``P`` in memory; the model depends on the seed only.

    References
    ----------
    Archibald, T. W., McKinnon, K. I. M., Thomas, L. C. (1995). On the generation of
    Markov decision processes. *J. Operational Research Society* 46(3):354–361.

    Examples
    --------
    >>> mdp = garnet(5, 2, 3, gamma=0.9, rng=0)
    >>> (mdp.P > 0).sum(-1).tolist()
    [[3, 3], [3, 3], [3, 3], [3, 3], [3, 3]]
    """
    S = check_int(S, "S")
    A = check_int(A, "A")
    b = check_int(b, "b")
    if b > S:
        raise ValueError(f"branching factor b must satisfy 1 <= b <= S = {S}; got b={b}")
    gen = _generator(rng)
    lead = _batch_shape(batch_shape) + (S, A)
    n_rows = _check_dense_size("garnet", lead, S)
    succ = _distinct_subsets(gen, n_rows, S, b)
    cuts = np.sort(gen.random((n_rows, b - 1)), axis=1)
    edges = np.concatenate([np.zeros((n_rows, 1)), cuts, np.ones((n_rows, 1))], axis=1)
    P = np.zeros((n_rows, S))
    np.put_along_axis(P, succ, np.diff(edges, axis=1), axis=1)
    R = gen.random(lead)
    return _build(P.reshape(lead + (S,)), R, gamma, None, xp, dtype)


def random_mdp(
    S: int,
    A: int,
    *,
    gamma: float,
    rng: np.random.Generator | int,
    batch_shape: tuple[int, ...] = (),
    alpha: float = 1.0,
    xp: Any = None,
    dtype: Any = None,
) -> FiniteMDP:
    r"""Dense random MDP: ``P(·|s, a) ~ Dirichlet(α·1_S)``, ``r(s, a) ~ U[0, 1]``, i.i.d.

    Parameters
    ----------
    S, A : int
        Numbers of states and actions (≥ 1).
    gamma : float
        Discount factor in [0, 1).
    rng : numpy.random.Generator or int
        Source of randomness.
    batch_shape : tuple of int
        Leading batch axes (e.g. ``(1000,)`` for a thousand instances solved in one call).
    alpha : float
        Dirichlet concentration (> 0); ``α = 1`` is uniform on the simplex, small ``α``
        gives nearly deterministic rows.
    xp, dtype :
        Array namespace and float dtype of the result.

    Returns
    -------
    FiniteMDP
        Batched model with ``P`` of shape ``batch_shape + (S, A, S)``, uniform ``μ``.

    Raises
    ------
    ValueError
        ``S`` or ``A`` not positive integers, ``alpha`` not a positive finite number (or too large
        for the Dirichlet sampler), or a dense ``P`` (batch included) beyond :data:`MAX_ZOO_P_BYTES`.
    TypeError
        ``rng`` is neither a Generator nor an int.

    Notes
    -----
    Every row has full support almost surely, so every policy's chain is
    irreducible and aperiodic (useful for average-reward tests). That holds in floating
    point too for ``α ≥ 0.1`` (no zero entry among 1000 models of ``S = 20``, ``A = 4``), but
    not for small ``α``: numpy's Dirichlet sampler rounds the tiny entries to exactly 0
    (``α = 0.01``, ``S = 5``: about 9 of 50 entries), so the model can lose the property
    (``random_mdp(5, 2, alpha=0.01, rng=1)`` is not recurrent); check it with
    :func:`~rltheory.mdp.structure.classify_mdp` there.

    Examples
    --------
    >>> random_mdp(4, 2, gamma=0.9, rng=1, batch_shape=(3,)).batch_shape
    (3,)
    """
    S = check_int(S, "S")
    A = check_int(A, "A")
    alpha = _scalar(alpha)  # a 0-d array as its number, as the other zoo scalars
    if (
        isinstance(alpha, bool)
        or not isinstance(alpha, (int, float, np.integer, np.floating))
        or not alpha > 0
    ):
        raise ValueError(f"alpha must be a positive number; got {alpha!r}")
    if not math.isfinite(alpha):
        raise ValueError(f"alpha must be finite; got {alpha!r}")
    # numpy draws a Dirichlet row as S Gamma(α) variates divided by their sum, about S·α: past the
    # float range that sum is inf and every row came back 0 (reported as 'each P[s, a, :] must sum
    # to 1 ... sums to 0', a row the caller never wrote)
    big = float(np.finfo(np.float64).max) / S / (1.0 + 1e-6)
    if float(alpha) > big:
        raise ValueError(
            f"alpha = {float(alpha):.6g} is too large for S = {S}: a Dirichlet row is S Gamma(alpha) "
            f"variates over their sum, about S*alpha = {S} x {float(alpha):.6g}, beyond the float64 range; "
            f"alpha must be at most {big:.6g}"
        )
    gen = _generator(rng)
    lead = _batch_shape(batch_shape) + (S, A)
    _check_dense_size("random_mdp", lead, S)
    P = gen.dirichlet(np.full(S, float(alpha)), size=lead)
    R = gen.random(lead)
    return _build(P, R, gamma, None, xp, dtype)


# -- small classic examples ----------------------------------------------------------


def chain(
    n: int = 5,
    *,
    gamma: float = 0.99,
    slip: float = 0.2,
    small: float = 2.0,
    large: float = 10.0,
    xp: Any = None,
    dtype: Any = None,
) -> FiniteMDP:
    r"""The ``n``-state chain of Dearden, Friedman & Russell (1998) (also Strens 2000).

    States ``0 … n−1``, start ``0``. Action 0 ("forward") moves from ``s`` to
    ``s+1`` with reward 0, and at the last state stays there with reward
    ``large``. Action 1 ("back") returns to state 0 with reward ``small``. With
    probability ``slip`` the *other* action is performed instead (reward of the
    performed action). Without slip the myopic policy "back" earns ``small/(1−γ)``
    from state 0 and walking to the end and staying earns ``γ^{n−1} large/(1−γ)``, so
    exploration is needed; with ``slip > 0`` both values are mixed (at the paper's
    ``slip = 0.2``, γ = 0.9: about 16.02 and 25.50 instead of 20 and 65.61).

    Parameters
    ----------
    n : int ≥ 2
        Number of states (5 in the paper).
    gamma : float
        Discount.
    slip : float in [0, 1]
        Probability of performing the opposite action (0.2 in the paper).
    small, large : float
        Rewards of "back" and of "forward" at the end (2 and 10 in the paper).

    Returns
    -------
    FiniteMDP
        ``S = n``, ``A = 2``, ``μ`` = indicator of state 0.

    References
    ----------
    Dearden, R., Friedman, N., Russell, S. (1998). Bayesian Q-learning. AAAI, Fig. 1 ("Chain").
    Strens, M. (2000). A Bayesian framework for reinforcement learning. ICML, §5.

    Examples
    --------
    >>> m = chain(5, gamma=0.9)
    >>> float(m.R[0, 1]), float(m.R[4, 0])
    (1.6, 8.4)
    >>> import numpy as np
    >>> from rltheory.mdp import evaluate_policy
    >>> m0 = chain(5, gamma=0.9, slip=0.0)  # back: 2/(1-0.9); forward: 0.9^4·10/(1-0.9)
    >>> [round(float(evaluate_policy(m0, np.full(5, a))[0]), 9) for a in (1, 0)]
    [20.0, 65.61]
    """
    n = check_int(n, "n", 2)
    _check_dense_size("chain", (n, 2), n)
    slip = _probability(slip, "slip")
    small, large = check_real(small, "small"), check_real(large, "large")
    P = np.zeros((n, 2, n))
    R = np.zeros((n, 2))
    for s in range(n):
        fwd, r_fwd = (s + 1, 0.0) if s < n - 1 else (s, float(large))
        for a, (p_fwd, p_back) in enumerate(((1 - slip, slip), (slip, 1 - slip))):
            P[s, a, fwd] += p_fwd
            P[s, a, 0] += p_back
            R[s, a] = p_fwd * r_fwd + p_back * float(small)
    mu = np.zeros(n)
    mu[0] = 1.0
    return _build(P, R, gamma, mu, xp, dtype)


def riverswim(
    n: int = 6,
    *,
    gamma: float = 0.95,
    small: float = 5.0,
    large: float = 10_000.0,
    xp: Any = None,
    dtype: Any = None,
) -> FiniteMDP:
    r"""RiverSwim (Strehl & Littman 2008): swim up a river of ``n`` states.

    Action 0 ("left", with the current) moves deterministically one state left
    (state 0 stays, earning ``small``). Action 1 ("right", against the current):
    in an interior state moves right w.p. 0.3, stays w.p. 0.6, drifts left
    w.p. 0.1; in state 0 moves right w.p. 0.3, stays w.p. 0.7; in state ``n−1``
    stays w.p. 0.3 earning ``large`` and drifts left w.p. 0.7. So
    ``r(n−1, right) = 0.3·large`` (expected) and ``r(0, left) = small``. The start
    state is 1 or 2 with probability 1/2 each.

    Parameters
    ----------
    n : int ≥ 3
        Number of states (6 in the paper).
    gamma : float
        Discount.
    small, large : float
        Rewards 5 and 10000 of the paper (rescale, e.g. 0.005 and 1, as many later papers do).

    Returns
    -------
    FiniteMDP
        ``S = n``, ``A = 2``.

    References
    ----------
    Strehl, A. L., Littman, M. L. (2008). An analysis of model-based interval estimation
    for Markov decision processes. *J. Computer and System Sciences* 74(8):1309–1331,
    the RiverSwim domain of the experiments section.

    Examples
    --------
    >>> m = riverswim()
    >>> float(m.R[5, 1]), float(m.R[0, 0])
    (3000.0, 5.0)
    """
    n = check_int(n, "n", 3)
    _check_dense_size("riverswim", (n, 2), n)
    small, large = check_real(small, "small"), check_real(large, "large")
    P = np.zeros((n, 2, n))
    R = np.zeros((n, 2))
    for s in range(n):
        P[s, 0, max(s - 1, 0)] = 1.0
    P[0, 1, 0], P[0, 1, 1] = 0.7, 0.3
    for s in range(1, n - 1):
        P[s, 1, s - 1], P[s, 1, s], P[s, 1, s + 1] = 0.1, 0.6, 0.3
    P[n - 1, 1, n - 2], P[n - 1, 1, n - 1] = 0.7, 0.3
    R[0, 0] = float(small)
    R[n - 1, 1] = 0.3 * float(large)
    mu = np.zeros(n)
    mu[1] = mu[2] = 0.5
    return _build(P, R, gamma, mu, xp, dtype)


def two_state(
    *,
    gamma: float = 0.9,
    p: float = 0.5,
    r_low: float = 0.5,
    r_high: float = 1.0,
    cost: float = 0.0,
    xp: Any = None,
    dtype: Any = None,
) -> FiniteMDP:
    r"""Two states, two actions, closed-form values.

    State 0 ("low"), state 1 ("high"); action 0 = "stay", action 1 = "move".

    * ``(0, stay)``: stay in 0, reward ``r_low``;
    * ``(0, move)``: reach 1 w.p. ``p``, else stay in 0; reward ``−cost``;
    * ``(1, stay)``: stay in 1, reward ``r_high``;
    * ``(1, move)``: go to 0, reward ``r_high``.

    For a policy with ``x = p·π(move|0)``, ``y = π(move|1)``,
    ``a = r_π(0) = (1−π(move|0)) r_low − π(move|0) cost`` and ``h = r_π(1) = r_high``,
    solving the 2 × 2 system ``(I − γP_π) V = r_π`` (determinant
    ``(1−γ)(1−γ+γx+γy)``) gives

    ``V^π(0) = [(1−γ+γy) a + γx h] / [(1−γ)(1−γ+γx+γy)]``,
    ``V^π(1) = [γy a + (1−γ+γx) h] / [(1−γ)(1−γ+γx+γy)]``.

    When ``r_high ≥ r_low`` and ``r_high ≥ −cost``, staying in 1 is optimal,
    ``V*(1) = r_high/(1−γ)``, and

    ``V*(0) = max( r_low/(1−γ), (−cost + γp r_high/(1−γ)) / (1 − γ(1−p)) )``,

    the second term being the value of "move until in 1".

    Examples
    --------
    >>> m = two_state(gamma=0.9)
    >>> m.P[0, 1].tolist(), m.R.tolist()
    ([0.5, 0.5], [[0.5, 0.0], [1.0, 1.0]])
    """
    p = _probability(p, "p")
    r_low, r_high, cost = _scalar(r_low), _scalar(r_high), _scalar(cost)
    for field, v in (("r_low", r_low), ("r_high", r_high), ("cost", cost)):
        if (
            isinstance(v, bool)
            or not isinstance(v, (int, float, np.floating, np.integer))
            or not np.isfinite(v)
        ):
            raise ValueError(f"{field} must be a finite number; got {v!r}")
    P = np.zeros((2, 2, 2))
    P[0, 0, 0] = 1.0
    P[0, 1, 0], P[0, 1, 1] = 1.0 - p, p
    P[1, 0, 1] = 1.0
    P[1, 1, 0] = 1.0
    R = np.array([[float(r_low), 0.0 - float(cost)], [float(r_high), float(r_high)]])
    return _build(P, R, gamma, None, xp, dtype)
