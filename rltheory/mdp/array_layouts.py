r"""Array layouts of other MDP libraries: mdptoolbox's ``(A, S, S)`` and QuantEcon's forms.

=================================  ============================================
:func:`to_mdptoolbox`              FiniteMDP → ``(P[A, S, S], R[S, A])``
:func:`from_mdptoolbox`            ``(P[A, S, S], R)`` → FiniteMDP
:func:`to_quantecon_sa`            FiniteMDP → state-action-pair form ``(R, Q, s_indices, a_indices)``
:func:`from_quantecon`             a ``DiscreteDP`` (or its arrays) → FiniteMDP
=================================  ============================================

The converters run on the host (numpy); device models raise ``TypeError``. Arrays keep
their floating dtype both ways (float32 stays float32); other inputs become float64, and
complex or text arrays raise ``TypeError`` naming the argument.
Layouts are converted, never guessed: a wrong shape raises
:class:`~rltheory.errors.InvalidModelError` naming the argument, the layout expected and
the shape received, and the result is validated as every :class:`~rltheory.mdp.FiniteMDP`
is. Re-exported by :mod:`rltheory.mdp.interop`.

References
----------
Chadès, I., Chapron, G., Cros, M.-J., Garcia, F., Sabbadin, R. (2014). MDPtoolbox: a
multi-platform toolbox to solve stochastic dynamic programming problems. *Ecography*
37(9):916–920 (the ``P[a, s, s']`` layout).
Sargent, T. J., Stachurski, J. *Quantitative Economics with Python*, "Discrete State
Dynamic Programming" (QuantEcon's ``DiscreteDP`` and its state-action-pair form).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..backend import as_float, require_host
from ..errors import InvalidModelError
from .model import FiniteMDP

__all__ = ["to_mdptoolbox", "from_mdptoolbox", "to_quantecon_sa", "from_quantecon"]


def _single_host(mdp: FiniteMDP, what: str) -> tuple[np.ndarray, np.ndarray]:
    if not isinstance(mdp, FiniteMDP):
        raise TypeError(f"{what} needs a FiniteMDP; got {type(mdp).__name__}")
    if mdp.batch_shape:
        raise ValueError(
            f"{what} converts a single MDP; got batch_shape={mdp.batch_shape} (index it: mdp[i])"
        )
    # copies in the model's own dtype (a float32 model exports float32)
    return np.array(require_host(mdp.P, what)), np.array(require_host(mdp.R, what))


def _dense(x: Any, field: str) -> np.ndarray:
    """numpy array from a dense array or a scipy sparse matrix; float32 stays float32, else float64.

    Complex, string, date and record arrays raise ``TypeError`` naming ``field``
    (:func:`rltheory.backend.as_float`): the cast dropped an imaginary part with only numpy's
    warning (``R + 1j`` became ``R``) and parsed text as numbers (``R.astype(str)`` was accepted)."""
    a = np.asarray(x.toarray() if hasattr(x, "toarray") else x)
    return np.asarray(as_float(a, np, field=field))


# -- mdptoolbox ---------------------------------------------------------------------


def to_mdptoolbox(mdp: FiniteMDP) -> tuple[np.ndarray, np.ndarray]:
    r"""``(P[a, s, s'], R[s, a])``: the layout of (py)mdptoolbox.

    Examples
    --------
    >>> from rltheory.mdp.zoo import two_state
    >>> P, R = to_mdptoolbox(two_state())
    >>> P.shape, R.shape
    ((2, 2, 2), (2, 2))
    """
    P, R = _single_host(mdp, "to_mdptoolbox")
    return np.ascontiguousarray(P.transpose(1, 0, 2)), R.copy()


def _stacked(x: Any, field: str) -> np.ndarray:
    """numpy array from an array, or from a list / object array of per-action (sparse) matrices."""
    if isinstance(x, (list, tuple)) or (isinstance(x, np.ndarray) and x.dtype == np.object_):
        mats = [_dense(e, f"{field}[{k}]") for k, e in enumerate(x)]
        if not mats or len({m.shape for m in mats}) != 1:
            raise InvalidModelError(
                f"{field} given as a sequence needs A >= 1 per-action matrices of one shape; "
                f"got shapes {[m.shape for m in mats]}"
            )
        return np.stack(mats)
    return _dense(x, field)


def from_mdptoolbox(P: Any, R: Any, gamma: float, *, mu: Any = None) -> FiniteMDP:
    r"""FiniteMDP from mdptoolbox arrays ``P[a, s, s']`` and ``R``.

    Parameters
    ----------
    P : array (A, S, S), or a sequence of ``A`` (S, S) matrices (dense or scipy sparse)
    R : array (S,), (S, A) or (A, S, S), or a sequence of ``A`` (S, S) matrices
        State reward (same for every action), state-action reward, or
        per-transition reward ``R[a, s, s']`` (reduced to ``Σ_s' P R``).
    gamma : float in [0, 1)
    mu : array (S,), optional

    Raises
    ------
    InvalidModelError
        Shapes that fit none of these layouts, or a model that fails validation.

    Examples
    --------
    >>> import numpy as np
    >>> m = from_mdptoolbox(np.array([[[1.0, 0.0], [0.0, 1.0]]]), np.array([1.0, 2.0]), 0.5)
    >>> m.P.shape, m.R.tolist()
    ((2, 1, 2), [[1.0], [2.0]])
    """
    Pa = _stacked(P, "P")
    if Pa.ndim != 3 or Pa.shape[1] != Pa.shape[2]:
        raise InvalidModelError(
            f"P must have the mdptoolbox layout (A, S, S); got shape {Pa.shape}"
        )
    A, S = Pa.shape[0], Pa.shape[1]
    Ra = _stacked(R, "R")
    if Ra.shape == (S,):
        Rs = np.repeat(Ra[:, None], A, axis=1)
    elif Ra.shape == (S, A):
        Rs = Ra
    elif Ra.shape == (A, S, S):
        Rs = Ra.transpose(1, 0, 2)
    else:
        raise InvalidModelError(
            f"R must have shape (S,) = ({S},), (S, A) = ({S}, {A}) or (A, S, S) = ({A}, {S}, {S}) "
            f"for P of shape {Pa.shape}; got {Ra.shape}"
        )
    return FiniteMDP(Pa.transpose(1, 0, 2), Rs, gamma, mu)


# -- QuantEcon ----------------------------------------------------------------------


def to_quantecon_sa(mdp: FiniteMDP) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    r"""State-action-pair form ``(R_sa[L], Q_sa[L, S], s_indices[L], a_indices[L])``, ``L = S·A``.

    Pair ``k = s·A + a`` (sorted by state, then action, as QuantEcon's
    ``DiscreteDP(R, Q, beta, s_indices, a_indices)`` expects): ``R_sa[k] = r(s, a)``,
    ``Q_sa[k] = P(·|s, a)``.

    Examples
    --------
    >>> from rltheory.mdp.zoo import two_state
    >>> R, Q, s_idx, a_idx = to_quantecon_sa(two_state())
    >>> s_idx.tolist(), a_idx.tolist(), Q.shape
    ([0, 0, 1, 1], [0, 1, 0, 1], (4, 2))
    """
    P, R = _single_host(mdp, "to_quantecon_sa")
    S, A = P.shape[0], P.shape[1]
    s_idx = np.repeat(np.arange(S), A)
    a_idx = np.tile(np.arange(A), S)
    return R.reshape(S * A), P.reshape(S * A, S), s_idx, a_idx


def from_quantecon(
    R: Any,
    Q: Any = None,
    beta: float | None = None,
    s_indices: Any = None,
    a_indices: Any = None,
    *,
    pad_infeasible: bool = False,
) -> FiniteMDP:
    r"""FiniteMDP from a QuantEcon ``DiscreteDP`` or its arrays.

    Accepts ``from_quantecon(ddp)`` (any object with ``R, Q, beta, s_indices,
    a_indices``), the product form ``from_quantecon(R[S, A], Q[S, A, S], beta)``
    (``R = −inf`` marks an infeasible action) or the state-action-pair form
    ``from_quantecon(R[L], Q[L, S], beta, s_indices, a_indices)`` (``Q`` dense or
    scipy sparse). ``beta`` becomes ``gamma``.

    FiniteMDP has every action available in every state. An infeasible pair
    raises, unless ``pad_infeasible=True``: then it becomes a copy of the
    state's lowest-indexed feasible action (same ``r`` and ``P`` row). A copy of an
    existing action leaves ``V*``, the optimal actions' values and the set of
    achievable value functions unchanged.

    Raises
    ------
    InvalidModelError
        Inconsistent shapes or indices (located), a NaN reward (located; only ``-inf``
        marks an infeasible action), a duplicated pair, a state with no feasible action,
        or an infeasible pair without ``pad_infeasible``.

    Examples
    --------
    >>> import numpy as np
    >>> m = from_quantecon(np.array([1.0, 2.0, 0.0]), np.array([[1.0, 0], [0, 1], [1, 0]]), 0.9,
    ...                    [0, 0, 1], [0, 1, 0], pad_infeasible=True)
    >>> m.R.tolist()
    [[1.0, 2.0], [0.0, 0.0]]
    """
    if Q is None and hasattr(R, "Q") and hasattr(R, "beta"):
        ddp = R
        R, Q, beta = ddp.R, ddp.Q, ddp.beta
        s_indices, a_indices = getattr(ddp, "s_indices", None), getattr(ddp, "a_indices", None)
    if Q is None or beta is None:
        raise ValueError("from_quantecon needs a DiscreteDP, or arrays R, Q and beta")
    Rq = _dense(R, "R")
    Qq = _dense(Q, "Q")
    if s_indices is None and a_indices is None:  # product form
        if Rq.ndim != 2 or Qq.shape != Rq.shape + (Rq.shape[0],):
            raise InvalidModelError(
                f"product form needs R of shape (S, A) and Q of shape (S, A, S); got R {Rq.shape}, Q {Qq.shape}"
            )
        S, A = Rq.shape
        if np.any(np.isnan(Rq)):  # NaN > -inf is False: it would pass for an infeasible action
            s, a = (int(i) for i in np.argwhere(np.isnan(Rq))[0])
            raise InvalidModelError(
                f"R must be a number, or -inf for an infeasible action, in product form; R[{s}, {a}] = nan"
            )
        feasible = Rq > -np.inf
        s_idx, a_idx = np.nonzero(feasible)
        Rq, Qq = Rq[feasible], Qq[feasible]
    else:
        if s_indices is None or a_indices is None:
            raise InvalidModelError("state-action-pair form needs both s_indices and a_indices")
        s_idx = np.asarray(s_indices)
        a_idx = np.asarray(a_indices)
        L = Rq.shape[0] if Rq.ndim == 1 else -1
        if (
            Rq.ndim != 1
            or Qq.ndim != 2
            or Qq.shape[0] != L
            or s_idx.shape != (L,)
            or a_idx.shape != (L,)
        ):
            raise InvalidModelError(
                f"state-action-pair form needs R (L,), Q (L, S), s_indices (L,), a_indices (L,); got "
                f"R {Rq.shape}, Q {Qq.shape}, s_indices {s_idx.shape}, a_indices {a_idx.shape}"
            )
        S = Qq.shape[1]
        for field, idx, hi in (("s_indices", s_idx, S), ("a_indices", a_idx, None)):
            if not np.issubdtype(idx.dtype, np.integer):
                raise InvalidModelError(f"{field} must be integers; got dtype {idx.dtype}")
            bad = np.flatnonzero((idx < 0) | ((idx >= hi) if hi is not None else False))
            if bad.size:
                raise InvalidModelError(
                    f"{field}[{bad[0]}] = {idx[bad[0]]} is out of range [0, {hi or 'inf'})"
                )
        A = int(a_idx.max()) + 1 if L else 0
        feasible = np.zeros((S, max(A, 1)), dtype=bool)
        for k, (s, a) in enumerate(zip(s_idx.tolist(), a_idx.tolist(), strict=True)):
            if feasible[s, a]:
                raise InvalidModelError(f"pair (s={s}, a={a}) appears twice (again at k={k})")
            feasible[s, a] = True
        if not np.all(np.isfinite(Rq)):
            k = int(np.flatnonzero(~np.isfinite(Rq))[0])
            raise InvalidModelError(
                f"R must be finite in pair form; R[{k}] = {Rq[k]} for (s={s_idx[k]}, a={a_idx[k]})"
            )
    empty = np.flatnonzero(~feasible.any(axis=1))
    if empty.size:
        raise InvalidModelError(f"state s={empty[0]} has no feasible action")
    P = np.zeros((S, A, S), dtype=Qq.dtype)
    Rs = np.zeros((S, A), dtype=Rq.dtype)
    P[s_idx, a_idx] = Qq
    Rs[s_idx, a_idx] = Rq
    missing = np.argwhere(~feasible)
    if missing.size and not pad_infeasible:
        s, a = (int(i) for i in missing[0])
        raise InvalidModelError(
            f"action a={a} is infeasible in state s={s} ({len(missing)} infeasible pairs); FiniteMDP has every "
            "action in every state: pass pad_infeasible=True to copy the state's lowest feasible action there"
        )
    first = np.argmax(feasible, axis=1)
    for s, a in missing:
        P[s, a], Rs[s, a] = P[s, first[s]], Rs[s, first[s]]
    return FiniteMDP(P, Rs, beta)
