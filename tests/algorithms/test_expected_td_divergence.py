"""Mean-path TD(0) with a step beyond the stability limit is refused once θ_k overflows.

Regression: ``expected_td`` iterated ``θ ← θ + α(b − Aθ)`` past the float range and returned a trace of
``inf``/NaN with numpy's overflow warnings only. Now a ``ValueError`` naming the first non-finite
iteration and the spectral radius ``ρ(I − αA)``.

Reference model: two states that swap deterministically, ``γ = 1/2``, features ``Φ = 3I``; the
stationary ``d = (1/2, 1/2)`` gives ``A = ΦᵀD(I − γP)Φ = 4.5 [[1, −1/2], [−1/2, 1]]`` with eigenvalues
``4.5·(1 ± 1/2) = 6.75, 2.25``; at ``α = 5``, ``I − αA`` has eigenvalues ``−32.75, −10.25``, so
``ρ = 32.75``, while ``α = 0.2`` gives ``ρ = max(|1 − 1.35|, |1 − 0.45|) = 0.55`` (converges).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from rltheory.algorithms.td_fixed_point import expected_td
from rltheory.mdp import FiniteMDP

MDP = FiniteMDP(np.array([[[0.0, 1.0]], [[1.0, 0.0]]]), np.array([[1.0], [0.0]]), gamma=0.5)
PI = np.array([0, 0])
PHI = 3.0 * np.eye(2)


def test_an_overflowing_run_names_the_iteration_and_the_spectral_radius():
    msg = (
        r"^expected_td diverged: theta_k is not finite from iteration k = (\d+) on; .* spectral radius "
        r"rho\(I - alpha A\) = 32\.75 > 1 at step_size = 5\.0"
    )
    with pytest.raises(ValueError, match=msg) as info, warnings.catch_warnings():
        warnings.simplefilter("error")  # the located error, not numpy's overflow warning first
        expected_td(MDP, PI, PHI, step_size=5.0, iterations=2000)
    k = int(info.value.args[0].split("iteration k = ")[1].split(" ")[0])
    # θ_k − θ* grows like 32.75^k from ‖θ_0 − θ*‖ ~ 1: it passes 1.8e308 near k = 308.25/log10(32.75) ≈ 203
    assert 195 <= k <= 215
    # k is the first: the run that stops just before it is returned, finite (and still growing)
    tr = expected_td(MDP, PI, PHI, step_size=5.0, iterations=k - 1)
    assert np.all(np.isfinite(tr["theta"])) and tr["error"][-1] > 1e300


def test_a_stable_step_converges_as_before():
    # ρ = 0.55: the error contracts by at most 0.55 per step in the eigenbasis (A is symmetric here)
    tr = expected_td(MDP, PI, PHI, step_size=0.2, iterations=60)
    e = tr["error"]
    assert np.all(np.isfinite(tr["theta"]))
    assert np.all(e[1:] <= 0.55 * e[:-1] * (1 + 1e-12) + 1e-15)
