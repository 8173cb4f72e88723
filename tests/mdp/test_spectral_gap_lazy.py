"""Spectral gaps of very lazy chains to relative accuracy.

The lazy walk ``P = aI + b(C + Cᵀ)`` on the ``n``-cycle with ``b = 2^-(k+1)``, ``a = 1 − 2b`` (both
exact in float64, rows summing to exactly 1) has eigenvalues ``a + 2b cos(2πj/n)`` (Levin, Peres &
Wilmer 2017, §12.3.1), so its gap is ``2b(1 − cos(2π/n)) = 4b sin²(π/n)``, which is also the absolute
gap for ``a ≥ 1/2``. Forming ``1 − λ₂`` from the eigenvalues of ``P`` cancels: the gap was off by
9e-4 relative at ``k = 40``. A non-reversible lazy chain (a biased cycle) is checked the same way.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from rltheory.mdp import spectral_gap

# abs=0.0 throughout: pytest.approx's default abs=1e-12 exceeds every gap here from k = 40 on, which
# made those cases pass for any value within 1e-12 (helper-81 tightened them; they pass as stated)


@pytest.mark.parametrize("n", [5, 16])
@pytest.mark.parametrize("k", [10, 30, 40, 60])
def test_lazy_cycle_gap_is_accurate(k, n):
    b = 2.0 ** -(k + 1)
    eye = np.eye(n)
    P = (1.0 - 2.0 * b) * eye + b * (np.roll(eye, 1, axis=1) + np.roll(eye, -1, axis=1))
    exact = 4.0 * b * math.sin(math.pi / n) ** 2
    sg = spectral_gap(P)
    assert sg.reversible
    assert sg.gap == pytest.approx(exact, rel=8 * n * 2.0**-53, abs=0.0)
    assert sg.absolute_gap == pytest.approx(exact, rel=8 * n * 2.0**-53, abs=0.0)
    assert sg.relaxation_time == pytest.approx(1.0 / exact, rel=8 * n * 2.0**-53, abs=0.0)


@pytest.mark.parametrize("k", [10, 30, 40])
def test_lazy_biased_cycle_gap_is_accurate(k):
    # P = aI + b(3C + Cᵀ)/2 with 2b = 2^-k (non-reversible for n ≥ 3): eigenvalues
    # a + b(3ω + ω̄)/2, ω = e^{2πij/n}; 1 − Re λ_1 = 2b(1 − cos(2π/n)) and the closest-to-1 modulus
    # is |λ_1|, with 1 − |λ_1| = (2 Re ℓ − |ℓ|²)/(1 + |λ_1|) for ℓ = 1 − λ_1 = 2b(1 − cos θ) − ib sin θ
    n = 6
    b = 2.0 ** -(k + 1)
    eye = np.eye(n)
    P = (1.0 - 2.0 * b) * eye + b * (1.5 * np.roll(eye, 1, axis=1) + 0.5 * np.roll(eye, -1, axis=1))
    theta = 2.0 * math.pi / n
    ell = complex(4.0 * b * math.sin(theta / 2) ** 2, -b * math.sin(theta))
    sg = spectral_gap(P)
    assert not sg.reversible
    assert sg.gap == pytest.approx(
        ell.real, rel=16 * n * 2.0**-53, abs=0.0
    )  # a circulant is normal: eigenvalues to u·‖I − P‖
    exact_abs = (2.0 * ell.real - abs(ell) ** 2) / (1.0 + abs(1.0 - ell))
    assert sg.absolute_gap == pytest.approx(
        exact_abs, rel=16 * n * 2.0**-53, abs=0.0
    )  # a circulant is normal: eigenvalues to u·‖I − P‖
