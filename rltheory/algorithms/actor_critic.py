r"""Natural actor-critic with linear compatible critics, and improper mixtures of base controllers.

Softmax-linear actor ``π_θ(a|s) ∝ exp(θᵀφ(s, a))`` with features ``φ[s, a, :]``;
compatible features ``ψ_θ(s, a) = φ(s, a) − Σ_b π_θ(b|s)φ(s, b)``. The natural
gradient is ``F(θ)^† ∇_θV^{π_θ}(ρ) = w*/(1−γ)`` with the compatible critic
``w* = argmin_w E_{s∼d^{π_θ}_ρ, a∼π_θ}[(ψ_θ(s, a)ᵀw − A^{π_θ}(s, a))²]``
(Kakade 2001; Peters & Schaal 2008), so natural actor-critic is

    θ_{t+1} = θ_t + η w_t/(1−γ),     w_t ≈ w*(θ_t)   (a critic fitted from samples or exactly),

which with tabular features and the exact critic *is* :func:`~rltheory.algorithms.npg_step`.
Critics (strategy objects, :meth:`fit` returns ``w``):

* :class:`ExactCritic` — ``w*`` from exact ``d^π_ρ`` and ``A^π``;
* :class:`LSTDCritic` — LSTD-Q on ``N`` i.i.d. samples ``s ~ d^π_ρ`` (geometric-horizon
  roll-outs from ``ρ``), ``a ~ π``, ``s' ~ P``, ``a' ~ π``; ``φᵀw_Q`` estimates ``Q^π``
  and ``ψᵀw_Q = φᵀw_Q − E_π φᵀw_Q`` the advantage, so ``w = w_Q`` is the compatible
  critic whenever ``Q^π`` is linear in ``φ`` (Agarwal et al. 2021, §6.2);
* :class:`TDCritic` — linear SARSA(0)/TD on the same samples, warm-started.

Improper learning over ``M`` base controllers ``K_m(a|s)`` (Zaki et al. 2022): the
policy is the mixture ``π_θ = Σ_m softmax(θ)_m K_m`` (:func:`mixture_policy`), optimised by
exact policy gradient or natural policy gradient in ``θ ∈ R^M``
(:func:`improper_policy_gradient`); both live in :mod:`rltheory.algorithms.improper` and are
re-exported here.

References
----------
Kakade, S. (2001). A natural policy gradient. NeurIPS.
Peters, J., Schaal, S. (2008). Natural actor-critic. Neurocomputing 71.
Bhatnagar, S., Sutton, R., Ghavamzadeh, M., Lee, M. (2009). Natural actor-critic
algorithms. Automatica 45(11).
Agarwal, A., Kakade, S. M., Lee, J. D., Mahajan, G. (2021). On the theory of policy
gradient methods. JMLR 22(98). §6 (log-linear policies, NPG and Q-NPG).
Zaki, M., Mohan, A., Gopalan, A., Mannor, S. (2022). Actor-critic based improper
reinforcement learning. ICML.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._validate import check_finite, check_int, check_real, real_scalar
from ..backend import array_namespace, as_float, require_host, to_numpy
from ..mdp.bellman import _state_occupancy, evaluate_policy, expected_value
from ..mdp.model import FiniteMDP
from ..mdp.sample import _cdf, _check_rollout_length, _draw, _rng
from ._policy_opt import (
    Loop,
    PolicyOptimizationResult,
    check_iterations,
    check_positive,
    discount,
    initial_distribution,
    optimal_values,
)
from .compatible import _compatible_critic, compatible_critic
from .features import _check_psi, _compatible_features_loo, _is_one_hot, compatible_features
from .improper import improper_policy_gradient, mixture_policy
from .least_squares_td import _lstd_estimate
from .soft import softmax
from .td_fixed_point import _weighted_norm

__all__ = [
    "softmax_linear_policy",
    "ExactCritic",
    "LSTDCritic",
    "TDCritic",
    "natural_actor_critic",
    "mixture_policy",
    "improper_policy_gradient",
]


def _phi(mdp: FiniteMDP, phi_sa: Any) -> Any:
    f = as_float(phi_sa, mdp.xp, mdp.dtype)
    if f.ndim != 3 or tuple(f.shape[:2]) != (mdp.S, mdp.A):
        raise ValueError(
            f"features must have shape (S, A, d) = ({mdp.S}, {mdp.A}, d); got {tuple(f.shape)}"
        )
    if (
        f.shape[-1] == 0
    ):  # numpy's "cannot reshape array of size 0 into shape (0)" in the critic before
        raise ValueError(
            f"features must have at least one column (d >= 1); got shape {tuple(f.shape)}"
        )
    check_finite(f, "features", ("s", "a", "j"))
    return f


def _softmax_logits(f: Any, th: Any, xp: Any, what: str) -> Any:
    """``softmax(φθ)`` over actions, with a located ``ValueError`` where a logit ``θᵀφ(s, a)``
    overflows (a NaN policy otherwise: ``inf − inf`` in the max-shift)."""
    with np.errstate(over="ignore", invalid="ignore"):
        z = f @ th
    if not bool(xp.all(xp.isfinite(z))):
        h = to_numpy(z)
        s, a = (int(i) for i in np.argwhere(~np.isfinite(h))[0])
        raise ValueError(
            f"{what}: the logits θᵀφ(s, a) overflow; logits(s={s}, a={a}) = {h[s, a]} "
            f"(max|θ| = {float(xp.max(xp.abs(th))):.3g}, max|φ| = {float(xp.max(xp.abs(f))):.3g})"
        )
    return softmax(z, xp)


def softmax_linear_policy(phi_sa: Any, theta: Any) -> Any:
    r"""``π_θ(a|s) = exp(θᵀφ(s, a)) / Σ_b exp(θᵀφ(s, b))`` for features ``φ[s, a, :]``.

    ``phi_sa`` and ``theta`` must be finite, and so must every logit ``θᵀφ(s, a)``
    (``ValueError`` naming the entry otherwise; a NaN policy before).

    Examples
    --------
    >>> import numpy as np
    >>> softmax_linear_policy(np.eye(2)[None], np.log(np.array([1.0, 3.0]))).tolist()
    [[0.25, 0.75]]
    """
    xp = array_namespace(phi_sa, theta)
    f = as_float(phi_sa, xp)
    th = as_float(theta, xp, f.dtype)
    if f.ndim != 3 or th.shape != (f.shape[-1],):
        raise ValueError(
            f"phi_sa (S, A, d) and theta (d,) disagree: {tuple(f.shape)} vs {tuple(th.shape)}"
        )
    check_finite(f, "phi_sa", ("s", "a", "j"))
    check_finite(th, "theta", ("j",))
    return _softmax_logits(f, th, xp, "softmax_linear_policy")


# -- critics ---------------------------------------------------------------------------


@dataclass(frozen=True)
class ExactCritic:
    """The exact compatible critic ``w*`` (:func:`rltheory.algorithms.compatible.compatible_critic`)."""

    def fit(
        self, mdp: FiniteMDP, pi: Any, phi_sa: Any, rho: Any, rng: np.random.Generator, w0: Any
    ) -> Any:
        return compatible_critic(mdp, pi, compatible_features(phi_sa, pi), rho=rho)[0]


def _samples(
    mdp: FiniteMDP,
    pi: Any,
    rho: Any,
    n: int,
    rng: np.random.Generator,
    max_length: float | None = None,
) -> tuple[np.ndarray, ...]:
    """``n`` i.i.d. ``(s, a, r, s', a')`` with ``s ~ d^π_ρ``: the state at an independent
    Geometric(1−γ) time ``T`` of a roll-out from ``ρ`` (``Pr(s_T = s) = d^π_ρ(s)`` exactly).

    The work is ``Θ(n/(1−γ))`` draws in ``Θ(log n/(1−γ))`` vectorised steps, so a discount whose
    expected roll-out length ``1/(1−γ)`` exceeds ``max_length`` (``None``: 10⁴) is refused before
    any draw (:func:`rltheory.mdp.sample._check_rollout_length`, the rule of the networked
    sampler); at ``γ = 1 − 1e-12`` the ``T`` had mean ``1e12`` and the loop did not finish.

    The ``n`` roll-outs are advanced together with :func:`~rltheory.mdp.sample.rollout`'s draws
    (one uniform per episode for ``s_0``, then per step one for ``a_t`` and one for ``s_{t+1}``,
    to step ``max T + 1``), so the samples and the generator's state after them are
    ``rollout``'s; but only the current state is kept, and only episodes with ``t ≤ T + 1`` are
    moved. Storing the whole ``(n, max T + 2)`` roll-out took 19 GB and 4 minutes for ``n = 1000``
    at ``γ = 0.99999`` (``max T ≈ 7·10⁵``), and a MemoryError beyond.
    """
    g = float(mdp.gamma)
    _check_rollout_length(g, max_length, n, segments=1)
    T = (
        rng.geometric(1.0 - g, size=n) - 1 if g > 0 else np.zeros(n, dtype=np.int64)
    )  # P(T = t) = (1−γ)γ^t
    P = require_host(mdp.P, "LSTDCritic").astype(np.float64)
    R = require_host(mdp.R, "LSTDCritic").astype(np.float64)
    cdf_P = _cdf(P)
    cdf_pi = _cdf(require_host(pi, "LSTDCritic").astype(np.float64))
    cdf_mu = _cdf(require_host(rho, "LSTDCritic").astype(np.float64)[None, :])
    s = _draw(np.broadcast_to(cdf_mu, (n, mdp.S)), rng.random(n))
    out = np.zeros((4, n), dtype=np.int64)  # s_T, a_T, s_{T+1}, a_{T+1}
    horizon, t, block = int(T.max()) + 2, 0, max(1, 2**20 // max(n, 1))
    while t < horizon:
        k = min(block, horizon - t)
        u = rng.random(2 * n * k).reshape(
            k, 2, n
        )  # the same doubles as rollout's 2k calls random(n)
        for j in range(k):
            live = np.flatnonzero(
                T + 1 >= t + j
            )  # episodes whose (s_T, a_T, s_{T+1}, a_{T+1}) are not all drawn
            s_live = s[live]
            a = _draw(cdf_pi[s_live], u[j, 0, live])
            for row, hit in ((0, T[live] == t + j), (2, T[live] + 1 == t + j)):
                out[row, live[hit]], out[row + 1, live[hit]] = s_live[hit], a[hit]
            s[live] = _draw(cdf_P[s_live, a], u[j, 1, live])
        t += k
    return out[0], out[1], R[out[0], out[1]], out[2], out[3]


@dataclass(frozen=True)
class LSTDCritic:
    """LSTD-Q on ``samples`` i.i.d. draws from ``d^π_ρ ⊗ π`` (one batch per actor step).

    ``w = (Â + ridge·I)^{-1} b̂``, ``Â = (1/N)Σ φ(s,a)(φ(s,a) − γφ(s',a'))ᵀ``, ``b̂ = (1/N)Σ φ(s,a) r``
    (:func:`rltheory.algorithms.least_squares_td.lstd_estimate`). The error ``‖w − w*‖`` is
    ``O_P(N^{-1/2})`` when ``Q^π`` is linear in ``φ``.

    Each sample is a roll-out of geometric length (mean ``1/(1−γ)``): a discount with
    ``1/(1−γ) > max_length`` (``None``: 10⁴, i.e. ``γ ≤ 0.9999``) is refused with a ``ValueError``
    naming ``γ`` and the length before any draw, as
    :func:`~rltheory.algorithms.networked_critics.sample_rollouts` does; nothing is truncated.
    """

    samples: int = 1000
    ridge: float = 1e-8
    max_length: float | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "samples", check_int(self.samples, "samples"))
        object.__setattr__(
            self, "max_length", check_real(self.max_length, "max_length", low=1.0, allow_none=True)
        )
        # numpy scalars too (np.float32(1e-8) and np.int64(0) were refused as 'must be >= 0')
        r = real_scalar(self.ridge)  # NaN for bools and non-reals, failing the test
        if not r >= 0:
            raise ValueError(f"ridge must be >= 0; got {self.ridge!r}")
        if not math.isfinite(r):
            raise ValueError(f"ridge must be finite; got {self.ridge!r}")
        object.__setattr__(self, "ridge", r)

    def fit(
        self, mdp: FiniteMDP, pi: Any, phi_sa: Any, rho: Any, rng: np.random.Generator, w0: Any
    ) -> Any:
        f = require_host(phi_sa, "LSTDCritic")
        s, a, r, s1, a1 = _samples(mdp, pi, rho, self.samples, rng, self.max_length)
        w, _, _ = _lstd_estimate(
            f[s, a], r, f[s1, a1], gamma=float(mdp.gamma), lam=0.0, ridge=self.ridge
        )
        return _model_weights(mdp, w, "LSTDCritic")


@dataclass(frozen=True)
class TDCritic:
    """Linear TD(0) on Q (SARSA) over ``samples`` i.i.d. transitions, warm-started at the previous ``w``.

    ``w ← w + α_k (r + γφ(s',a')ᵀw − φ(s,a)ᵀw) φ(s,a)``, ``α_k = step_size(k)``.

    The transitions are :class:`LSTDCritic`'s geometric-horizon samples, with the same
    ``max_length`` rule (``1/(1−γ) > max_length`` is refused before any draw; ``None``: 10⁴).
    """

    samples: int = 1000
    step_size: Callable[[int], float] = field(default=lambda k: 0.5 / (1.0 + 0.01 * k))
    max_length: float | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "samples", check_int(self.samples, "samples"))
        object.__setattr__(
            self, "max_length", check_real(self.max_length, "max_length", low=1.0, allow_none=True)
        )
        if not callable(self.step_size):
            raise TypeError(
                f"step_size must be a callable k -> alpha_k; got {type(self.step_size).__name__} "
                f"{self.step_size!r}"
            )

    def fit(
        self, mdp: FiniteMDP, pi: Any, phi_sa: Any, rho: Any, rng: np.random.Generator, w0: Any
    ) -> Any:
        f = require_host(phi_sa, "TDCritic")
        s, a, r, s1, a1 = _samples(mdp, pi, rho, self.samples, rng, self.max_length)
        g = float(mdp.gamma)
        w = np.array(require_host(w0, "TDCritic"), dtype=float)
        with np.errstate(over="ignore", invalid="ignore"):
            for k in range(self.samples):
                alpha = _td_step(self.step_size, k)
                x = f[s[k], a[k]]
                w += alpha * (r[k] + g * f[s1[k], a1[k]] @ w - x @ w) * x
                if not np.all(np.isfinite(w)):
                    # used to surface as "pi must be finite; pi(s=0, a=0) = nan" one actor step later
                    raise ValueError(
                        f"TDCritic diverged: the critic weights overflowed at sample k={k} "
                        f"(step_size({k}) = {alpha!r}); use smaller steps"
                    )
        return _model_weights(mdp, w, "TDCritic")


def _model_weights(mdp: FiniteMDP, w: np.ndarray, who: str) -> Any:
    """The host float64 critic ``w`` in the model's namespace and dtype (as :class:`ExactCritic`'s).

    Returned as float64 before, so a float32 model's actor ``θ``, policies and trace turned
    float64 after the first step with a sample-based critic. A ``w`` beyond the model's float
    range is a located ``ValueError`` (not an ``inf`` blamed on ``η`` one step later)."""
    with np.errstate(over="ignore"):
        out = np.asarray(w, dtype=np.float64).astype(mdp.dtype)
    if not np.all(np.isfinite(out)):
        j = int(np.argmax(~np.isfinite(out)))
        raise ValueError(
            f"{who}: the critic weights are beyond the model's {np.dtype(mdp.dtype).name} range: "
            f"w[{j}] = {float(w[j])!r}"
        )
    return mdp.xp.asarray(out)


def _td_step(step_size: Callable[[int], float], k: int) -> float:
    """``step_size(k)`` as a finite float ``>= 0`` (``ValueError`` naming ``k`` and the value)."""
    got = step_size(k)
    try:
        alpha = float(got) if not isinstance(got, (bool, np.bool_)) else math.nan
    except (TypeError, ValueError):
        alpha = math.nan
    if not (math.isfinite(alpha) and alpha >= 0):
        raise ValueError(
            f"TDCritic.step_size must return a finite step >= 0; step_size({k}) = {got!r}"
        )
    return alpha


def natural_actor_critic(
    mdp: FiniteMDP,
    features: Any,
    *,
    eta: float,
    iterations: int,
    critic: Any = None,
    rng: np.random.Generator | int | None = None,
    rho: Any = None,
    theta0: Any = None,
    V_star: Any = None,
) -> PolicyOptimizationResult:
    r"""Natural actor-critic ``θ_{t+1} = θ_t + η w_t/(1−γ)`` with a softmax-linear actor.

    Parameters
    ----------
    mdp : FiniteMDP
        Single discounted model.
    features : array (S, A, d)
        Actor features ``φ(s, a)`` (also the critic's features for LSTD/TD).
    eta : float > 0
        Actor step.
    iterations : int ≥ 0
    critic : ExactCritic, LSTDCritic or TDCritic
        Default :class:`ExactCritic`.
    rng : numpy.random.Generator or int
        Required by sample-based critics. With :class:`ExactCritic` nothing is drawn: ``rng`` is
        checked (a Generator or an int seed ``>= 0``) and otherwise unused.
    rho : array (S,), optional
        Start distribution of the objective and of the critic's samples.
    theta0 : array (d,), optional
        Initial actor parameters (zeros).
    V_star : array (S,), optional

    Returns
    -------
    PolicyOptimizationResult
        ``theta`` = final actor parameters. Trace: ``suboptimality``
        (exact ``V*(ρ) − V^{π_t}(ρ)``), ``critic_error``
        (``‖ψᵀ(w_t − w*_t)‖_{d⊗π}``, 0 for the exact critic) and ``approximation_error``
        (``‖ψᵀw*_t − A^{π_t}‖_{d⊗π}``, the compatible class's bias).

    Raises
    ------
    ValueError
        Bad features (wrong shape, ``d = 0``, non-finite), step, iterations; an actor step whose
        logits ``θ_tᵀφ(s, a)`` overflow (``η`` too large), naming ``t`` and the entry; a
        sample-based critic at a discount with ``1/(1−γ)`` above its ``max_length`` (the
        expected roll-out length; 10⁴ by default), before any draw. ``TypeError`` for a missing
        ``rng`` with a sample-based critic.

    Notes
    -----
    With tabular features ``φ(s, a) = e_{(s,a)}`` and the exact critic, ``ψᵀw* = A^π``
    on the support of ``d^π_ρ`` and the update is NPG (Agarwal et al. 2021, §5.3);
    numerically too: for features one-hot up to column order and scale the exact critic
    is the closed form ``w*(s, a) = (A^π(s, a) + k_s)/c_{sa}`` (no least-squares solve, so
    no loss however small ``d(s)π(a|s)`` gets, and actions whose ``π`` underflowed to 0 keep
    the ``π → 0⁺`` limit), and NAC's trace equals NPG's to round-off (tested with weights
    down to ``1e-66``, and at ``η`` = 67 and 1000). Other features go through an SVD that
    keeps only directions above its own error level ``16·max(SA, d)·ε·σ_max`` (and their
    data's rounding level), i.e. whose singular values it resolves; a direction that only
    rows of relative weight below about ``ε²`` determine is not moved;
    with approximate critics the error in the natural gradient enters NPG's bound
    additively (Agarwal et al. 2021, Thm 20: ``ε_stat + ε_approx`` terms), which the
    ``nac-critic`` reproduction measures as the critic sample size grows.

    Examples
    --------
    >>> import numpy as np
    >>> from rltheory.mdp import FiniteMDP
    >>> mdp = FiniteMDP(np.ones((1, 2, 1)), np.array([[0.0, 1.0]]), gamma=0.5)
    >>> res = natural_actor_critic(mdp, np.eye(2)[None], eta=1.0, iterations=30)
    >>> bool(res.trace["suboptimality"][-1] < 1e-6)
    True
    """
    g = discount(mdp, "natural_actor_critic", single=True)
    eta = check_positive(eta, "eta")
    iterations = check_iterations(iterations)
    critic = ExactCritic() if critic is None else critic
    if isinstance(critic, type):  # its unbound fit failed with "missing 1 required ... 'w0'"
        raise TypeError(
            f"critic must be a critic instance, e.g. {critic.__name__}(); got the class "
            f"{critic.__name__}"
        )
    if not callable(getattr(critic, "fit", None)):
        raise TypeError(
            f"critic must have a fit method (ExactCritic, LSTDCritic, TDCritic); got {critic!r}"
        )
    gen = None
    if isinstance(critic, ExactCritic):
        if rng is not None:  # unused by the exact critic, but checked: rng='abc' or -1 ran silently
            _rng(rng)  # (no draw; a Generator's state is unchanged)
    else:
        if rng is None:
            raise TypeError(
                f"{type(critic).__name__} samples transitions: pass rng (a Generator or an int seed)"
            )
        gen = _rng(rng)  # a Generator or an int seed (not a bool or a float), named in the error
    xp = mdp.xp
    f = _phi(mdp, features)
    d_feat = f.shape[-1]
    rho = initial_distribution(mdp, rho)
    V_star = optimal_values(mdp, V_star)
    theta = (
        xp.zeros((d_feat,), dtype=mdp.dtype, device=f.device)
        if theta0 is None
        else as_float(theta0, xp, mdp.dtype)
    )
    if tuple(theta.shape) != (d_feat,):
        raise ValueError(f"theta0 must have shape ({d_feat},); got {tuple(theta.shape)}")
    check_finite(theta, "theta0", ("j",))
    w = xp.zeros((d_feat,), dtype=mdp.dtype, device=f.device)
    # ψ = φ − E_πφ is known to ~ε·2 max|φ| even where the centring leaves every entry small
    scale = 2.0 * float(xp.max(xp.abs(f))) if f.shape[-1] else 0.0
    # one-hot (tabular) features: the critic's closed form, exact however small d(s)π(a|s) gets
    # (an SVD solve cannot resolve weights below ε²·max weight, e.g. 7.9e-66 next to 0.37)
    one_hot = f if _is_one_hot(f) else None
    loop = Loop("natural_actor_critic", iterations, None, xp)
    t = 0
    while True:
        pi = _softmax_logits(
            f,
            theta,
            xp,
            f"natural_actor_critic at iteration t={t} (eta={eta:g}; use a smaller eta)",
        )
        # ψ = φ − E_πφ formed without cancellation, with the size each entry is known to: where
        # π(a|s) ≈ 1, 1 − π(a|s) lost the other actions' tiny probabilities (5.7e-59 after one
        # η = 1000 step) and the exact critic stopped moving them, unlike NPG, its closed form
        with np.errstate(over="ignore", invalid="ignore"):  # an overflow: _check_psi's error
            psi, err = _compatible_features_loo(f, pi)
        _check_psi(psi, f, f"natural_actor_critic at iteration t={t}", err)
        w_star, approx = _compatible_critic(mdp, pi, psi, rho, scale, err, one_hot)
        w = w_star if isinstance(critic, ExactCritic) else critic.fit(mdp, pi, f, rho, gen, w)
        dsa = _state_occupancy(mdp, pi, rho)[:, None] * pi
        # scaled weighted norm: the squares of errors above 1e154 (rewards ~1e200) overflowed to inf
        n_sa = mdp.S * mdp.A
        cerr = _weighted_norm(xp.reshape(psi @ (w - w_star), (n_sa,)), xp.reshape(dsa, (n_sa,)))
        V = evaluate_policy(mdp, pi)
        m = {
            "suboptimality": expected_value(V_star - V, rho),
            "critic_error": cerr,
            "approximation_error": approx,
        }
        if loop.record(t, m["suboptimality"], **m):
            break
        theta = theta + (eta / (1.0 - g)) * w
        t += 1
    return loop.result(pi, theta=theta)
