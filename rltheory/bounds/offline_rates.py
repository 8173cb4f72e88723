r"""Offline-RL rates in the coverage coefficients, and the hybrid NPG bound (exact forms).

:func:`lcb_vi_rate` (tabular LCB-VI, Hoeffding bonus, split data; single-policy
concentrability ``C*``), :func:`offline_game_gap_rate` (gap-relaxation NashConv under
unilateral coverage) and :func:`hybrid_npg_bound` (NPG with an arbitrary critic, the bound of
:func:`rltheory.algorithms.hybrid_npg`). The derivations are in :mod:`rltheory.bounds.offline`'s
module docstring and in each function's Notes; all three are re-exported there.

References
----------
Rashidinejad, P., Zhu, B., Ma, C., Jiao, J., Russell, S. (2021). Bridging offline RL
and imitation learning: a tale of pessimism. NeurIPS 34 (VI-LCB).
Xie, T., Jiang, N., Wang, H., Xiong, C., Bai, Y. (2021). Policy finetuning: bridging
sample-efficient offline and online RL. NeurIPS 34.
Cui, Q., Du, S. S. (2022). When are offline two-player zero-sum Markov games solvable? NeurIPS 35.
Zhang, Y., Bai, Y., Jiang, N. (2023). Offline learning in Markov games with general
function approximation. ICML.
Agarwal, A., Kakade, S., Lee, J., Mahajan, G. (2021). On the theory of policy gradient
methods. JMLR 22(98), Thm 16.
Zhou, Y., Sekhari, A., Song, Y., Sun, W. (2024). Offline data enhanced on-policy policy
gradient with provable guarantees. ICLR, Thm 1.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._validate import real_scalar
from ._offline_args import _at_least_one, _exp_log, _pos, _prob, _real

__all__ = ["lcb_vi_rate", "offline_game_gap_rate", "hybrid_npg_bound"]


def lcb_vi_rate(
    C_star: float, S: int, A: int, H: int, K: int, delta: float, *, support: int | None = None
) -> float:
    r"""``H (H + 1) √(M C* ln(2HSA/δ) / ⌊K/H⌋)`` — LCB-VI's suboptimality in the single-policy concentrability.

    The exact form bounded for tabular LCB-VI with the Hoeffding bonus and
    per-step sample splitting (module docstring), ``Õ(√(C* S H^5 / K))``; it holds
    with probability ``≥ 1 − 2δ`` once ``⌊K/H⌋ ρ_h(s,a) ≥ 8 ln(HSA/δ)`` on the
    support of the comparator's occupancy (so that ``n_h(s,a) ≥ ⌊K/H⌋ρ_h(s,a)/2``).
    ``M`` bounds the number of pairs each ``d*_h`` charges: the step
    ``Σ_{s,a} d*_h √(1/ρ_h) ≤ √C* Σ_{s,a} √d*_h ≤ √(M C*)`` is Cauchy–Schwarz over that support.
    ``M = S`` (the default) for a deterministic comparator such as an optimal policy
    (Rashidinejad et al. 2021 compare with a deterministic ``π*``); a stochastic comparator
    needs ``support=S*A``: with ``M = S`` the rate was below the data-dependent bound it is
    meant to dominate, by up to ``√A`` (uniform comparator over ``A = 4`` actions, one state,
    counts at ``⌊K/H⌋ρ/2``: ``2Σ E Γ = 0.821 > 0.419``).

    Parameters
    ----------
    C_star : float ≥ 1
        Single-policy concentrability of the comparator (``inf`` gives ``inf``). A value below 1
        by at most its dtype's rounding of occupancy sums, ``2·max(1e-8, 16 eps)`` (Python floats
        and float64: ``2e-8``; numpy float32: ``3.8e-6``), is read as exactly 1; lower values raise.
    S, A, H, K : int
    delta : float in (0, 1)
    support : int ≥ 1, optional
        ``M``, the most state-action pairs a step of the comparator's occupancy charges
        (default ``S``: a deterministic comparator; ``S*A`` for any comparator).

    Examples
    --------
    >>> abs(lcb_vi_rate(1.0, 1, 1, 1, 100, 0.5) - 2 * math.sqrt(math.log(4.0) / 100)) < 1e-12
    True
    """
    for v, nm in ((S, "S"), (A, "A"), (H, "H"), (K, "K")):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
            raise ValueError(f"{nm} must be a positive integer; got {v!r}")
    if support is not None and (
        isinstance(support, bool) or not isinstance(support, (int, np.integer)) or support < 1
    ):
        raise ValueError(
            f"support must be a positive integer (the pairs a step of d* charges); got {support!r}"
        )
    d = _prob(delta)
    # NaN (refused) for text, bools, None, complex; float("2") parsed text. Within its dtype's
    # rounding below 1 it is 1: a float32 C* = 0.99999988 was refused (the slack was 1e-12)
    C = _at_least_one(C_star, "C_star")
    S, A, H, K = int(S), int(A), int(H), int(K)  # Python ints: numpy's int64 products wrap around
    M = S if support is None else int(support)
    Kh = K // H
    if Kh < 1 or math.isinf(C):
        return float("inf")
    # not ln(2HSA/δ): the quotient overflows for a subnormal δ
    iota = math.log(2 * H * S * A) - math.log(d)
    try:
        rate = H * (H + 1) * math.sqrt(M * C * iota / Kh)
    except OverflowError:  # M, K or H(H+1) beyond the float range (Python ints)
        rate = math.inf
    if math.isfinite(rate):
        return rate
    # M C or H(H+1) past the range though the rate is not (C* = 1e308, S = 10): the same product in log space
    return _exp_log(
        math.log(H)
        + math.log(H + 1)
        + 0.5 * (math.log(M) + math.log(C) + math.log(iota) - math.log(Kh))
    )


def offline_game_gap_rate(
    C_uni: float,
    S: int,
    actions: tuple[int, ...],
    H: int,
    K: int,
    delta: float,
    *,
    n_candidates: int = 1,
    support: int | None = None,
) -> float:
    r"""``2 n H (H + 1) √(M C_uni ι / ⌊K/H⌋)``, ``ι = ln(4 n H S J |Π| / δ)`` — offline NashConv in unilateral coverage.

    The bound on ``NashConv(π̂)`` for gap-relaxation minimisation over a candidate
    set ``Π ∋ π*`` with Hoeffding intervals and split data
    (:func:`rltheory.algorithms.offline_games.gap_relaxation_equilibrium`): on the
    confidence event, ``NashConv(π̂) ≤ Ĝ(π̂) ≤ Ĝ(π*) ≤ Σ_i 2 Σ_h [E_{(π̃_i, π*_{−i})} Γ_h +
    E_{π*} Γ_h]`` with ``π̃_i`` the optimistic best response, and each expectation is
    at most ``(H − h) √(M C_uni ι / K_h)`` where ``M`` bounds the number of
    state-joint-action pairs an occupancy ``d_h`` charges (``M = S J`` always; ``M = S``
    when ``π*`` is pure). ``Σ_h (H − h) = H(H+1)/2``; ``n`` players, ``J = Π_j A_j``.
    Probability ``≥ 1 − 2δ`` once ``⌊K/H⌋ ρ_h ≥ 8 ln(HSJ/δ)`` on the relevant supports.

    ``C_uni ≥ 1`` (``∞`` allowed: the rate is then ``∞``), as for every data law ``ρ_h`` that
    sums to 1, which the derivation uses; a value in ``[0, 1)`` can only come from weights that
    do not, and is a ``ValueError`` (it returned a rate below the ``C_uni = 1`` one, and 0 for
    ``C_uni = 0``). Values below 1 by their dtype's rounding count as 1 (as in :func:`lcb_vi_rate`).

    Examples
    --------
    >>> r = offline_game_gap_rate(1.0, 1, (1, 1), 1, 100, 0.5)
    >>> abs(r - 2 * 2 * 2 * math.sqrt(math.log(16.0) / 100)) < 1e-12
    True
    """
    for v, nm in ((S, "S"), (H, "H"), (K, "K"), (n_candidates, "n_candidates")):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
            raise ValueError(f"{nm} must be a positive integer; got {v!r}")
    d = _prob(delta)
    # tuple(2) raised 'int' object is not iterable, naming no argument; a set dropped repeated sizes
    if not (
        isinstance(actions, (tuple, list))
        or (isinstance(actions, np.ndarray) and actions.ndim == 1)
    ):
        raise TypeError(
            "actions must be a sequence (tuple, list or 1-d array) of each player's number of "
            f"actions, e.g. (2, 3); got {actions!r}"
        )
    acts = tuple(actions)
    if not acts:
        raise ValueError(
            "actions must list each player's number of actions (at least one player); got ()"
        )
    for i, a in enumerate(acts):
        if isinstance(a, bool) or not isinstance(a, (int, np.integer)) or a < 1:
            raise ValueError(f"actions[{i}] must be a positive integer; got {a!r}")
    acts = tuple(int(a) for a in acts)
    n = len(acts)
    J = math.prod(acts)
    if support is not None and (
        isinstance(support, bool) or not isinstance(support, (int, np.integer)) or support < 1
    ):
        raise ValueError(
            f"support must be a positive integer (the pairs an occupancy charges); got {support!r}"
        )
    M = S * J if support is None else int(support)
    # Python ints: int64 products wrap
    S, H, K, n_candidates = (
        int(S),
        int(H),
        int(K),
        int(n_candidates),
    )
    Kh = K // H
    # C_uni >= 1 for data laws that sum to 1 per step, which the derivation needs; a value in
    # [0, 1) came from unnormalised weights and gave a false rate (0 for C_uni = 0: "NashConv <= 0").
    # Values below 1 by their dtype's rounding count as 1; NaN (text, bools, None, complex) raises.
    C = _at_least_one(C_uni, "C_uni")
    if Kh < 1 or math.isinf(C):
        return float("inf")
    # the quotient overflows for a subnormal δ
    iota = math.log(4 * n * H * S * J * n_candidates) - math.log(d)
    try:
        rate = 2.0 * n * H * (H + 1) * math.sqrt(M * C * iota / Kh)
    except OverflowError:  # sizes beyond the float range (Python ints)
        rate = math.inf
    if math.isfinite(rate):
        return rate
    # an intermediate product past the range though the rate is not: the same product in log space
    return _exp_log(
        math.log(2 * n * H * (H + 1))
        + 0.5 * (math.log(M) + math.log(C) + math.log(iota) - math.log(Kh))
    )


def hybrid_npg_bound(H: int, A: int, eta: float, critic_terms: Any) -> np.ndarray:
    r"""``H ln A/(ηT) + H(H+1)/(2T) + (1/T) Σ_{t<T} E_t`` for ``T = 1..len(critic_terms)`` — NPG with any critic.

    Bounds the running average ``(1/T) Σ_{t<T} (V*_0(μ) − V^{π_t}_0(μ))`` of the exponential-weights
    updates ``π_{t+1,h}(a|s) ∝ π_{t,h}(a|s) exp(η Q̂_{t,h}(s, a))`` from the uniform ``π_0``
    (:func:`rltheory.algorithms.hybrid_npg`, :func:`rltheory.algorithms.hybrid_actor_critic`), for
    an *arbitrary* critic sequence ``Q̂_t``, rewards in ``[0, 1]`` and horizon ``H``. With
    ``δ_t = Q̂_t − Q^{π_t}`` and ``g_{t,h} = ⟨π_{t+1,h} − π_{t,h}, δ_{t,h}⟩``,

        ``E_t = Σ_h E_{s~d*_h}[ ⟨π_{t+1,h} − π*_h, δ_{t,h}⟩(s) + Σ_{h'>h} E^{π_{t+1}}[g_{t,h'}(s_{h'}) | s_h = s] ]``

    (``d*_h`` the state occupancy of a deterministic optimal ``π*``). ``E_t = 0`` for the exact
    critic ``Q̂_t = Q^{π_t}``, and the bound is the finite-horizon form of the NPG rate
    ``ln|A|/(ηT) + 1/((1−γ)²T)`` of Agarwal, Kakade, Lee & Mahajan (2021, Thm 16), the
    effective horizon ``1/(1 − γ)`` becoming ``H``.

    Parameters
    ----------
    H, A : int
    eta : float > 0
    critic_terms : array (T,)
        ``E_0, …, E_{T−1}`` (``HybridResult.trace["critic_term"][1:]``).

    Returns
    -------
    numpy.ndarray, shape (T,)

    Notes
    -----
    Proof (deterministic, per run). Performance difference:
    ``V* − V^{π_t} = Σ_h E_{d*_h}⟨π* − π_t, Q^{π_t}_h⟩``. The update gives
    ``⟨π* − π_t, Q̂_t⟩ ≤ (KL(π*‖π_t) − KL(π*‖π_{t+1}))/η + ⟨π_{t+1} − π_t, Q̂_t⟩`` and
    ``⟨π_{t+1} − π_t, Q̂_t⟩ ≥ 0``; performance difference for ``(π_{t+1}, π_t)`` from step ``h``
    gives ``⟨π_{t+1} − π_t, Q^{π_t}_h⟩ ≤ V^{π_{t+1}}_h − V^{π_t}_h + Σ_{h'>h} E^{π_{t+1}}[g_{t,h'}]``.
    Summing over ``t < T``: the KL terms telescope to ``Σ_h E_{d*_h} KL(π*_h‖π_0) ≤ H ln A``, the
    value terms to ``Σ_h E_{d*_h}[V^{π_T}_h − V^{π_0}_h] ≤ Σ_h (H − h) = H(H+1)/2``, the rest is
    ``Σ_t E_t``. Zhou, Sekhari, Song & Sun (2024, Thm 1) bound ``E_t`` for HNPG by the critic's
    statistical error on the offline and on-policy distributions; here it is measured exactly.

    Examples
    --------
    >>> hybrid_npg_bound(2, 2, 1.0, [0.0, 0.0]).round(4).tolist()   # 2 ln 2/T + 3/T
    [4.3863, 2.1931]
    """
    for v, nm in ((H, "H"), (A, "A")):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
            raise ValueError(f"{nm} must be a positive integer; got {v!r}")
    e = _pos(eta, "eta")
    E = _real(critic_terms, "critic_terms")
    if E.ndim > 1:  # flattened before: a (T, 2) array was read as 2T iterations' terms
        raise ValueError(
            f"critic_terms must be a non-empty finite array of shape (T,) (E_0, ..., E_(T-1)); "
            f"got shape {E.shape}"
        )
    E = E.reshape(-1)
    if E.size == 0:
        raise ValueError(
            "critic_terms must be a non-empty finite array of shape (T,); got an empty array"
        )
    if not np.all(np.isfinite(E)):
        t = int(np.argmax(~np.isfinite(E)))
        raise ValueError(
            f"critic_terms must be a non-empty finite array of shape (T,); critic_terms[{t}] = {E[t]}"
        )
    T = np.arange(1, E.size + 1, dtype=np.float64)
    # inf for a Python int beyond the float range (H * ln A raised OverflowError)
    Hf = real_scalar(int(H))
    lnA = math.log(int(A))
    explore = Hf * lnA / (e * T) if lnA > 0 else np.zeros_like(T)  # ln 1 = 0 (not inf·0 = NaN)
    return explore + Hf * (Hf + 1) / (2.0 * T) + np.cumsum(E) / T
