r"""Selective (relaxed) unilateral coverage for offline Markov games, tabular form.

Unilateral concentrability (Cui & Du 2022; :func:`rltheory.bounds.coverage.unilateral_concentrability`)
asks the data ``ρ`` to cover *every* unilateral deviation ``(π_i', π_{−i})`` of the
candidate ``π``. Zhang, Bai & Jiang (2023) observe that their gap relaxation

    ``Ĝ(π) = Σ_i [ V̄_i^{†, π_{−i}} − V̲_i^{π} ]``,  ``V̄_i^{†} = max_{π_i'} V̄_i^{(π_i', π_{−i})}``,

only pays for a deviation through the amount by which its *optimistic* value can
exceed the best-response value: a deviation's overestimate (coverage cost) is
offset by its suboptimality as a best response ("selective coverage of deviation
policies that trade off greediness and coverage", abstract and §4). A deviation that
is poor enough needs no coverage at all.

**What is implemented (tabular, finite horizon, rewards in [0, 1]).** In the tabular
class the only prior knowledge about an unvisited joint pair is the range, so the
interval estimates of :mod:`rltheory.algorithms.offline_games` converge, as the counts
on the support of ``ρ`` grow, to the *optimistic completion* (exact backup where
``ρ_h(s, a) > 0``, ``Q̄ = H − h`` where ``ρ_h(s, a) = 0``) for upper bounds and the
*pessimistic completion* (``Q̲ = 0`` on unvisited pairs) for lower bounds. Write
``V̄_i^∞(π_i')`` and ``V̲_i^∞(π)`` for the values (from ``μ``) in these completions and
``V_i^†``, ``V_i^π`` for the true ones. The **selective concentrability** is

    ``C_sel(π) = max( C_cov(π), max_i sup_{π_i' ∈ G_i} C_cov(π_i', π_{−i}) )``

if ``max_{π_i'} V̄_i^∞(π_i') ≤ V_i^† + tol`` and ``V̲_i^∞(π) ≥ V_i^π − tol`` for every
player ``i``, and ``C_sel(π) = ∞`` otherwise. Here

* ``C_cov(σ) = max_{(h,s,a): ρ_h(s,a) > 0} d̃^σ_h(s, a)/ρ_h(s, a)`` is the density ratio of
  the *killed* occupancy ``d̃^σ_h(s, a) = Pr^σ(s_h = s, a_h = a, every earlier pair covered)``
  on the covered pairs: a path that enters an unvisited pair has a saturated
  (data-free) interval from there on, so neither that pair nor what follows it has an
  estimation error; it is paid for by the two value conditions, not by a ratio; and
* ``G_i`` is the set of player ``i``'s deterministic Markov deviations that are
  *greedy in the optimistic completion*: ``V̄_i^∞(π_i') ≥ max V̄_i^∞ − tol`` (they use,
  at every state they reach, an action within ``tol`` of the optimistic optimum).

The value conditions say the limit certificate is exact, ``Ĝ_∞(π) = Gap(π)``: no
uncovered deviation can look better than the best response even with the most
optimistic completion, and no uncovered pair of ``π`` can have positive value. The
ratio counts only the greedy deviations, whose estimation error decides the
``1/√N`` rate; non-greedy deviations have a positive margin and stop mattering.

Always ``C_sel(π) ≤ C_uni(π)`` (if ``C_uni < ∞`` every deviation and ``π`` are fully
covered, both completions are exact, and each ratio is one of those in ``C_uni``; ``π``
itself is a unilateral deviation). ``C_sel`` can be finite where ``C_uni = ∞``:
:func:`selective_coverage_witness`.

**Deviation from the paper.** Zhang, Bai & Jiang state their condition for general
function classes ``F`` through Bellman-error transfer coefficients and an
accuracy-dependent trade-off of the form ``√(C(π_i') ε) − (V_i^† − V_i^{π_i'})``; in the
tabular class ``F`` (all functions in ``[0, H − h]``) every such coefficient of a
deviation touching an unvisited pair is infinite, so the tabular content of the
trade-off is the accuracy-free form above: the range-saturated optimistic value plays
the role of the unbounded coverage term and the margin ``max V̄^∞ − V̄^∞(π_i')`` the role
of the suboptimality. The paper's equation numbers could not be checked here; the
statement is taken from its abstract and the structure of its Theorem (NE/CE/CCE with
the gap relaxation).

References
----------
Zhang, Y., Bai, Y., Jiang, N. (2023). Offline learning in Markov games with general
function approximation. ICML (arXiv:2302.02571): gap relaxation, coverage weaker than
unilateral concentrability.
Cui, Q., Du, S. S. (2022). When are offline two-player zero-sum Markov games solvable?
NeurIPS 35 (unilateral concentrability).
"""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np

from .._validate import _source_atol, check_probability, check_real, real_scalar
from ..backend import as_float, require_host

__all__ = [
    "selective_concentrability",
    "selective_concentrability_bruteforce",
    "selective_coverage_witness",
]


def _host(x: Any, what: str, field: str, keep_dtype: bool = False) -> np.ndarray:
    """``x`` as a float64 host array; ``TypeError`` naming ``field`` for text, complex or boolean entries.

    ``np.asarray(x, dtype=float64)`` parsed the text "1" as the number 1, dropped a complex entry's
    imaginary part with only a ComplexWarning and read ``True`` as 1 (as
    :func:`rltheory.bounds.coverage.unilateral_concentrability`, whose bound ``C_sel`` is, refuses).
    """
    a = require_host(x, what)
    if np.asarray(a).dtype == np.bool_:
        raise TypeError(f"{field} must hold real numbers; got a boolean array")
    return np.asarray(as_float(a, np, None if keep_dtype else np.float64, field=field))


def _sum_tol(x: Any, n: int) -> float:
    """Tolerance on the sum of a length-``n`` distribution given as ``x`` (check_probability's rule,
    ``max(1e-8, 16 eps of x's dtype)·(1 + √n)``): an absolute 1e-8 refused float32 rows, whose
    uniform row over 7 actions sums to 1 − 4.5e-8."""
    return _source_atol(np.asarray(x), np) * (1.0 + n**0.5)


def _game(P: Any, R: Any, policies: list[Any], d_data: Any, mu: Any, what: str) -> tuple:
    """Host arrays: joint ``P[H,S,J,S]``, ``R[n,H,S,J]``, per-player policies, ``ρ[H,S,J]``, ``μ``."""
    Pf = _host(P, what, "P", keep_dtype=True)  # checked in its own dtype below, then cast
    if Pf.ndim < 4:
        raise ValueError(f"P must have shape (H, S, A_1, ..., A_n, S); got {Pf.shape}")
    H, S = Pf.shape[0], Pf.shape[1]
    acts = tuple(int(a) for a in Pf.shape[2:-1])
    n, J = len(acts), int(np.prod(acts))
    if Pf.shape[-1] != S or 0 in Pf.shape:
        raise ValueError(
            f"P must have shape (H, S, A_1, ..., A_n, S) with every axis non-empty; got {Pf.shape}"
        )
    # a NaN or a row off the simplex went through every value, ratio and comparison unnoticed
    # in P's own dtype: a float32 row summing to 1 − 3e-8 was refused at float64's tolerance 1e-8
    check_probability(
        Pf,
        "P",
        ("h", "s") + tuple(f"a{i + 1}" for i in range(n)) + ("s'",),
        "P[h, s, a_1, ..., a_n, :]",
    )
    Pf = Pf.astype(np.float64)
    Rf = _host(R, what, "R")
    if Rf.shape != (n, H, S) + acts:
        raise ValueError(
            f"R must have shape (n, H, S, A_1, ..., A_n) = {(n, H, S) + acts}; got {Rf.shape}"
        )
    bad = (Rf < 0) | (Rf > 1) | ~np.isfinite(Rf)
    if bad.any():
        idx = tuple(int(i) for i in np.argwhere(bad)[0])
        raise ValueError(
            f"rewards must lie in [0, 1] (the completions use the range H − h); R{list(idx)} = {Rf[idx]:.6g}"
        )
    rho = _host(d_data, what, "d_data")
    if rho.shape != (H, S) + acts:
        raise ValueError(
            f"d_data must have shape (H, S, A_1, ..., A_n) = {(H, S) + acts}; got {rho.shape}"
        )
    if np.any(rho < 0) or not np.all(np.isfinite(rho)):
        idx = tuple(int(i) for i in np.argwhere((rho < 0) | ~np.isfinite(rho))[0])
        raise ValueError(f"d_data must be finite and non-negative; d_data{list(idx)} = {rho[idx]}")
    if len(policies) != n:
        raise ValueError(
            f"policies must list {n} per-player policies (H, S, A_i); got {len(policies)}"
        )
    pols = []
    for i, p in enumerate(policies):
        pi = _host(p, what, f"policies[{i}]")
        if pi.shape != (H, S, acts[i]):
            raise ValueError(
                f"policies[{i}] must have shape (H, S, A_{i}) = {(H, S, acts[i])}; got {pi.shape}"
            )
        bad_hs = ~(np.abs(pi.sum(-1) - 1.0) <= _sum_tol(p, acts[i])) | np.any(
            pi < -1e-12, axis=-1
        )  # NaN is bad
        if np.any(bad_hs):
            h, s = (int(v) for v in np.argwhere(bad_hs)[0])
            raise ValueError(
                f"policies[{i}][h={h}, s={s}] must be a distribution over A_{i}; got {pi[h, s].tolist()}"
            )
        pols.append(pi)
    m = np.full(S, 1.0 / S) if mu is None else _host(mu, what, "mu")
    if (
        m.shape != (S,) or np.any(m < 0) or not abs(m.sum() - 1.0) <= _sum_tol(mu, S)
    ):  # `not <=`: NaN is rejected
        raise ValueError(f"mu must be a distribution over the S = {S} states; got {m}")
    return Pf.reshape(H, S, J, S), Rf.reshape(n, H, S, J), pols, rho.reshape(H, S, J), m, acts


def _others(pols: list[np.ndarray], i: int, acts: tuple[int, ...]) -> np.ndarray:
    """``M[h, s, a_i', a] = 1[a_i = a_i'] Π_{j≠i} π_{j,h}(a_j|s)`` with the joint action ``a`` flattened: ``[H, S, A_i, J]``."""
    H, S = pols[0].shape[:2]
    n = len(acts)
    W = np.ones((H, S) + acts)
    for j, pj in enumerate(pols):
        if j != i:
            shape = [H, S] + [1] * n
            shape[2 + j] = acts[j]
            W = W * pj.reshape(shape)
    sel = np.eye(acts[i]).reshape((acts[i],) + tuple(acts[i] if k == i else 1 for k in range(n)))
    return (W[:, :, None] * sel[None, None]).reshape(H, S, acts[i], -1)


def _completion_q(
    Pj: np.ndarray, Ri: np.ndarray, rho: np.ndarray, h: int, v_next: np.ndarray, fill: float
) -> np.ndarray:
    """Joint ``Q[s, a] = r + P V`` on covered pairs, ``fill`` elsewhere."""
    return np.where(rho[h] > 0, Ri[h] + Pj[h] @ v_next, fill)


def _player_tables(Pj, Rj, pols, rho, acts, i):  # noqa: ANN001, ANN202 - private helper on validated arrays
    """Optimistic completion ``Q̄_i``, ``V̄_i``, the induced kernel killed at uncovered pairs ``P̃_i[H, S, A_i, S]``, true ``V_i^†``."""
    H, S, J = rho.shape
    W = _others(pols, i, acts)
    Qbar = np.zeros((H, S, acts[i]))
    Vbar = np.zeros((H + 1, S))
    Vdag = np.zeros((H + 1, S))
    for h in range(H - 1, -1, -1):
        Qbar[h] = (
            W[h] * _completion_q(Pj, Rj[i], rho, h, Vbar[h + 1], float(H - h))[:, None, :]
        ).sum(-1)
        Vbar[h] = Qbar[h].max(-1)
        Qtrue = (W[h] * (Rj[i, h] + Pj[h] @ Vdag[h + 1])[:, None, :]).sum(-1)
        Vdag[h] = Qtrue.max(-1)
    cov = (rho > 0).astype(np.float64)
    Pbar = np.stack(
        [np.stack([(W[h, s] * cov[h, s]) @ Pj[h, s] for s in range(S)]) for h in range(H)]
    )  # killed [H, S, A_i, S]
    return Qbar, Vbar, Pbar, Vdag, W


def _candidate(Pj, Rj, joint, rho):  # noqa: ANN001, ANN202
    """True ``V_i^π`` and pessimistic-completion ``V̲_i^∞`` for all players, ``[n, H+1, S]``."""
    n, H, S, J = Rj.shape
    V = np.zeros((n, H + 1, S))
    Vlo = np.zeros((n, H + 1, S))
    for h in range(H - 1, -1, -1):
        for i in range(n):
            V[i, h] = np.sum(joint[h] * (Rj[i, h] + Pj[h] @ V[i, h + 1]), -1)
            Vlo[i, h] = np.sum(joint[h] * _completion_q(Pj, Rj[i], rho, h, Vlo[i, h + 1], 0.0), -1)
    return V, Vlo


def _occupancy(Pj: np.ndarray, joint: np.ndarray, m: np.ndarray, rho: np.ndarray) -> np.ndarray:
    """Killed occupancy ``d̃_h(s, a) = Pr(s_h = s, a_h = a, ρ_{h'}(s_{h'}, a_{h'}) > 0 for all h' < h)``."""
    H, S, J = joint.shape
    d = np.zeros((H, S, J))
    ds = m
    for h in range(H):
        d[h] = ds[:, None] * joint[h]
        ds = (d[h] * (rho[h] > 0)).reshape(-1) @ Pj[h].reshape(S * J, S)
    return d


def _ratio_on_support(d: np.ndarray, rho: np.ndarray) -> float:
    cov = rho > 0
    return float(np.max(np.where(cov, d / np.where(cov, rho, 1.0), 0.0), initial=0.0))


def _joint(pols: list[np.ndarray]) -> np.ndarray:
    """Product ``π_1 ⊗ … ⊗ π_n`` as ``[H, S, J]`` (joint index row-major over players)."""
    H, S = pols[0].shape[:2]
    joint = pols[0]
    for p in pols[1:]:
        joint = (joint[..., :, None] * p[:, :, None, :]).reshape(H, S, -1)
    return joint


def _prepare(
    P: Any, R: Any, policies: list[Any], d_data: Any, mu: Any, tol: float, what: str
) -> tuple:
    """Validated arrays and the candidate's part ``C_cov(π)`` (``∞`` if its pessimistic completion is not exact)."""
    Pj, Rj, pols, rho, m, acts = _game(P, R, policies, d_data, mu, what)
    tol = check_real(tol, "tol", low=0.0)  # NaN failed every comparison: no condition could fail
    joint = _joint(pols)
    V, Vlo = _candidate(Pj, Rj, joint, rho)
    worst = _ratio_on_support(_occupancy(Pj, joint, m, rho), rho)
    if np.any(Vlo[:, 0] @ m < V[:, 0] @ m - tol):
        worst = float("inf")
    return Pj, Rj, pols, rho, m, acts, worst


def selective_concentrability(
    P: Any, R: Any, policies: list[Any], d_data: Any, mu: Any = None, *, tol: float = 1e-9
) -> float:
    r"""Selective unilateral concentrability ``C_sel(π)`` of a product policy (module docstring).

    ``C_sel = max(C_cov(π), max_i sup_{π_i' ∈ G_i} C_cov(π_i', π_{−i}))`` when the optimistic
    completion cannot beat any best response and the pessimistic completion of ``π`` is
    exact, else ``∞``.

    Parameters
    ----------
    P : array (H, S, A_1, …, A_n, S)
    R : array (n, H, S, A_1, …, A_n)
        Mean rewards in ``[0, 1]``.
    policies : list of n arrays (H, S, A_i)
        The candidate product policy ``π`` (usually an equilibrium).
    d_data : array (H, S, A_1, …, A_n)
        Data occupancy ``ρ_h(s, a)``.
    mu : array (S,), optional
        Initial distribution (uniform).
    tol : float ≥ 0
        Tolerance of the value conditions and of greediness.

    Returns
    -------
    float
        ``≤ unilateral_concentrability(P, policies, d_data, mu)``.

    Raises
    ------
    ValueError
        A ``P`` of the wrong shape, with a non-finite entry or a row off the simplex (located);
        rewards outside ``[0, 1]``; a negative or non-finite ``d_data`` entry; a policy row off
        the simplex; a ``mu`` that is not a distribution; a ``tol`` that is not a finite number ``≥ 0``.

    Notes
    -----
    Computation, per player ``i``: backward induction in the optimistic completion of the
    MDP ``i`` faces against ``π_{−i}`` gives ``Q̄_i`` and the greedy action sets
    ``O_{i,h}(s) = {a_i : Q̄_{i,h}(s, a_i) ≥ V̄_{i,h}(s) − tol}``; the supremum over
    ``G_i`` of ``d̃_h(s, a)`` is ``reach^G_{i,h}(s) · 1[a_i ∈ O_{i,h}(s)] · π_{−i,h}(a_{−i}|s)``
    with ``reach^G`` the best probability of reaching ``s`` at step ``h`` through covered
    pairs using greedy actions only (a max-reachability DP on the induced kernel killed
    at unvisited pairs, restricted to ``O``; actions after an unvisited pair do not change
    the saturated optimistic value, so value-greedy and state-wise greedy agree on the
    killed paths). Cost ``O(n H² S² A_i J)``.
    :func:`selective_concentrability_bruteforce` enumerates ``G_i`` instead.

    Examples
    --------
    A coordination game: both players get 1 at ``(0, 0)``, 0 elsewhere; the data contain
    only ``(0, 0)``. Every unilateral deviation is uncovered (``C_uni = ∞``) but none can
    beat the equilibrium even optimistically, so ``C_sel = C(π*) = 1``.

    >>> import numpy as np
    >>> P = np.ones((1, 1, 2, 2, 1)); R = np.zeros((2, 1, 1, 2, 2)); R[:, 0, 0, 0, 0] = 1.0
    >>> pi = [np.array([[[1.0, 0.0]]])] * 2
    >>> rho = np.array([[[[1.0, 0.0], [0.0, 0.0]]]])
    >>> selective_concentrability(P, R, pi, rho)
    1.0
    """
    Pj, Rj, pols, rho, m, acts, worst = _prepare(
        P, R, policies, d_data, mu, tol, "selective_concentrability"
    )
    H, S, J = rho.shape
    if math.isinf(worst):
        return worst
    for i in range(len(acts)):
        Qbar, Vbar, Pbar, Vdag, W = _player_tables(Pj, Rj, pols, rho, acts, i)
        if float(m @ Vbar[0]) > float(m @ Vdag[0]) + tol:
            return float("inf")
        greedy = Qbar >= Vbar[:H, :, None] - tol  # O_{i,h}(s)
        for h in range(H):
            Wt = np.eye(S)  # Wt[s, t]: best probability of reaching t at step h from s at step j
            for j in range(h - 1, -1, -1):
                val = Pbar[j] @ Wt  # [S, A_i, S]
                Wt = np.max(np.where(greedy[j][:, :, None], val, -np.inf), axis=1)
            reach = m @ Wt  # [S]
            d_sup = reach[:, None] * (W[h] * greedy[h][:, :, None]).max(axis=1)  # [S, J]
            worst = max(worst, _ratio_on_support(d_sup[None], rho[h][None]))
    return worst


def selective_concentrability_bruteforce(
    P: Any, R: Any, policies: list[Any], d_data: Any, mu: Any = None, *, tol: float = 1e-9
) -> float:
    r"""``C_sel`` by enumerating every deterministic Markov deviation (``Π_i A_i^{HS}`` of them; tiny games only).

    Same definition as :func:`selective_concentrability`, with ``G_i`` the deviations whose
    optimistic-completion value from ``μ`` is within ``tol`` of the best; used to test
    the dynamic programme.

    Examples
    --------
    >>> import numpy as np
    >>> P = np.ones((1, 1, 2, 2, 1)); R = np.full((2, 1, 1, 2, 2), 0.5)
    >>> pi = [np.full((1, 1, 2), 0.5)] * 2
    >>> selective_concentrability_bruteforce(P, R, pi, np.full((1, 1, 2, 2), 0.25))
    2.0
    """
    Pj, Rj, pols, rho, m, acts, worst = _prepare(
        P, R, policies, d_data, mu, tol, "selective_concentrability_bruteforce"
    )
    H, S, J = rho.shape
    if math.isinf(worst):
        return worst
    for i in range(len(acts)):
        true_best, opt_best, ratios = -np.inf, -np.inf, []
        for choice in itertools.product(range(acts[i]), repeat=H * S):
            dev = list(pols)
            dev[i] = np.eye(acts[i])[np.asarray(choice).reshape(H, S)]
            jd = _joint(dev)
            Vt, Vup = np.zeros(S), np.zeros(S)
            for h in range(H - 1, -1, -1):
                Vt = np.sum(jd[h] * (Rj[i, h] + Pj[h] @ Vt), -1)
                Vup = np.sum(jd[h] * _completion_q(Pj, Rj[i], rho, h, Vup, float(H - h)), -1)
            true_best = max(true_best, float(m @ Vt))
            opt_best = max(opt_best, float(m @ Vup))
            ratios.append((float(m @ Vup), _ratio_on_support(_occupancy(Pj, jd, m, rho), rho)))
        if opt_best > true_best + tol:
            return float("inf")
        worst = max([worst] + [r for v, r in ratios if v >= opt_best - tol])
    return worst


def selective_coverage_witness(*, behaviour_weight: float = 0.8) -> dict[str, Any]:
    r"""A two-step general-sum game where ``C_uni = ∞`` but ``C_sel`` is finite.

    ``H = 2``, ``S = 2`` (start in ``s_0``), ``2 × 2`` actions. In ``s_0`` the joint action
    ``(0, 0)`` pays ``(1, 1)`` and stays in ``s_0``; ``(1, 1)`` pays ``(0.4, 0.6)``, the
    mis-coordinated ``(0, 1)``, ``(1, 0)`` pay ``(0, 0.1)``/``(0.1, 0)``; all three move to
    ``s_1``, where every action pays ``(0.2, 0.3)`` and stays. The Nash equilibrium plays
    ``(0, 0)`` everywhere (values ``(2, 2)``, the maximum). The behaviour plays ``(0, 0)``
    with probability ``w`` and ``(1, 1)`` otherwise, so the unilateral deviations
    ``(0, 1)``, ``(1, 0)`` are never observed: ``C_uni = ∞``. Their optimistic completion
    is the range ``H − h``, which equals the best-response value, so they need no
    coverage and ``C_sel = 1/w²`` (the equilibrium's own ratio at step 1).

    Returns
    -------
    dict
        ``P`` (H, S, 2, 2, S), ``R`` (2, H, S, 2, 2), ``mu`` (S,), ``nash`` (list of two
        (H, S, 2) policies), ``behaviour`` (H, S, 2, 2) joint behaviour.

    Examples
    --------
    >>> g = selective_coverage_witness()
    >>> round(1 / 0.8**2, 6)
    1.5625
    """
    w = real_scalar(behaviour_weight)  # NaN (refused below) for strings and bools
    if not 0.0 < w < 1.0:
        raise ValueError(f"behaviour_weight must lie in (0, 1); got {behaviour_weight!r}")
    H, S = 2, 2
    P = np.zeros((H, S, 2, 2, S))
    P[:, 0, 0, 0, 0] = 1.0
    P[:, 0, 1, 1, 1] = P[:, 0, 0, 1, 1] = P[:, 0, 1, 0, 1] = 1.0
    P[:, 1, :, :, 1] = 1.0
    R = np.zeros((2, H, S, 2, 2))
    R[:, :, 0, 0, 0] = 1.0
    R[0, :, 0, 1, 1], R[1, :, 0, 1, 1] = 0.4, 0.6
    R[1, :, 0, 0, 1] = 0.1
    R[0, :, 0, 1, 0] = 0.1
    R[0, :, 1], R[1, :, 1] = 0.2, 0.3
    nash = [np.tile(np.array([1.0, 0.0]), (H, S, 1)) for _ in range(2)]
    beh = np.zeros((H, S, 2, 2))
    beh[:, :, 0, 0], beh[:, :, 1, 1] = w, 1.0 - w
    return {"P": P, "R": R, "mu": np.array([1.0, 0.0]), "nash": nash, "behaviour": beh}
