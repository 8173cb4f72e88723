r"""Offline RL from a fixed dataset: certainty equivalence, LCB-VI, PEVI, CQL; hybrid NPG / actor-critic.

Finite-horizon, undiscounted, rewards in ``[0, 1]``; values ``V_h ∈ [0, H − h]``.
All value-based methods are one backward recursion over an estimated Bellman backup
``B̂_h V = r̂_h + P̂_h V`` with a bonus ``Γ_h`` subtracted:

    ``Q̂_h(s, a) = clip( B̂_h V̂_{h+1}(s, a) − Γ_h(s, a), 0, H − h )``,
    ``π̂_h(s) = argmax_a Q̂_h(s, a)``, ``V̂_h(s) = max_a Q̂_h(s, a)``, ``V̂_H = 0``.

* :func:`certainty_equivalence` — ``Γ = 0``, no clipping: value iteration in the
  empirical model (tabular) or fitted-Q iteration / LSVI (linear features). The
  non-pessimistic baseline; it can be fooled by rarely seen pairs.
* :func:`lcb_vi` — tabular ``Γ`` = Hoeffding radius ``(H−h)√(ι/(2n))`` or the
  empirical-Bernstein radius (:mod:`rltheory.bounds.offline`), ``ι = ln(2HSA/δ)``,
  with per-step sample splitting so the confidence event holds with probability
  ``≥ 1 − δ`` exactly (Rashidinejad et al. 2021; Xie et al. 2021).
* :func:`pevi` — linear features, ridge regression ``ŵ_h = Λ_h^{-1} Σ_τ φ_τ y_τ``,
  ``Γ = β‖φ‖_{Λ_h^{-1}}`` (Jin, Yang & Wang 2021, Algorithm 2).
* :func:`cql` — tabular conservative Q-learning fixed point (Kumar et al. 2020):
  ``Q̂_h = B̂_h V̂_{h+1} − α(π_h/π̂_b − 1)``; :func:`conservative_evaluation` checks the
  underestimation property ``V̂^π ≤ V^π``.

On the confidence event each pessimistic ``V̂_0`` is a pointwise lower bound on
``V^{π̂}_0`` and ``V*_0 − V^{π̂}_0 ≤ 2 Σ_h E_{π*}[Γ_h]``
(:func:`rltheory.bounds.offline.pessimism_suboptimality_bound`).

CQL lives in :mod:`rltheory.algorithms.conservative`, discounted VI-LCB in
:mod:`rltheory.algorithms.offline_discounted` and the hybrid methods
(:func:`hybrid_npg`, :func:`hybrid_actor_critic`, on-policy roll-outs added to the offline
data) in :mod:`rltheory.algorithms.hybrid`; all are re-exported here.

Data-driven routines run on the host (numpy): datasets are host arrays and the
statistics are counts (``bincount``) and small ridge solves.

References
----------
Jin, Y., Yang, Z., Wang, Z. (2021). Is pessimism provably efficient for offline RL?
ICML. Algorithm 1 (meta PEVI), Algorithm 2 (linear PEVI), Thm 4.2, Thm 4.4.
Rashidinejad, P., Zhu, B., Ma, C., Jiao, J., Russell, S. (2021). Bridging offline RL and
imitation learning: a tale of pessimism. NeurIPS 34 (VI-LCB).
Xie, T., Jiang, N., Wang, H., Xiong, C., Bai, Y. (2021). Policy finetuning: bridging
sample-efficient offline and online RL. NeurIPS 34 (episodic VI-LCB, Bernstein bonus).
Abbasi-Yadkori, Y., Pál, D., Szepesvári, C. (2011). Improved algorithms for linear stochastic
bandits. NeurIPS 24, Thm 2 (self-normalised confidence ellipsoid).
Kumar, A., Zhou, A., Tucker, G., Levine, S. (2020). Conservative Q-learning for offline
RL. NeurIPS 33, eq. (2), Thm 3.2.
Zhou, Y., Sekhari, A., Song, Y., Sun, W. (2024). Offline data enhanced on-policy policy
gradient with provable guarantees. ICLR (HNPG).
Tan, K., Fan, W., Wei, Y. (2024). Actor-critics can achieve optimal sample efficiency. ICML
(hybrid actor-critic with offline critic initialisation).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._validate import check_finite, check_real, real_scalar
from ..backend import to_numpy
from ..bounds.offline import _bernstein, _hoeffding, pevi_beta
from ..mdp._dataset_checks import _real_host
from ..mdp.offline_data import EpisodeDataset
from ._offline_common import (
    OfflineResult,
    _check_data,
    _features,
    _flag,
    _group,
    _prob,
    _recursion,
    _ridge,
    _steps,
)

# re-exported so that every offline learner stays importable from this module
from .conservative import conservative_evaluation, cql
from .hybrid import HybridResult, hybrid_actor_critic, hybrid_npg
from .offline_discounted import DiscountedOfflineResult, lcb_vi_discounted

__all__ = [
    "OfflineResult",
    "certainty_equivalence",
    "lcb_vi",
    "pevi",
    "DiscountedOfflineResult",
    "lcb_vi_discounted",
    "cql",
    "conservative_evaluation",
    "HybridResult",
    "hybrid_npg",
    "hybrid_actor_critic",
]


# --------------------------------------------------------------------------- methods
def certainty_equivalence(
    data: EpisodeDataset, *, features: Any = None, ridge: float = 1.0
) -> OfflineResult:
    r"""Greedy (non-pessimistic) offline planning: VI in the empirical model, or linear FQI.

    Tabular (``features=None``): ``Q̂_h = r̂_h + P̂_h V̂_{h+1}`` on visited pairs and
    ``0`` on unvisited ones, i.e. backward induction in the empirical model
    (:func:`rltheory.mdp.offline_data.empirical_model`). Linear: least-squares value
    iteration ``Q̂_h = φᵀ Λ_h^{-1} Σ_τ φ_τ (r_τ + V̂_{h+1}(s'_τ))`` without bonus — PEVI
    with ``β = 0``. All episodes feed every step; no clipping.

    Parameters
    ----------
    data : EpisodeDataset
    features : array (S, A, d) or (H, S, A, d), optional
    ridge : float ≥ 0
        ``λ`` in ``Λ_h`` (linear only; checked in both cases).

    Raises
    ------
    ValueError
        A value ``V̂_h`` beyond the float range (rewards near ``1.8e308``; the step, episode
        and reward are named), a bad ``ridge`` or bad features.

    Notes
    -----
    With full coverage (every reachable pair has ``ρ_h(s,a) > 0``) ``P̂ → P``
    almost surely and the greedy policy converges to an optimal one. Under partial
    coverage it can prefer a rarely seen pair whose empirical reward is high by
    chance: the failure pessimism removes (Rashidinejad et al. 2021, §4).

    Examples
    --------
    >>> import numpy as np
    >>> d = EpisodeDataset(np.zeros((2, 2), int), np.array([[0], [1]]), np.array([[0.2], [0.9]]), S=1, A=2)
    >>> certainty_equivalence(d).policy.tolist()
    [[1]]
    """
    data = _check_data(data, "certainty_equivalence", unit_rewards=False)
    # checked also when the tabular path ignores it: ridge=-1, NaN or 'x' were silently accepted there
    ridge = check_real(ridge, "ridge", low=0.0)
    H, S, A = data.H, data.S, data.A
    steps = _steps(data, split=False)
    counts = np.stack([_group(st, S, A, st.r)[0] for st in steps]).astype(np.int64)
    if features is None:

        def backup(h: int, v: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
            st = steps[h]
            with np.errstate(over="ignore"):
                y = st.r + v[st.s2]
            if not np.all(np.isfinite(y)):  # V̂_h beyond the float range: Q̂ was inf, silently
                # all episodes feed every step: sample k is episode k
                k = int(np.argmax(~np.isfinite(y)))
                raise ValueError(
                    f"certainty_equivalence: the target r + V̂_{h + 1}(s') at step h={h} exceeds the float range "
                    f"(episode k={k}: rewards[k={k}, h={h}] = {st.r[k]:.6g}, V̂_{h + 1}(s'={int(st.s2[k])}) = "
                    f"{v[st.s2[k]]:.6g}); values scale with the rewards: divide them by a power of 2"
                )
            n, mean, _ = _group(st, S, A, y)
            return mean, np.zeros((S, A)), n > 0

        pol, Q, V, G = _recursion(H, S, A, backup, clip=False)
        return OfflineResult(pol, Q, V, G, counts, "certainty_equivalence")
    res = _linear_vi(data, features, ridge=ridge, beta=0.0, clip=False)
    return OfflineResult(
        res.policy, res.Q, res.V, res.bonus, counts, "fitted_q_iteration", None, res.Lambda
    )


def lcb_vi(
    data: EpisodeDataset, *, bonus: Any = "hoeffding", delta: float = 0.1, split: bool = True
) -> OfflineResult:
    r"""Tabular value iteration with lower confidence bounds (LCB-VI).

    ``Q̂_h(s, a) = clip( ȳ_h(s, a) − Γ_h(s, a), 0, H − h )`` where ``ȳ_h(s, a)`` is the
    mean of ``y = r_h + V̂_{h+1}(s_{h+1})`` over the step-``h`` samples at ``(s, a)`` and

    * ``bonus="hoeffding"``: ``Γ = (H − h) √(ln(2/δ')/(2n))``,
    * ``bonus="bernstein"``: ``Γ = √(2 V_n ln(4/δ')/n) + 7 (H − h) ln(4/δ')/(3(n − 1))``
      (empirical variance ``V_n`` of ``y``; Maurer & Pontil 2009, Thm 4),
    * an array ``[H, S, A]``: a given bonus (e.g. to match PEVI with one-hot features),

    with ``δ' = δ/(HSA)``; unvisited pairs get ``Q̂ = 0`` (recorded bonus ``H − h``).

    Parameters
    ----------
    data : EpisodeDataset
        Rewards must lie in ``[0, 1]``.
    bonus : {"hoeffding", "bernstein"} or array (H, S, A)
        A given bonus must hold finite non-negative real numbers.
    delta : float in (0, 1)
    split : bool
        Sample splitting: episode ``k`` feeds step ``k mod H`` only, which makes
        ``V̂_{h+1}`` independent of the step-``h`` samples. ``True`` or ``False``
        (``numpy.bool_`` too); anything else is a ``ValueError``.

    Returns
    -------
    OfflineResult

    Raises
    ------
    ValueError
        ``delta`` outside (0, 1), ``split`` not a bool, an unknown bonus name, or a given
        bonus of the wrong shape or with a NaN, infinite or negative entry (located).
    TypeError
        A given bonus holding text, complex numbers or booleans.

    Notes
    -----
    With ``split=True`` and a Hoeffding or Bernstein bonus, with probability
    ``≥ 1 − δ`` (i) ``V̂_h(s) ≤ V^{π̂}_h(s)`` for all ``h, s`` and (ii)
    ``V*_0(μ) − V^{π̂}_0(μ) ≤ 2 Σ_h E_{π*}[Γ_h]`` (Jin, Yang & Wang 2021, Thm 4.2),
    which in the single-policy concentrability ``C*`` is ``≤ H(H+1)√(S C* ln(2HSA/δ)/⌊K/H⌋)``
    for the Hoeffding bonus (:func:`rltheory.bounds.offline.lcb_vi_rate`),
    ``Õ(√(C* S H^5/K))`` — the episodic form of Rashidinejad et al. (2021)'s VI-LCB
    rate; Xie et al. (2021) sharpen the horizon with the Bernstein bonus. Only the
    comparator's coverage matters. Cost ``O(KH + HSA)``.

    Examples
    --------
    One state, action 0 seen 100 times with reward 0.5, action 1 once with reward 1:
    the LCB prefers the well-covered action.

    >>> import numpy as np
    >>> a = np.array([[0]] * 100 + [[1]]); r = np.array([[0.5]] * 100 + [[1.0]])
    >>> d = EpisodeDataset(np.zeros((101, 2), int), a, r, S=1, A=2)
    >>> lcb_vi(d, delta=0.1).policy.tolist(), certainty_equivalence(d).policy.tolist()
    ([[0]], [[1]])
    """
    data = _check_data(data, "lcb_vi", unit_rewards=True)
    dlt = _prob(delta)
    H, S, A = data.H, data.S, data.A
    steps = _steps(data, split=_flag(split, "split"))  # split='False' (truthy) split the data
    counts = np.stack([_group(st, S, A, st.r)[0] for st in steps]).astype(np.int64)
    # ln(1/δ') with δ' = δ/(HSA), from the logarithms: δ' underflows to 0 for a subnormal δ
    log_inv = math.log(H * S * A) - math.log(dlt)
    given = None
    if isinstance(bonus, str):
        if bonus not in ("hoeffding", "bernstein"):
            raise ValueError(
                f"bonus must be 'hoeffding', 'bernstein' or an (H, S, A) array; got {bonus!r}"
            )
    else:
        # a float cast dropped a complex bonus' imaginary part (with a warning) and ran; NaN was not located
        if np.asarray(to_numpy(bonus)).dtype == np.bool_:  # True/False were read as the radii 1/0
            raise TypeError("a given bonus must hold real numbers (radii); got a boolean array")
        given = _real_host(bonus, "bonus")
        if given.shape != (H, S, A):
            raise ValueError(
                f"a given bonus must be a finite non-negative (H, S, A) = {(H, S, A)} array; got shape {given.shape}"
            )
        check_finite(given, "bonus", ("h", "s", "a"))
        if np.any(given < 0):
            h, s, a = (int(i) for i in np.argwhere(given < 0)[0])
            raise ValueError(
                f"a given bonus must be non-negative; bonus(h={h}, s={s}, a={a}) = {given[h, s, a]:.6g}"
            )

    def backup(h: int, v: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        st = steps[h]
        n, mean, var = _group(st, S, A, st.r + v[st.s2])
        B = float(H - h)
        if given is not None:
            b = np.where(n > 0, given[h], B)
        elif bonus == "hoeffding":
            b = _hoeffding(n, np.asarray(B), math.log(2.0) + log_inv)  # hoeffding_radius(n, B, δ')
        else:
            # empirical_bernstein_radius(n, V_n, B, δ')
            b = _bernstein(n, var, np.asarray(B), math.log(4.0) + log_inv)
        return mean, b, n > 0

    pol, Q, V, G = _recursion(H, S, A, backup, clip=True)
    name = "lcb_vi_" + (bonus if isinstance(bonus, str) else "given")
    return OfflineResult(pol, Q, V, G, counts, name, dlt)


def _linear_vi(
    data: EpisodeDataset,
    features: Any,
    *,
    ridge: float,
    beta: Any,
    clip: bool,
    split: bool = False,
    delta: float | None = None,
) -> OfflineResult:
    """Least-squares VI; ``beta`` a number or ``"self-normalized"`` (per-step β_h from Λ_h)."""
    H, S, A = data.H, data.S, data.A
    phi = _features(features, H, S, A)
    ridge = check_real(ridge, "ridge", low=0.0)
    steps = _steps(data, split=split)
    d = phi.shape[-1]
    Lams = np.zeros((H, d, d))
    betas = np.zeros(H)

    def backup(h: int, v: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        st = steps[h]
        # solved at the unit scale of the step's sample features: φ/2^e, λ/4^e (exact for normal
        # numbers, so φᵀŵ, φᵀΛ⁻¹φ and ln det(Λ/λ) are unchanged, bit for bit when nothing under- or
        # overflows). At |φ| ~ 1e-160 with λ = 0, Λ ~ 3e-320 was subnormal: φᵀŵ = 0.500006 for the
        # sample mean 0.5, and at 1e-162 Λ was refused as singular
        e = _unit_exponent(phi[h][st.s, st.a], phi[h], float(ridge))
        ph = np.ldexp(phi[h], -e)
        ridge_s = float(np.ldexp(np.float64(ridge), -2 * e))  # a normal float (_unit_exponent)
        Lam, X = _ridge(st, ph, ridge_s, h)
        with np.errstate(over="ignore"):
            Lams[h] = np.ldexp(Lam, 2 * e)  # Λ_h itself, as the result reports it
        if not np.all(np.isfinite(Lams[h])):
            raise ValueError(
                f"Λ_{h} = Σ φφᵀ + ridge·I overflows at step h={h}; rescale the features "
                f"(max |features| = {float(np.max(np.abs(phi[h]))):.3g})"
            )
        with np.errstate(over="ignore"):
            y = st.r + v[st.s2]
        try:
            with np.errstate(over="ignore", invalid="ignore"):  # checked below
                w = np.linalg.solve(Lam, X.T @ y)
            Z = np.linalg.solve(Lam, ph.reshape(-1, d).T).T
        except np.linalg.LinAlgError:
            raise ValueError(
                f"Λ_{h} = Σ φφᵀ + {ridge}·I is singular at step h={h}; use ridge > 0 or features spanned by the data"
            ) from None
        with np.errstate(over="ignore", invalid="ignore"):
            est = ph @ w
        if not np.all(np.isfinite(est)):  # Σ φ y (or φᵀŵ) overflowed: Q̂ was inf or NaN, silently
            raise ValueError(
                f"the least-squares fit φᵀŵ_{h} at step h={h} exceeds the float range (max |r + V̂_{h + 1}(s')| = "
                f"{float(np.max(np.abs(y), initial=0.0)):.6g}); values scale with the rewards: divide them by a power of 2"
            )
        with np.errstate(over="ignore", invalid="ignore"):
            q = np.sum(Z * ph.reshape(-1, d), axis=-1).reshape(S, A)
        # Λ⁻¹ ~ 1/ridge beyond the range on a direction no sample spans: NaN bonuses
        if not np.all(np.isfinite(q)):
            s_, a_ = (int(i) for i in np.argwhere(~np.isfinite(q))[0])
            with np.errstate(over="ignore", under="ignore"):  # Λ_h's own scale, for the message
                w_min = float(np.ldexp(np.linalg.eigvalsh(Lam)[0], 2 * e))
            raise ValueError(
                f"φᵀΛ_{h}⁻¹φ at step h={h} is not finite (first at s={s_}, a={a_}): Λ_{h}'s smallest eigenvalue "
                f"{w_min:.3g} (ridge = {float(ridge):.6g} on a feature "
                f"direction the data do not span) is too small to invert in floating point; use a larger ridge"
            )
        if isinstance(beta, str):
            B = float(H - h)
            logdet = np.linalg.slogdet(Lam)[1] - d * math.log(ridge_s)  # ln det(Λ/λ), scale-free
            # ln H − ln δ, not ln(H/δ): the quotient overflows for a subnormal δ (β was inf, Q̂ = 0)
            betas[h] = (
                0.5 * B * math.sqrt(2.0 * (math.log(H) - math.log(delta)) + logdet)
                + math.sqrt(ridge * d) * B
            )
        else:
            betas[h] = beta
        g = betas[h] * np.sqrt(np.maximum(q, 0.0))
        return est, g, np.ones((S, A), dtype=bool)

    pol, Q, V, G = _recursion(H, S, A, backup, clip=clip)
    counts = np.stack([_group(st, S, A, st.r)[0] for st in steps]).astype(np.int64)
    name = "fitted_q_iteration" if not isinstance(beta, str) and beta == 0 else "pevi"
    return OfflineResult(pol, Q, V, G, counts, name, delta, Lams)


def _unit_exponent(X: np.ndarray, phi: np.ndarray, ridge: float) -> int:
    """``e`` with ``max |X| / 2^e ∈ [1, 2)`` (``X``: the step's sample features), or 0 where that scale
    would push ``λ/4^e`` or some ``φ/2^e`` out of the normal float range (``λ`` then dominates ``Λ``,
    or ``φ`` spans decades, and the given scale is the better one)."""
    m = float(np.max(np.abs(X), initial=0.0))
    if m == 0.0:
        return 0
    e = math.frexp(m)[1] - 1
    with np.errstate(over="ignore"):  # (math.ldexp raises OverflowError instead of giving inf)
        top = float(np.ldexp(np.max(np.abs(phi)), -e))
        lam = float(np.ldexp(np.float64(ridge), -2 * e))
    tiny = float(np.finfo(np.float64).tiny)
    if not math.isfinite(top) or (ridge > 0 and not tiny <= lam < math.inf):
        return 0
    return e


def pevi(
    data: EpisodeDataset,
    features: Any,
    *,
    beta: float | str | None = None,
    ridge: float = 1.0,
    delta: float = 0.1,
    c: float = 1.0,
    split: bool = False,
) -> OfflineResult:
    r"""Pessimistic value iteration for linear MDPs (PEVI; Jin, Yang & Wang 2021, Algorithm 2).

    For ``h = H−1, …, 0``: ``Λ_h = Σ_τ φ(s_h^τ, a_h^τ) φ(s_h^τ, a_h^τ)ᵀ + λI``,
    ``ŵ_h = Λ_h^{-1} Σ_τ φ(s_h^τ, a_h^τ)(r_h^τ + V̂_{h+1}(s_{h+1}^τ))``,
    ``Γ_h(s, a) = β_h (φ(s,a)ᵀ Λ_h^{-1} φ(s,a))^{1/2}``,
    ``Q̂_h = clip(φᵀŵ_h − Γ_h, 0, H − h)``, ``π̂_h`` greedy.

    Parameters
    ----------
    data : EpisodeDataset
        Rewards in ``[0, 1]``.
    features : array (S, A, d) or (H, S, A, d)
        ``φ(s, a)``; a linear MDP has ``P_h(·|s,a) = ⟨φ(s,a), μ_h(·)⟩``, ``r_h = ⟨φ, θ_h⟩``.
    beta : float, "self-normalized", or None
        ``None``: the paper's ``β = c·d·H·√ln(2dHK/δ)``
        (:func:`rltheory.bounds.offline.pevi_beta`). ``"self-normalized"`` (needs
        ``split=True``, ``λ > 0``): the explicit per-step radius
        ``β_h = (H−h)/2 · √(2 ln(H/δ) + ln det(Λ_h/λ)) + √(λd)·(H−h)`` (see Notes).
    ridge : float ≥ 0
        ``λ`` (the paper uses 1); ``λ = 0`` requires every ``Λ_h`` invertible.
    delta : float
        ``ξ`` of the paper.
    c : float > 0
        The paper's absolute constant in the default ``β`` (not given numerically; default 1);
        checked even when ``beta`` is given.
    split : bool
        Sample splitting as in :func:`lcb_vi` (the paper uses all episodes at every step);
        ``True`` or ``False``.

    Returns
    -------
    OfflineResult
        With ``Lambda`` ``[H, d, d]``; the data-dependent bound is
        ``pessimism_suboptimality_bound(d*, res.bonus)`` (``= pevi_bound`` for a constant β).

    Notes
    -----
    Thm 4.4: in a linear MDP with ``‖φ‖ ≤ 1``, ``‖θ_h‖, ‖μ_h(S)‖ ≤ √d`` and the paper's
    ``β``, with probability ``≥ 1 − ξ``,
    ``SubOpt(π̂; x) ≤ 2 Σ_h E_{π*}[Γ_h(s_h, a_h) | s_0 = x]``; under well-explored data
    (Cor. 4.6) this is ``O(d^{3/2} H² √(ζ/K))``. The ``"self-normalized"`` radius
    replaces the paper's covering argument by sample splitting: ``V̂_{h+1}`` is then
    independent of the step-``h`` targets ``y ∈ [0, H−h]``, whose noise is
    ``(H−h)/2``-sub-Gaussian, so the self-normalised bound of Abbasi-Yadkori, Pál &
    Szepesvári (2011, Thm 2) gives ``|φᵀ(ŵ_h − w_h)| ≤ β_h ‖φ‖_{Λ_h^{-1}}`` with
    probability ``≥ 1 − δ/H`` per step, using ``‖w_h‖ ≤ (H−h)√d``. With one-hot
    features and ``λ = 0``, PEVI is LCB-VI (same splitting) with bonus ``β/√n_h(s, a)``.

    Examples
    --------
    >>> import numpy as np
    >>> a = np.array([[0]] * 100 + [[1]]); r = np.array([[0.5]] * 100 + [[1.0]])
    >>> d = EpisodeDataset(np.zeros((101, 2), int), a, r, S=1, A=2)
    >>> pevi(d, np.eye(2).reshape(1, 2, 2), beta=1.0).policy.tolist()
    [[0]]
    """
    data = _check_data(data, "pevi", unit_rewards=True)
    dlt = _prob(delta)
    phi = _features(features, data.H, data.S, data.A)
    # checked also when a given β makes it unused: c=-1, NaN or 'x' were silently accepted there
    cc = check_real(c, "c", low=0.0, low_open=True)
    if beta is None:
        beta = pevi_beta(phi.shape[-1], data.H, data.K, dlt, c=cc)
    split = _flag(split, "split")  # split='False' (truthy) split the data; None silently did not
    if isinstance(beta, str):
        if beta != "self-normalized":
            raise ValueError(f"beta must be a number, None or 'self-normalized'; got {beta!r}")
        if not split or not real_scalar(ridge) > 0:
            raise ValueError(
                f"beta='self-normalized' needs split=True and ridge > 0 (its proof uses both); got split={split!r}, ridge={ridge!r}"
            )
    else:
        beta = check_real(beta, "beta", low=0.0)
    res = _linear_vi(data, phi, ridge=ridge, beta=beta, clip=True, split=split, delta=dlt)
    return OfflineResult(res.policy, res.Q, res.V, res.bonus, res.counts, "pevi", dlt, res.Lambda)
