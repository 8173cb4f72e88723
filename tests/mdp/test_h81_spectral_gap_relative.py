"""spectral_gap's small gaps to a few ``u`` relative, against 50- to 800-digit eigenvalues.

The small eigenvalues of ``I − P`` are determined to a few ``u`` relative by the entries of a
nearly decomposable chain (relative perturbations of 2u in the off-diagonal entries moved a gap of
3e-12 by 1e-16 relative), but an eigen-solver on ``I − P`` (symmetric or general) keeps only an
absolute ``u``: the gap was off by 5e-5 relative at couplings 1e-12 on 4–8 states, reversible or
not, and a gap of 8.3e-21 came out as 1.1e-16. The reference is the exact spectrum of the stored
entries in the convention ``spectral_gap`` documents: ``P(s, s) = 1 − Σ_{j≠s} P(s, j)``.
"""

import warnings
from fractions import Fraction

import numpy as np
import pytest

from rltheory.mdp.mixing import spectral_gap

mp = pytest.importorskip("mpmath")

U = 2.0**-53


def _exact_gaps(P, dps=50):
    """``(1 − max Re λ, 1 − max |λ|)`` over ``λ ≠ 1`` of ``P`` with its diagonal ``1 − Σ_{j≠s} P(s, j)``."""
    S = P.shape[0]
    with mp.workdps(dps):
        M = mp.matrix(S, S)
        for i in range(S):
            for j in range(S):
                if i != j:
                    f = Fraction(float(P[i, j]))
                    M[i, j] = mp.mpf(f.numerator) / f.denominator
            M[i, i] = 1 - sum(M[i, j] for j in range(S) if j != i)
        ev = mp.eig(M, left=False, right=False)
        one = min(range(S), key=lambda k: abs(ev[k] - 1))
        others = [ev[k] for k in range(S) if k != one]
        return float(1 - max(mp.re(x) for x in others)), float(1 - max(abs(x) for x in others))


def _symmetric_blocks(rng, S, delta):
    """A symmetric (so reversible, μ uniform) chain of two blocks coupled by ``delta``, rows exact."""
    W = rng.uniform(size=(S, S))
    W = W + W.T
    h = S // 2
    W[:h, h:] *= delta
    W[h:, :h] *= delta
    W = np.round(W / (1.01 * W.sum(1).max()) * 2.0**53) / 2.0**53
    np.fill_diagonal(W, 0.0)
    np.fill_diagonal(W, 1.0 - W.sum(1))  # exact: every entry on the grid 2^-53
    return W


@pytest.mark.parametrize("S", [4, 6, 8])
@pytest.mark.parametrize("delta", [1e-8, 1e-12])
def test_reversible_blocks_gap_to_relative_u(S, delta):
    P = _symmetric_blocks(np.random.default_rng(S), S, delta)
    sg = spectral_gap(P)
    assert sg.reversible
    gap, agap = _exact_gaps(P)
    # old symmetric path: 4.7e-5, 5.2e-5, 2.5e-5 relative at delta = 1e-12
    assert sg.gap == pytest.approx(gap, rel=32 * S * U, abs=0.0)
    assert sg.absolute_gap == pytest.approx(agap, rel=32 * S * U, abs=0.0)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("delta", [1e-8, 1e-12, 1e-15])
def test_non_reversible_blocks_gap_to_relative_u(seed, delta):
    rng = np.random.default_rng(seed)
    S = int(rng.integers(3, 7))
    W = rng.dirichlet(np.ones(S), size=S)
    h = S // 2
    W[:h, h:] *= delta
    W[h:, :h] *= delta
    P = W / W.sum(1, keepdims=True)
    sg = spectral_gap(P)
    assert not sg.reversible
    gap, agap = _exact_gaps(P)
    # old general path: 4.7e-5 relative at 1e-12, 7.9e-2 at 1e-15
    assert sg.gap == pytest.approx(gap, rel=32 * S * U, abs=0.0)
    assert sg.absolute_gap == pytest.approx(agap, rel=32 * S * U, abs=0.0)


@pytest.mark.parametrize("d", [1e-20, 1e-200, 1e-300])
def test_couplings_below_round_off(d):
    # two 2-state blocks joined by d (0 → 2, 3 → 1); non-reversible (support not symmetric).
    # old: 1.1e-16 at d = 1e-20 and 1e-200 (the gap is 8.3e-21 and 8.3e-201), 0.0 at 1e-300
    P = np.array([[0.5, 0.5 - d, d, 0], [0.25, 0.75, 0, 0], [0, 0, 0.5, 0.5], [0, d, 0.5, 0.5 - d]])
    sg = spectral_gap(P)
    gap, agap = _exact_gaps(P, dps=700)
    assert sg.gap == pytest.approx(gap, rel=32 * 4 * U, abs=0.0)
    assert sg.absolute_gap == pytest.approx(agap, rel=32 * 4 * U, abs=0.0)
    assert sg.relaxation_time == pytest.approx(1.0 / agap, rel=32 * 4 * U, abs=0.0)


def test_rarely_left_transient_state():
    # state 0 is transient and leaves with probability e = 2^-43: ℓ = e exactly (λ = 1 − e)
    e = 2.0**-43
    P = np.array([[1 - e, e / 2, e / 2], [0, 0.5, 0.5], [0, 0.25, 0.75]])
    sg = spectral_gap(P)
    assert sg.gap == pytest.approx(e, rel=8 * U, abs=0.0)
    assert sg.absolute_gap == pytest.approx(e * (2 - e) / (2 - e), rel=8 * U, abs=0.0)


def test_sticky_two_state_chain_at_1e_300():
    # P = [[1 − a, a], [a, 1 − a]]: ℓ = 2a (the diagonal 1 − a rounds to 1; leave rates keep a)
    a = 1e-300
    sg = spectral_gap(np.array([[1 - a, a], [a, 1 - a]]))
    assert sg.gap == pytest.approx(2 * a, rel=8 * U, abs=0.0)
    assert sg.relaxation_time == pytest.approx(1 / (2 * a), rel=8 * U, abs=0.0)


@pytest.mark.parametrize("n, step", [(3, 1), (5, 1), (7, 2), (4, 1)])
def test_periodic_cycle_absolute_gap_is_zero(n, step):
    # a deterministic cycle (gcd(n, step) = 1): eigenvalues e^{2πij/n}, all of modulus 1, so γ* = 0
    # and t_rel = inf; gap = 1 − cos(2π/n). Old: γ* = −8.9e-16 (n = 3), −6.7e-16 (n = 7, step 2)
    P = np.roll(np.eye(n), step, axis=1)
    sg = spectral_gap(P)
    assert sg.absolute_gap == 0.0
    assert sg.relaxation_time == float("inf")
    assert sg.gap == pytest.approx(1 - np.cos(2 * np.pi / n), rel=8 * n * U, abs=0.0)


@pytest.mark.parametrize("seed", range(4))
def test_float32_chain_small_gap_to_float64_accuracy(seed):
    # float32 entries are exact data; the eigen-solvers run in float32 (absolute error ~6e-8), the
    # deflated-inverse route in float64 on the host, and whichever bound is smaller wins.
    # Old (before the route compared against float32's u): 1.6e-7 relative at coupling 0.1
    rng = np.random.default_rng(seed)
    S = 5
    W = rng.dirichlet(np.ones(S), size=S)
    W[:2, 2:] *= 0.1
    W[2:, :2] *= 0.1
    P = (W / W.sum(1, keepdims=True)).astype(np.float32)
    sg = spectral_gap(P)
    gap, agap = _exact_gaps(P.astype(np.float64))
    assert gap < 0.5  # the small-gap regime
    assert sg.gap == pytest.approx(gap, rel=32 * S * U, abs=0.0)
    assert sg.absolute_gap == pytest.approx(agap, rel=32 * S * U, abs=0.0)


def _with_leave_rate_diagonal(off):
    P = np.array(off, dtype=np.float64)
    np.fill_diagonal(P, 0.0)
    np.fill_diagonal(P, 1.0 - P.sum(1))  # rounds to 1 for the slow rows; the leave rates keep them
    return P


def test_multiscale_reversible_chain_gap():
    # a symmetric (so reversible) path 0 − 1 − 2 − 3 with edge probabilities 1e-20, 1e-60, 0.3: slow
    # modes at two scales (~1e-60, ~2e-20), both below the eigen-solvers' resolution (~4e-15).
    # The deflated inverse resolves the smallest; the spectrum is real, so it is the gap (no warning).
    # Before e552a47 (symmetric solver only): 2.0e-20 where the gap is 1.0e-60
    P = _with_leave_rate_diagonal(
        [[0, 1e-20, 0, 0], [1e-20, 0, 1e-60, 0], [0, 1e-60, 0, 0.3], [0, 0, 0.3, 0]]
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a real spectrum needs no assumption
        sg = spectral_gap(P)
    assert sg.reversible
    gap, agap = _exact_gaps(P, dps=200)
    assert sg.gap == pytest.approx(gap, rel=32 * 4 * U, abs=0.0)
    assert sg.absolute_gap == pytest.approx(agap, rel=32 * 4 * U, abs=0.0)


def test_multiscale_non_reversible_chain_gap_warns():
    # leave rates 4e-113, 7e-110, 6e-168, 4e-139, 0.89, 3e-25 (a seeded draw's structure): slow modes
    # at several scales. The smallest (6.2e-140) is resolved and is the gap; the unresolved ones could
    # in principle be complex with a smaller real part, which the warning says. Old: 0.0 (the
    # deflated inverse's top eigenvalue had a Euclidean condition number of 1e61 and was refused,
    # and the solvers' round-off for the unresolved modes decided the gap)
    P = _with_leave_rate_diagonal(
        [
            [0, 0, 0, 0, 4.121e-113, 0],
            [0, 0, 4.042e-111, 2.145e-110, 0, 1.504e-110],
            [0, 2.037e-169, 0, 2.528e-168, 0, 3.224e-168],
            [2.338e-139, 1.545e-139, 0, 0, 0, 0],
            [5.459e-1, 0, 0, 0, 0, 3.426e-1],
            [1.039e-27, 3.108e-25, 0, 0, 0, 0],
        ]
    )
    with pytest.warns(RuntimeWarning, match="below the eigen-solver's resolution"):
        sg = spectral_gap(P)
    assert not sg.reversible
    gap, agap = _exact_gaps(P, dps=450)
    assert 1e-141 < gap < 1e-138
    assert sg.gap == pytest.approx(gap, rel=32 * 6 * U, abs=0.0)
    assert sg.absolute_gap == pytest.approx(agap, rel=32 * 6 * U, abs=0.0)
