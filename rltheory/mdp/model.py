"""Finite Markov decision processes as validated, frozen, batchable models.

A finite MDP is ``(S, A, P, r, γ, μ)``: ``P[..., s, a, s']`` is the probability
of moving to ``s'`` after taking ``a`` in ``s``, ``R[..., s, a]`` the expected
reward, ``γ ∈ [0, 1)`` the discount (``None`` for the average-reward
criterion) and ``μ`` the initial-state distribution (uniform when omitted).
Leading ``...`` axes are batch axes: one model holds many instances of the
same size and every solver treats them in one call.

Invariants are checked once, on construction, in the arrays' own namespace;
a broken one raises :class:`~rltheory.errors.InvalidModelError` naming the
field, the rule, the value and its index. Nothing is clipped or renormalised, except
a float32 ``mu`` given to a float64 model: it is divided by its sum, a change within
float32's rounding (as every distribution argument of the library is).
"""

from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._validate import (
    _input_atol,
    _renormalised,
    _where,
    check_discount,
    check_finite,
    check_ndim,
    check_probability,
)
from ..backend import array_namespace, as_float, is_host, is_numpy, to_numpy
from ..errors import InvalidModelError
from ._batch_indexing import axes_addressed, describe_index, select_batch

__all__ = ["FiniteMDP", "FiniteHorizonMDP"]


def _prepare_rewards(
    xp: Any,
    P: Any,
    R: Any,
    field: str,
    names: tuple[str, ...],
    layout: str = "(…, S, A)",
    lead: int = 0,
) -> Any:
    """Validate ``R`` against ``P``; reduce a per-transition ``R`` (shape of ``P``) to ``Σ_s' P R``.

    ``names`` are the axis names of ``P`` (used to locate non-finite entries),
    ``layout`` how the expected shape reads in messages. With ``lead = n > 0`` the
    rewards carry one leading axis per player, ``R[i, ...]`` of shape ``(n,) + P.shape[:-1]``
    (no per-transition form). Shared by MDP and game models.
    """
    target = tuple(P.shape[:-1])
    if lead:
        check_ndim(R, field, len(target) + 1, f"(n, {layout[1:-1]})")
        check_finite(R, field, ("i",) + names[:-1])
        if tuple(R.shape) != (lead,) + target:
            raise InvalidModelError(
                f"{field} must have shape {(lead,) + target}; got {tuple(R.shape)}"
            )
        return R
    check_finite(R, field, names[:-1] if R.ndim < P.ndim else names)
    if R.ndim == P.ndim:
        if R.shape != P.shape:
            raise InvalidModelError(
                f"{field} given per transition must have the shape of P {tuple(P.shape)}; "
                f"got {tuple(R.shape)}"
            )
        with np.errstate(over="ignore"):  # (an overflow is refused below, located)
            r = xp.sum(P * R, axis=-1)
        # finite R(s, a, s') near the float maximum whose row of P sums to 1 + 1e-9 gave r(s, a) = inf
        # (numpy's 'overflow encountered in reduce' only) and a model holding a non-finite reward
        if not bool(xp.all(xp.isfinite(r))):
            idx = tuple(int(i) for i in np.argwhere(~np.isfinite(np.asarray(to_numpy(r))))[0])
            raise InvalidModelError(
                f"{field} given per transition has r{_where(idx, names[:-1])} = sum_s' P R beyond the "
                f"{P.dtype} range (largest {float(xp.finfo(P.dtype).max):.4g}); scale {field}"
            )
        return r
    if R.ndim != P.ndim - 1 or tuple(R.shape) != target:
        raise InvalidModelError(
            f"{field} must have shape {target} {layout} or that of P "
            f"{tuple(P.shape)}; got {tuple(R.shape)}"
        )
    return R


def _rewards_in(xp: Any, R: Any, P: Any, field: str, names: tuple[str, ...]) -> Any:
    """``R`` (already a real floating array) cast to ``P``'s dtype, refusing finite entries the cast
    sends to ±inf: a float64 reward 1e300 in a float32 model read 'R must be finite; R(s=0, a=0)
    = inf' (after numpy's 'overflow encountered in cast'), naming a value nobody passed."""
    if R.dtype == P.dtype:
        return R
    with np.errstate(over="ignore"):
        Rc = xp.astype(R, P.dtype)
    lost = xp.isfinite(R) & ~xp.isfinite(Rc)
    if bool(xp.any(lost)):
        h = np.asarray(to_numpy(R))
        idx = tuple(int(i) for i in np.argwhere(np.asarray(to_numpy(lost)))[0])
        nm = names if R.ndim == P.ndim else names[:-1]  # per transition, or per (s, a)
        raise InvalidModelError(
            f"{field}{_where(idx, nm)} = {h[idx]:.6g} is beyond the {P.dtype} range of the model "
            f"(the dtype of P; largest {float(xp.finfo(P.dtype).max):.4g}): give P in float64 or scale {field}"
        )
    return Rc


class _ArrayModel:
    """Accessors shared by the validated array models (MDPs and Markov games).

    Subclasses are frozen dataclasses with fields ``P`` and ``mu`` and properties
    ``S`` and ``batch_shape``.
    """

    P: Any
    mu: Any

    @property
    def xp(self) -> Any:
        """The array namespace of the model's arrays."""
        return array_namespace(self.P)

    @property
    def dtype(self) -> Any:
        return self.P.dtype

    def initial_distribution(self) -> Any:
        """``μ`` broadcast to ``batch_shape + (S,)`` (uniform when ``mu`` is None)."""
        shape = self.batch_shape + (self.S,)  # type: ignore[attr-defined]
        if self.mu is None:
            return self.xp.full(shape, 1.0 / shape[-1], dtype=self.dtype, device=self.P.device)
        return self.xp.broadcast_to(self.mu, shape)

    def replace(self, **changes: Any) -> Any:
        """A copy with fields replaced (re-validated), e.g. ``mdp.replace(gamma=0.5)``."""
        return dataclasses.replace(self, **changes)  # type: ignore[type-var]

    def _batch_index(self, index: Any, model_axes: str) -> tuple[Any, ...]:
        """``index`` as a tuple that addresses the batch axes only, else a located ``IndexError``.

        The caller appends full slices for the model axes (``model_axes``, e.g. ``"(S, A, S')"``),
        so an Ellipsis selects along the last batch axis. An index that addresses more axes than
        the batch has (integers, slices and integer arrays take one axis each, a boolean array one
        per dimension; ``None`` and ``...`` none) would cut into the model axes: refused, naming
        the index, the number of axes it addresses and the batch shape.
        """
        name = type(self).__name__
        batch = self.batch_shape  # type: ignore[attr-defined]
        if not batch:
            raise IndexError(f"a single (unbatched) {name} cannot be indexed")
        idx = index if isinstance(index, tuple) else (index,)
        used = sum(axes_addressed(i) for i in idx)
        if used > len(batch):
            raise IndexError(
                f"too many indices for the batch axes of this {name}: index {describe_index(idx)} addresses {used} "
                f"axes but batch_shape is {batch} ({len(batch)} axes); the model axes {model_axes} "
                "cannot be indexed"
            )
        return idx


def _prepare_mu(xp: Any, mu: Any, S: int, batch: tuple[int, ...], dtype: Any) -> Any:
    if mu is None:
        return None
    # a float32 mu in a float64 model was rounded in float32: judge it at float32's tolerance and
    # divide its rows by their sums, as every other distribution argument is (as_distribution)
    atol = _input_atol(mu)
    mu = as_float(mu, xp, dtype, field="mu")
    if (
        mu.shape[-1:] != (S,)
        or len(mu.shape) > 1 + len(batch)
        or (mu.ndim > 1 and tuple(mu.shape[:-1]) != tuple(batch[len(batch) - (mu.ndim - 1) :]))
    ):
        raise InvalidModelError(
            f"mu must have shape (S,) = ({S},) or batch + (S,) = {batch + (S,)}; got {tuple(mu.shape)}"
        )
    check_probability(mu, "mu", ("s",), "mu[:]", atol=atol)
    return _renormalised(mu, atol, xp)


def _discount_in_dtype(
    xp: Any, gamma: float | None, dtype: Any, what: str = "model"
) -> float | None:
    """``gamma`` (checked in [0, 1)), refused where it rounds to 1 in ``P``'s dtype: Bellman
    targets ``r + γPV`` and the evaluation matrices ``I − γP_π`` are computed in that dtype, where
    the discount is then 1 (float32 and ``γ = 1 − 2^-30``: ``I − γP_π`` singular — an unlocated
    LinAlgError from ``policy_iteration``, and a game's exploitability of 0 for an exact 4.3e8)."""
    if gamma is None or float(xp.asarray(gamma, dtype=dtype)) < 1.0:
        return gamma
    name = getattr(dtype, "name", dtype)
    raise InvalidModelError(
        f"gamma = {gamma!r} rounds to 1 in P's dtype {name}, in which the {what} is computed (the "
        f"discounted values are not defined there); give P in float64 or a smaller gamma (at most "
        f"1 - {float(xp.finfo(dtype).eps) / 2:.3g} in {name})"
    )


@dataclass(frozen=True, eq=False)
class FiniteMDP(_ArrayModel):
    """Finite MDP ``(P, R, γ, μ)`` with optional leading batch axes.

    Parameters
    ----------
    P : array, shape (..., S, A, S)
        ``P[..., s, a, s'] = Pr(s_{t+1} = s' | s_t = s, a_t = a)``.
    R : array, shape (..., S, A) or (..., S, A, S)
        Expected reward ``r(s, a)``; a per-transition reward ``R[..., s, a, s']`` is
        reduced to ``r(s, a) = Σ_s' P(s'|s,a) R(s,a,s')`` on construction.
    gamma : float in [0, 1), or None
        Discount factor; ``None`` selects the average-reward (gain) criterion.
    mu : array, shape (S,) or (..., S), optional
        Initial-state distribution; ``None`` means uniform.

    Raises
    ------
    InvalidModelError
        Wrong shapes, non-finite entries, negative probabilities, rows of ``P`` not
        summing to 1 (the worst row and its sum are reported), ``gamma`` outside
        [0, 1) or rounding to 1 in ``P``'s dtype, ``mu`` not a distribution, or a reward beyond the range of ``P``'s dtype
        (a float64 ``R`` of 1e300 in a float32 model; the entry and its value are named).

    Notes
    -----
    Probabilities are checked to ``PROB_ATOL = 1e-8`` (row sums to
    ``1e-8·(1+√S)``), or to ``16·eps`` of the dtype they came in when that is coarser: a
    float32 ``mu`` given with a float64 ``P`` is judged at float32's tolerance and divided by
    its sum. Integer inputs become float64; float32 inputs stay float32.

    The model keeps the arrays it is given when their dtype and namespace need no conversion
    (no copy: a large or on-device model costs no second buffer). Validation happens once, at
    construction, so writing into ``P``, ``R`` or ``mu`` afterwards gives a model that was never
    checked (``P[0, 0] = [2, -1]`` is then held by the model too); pass copies when the buffers
    will be reused. Datasets, which are small, store read-only copies instead.

    Examples
    --------
    >>> import numpy as np
    >>> P = np.array([[[1.0, 0.0], [0.0, 1.0]], [[0.0, 1.0], [0.0, 1.0]]])
    >>> R = np.array([[0.0, 1.0], [2.0, 2.0]])
    >>> mdp = FiniteMDP(P, R, gamma=0.9)
    >>> mdp.S, mdp.A, mdp.batch_shape
    (2, 2, ())
    """

    P: Any
    R: Any
    gamma: float | None
    mu: Any = None

    def __post_init__(self) -> None:
        xp = array_namespace(self.P, self.R, self.mu, names=("P", "R", "mu"))
        p_atol = _input_atol(
            self.P
        )  # (a float16 P is judged at float16's rounding, then renormalised)
        P = as_float(self.P, xp, field="P")
        R = _rewards_in(xp, as_float(self.R, xp, field="R"), P, "R", ("s", "a", "s'"))
        check_ndim(P, "P", 3, "(..., S, A, S)")
        S, A = P.shape[-3], P.shape[-2]
        if P.shape[-1] != S:
            raise InvalidModelError(
                f"P must have shape (..., S, A, S) with matching first and last state axes; "
                f"got {tuple(P.shape)} (S={S} but last axis {P.shape[-1]})"
            )
        if S < 1 or A < 1:
            raise InvalidModelError(
                f"P needs at least one state and one action; got shape {tuple(P.shape)}"
            )
        check_probability(P, "P", ("s", "a", "s'"), "P[s, a, :]", atol=p_atol)
        P = _renormalised(P, p_atol, xp)
        R = _prepare_rewards(xp, P, R, "R", ("s", "a", "s'"))
        gamma = _discount_in_dtype(xp, check_discount(self.gamma), P.dtype)
        mu = _prepare_mu(xp, self.mu, S, tuple(P.shape[:-3]), P.dtype)
        object.__setattr__(self, "P", P)
        object.__setattr__(self, "R", R)
        object.__setattr__(self, "gamma", gamma)
        object.__setattr__(self, "mu", mu)

    # -- derived facts -------------------------------------------------------------
    @property
    def S(self) -> int:
        """Number of states."""
        return int(self.P.shape[-3])

    @property
    def A(self) -> int:
        """Number of actions."""
        return int(self.P.shape[-2])

    @property
    def batch_shape(self) -> tuple[int, ...]:
        """Leading batch axes (``()`` for a single MDP)."""
        return tuple(self.P.shape[:-3])

    @property
    def average_reward(self) -> bool:
        """True when ``gamma is None`` (gain criterion)."""
        return self.gamma is None

    @functools.cached_property
    def successors(self) -> tuple[Any, Any] | None:
        """Padded successor lists ``(idx[..., S, A, K], prob[..., S, A, K])`` when ``P`` is sparse.

        ``K`` is the largest number of successors of any ``(s, a)``; rows with fewer
        are padded with zero-probability entries. Returned only when ``S ≥ 64`` and
        ``K ≤ S/8`` (else ``None``): then backups cost ``O(SAK)`` gathers instead of an
        ``O(S²A)`` dense product. Computed once (a stable radix argsort of the
        non-zero pattern, or one pass of ``nonzero`` on numpy/cupy) and cached; the dense
        ``P`` stays the model's definition.
        """
        xp = self.xp
        S = self.S
        if S < 64 or 0 in self.batch_shape:
            # (an empty batch has no successors to count: xp.max of the empty counts raised numpy's
            # 'zero-size array to reduction operation maximum which has no identity')
            return None
        nz = self.P != 0
        counts = xp.count_nonzero(nz, axis=-1)
        K = int(xp.max(counts))
        if K > S // 8:
            return None
        if not is_host(xp) or is_numpy(xp):  # numpy / cupy: one pass over the non-zeros
            flat = xp.reshape(counts, (-1,))
            rows, cols = xp.nonzero(xp.reshape(nz, (-1, S)))
            pos = (
                xp.arange(rows.shape[0], device=self.P.device)
                - (xp.cumulative_sum(flat) - flat)[rows]
            )
            order = xp.zeros((flat.shape[0], K), dtype=xp.int64, device=self.P.device)
            order[rows, pos] = cols
            order = xp.reshape(order, tuple(self.P.shape[:-1]) + (K,))
        else:  # any array-API library: a stable sort puts the non-zero columns first
            order = xp.argsort(xp.astype(~nz, xp.int8), axis=-1, stable=True)[..., :K]
        valid = xp.arange(K, device=self.P.device) < counts[..., None]
        prob = xp.where(
            valid, xp.take_along_axis(self.P, order, axis=-1), xp.zeros_like(self.P[..., :1])
        )
        return order, prob

    def __getitem__(self, index: Any) -> FiniteMDP:
        """Select instances along the batch axes: ``batch[3]`` is the fourth MDP.

        Raises ``IndexError`` for an unbatched model and for an index that addresses more axes
        than the batch has (the model axes cannot be indexed).
        """
        # the index addresses the batch axes only: trailing full slices pin the model axes, so an
        # Ellipsis (m[..., 1]) selects along the last batch axis, not along s' of P and a of R
        # (which returned a different, silently wrong model), and an index longer than the batch
        # is refused instead of cutting into the model axes
        idx = self._batch_index(index, "(S, A, S')")
        mu = self.mu
        if mu is not None and mu.ndim > 1:
            mu = select_batch(self.initial_distribution(), idx, 1)
        return FiniteMDP(select_batch(self.P, idx, 3), select_batch(self.R, idx, 2), self.gamma, mu)

    def __repr__(self) -> str:
        b = f", batch={self.batch_shape}" if self.batch_shape else ""
        return f"FiniteMDP(S={self.S}, A={self.A}, gamma={self.gamma}{b})"


@dataclass(frozen=True, eq=False)
class FiniteHorizonMDP(_ArrayModel):
    """Finite-horizon MDP with time-dependent dynamics ``P_h``, rewards ``R_h``, h = 0..H-1.

    Parameters
    ----------
    P : array, shape (..., H, S, A, S)
        ``P[..., h, s, a, s']``: transition kernel used at step ``h``.
    R : array, shape (..., H, S, A) or (..., H, S, A, S)
        Expected reward at step ``h`` (per-transition rewards are reduced).
    mu : array, shape (S,) or (..., S), optional
        Initial distribution (uniform when omitted).

    The value is undiscounted: ``V_0^π(s) = E[Σ_{h=0}^{H-1} r_h(s_h, a_h) | s_0 = s]``.
    Use :meth:`stationary` to repeat a time-homogeneous model over ``H`` steps.

    Examples
    --------
    >>> import numpy as np
    >>> P = np.ones((3, 2, 1, 2)) / 2
    >>> FiniteHorizonMDP(P, np.zeros((3, 2, 1))).H
    3
    """

    P: Any
    R: Any
    mu: Any = None

    def __post_init__(self) -> None:
        xp = array_namespace(self.P, self.R, self.mu, names=("P", "R", "mu"))
        p_atol = _input_atol(
            self.P
        )  # (a float16 P is judged at float16's rounding, then renormalised)
        P = as_float(self.P, xp, field="P")
        R = _rewards_in(xp, as_float(self.R, xp, field="R"), P, "R", ("h", "s", "a", "s'"))
        check_ndim(P, "P", 4, "(..., H, S, A, S)")
        H, S, A = P.shape[-4], P.shape[-3], P.shape[-2]
        if P.shape[-1] != S or H < 1 or S < 1 or A < 1:
            raise InvalidModelError(
                f"P must have shape (..., H, S, A, S) with H, S, A >= 1 and matching state axes; "
                f"got {tuple(P.shape)}"
            )
        names = ("h", "s", "a", "s'")
        check_probability(P, "P", names, "P[h, s, a, :]", atol=p_atol)
        P = _renormalised(P, p_atol, xp)
        R = _prepare_rewards(xp, P, R, "R", names, layout="(…, H, S, A)")
        mu = _prepare_mu(xp, self.mu, S, tuple(P.shape[:-4]), P.dtype)
        object.__setattr__(self, "P", P)
        object.__setattr__(self, "R", R)
        object.__setattr__(self, "mu", mu)

    @classmethod
    def stationary(cls, P: Any, R: Any, H: int, mu: Any = None) -> FiniteHorizonMDP:
        """Repeat a time-homogeneous ``P[..., s, a, s']``, ``R[..., s, a]`` for ``H`` steps.

        ``H`` is a positive Python or numpy integer; ``R`` may also be per transition,
        ``R[..., s, a, s']``. A bad ``H`` raises ``ValueError``, ``P`` or ``R`` with too few
        axes ``InvalidModelError`` naming the field and its shape.
        """
        if isinstance(H, bool) or not isinstance(H, (int, np.integer)) or H < 1:
            raise ValueError(f"H must be a positive integer; got {H!r}")
        H = int(H)
        xp = array_namespace(P, R, names=("P", "R"))
        P = as_float(P, xp, field="P")
        # R keeps its own dtype: the constructor casts it to P's and names a reward the cast
        # would send to inf (a float64 1e300 in a float32 model read 'R must be finite ... = inf')
        R = as_float(R, xp, field="R")
        check_ndim(P, "P", 3, "(..., S, A, S)")
        check_ndim(R, "R", 2, "(..., S, A) or (..., S, A, S)")
        # R carries P's batch axes: an unbatched R (S, A) with a batched P (B, S, A, S) was read by
        # its number of axes as per transition and failed in numpy's broadcast_to ('operands could
        # not be broadcast together', H = 3) or named a shape nobody passed ('got (2, 2, 2)', H = 2)
        if tuple(R.shape) not in (tuple(P.shape[:-1]), tuple(P.shape)):
            raise InvalidModelError(
                f"R must have shape {tuple(P.shape[:-1])} (..., S, A) or that of P {tuple(P.shape)} "
                f"(per transition), with the batch axes of P; got {tuple(R.shape)}"
            )
        Ph = xp.broadcast_to(P[..., None, :, :, :], P.shape[:-3] + (H,) + tuple(P.shape[-3:]))
        k = 2 if R.ndim == P.ndim - 1 else 3  # trailing (S, A) or (S, A, S) axes (checked above)
        Rh = xp.broadcast_to(
            xp.expand_dims(R, axis=R.ndim - k), R.shape[:-k] + (H,) + tuple(R.shape[-k:])
        )
        return cls(Ph, Rh, mu)

    @property
    def H(self) -> int:
        """Horizon (number of decision steps)."""
        return int(self.P.shape[-4])

    @property
    def S(self) -> int:
        return int(self.P.shape[-3])

    @property
    def A(self) -> int:
        return int(self.P.shape[-2])

    @property
    def batch_shape(self) -> tuple[int, ...]:
        return tuple(self.P.shape[:-4])

    def __getitem__(self, index: Any) -> FiniteHorizonMDP:
        """Select instances along the batch axes: ``batch[3]`` is the fourth finite-horizon MDP.

        As :meth:`FiniteMDP.__getitem__`: the index addresses the batch axes only (an Ellipsis
        selects along the last batch axis, never along ``h``, ``s``, ``a`` or ``s'``); an unbatched
        model or an index reaching into the model axes raises ``IndexError``.
        """
        idx = self._batch_index(index, "(H, S, A, S')")
        mu = self.mu
        if mu is not None and mu.ndim > 1:
            mu = select_batch(self.initial_distribution(), idx, 1)
        return FiniteHorizonMDP(select_batch(self.P, idx, 4), select_batch(self.R, idx, 3), mu)

    def __repr__(self) -> str:
        b = f", batch={self.batch_shape}" if self.batch_shape else ""
        return f"FiniteHorizonMDP(H={self.H}, S={self.S}, A={self.A}{b})"
