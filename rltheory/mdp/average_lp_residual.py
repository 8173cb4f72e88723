r"""The multichain average-reward LP's certified optimality residual and its re-solve with the
implied row ``Σx = 1`` (Puterman 1994, §9.3).

Used by :func:`rltheory.mdp.average.average_linear_program` (``multichain=True``), which re-exports them.

References
----------
Puterman, M. L. (1994). *Markov Decision Processes*. Wiley. §9.3 (multichain LP).
Higham, N. J. (2002). *Accuracy and Stability of Numerical Algorithms*, 2nd ed. SIAM. §3.1.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._numerics import higham_gamma, highs_linprog, subnormal_spacing
from .average_evaluation import _roundoff
from .average_pi import _centered, _centred_error
from .model import FiniteMDP

__all__: list[str] = []


def _multichain_lp_residual(xp: Any, mdp: FiniteMDP, g: Any, h: Any, x: Any, alpha: Any) -> Any:
    r"""Certified optimality residual of the multichain LP at the returned ``(g, h)`` and ``x``.

    The larger of the primal infeasibilities ``max_{s,a} (P g − g)(s, a)``,
    ``max_{s,a} (r + P h − h − g)(s, a)`` (when positive) and the objective gap
    ``|Σ_j α_j g(j) − Σ_{s,a} r(s,a) x(s,a)|`` of the row-normalised model ``P/σ``, each an upper
    bound on the exact one: the differences are formed centred (:func:`_centered`: rounding
    relative to ``sp(g)``, ``sp(h)`` rather than to ``|h|``, within :func:`_centred_error`), ``x − g``
    is rounded by ``u``, the two sums by Higham's ``γ_{SA}`` and ``γ_{S+1}`` (the latter also covers
    ``α`` rounded to the model's dtype), and their ``SA + S`` products by the underflow term
    ``2(SA + S + 2)s`` (``s`` the subnormal spacing; a product with a subnormal result errs by up
    to ``s/2`` absolutely). Without the allowances the computed residual was 0 while the
    exact one was 0.031 (float32, rewards ~1e6) and 2.9e-11 (float64).
    """
    ro = _roundoff(mdp)
    u = ro.u
    S, A = mdp.S, mdp.A
    D = _centered(xp, mdp.P, g)
    inf1 = xp.max(D, axis=(-2, -1)) + _centred_error(xp, ro, g)
    y = mdp.R + _centered(xp, mdp.P, h) - g[..., None]
    inf2 = (
        xp.max(y, axis=(-2, -1))
        + 2.0 * u * xp.max(xp.abs(y), axis=(-2, -1))
        + _centred_error(xp, ro, h)
    )
    value = xp.sum(x * mdp.R, axis=(-2, -1))
    wg = xp.sum(alpha * g, axis=-1)
    gap = (
        xp.abs(wg - value) * (1.0 + 2.0 * u)
        + higham_gamma(S * A, u) * xp.sum(xp.abs(x * mdp.R), axis=(-2, -1))
        + higham_gamma(S + 1, u) * xp.sum(xp.abs(alpha * g), axis=-1)
        + 2.0 * (S * A + S + 2) * subnormal_spacing(mdp.dtype, xp)
    )
    zero = xp.zeros_like(gap)
    return xp.maximum(xp.maximum(xp.maximum(inf1, zero), xp.maximum(inf2, zero)), gap) * (
        1.0 + 4.0 * u
    )


#: scipy's status for an LP that HiGHS declares unbounded.
_UNBOUNDED = 3


def _multichain_with_sum_row(c: np.ndarray, A_eq: np.ndarray, b_eq: np.ndarray, n: int) -> Any:
    r"""The multichain LP again, with its implied row ``Σ_{s,a} x(s, a) = 1`` added.

    The second block's rows sum to ``Σx + Σ_{s,a} y(s,a)(1 − Σ_j P(j|s,a)) = Σ_j α_j = 1``, so the
    row is implied for a stochastic ``P``; stated, it bounds the ``x`` part of the polytope, and the
    objective depends on ``x`` only, so no ray can improve it. HiGHS's presolve declared the LP
    *unbounded* (never true: ``Σ r x ≤ max r``) when a transition had probability ``1e-7``, e.g.
    ``P(0|1, 0) = 1e-7`` on a communicating two-state model, with every method and drop setting.
    Its multiplier ``z`` enters the dual constraints of ``x`` only, as ``g(s) + h(s) − (P h)(s, a) + z
    ≥ r(s, a)``, while those of ``y``, ``g(s) ≥ (P g)(s, a)``, are blind to a constant: the gains
    of the original LP are the second block's duals plus ``z``.
    """
    row = np.concatenate([np.ones(n), np.zeros(n)])
    A2, b2 = np.vstack([A_eq, row]), np.concatenate([b_eq, [1.0]])
    res = highs_linprog(c, A_eq=A2, b_eq=b2, bounds=(0, None))
    if res.status != 0:
        # the presolve can misjudge this one too: a 5-state model with two transitions of 1e-7
        # ended at model status Unknown (both methods, both drop settings); without presolve it
        # is solved (the gains agree with multichain policy iteration to 1e-15)
        res = highs_linprog(c, A_eq=A2, b_eq=b2, bounds=(0, None), presolve=False)
    return res
