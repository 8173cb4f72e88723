"""Multichain average-reward residuals count round-off: PI's optimality-equation residual and the LP's.

The models are the probe's seeded random multichain ones (sparse and deterministic rows, an
absorbing state), in float32 or float64 with rewards up to 1e6. The reference is the exact residual
of the returned ``(g, h)`` (and ``x``) for the row-normalised model ``P/σ``, in rational arithmetic.
"""

from __future__ import annotations

import warnings
from fractions import Fraction

import numpy as np
import pytest

import rltheory.mdp.average_pi as average_pi
from rltheory._numerics import higham_gamma
from rltheory.errors import ConvergenceWarning
from rltheory.mdp import FiniteMDP, average_linear_program, average_policy_iteration, gain_bias
from rltheory.mdp.average_pi import _centered, _gain_rtol, _gain_step, _improve


def _probe_model(seed: int, dtype: type) -> FiniteMDP:
    rng = np.random.default_rng(seed)
    S, A = int(rng.integers(2, 6)), int(rng.integers(1, 4))
    P = rng.random((S, A, S))
    if seed % 2:  # sparse rows, one successor kept
        mask = rng.random(P.shape) < 0.5
        np.put_along_axis(mask, rng.integers(0, S, size=(S, A))[..., None], False, axis=-1)
        P[mask] = 0.0
    P /= P.sum(-1, keepdims=True)
    det = rng.random((S, A)) < (0.0, 0.3, 1.0)[seed % 3]  # deterministic rows
    P = np.where(det[..., None], np.eye(S)[rng.integers(0, S, size=(S, A))], P)
    if seed % 4 == 0:  # state 0 absorbing
        P[0] = 0.0
        P[0, :, 0] = 1.0
    R = rng.random((S, A)) * (1.0, 1e3, 1e6)[seed % 3]
    return FiniteMDP(P.astype(dtype), R.astype(dtype), None)


def _exact(mdp: FiniteMDP, *arrays: np.ndarray) -> tuple:
    P, R = np.asarray(mdp.P, dtype=np.float64), np.asarray(mdp.R, dtype=np.float64)
    Pf = [[[Fraction(float(x)) for x in row] for row in Ps] for Ps in P]
    Pf = [[[x / sum(row) for x in row] for row in Ps] for Ps in Pf]
    Rf = [[Fraction(float(x)) for x in row] for row in R]
    return (Pf, Rf) + tuple(
        np.vectorize(lambda x: Fraction(float(x)), otypes=[object])(a) for a in arrays
    )


def _exact_pi_residual(mdp: FiniteMDP, res) -> float:
    """``max(ρ₁, ρ₂)``: ``ρ₁ = max_s |max_a (P g)(s,a) − g(s)|``, ``ρ₂ = max_s |max_{a∈B_s}(r + P h − h)(s,a) − g(s)|``
    with ``B_s`` the actions the solver kept as attaining the first maximum (its own tie rule)."""
    u = float(np.finfo(mdp.dtype).eps) / 2
    tau = _gain_rtol(u, mdp.S) * np.max(np.abs(mdp.R))
    _, _, allowed = _gain_step(np, mdp.P, res.gain, res.policy, tau, higham_gamma(mdp.S + 2, u))
    Pf, Rf, g, h = _exact(mdp, res.gain, res.bias)
    S, A = len(Rf), len(Rf[0])
    Pg = [[sum(Pf[s][a][j] * g[j] for j in range(S)) for a in range(A)] for s in range(S)]
    x = [
        [Rf[s][a] + sum(Pf[s][a][j] * h[j] for j in range(S)) - h[s] for a in range(A)]
        for s in range(S)
    ]
    rho1 = max(abs(max(Pg[s]) - g[s]) for s in range(S))
    rho2 = max(abs(max(x[s][a] for a in range(A) if allowed[s, a]) - g[s]) for s in range(S))
    return float(max(rho1, rho2))


def _exact_lp_residual(mdp: FiniteMDP, res) -> float:
    """Primal infeasibility of ``(g, h)`` and ``|Σ α g − Σ r x|`` (``α`` uniform, the default weights)."""
    Pf, Rf, g, h, x = _exact(mdp, res.gain, res.bias, res.occupancy)
    S, A = len(Rf), len(Rf[0])
    inf1 = max(sum(Pf[s][a][j] * g[j] for j in range(S)) - g[s] for s in range(S) for a in range(A))
    inf2 = max(
        Rf[s][a] + sum(Pf[s][a][j] * h[j] for j in range(S)) - h[s] - g[s]
        for s in range(S)
        for a in range(A)
    )
    gap = abs(sum(g) * Fraction(1, S) - sum(Rf[s][a] * x[s, a] for s in range(S) for a in range(A)))
    return float(max(inf1, inf2, 0, gap))


@pytest.mark.parametrize(
    ("seed", "dtype"),
    [(5, np.float32), (20, np.float32), (8, np.float64), (9, np.float64)]
    + [(s, np.float32) for s in (2, 26, 44)],
)
def test_multichain_pi_residual_covers_the_exact_residual(seed, dtype):
    # Bug found here: the residual max(max_s max_a (Pg − g), max_s |max_B (r + Ph − h) − g|) was that of
    # the computed differences, 0 in these cases, while the exact residual of the returned (g, h) was
    # 0.027 (seed 5, float32, rewards ~1e6), 0.016 (seed 20) and 1.5e-11 (seed 8, float64, rewards ~1e3)
    mdp = _probe_model(seed, dtype)
    res = average_policy_iteration(mdp, multichain=True)
    assert _exact_pi_residual(mdp, res) <= float(res.bound)
    assert float(res.bound) <= 1e-5 * (
        1.0 + float(np.max(np.abs(np.asarray(mdp.R))))
    )  # a round-off level


@pytest.mark.parametrize(
    ("seed", "dtype"),
    [(5, np.float32), (59, np.float32), (32, np.float32), (5, np.float64), (1, np.float64)],
)
def test_multichain_lp_residual_covers_the_exact_residual(seed, dtype):
    # Bug found here: the LP residual (primal infeasibility of (g, h) from r + P h and P g, and the
    # objective gap) was 0 while the exact one of the returned (g, h, x) was 0.031 (seed 5, float32,
    # rewards ~1e6), 0.010 (seed 59) and 2.9e-11 (seed 5, float64)
    mdp = _probe_model(seed, dtype)
    res = average_linear_program(mdp, multichain=True)
    assert _exact_lp_residual(mdp, res) <= float(res.bound)
    assert float(res.bound) <= 1e-5 * (1.0 + float(np.max(np.abs(np.asarray(mdp.R)))))


def _cycle_probe_model(seed: int) -> tuple[np.ndarray, np.ndarray]:
    """The float32 cycling probe's models: sparse rows, an absorbing state for odd seeds, rewards of
    size 1e6–1e12 (rounded to quarter-multiples of the scale, hence ties, for seeds divisible by 3)."""
    rng = np.random.default_rng(seed)
    S, A = int(rng.integers(2, 8)), int(rng.integers(2, 4))
    P = rng.random((S, A, S))
    P[P < rng.uniform(0.3, 0.8)] = 0.0
    for s in range(S):
        for a in range(A):
            if P[s, a].sum() == 0:
                P[s, a, rng.integers(S)] = 1.0
    if seed % 2:
        k = rng.integers(S)
        P[k] = 0.0
        P[k, :, k] = 1.0
    P /= P.sum(-1, keepdims=True)
    scale = 10.0 ** rng.uniform(6, 12)
    R = rng.standard_normal((S, A)) * scale
    if seed % 3 == 0:
        R = np.round(R / scale * 4) * scale
    return P.astype(np.float32), R.astype(np.float32)


@pytest.mark.parametrize("seed", [7, 87, 489, 875, 1171, 1411])
def test_float32_multichain_pi_converges_to_the_float64_optimum(seed):
    # with the float64 tie tolerance 1e-10·max|r| these float32 models (rewards ~1e6–1e12) read the
    # evaluation's round-off (e.g. 128 in P g − g at rewards 2e8, seed 87) as improvements and cycled
    # between two policies up to max_iter (27 of 1500 probe models; one returned a policy 0.77·max|r|
    # below the optimal gain). Consistency: float32 PI = float64 PI on the same (row-normalised) model
    P32, R32 = _cycle_probe_model(seed)
    P64 = P32.astype(np.float64)
    P64 /= P64.sum(-1, keepdims=True)
    m64 = FiniteMDP(P64, R32.astype(np.float64), None)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        res = average_policy_iteration(FiniteMDP(P32, R32, None), multichain=True, max_iter=200)
    ref = average_policy_iteration(m64, multichain=True)
    assert res.converged
    g_pi, _ = gain_bias(m64, np.asarray(res.policy), per_state=True)
    np.testing.assert_allclose(g_pi, ref.gain, rtol=0, atol=1e-12 * float(np.max(np.abs(R32))))


def test_policy_iteration_stops_at_a_round_off_cycle(monkeypatch):
    # exact PI improves strictly, so a policy met twice can only come from round-off: with the old
    # tolerance 1e-10 restored (both steps), the seed-87 float32 model alternates between [0 1 0 0 1] and
    # [0 1 2 0 1]; PI must stop there with converged=False and say why, not run to max_iter
    monkeypatch.setattr(average_pi, "_tie_rtol", lambda u: 1e-10)
    monkeypatch.setattr(average_pi, "_gain_rtol", lambda u, S: 1e-10)

    def per_state_gain_step(xp, P, g, pi, tau, a):
        # the old step (a): one tolerance 1e-10·(max|r| + max_a|D|) per state (tau = 1e-10·max|r|
        # here), not _gain_step's error bars per transition, which do not read this noise
        D = _centered(xp, P, g)
        new, dmax, tol = _improve(xp, D, pi, tau / 1e-10, rtol=1e-10)
        return new, D, D >= (dmax - tol)[..., None]

    monkeypatch.setattr(average_pi, "_gain_step", per_state_gain_step)
    P32, R32 = _cycle_probe_model(87)
    with pytest.warns(ConvergenceWarning, match="round-off cycle"):
        res = average_policy_iteration(FiniteMDP(P32, R32, None), multichain=True, max_iter=500)
    assert not res.converged
    assert res.iterations <= 3


@pytest.mark.parametrize("p", [1e-6, 1e-10, 1e-12])
def test_multichain_pi_sees_a_gain_improvement_through_a_rare_door(p):
    # two_room_mdp(4, p) is communicating: from the right room's corner-keeping policy (stay at the
    # far corner 7 w.p. 1/2 with action 1, wander uniformly with action 0 elsewhere) μ(7) = x solves
    # x = x/2 + (2x)/4, so g* = 1/3 at every state. The door's improvement of P g is p·(1/3); with the
    # tolerance 1e-10·max|r| PI stopped, converged, with gain 0 in the left room for p <= 1e-10
    from rltheory.mdp import two_room_mdp  # noqa: PLC0415

    res = average_policy_iteration(two_room_mdp(4, p), multichain=True)
    assert res.converged
    np.testing.assert_allclose(res.gain, np.full(8, 1.0 / 3.0), rtol=64 * 10 * 2.0**-53)
