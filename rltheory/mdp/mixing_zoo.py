r"""MDPs with a dial for the mixing time, for average-reward experiments.

=====================  ==============================================================
:func:`ring_mdp`       lazy walk on an ``n``-cycle; the uniform policy mixes in ``Θ(n²)``
:func:`two_room_mdp`   two rooms joined by a door crossed with probability ``p``; the
                       uniform policy mixes in ``Θ(1/p)`` for fixed room size
=====================  ==============================================================

Both default to the average-reward criterion (``gamma=None``). They are
communicating but not unichain (some deterministic policies trap the walk in a
part of the state space), so they exercise the weakly-communicating solvers; the
uniform policy's chain is irreducible and aperiodic. The exceptions at the edges of
the parameter ranges: ``ring_mdp(2)`` is recurrent and ``ring_mdp(3)`` unichain (a
3-cycle has no room for two disjoint closed sets); with ``0 < slip < 1`` (and ``laziness < 1``)
every action moves to both neighbours with positive probability, so every policy's chain is
irreducible and ``ring_mdp`` is recurrent for every ``n``; with ``laziness=0`` and even ``n``
every policy's chain is bipartite, so the uniform one has period 2 and ``t_mix`` is
infinite (:func:`rltheory.mdp.mixing_time` refuses it); with ``laziness=1`` every state
is absorbing (``P = I``, a multichain model whose gain depends on the start). Each comes with a
``reward="sparse"`` variant (a single rewarding state, the regime where
exploration and mixing interact) and a ``"dense"`` one.

The *laziness dial* of :func:`ring_mdp` changes the mixing time and nothing else.
Every policy's kernel is ``P_α = αI + (1−α)P⁰`` (``P⁰`` the kernel at ``α = 0``), so
``μᵀP_α = μᵀ ⇔ μᵀP⁰ = μᵀ``: the stationary law, the gain ``J(θ)`` of every policy, its
gradient and ``g*`` do not depend on ``α``, the bias is ``h_α = h⁰/(1−α)`` and the
spectrum maps as ``λ ↦ α + (1−α)λ``, so ``t_mix`` grows like ``1/(1−α)``. Growing ``n``
instead also grows the state space (and, with the sparse reward, the exploration
problem) together with ``t_mix ∝ n²``. ``tests/mdp/test_mixing_families.py`` checks
these identities; the ``mac-mixing`` experiment learns on this dial.

Lazy cycle facts used by the tests (Levin, Peres & Wilmer 2017, §12.3.1): the walk
``P = αI + (1−α)(C + Cᵀ)/2`` on ``ℤ_n`` has eigenvalues ``α + (1−α)cos(2πk/n)``,
so its spectral gap is ``(1−α)(1 − cos(2π/n)) ~ 2π²(1−α)/n²``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._validate import check_int
from ..backend import to_numpy
from .model import FiniteMDP
from .zoo import _build, _probability

__all__ = ["ring_mdp", "two_room_mdp"]


def _keep_support(P: np.ndarray, mdp: FiniteMDP, what: str) -> FiniteMDP:
    """``mdp`` unless a transition that is positive in float64 rounded to 0 in ``mdp``'s dtype (which
    changes the chain structure the docstrings promise: a disconnected door, a lost self-loop)."""
    lost = (P > 0) & ~(to_numpy(mdp.P) > 0)
    if lost.any():
        s, a, t = (int(i) for i in np.argwhere(lost)[0])
        raise ValueError(
            f"{what}: P[{s}, {a}, {t}] = {P[s, a, t]:.3g} underflows to 0 in {mdp.P.dtype}, which changes the "
            "model's structure; use a larger value or float64"
        )
    return mdp


def _reward_kind(reward: Any) -> str:
    if reward not in ("sparse", "dense"):
        raise ValueError(f"reward must be 'sparse' or 'dense'; got {reward!r}")
    return reward


def ring_mdp(
    n: int,
    *,
    laziness: float = 0.5,
    slip: float = 0.0,
    reward: str = "sparse",
    gamma: float | None = None,
    xp: Any = None,
    dtype: Any = None,
) -> FiniteMDP:
    r"""Walk on the cycle ``ℤ_n`` with actions 0 = step −1 and 1 = step +1.

    ``P(s|s, a) = α`` (laziness); otherwise the intended step w.p. ``1 − slip`` and the
    opposite one w.p. ``slip`` (for ``0 < slip < 1`` every policy's chain is then irreducible: a
    recurrent model, not the communicating multichain one of ``slip ∈ {0, 1}``). Under the uniform
    policy the chain is the lazy simple
    random walk ``αI + (1−α)(C + Cᵀ)/2`` for every ``slip``, whose mixing time grows
    as ``n²/(1−α)`` (for ``α > 0`` or odd ``n``; at ``α = 0`` and even ``n`` it has period 2,
    and at ``α = 1`` it is the identity: see the module notes). At fixed ``n`` the laziness rescales time only: the gain of every
    policy (hence ``g*`` and ``∇J``) is the same for every ``α < 1`` (module docstring). Rewards: ``"sparse"`` pays 1 in state 0 only; ``"dense"`` pays
    ``(1 + cos(2πs/n))/2``; both ignore the action.

    Parameters
    ----------
    n : int ≥ 2
    laziness, slip : float in [0, 1]
    reward : {"sparse", "dense"}
    gamma : float in [0, 1) or None (average reward, default)
    xp, dtype : optional array namespace and dtype of the returned model

    Examples
    --------
    >>> import numpy as np
    >>> mdp = ring_mdp(4)
    >>> mdp.P[1, 1]  # from state 1, step +1: stay w.p. 1/2, move to 2 w.p. 1/2
    array([0. , 0.5, 0.5, 0. ])
    """
    n = check_int(n, "n", 2)
    a = _probability(laziness, "laziness")
    e = _probability(slip, "slip")
    kind = _reward_kind(reward)
    P = np.zeros((n, 2, n))
    s = np.arange(n)
    for act, step in ((0, -1), (1, 1)):
        P[s, act, s] += a
        P[s, act, (s + step) % n] += (1 - a) * (1 - e)
        P[s, act, (s - step) % n] += (1 - a) * e
    if kind == "sparse":
        R = np.zeros((n, 2))
        R[0] = 1.0
    else:
        R = np.repeat(((1 + np.cos(2 * np.pi * s / n)) / 2)[:, None], 2, axis=1)
    return _keep_support(
        P, _build(P, R, gamma, None, xp, dtype), f"ring_mdp(laziness={a}, slip={e})"
    )


def two_room_mdp(
    room_size: int,
    bottleneck: float,
    *,
    reward: str = "sparse",
    gamma: float | None = None,
    xp: Any = None,
    dtype: Any = None,
) -> FiniteMDP:
    r"""Two rooms of ``room_size`` states joined by a door crossed with probability ``p = bottleneck``.

    States ``0..n−1`` form the left room (door ``n−1``), ``n..2n−1`` the right room
    (door ``n``). Action 0 ("wander") moves to a uniform state of the current room.
    Action 1 ("door") from a door crosses to the other door w.p. ``p`` and otherwise
    wanders; from any other state it moves to the room's door w.p. 1/2 and stays
    w.p. 1/2. The uniform policy's chain is irreducible and aperiodic for ``p > 0`` and
    needs ``Θ(1/p)`` steps to cross, so its ``t_mix`` grows like ``1/p``. A ``p`` that rounds to 0 in
    the requested ``dtype`` (1e-50 in float32) would disconnect the rooms and raises ``ValueError``,
    as does a ``laziness`` or ``slip`` of :func:`ring_mdp` that underflows.
    Rewards: ``"sparse"`` pays 1 in the far corner ``2n−1`` of the right room;
    ``"dense"`` pays ``s/(2n−1)``.

    Parameters
    ----------
    room_size : int ≥ 2
    bottleneck : float in (0, 1]
    reward : {"sparse", "dense"}
    gamma : float in [0, 1) or None (average reward, default)

    Examples
    --------
    >>> mdp = two_room_mdp(2, 0.1)
    >>> mdp.S, mdp.A, mdp.P[1, 1].tolist()  # door of the left room, action "door"
    (4, 2, [0.45, 0.45, 0.1, 0.0])
    """
    n = check_int(room_size, "room_size", 2)
    p = _probability(bottleneck, "bottleneck")
    if p == 0.0:
        raise ValueError("bottleneck must be > 0 (p = 0 disconnects the rooms)")
    kind = _reward_kind(reward)
    S = 2 * n
    P = np.zeros((S, 2, S))
    for s in range(S):
        room = np.arange(n) if s < n else np.arange(n, S)
        door, other = (n - 1, n) if s < n else (n, n - 1)
        P[s, 0, room] = 1.0 / n
        if s == door:
            P[s, 1, room] = (1 - p) / n
            P[s, 1, other] += p
        else:
            P[s, 1, s] += 0.5
            P[s, 1, door] += 0.5
    if kind == "sparse":
        R = np.zeros((S, 2))
        R[S - 1] = 1.0
    else:
        R = np.repeat((np.arange(S) / (S - 1))[:, None], 2, axis=1)
    return _keep_support(P, _build(P, R, gamma, None, xp, dtype), f"two_room_mdp(bottleneck={p})")
