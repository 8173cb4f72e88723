"""Numerical guards of the softmax policy-gradient drivers (:mod:`rltheory.algorithms.policy_gradient`).

The logits' range, their batch shape against the model's, and an overflow-free Euclidean norm of
the gradient. Private: the public functions report through these.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._validate import _where
from ..backend import to_numpy
from ..mdp.model import FiniteMDP


def _check_leading_axes(theta: Any, batch_shape: tuple[int, ...], name: str) -> None:
    """``theta``'s leading axes must broadcast to the model's ``batch_shape`` (``ValueError`` naming it):
    numpy's "input operand has more dimensions than allowed by the axis remapping" before."""
    lead = tuple(theta.shape[:-2])
    pairs = zip(reversed(lead), reversed(batch_shape), strict=False)
    if len(lead) > len(batch_shape) or any(n not in (1, b) for n, b in pairs):
        raise ValueError(
            f"{name} must have shape batch_shape + (S, A) = {batch_shape + tuple(theta.shape[-2:])} "
            f"(or one that broadcasts to it); got {tuple(theta.shape)}"
        )


def _euclidean_norm(x: Any, xp: Any) -> Any:
    """``‖x‖₂`` over the last two axes, scaled by ``max|x|`` first: ``sqrt(Σ x²)`` overflowed to ``inf`` for
    entries above ``1.3e154`` (float64 rewards 1e200: gradient norm 1e199 traced as inf) and underflowed
    to 0 below ``1e-162``."""
    m = xp.max(xp.abs(x), axis=(-2, -1))
    scale = xp.where(m > 0, m, xp.ones_like(m))
    y = x / scale[..., None, None]
    return m * xp.sqrt(xp.sum(y * y, axis=(-2, -1)))


def _check_logits(theta: Any, eta: float, t: int, mdp: FiniteMDP) -> None:
    """The logits must keep a softmax: no NaN, and a finite maximum per state (``−∞`` entries are
    probabilities 0). A divergent step (float32, rewards 1e30, ``τ = 1e29``, ``η = 1e8``) overflowed
    ``τ log π_t``, made the gradient NaN and failed at the next evaluation with "pi must be finite;
    pi(s=0, a=0) = nan", a name the caller never used."""
    xp = mdp.xp
    if bool(xp.any(xp.isnan(theta))) or not bool(xp.all(xp.isfinite(xp.max(theta, axis=-1)))):
        h = np.asarray(to_numpy(theta))
        bad = np.isnan(h) | (h == np.inf) | np.all(h == -np.inf, axis=-1, keepdims=True)
        i = tuple(int(j) for j in np.argwhere(bad)[0])
        raise ValueError(
            f"eta={eta!r} is too large for this model: the logits theta_t = theta_(t-1) + eta*grad left the "
            f"{mdp.dtype} range at iteration t={t}, theta{_where(i, ('s', 'a'))} = {h[i]} (Mei et al.'s step "
            "is (1 - gamma)^3/(8 + tau*(4 + 8 log|A|)), entropy_pg_step_size); use a smaller eta or a float64 model"
        )
