r"""Improper learning over base controllers: softmax mixtures optimised by (natural) policy gradient.

Given ``M`` base controllers ``K_m(a|s)``, the improper policy class is the mixture
``π_θ = Σ_m softmax(θ)_m K_m`` (:func:`mixture_policy`), ``θ ∈ R^M``. Its exact policy gradient is
``∂V^{π_θ}(ρ)/∂θ_m = 1/(1−γ) Σ_s d^{π_θ}_ρ(s) Σ_a w_m (K_m(a|s) − π_θ(a|s)) Q^{π_θ}(s, a)``, and the
natural gradient preconditions it by the pseudo-inverse of the Fisher matrix of the mixture's
scores (:func:`improper_policy_gradient`). The class need not contain an optimal policy of the
MDP; the algorithms converge to the best mixture (Zaki et al. 2022). Re-exported by
:mod:`rltheory.algorithms.actor_critic`.

References
----------
Zaki, M., Mohan, A., Gopalan, A., Mannor, S. (2022). Actor-critic based improper
reinforcement learning. ICML.
Kakade, S. (2001). A natural policy gradient. NeurIPS.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._validate import _source_atol, check_finite, check_probability
from ..backend import array_namespace, as_float, to_numpy
from ..mdp.bellman import _q_values, _state_occupancy, evaluate_policy, expected_value
from ..mdp.model import FiniteMDP
from ._policy_opt import (
    Loop,
    PolicyOptimizationResult,
    check_iterations,
    check_positive,
    discount,
    initial_distribution,
    optimal_values,
)
from .compatible import _weighted_min_norm
from .soft import softmax

__all__ = ["mixture_policy", "improper_policy_gradient"]


def mixture_policy(controllers: Any, theta: Any) -> Any:
    r"""``π_θ(a|s) = Σ_m softmax(θ)_m K_m(a|s)`` for base controllers ``K[m, s, a]``.

    Each ``controllers[m, s, :]`` must lie on the simplex and ``theta`` be finite
    (``ValueError`` naming the argument and the offending entry or row otherwise).

    Examples
    --------
    >>> import numpy as np
    >>> K = np.array([[[1.0, 0.0]], [[0.0, 1.0]]])
    >>> mixture_policy(K, np.log(np.array([1.0, 3.0]))).tolist()
    [[0.25, 0.75]]
    """
    if isinstance(controllers, (list, tuple)):
        controllers = np.asarray(controllers, dtype=np.float64)
    xp = array_namespace(controllers, theta)
    atol = _source_atol(xp.asarray(controllers), xp)
    K = as_float(controllers, xp)
    th = as_float(theta, xp, K.dtype)
    if K.ndim != 3 or th.shape != (K.shape[0],):
        raise ValueError(
            f"controllers (M, S, A) and theta (M,) disagree: {tuple(K.shape)} vs {tuple(th.shape)}"
        )
    check_probability(K, "controllers", ("m", "s", "a"), "controllers[m, s, :]", atol=atol)
    check_finite(th, "theta", ("m",))
    wts = softmax(th, xp)
    return xp.sum(wts[:, None, None] * K, axis=0)


def improper_policy_gradient(
    mdp: FiniteMDP,
    controllers: Any,
    *,
    eta: float,
    iterations: int,
    natural: bool = True,
    rho: Any = None,
    theta0: Any = None,
    V_star: Any = None,
) -> PolicyOptimizationResult:
    r"""Exact (natural) policy gradient over mixtures of ``M`` base controllers.

    ``∂V^{π_θ}(ρ)/∂θ_m = 1/(1−γ) Σ_s d^{π_θ}_ρ(s) Σ_a w_m (K_m(a|s) − π_θ(a|s)) Q^{π_θ}(s, a)``,
    ``w = softmax(θ)``. Natural: ``θ ← θ + η F(θ)^† ∇V`` with the Fisher matrix
    ``F = Σ_{s,a} d(s) π(a|s) ∇log π(a|s) ∇log π(a|s)ᵀ``, ``∇_θ log π(a|s) = w ⊙ (K(a|s) − π(a|s))/π(a|s)``
    (pairs with ``π(a|s) = 0`` contribute nothing). Plain: ``θ ← θ + η ∇V``.

    Parameters
    ----------
    controllers : array (M, S, A)
        Base policies ``K_m``; rows are checked at the tolerance of the dtype they are given in
        (float32: ``16·eps``, as :func:`mixture_policy`) and divided by their sums.
    eta : float > 0
    iterations : int ≥ 0
    natural : bool
        Natural (Fisher-preconditioned, pseudo-inverse) or plain gradient.
    rho, theta0, V_star
        Start distribution, initial ``θ ∈ R^M`` (zeros: uniform mixture), ``V*`` of the MDP.

    Returns
    -------
    PolicyOptimizationResult
        ``theta`` = final logits; trace ``suboptimality`` (``V*(ρ) − V^{π_θ}(ρ)``, w.r.t. the
        MDP's optimum), ``value`` (``V^{π_θ}(ρ)``) and ``weights`` (``softmax(θ_t)``).

    Raises
    ------
    ValueError
        Bad controllers (shape, ``M = 0``, rows off the simplex), ``eta``, ``iterations`` or
        ``theta0``; a step whose logits overflow (``η`` too large), naming ``t`` and the entry.

    Notes
    -----
    Zaki et al. (2022): with an exact gradient oracle, softmax PG over the mixture
    weights converges at rate ``O(1/t)`` to a stationary point, and the natural
    actor-critic to the best mixture (the test-suite compares the limit with a
    grid search over the simplex). The mixture class need not contain an optimal
    policy of the MDP, so ``suboptimality`` converges to the class's gap.

    The best mixture is reached with small enough steps only: every vertex of the simplex is a
    stationary point of ``θ ↦ V^{π_θ}`` (``∂π/∂θ_m = w_m (K_m − π) → 0`` there), and a large
    natural step can carry the weights next to a vertex that is not the best, where they stay.
    Example (``tests/algorithms/test_h68_improper_large_step.py``, exact Fisher steps): 3 states,
    3 random controllers, ``γ = 0.9``; ``η = 1`` goes from the uniform mixture to within ``e^{-21}``
    of vertex 1 in one step and stays (``V = 5.2793``), while ``η = 0.1`` reaches vertex 0, the
    best mixture (``V = 5.3030``), and plain PG does too.

    Numerics (``natural=True``): the scores use ``K_m − π = Σ_{m'} w_{m'}(K_m − K_{m'})``, known to
    their relative rounding however close ``w`` is to a vertex, and the step is
    ``Σ_j v_j (v_jᵀ∇)/σ_j²`` over the directions the SVD of the weighted score design resolves,
    with ``∇`` summed term by term. Near a vertex (one weight ``≈ 1``, the others down to
    ``e^{-700}``) the step equals the exact Fisher step to ``~1e-12`` (tested against rational
    arithmetic); before, it was wrong from ``w_m ≈ 1e-13`` and 0 from ``w_m ≈ 1e-44``. Limitation:
    a direction whose singular value is within ``16·SA·ε`` of the largest is cut, and one just
    above carries a relative error ``≈ ε·σ_max/σ_j``: on an edge of the simplex (a controller of
    weight ``≲ 1e-13`` while the others are interior) the exact step has size ``≈ 1/w_m`` and is
    returned with a relative error up to ``~1e-2``; a controller whose weight underflows to 0 (logit
    gap ``> 745``) is not moved.

    Examples
    --------
    >>> import numpy as np
    >>> from rltheory.mdp import FiniteMDP
    >>> mdp = FiniteMDP(np.ones((1, 2, 1)), np.array([[0.0, 1.0]]), gamma=0.5)
    >>> K = np.array([[[1.0, 0.0]], [[0.0, 1.0]]])
    >>> res = improper_policy_gradient(mdp, K, eta=1.0, iterations=60)
    >>> bool(res.trace["suboptimality"][-1] < 1e-3)
    True
    """
    g = discount(mdp, "improper_policy_gradient", single=True)
    eta = check_positive(eta, "eta")
    iterations = check_iterations(iterations)
    xp = mdp.xp
    if isinstance(controllers, (list, tuple)):
        controllers = np.asarray(controllers, dtype=np.float64)
    K = as_float(controllers, xp, mdp.dtype)
    if K.ndim != 3 or tuple(K.shape[1:]) != (mdp.S, mdp.A):
        raise ValueError(
            f"controllers must have shape (M, S, A) = (M, {mdp.S}, {mdp.A}); got {tuple(K.shape)}"
        )
    if K.shape[0] == 0:
        raise ValueError(
            f"controllers must hold at least one controller (M >= 1); got shape {tuple(K.shape)}"
        )
    # rows are judged at the tolerance of the dtype they were given in (as mixture_policy does): float32
    # controllers summing to 1 − 3e-8 were refused at float64's 1e-8 once cast to a float64 model
    atol = _source_atol(xp.asarray(controllers), xp)
    for m in range(K.shape[0]):
        check_probability(
            K[m, ...], f"controllers[{m}]", ("s", "a"), f"controllers[{m}][s, :]", atol=atol
        )
    K = K / xp.sum(
        K, axis=-1, keepdims=True
    )  # accepted rows made to sum to 1 (a change within atol)
    M = K.shape[0]
    rho = initial_distribution(mdp, rho)
    V_star = optimal_values(mdp, V_star)
    theta = (
        xp.zeros((M,), dtype=mdp.dtype, device=K.device)
        if theta0 is None
        else as_float(theta0, xp, mdp.dtype)
    )
    if tuple(theta.shape) != (M,):
        raise ValueError(f"theta0 must have shape ({M},); got {tuple(theta.shape)}")
    check_finite(theta, "theta0", ("m",))
    loop = Loop("improper_policy_gradient", iterations, None, xp)
    t = 0
    while True:
        wts = softmax(theta, xp)
        pi = xp.sum(wts[:, None, None] * K, axis=0)
        V = evaluate_policy(mdp, pi)
        Q = _q_values(mdp, V)
        d = _state_occupancy(mdp, pi, rho)
        # ∂π(a|s)/∂θ_m = w_m (K_m − π) with K_m − π = Σ_{m'} w_{m'}(K_m − K_{m'}) (the m' = m term is
        # exactly 0), shape (M, S, A): each entry to a few ε of Σ_{m'≠m} w_{m'}(K_m + K_{m'}) (err).
        # K_m − π itself cancels near a vertex (w_0 ≈ 1): at w_1 = e^{-40} the gradient's θ_0 entry
        # came out 0 instead of −8.2e-18, and the natural step's scores were noise from w_1 ≈ 1e-14
        # (accumulated over m', so memory stays O(M·S·A))
        acc, acc_err = xp.zeros_like(K), xp.zeros_like(K)
        idx = xp.arange(M, device=K.device)
        for j in range(M):
            acc = acc + wts[j] * (K - K[j, ...])
            other = xp.reshape(idx != j, (M, 1, 1))  # m' = j ≠ m
            acc_err = acc_err + xp.where(other, wts[j] * (K + K[j, ...]), xp.zeros_like(K))
        dpi, err = wts[:, None, None] * acc, wts[:, None, None] * acc_err
        grad = xp.sum(d[None, :, None] * dpi * Q[None, ...], axis=(-2, -1)) / (1.0 - g)
        value = expected_value(V, rho)
        m = {"suboptimality": expected_value(V_star, rho) - value, "value": value, "weights": wts}
        if loop.record(t, m["suboptimality"], **m):
            break
        if natural:
            pos = pi > 0
            safe = xp.where(pos, pi, xp.ones_like(pi))
            score = xp.where(pos[None, ...], dpi / safe[None, ...], xp.zeros_like(dpi))  # (M, S, A)
            serr = xp.where(pos[None, ...], err / safe[None, ...], xp.zeros_like(err))
            # F⁺∇ with F = E_{d⊗π}[score scoreᵀ] and ∇ = E_{d⊗π}[score Q]/(1−γ) is the minimum-norm
            # weighted least-squares fit of Q by the scores (compatible function approximation),
            # solved without forming F (which squares the conditioning). Each score
            # w_m (K_m − π)/π is known to a few ε of serr = w_m Σ_{m'≠m} w_{m'}(K_m + K_{m'})/π, its
            # own size near a vertex; their sum over m (the null direction of the mixture's
            # logits, exactly 0) sits at that level and is cut there (per direction)
            n_sa = mdp.S * mdp.A
            X = xp.matrix_transpose(xp.reshape(score, (M, n_sa)))
            E = xp.matrix_transpose(xp.reshape(serr, (M, n_sa)))
            wsa = xp.reshape(d[:, None] * pi, (n_sa,))
            # ∇(1−γ) = Σ d·∂π·Q term by term (not from the SVD's left vectors, see _weighted_min_norm)
            rhs = grad * (1.0 - g)
            y = xp.reshape(Q, (n_sa,))
            direction = _weighted_min_norm(X, wsa, y, xp, err=E, rhs=rhs) / (1.0 - g)
        else:
            direction = grad
        with np.errstate(over="ignore", invalid="ignore"):
            theta = theta + eta * direction
        if not bool(xp.all(xp.isfinite(theta))):  # a NaN mixture and "pi must be finite" before
            h = to_numpy(theta)
            m_bad = int(np.argmax(~np.isfinite(h)))
            raise ValueError(
                f"improper_policy_gradient at iteration t={t + 1} (eta={eta:g}; use a smaller eta): "
                f"the logits overflow; theta[{m_bad}] = {h[m_bad]} after a step of "
                f"{float(to_numpy(direction)[m_bad]):.3g} * eta"
            )
        t += 1
    return loop.result(pi, theta=theta)
