"""spectral_gap's stated accuracy on nearly decomposable chains, against 50-digit eigenvalues.

Reversible chains (symmetric path): small gaps to high relative accuracy. Non-reversible chains:
the absolute error of about ``u`` asserted here was the general eigen-solver's (3.8e-5 relative at
coupling 1e-12 while writing this test); spectral_gap now recomputes small gaps from the deflated
inverse, and test_h81_spectral_gap_relative asserts a few ``u`` relative on these chains and more.
"""

from fractions import Fraction

import numpy as np
import pytest

from rltheory.mdp.mixing import spectral_gap

mp = pytest.importorskip("mpmath")


def _exactly_stochastic(P):
    """Entries on the grid 2^-53, each row's largest the exact complement: rows sum to 1 exactly."""
    P = np.round(P * 2.0**53) / 2.0**53
    for s in range(P.shape[0]):
        j = int(np.argmax(P[s]))
        P[s, j] = 0.0
        P[s, j] = 1.0 - P[s].sum()
    return P


def _gaps(P):
    with mp.workdps(50):
        M = mp.matrix(
            [
                [mp.mpf(Fraction(float(x)).numerator) / Fraction(float(x)).denominator for x in row]
                for row in P
            ]
        )
        ev = mp.eig(M, left=False, right=False)
        i = min(range(len(ev)), key=lambda k: abs(ev[k] - 1))
        others = [ev[k] for k in range(len(ev)) if k != i]
        return float(1 - max(mp.re(x) for x in others))


def _blocks(rng, S, delta, symmetric):
    W = rng.exponential(size=(S, S)) if symmetric else rng.dirichlet(np.ones(S), size=S)
    if symmetric:
        W = W + W.T
    h = S // 2
    W[:h, h:] *= delta
    W[h:, :h] *= delta
    return _exactly_stochastic(W / W.sum(1, keepdims=True))


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("delta", [1e-4, 1e-8, 1e-12])
def test_non_reversible_gap_absolute_error_about_u(seed, delta):
    rng = np.random.default_rng(seed)
    P = _blocks(rng, int(rng.integers(3, 6)), delta, symmetric=False)
    sg = spectral_gap(P)
    assert not sg.reversible
    assert abs(sg.gap - _gaps(P)) <= 4 * P.shape[0] * 2.0**-53


@pytest.mark.parametrize("seed", range(8))
def test_reversible_gap_relative_accuracy(seed):
    rng = np.random.default_rng(seed)
    P = _blocks(rng, 2, 1e-12, symmetric=True)  # two states: always reversible
    sg = spectral_gap(P)
    assert sg.reversible
    exact = _gaps(P)
    assert abs(sg.gap - exact) <= 1e-9 * exact
