r"""Exact policy mirror descent (PMD) and tabular MDPO, batched over MDP instances.

Policy mirror descent (Lan 2022; Xiao 2022) updates every state separately,

    π_{k+1}(·|s) = argmax_{p ∈ Δ(A)} { η_k ⟨Q^{π_k}(s, ·), p⟩ − D(p, π_k(·|s)) },

with a Bregman divergence ``D``:

* KL:        ``π_{k+1}(a|s) ∝ π_k(a|s) exp(η_k Q^{π_k}(s, a))``   (:func:`pmd_kl_step`),
  identical to NPG with ``η_NPG = (1−γ) η_k`` (:func:`~rltheory.algorithms.npg_step`);
* Euclidean: ``π_{k+1}(·|s) = Proj_Δ(π_k(·|s) + η_k Q^{π_k}(s, ·))`` (:func:`pmd_euclidean_step`).

MDPO (Tomar et al. 2022), whose exact inner maximiser is the KL-PMD step, is
:mod:`rltheory.algorithms.mdpo` (:func:`mdpo_step`, re-exported here).

Guarantees (rewards in ``[0, 1]``; ``D_0 = E_{s∼ν} KL(π*(·|s) ‖ π_0(·|s))``):

* constant ``η``: ``V*(ρ) − V^{π_k}(ρ) ≤ (D_0/((1−γ)η) + 1/(1−γ)^2)/k`` with ``ν = d^{π*}_ρ``
  (Xiao 2022, Thm 8; Agarwal et al. 2021, Thm 16 for KL);
* increasing ``η_{k+1} ≥ η_k/q``: ``Δ_k ≤ q^k (Δ_0 + D_0/(q η_0))`` where either
  ``q = γ`` and ``Δ``, ``D_0`` are weighted by a stationary distribution ``ν`` of
  ``P_{π*}`` (Lan 2022, Thm 2 form), or ``q = 1 − 1/ϑ_ρ``, ``ϑ_ρ = ‖d^{π*}_ρ/ρ‖∞/(1−γ)``,
  and the weighting is ``d^{π*}_ρ`` (Xiao 2022, Thm 10 form); see
  :func:`rltheory.bounds.pmd_linear_bound` for the derivation.

References
----------
Lan, G. (2022). Policy mirror descent for reinforcement learning: linear convergence, new
sampling complexity, and generalized problem classes. Math. Programming 198.
Xiao, L. (2022). On the convergence rates of policy gradient methods. JMLR 23(282).
Tomar, M., Shani, L., Efroni, Y., Ghavamzadeh, M. (2022). Mirror descent policy
optimization. ICLR.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np

from .._numerics import subnormal_spacing
from ..mdp.bellman import (
    _q_values,
    as_stochastic_policy,
    evaluate_policy,
    expected_value,
)
from ..mdp.model import FiniteMDP
from ._policy_opt import (
    PolicyOptimizationResult,
    check_positive,
    discount,
    prepare_certified,
    project_simplex,
    project_step,
    safe_log,
)
from .mdpo import mdpo_step

__all__ = [
    "pmd_kl_step",
    "pmd_euclidean_step",
    "mdpo_step",
    "policy_mirror_descent",
    "geometric_step_sizes",
    "project_simplex",
]

StepRule = float | Sequence[float] | Callable[[int], float]


def pmd_kl_step(mdp: FiniteMDP, pi: Any, *, eta: float) -> Any:
    r"""KL policy mirror descent step ``π'(a|s) ∝ π(a|s) exp(η Q^π(s, a))``.

    Equals :func:`~rltheory.algorithms.npg_step` with ``η_NPG = (1−γ)η``
    (``Q^π`` and ``A^π`` differ by a per-state constant). Actions with ``π(a|s) = 0`` keep
    probability 0 (the KL divergence is infinite elsewhere).

    Notes
    -----
    Computed in the log domain, overflow-free for any ``η`` and any scale of ``Q``
    (:func:`_kl_logits`): ``log π'(·|s) = log π(·|s) + η(Q(s, ·) − max_{a ∈ supp} Q(s, a))``
    up to a per-state constant (the update is invariant to per-state shifts of ``Q``). Forming
    ``η·Q`` first overflowed float32 once ``η|Q| > 3.4e38`` (``∞ − ∞ = NaN``).

    Examples
    --------
    >>> import numpy as np
    >>> from rltheory.mdp import FiniteMDP
    >>> mdp = FiniteMDP(np.ones((1, 2, 1)), np.array([[0.0, 1.0]]), gamma=0.5)
    >>> np.round(pmd_kl_step(mdp, np.full((1, 2), 0.5), eta=np.log(3)), 12).tolist()
    [[0.25, 0.75]]
    """
    discount(mdp, "pmd_kl_step")
    eta = check_positive(eta, "eta")
    pi = as_stochastic_policy(mdp, pi)
    xp = mdp.xp
    phi, c = _kl_logits(safe_log(pi, xp), 1.0, _q_values(mdp, evaluate_policy(mdp, pi)), eta, xp)
    return _logit_policy(phi, c, xp)


def _kl_logits(phi: Any, c: float, Q: Any, eta: float, xp: Any) -> tuple[Any, float]:
    r"""One KL-PMD step on scaled logits ``θ = c·φ`` (``c ≥ 1``; ``φ = −∞`` off the support).

    ``θ' = θ + η(Q − m)``, ``m(s) = max_{a ∈ supp} Q(s, a)``, is returned as ``(φ', c')`` with
    ``c' = max(c, η)`` and ``φ' = (c/c')φ + (η/c')(Q − m)``, shifted to ``max_a φ'(s, a) = 0``.
    Both factors are ``≤ 1``, so a step grows ``max|φ|`` by at most ``2 max|Q − m|`` (the shift
    included): nothing overflows for any ``η`` (``θ`` itself passes ``3.4e38`` in float32 after ~128 doublings of
    ``η``), and an entry is ``−∞`` only off the support. ``π ∝ exp θ``: :func:`_logit_policy`.
    """
    pos = phi > -math.inf
    neg = xp.full_like(Q, -math.inf)
    zero = xp.zeros_like(Q)
    m = xp.max(xp.where(pos, Q, neg), axis=-1, keepdims=True)
    c_new = max(c, eta)
    z = xp.where(
        pos,
        (c / c_new) * xp.where(pos, phi, zero) + (eta / c_new) * xp.where(pos, Q - m, zero),
        neg,
    )
    return z - xp.max(z, axis=-1, keepdims=True), c_new


def _logit_policy(phi: Any, c: float, xp: Any) -> Any:
    r"""``π(a|s) = exp(c·φ(s, a)) / Σ_b exp(c·φ(s, b))`` for ``max_a φ(s, a) = 0``, ``c ≥ 1``.

    ``c`` may exceed the dtype's range (float32 at ``η > 3.4e38``): ``c·φ`` is formed only where
    ``c·φ ≥ −L`` (``L = 8 − log(smallest subnormal)``, so ``exp(−L)`` rounds to 0), as a product
    of factors ``≤`` the dtype's maximum; below that ``φ`` is clipped to ``−2L/c`` (rounded, still
    ``≤ −L/c``), whose weight is 0 as the exact one rounds to. Where even ``L/c`` is below the
    smallest subnormal every ``φ < 0`` has weight 0.
    """
    fi = xp.finfo(phi.dtype)
    big = float(fi.max)
    s_min = subnormal_spacing(phi.dtype, xp)
    L = 8.0 - math.log(s_min)
    if L / c < s_min:
        e = xp.where(phi < 0, xp.full_like(phi, -math.inf), xp.zeros_like(phi))
    else:
        e = xp.maximum(phi, xp.full_like(phi, -2.0 * L / c))
        while c > big:
            e, c = e * big, c / big
        e = e * c
    w = xp.exp(e)
    return w / xp.sum(w, axis=-1, keepdims=True)


def pmd_euclidean_step(mdp: FiniteMDP, pi: Any, *, eta: float) -> Any:
    r"""Euclidean policy mirror descent step ``π'(·|s) = Proj_Δ(π(·|s) + η Q^π(s, ·))``.

    Examples
    --------
    >>> import numpy as np
    >>> from rltheory.mdp import FiniteMDP
    >>> mdp = FiniteMDP(np.ones((1, 2, 1)), np.array([[0.0, 1.0]]), gamma=0.0)
    >>> pmd_euclidean_step(mdp, np.full((1, 2), 0.5), eta=0.25).tolist()
    [[0.375, 0.625]]
    """
    discount(mdp, "pmd_euclidean_step")
    eta = check_euclidean_step(mdp, eta)
    pi = as_stochastic_policy(mdp, pi)
    return project_step(pi, _q_values(mdp, evaluate_policy(mdp, pi)), eta, mdp.xp)


def check_euclidean_step(mdp: FiniteMDP, eta: Any) -> float:
    """A Euclidean (projected, or softmax-gradient) step ``η > 0`` that the model's dtype can hold.

    The projection ``Π(π + η d)`` multiplies ``η`` into arrays of the model's dtype; a Python float
    meeting a float32 array is rounded to float32, so ``η = 1e308`` became ``inf`` and the
    projected step returned NaN ("pi must be finite; pi(s=0, a=0) = nan", from the next
    evaluation). Larger than the dtype's largest number is a ``ValueError`` naming ``eta``
    (float64 takes any finite ``η``).
    """
    eta = check_positive(eta, "eta")
    big = float(mdp.xp.finfo(mdp.dtype).max)
    if eta > big:
        raise ValueError(
            f"eta={eta!r} is too large for a {mdp.dtype} model: it exceeds the largest {mdp.dtype} number "
            f"{big:.3g}; use a float64 model or a smaller eta"
        )
    return eta


def geometric_step_sizes(eta0: float, ratio: float) -> Callable[[int], float]:
    r"""Step-size rule ``η_k = η_0 · ratio^k`` (``ratio = 1/γ`` gives the PMD linear rate).

    Capped at ``max(η_0, e^{700})`` (``e^{700} ≈ 1e304``; ``η_0·ratio^k`` beyond it would overflow to
    ``inf``, which the drivers refuse): from there on the steps are constant. ``η_0`` itself is returned
    at ``k = 0`` and no step is below it: the cap at ``e^{700}`` alone made ``η_0 = 1e305`` a rule of
    constant steps ``1.01e304``, and ``exp(log η_0)`` returned ``0.10000000000000002`` for ``η_0 = 0.1``.

    Examples
    --------
    >>> rule = geometric_step_sizes(1.0, 2.0)
    >>> [rule(k) for k in range(4)]
    [1.0, 2.0, 4.0, 8.0]
    """
    eta0 = check_positive(eta0, "eta0")
    ratio = check_positive(ratio, "ratio")
    if ratio < 1.0:
        raise ValueError(f"ratio must be >= 1 (non-decreasing steps); got {ratio!r}")
    log0, logr = math.log(eta0), math.log(ratio)

    def rule(k: int) -> float:
        if k <= 0 or log0 >= 700.0:
            return eta0
        return max(eta0, math.exp(min(log0 + k * logr, 700.0)))

    return rule


def _step_rule(step_sizes: StepRule, iterations: int) -> Callable[[int], float]:
    """``k -> η_k`` from a rule, a number or a sequence (checked here; a rule's values per step).

    A number is any real scalar (numpy's, a 0-d array): ``np.float32(0.5)`` and ``np.array(0.5)``
    were taken for sequences and failed with "'numpy.float32' object is not iterable" / "iteration
    over a 0-d array". Sequence entries are checked as numbers (``True`` and ``"1"`` were read as
    1.0), and an empty sequence is refused by name (with ``iterations=0`` it failed with
    ``IndexError``: the driver records ``η_0`` at the first iterate).
    """
    if callable(step_sizes):
        return step_sizes
    if isinstance(step_sizes, (numbers.Real, np.ndarray)) and getattr(step_sizes, "ndim", 0) == 0:
        eta = check_positive(step_sizes, "step_sizes")
        return lambda k: eta
    if isinstance(step_sizes, (str, bytes)) or not isinstance(step_sizes, Iterable):
        raise TypeError(
            "step_sizes must be a number > 0, a sequence of them or a callable k -> eta_k; "
            f"got {type(step_sizes).__name__}"
        )
    seq = [check_positive(e, f"step_sizes[{i}]") for i, e in enumerate(step_sizes)]
    if len(seq) < max(iterations, 1):
        raise ValueError(
            f"step_sizes has {len(seq)} entries but iterations={iterations} steps need "
            f"{'that many' if iterations else 'one (eta_0 is recorded at the first iterate)'}"
        )
    return lambda k: seq[min(k, len(seq) - 1)]


def policy_mirror_descent(
    mdp: FiniteMDP,
    *,
    step_sizes: StepRule,
    iterations: int,
    update: Callable[..., Any] = pmd_kl_step,
    pi0: Any = None,
    rho: Any = None,
    tol: float | None = None,
    V_star: Any = None,
) -> PolicyOptimizationResult:
    r"""Run exact policy mirror descent ``π_{k+1} = update(mdp, π_k, eta=η_k)`` on all instances.

    Parameters
    ----------
    mdp : FiniteMDP
        Discounted model, possibly batched.
    step_sizes : float, sequence or callable
        ``η_k``: a constant, a sequence (length ≥ ``iterations``) or a rule
        ``k -> η_k`` such as :func:`geometric_step_sizes`.
    iterations : int ≥ 0
    update : callable
        One-step map ``update(mdp, pi, eta=...)``: :func:`pmd_kl_step` (default),
        :func:`pmd_euclidean_step`, or e.g. ``functools.partial(mdpo_step, inner_steps=m)``.
    pi0, rho, tol, V_star
        As in :func:`~rltheory.algorithms.natural_policy_gradient`.

    Returns
    -------
    PolicyOptimizationResult
        Trace metrics ``suboptimality`` (``V*(ρ) − V^{π_k}(ρ)`` as computed),
        ``suboptimality_inf``, ``suboptimality_bound`` and ``step_size``.
        ``suboptimality_bound ≥ V*(ρ) − V^{π_k}(ρ)`` is certified: the computed suboptimality
        plus the round-off floor (the errors of the computed ``V^{π_k}`` and ``V*`` from their
        Bellman residuals and :func:`rltheory.mdp.policy_iteration`'s bound, and of the
        ``ρ``-weighting: :class:`~rltheory.algorithms._policy_opt.GapCertificate`; a ``V_star``
        passed in is taken as exact). ``tol`` stops the run once
        ``suboptimality_bound ≤ tol`` for every instance (``converged=True``); a run that
        reaches ``iterations`` first has ``converged=False`` and a
        :class:`~rltheory.errors.ConvergenceWarning`, which names the round-off floor when
        ``tol`` is below it (no step can then certify ``tol``). (Stopping on the computed
        suboptimality alone returned ``converged=True`` on a float32 model with the traced
        value −0.0365 and the true one 2.6e-4, 30 times ``tol``.)

    Raises
    ------
    ValueError
        A non-positive step, bad ``iterations``/``tol``/``pi0``/``rho``.

    Notes
    -----
    Every KL or Euclidean PMD step improves every state, ``V^{π_{k+1}} ≥ V^{π_k}``
    (Xiao 2022, Lemma 5; Lan 2022, Lemma 4). Rates: see the module docstring and
    :func:`rltheory.bounds.pmd_sublinear_bound`, :func:`rltheory.bounds.pmd_linear_bound`.

    With the default ``update=pmd_kl_step`` the driver carries the logits
    ``log π_k = log π_0 + Σ_{j<k} η_j (Q^{π_j} − m_j)`` (scaled by ``max_j η_j``, so nothing
    overflows for any step sizes, :func:`_kl_logits`) instead of ``π_k``: in exact arithmetic
    ``π_k(a|s) > 0`` wherever ``π_0(a|s) > 0``, and an action whose probability rounds to 0
    after one large step comes back when a later, larger step favours it. Feeding the rounded
    ``π_k`` back to the step made such a 0 permanent: on two states (stay for 0.6 or move on;
    then 1 forever, ``γ = 0.9``) with ``η_k = 10^4·10^k`` the optimal move had ``π_1 = e^{−2700}``,
    rounded to 0, and the run stayed at suboptimality 1.5 (now 0 from ``k = 2``); on a float32
    model (``S = 5``, ``A = 3``, rewards ~1e4, ``γ = 0.999``, ``η_k = 2^k``) it stayed at a
    deterministic policy 1.1e6 below optimal, and past ``η|Q| > 3.4e38`` the step returned NaN.
    Other updates (or a ``pmd_kl_step`` wrapped in another function) get ``π_k``, and treat its
    zeros as outside the support.

    Examples
    --------
    >>> import numpy as np
    >>> from rltheory.mdp import FiniteMDP
    >>> mdp = FiniteMDP(np.ones((1, 2, 1)), np.array([[0.0, 1.0]]), gamma=0.5)
    >>> res = policy_mirror_descent(mdp, step_sizes=geometric_step_sizes(1.0, 2.0), iterations=8)
    >>> bool(res.trace["suboptimality"][-1] < 1e-12)
    True
    """
    _, iterations, tol, rho, cert, pi, loop = prepare_certified(
        mdp,
        "policy_mirror_descent",
        iterations=iterations,
        tol=tol,
        rho=rho,
        V_star=V_star,
        pi0=pi0,
    )
    rule = _step_rule(step_sizes, iterations)
    xp = mdp.xp
    # the default KL update carries its logits (scaled, _kl_logits) rather than π: a probability
    # that rounds to 0 is not dropped from the support (exact PMD keeps every π_k(a|s) > 0 where
    # π_0(a|s) > 0), and nothing overflows as η_k grows
    kl = update is pmd_kl_step
    phi, c = (safe_log(pi, xp), 1.0) if kl else (None, 1.0)
    k = 0
    while True:
        V = evaluate_policy(mdp, pi)
        Q = _q_values(mdp, V)
        gap = cert.V_star - V
        sub = expected_value(gap, rho)
        floor, bound = cert(mdp, pi, V, rho, sub, Q)
        # (float() first: a rule returning [1.0] or None failed with "float() argument must be ...", True
        # was read as 1.0 and 10**400 raised OverflowError, naming no argument)
        eta = check_positive(rule(k), f"step_sizes({k})")
        metrics = {
            "suboptimality": sub,
            "suboptimality_inf": xp.max(gap, axis=-1),
            "suboptimality_bound": bound,
            "step_size": eta,
        }
        if loop.record_certified(k, bound, floor, **metrics):
            break
        if kl:
            phi, c = _kl_logits(phi, c, Q, eta, xp)
            pi = _logit_policy(phi, c, xp)
        else:
            pi = update(mdp, pi, eta=eta)
        k += 1
    return loop.result(pi)
