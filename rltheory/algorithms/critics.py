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
:mod:`rltheory.algorithms.features`, the exact fixed point in
:mod:`rltheory.algorithms.td_fixed_point`, LSTD in
:mod:`rltheory.algorithms.least_squares_td` and the compatible critic in
:mod:`rltheory.algorithms.compatible`; all names are re-exported here.

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

from .._validate import check_int as _int
from .._validate import real_scalar
from ..backend import require_host
from ..mdp.model import FiniteMDP
from ..mdp.sample import rollout
from ..trace import Trace, TraceRecorder
from ._q_common import _rng
from ._td_checks import _td_divergence_reason
from .compatible import compatible_critic
from .features import (
    compatible_features,
    random_features,
    rbf_features,
    state_action_features,
    tabular_features,
    tile_features,
)
from .least_squares_td import lstd, lstd_estimate
from .td_fixed_point import (
    TDFixedPoint,
    _features,
    _fixed_point,
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
            got = step_size(t)
            a = real_scalar(got)  # NaN for bools, arrays of shape (1,), None, text
            if not (math.isfinite(a) and a >= 0):
                # the returned value, not the NaN it was read as ('step_size(0) = nan' for None)
                raise ValueError(
                    f"step_size must return finite steps >= 0; step_size({t}) = {got!r}"
                )
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

    Raises
    ------
    ValueError
        Bad arguments (located); the iterates or their values ``Φθ`` overflowing, naming the step
        ``t``, the run and ``α_t``, and why: ``α_t`` beyond the mean path's stability limit
        ``min_i 2 Re λ_i/|λ_i|²`` (``λ_i`` the eigenvalues of ``A``; the message gives it), or
        features so large (``|φ| ≳ 1e162``) that this limit lies below the smallest positive float
        and no step size is stable (the message names ``max|Φ|`` and its entry).

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
    # A_s = A/4^e (the TD matrix of Phi/2^e) is in range where A is not: the divergence message
    fp, A_s, _, _, e = _fixed_point(mdp, pi, Phi, lam, d, "projected_fixed_point")
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
    # the running average (1/t) Σ θ_s itself, as avg·(t−1)/t + θ/t: the sum Σ θ_s overflowed for
    # values near 1e306 (theta_avg = inf, error_avg = NaN, with numpy's warnings) while θ converged
    avg = np.zeros_like(theta)
    rec = TraceRecorder()

    def err(th: np.ndarray) -> np.ndarray:
        with np.errstate(over="ignore"):  # Phi theta beyond the range: refused below
            return _weighted_norm(
                (th - theta_star) @ F.T, dd
            )  # scaled: no overflow of diff² at large values

    def diverged(t: int, run: int, what: str) -> ValueError:
        i, j = np.unravel_index(int(np.argmax(np.abs(F))), F.shape)
        scale = f"max|Phi| = {float(np.abs(F[i, j]))!r} at Phi(s={i}, j={j})"
        # "use smaller steps" also where no float step is stable (features 1e200). The samples
        # follow P_pi from s_0 ~ d, so the mean path is the stationary law's: for a given d its own
        # A (possibly not positive definite) is used only where P_pi has no unique stationary law
        A_m, e_m = A_s, e
        if d is not None:
            try:
                _, A_m, _, _, e_m = _fixed_point(mdp, pi, Phi, lam, None, "td_linear")
            except ValueError:  # multichain P_pi (LinAlgError is a ValueError): the given d's own A
                A_m, e_m = A_s, e
        return ValueError(
            f"td_linear diverged: theta overflowed{what} at step t={t} of run {run} "
            f"(step_size({t}) = {alpha(t)!r}, lam={lam!r}): "
            + _td_divergence_reason(A_m, e_m, alpha(t), scale)
        )

    rec.record(0, error=err(theta), error_avg=err(theta))
    for t in range(steps):
        f0 = F[tr.states[:, t]]
        f1 = F[tr.states[:, t + 1]]
        with np.errstate(over="ignore", invalid="ignore"):
            delta = R[:, t] + g * np.sum(f1 * theta, axis=1) - np.sum(f0 * theta, axis=1)
            z = (g * lam) * z + f0
            theta = theta + alpha(t) * delta[:, None] * z
        if not np.all(np.isfinite(theta)):
            # NaN iterates and errors with numpy's overflow warnings before (as TDCritic reports)
            raise diverged(t, int(np.argmax(~np.all(np.isfinite(theta), axis=1))), "")
        avg = avg * (t / (t + 1)) + theta / (t + 1)
        if (t + 1) % record_every == 0 or t + 1 == steps:
            e_t, e_avg = err(theta), err(avg)
            if not np.all(np.isfinite(e_t)):  # theta finite, Phi theta not (an inf error before)
                raise diverged(t, int(np.argmax(~np.isfinite(e_t))), " (its values Phi theta)")
            rec.record(t + 1, error=e_t, error_avg=e_avg)
    return TDResult(theta=theta, theta_avg=avg, fixed_point=fp, trace=rec.finish())
