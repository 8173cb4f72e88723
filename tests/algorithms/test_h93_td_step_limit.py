"""td_linear's divergence message gives the true reason: the step beyond the mean path's stability
limit, or a feature scale at which no float step is stable.

The mean TD(λ) path ``θ ← θ + α(b − Aθ)`` converges iff ``ρ(I − αA) < 1``, i.e. iff
``α < α_max = min_i 2 Re λ_i/|λ_i|²`` over the eigenvalues of ``A`` (Tsitsiklis & Van Roy 1997,
§IV, the mean ODE ``θ̇ = b − Aθ``). ``A`` scales as ``|Φ|²``: at ``|φ| ~ 1e200`` ``α_max ~ 1e-400``
is below the smallest positive float (4.9e-324). There td_linear said "use smaller steps", which no
float step can follow.
"""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest

from rltheory.algorithms.critics import expected_td, projected_fixed_point, td_linear
from rltheory.mdp import FiniteMDP
from rltheory.testing import dyadic_model


def _model():
    P, R = dyadic_model(0, S=4, A=2)
    Phi = np.random.default_rng(0).standard_normal((4, 2))
    return FiniteMDP(P, R, gamma=0.9), np.full((4, 2), 0.5), Phi


def _alpha_max(A: np.ndarray) -> float:
    lam = np.linalg.eigvals(A)
    return float(np.min(2.0 * lam.real / np.abs(lam) ** 2))


@pytest.mark.parametrize("p", [664, 997])  # max|Phi| ~ 1e200, 1e300
@pytest.mark.parametrize("step", [1e-5, 1e-300, 5e-324])
def test_features_beyond_every_stable_step_say_so(p, step):
    mdp, pi, Phi = _model()
    big = np.ldexp(Phi, p)
    i, j = np.unravel_index(np.argmax(np.abs(big)), big.shape)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # (numpy's overflow warning leaked from the error trace)
        with pytest.raises(ValueError) as info:
            td_linear(mdp, pi, big, steps=50, step_size=step, rng=0)
    msg = str(info.value)
    assert "use smaller steps" not in msg  # the old advice: no float step is stable here
    assert re.search(
        rf"no step size is stable at this feature scale: max\|Phi\| = {re.escape(repr(float(abs(big[i, j]))))} "
        rf"at Phi\(s={i}, j={j}\)",
        msg,
    ), msg
    # the limit it quotes is the unit-scale limit divided by 4^p (exact powers of 2)
    ref = _alpha_max(np.asarray(projected_fixed_point(mdp, pi, Phi).A))
    quoted = re.search(
        r"step_size < min 2 Re\(eig A\)/\|eig A\|\^2 = ([\d.]+)e([+-]\d+), below", msg
    )
    got = float(quoted.group(1)) * 10.0 ** (int(quoted.group(2)) + 2 * p * np.log10(2.0))
    assert got == pytest.approx(ref, rel=1e-2)
    assert "below the smallest positive float 5e-324" in msg


def test_a_step_beyond_the_limit_names_the_limit_and_the_limit_is_sharp():
    mdp, pi, Phi = _model()
    fp = projected_fixed_point(mdp, pi, Phi)
    amax = _alpha_max(np.asarray(fp.A))
    with pytest.raises(ValueError) as info:
        td_linear(mdp, pi, Phi, steps=5000, step_size=50.0, rng=0)
    msg = str(info.value)
    quoted = re.search(r"step_size < min 2 Re\(eig A\)/\|eig A\|\^2 = (\S+) \(max\|Phi\| = ", msg)
    assert quoted, msg
    assert float(quoted.group(1)) == pytest.approx(amax, rel=1e-2)
    assert msg.endswith("use smaller steps")
    # the quoted limit is the mean path's: 0.99·α_max converges, 1.01·α_max diverges
    A = np.asarray(fp.A)
    assert np.max(np.abs(np.linalg.eigvals(np.eye(2) - 0.99 * amax * A))) < 1.0
    assert np.max(np.abs(np.linalg.eigvals(np.eye(2) - 1.01 * amax * A))) > 1.0
    tr = expected_td(mdp, pi, Phi, step_size=0.99 * amax, iterations=20000)
    assert tr["error"][-1] < 1e-3 * tr["error"][0]


def test_a_stable_run_at_large_features_is_unchanged():
    # |phi| ~ 1e150: α_max ~ 7.6e-300, and α = 1e-300 runs (θ ~ 1e-150, values of size 1)
    mdp, pi, Phi = _model()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = td_linear(mdp, pi, np.ldexp(Phi, 498), steps=50, step_size=1e-300, rng=0)
    assert np.all(np.isfinite(res.trace["error"]))


def test_a_given_off_policy_d_quotes_the_limit_of_the_sampled_chain():
    # Tsitsiklis & Van Roy (1997), §IX (θ → 2θ): φ = 1, 2, both states move to state 1, γ = 0.9.
    # For d = (1/2, 1/2), A = ½·1·(1 − 1.8) + ½·2·(2 − 1.8) = −0.2 < 0, but the samples follow P_π,
    # whose stationary law (0, 1) gives A = 2·(2 − 1.8) = 0.4 and the limit 2/0.4 = 5: α = 50
    # diverges because the step is too large, not because "every step size" is unstable
    mdp = FiniteMDP(np.array([[[0.0, 1.0]], [[0.0, 1.0]]]), np.array([[1.0], [1.0]]), gamma=0.9)
    pi, Phi, d = np.zeros(2, int), np.array([[1.0], [2.0]]), np.array([0.5, 0.5])
    assert np.asarray(projected_fixed_point(mdp, pi, Phi, d=d).A)[0, 0] == pytest.approx(-0.2)
    with pytest.raises(ValueError) as info:
        td_linear(mdp, pi, Phi, steps=400, step_size=50.0, rng=0, d=d)
    msg = str(info.value)
    assert "unstable for every step size" not in msg
    assert re.search(
        r"the step 50\.0 is beyond the stability limit .* = 5 \(max\|Phi\| = 2\.0", msg
    ), msg
