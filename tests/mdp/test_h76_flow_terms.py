"""The flow-form advantages of policy iteration's certificate: memory and sparse models.

``_Roundoff.flow_advantages`` formed ``P(j|s, a)(v(j) − v(s))`` for every ``(s, a, j)`` at once,
four temporaries of ``P``'s size (peak twice ``P``'s bytes beside it); it now runs in blocks of
states, or on the successor lists of a sparse ``P``
(:func:`rltheory.mdp.difference_form._flow_sums`).
"""

import tracemalloc
from fractions import Fraction

import numpy as np

from rltheory.mdp import FiniteMDP
from rltheory.mdp.certificates import _Roundoff
from rltheory.mdp.zoo import garnet


def test_flow_advantages_stay_below_the_size_of_p():
    # S = 1100, A = 8: P holds 9.7e6 entries (77 MB); the whole product peaked at 2.0x that
    rng = np.random.default_rng(0)
    S, A = 1100, 8
    P = rng.random((S, A, S))
    P /= P.sum(-1, keepdims=True)
    mdp = FiniteMDP(P, rng.random((S, A)), gamma=0.99)
    ro = _Roundoff(mdp)
    v = rng.standard_normal(S)
    tracemalloc.start()
    try:
        D, e = ro.flow_advantages(mdp, v)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak <= P.nbytes, peak / P.nbytes
    # the same numbers as the direct form r + γPv − v, to its rounding ε·‖v‖∞-sized terms
    direct = mdp.R + 0.99 * (P @ v) - v[:, None]
    assert np.abs(np.asarray(D) - direct).max() <= 1e-12


def test_flow_advantages_on_successor_lists_are_within_their_allowance():
    # garnet S = 80 with 4 successors per pair (sparse path) at γ = 1 − 1e-9 and a v of size
    # 1e9 with unit-sized differences: every entry within e of the exact
    # r(s, a) + γ Σ_j P(j|s, a) v(j) − v(s) for the stored model (rows normalised)
    mdp = garnet(80, 3, 4, gamma=1.0 - 1e-9, rng=3)
    assert mdp.successors is not None
    P, R = np.asarray(mdp.P), np.asarray(mdp.R)
    v = 1e9 + np.random.default_rng(1).standard_normal(80)
    D, e = _Roundoff(mdp).flow_advantages(mdp, v)
    g = Fraction(mdp.gamma)
    vf = [Fraction(float(x)) for x in v]
    for s in range(0, 80, 7):
        for a in range(3):
            row = [Fraction(float(p)) for p in P[s, a]]
            sig = sum(row)
            exact = (
                Fraction(float(R[s, a]))
                + g * sum(p * x for p, x in zip(row, vf, strict=True) if p) / sig
                - vf[s]
            )
            assert abs(Fraction(float(D[s, a])) - exact) <= Fraction(float(e)), (s, a)
