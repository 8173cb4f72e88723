"""Edge cases of the linear critics, second round: values at the ends of the float range, TD matrices
singular to rounding for an off-policy weighting, feature maps at extreme widths and ranges, and
inputs that are not real arrays. Each test is checked against a closed form or exact rational
arithmetic and fails on the code before its fix."""

from __future__ import annotations

import warnings
from fractions import Fraction

import numpy as np
import pytest

from rltheory.algorithms.critics import (
    compatible_critic,
    compatible_features,
    lstd_estimate,
    projected_fixed_point,
    projection,
    random_features,
    rbf_features,
    state_action_features,
    td_linear,
    tile_features,
    weighted_norm,
)
from rltheory.bounds.policy_optimization import td_fixed_point_bound
from rltheory.mdp import FiniteMDP
from rltheory.mdp.zoo import random_mdp


def _cycle(r: float, gamma: float = 0.5) -> FiniteMDP:
    """Deterministic 2-cycle 0 -> 1 -> 0 with rewards (r, 0): V = (r, γr)/(1 − γ²), d = (1/2, 1/2)."""
    return FiniteMDP(np.array([[[0.0, 1.0]], [[1.0, 0.0]]]), np.array([[r], [0.0]]), gamma=gamma)


# ------------------------------------------------------------------------------ weighted norms at the float range


@pytest.mark.parametrize("r", [1e-300, 1e-200, 1e200, 1e300])
def test_fixed_point_errors_scale_with_the_rewards(r):
    # Constant feature, γ = 1/2: V = (4r/3, 2r/3), θ* = r (A = (1 − γ), b = r/2), and the D-projection
    # of V is its mean r too, so error = projection_error = ‖(r/3, −r/3)‖_D = r/3 exactly in the reals.
    # The norm squared the differences: 0 below |x| ~ 1e-154 (and the TvR bound computed from it, 0,
    # was below the exact error r/3) and inf above 1e154.
    fp = projected_fixed_point(_cycle(r), np.array([0, 0]), np.ones((2, 1)))
    exact = float(Fraction(r) / 3)
    assert fp.error == pytest.approx(exact, rel=1e-14)
    assert fp.projection_error == pytest.approx(exact, rel=1e-14)
    assert float(td_fixed_point_bound(fp.projection_error, gamma=0.5, lam=0.0)) >= exact
    x = np.array([r, -r / 2])  # ‖x‖_D with d = (1/4, 3/4): r·√(1/4 + 3/16) = r·√7/4
    assert float(weighted_norm(x, np.array([0.25, 0.75]))) == pytest.approx(r * np.sqrt(7) / 4, rel=1e-14)


def test_td_linear_errors_do_not_overflow_at_large_values():
    # θ_0 = 0 with a constant feature: the first recorded error is ‖Φθ*‖_D = θ* = r (see above), finite.
    r = 1e200
    res = td_linear(_cycle(r), np.array([0, 0]), np.ones((2, 1)), steps=2, step_size=0.5, rng=0)
    assert res.trace["error"][0, 0] == pytest.approx(r, rel=1e-14)
    assert np.all(np.isfinite(res.trace["error"]))


# ------------------------------------------------------------------------------ TD matrix singular to rounding


def _theta_to_two_theta(gamma: float) -> FiniteMDP:
    """Tsitsiklis & Van Roy (1997) §IX: both states move to state 1, rewards 1; with φ = (1, 2)
    the TD matrix is A = d0 (1 − 2γ) + 2 d1 (2 − 2γ)."""
    P = np.zeros((2, 1, 2))
    P[:, 0, 1] = 1.0
    return FiniteMDP(P, np.ones((2, 1)), gamma)


def test_an_off_policy_td_matrix_singular_to_rounding_raises():
    # γ = 0.9, d = (1/3, 2/3): A = 0 in the reals. In the stored floats, exactly (rationals),
    # A = −5.9e-17 and θ* = b/A = −2.8e16: the fixed point exists but is decided by rounding.
    # The solve returned θ = +4.0e16 (the wrong sign) without a word; documented: LinAlgError.
    d = np.array([1 / 3, 2 / 3])
    g = Fraction(0.9)
    d0, d1 = Fraction(d[0]), Fraction(d[1])
    A = d0 * (1 - 2 * g) + 2 * d1 * (2 - 2 * g)
    b = d0 + 2 * d1
    assert 0 < -A < Fraction(1, 10**16) and b / A < -1e16
    with pytest.raises(np.linalg.LinAlgError, match=r"TD matrix .* is singular to rounding for this weighting d: "
                                                    r"smallest singular value .* <= its rounding level"):
        projected_fixed_point(_theta_to_two_theta(0.9), np.array([0, 0]), np.array([[1.0], [2.0]]), d=d)
    # exactly singular in floats (d = (1, 0), γ = 1/2: A = 1 − 2γ = 0): numpy's bare 'Singular matrix' before
    with pytest.raises(np.linalg.LinAlgError, match="singular to rounding for this weighting d"):
        projected_fixed_point(_theta_to_two_theta(0.5), np.array([0, 0]), np.array([[1.0], [2.0]]),
                              d=np.array([1.0, 0.0]))


def test_a_well_posed_off_policy_fixed_point_is_still_solved():
    # γ = 3/4, d = (1/2, 1/2): A = (1 − 3/2)/2 + (2 − 3/2) = 1/4, b = 1/2 + 1 = 3/2, θ* = 6 exactly
    # (A is not positive definite here, so TD diverges; the fixed point is still defined).
    fp = projected_fixed_point(_theta_to_two_theta(0.75), np.array([0, 0]), np.array([[1.0], [2.0]]),
                               d=np.array([0.5, 0.5]))
    assert float(fp.theta[0]) == pytest.approx(6.0, rel=1e-15)


@pytest.mark.parametrize("lam", [0.0, 0.5, 1.0])
@pytest.mark.parametrize("gamma", [0.0, 1 - 1e-9, 1 - 1e-12])
def test_on_policy_fixed_point_near_gamma_one_is_not_refused(gamma, lam):
    # S = 1: V = r/(1 − γ) for the stored γ (1 − γ is exact in floats); σ_min(Ã) = (1−γ)/(1−γλ) is far
    # above the rounding cut.
    one = FiniteMDP(np.ones((1, 1, 1)), np.array([[2.0]]), gamma)
    fp = projected_fixed_point(one, np.array([0]), np.ones((1, 1)), lam=lam)
    exact = float(2 / (1 - Fraction(gamma)))
    assert float(fp.values[0]) == pytest.approx(exact, rel=1e-12)


# ------------------------------------------------------------------------------ LSTD at the float range


@pytest.mark.parametrize("r", [1e307, -1.5e308, 1e-310, 5e-324])
@pytest.mark.parametrize("ridge", [0.0, 1e-3])
def test_lstd_estimate_scales_with_the_rewards(r, ridge):
    # One-hot features on the alternating 2-cycle with reward r on every transition, γ = 0: the
    # estimate is the mean reward per state, θ̂ = (r, r)/(1 + ridge) (Â = I/2, b̂ = (r, r)/2), in range
    # for every r. Σ_t z_t r_t overflowed for r = 1e307 (θ̂ = NaN with overflow warnings).
    F = np.eye(2)[[0, 1] * 50]
    theta, A, b = lstd_estimate(F, np.full(100, r), F[::-1], gamma=0.0, ridge=ridge)
    exact = [float(Fraction(r) / 2 / (Fraction(1, 2) + Fraction(ridge)))] * 2
    tol = 100 * np.finfo(float).eps  # sums of n = 100 terms
    np.testing.assert_allclose(theta, exact, rtol=tol, atol=0)
    np.testing.assert_allclose(b, [r / 2, r / 2], rtol=tol, atol=0)
    np.testing.assert_array_equal(A, np.eye(2) / 2)


def test_lstd_estimate_beyond_the_float_range_is_a_located_error():
    # γ = 0.99: θ̂ = r/(1 − γ) = 1e309 > the largest float; a ValueError naming θ's index, not inf/NaN
    F = np.eye(2)[[0, 1] * 50]
    with pytest.raises(ValueError, match=r"LSTD estimate is beyond the float range: theta\[0\] = .* \* 2\^1019"):
        lstd_estimate(F, np.full(100, 1e307), F[::-1], gamma=0.99)


# ------------------------------------------------------------------------------ feature maps at extreme scales


@pytest.mark.parametrize("scale", [1e-300, 1e-170, 1.0, 1e170, 1e300])
def test_rbf_features_are_scale_invariant(scale):
    # φ(s) = exp(−‖x_s − c‖²/(2w²)) depends only on (x − c)/w: coords (0, w, 2w) from the centre 0 give
    # (1, e^{−1/2}, e^{−2}) at every scale. w² underflowed to 0 below w ~ 1e-162 (0/0 = NaN at the
    # centre) and raised OverflowError above w ~ 1e154.
    phi = rbf_features([[0.0], [scale], [2 * scale]], [[0.0]], width=scale, bias=False)
    np.testing.assert_allclose(phi[:, 0], np.exp([0.0, -0.5, -2.0]), rtol=1e-15, atol=0)


def test_rbf_features_of_distances_beyond_the_float_range_vanish():
    # x − c = 2e308 overflows; the feature is its limit exp(−∞) = 0, with no warning or NaN
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        phi = rbf_features([[-1e308], [1e308]], [[1e308]], width=1.0, bias=False)
    np.testing.assert_array_equal(phi, [[0.0], [1.0]])


# ------------------------------------------------------------------------------ complex and text inputs


_Z = np.array([[0.5 + 1j], [1.0]])  # complex coordinates / features
_T = [["0.5"], ["1.0"]]  # numbers as text


@pytest.mark.parametrize(("field", "call"), [
    ("coords", lambda: rbf_features(_Z, [[0.0]], width=1.0)),
    ("coords", lambda: rbf_features(_T, [[0.0]], width=1.0)),
    ("centers", lambda: rbf_features([[0.0]], np.array([[1j]]), width=1.0)),
    ("coords", lambda: tile_features(_Z, low=0.0, high=1.0, n_tiles=2, n_tilings=1)),
    ("coords", lambda: tile_features(_T, low=0.0, high=1.0, n_tiles=2, n_tilings=1)),
    ("low", lambda: tile_features([[0.5]], low=["0"], high=1.0, n_tiles=2, n_tilings=1)),
    ("high", lambda: tile_features([[0.5]], low=0.0, high=np.array([1 + 1j]), n_tiles=2, n_tilings=1)),
    ("phi", lambda: state_action_features(_Z, 2)),
    ("phi", lambda: state_action_features(_T, 2)),
    ("phi", lambda: lstd_estimate(np.eye(2) + 0j, np.ones(2), np.eye(2), gamma=0.5)),
    ("phi", lambda: lstd_estimate([["1", "0"], ["0", "1"]], np.ones(2), np.eye(2), gamma=0.5)),
    ("rewards", lambda: lstd_estimate(np.eye(2), np.ones(2) * 1j, np.eye(2), gamma=0.5)),
    ("phi_next", lambda: lstd_estimate(np.eye(2), np.ones(2), [["1", "0"], ["0", "1"]], gamma=0.5)),
    ("phi_sa", lambda: compatible_features([[[1.0], [1j]]], [[0.5, 0.5]])),
    ("pi", lambda: compatible_features(np.ones((1, 2, 1)), [["0.5", "0.5"]])),
    ("pi", lambda: compatible_features(np.ones((1, 2, 1)), np.array([[0.5, 0.5 + 0j]]))),
    ("x", lambda: weighted_norm(["1", "2"], [0.5, 0.5])),
    ("d", lambda: weighted_norm([1.0, 2.0], ["0.5", "0.5"])),
    ("V", lambda: projection([[1.0], [1.0]], [0.5, 0.5], ["1", "2"])),
    ("Phi", lambda: projection([[1.0], [1j]], [0.5, 0.5], [1.0, 2.0])),
    ("Phi", lambda: projected_fixed_point(_cycle(1.0), np.array([0, 0]), [["1"], ["2"]])),
    ("Phi", lambda: projected_fixed_point(_cycle(1.0), np.array([0, 0]), np.array([[1.0], [1j]]))),
    ("d", lambda: projected_fixed_point(_cycle(1.0), np.array([0, 0]), np.eye(2), d=["0.5", "0.5"])),
])
def test_complex_or_text_inputs_are_a_type_error_naming_the_field(field, call):
    # np.asarray(x, dtype=float) dropped imaginary parts with only a ComplexWarning and parsed numbers
    # written as text, so these calls returned features, estimates and norms of other inputs.
    with pytest.raises(TypeError, match=rf"^{field} must hold real numbers; got a (complex|string) array"):
        call()


# ------------------------------------------------------------------------------ compatible critic: what it takes


def _bandit2(gamma, batch=()):
    """One state, two actions, rewards (0, 1): A^π = (−1/2, 1/2) under the uniform policy."""
    P = np.broadcast_to(np.ones((1, 2, 1)), (*batch, 1, 2, 1)).copy()
    R = np.broadcast_to(np.array([[0.0, 1.0]]), (*batch, 1, 2)).copy()
    return FiniteMDP(P, R, gamma)


@pytest.mark.parametrize(("mdp", "got"), [
    (_bandit2(0.5, (2,)), r"gamma=0\.5, batch_shape=\(2,\)"),  # numpy's 'cannot reshape array of size 4 into shape (2,)'
    (_bandit2(None), r"gamma=None"),  # evaluate_policy's message, naming another function
    (np.ones((1, 2, 1)), r"ndarray"),  # AttributeError: 'numpy.ndarray' object has no attribute 'xp'
])
def test_compatible_critic_needs_a_single_discounted_model(mdp, got):
    pi = np.full((1, 2), 0.5)
    with pytest.raises(ValueError, match=rf"compatible_critic needs a single discounted FiniteMDP; got .*{got}"):
        compatible_critic(mdp, pi, compatible_features(np.eye(2)[None], pi))


def test_compatible_critic_refuses_a_batch_of_features():
    # psi of shape (2, S, A, d) passed the (S, A) check on its last axes and crashed in numpy's reshape
    pi = np.full((1, 2), 0.5)
    psi = compatible_features(np.eye(2)[None], pi)
    with pytest.raises(ValueError, match=r"psi must have shape \(S, A, d\) = \(1, 2, d\); got \(2, 1, 2, 2\)"):
        compatible_critic(_bandit2(0.5), pi, np.stack([psi, psi]))
    w, res = compatible_critic(_bandit2(0.5), pi, psi)  # the single one: ψᵀw = A^π = (−1/2, 1/2)
    np.testing.assert_allclose(np.asarray(psi)[0] @ np.asarray(w), [-0.5, 0.5], rtol=0, atol=1e-15)
    assert float(res) <= 1e-15


# ------------------------------------------------------------------------------ tile coding: its definition


def _tiles_by_definition(x, lo, hi, n_tiles, n_tilings):
    """Tiling j puts coordinate x_i in tile floor((x_i − lo_i)/w_i + j/n_tilings), w = (hi − lo)/n_tiles,
    in exact rationals; tiling 0 has n_tiles tiles, the last closed at hi. Columns: (j, tile) sorted."""
    keys = []
    for s in range(len(x)):
        row = []
        for j in range(n_tilings):
            t = []
            for i in range(len(lo)):
                u = (Fraction(x[s][i]) - Fraction(lo[i])) * n_tiles / (Fraction(hi[i]) - Fraction(lo[i]))
                u += Fraction(j, n_tilings)
                t.append(min(int(u // 1), n_tiles - 1) if j == 0 else int(u // 1))
            row.append((j, tuple(t)))
        keys.append(row)
    cols = sorted({key for row in keys for key in row})
    out = np.zeros((len(x), len(cols)))
    for s, row in enumerate(keys):
        for key in row:
            out[s, cols.index(key)] = 1.0
    return out


@pytest.mark.parametrize("seed", range(8))
def test_tile_features_match_their_definition(seed):
    rng = np.random.default_rng(seed)
    k = 1 + seed % 2
    lo = rng.integers(-8, 8, size=k) / 8
    span = 2.0 ** rng.integers(-1, 3, size=k)
    hi = lo + span
    ends = np.vstack([lo, hi])
    # dyadic points on every 1/16 of the range, low and high included: with power-of-2 n_tiles and
    # n_tilings every step is exact, so the points on tile boundaries must land as the definition says
    n_tiles, n_tilings = 2 ** int(rng.integers(0, 3)), 2 ** int(rng.integers(0, 3))
    x = np.vstack([lo + span * rng.integers(0, 17, size=(12, k)) / 16, ends])
    got = tile_features(x, low=lo, high=hi, n_tiles=n_tiles, n_tilings=n_tilings)
    np.testing.assert_array_equal(got, _tiles_by_definition(x, lo, hi, n_tiles, n_tilings))
    # any n_tiles and n_tilings at random points (within rounding of a boundary with probability ~1e-15)
    n_tiles, n_tilings = int(rng.integers(1, 6)), int(rng.integers(1, 5))
    x = np.vstack([lo + span * rng.random((12, k)), ends])
    got = tile_features(x, low=lo, high=hi, n_tiles=n_tiles, n_tilings=n_tilings)
    np.testing.assert_array_equal(got, _tiles_by_definition(x, lo, hi, n_tiles, n_tilings))
    assert np.all(got.sum(axis=1) == n_tilings)


def test_tile_features_with_one_tile_put_every_state_in_it():
    # n_tiles = 1, n_tilings = 1: one tile [low, high]. high itself got a second tile of its own.
    np.testing.assert_array_equal(tile_features([[0.0], [0.5], [1.0]], low=0.0, high=1.0, n_tiles=1, n_tilings=1),
                                  np.ones((3, 1)))


@pytest.mark.parametrize("c", [1e-300, 1e300])
def test_tile_features_are_scale_invariant(c):
    # Tiles depend on (x − low)/(high − low) only. At the largest float high − low overflowed to inf (every
    # state in tile 0 of tiling 0, garbage tiles in the offset one); at c = 1e±300 the state at high landed
    # on either side of the boundary (x − low)/w = n_tiles by rounding (a tile of its own or the last one).
    x = np.array([[-1.0], [-0.2], [0.3], [1.0]])
    ref = tile_features(x, low=-1.0, high=1.0, n_tiles=3, n_tilings=2)
    np.testing.assert_array_equal(tile_features(c * x, low=-c, high=c, n_tiles=3, n_tilings=2), ref)
    big = np.finfo(float).max
    np.testing.assert_array_equal(tile_features(big * x, low=-big, high=big, n_tiles=3, n_tilings=2), ref)


def test_tile_features_refuse_coordinates_outside_the_range():
    # a coordinate outside [low, high] was clipped into the edge tile: -5 shared the tile of 0.2
    with pytest.raises(ValueError, match=r"coords must lie in \[low, high\]; coords\(s=0, i=0\) = -5\.0 is "
                                         r"outside \[0\.0, 1\.0\]"):
        tile_features([[-5.0], [0.2]], low=0.0, high=1.0, n_tiles=2, n_tilings=1)
    with pytest.raises(ValueError, match=r"coords\(s=1, i=1\) = 3\.0 is outside \[0\.0, 2\.0\]"):
        tile_features([[0.5, 0.5], [0.5, 3.0]], low=0.0, high=[1.0, 2.0], n_tiles=2, n_tilings=1)


# ------------------------------------------------------------------------------ features at the float range


@pytest.mark.parametrize("c", [1e-300, 1e-200, 1e200, 1e300])
def test_fixed_point_projection_and_lstd_depend_only_on_the_span(c):
    # span(cΦ) = span(Φ): the same values, projection and LSTD values; θ scales by 1/c. The column
    # norms of the D-orthonormal basis squared the features, so cΦ was refused as rank deficient
    # ('column j=0 of Phi vanishes' for c = 1e-200, 'numerical rank 0 < k=2' for c = 1e200).
    mdp = random_mdp(4, 2, gamma=0.9, rng=0)
    pi = np.full((4, 2), 0.5)
    Phi = random_features(4, 2, rng=1)
    ref = projected_fixed_point(mdp, pi, Phi, lam=0.5)
    with np.errstate(over="ignore", under="ignore"):  # A in the coordinates of cΦ is beyond the range
        got = projected_fixed_point(mdp, pi, c * Phi, lam=0.5)
    tol = 1e-13 * float(np.abs(np.asarray(ref.V)).max())  # cond(√DΦ) ~ 3, 1/(1 − γ) = 10
    np.testing.assert_allclose(np.asarray(got.values), np.asarray(ref.values), rtol=0, atol=tol)
    np.testing.assert_allclose(np.asarray(got.theta) * c, np.asarray(ref.theta), rtol=1e-13)
    d, V = np.asarray(ref.d), np.asarray(ref.V)
    np.testing.assert_allclose(projection(c * Phi, d, V), projection(Phi, d, V), rtol=0, atol=tol)
    s = np.random.default_rng(0).integers(0, 4, size=201)
    r = np.random.default_rng(1).random(200)
    th = lstd_estimate(Phi[s[:-1]], r, Phi[s[1:]], gamma=0.9, lam=0.5)[0]
    with np.errstate(over="ignore", under="ignore"):
        th_c = lstd_estimate(c * Phi[s[:-1]], r, c * Phi[s[1:]], gamma=0.9, lam=0.5)[0]
    np.testing.assert_allclose(th_c * c, th, rtol=1e-12)


def test_ridge_lstd_with_features_beyond_the_range_is_a_located_error():
    # ridge > 0 solves (Â + ridge I) θ = b̂ in the coordinates of φ; with |φ| ~ 1e200, Â ~ 1e400 is beyond
    # the float range and the solve returned θ = (NaN, NaN) with overflow warnings
    F = 1e200 * np.eye(2)[[0, 1] * 5]
    with pytest.raises(ValueError, match=r"with ridge > 0 .* A_hat\[0, 0\] = inf is beyond the float range "
                                         r"\(max\|phi\| = 1e\+200\)"):
        lstd_estimate(F, np.ones(10), F[::-1], gamma=0.5, ridge=1e-3)
    # the same features without the ridge: θ̂ = (2, 2)/1e200 (V = 1/(1 − γ) per state), Â not needed
    with np.errstate(over="ignore"):
        th = lstd_estimate(F, np.ones(10), F[::-1], gamma=0.5)[0]
    np.testing.assert_allclose(th * 1e200, [2.0, 2.0], rtol=1e-14)


def test_tile_features_allocate_only_the_tiles_states_reach():
    # 8 dimensions, 200 tiles each: the dense (n_tiles + 1)^k = 2.6e18-column grid raised numpy's 'array is
    # too big' (k = 3, n_tiles = 1000: MemoryError for 37 GiB), though 5 states reach at most 5 tiles per tiling
    x = np.random.default_rng(0).random((5, 8))
    got = tile_features(x, low=0.0, high=1.0, n_tiles=200, n_tilings=2)
    np.testing.assert_array_equal(got, _tiles_by_definition(x, [0.0] * 8, [1.0] * 8, 200, 2))
    assert got.shape == (5, 10)


@pytest.mark.parametrize("bad", ["False", None, 0, 1.0])
def test_rbf_bias_must_be_a_bool(bad):
    # bias='False' (truthy) appended the constant column and None or 0 dropped it, without a word
    with pytest.raises(ValueError, match=r"bias must be True or False; got "):
        rbf_features([[0.0]], [[0.0]], width=1.0, bias=bad)


def test_rbf_bias_takes_numpy_bools():
    np.testing.assert_array_equal(rbf_features([[0.0]], [[0.0]], width=1.0, bias=np.bool_(False)), [[1.0]])
    np.testing.assert_array_equal(rbf_features([[0.0]], [[0.0]], width=1.0, bias=np.bool_(True)), [[1.0, 1.0]])
