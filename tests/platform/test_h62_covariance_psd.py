"""relative_condition_number refuses covariances that are not positive semidefinite.

``Σ = E[φφᵀ]`` is positive semidefinite, and ``κ = sup_x xᵀΣ_target x / xᵀΣ_data x`` (Agarwal et al.
2021, Assumption 6.2) is a coverage coefficient only for such matrices. Before, an indefinite
input was read silently: ``Σ_target = −I`` against ``I`` gave ``κ = 0`` (the supremum is −1) and
``Σ_data = −I`` gave ``∞``. Matrices that are PSD up to rounding (the covariance of random
features, eigenvalues ~ −1e-17 relative) and the documented reference values are unchanged.
"""

from __future__ import annotations

import numpy as np
import pytest

from rltheory.bounds import feature_covariance, relative_condition_number


@pytest.mark.parametrize(
    ("T", "D", "match"),
    [
        (-np.eye(2), np.eye(2), r"sigma_target must be positive semidefinite.* eigenvalue -1 "),
        (np.eye(2), -np.eye(2), r"sigma_data must be positive semidefinite.* eigenvalue -1 "),
        (np.eye(2), np.array([[1.0, 2.0], [2.0, 1.0]]), r"sigma_data .* eigenvalue -1 "),
        (
            np.stack([np.eye(2), np.diag([1.0, -1e-3])]),
            np.stack([np.eye(2), np.eye(2)]),
            r"sigma_target .* at batch index \(1,\) has the eigenvalue -0\.001 ",
        ),
        (np.diag([-1e-300, 0.0]), np.eye(2) * 1e300, r"sigma_target .* eigenvalue -1e-300 "),
        (
            np.broadcast_to(np.diag([1.0, -0.5]), (2, 3, 2, 2)),
            np.broadcast_to(np.eye(2), (2, 3, 2, 2)),
            r"sigma_target .* at batch index \(0, 0\) has the eigenvalue -0\.5 ",
        ),
    ],
)
def test_indefinite_covariances_are_refused(T, D, match):
    with pytest.raises(ValueError, match=match):
        relative_condition_number(T, D)


def test_rounding_level_covariances_still_give_the_generalised_eigenvalue():
    rng = np.random.default_rng(3)
    phi = rng.normal(size=(40, 3, 6))  # SA = 120 pairs, k = 6 features
    d1 = rng.dirichlet(np.ones(120)).reshape(40, 3)
    d2 = rng.dirichlet(np.ones(120)).reshape(40, 3)
    T, D = feature_covariance(phi, d1), feature_covariance(phi, d2)
    # closed form for commuting covariances: diag(t)/diag(s) gives max_i t_i/s_i
    assert relative_condition_number(np.diag([0.5, 0.5]), np.diag([0.25, 0.75])) == pytest.approx(
        2.0
    )
    w = np.linalg.eigvals(np.linalg.solve(D, T)).real.max()
    assert relative_condition_number(T, D) == pytest.approx(w, rel=1e-10)
    # a rank-deficient PSD target (eigenvalue 0 computed as ~ -1e-17) is not refused
    B = rng.normal(size=(6, 2))
    assert np.isfinite(relative_condition_number(B @ B.T, D))
