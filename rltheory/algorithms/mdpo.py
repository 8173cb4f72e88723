r"""Tabular on-policy MDPO (Tomar et al. 2022): the mirror-descent surrogate maximised by gradient steps.

At each outer step MDPO maximises the surrogate

    L_k(θ) = Σ_s d^{π_k}_ρ(s) [ Σ_a π_θ(a|s) A^{π_k}(s, a) − t_k^{-1} KL(π_θ(·|s) ‖ π_k(·|s)) ]

by ``m`` gradient steps on softmax logits started at ``log π_k`` (:func:`mdpo_step`); its exact
maximiser (``m → ∞``, ``d^{π_k}_ρ > 0``) is the KL policy-mirror-descent step with ``η_k = t_k``
(:func:`rltheory.algorithms.policy_mirror_descent.pmd_kl_step`), and the step plugs into
:func:`rltheory.algorithms.policy_mirror_descent.policy_mirror_descent` as its ``update``
(``functools.partial(mdpo_step, inner_steps=m)``). Re-exported by
:mod:`rltheory.algorithms.policy_mirror_descent`.

References
----------
Tomar, M., Shani, L., Efroni, Y., Ghavamzadeh, M. (2022). Mirror descent policy
optimization. ICLR. §4.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..backend import to_numpy
from ..mdp.bellman import _q_values, _state_occupancy, evaluate_policy
from ..mdp.model import FiniteMDP
from ._policy_opt import (
    check_iterations,
    check_positive,
    discount,
    initial_distribution,
    initial_policy,
    safe_log,
)
from .soft import log_softmax, softmax

__all__ = ["mdpo_step"]


def mdpo_step(
    mdp: FiniteMDP,
    pi: Any,
    *,
    eta: float,
    inner_steps: int = 10,
    inner_lr: float = 1.0,
    rho: Any = None,
) -> Any:
    r"""Tabular on-policy MDPO step: ``m`` gradient-ascent steps on the MDPO surrogate.

    Maximises ``L(θ) = Σ_s d^π_ρ(s) [Σ_a π_θ(a|s) A^π(s, a) − η^{-1} KL(π_θ(·|s) ‖ π(·|s))]``
    over softmax logits ``θ`` started at ``log π``, with
    ``∂L/∂θ(s, a) = d^π_ρ(s) π_θ(a|s) (g(s, a) − Σ_b π_θ(b|s) g(s, b))``,
    ``g = A^π − η^{-1} log(π_θ/π)``.

    Parameters
    ----------
    pi : array (..., S, A)
        Current policy ``π_k``. Actions with ``π_k(a|s) = 0`` keep probability 0 (the KL
        proximity term is infinite elsewhere), as in :func:`~rltheory.algorithms.policy_mirror_descent.pmd_kl_step`. The ascent can
        itself round a probability to 0 (a logit more than ~745 below its row's maximum:
        large ``η``, or an ``inner_lr`` too large for the advantages' scale — the gradient
        is proportional to them, so scale ``inner_lr`` by ``1/‖A^π‖∞``); the next step
        then keeps that support.
    eta : float > 0
        MDPO step ``t_k`` (inverse proximity weight).
    inner_steps : int ≥ 0
        ``m``, the number of surrogate gradient steps (0 returns ``π``).
    inner_lr : float > 0
        Learning rate of the inner ascent.
    rho : array, optional
        Start distribution of ``d^π_ρ`` (the model's ``μ``).

    Returns
    -------
    array (..., S, A)

    Raises
    ------
    ValueError
        Bad ``eta``, ``inner_steps``, ``inner_lr``, ``pi`` or ``rho``; an inner ascent that
        diverged (non-finite logits: ``inner_lr`` too large for the curvature ``~ d(s)/η``),
        or that ended below its start on some visited state's surrogate (it overshot; the
        state is named): such a row is farther in KL from the MDPO step than ``π(·|s)`` itself
        (Notes), so no policy is returned.

    Notes
    -----
    The surrogate is strictly concave in ``π_θ(·|s)`` state by state and its
    maximiser is ``π(a|s) exp(η A^π(s, a))/Z(s)`` wherever ``d^π_ρ(s) > 0`` —
    the KL-PMD / NPG step — so the gap to exact PMD shrinks as ``m`` grows
    (Tomar et al. 2022, §4: "with KL proximity MDPO is NPG for softmax"). Exactly,
    ``L_s(p) = (log Z(s) − KL(p ‖ p*(·|s)))/η`` for the per-state term ``L_s`` and the maximiser
    ``p*``, so ``L_s`` measures the distance to the exact step, and ``L_s(p) < L_s(π) = 0`` is refused.

    Examples
    --------
    >>> import numpy as np
    >>> from rltheory.mdp import FiniteMDP
    >>> mdp = FiniteMDP(np.ones((1, 2, 1)), np.array([[0.0, 1.0]]), gamma=0.0)
    >>> p = mdpo_step(mdp, np.full((1, 2), 0.5), eta=np.log(3), inner_steps=2000, inner_lr=5.0)
    >>> np.round(p, 6).tolist()
    [[0.25, 0.75]]
    """
    discount(mdp, "mdpo_step")
    eta = check_positive(eta, "eta")
    inner_steps = check_iterations(inner_steps, "inner_steps")
    inner_lr = check_positive(inner_lr, "inner_lr")
    xp = mdp.xp
    pi = initial_policy(mdp, pi, field="pi")
    rho = initial_distribution(mdp, rho)
    V = evaluate_policy(mdp, pi)
    adv = _q_values(mdp, V) - V[..., None]
    w = _state_occupancy(mdp, pi, rho)[..., None]
    # Actions outside the support of π keep probability 0 (KL(π_θ‖π) = ∞ elsewhere, as in
    # pmd_kl_step): logits −∞ there, and their terms of the gradient are 0.
    pos = pi > 0
    zero = xp.zeros_like(pi)
    log_pi = safe_log(pi, xp)
    theta = log_pi
    # a divergent ascent overflows here; it is named right after the loop, without numpy's warnings
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        for _ in range(inner_steps):
            logp = log_softmax(theta, xp)
            p = xp.exp(logp)
            gs = xp.where(
                pos, adv - (xp.where(pos, logp, zero) - xp.where(pos, log_pi, zero)) / eta, zero
            )
            theta = theta + xp.where(
                pos, inner_lr * w * p * (gs - xp.sum(p * gs, axis=-1, keepdims=True)), zero
            )
    # A divergent ascent (inner_lr beyond the surrogate's curvature, which grows like d(s)/η) left
    # NaN/inf logits, and the step returned an all-NaN policy without a word: name it instead.
    if not bool(xp.all(xp.isfinite(xp.where(pos, theta, zero)))):
        raise ValueError(
            f"mdpo_step's inner gradient ascent diverged (logits not finite after {inner_steps} steps): "
            f"inner_lr={inner_lr:g} is too large for the surrogate, whose KL term has curvature of order "
            f"d(s)/eta = {1.0 / eta:.3g}·d(s) (eta={eta:g}); take a smaller inner_lr"
        )
    _check_ascent(xp, theta, log_pi, pos, adv, V, w, eta, inner_lr, inner_steps)
    return softmax(theta, xp)


def _check_ascent(
    xp: Any,
    theta: Any,
    log_pi: Any,
    pos: Any,
    adv: Any,
    V: Any,
    w: Any,
    eta: float,
    inner_lr: float,
    inner_steps: int,
) -> None:
    r"""``ValueError`` where the inner ascent ended below its start on a visited state's surrogate.

    State by state ``L_s(p) = Σ_a p(a)(A(s, a) − (log p(a) − log π(a|s))/η)`` is 0 at the start
    ``p = π(·|s)``, and with ``p* = π(·|s) exp(η A(s, ·))/Z(s)`` (the MDPO step)
    ``L_s(p) = (log Z(s) − KL(p ‖ p*))/η`` exactly, so ``L_s(p) < 0 = L_s(π)`` means
    ``KL(p ‖ p*) > KL(π(·|s) ‖ p*)``: the returned row is farther from the step it approximates than
    the input row, a wrong answer rather than a degraded one (gradient ascent at a rate below
    ``2/curvature`` never decreases ``L``). ``η = 1e-6`` with the default ``inner_lr = 1`` (one state,
    ``r = (0, 1)``) returned ``[[1, 0]]``, the worse action, for ``p* ≈ (1/2, 1/2)``; and with
    the check on the ``d``-weighted sum over states (a warning, before) an overshoot in one state
    was hidden by the gain of another: ``μ = (0.9, 0.1)``, ``r = ((0, 0.01), (0, 10))``, ``γ = 0``,
    ``η = 1``, ``inner_lr = 10`` returned ``(0.80, 0.20)`` in state 0 for ``p* = (0.4975, 0.5025)``
    without a word. Evaluated on the host in float64 from the computed arrays; their rounding
    (``u`` of the dtype, a few per term) is allowed for. States with ``d^π_ρ(s) = 0`` do not move.
    """
    lp, lpi, aa, vv, ww = (
        np.asarray(to_numpy(x), dtype=np.float64)
        for x in (log_softmax(theta, xp), log_pi, adv, V, w)
    )
    keep = np.asarray(to_numpy(pos), dtype=bool) & np.isfinite(lp)
    p = np.where(keep, np.exp(np.where(keep, lp, 0.0)), 0.0)
    d_log = np.where(keep, lp - np.where(keep, lpi, 0.0), 0.0)
    gain = np.sum(p * (aa - d_log / eta), axis=-1)
    mag = np.sum(
        p
        * (
            np.abs(aa)
            + np.abs(vv)[..., None]
            + (np.abs(d_log) + np.abs(np.where(keep, lp, 0.0)) + np.abs(np.where(keep, lpi, 0.0)))
            / eta
        ),
        axis=-1,
    )
    u = float(xp.finfo(theta.dtype).eps) / 2.0
    A = theta.shape[-1]
    bad = (ww[..., 0] > 0) & ~(gain >= -64.0 * (A + 4) * u * mag)
    if np.any(bad):
        i = tuple(int(j) for j in np.argwhere(bad)[0])
        where = f"s={i[-1]}" + (f", batch index {i[:-1]}" if len(i) > 1 else "")
        raise ValueError(
            f"mdpo_step's inner gradient ascent ended below its start on the surrogate it maximises in state "
            f"{where} (L_s = {float(gain[i]):.3g} < L_s(pi) = 0 after {inner_steps} steps, d(s) = "
            f"{float(ww[i][0]):.3g}): the returned row would be farther in KL from the MDPO step "
            f"pi*exp(eta*A)/Z than pi itself. inner_lr={inner_lr:g} is too large for the KL term's curvature "
            f"of order d(s)/eta = {float(ww[i][0]) / eta:.3g} (eta={eta:g}); take a smaller inner_lr"
        )
