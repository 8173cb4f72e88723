r"""Natural policy gradient primal-dual (NPG-PD) for constrained MDPs, exact and sample-based.

:func:`npg_pd_step` is one step of Ding et al. (2020, Algorithm 1, eq. (9)): natural policy
gradient ascent on the Lagrangian reward ``r − λ·c`` (:func:`~rltheory.algorithms.npg_step`)
and projected dual descent ``λ' = Π_{[0,Λ]^m}(λ + η_2 (V_c^π(μ) − b))``. :func:`npg_primal_dual`
iterates it on the logits from the uniform policy and ``λ = 0``; its averaged gap and violation are
``O(1/√T)`` (Ding et al. 2020, Thm 1; constants in :func:`rltheory.bounds.constrained.npg_pd_bounds`),
traced against the LP optimum of :func:`rltheory.mdp.solve_cmdp`. :func:`sample_npg_primal_dual`
replaces ``A_L`` and ``V_c`` by unbiased geometric-horizon roll-out estimates (Ding et al. 2020, §5);
the estimators (:func:`_mc_q`, :func:`_mc_occupancy`) serve the general-utility method too.

Host only (numpy loops); device arrays raise ``TypeError``.

References
----------
Ding, D., Zhang, K., Başar, T., Jovanović, M. R. (2020). Natural policy gradient primal-dual
method for constrained Markov decision processes. NeurIPS. Algorithm 1, Theorem 1, §5.
Agarwal, A., Kakade, S., Lee, J., Mahajan, G. (2021). On the theory of policy gradient
methods. JMLR 22(98). (NPG step.)
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..backend import as_float, require_host, to_numpy
from ..mdp.bellman import _check_in_range, as_stochastic_policy, occupancy_measure
from ..mdp.constrained import ConstrainedMDP
from ..mdp.sample import _check_rollout_length, _count, _rng
from ..trace import TraceRecorder
from .constrained_base import (
    PrimalDualResult,
    _average_policy,
    _cmdp,
    _host_cmdp,
    _lambda_radius,
    _positive,
    _reference,
    _values,
)
from .policy_gradient import _softmax_policy, npg_step

__all__ = ["npg_pd_step", "npg_primal_dual", "sample_npg_primal_dual"]


# ------------------------------------------------------------------------- NPG-PD
def npg_pd_step(
    cmdp: ConstrainedMDP, pi: Any, lam: Any, *, eta1: float, eta2: float, Lambda: float
) -> tuple[Any, np.ndarray]:
    r"""One NPG-PD step: ``π' ∝ π exp(η_1 A_L^π/(1−γ))``, ``λ' = Π_{[0,Λ]^m}(λ + η_2 (V_c^π(μ) − b))``.

    ``A_L`` is the advantage of the Lagrangian reward ``r − λ·c`` under ``π``;
    both updates use the current ``(π, λ)`` (simultaneous, as in Ding et al. 2020, eq. (9)).
    An entry of ``π`` that is 0 stays 0 (:func:`~rltheory.algorithms.npg_step`); the drivers
    iterate the same map on logits, where an underflowed probability is not absorbing.

    Examples
    --------
    >>> import numpy as np
    >>> from rltheory.mdp import FiniteMDP, ConstrainedMDP
    >>> mdp = FiniteMDP(np.ones((1, 2, 1)), np.array([[0.0, 1.0]]), gamma=0.0)
    >>> cmdp = ConstrainedMDP(mdp, np.array([[[0.0, 1.0]]]), np.array([0.25]))
    >>> pi, lam = npg_pd_step(cmdp, np.full((1, 2), 0.5), np.array([0.0]), eta1=1.0, eta2=1.0, Lambda=10.0)
    >>> lam.tolist()   # V_c = 1/2 > 1/4: the multiplier rises by 1/4
    [0.25]
    """
    cmdp = _host_cmdp(cmdp, "npg_pd_step")
    P, R, C, b, mu, g = _cmdp(cmdp, "npg_pd_step")
    e1, e2, Lam = _positive(eta1, "eta1"), _positive(eta2, "eta2"), _positive(Lambda, "Lambda")
    lam = _duals(lam, cmdp.m)
    # validated here (a complex pi lost its imaginary part with only a warning, and npg_step's own
    # errors came out under the Lagrangian-reward note below)
    if not isinstance(pi, (list, tuple)) and np.asarray(to_numpy(pi)).dtype.kind in "cUS":
        as_float(pi, np, field="pi")  # refused by name (as_stochastic_policy says "input")
    pi = np.asarray(to_numpy(as_stochastic_policy(cmdp.mdp, pi)), dtype=float)
    RL = R - np.tensordot(lam, C, axes=(0, 0))
    try:
        pi_next = npg_step(cmdp.mdp.replace(R=RL), pi, eta=e1)
    except (
        ValueError
    ) as exc:  # (validated inputs: only the range check of the Lagrangian values can refuse)
        raise ValueError(f"npg_pd_step: {exc} (the Lagrangian reward r − λ·c)") from None
    Vc = _values(cmdp.mdp, C, pi, mu, "npg_pd_step", "batch index i is the cost c_i")
    return pi_next, np.clip(lam + e2 * (Vc - b), 0.0, Lam)


def _duals(lam: Any, m: int) -> np.ndarray:
    """``λ`` as a float vector of shape ``(m,)`` with finite entries ``≥ 0``; a located ``ValueError``
    otherwise (bools are not multipliers: ``[True]`` was read as ``λ = 1``)."""
    rule = f"lam must be a finite non-negative vector of shape (m,) = ({m},)"
    raw = np.asarray(to_numpy(lam))
    if raw.dtype.kind not in "iuf":
        raise ValueError(f"{rule}; got an array of dtype {raw.dtype.name}")
    x = raw.astype(float)
    if x.shape != (m,):
        raise ValueError(f"{rule}; got shape {x.shape}")
    bad = ~np.isfinite(x) | (x < 0)
    if np.any(bad):
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(f"{rule}; lam[{i}] = {float(x[i])!r}")
    return x


def _lagrangian_advantage(
    cmdp: ConstrainedMDP,
    P: np.ndarray,
    R: np.ndarray,
    C: np.ndarray,
    pi: np.ndarray,
    lam: np.ndarray,
    g: float,
    what: str,
) -> np.ndarray:
    """``A_L^π = Q_L^π − V_L^π`` of the Lagrangian reward ``r_L = r − λ·c`` (every action, in or out of
    the support of ``π``)."""
    RL = R - np.tensordot(lam, C, axes=(0, 0))
    V = _values(cmdp.mdp, RL[None], pi, np.eye(P.shape[0]), what, "the Lagrangian reward r − λ·c")[
        0
    ]
    return RL + g * (P @ V) - V[:, None]


def _npg_pd_setup(
    cmdp: ConstrainedMDP,
    T: int,
    eta1: float | None,
    eta2: float | None,
    Lambda: float | None,
    reference: float | None,
) -> tuple[float, float, float, float]:
    """Default steps (Ding et al. 2020, Thm 1), Slater radius and the LP reference of an NPG-PD run."""
    from ..bounds.constrained import npg_pd_step_sizes  # noqa: PLC0415

    R = require_host(cmdp.mdp.R, "npg_primal_dual")
    d1, d2 = npg_pd_step_sizes(T, gamma=float(cmdp.gamma), n_actions=cmdp.A)
    e1 = _positive(d1 if eta1 is None else eta1, "eta1")
    e2 = _positive(d2 if eta2 is None else eta2, "eta2")
    return e1, e2, _lambda_radius(cmdp, R, float(cmdp.gamma), Lambda), _reference(cmdp, reference)


def _record_pd(
    rec: TraceRecorder,
    t: int,
    vals: np.ndarray,
    avgs: list,
    b: np.ndarray,
    Vstar: float,
    lam: np.ndarray,
) -> None:
    """Record iterate ``t`` (1-based) of an NPG-PD run: values ``vals = [V_r, V_c...]`` of ``π_{t−1}``,
    running averages ``avgs = [avg V_r, avg V_c]`` updated in place.

    The averages are updated as ``a += (v − a)/t``: running sums overflowed where the values did not
    (costs 2e307 at γ = 0.9: ``V_c ≈ 1.4e308`` twice made ``avg_violation`` inf, with overflow warnings).
    """
    avgs[0] += (vals[0] - avgs[0]) / t
    avgs[1] = avgs[1] + (vals[1:] - avgs[1]) / t
    rec.record(
        t,
        gap=Vstar - vals[0],
        violation=float(
            np.max(np.maximum(vals[1:] - b, 0.0), initial=0.0)
        ),  # 0 with no constraint (m = 0)
        avg_gap=Vstar - avgs[0],
        avg_violation=float(np.max(np.maximum(avgs[1] - b, 0.0), initial=0.0)),
        lam_norm=float(lam.sum()),
    )


def _logit_step(
    cmdp: ConstrainedMDP, theta: np.ndarray, AL: np.ndarray, eta1: float, what: str
) -> np.ndarray:
    """``θ + η_1 A_L/(1−γ)``, shifted so that each row's maximum is 0 and floored at ``−max/2``.

    A step beyond the float range is refused by :func:`rltheory.mdp.bellman._check_in_range` (rewards
    1e307 at γ = 0.9 made it ``inf``, the shifted logits NaN, and the driver failed with "pi must be
    finite; pi(s=2, a=0) = nan"). The floor changes no probability (``exp(−max/2)`` is 0, as is that of
    anything below it) and keeps ``θ + step`` from overflowing to ``−inf``, which would be absorbing.
    """
    g = float(cmdp.gamma)
    with np.errstate(over="ignore", invalid="ignore"):
        step = eta1 * AL / (1.0 - g)
    _check_in_range(
        cmdp.mdp,
        step,
        what,
        "the logit step eta1 A_L/(1-gamma)",
        ("s", "a"),
        lambda M: f"at gamma = {g!r}, eta1 = {eta1:g} (|A_L| <= 2 max|r - lam·c|/(1-gamma))",
    )
    floor = -0.5 * float(np.finfo(np.float64).max)
    with np.errstate(over="ignore"):
        theta = np.maximum(theta + step, floor)
    return np.maximum(theta - theta.max(axis=-1, keepdims=True), floor)


def npg_primal_dual(
    cmdp: ConstrainedMDP,
    *,
    iterations: int,
    eta1: float | None = None,
    eta2: float | None = None,
    Lambda: float | None = None,
    reference: float | None = None,
) -> PrimalDualResult:
    r"""Exact NPG primal-dual (Ding et al. 2020, Algorithm 1) from the uniform policy and ``λ_0 = 0``.

    Parameters
    ----------
    cmdp : ConstrainedMDP
        Discounted CMDP satisfying Slater's condition (unless ``Lambda`` is given).
    iterations : int
        ``T``.
    eta1, eta2 : float, optional
        Steps; default :func:`rltheory.bounds.constrained.npg_pd_step_sizes`
        (``η_1 = 2 log|A|``, ``η_2 = 2(1−γ)/√T``).
    Lambda : float, optional
        Dual radius; default ``2 span(r)/((1−γ)ξ)`` with ``ξ`` from :func:`slater_slack`
        (``1`` for ``m = 0``, where there is no multiplier, any ``Λ`` is inert and the method is
        NPG on ``r``).
    reference : float, optional
        ``V_r*(μ)``; default :func:`rltheory.mdp.solve_cmdp`.

    Returns
    -------
    PrimalDualResult
        Trace (``t = 1..T``, averages over ``π_0..π_{t−1}``): ``gap`` (``V* − V_r^{π_{t−1}}``),
        ``violation`` (``max_i [V_{c_i}^{π_{t−1}} − b_i]_+``), ``avg_gap``,
        ``avg_violation`` (``max_i [avg V_{c_i} − b_i]_+``), ``lam_norm`` (``‖λ_{t−1}‖₁``).

    Notes
    -----
    Theorem (Ding et al. 2020, Thm 1; constants re-derived in
    :func:`rltheory.bounds.constrained.npg_pd_bounds`): with ``η_2 ∝ 1/√T`` the
    averaged gap and violation are ``O(1/((1−γ)^2 √T))`` and ``O(1/((1−γ)^2 ξ √T))``,
    independent of ``S`` and ``A`` (apart from ``log|A|``). The last iterate need not converge.

    The iterate is carried as logits, as in Ding et al.'s Algorithm 1:
    ``θ_{t+1} = θ_t + η_1 A_L^{π_t}/(1−γ)``, ``π_t = softmax(θ_t)`` — the recursion of
    :func:`npg_pd_step` (``π' ∝ π exp(η_1 A_L/(1−γ))``), but a probability that underflows to 0
    (reward or cost gaps of ``~10³/(η_1)`` per step) is not absorbing: ``θ`` keeps it and a later
    ``λ`` can move the policy back. ``theta`` of the result holds the final logits.
    """
    cmdp = _host_cmdp(cmdp, "npg_primal_dual")
    P, R, C, b, mu, g = _cmdp(cmdp, "npg_primal_dual")
    T = _count(iterations, "iterations")
    S, A = R.shape
    eta1, eta2, Lam, Vstar = _npg_pd_setup(cmdp, T, eta1, eta2, Lambda, reference)
    theta = np.zeros((S, A))
    pi = np.full((S, A), 1.0 / A)
    lam = np.zeros(cmdp.m)
    rec = TraceRecorder()
    d_sum = np.zeros((S, A))
    avgs = [0.0, np.zeros(cmdp.m)]
    for t in range(T):
        d_sum += np.asarray(occupancy_measure(cmdp.mdp, pi))
        vals = _values(cmdp.mdp, np.concatenate([R[None], C]), pi, mu, "npg_primal_dual")
        _record_pd(rec, t + 1, vals, avgs, b, Vstar, lam)
        # npg_pd_step's recursion on the logits (Ding et al. 2020, Algorithm 1: θ += η_1 A_L/(1−γ),
        # π = softmax θ): the multiplicative π' ∝ π exp(·) keeps an entry that underflowed to 0 at 0
        # for ever, so once λ grew no step could move back to a cheap action
        theta = _logit_step(
            cmdp,
            theta,
            _lagrangian_advantage(cmdp, P, R, C, pi, lam, g, "npg_primal_dual"),
            eta1,
            "npg_primal_dual",
        )
        lam = np.clip(lam + eta2 * (vals[1:] - b), 0.0, Lam)
        pi = np.asarray(_softmax_policy(theta))
    return PrimalDualResult(
        pi, _average_policy(d_sum), lam, T, None, rec.finish(), theta, Vstar, Lam
    )


# ---------------------------------------------------------- Monte Carlo estimates
def _mc_q(
    P: np.ndarray, F: np.ndarray, pi: np.ndarray, g: float, n: int, gen: np.random.Generator
) -> np.ndarray:
    r"""Unbiased ``Q̂_f(s, a)`` for each reward ``f[k, S, A]``: ``n`` roll-outs per ``(s, a)`` of
    geometric length ``H ~ Geom(1−γ)`` (``P(H ≥ t) = γ^t``), summing undiscounted rewards
    ``Σ_{t≤H} f(s_t, a_t)``, whose mean is ``Q_f(s, a)``."""
    k, S, A = F.shape
    # summed in units of 2^e ≥ max|f| (exact): a roll-out's sum of rewards 1e307 overflowed after ~18
    # steps although Q_f = 1e308 is in range
    e = np.frexp(np.max(np.abs(F), axis=(1, 2), initial=0.0))[1][:, None]
    F = np.ldexp(F, -e[:, :, None])
    s = np.repeat(np.arange(S), A * n)
    a = np.tile(np.repeat(np.arange(A), n), S)
    tot = np.zeros((k, S * A * n))
    alive = np.ones(S * A * n, dtype=bool)
    cP = np.cumsum(P, axis=-1)
    cpi = np.cumsum(pi, axis=-1)
    while alive.any():
        idx = np.flatnonzero(alive)
        tot[:, idx] += F[:, s[idx], a[idx]]
        stop = gen.random(idx.size) >= g
        alive[idx[stop]] = False
        idx = idx[~stop]
        if idx.size == 0:
            break
        u = gen.random(idx.size)
        s[idx] = np.minimum((cP[s[idx], a[idx]] < u[:, None]).sum(-1), S - 1)
        u = gen.random(idx.size)
        a[idx] = np.minimum((cpi[s[idx]] < u[:, None]).sum(-1), A - 1)
    with np.errstate(
        over="ignore"
    ):  # (a mean beyond the range is inf: the caller's range check refuses it)
        return np.ldexp(tot.reshape(k, S, A, n).mean(axis=-1), e[:, :, None])


def _draw_rows(cdf: np.ndarray, gen: np.random.Generator) -> np.ndarray:
    """One draw per row of a row-wise CDF (inverse-CDF sampling)."""
    u = gen.random(cdf.shape[0])
    return np.minimum((cdf < u[:, None]).sum(-1), cdf.shape[-1] - 1)


def _mc_occupancy(
    P: np.ndarray, pi: np.ndarray, mu: np.ndarray, g: float, n: int, gen: np.random.Generator
) -> np.ndarray:
    r"""Unbiased normalised occupancy ``d̂(s, a) = (1−γ)/n Σ_e Σ_{t≤H_e} 1[(s_t, a_t) = (s, a)]``
    from ``n`` roll-outs ``s_0 ~ μ`` of geometric length (``P(H ≥ t) = γ^t``)."""
    S, A = pi.shape
    cP, cpi = np.cumsum(P, axis=-1), np.cumsum(pi, axis=-1)
    s = _draw_rows(np.broadcast_to(np.cumsum(mu), (n, S)), gen)
    a = _draw_rows(cpi[s], gen)
    counts = np.zeros(S * A)
    alive = np.arange(n)
    while alive.size:
        np.add.at(counts, s[alive] * A + a[alive], 1.0)
        alive = alive[gen.random(alive.size) < g]
        if alive.size:
            s[alive] = _draw_rows(cP[s[alive], a[alive]], gen)
            a[alive] = _draw_rows(cpi[s[alive]], gen)
    return (1.0 - g) * counts.reshape(S, A) / n


def sample_npg_primal_dual(
    cmdp: ConstrainedMDP,
    *,
    iterations: int,
    rollouts: int,
    rng: np.random.Generator | int,
    eta1: float | None = None,
    eta2: float | None = None,
    Lambda: float | None = None,
    reference: float | None = None,
    max_length: float | None = None,
) -> PrimalDualResult:
    r"""Sample-based NPG-PD (Ding et al. 2020, §5): ``A_L`` and ``V_c`` from unbiased roll-outs.

    Each iteration draws ``rollouts`` geometric-horizon roll-outs per ``(s, a)``
    (:func:`_mc_q`) for the reward and every cost, forms ``Q̂_L = Q̂_r − λ·Q̂_c``,
    ``Â_L = Q̂_L − Σ_a π Q̂_L`` and ``V̂_c(μ) = Σ_s μ(s) Σ_a π(a|s) Q̂_c(s, a)``, then
    takes the NPG-PD step with these estimates (on the logits, as :func:`npg_primal_dual`).
    The trace is the exact one of :func:`npg_primal_dual` (values of the iterates, not of the estimates).

    ``max_length`` caps the expected roll-out length ``1/(1−γ)``: a discount above
    ``1 − 1/max_length`` (default ``max_length`` 10⁴, i.e. ``γ ≤ 0.9999``) is a ``ValueError``
    before any draw (the sampling work grows like ``1/(1−γ)``; ``γ = 1 − 1e-12`` did not finish),
    the rule of :func:`rltheory.mdp.sample._check_rollout_length`.

    Notes
    -----
    With ``K`` unbiased roll-outs per pair the estimates have variance
    ``O(1/(K(1−γ)^2))``; Ding et al. (2020, Thm 3) show the averaged gap and
    violation then stay ``O(1/√T)`` up to an additive ``O(1/√K)`` statistical term.
    """
    cmdp = _host_cmdp(cmdp, "sample_npg_primal_dual")
    P, R, C, b, mu, g = _cmdp(cmdp, "sample_npg_primal_dual")
    T = _count(iterations, "iterations")
    K = _count(rollouts, "rollouts")
    S, A = R.shape
    _check_rollout_length(g, max_length, K * S * A, segments=1)
    gen = _rng(rng)
    e1, e2, Lam, Vstar = _npg_pd_setup(cmdp, T, eta1, eta2, Lambda, reference)
    theta = np.zeros((S, A))
    pi = np.full((S, A), 1.0 / A)
    lam = np.zeros(cmdp.m)
    rec = TraceRecorder()
    d_sum = np.zeros((S, A))
    avgs = [0.0, np.zeros(cmdp.m)]
    F = np.concatenate([R[None], C])
    for t in range(T):
        d_sum += np.asarray(occupancy_measure(cmdp.mdp, pi))
        _record_pd(
            rec, t + 1, _values(cmdp.mdp, F, pi, mu, "sample_npg_primal_dual"), avgs, b, Vstar, lam
        )
        Qh = _mc_q(P, F, pi, g, K, gen)
        QL = Qh[0] - np.tensordot(lam, Qh[1:], axes=(0, 0))
        AL = QL - (pi * QL).sum(-1, keepdims=True)
        Vc = ((pi[None] * Qh[1:]).sum(-1)) @ mu
        theta = _logit_step(
            cmdp, theta, AL, e1, "sample_npg_primal_dual"
        )  # as npg_primal_dual (no absorbing zeros)
        pi = np.asarray(_softmax_policy(theta))
        lam = np.clip(lam + e2 * (Vc - b), 0.0, Lam)
    return PrimalDualResult(
        pi, _average_policy(d_sum), lam, T, None, rec.finish(), theta, Vstar, Lam
    )
