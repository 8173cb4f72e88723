r"""Linear critics: feature maps, the projected Bellman fixed point, TD(λ), LSTD(λ), compatible features.

Policy evaluation with linear features ``V_θ = Φθ`` (``Φ[s, :] = φ(s)ᵀ``, full
column rank) on the Markov chain ``P_π`` with weighting ``D = diag(d)``:

* the projected Bellman equation ``Φθ* = Π_D T^{(λ)} Φθ*`` is ``Aθ* = b`` with
  ``A = Φᵀ D (I − γλP_π)^{-1}(I − γP_π) Φ`` and ``b = Φᵀ D (I − γλP_π)^{-1} r_π``
  (:func:`projected_fixed_point`, exact);
* on-policy (``d`` the stationary law of ``P_π``), ``A`` is positive definite
  and TD(λ), ``θ ← θ + α_t δ_t z_t`` with ``δ_t = r_t + γφ(s_{t+1})ᵀθ − φ(s_t)ᵀθ`` and
  ``z_t = γλ z_{t−1} + φ(s_t)``, converges to ``θ*`` almost surely under
  Robbins–Monro steps (Tsitsiklis & Van Roy 1997, Thm 1) (:func:`td_linear`);
* LSTD(λ) solves the sample version ``Â θ = b̂``,
  ``Â = (1/n) Σ_t z_t (φ_t − γφ_{t+1})ᵀ``, ``b̂ = (1/n) Σ_t z_t r_t`` (Bradtke & Barto
  1996; Boyan 2002), consistent for ``θ*`` (:func:`lstd`, :func:`lstd_estimate`);
* the fixed point's error obeys ``‖Φθ* − V^π‖_D ≤ ‖Π_D V^π − V^π‖_D/√(1 − κ²)``,
  ``κ = γ(1−λ)/(1−γλ)`` (:func:`rltheory.bounds.td_fixed_point_bound`).

Compatible features for a softmax-linear policy ``π_θ(a|s) ∝ exp(θᵀφ(s, a))`` are
``ψ(s, a) = ∇_θ log π_θ(a|s) = φ(s, a) − Σ_b π_θ(b|s) φ(s, b)``; the least-squares
fit of ``A^π`` on ``ψ`` under ``d^π_ρ ⊗ π`` is the natural gradient direction
(Kakade 2001; Sutton et al. 2000, Thm 2) (:func:`compatible_features`,
:func:`compatible_critic`).

Sample-based routines (this module) run on the host (numpy) with an explicit
Generator; exact routines are array-API kernels. The feature maps live in
:mod:`rltheory.algorithms.features` and the exact fixed point in
:mod:`rltheory.algorithms.td_fixed_point`; all names are re-exported here.

References
----------
Tsitsiklis, J. N., Van Roy, B. (1997). An analysis of temporal-difference learning with
function approximation. IEEE TAC 42(5). Lemmas 4–6, Theorem 1.
Bradtke, S., Barto, A. (1996). Linear least-squares algorithms for temporal difference
learning. Machine Learning 22.
Boyan, J. (2002). Technical update: least-squares temporal difference learning. MLJ 49.
Sutton, R., McAllester, D., Singh, S., Mansour, Y. (2000). Policy gradient methods for RL
with function approximation. NeurIPS. Theorem 2.
Sutton, R., Barto, A. (2018). *Reinforcement Learning*, 2nd ed. §9.5 (tile coding, RBFs).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._validate import as_distribution, check_finite, real_scalar
from .._validate import check_int as _int
from ..backend import as_float, require_host, to_numpy
from ..mdp.bellman import (
    _q_values,
    _state_occupancy,
    as_stochastic_policy,
    evaluate_policy,
)
from ..mdp.model import FiniteMDP
from ..mdp.sample import rollout
from ..trace import Trace, TraceRecorder
from ._q_common import _rng
from .features import (
    _host_float,
    compatible_features,
    random_features,
    rbf_features,
    state_action_features,
    tabular_features,
    tile_features,
)
from .td_fixed_point import (
    TDFixedPoint,
    _d_basis,
    _features,
    _weighted_norm,
    expected_td,
    projected_fixed_point,
    projection,
    weighted_norm,
)

__all__ = [
    "tabular_features",
    "random_features",
    "rbf_features",
    "tile_features",
    "state_action_features",
    "compatible_features",
    "projected_fixed_point",
    "TDFixedPoint",
    "weighted_norm",
    "projection",
    "expected_td",
    "td_linear",
    "TDResult",
    "lstd_estimate",
    "lstd",
    "compatible_critic",
]


@dataclass(frozen=True, eq=False)
class TDResult:
    """Result of :func:`td_linear`.

    Attributes
    ----------
    theta : numpy.ndarray (n_runs, d)
        Last iterates.
    theta_avg : numpy.ndarray (n_runs, d)
        Polyak–Ruppert averages ``(1/T) Σ_t θ_t``.
    fixed_point : TDFixedPoint
    trace : Trace
        ``error`` and ``error_avg`` (``‖Φθ_t − Φθ*‖_D`` of the iterate and of the
        running average), shape ``(K, n_runs)``, at the recorded steps.
    converged : None
        Sample budget is fixed (no stopping rule).
    """

    theta: np.ndarray
    theta_avg: np.ndarray
    fixed_point: TDFixedPoint
    trace: Trace
    converged: None = None


def _steps(step_size: float | Callable[[int], float]) -> Callable[[int], float]:
    if callable(step_size):

        def checked(t: int) -> float:
            a = real_scalar(step_size(t))
            if not (math.isfinite(a) and a >= 0):
                raise ValueError(f"step_size must return finite steps >= 0; step_size({t}) = {a!r}")
            return a

        return checked
    a = real_scalar(step_size)  # Python or numpy real; NaN (failing the test) for anything else
    if not a > 0:
        raise ValueError(f"step_size must be > 0 or a callable t -> alpha_t; got {step_size!r}")
    if not math.isfinite(a):
        raise ValueError(f"step_size must be finite; got {step_size!r}")
    return lambda t: a


def td_linear(
    mdp: FiniteMDP,
    pi: Any,
    Phi: Any,
    *,
    steps: int,
    step_size: float | Callable[[int], float],
    rng: np.random.Generator | int,
    lam: float = 0.0,
    n_runs: int = 1,
    d: Any = None,
    record_every: int = 1,
) -> TDResult:
    r"""On-policy TD(λ) with linear features along ``n_runs`` independent trajectories.

    ``δ_t = r(s_t, a_t) + γφ(s_{t+1})ᵀθ_t − φ(s_t)ᵀθ_t``, ``z_t = γλ z_{t−1} + φ(s_t)``,
    ``θ_{t+1} = θ_t + α_t δ_t z_t``, with ``s_0 ~ d`` (the stationary distribution by
    default, as in the theorem) and ``a_t ~ π(·|s_t)``.

    Parameters
    ----------
    mdp : FiniteMDP
        Single discounted host model.
    pi : array
        Policy to evaluate.
    Phi : array (S, d)
        Features.
    steps : int ≥ 1
        Transitions per run.
    step_size : float or callable
        ``α_t`` (``t = 0, 1, ...``); constant, or e.g. ``lambda t: 1/(t + 100)``. A callable's
        steps must be finite and ``≥ 0`` (``ValueError`` naming ``t`` and the value otherwise).
    rng : numpy.random.Generator or int
    lam : float in [0, 1]
    n_runs : int ≥ 1
        Independent trajectories updated together (vectorised).
    d : array (S,), optional
        Start distribution and norm weighting (stationary by default). ``fixed_point`` is the one
        for ``D = diag(d)``, but the samples follow ``dP_π^t``, so the iterates approach it only
        for a ``P_π``-invariant ``d``; from another start they approach the fixed point of the
        trajectory's long-run law (the stationary one for a unichain ``P_π``) and ``error`` stalls.
    record_every : int ≥ 1
        Record the errors every this many steps (and at the last step).

    Returns
    -------
    TDResult

    Notes
    -----
    Theorem (Tsitsiklis & Van Roy 1997, Thm 1): ``P_π`` irreducible aperiodic,
    ``Φ`` full column rank, ``Σα_t = ∞``, ``Σα_t² < ∞``: ``θ_t → θ*`` a.s.
    Finite time (Bhandari, Russo & Singal 2018): with a constant step ``α ∝ 1/√T``
    and averaging, ``E‖Φθ̄_T − Φθ*‖²_D = O(1/((1−γ)√T))``. Sampling uses
    :func:`rltheory.mdp.sample.rollout`; runs on the host.

    Examples
    --------
    >>> import numpy as np
    >>> from rltheory.mdp import FiniteMDP
    >>> mdp = FiniteMDP(np.array([[[0.0, 1.0]], [[1.0, 0.0]]]), np.array([[1.0], [0.0]]), gamma=0.5)
    >>> res = td_linear(mdp, np.array([0, 0]), np.eye(2), steps=2000, step_size=0.1, rng=0)
    >>> bool(res.trace["error"][-1, 0] < 1e-6)   # deterministic chain: TD is exact
    True
    """
    steps = _int(steps, "steps")
    n_runs = _int(n_runs, "n_runs")
    record_every = _int(record_every, "record_every")
    alpha = _steps(step_size)
    gen = _rng(rng)
    fp = projected_fixed_point(mdp, pi, Phi, lam=lam, d=d)
    F = require_host(_features(mdp, Phi), "td_linear")
    dd = require_host(fp.d, "td_linear")
    theta_star = require_host(fp.theta, "td_linear")
    tr = rollout(
        mdp, pi, steps, n_runs, gen, mu=np.clip(dd, 0.0, None) / np.clip(dd, 0.0, None).sum()
    )
    R = tr.rewards
    g = float(mdp.gamma)
    theta = np.zeros((n_runs, F.shape[1]))
    z = np.zeros_like(theta)
    total = np.zeros_like(theta)
    rec = TraceRecorder()

    def err(th: np.ndarray) -> np.ndarray:
        return _weighted_norm(
            (th - theta_star) @ F.T, dd
        )  # scaled: no overflow of diff² at large values

    rec.record(0, error=err(theta), error_avg=err(theta))
    for t in range(steps):
        f0 = F[tr.states[:, t]]
        f1 = F[tr.states[:, t + 1]]
        delta = R[:, t] + g * np.sum(f1 * theta, axis=1) - np.sum(f0 * theta, axis=1)
        z = (g * lam) * z + f0
        theta = theta + alpha(t) * delta[:, None] * z
        total += theta
        if (t + 1) % record_every == 0 or t + 1 == steps:
            rec.record(t + 1, error=err(theta), error_avg=err(total / (t + 1)))
    return TDResult(theta=theta, theta_avg=total / steps, fixed_point=fp, trace=rec.finish())


def lstd_estimate(
    phi: Any, rewards: Any, phi_next: Any, *, gamma: float, lam: float = 0.0, ridge: float = 0.0
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    r"""LSTD(λ) from one trajectory's features: ``θ̂ = (Â + ridge·I)^{-1} b̂``.

    ``z_t = γλ z_{t−1} + φ_t``, ``Â = (1/n) Σ_t z_t (φ_t − γφ'_t)ᵀ``, ``b̂ = (1/n) Σ_t z_t r_t``.

    Parameters
    ----------
    phi, phi_next : array (n, d)
        ``φ(s_t)`` and ``φ(s_{t+1})`` (or state-action features for LSTD-Q), in time order.
    rewards : array (n,)
    gamma : float in [0, 1)
    lam : float in [0, 1]
    ridge : float ≥ 0
        Tikhonov term for a singular ``Â`` (0: the plain estimator).

    Returns
    -------
    (theta, A_hat, b_hat)

    Raises
    ------
    ValueError
        Shapes disagree; a NaN or infinite entry of ``phi``, ``rewards`` or ``phi_next``
        (located); bad ``gamma``, ``lam``, ``ridge``; an estimate beyond the float range (its
        index; the rewards are scaled by a power of 2, so every in-range estimate
        is returned, from subnormal rewards to 1.7e308).
    numpy.linalg.LinAlgError
        ``ridge = 0`` and ``phi`` rank deficient on the sample (a feature never visited, more
        features than transitions, or a column that is a combination of the others to rounding;
        the message names the column), or ``Â`` singular.

    Notes
    -----
    Bradtke & Barto (1996); Boyan (2002), Fig. 1. Consistent for the TD(λ) fixed
    point under on-policy sampling (ergodic theorem); with one-hot features and
    ``λ = 0`` it equals the value of the empirical Markov reward process of the
    trajectory (certainty equivalence).

    Numerics: with ``ridge = 0`` the system is solved in the basis ``ψ = φT`` that is
    orthonormal for the sample (``(1/n) Σ_t ψ_tψ_tᵀ = I``, from the SVD of the
    column-equilibrated ``φ``), never by a direct solve of ``Âθ = b̂``, whose condition number
    carries ``cond(φ)²``; ``A_hat`` and ``b_hat`` are returned in the coordinates of ``φ``
    (``A_hat`` is ``inf`` where its exact value leaves the float range, ``|φ| ≳ 1e154``; ``θ̂`` does
    not use it). With ``ridge > 0`` the Tikhonov system is solved in the coordinates of ``φ``, so an
    ``A_hat`` beyond the range is a ``ValueError`` naming the entry.

    Examples
    --------
    >>> import numpy as np
    >>> th, A, b = lstd_estimate(np.eye(2)[[0, 1]], np.array([1.0, 0.0]), np.eye(2)[[1, 0]], gamma=0.5)
    >>> np.round(th, 12).tolist()   # V(0) = 1 + V(1)/2, V(1) = V(0)/2
    [1.333333333333, 0.666666666667]
    """
    f0 = _host_float(phi, "phi")
    f1 = _host_float(phi_next, "phi_next")
    r = _host_float(rewards, "rewards")
    if f0.ndim != 2 or f0.shape != f1.shape or r.shape != f0.shape[:1]:
        raise ValueError(
            f"phi, phi_next (n, d) and rewards (n,) disagree: {f0.shape}, {f1.shape}, {r.shape}"
        )
    if f0.shape[0] < 1:
        raise ValueError(
            f"phi, phi_next and rewards must hold at least one transition; got n={f0.shape[0]}"
        )
    g, lm, rd = (
        real_scalar(gamma),
        real_scalar(lam),
        real_scalar(ridge),
    )  # NaN for non-reals and bools
    if not 0 <= g < 1:
        raise ValueError(f"gamma must lie in [0, 1); got {gamma!r}")
    if not 0.0 <= lm <= 1.0:
        raise ValueError(f"lam must lie in [0, 1]; got {lam!r}")
    if not rd >= 0:
        raise ValueError(f"ridge must be >= 0; got {ridge!r}")
    if not math.isfinite(rd):
        raise ValueError(f"ridge must be finite; got {ridge!r}")
    check_finite(f0, "phi", ("t", "j"))
    check_finite(r, "rewards", ("t",))
    check_finite(f1, "phi_next", ("t", "j"))
    return _lstd_estimate(f0, r, f1, gamma=g, lam=lm, ridge=rd)


def _lstd_estimate(
    f0: np.ndarray, r: np.ndarray, f1: np.ndarray, *, gamma: float, lam: float, ridge: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`lstd_estimate` on validated float arrays (library loops).

    ``θ̂`` and ``b̂`` are linear in the rewards, so they are computed for ``r/m`` with ``m`` the power
    of 2 at ``max|r|`` (exact) and scaled back: the sums ``Σ_t z_t r_t`` overflowed (NaN ``θ̂``) for
    rewards near 1e307 whose estimate is in range.
    """
    n = f0.shape[0]
    e = int(np.frexp(np.max(np.abs(r)))[1]) - 1 if np.any(r) else 0  # 2^e <= max|r| < 2^(e+1)
    m = math.ldexp(1.0, e)
    r = r / m
    Z = _traces(f0, gamma * lam)
    with np.errstate(
        over="ignore", under="ignore"
    ):  # Â in the coordinates of φ may leave the range
        A = Z.T @ (f0 - gamma * f1) / n
    b = Z.T @ r / n
    if ridge != 0.0:
        if not np.all(np.isfinite(A)):  # the Tikhonov system lives in the coordinates of φ
            i, j = (int(v) for v in np.argwhere(~np.isfinite(A))[0])
            raise ValueError(
                f"with ridge > 0 the LSTD system (A_hat + ridge I) theta = b_hat is solved in the "
                f"coordinates of phi, and A_hat[{i}, {j}] = {float(A[i, j])} is beyond the float range "
                f"(max|phi| = {float(np.max(np.abs(f0)))!r}); scale the features down"
            )
        return _unscaled(np.linalg.solve(A + ridge * np.eye(A.shape[0]), b), m), A, b * m
    # Solved in the sample-orthonormal basis ψ = φT ((1/n) Σ_t ψ_t ψ_tᵀ = I, see _d_basis): the
    # system Tᵀ Â T w = Tᵀ b̂ keeps the conditioning of the estimator, while Â carries cond(φ)²
    # on top (nearly collinear features lost ~20% of the values at cond ≈ 1e7).
    _, _, T = _d_basis(
        f0,
        np.full(n, 1.0 / n),
        np,
        field="phi",
        rows="n",
        unit="transitions",
        support="the sample",
        vanish="every sampled transition",
    )
    Zt = Z @ T  # the traces of ψ (the recursion is linear)
    At = Zt.T @ (f0 @ T - gamma * (f1 @ T)) / n
    bt = Zt.T @ r / n
    return _unscaled(T @ np.linalg.solve(At, bt), m), A, b * m


def _unscaled(theta: np.ndarray, m: float) -> np.ndarray:
    """``m·θ`` for the estimate ``θ`` of the rewards ``r/m``; a located error where it leaves the float range."""
    with np.errstate(over="ignore"):
        out = theta * m
    if not np.all(np.isfinite(out)):
        j = int(np.argmax(~np.isfinite(out)))
        raise ValueError(
            f"the LSTD estimate is beyond the float range: theta[{j}] = {float(theta[j])!r} * "
            f"2^{math.frexp(m)[1] - 1} (the estimate for the rewards divided by that power, max|r| >= "
            f"{m!r}); values scale with the rewards: divide them by a power of 2"
        )
    return out


def _traces(f: np.ndarray, decay: float) -> np.ndarray:
    """Eligibility traces ``z_t = decay·z_{t−1} + f_t`` (``z_{−1} = 0``), row ``t`` of the result."""
    if decay == 0.0:
        return f
    Z = np.empty_like(f)
    z = np.zeros(f.shape[1])
    for t in range(f.shape[0]):
        z = decay * z + f[t]
        Z[t] = z
    return Z


def lstd(
    mdp: FiniteMDP,
    pi: Any,
    Phi: Any,
    *,
    steps: int,
    rng: np.random.Generator | int,
    lam: float = 0.0,
    d: Any = None,
    ridge: float = 0.0,
) -> tuple[np.ndarray, TDFixedPoint]:
    r"""LSTD(λ) on one on-policy trajectory of ``steps`` transitions from ``s_0 ~ d``.

    ``d`` (stationary by default) also weights the returned fixed point; the estimate converges
    to it only for a ``P_π``-invariant ``d`` (otherwise to the fixed point of the trajectory's
    long-run law, the stationary one for a unichain ``P_π``).

    Returns ``(theta_hat, fixed_point)`` so the estimate can be compared with the
    exact ``θ*`` (:func:`projected_fixed_point`); ``‖θ̂ − θ*‖ = O_P(n^{-1/2})``
    (Lazaric, Ghavamzadeh & Munos 2012, Thm 1 for the β-mixing rate).

    Examples
    --------
    >>> import numpy as np
    >>> from rltheory.mdp import FiniteMDP
    >>> mdp = FiniteMDP(np.array([[[0.0, 1.0]], [[1.0, 0.0]]]), np.array([[1.0], [0.0]]), gamma=0.5)
    >>> th, fp = lstd(mdp, np.array([0, 0]), np.eye(2), steps=10, rng=0)
    >>> bool(np.allclose(th, fp.theta))
    True
    """
    steps = _int(steps, "steps")
    gen = _rng(rng)
    fp = projected_fixed_point(mdp, pi, Phi, lam=lam, d=d)
    F = require_host(_features(mdp, Phi), "lstd")
    dd = np.clip(require_host(fp.d, "lstd"), 0.0, None)
    tr = rollout(mdp, pi, steps, 1, gen, mu=dd / dd.sum())
    s = tr.states[0]
    theta, _, _ = lstd_estimate(
        F[s[:-1]], tr.rewards[0], F[s[1:]], gamma=float(mdp.gamma), lam=lam, ridge=ridge
    )
    return theta, fp


def compatible_critic(mdp: FiniteMDP, pi: Any, psi: Any, *, rho: Any = None) -> tuple[Any, Any]:
    r"""Exact compatible critic ``w* = argmin_w Σ_{s,a} d^π_ρ(s) π(a|s) (ψ(s, a)ᵀw − A^π(s, a))²``.

    Parameters
    ----------
    mdp : FiniteMDP
        Single discounted model.
    pi : array (S, A)
    psi : array (S, A, d)
        Compatible features (:func:`compatible_features`).
    rho : array (S,), optional
        Start distribution of ``d^π_ρ`` (the model's ``μ``).

    Returns
    -------
    (w, residual)
        Minimum-norm least-squares weights and the weighted residual
        ``‖ψᵀw − A^π‖_{d⊗π}`` (the critic's approximation error).

    Raises
    ------
    ValueError
        ``mdp`` batched or average-reward; ``pi`` not a policy, ``psi`` of the wrong shape or
        not finite, ``rho`` not a probability vector (named and located); a critic ``w*`` beyond
        the float range (features far below the advantages, e.g. ``|ψ| ~ 1e-310``; its index).

    Notes
    -----
    Compatible function approximation (Sutton et al. 2000, Thm 2; Kakade 2001):
    ``F(θ) w* = ∇_θV^{π_θ}(ρ)(1−γ)`` with the Fisher matrix
    ``F = E_{d⊗π}[ψψᵀ]``, so ``w*/(1−γ)`` is the natural gradient; for tabular
    features ``ψᵀw* = A^π`` on the support of ``d``.

    Numerics: ``ψ`` and ``A^π`` are divided by the powers of 2 at their largest entries (exact)
    and ``w*`` scaled back, so the answer is covariant under ``ψ → cψ`` from ``|ψ| ~ 1e-300`` to
    ``1e300`` (tested); solved through the SVD of the weighted design ``√(d⊗π)·ψ``, never through
    ``F`` (which squares its condition number), and directions with singular value below
    ``16·max(SA, d)·ε·max|ψ|`` — the rounding level, where the centring of compatible
    features leaves one null direction per state — are dropped. With tabular features
    the weighted residual stays at ~1e-13·max|A^π| even for policies with probabilities
    down to ``e^{-200}`` (tested). The targets are ``A^π(s, a) = Σ_{b≠a} π(b|s)(Q^π(s, a) −
    Q^π(s, b))``, so ``Σ_a π(a|s)A^π(s, a) = 0`` holds to round-off relative to each term even
    where ``Q − V`` would cancel (the likely action of a near-deterministic state).

    Examples
    --------
    >>> import numpy as np
    >>> from rltheory.mdp import FiniteMDP
    >>> mdp = FiniteMDP(np.ones((1, 2, 1)), np.array([[0.0, 1.0]]), gamma=0.0)
    >>> pi = np.full((1, 2), 0.5)
    >>> w, res = compatible_critic(mdp, pi, compatible_features(np.eye(2)[None], pi))
    >>> np.round(w, 12).tolist(), round(float(res), 12)
    ([-0.5, 0.5], 0.0)
    """
    if not isinstance(mdp, FiniteMDP) or mdp.gamma is None or mdp.batch_shape:
        got = (
            type(mdp).__name__
            if not isinstance(mdp, FiniteMDP)
            else f"gamma={mdp.gamma}, batch_shape={mdp.batch_shape}"
        )
        raise ValueError(f"compatible_critic needs a single discounted FiniteMDP; got {got}")
    xp = mdp.xp
    p = as_stochastic_policy(mdp, pi)
    P_ = as_float(psi, xp, mdp.dtype, field="psi")
    if P_.ndim != 3 or tuple(P_.shape[:2]) != (mdp.S, mdp.A):
        raise ValueError(
            f"psi must have shape (S, A, d) = ({mdp.S}, {mdp.A}, d); got {tuple(P_.shape)}"
        )
    check_finite(P_, "psi", ("s", "a", "j"))
    if rho is not None:
        rho = as_distribution(rho, "rho", mdp.S, xp, mdp.dtype)
    return _compatible_critic(mdp, p, P_, rho)


def _compatible_critic(
    mdp: FiniteMDP,
    p: Any,
    P_: Any,
    rho: Any,
    scale: float | None = None,
    err: Any = None,
    one_hot: Any = None,
) -> tuple[Any, Any]:
    """:func:`compatible_critic` on a validated policy ``p``, features ``P_`` and ``rho`` (loops).

    ``scale``: what the entries of ``P_`` are known to up to a few ``ε`` (default ``max|P_|``;
    for ``P_ = φ − E_πφ`` it is ``2·max|φ|``, see :func:`_weighted_min_norm`); ``err``
    ``(S, A, d)``: the same per entry (``|φ| + E_π|φ|``), which replaces it. ``one_hot``: the
    features ``φ`` ``(S, A, d)`` of which ``P_`` are the compatible features, given only when
    they are one-hot up to column order and scale (:func:`features._is_one_hot`); the critic is
    then the closed form :func:`_one_hot_critic`, exact to round-off for every policy."""
    xp = mdp.xp
    Q = _q_values(mdp, evaluate_policy(mdp, p))
    # A^π(s, a) = Σ_{b≠a} π(b|s)(Q(s, a) − Q(s, b)) (the b = a term is exactly 0): Q − V is known
    # only to ε·|Q| absolute, so at a near-deterministic state A(s, a*) ≈ −Σ_b π(b|s)A(s, b) came
    # out as noise far above its size, on the row of weight ≈ d(s)
    adv = xp.sum(p[..., None, :] * (Q[..., :, None] - Q[..., None, :]), axis=-1)
    dsa = _state_occupancy(mdp, p, rho)[..., None] * p
    k = P_.shape[-1]
    X = xp.reshape(P_, (mdp.S * mdp.A, k))
    wts = xp.reshape(dsa, (mdp.S * mdp.A,))
    y = xp.reshape(adv, (mdp.S * mdp.A,))
    if one_hot is not None:
        w = _one_hot_critic(one_hot, dsa, adv, xp)
    else:
        E = None if err is None else xp.reshape(err, (mdp.S * mdp.A, k))
        w = _weighted_min_norm(X, wts, y, xp, scale=scale, err=E)
    with np.errstate(over="ignore", under="ignore"):
        r = X @ w - y
    return w, _weighted_norm(r, wts)  # scaled: no overflow (or underflow) of the squares


def _one_hot_critic(f: Any, dsa: Any, adv: Any, xp: Any) -> Any:
    r"""Closed-form compatible critic for one-hot features ``φ(s, a) = c_{sa}·e_{j(s,a)}``.

    ``f`` ``(S, A, d)``: each ``φ(s, a)`` has one nonzero entry ``c_{sa}``, in a column ``j(s, a)``
    no other pair uses; ``dsa = d(s)π(a|s)`` and ``adv`` ``(S, A)``. With ``u_a = c_{sa} w_{j(s,a)}``,
    ``ψ(s, a)ᵀw = u_a − Σ_b π(b|s) u_b``, whose range on a state is ``{t : Σ_a π(a|s) t_a = 0}``;
    the ``π``-weighted projection of ``A(s, ·)`` onto it is ``A − Σ_b π(b|s)A(s, b)``, reached by
    ``u = A(s, ·) + k_s``. So for ``π > 0`` the weighted least-squares solutions are exactly
    ``w_{j(s,a)} = (A(s, a) + k_s)/c_{sa}`` on the states with ``d(s) > 0``, anything elsewhere,
    and the minimum-norm one takes 0 elsewhere and ``k_s = −Σ_a A(s, a)/c_{sa}² / Σ_a 1/c_{sa}²``
    (``−mean_a A(s, a)`` for ``c = 1``). Every entry costs a few roundings of ``A(s, a)`` and
    ``k_s``, whatever the weights: no solve, so no direction of weight 1e-66 is lost or swamped.

    An action whose ``π(a|s)`` is 0 on a state with ``d(s) > 0`` keeps its
    ``(A(s, a) + k_s)/c_{sa}``: the limit as ``π(a|s) → 0⁺`` (a softmax policy's zeros are
    underflow of positive probabilities, and NPG, ``π' ∝ π·exp(ηA/(1−γ))`` in log space, still
    moves them), not the minimum-norm 0 of a zero-weight row.
    """
    c = xp.sum(f, axis=-1)  # the one nonzero entry of each φ(s, a)
    live = xp.broadcast_to(xp.sum(dsa, axis=-1, keepdims=True) > 0, dsa.shape)
    # k_s is invariant under scaling a state's c_{sa} together, so they are divided by the state's
    # smallest |c_{sa}|: the weights 1/c'² lie in (0, 1] and the one of the smallest is 1. With 1/c²
    # itself, features of size 1e-200 overflowed it (inf/inf = NaN critic) and 1e200 underflowed it
    c_safe = xp.where(live, c, xp.ones_like(c))
    low = xp.min(xp.abs(c_safe), axis=-1, keepdims=True)
    inv2 = xp.where(live, 1.0 / (c_safe / low) ** 2, xp.zeros_like(c))
    tot = xp.sum(inv2, axis=-1, keepdims=True)
    k = -xp.sum(adv * inv2, axis=-1, keepdims=True) / xp.where(tot > 0, tot, xp.ones_like(tot))
    coef = xp.where(live, (adv + k) / c_safe, xp.zeros_like(adv))  # = w_{j(s,a)}
    S, A, d = f.shape
    # f/c is the 0/1 indicator of j(s, a) (exactly: c/c = 1), and each column of f has at most one
    # nonzero entry, so this sum has one term per column
    ind = xp.reshape(f / c_safe[..., None], (S * A, d))
    return xp.reshape(xp.reshape(coef, (1, S * A)) @ ind, (d,))


def _weighted_min_norm(
    X: Any,
    wts: Any,
    y: Any,
    xp: Any,
    *,
    scale: float | None = None,
    err: Any = None,
    rhs: Any = None,
) -> Any:
    """Minimum-norm ``argmin_w Σ_i wts_i (X_i·w − y_i)²`` for weights ``wts ≥ 0`` summing to 1.

    ``X`` is ``(n, k)``. Solved through the SVD of the weighted design ``√wts·X`` (not the
    normal equations, which square its condition number), with directions at the design's
    rounding level cut (see the comment in the body). ``scale``: the size to which the
    entries of ``X`` are known up to a few ``ε`` (default ``max|X|``); give it where ``X``
    comes out of a cancellation that leaves every entry small (an entry is then known to
    ``ε`` times the size of what cancelled, not ``ε·max|X|``). ``err`` (``(n, k)``, optional):
    per-entry sizes to which ``X`` is known up to a few ``ε`` (for ``ψ = φ − E_πφ``:
    ``|φ| + E_π|φ|``); the cut is then per direction, at the larger of the image of those
    errors and the SVD's own absolute error ``ε·σ_max`` (``scale`` is then unused).

    Guarantee: a direction is kept only where its singular value exceeds
    ``16·max(n, k)·ε`` times both its data's rounding level and ``σ_max``, so the perturbation
    the SVD itself commits (it is exact for ``√wts·X`` plus ``O(ε·σ_max)``) and the data's
    rounding are each below ``1/(16·max(n, k))`` of every kept singular value, and
    ``‖w‖ ≤ ‖√wts·y‖/cut``. Directions whose singular value is below
    ``ε·σ_max`` — rows of relative weight under about ``ε²`` that alone determine them — are
    dropped, not solved: no dense SVD resolves them (one kept at ``σ = 3.4e-33`` with
    ``σ_max = 1.4e-6`` gave weights ``(−4499, 9000, −4500)`` for advantages ``< 1``).
    :func:`_one_hot_critic` solves the one-hot case for every weight instead.

    ``rhs`` (``(k,)``, optional): ``Σ_i wts_i y_i X_i`` computed by the caller term by term (each
    to its relative accuracy); the solution is then ``Σ_j v_j (v_jᵀ rhs)/σ_j²`` over the kept
    directions instead of ``Σ_j v_j (u_jᵀ √wts·y)/σ_j``. Equal in exact arithmetic, but the SVD's
    left vectors ``u_j`` are known only to ``ε`` absolute, so rows of large weight and tiny ``X_i``
    (which hardly enter the Gram matrix but do enter ``rhs``) added ``ε·‖√wts·y‖/σ_j`` of noise.
    """
    # X and y are divided by the powers of 2 at their largest entries (exact), the system solved
    # at unit scale and w scaled back: the design's SVD, the rounding levels and the cut's floor
    # below all assume entries of order 1 (features of size 1e-300 fell under the floor and gave
    # w = 0; of size 1e200 the squared rounding levels overflowed to a NaN critic)
    for arr, name in ((X, "X"), (y, "y"), (err, "err"), (rhs, "rhs")):
        # LAPACK's SVD does not return on inf/NaN input (it hung on compatible features that overflowed)
        if arr is not None and not bool(xp.all(xp.isfinite(arr))):
            raise ValueError(f"weighted least squares: {name} has a NaN or infinite entry")
    ex, ey = _exponent(X, xp), _exponent(y, xp)
    X, y = _ldexp(X, -ex), _ldexp(y, -ey)
    if scale is not None:
        scale = math.ldexp(scale, -ex)
    if err is not None:
        err = _ldexp(err, -ex)
    if rhs is not None:
        rhs = _ldexp(rhs, -ex - ey)
    w = _unit_min_norm(X, wts, y, xp, scale=scale, err=err, rhs=rhs)
    with np.errstate(over="ignore"):
        out = _ldexp(w, ey - ex)
    if not bool(xp.all(xp.isfinite(out))):
        j = int(np.argmax(~np.isfinite(to_numpy(out))))
        raise ValueError(
            f"the least-squares weights are beyond the float range: w[{j}] = {float(w[j])!r} * "
            f"2^{ey - ex} (targets of size 2^{ey} on features of size 2^{ex}); scale the features "
            f"up or the rewards down"
        )
    return out


def _exponent(x: Any, xp: Any) -> int:
    """``e`` with ``2^e ≤ max|x| < 2^(e+1)`` (0 for an empty or all-zero ``x``). Host sync."""
    m = float(xp.max(xp.abs(x))) if math.prod(x.shape) else 0.0
    return math.frexp(m)[1] - 1 if m > 0 and math.isfinite(m) else 0


def _ldexp(x: Any, e: int) -> Any:
    """``x·2^e`` by factors within the float range (exact unless the result leaves it)."""
    while e:
        k = max(-1000, min(1000, e))
        x = x * math.ldexp(1.0, k)
        e -= k
    return x


def _unit_min_norm(
    X: Any,
    wts: Any,
    y: Any,
    xp: Any,
    *,
    scale: float | None = None,
    err: Any = None,
    rhs: Any = None,
) -> Any:
    """:func:`_weighted_min_norm` for ``X`` and ``y`` with largest entries in ``[1, 2)`` (or 0)."""
    sw = xp.sqrt(wts)
    Xw = sw[:, None] * X
    # The SVD of the weighted design itself has the square root of the Gram matrix's condition
    # number, so directions of small weight (d(s)π(a|s) of a near-deterministic policy) keep
    # their accuracy. Directions at the rounding level of the design are cut: an entry of X is
    # known to about ε·max|X| (the centring ψ = φ − E_πφ of compatible features leaves one such
    # null direction per state, the scores of a mixture one in all), and the weights sum to 1,
    # so they sit below ε·max|X|·√k; the cut keeps a margin of 16·max(n, k). Cutting relative
    # to the largest singular value instead fails both ways: far below it when every state is
    # near-deterministic (σ_max ≈ √(d·π_min), the null directions survive and w blows up along
    # them), and a cut of 1e-6·σ_max drops directions that NPG's update still needs.
    U, sv, Vh = xp.linalg.svd(Xw, full_matrices=False)
    eps = float(xp.finfo(Xw.dtype).eps)
    if err is not None:
        # Per-direction rounding level ‖√wts ⊙ (err |v_j|)‖ of each right singular direction v_j:
        # a state's centring null direction sits at it (σ_j ≈ ε·√d(s)) and is cut. But the SVD
        # itself is only normwise backward stable: the computed σ_j and v_j carry errors of about
        # ε·σ_max, so a direction of weight d(s)π(a|s) = 7.9e-66 (σ_j = 3.4e-33, cut from its level
        # 4.9e-43, while ε·σ_max = 3e-22) is noise that survived this level alone, and the critic
        # came out as (−4499, 9000, −4500) for advantages below 1. Both levels bound the cut.
        level = xp.sqrt(
            xp.sum((sw[:, None] * (err @ xp.abs(xp.matrix_transpose(Vh)))) ** 2, axis=0)
        )
        smax = xp.max(sv) if sv.shape[0] else xp.zeros((), dtype=sv.dtype, device=sv.device)
        cut = xp.maximum(
            16.0 * max(X.shape) * eps * xp.maximum(level, smax), xp.full_like(sv, 1e-300)
        )
    else:
        if scale is None:
            scale = float(xp.max(xp.abs(X))) if X.shape[0] * X.shape[1] else 0.0
        cut = max(16.0 * max(X.shape) * eps * scale, 1e-300)  # floor: d⊗π ≈ 0
    inv = xp.where(sv > cut, 1.0 / xp.where(sv > cut, sv, xp.ones_like(sv)), xp.zeros_like(sv))
    if rhs is not None:
        return xp.matrix_transpose(Vh) @ (inv * (inv * (Vh @ rhs)))
    return xp.matrix_transpose(Vh) @ (inv * (xp.matrix_transpose(U) @ (sw * y)))
