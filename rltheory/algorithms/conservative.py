r"""Tabular conservative Q-learning (CQL): the fixed point and its underestimation property.

Pessimism measured by the behaviour's action probabilities instead of counts:
:func:`cql` (greedy improvement on the CQL fixed point) and
:func:`conservative_evaluation` (CQL policy evaluation, ``V̂^π ≤ V^π`` for the exact model).

References
----------
Kumar, A., Zhou, A., Tucker, G., Levine, S. (2020). Conservative Q-learning for offline
RL. NeurIPS 33, eq. (2), Thm 3.2.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._validate import PROB_ATOL, _where, check_real
from ..errors import InvalidModelError
from ..mdp._dataset_checks import _real_host
from ..mdp.offline_data import EmpiricalModel, EpisodeDataset, empirical_model
from ._offline_common import OfflineResult, _check_data, _row_sum_tol

__all__ = ["cql", "conservative_evaluation"]


def _check_alpha(alpha: Any) -> float:
    return check_real(alpha, "alpha", low=0.0)


def _check_range(q: np.ndarray, B: np.ndarray, pen: np.ndarray, where: np.ndarray, h: int, what: str, name: str) -> None:
    """``q = B̂ − penalty`` must be finite where used: a located error instead of ``±inf`` or NaN values."""
    bad = where & ~np.isfinite(q)
    if np.any(bad):
        idx = tuple(int(i) for i in np.argwhere(bad)[0])
        at = ", ".join(f"{k}={v}" for k, v in zip(("s", "a"), idx, strict=False))
        raise ValueError(
            f"{what}: {name}_{h}({at}) = B̂ − α·penalty exceeds the float range (B̂ = {B[idx]:.6g}, "
            f"α·penalty = {pen[idx]:.6g}); values scale with the rewards and α: divide both by a power of 2"
        )


def _model(data_or_model: Any, what: str) -> EmpiricalModel:
    if isinstance(data_or_model, EpisodeDataset):
        # (the checked dataset: a one-player game dataset is read as a single-agent one)
        return empirical_model(_check_data(data_or_model, what, unit_rewards=False))
    if isinstance(data_or_model, EmpiricalModel):
        if len(data_or_model.action_shape) != 1:
            raise InvalidModelError(f"{what} is single-agent; the model has joint actions {data_or_model.action_shape}")
        return _check_model(data_or_model, what)
    raise TypeError(f"{what} needs an EpisodeDataset or EmpiricalModel; got {type(data_or_model).__name__}")


def _check_model(m: EmpiricalModel, what: str) -> EmpiricalModel:
    """A hand-built (e.g. population) :class:`EmpiricalModel`: shapes agree, entries finite, rows distributions.

    The class itself does not validate (models from :func:`empirical_model` are valid by
    construction); a NaN or unnormalised ``behaviour``, a ``P`` row off the simplex or a ``P``
    with more steps than ``counts`` ran silently (``behaviour = (1, 1)`` halved CQL's penalty).
    """
    counts = _real_host(m.counts, "model.counts")
    if counts.ndim != 3 or 0 in counts.shape:
        raise InvalidModelError(f"{what}: model.counts must have shape (H, S, A) with H, S, A >= 1; got {counts.shape}")
    H, S, A = counts.shape
    if m.action_shape != (A,):
        raise InvalidModelError(f"{what}: model.action_shape must be (A,) = {(A,)} (from model.counts); got {m.action_shape}")
    arrays = {
        "counts": (counts, (H, S, A), ("h", "s", "a")),
        "P": (_real_host(m.P, "model.P"), (H, S, A, S), ("h", "s", "a", "s'")),
        "R": (_real_host(m.R, "model.R"), (1, H, S, A), ("i", "h", "s", "a")),
        "behaviour": (_real_host(m.behaviour, "model.behaviour"), (H, S, A), ("h", "s", "a")),
    }
    for name, (x, shape, names) in arrays.items():
        if x.shape != shape:
            raise InvalidModelError(f"{what}: model.{name} must have shape {shape} (H, S, A from model.counts); got {x.shape}")
        bad = ~np.isfinite(x) | ((x < 0) if name != "R" else np.zeros(x.shape, dtype=bool))
        if np.any(bad):
            idx = tuple(int(i) for i in np.argwhere(bad)[0])
            rule = "finite" if name == "R" else "finite and non-negative"
            raise InvalidModelError(f"{what}: model.{name} must be {rule}; model.{name}{_where(idx, names)} = {x[idx]:.6g}")
    beh, P = arrays["behaviour"][0], arrays["P"][0]

    def atol(x: Any, n: int) -> float:  # as check_probability: never below 16 eps of the given dtype (float32 rows round)
        dt = np.asarray(x).dtype
        eps = float(np.finfo(dt).eps) if dt.kind == "f" else 0.0
        a = max(PROB_ATOL, 16.0 * eps)
        return a * max(1, n) ** 0.5 + a

    tot = beh.sum(-1)
    off = (tot > 0) & (np.abs(tot - 1.0) > atol(m.behaviour, A))  # a row is a distribution or, for an unvisited state, all zero
    if np.any(off):
        h, s = (int(i) for i in np.argwhere(off)[0])
        raise InvalidModelError(
            f"{what}: model.behaviour[h={h}, s={s}, :] must sum to 1 (or be all zero at an unvisited state); "
            f"got {beh[h, s].tolist()}"
        )
    rows = P.sum(-1)
    off = (beh > 0) & (np.abs(rows - 1.0) > atol(m.P, S))  # every pair the behaviour takes needs a next-state law
    if np.any(off):
        h, s, a = (int(i) for i in np.argwhere(off)[0])
        raise InvalidModelError(
            f"{what}: model.P[h={h}, s={s}, a={a}, :] must sum to 1 where the behaviour takes a; sums to {rows[h, s, a]:.12g}"
        )
    return m


def cql(data: EpisodeDataset | EmpiricalModel, *, alpha: float) -> OfflineResult:
    r"""Tabular conservative Q-learning (CQL) with greedy policy improvement.

    The CQL(ℛ) objective of Kumar et al. (2020, eq. (2)) at step ``h`` and state ``s``,
    ``α (E_{a~π}Q − E_{a~π̂_b}Q) + ½ E_{a~π̂_b}(Q − B̂_h V̂_{h+1})²``, has the tabular
    fixed point ``Q̂_h(s, a) = B̂_h V̂_{h+1}(s, a) − α(π_h(a|s)/π̂_b(a|s) − 1)``. For a
    deterministic ``π_h(s) = a`` the value is ``B̂(s, a) − α(1/π̂_b(a|s) − 1)``, so the
    greedy improvement step chooses

        ``π̂_h(s) = argmax_{a : π̂_b(a|s) > 0} [ B̂_h V̂_{h+1}(s, a) − α/π̂_b(a|s) ]``

    and ``V̂_h(s)`` is that maximum plus ``α``. Actions never taken in ``s`` get
    ``Q̂ = −∞`` (reported as the smallest float); unvisited states get ``V̂ = 0``.

    Parameters
    ----------
    data : EpisodeDataset or EmpiricalModel
        (An :class:`EmpiricalModel` lets one pass the population model.)
    alpha : float ≥ 0
        Conservatism; ``α = 0`` is certainty equivalence.

    Returns
    -------
    OfflineResult
        ``Q`` holds ``B̂ − α(1/π̂_b − 1)`` on taken actions; ``bonus`` the penalty.

    Raises
    ------
    ValueError
        A bad ``alpha``, or a value ``B̂ − α(1/π̂_b − 1)`` beyond the float range (the step,
        state, action, ``B̂`` and the penalty are named).
    InvalidModelError
        A hand-built ``EmpiricalModel`` whose arrays disagree in shape, hold a non-finite (or
        negative) entry, or whose behaviour rows (visited states) or ``P`` rows (taken pairs)
        do not sum to 1 — located; a joint-action model.

    Notes
    -----
    The penalty ``α/π̂_b(a|s)`` is pessimism measured by the behaviour's action
    probability instead of counts (Kumar et al. 2020, Thm 3.2: the CQL value of the
    learned policy underestimates its true value for large enough ``α``; see
    :func:`conservative_evaluation`).

    Examples
    --------
    >>> import numpy as np
    >>> a = np.array([[0]] * 100 + [[1]]); r = np.array([[0.5]] * 100 + [[1.0]])
    >>> d = EpisodeDataset(np.zeros((101, 2), int), a, r, S=1, A=2)
    >>> cql(d, alpha=0.01).policy.tolist(), cql(d, alpha=0.0).policy.tolist()
    ([[0]], [[1]])
    """
    al = _check_alpha(alpha)
    m = _model(data, "cql")
    H, S, A = m.counts.shape
    tiny = np.finfo(np.float64).min
    Q = np.full((H, S, A), tiny)
    V = np.zeros((H + 1, S))
    G = np.zeros((H, S, A))
    pol = np.zeros((H, S), dtype=np.int64)
    for h in range(H - 1, -1, -1):
        taken = m.behaviour[h] > 0
        with np.errstate(over="ignore", invalid="ignore"):  # checked below
            B = m.R[0, h] + m.P[h] @ V[h + 1]
            pen = np.where(taken, al * (1.0 / np.where(taken, m.behaviour[h], 1.0) - 1.0), 0.0)
            q = np.where(taken, B - pen, tiny)
        _check_range(q, B, pen, taken, h, "cql", "Q̂")
        seen = taken.any(-1)
        Q[h] = q
        G[h] = pen
        pol[h] = np.argmax(q, axis=-1)
        V[h] = np.where(seen, np.max(q, axis=-1), 0.0)
    return OfflineResult(pol, Q, V, G, m.counts, "cql")


def conservative_evaluation(model: EmpiricalModel, policy: Any, *, alpha: float) -> np.ndarray:
    r"""CQL policy evaluation fixed point ``V̂^π_h = Σ_a π_h(a|s)[B̂_h V̂^π_{h+1} − α(π_h(a|s)/π̂_b(a|s) − 1)]``.

    Returns ``V̂^π`` of shape ``(H+1, S)``. With the exact model (``P̂ = P``, ``r̂ = r``)
    ``V̂^π = V^π − α Σ_{h'≥h} E_π[D_CQL]`` where
    ``D_CQL(s) = Σ_a π(a|s)²/π_b(a|s) − 1 ≥ 0`` (Cauchy–Schwarz), so ``V̂^π ≤ V^π``
    pointwise for every ``α ≥ 0`` — the underestimation property of Kumar et al.
    (2020, Thm 3.2) without sampling error.

    Raises
    ------
    ValueError
        A value beyond the float range (``(h, s, a)``, ``B̂`` and the penalty named), or
        ``policy`` is not an ``(H, S, A)`` or ``(S, A)`` array of distributions (the first
        bad row is named), or ``π`` puts mass on an action the behaviour never takes in a
        visited state (the CQL penalty is then infinite; the first such ``(h, s, a)`` is named).
    InvalidModelError
        A hand-built ``EmpiricalModel`` whose arrays disagree in shape, hold a non-finite (or
        negative) entry, or whose behaviour rows (visited states) or ``P`` rows (taken pairs)
        do not sum to 1 — located; a joint-action model.

    Examples
    --------
    >>> import numpy as np
    >>> from rltheory.mdp.offline_data import EmpiricalModel
    >>> m = EmpiricalModel(np.ones((1, 1, 2)), np.ones((1, 1, 2, 1)), np.ones((1, 1, 1, 2)),
    ...                    np.full((1, 1, 2), 0.5), (2,))
    >>> conservative_evaluation(m, np.array([[[1.0, 0.0]]]), alpha=1.0).tolist()   # 1 − α(2 − 1)
    [[0.0], [0.0]]
    """
    al = _check_alpha(alpha)
    m = _model(model, "conservative_evaluation")
    H, S, A = m.counts.shape
    pi = _real_host(policy, "policy")  # a float cast parsed text and dropped imaginary parts
    if pi.shape not in ((H, S, A), (S, A)):
        raise ValueError(f"policy must have shape (H, S, A) = {(H, S, A)} or (S, A) = {(S, A)}; got {pi.shape}")
    # a row is bad if an entry is negative or its sum is off by more than the dtype's tolerance (1e-8
    # refused a float32 uniform row over 7 actions); NaN counts as bad
    bad = ~np.all(pi >= 0, axis=-1) | ~(np.abs(pi.sum(-1) - 1.0) <= _row_sum_tol(policy, A))
    if bad.any():
        idx = tuple(int(i) for i in np.argwhere(bad)[0])
        where = ", ".join(f"{k}={v}" for k, v in zip(("h", "s")[-len(idx):], idx, strict=True))
        raise ValueError(f"policy[{where}] must be a distribution over the {A} actions; got {pi[idx].tolist()}")
    pi = np.broadcast_to(pi, (H, S, A))
    seen = m.behaviour.sum(-1) > 0
    bad = (pi > 0) & (m.behaviour <= 0) & seen[..., None]
    if bad.any():
        h, s, a = (int(i) for i in np.argwhere(bad)[0])
        raise ValueError(f"policy[h={h}, s={s}, a={a}] = {pi[h, s, a]:.3g} > 0 but the behaviour never takes that action there")
    V = np.zeros((H + 1, S))
    for h in range(H - 1, -1, -1):
        with np.errstate(over="ignore", invalid="ignore"):  # checked below
            B = m.R[0, h] + m.P[h] @ V[h + 1]
            ratio = np.where(m.behaviour[h] > 0, pi[h] / np.where(m.behaviour[h] > 0, m.behaviour[h], 1.0), 0.0)
            pen = al * (ratio - 1.0)
            q = pi[h] * (B - pen)
            v = np.sum(q, axis=-1)
        _check_range(q, B, pen, (pi[h] > 0) & seen[h][:, None], h, "conservative_evaluation", "π·Q̂")
        if not np.all(np.isfinite(v[seen[h]])):  # Σ_a of finite terms rounded past the range
            raise ValueError(f"conservative_evaluation: V̂_{h} exceeds the float range at s={int(np.argmax(~np.isfinite(v)))}; "
                             "divide the rewards and α by a power of 2")
        V[h] = np.where(seen[h], v, 0.0)
    return V
