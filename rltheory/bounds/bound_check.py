"""Pointwise bound checks: :func:`check_bound` and its result :class:`BoundCheck`.

A theorem's bound ``err_t ≤ B_t`` at every iterate is judged pointwise, with the worst ratio
saying how tight it is. Split out of :mod:`rltheory.bounds.claims`, which re-exports both (as
does :mod:`rltheory.bounds.rates`); a ``"bound"`` :class:`~rltheory.bounds.claims.Claim` judges a
:class:`BoundCheck`.

References
----------
M. L. Puterman, *Markov Decision Processes*, Wiley, 1994, Theorem 6.3.3 (the value
iteration bound ``‖v_k − v*‖∞ ≤ γ^k ‖v_0 − v*‖∞`` used in the examples).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._validate import real_scalar
from ._real_input import _real_array

__all__ = ["BoundCheck", "check_bound"]


@dataclass(frozen=True)
class BoundCheck:
    """Result of :func:`check_bound`.

    Attributes
    ----------
    worst_ratio : float
        The largest pointwise ratio, ``≤ 1`` exactly where ``measured ≤ bound``:
        ``measured / bound`` where ``bound > 0``; ``bound / measured`` where both are
        negative (``|bound| / |measured|``, 1 when they are equal); ``inf`` where a bound
        ``≤ 0`` is exceeded and 0 where a zero bound is met (``measured ≤ 0``).
    holds : bool
        ``measured <= bound + rtol·|bound| + atol`` at every point (a ``bool``: a
        ``numpy.bool_`` is converted, anything else is a ``TypeError``).
    argmax : tuple of int
        Index of the worst ratio (a 1-tuple for 1-D input).
    n : int
        Number of points checked.
    rtol, atol : float
        The allowances used.
    worst_excess : float
        ``max(measured − bound − rtol·|bound| − atol)``: positive iff the bound fails.
    """

    worst_ratio: float
    holds: bool
    argmax: tuple[int, ...]
    n: int = 0
    rtol: float = 0.0
    atol: float = 0.0
    worst_excess: float = math.nan

    def __post_init__(self) -> None:
        if not isinstance(self.holds, (bool, np.bool_)):  # bool(nan) and bool("no") are True
            raise TypeError(
                f"BoundCheck.holds must be a bool; got {self.holds!r} ({type(self.holds).__name__})"
            )
        object.__setattr__(self, "holds", bool(self.holds))

    def to_dict(self) -> dict:
        """JSON-ready summary."""
        return {
            "worst_ratio": float(self.worst_ratio),
            "holds": bool(self.holds),
            "argmax": [int(i) for i in self.argmax],
            "n": int(self.n),
            "rtol": float(self.rtol),
            "atol": float(self.atol),
            "worst_excess": float(self.worst_excess),
        }


def check_bound(measured: Any, bound: Any, *, rtol: float = 1e-12, atol: float = 0.0) -> BoundCheck:
    """Check ``measured ≤ bound + rtol·|bound| + atol`` pointwise and report the worst ratio.

    Parameters
    ----------
    measured, bound : array_like
        Same shape (or broadcastable); ``bound`` is the theorem's curve at the
        same points, e.g. ``γ^k ‖v_0 − v*‖∞`` for value iteration.
    rtol : float
        Relative allowance ``rtol·|bound|`` (it loosens a negative bound too: ``bound·(1 + rtol)``
        for ``bound ≥ 0``, ``bound·(1 − rtol)`` below); the default ``1e-12`` absorbs float64
        round-off of the bound's evaluation only.
    atol : float
        Absolute allowance, e.g. the accuracy to which the reference ``v*`` is
        known (errors below it are not measurable).

    Returns
    -------
    BoundCheck

    Raises
    ------
    ValueError
        Shapes do not broadcast, either input is empty or non-finite (the
        message names the index; an integer beyond the float range counts as
        non-finite), or a tolerance is negative, non-finite or not a real number
        (a bool or a string).

    Notes
    -----
    A bound is a statement about every iterate, so a single violation fails
    the check; the ``worst_ratio`` says how tight the bound is (close to 1:
    tight; far below 1: loose). It exceeds 1 exactly where ``measured > bound``,
    whatever the sign of the bound (without the allowances: ``holds`` may still be
    True within ``rtol``/``atol``): for a negative bound it is ``bound / measured``
    when ``measured < 0`` (``measured = −1`` against ``bound = −2`` gives 2, not the
    0.5 of ``measured / bound``) and ``inf`` when ``measured ≥ 0``.

    Examples
    --------
    >>> check_bound([1.0, 0.5, 0.2], [1.0, 0.6, 0.4]).holds
    True
    >>> c = check_bound([1.0, 0.7], [1.0, 0.5])
    >>> c.holds, round(c.worst_ratio, 6), c.argmax
    (False, 1.4, (1,))
    """
    r, a = real_scalar(rtol), real_scalar(atol)  # NaN for a bool or a string: refused below
    if not (0.0 <= r < math.inf and 0.0 <= a < math.inf):  # `not` form: NaN is rejected too
        raise ValueError(
            f"rtol and atol must be finite and non-negative; got rtol={rtol!r}, atol={atol!r}"
        )
    rtol, atol = r, a
    m = _real_array(measured, "measured")
    b = _real_array(bound, "bound")
    try:
        m, b = np.broadcast_arrays(m, b)
    except ValueError:
        raise ValueError(
            f"measured and bound shapes {m.shape} and {b.shape} do not broadcast"
        ) from None
    if m.size == 0:
        raise ValueError("check_bound needs at least one point; got empty arrays")
    for name, arr in (("measured", m), ("bound", b)):
        bad = ~np.isfinite(arr)
        if np.any(bad):
            i = tuple(int(j) for j in np.unravel_index(int(np.flatnonzero(bad)[0]), arr.shape))
            raise ValueError(f"{name} must be finite; {name}{list(i)} = {float(arr[i])!r}")
    # m/b (b/m) may overflow for subnormal b (m): the ratio is then inf
    with np.errstate(all="ignore"):
        pos = m / np.where(b > 0, b, 1.0)
        neg = b / np.where(m < 0, m, -1.0)
        ratio = np.where(b > 0, pos, np.where((b < 0) & (m < 0), neg, np.where(m > b, np.inf, 0.0)))
    flat = int(np.argmax(ratio))
    # near the float range the excess may round to ±inf: its sign is right
    with np.errstate(over="ignore"):
        excess = m - np.where(b >= 0, b * (1.0 + rtol), b * (1.0 - rtol)) - atol
    return BoundCheck(
        worst_ratio=float(ratio.reshape(-1)[flat]),
        holds=bool(np.all(excess <= 0)),
        argmax=tuple(int(j) for j in np.unravel_index(flat, m.shape)),
        n=int(m.size),
        rtol=float(rtol),
        atol=float(atol),
        worst_excess=float(np.max(excess)),
    )
