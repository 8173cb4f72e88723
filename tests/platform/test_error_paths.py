"""Error paths and rarely taken branches of rltheory.bounds, trace, experiments, cli and plot.

Each raise is reached through the public function a user calls, and the ``match`` pins the
located part of the message (field, index, value). Functional branches are checked against a
closed form or an independent computation.
"""

from __future__ import annotations

import dataclasses
import json
import math
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from _platform_toy import ToyConfig

from rltheory.bounds import (
    Claim,
    ClaimCheck,
    RateFit,
    check_bound,
    entropy_npg_bound,
    entropy_pg_bound,
    fit_rate,
    npg_bound,
    projected_pg_bound,
    q_learning_bound,
    softmax_pg_bound,
    vi_error_bound,
)
from rltheory.bounds.coverage import (
    feature_covariance,
    finite_horizon_occupancy,
    induced_mdp,
    max_occupancy,
    relative_condition_number,
    unilateral_concentrability,
)
from rltheory.bounds.offline import (
    elliptical_bonus,
    lcb_vi_rate,
    offline_game_gap_rate,
    pessimism_suboptimality_bound,
    pevi_beta,
)
from rltheory.bounds.selective_coverage import selective_concentrability, selective_coverage_witness
from rltheory.cli import main
from rltheory.experiments import (
    Experiment,
    ExperimentResult,
    base,
    config_to_dict,
    load_results,
    quick_mode,
    sweep,
)
from rltheory.experiments.base import jsonable, register
from rltheory.mdp import FiniteHorizonMDP, FiniteMDP, gridworld, policy_iteration
from rltheory.plot import figure, value_heatmap
from rltheory.trace import ResultFileError, Trace

# --------------------------------------------------------------------------- bounds._argcheck, policy_optimization


def test_bool_is_not_a_number_for_scalar_arguments():
    """``_real_scalar`` maps bools to NaN, so ``gamma=True`` / ``eta=True`` are rejected by name."""
    with pytest.raises(ValueError, match=r"gamma must be a number in \[0, 1\); got True"):
        npg_bound(1, eta=1.0, gamma=True, n_actions=2)
    with pytest.raises(ValueError, match=r"eta must be a finite number > 0; got True"):
        npg_bound(1, eta=True, gamma=0.5, n_actions=2)


def test_projected_pg_needs_positive_gamma():
    """Agarwal et al. Thm 5's step divides by γ: γ = 0 is refused and the message gives the value."""
    with pytest.raises(ValueError, match=r"gamma must be > 0 for this bound .*; got 0\.0"):
        projected_pg_bound(1, gamma=0.0, n_states=1, n_actions=2, mismatch=1.0)


@pytest.mark.parametrize("n_actions", [None, True, 0, 2.0])
def test_npg_bound_needs_kl0_or_integer_n_actions(n_actions):
    with pytest.raises(ValueError, match=rf"give kl0 or n_actions \(an integer >= 1\); got n_actions={n_actions!r}"):
        npg_bound(1, eta=1.0, gamma=0.5, n_actions=n_actions)


@pytest.mark.parametrize("bound", ["softmax", "entropy"])
def test_c_must_be_positive_and_the_first_bad_entry_is_located(bound):
    """Both PG bounds divide by ``c²``; the error names the first non-positive (or NaN) entry of ``c``."""

    def call(c):
        if bound == "softmax":
            return softmax_pg_bound([1, 2], gamma=0.5, n_states=1, c=c, mismatch=1.0, inv_rho=1.0)
        return entropy_pg_bound([1, 2], gamma=0.5, tau=1.0, n_actions=2, c=c, mismatch=1.0, inv_mu=1.0)

    with pytest.raises(ValueError, match=r"c must be > 0 .*; c\[1\] = 0\.0"):
        call([0.5, 0.0, -1.0])
    with pytest.raises(ValueError, match=r"c must be > 0 .*; c\[0\] = nan"):
        call([math.nan, 0.5])
    with pytest.raises(ValueError, match=r"c must be > 0 .*; got -0\.5"):
        call(-0.5)


def test_entropy_npg_step_condition_fires_only_above_the_threshold():
    """Cen et al. Thm 1 needs ``η ≤ (1−γ)/τ``: the boundary value is accepted, anything above is not."""
    q, _ = entropy_npg_bound([1, 2], eta=0.5, tau=1.0, gamma=0.5, C1=1.0)  # η = (1−γ)/τ: rate γ
    assert q.tolist() == [0.5, 0.25]
    with pytest.raises(ValueError, match=r"eta <= \(1 - gamma\)/tau = 0\.5; got eta=0\.6"):
        entropy_npg_bound([1], eta=0.6, tau=1.0, gamma=0.5, C1=1.0)


# --------------------------------------------------------------------------- bounds.td_q_learning, bounds.mdp


def test_q_learning_bound_rejects_alpha_above_one():
    assert q_learning_bound([0], alpha=1.0, gamma=0.0, initial_error=1.0, value_span=1.0,
                            n_pairs=1, horizon=1, delta=0.1).tolist() == [1.0]  # α = 1 is allowed
    with pytest.raises(ValueError, match=r"alpha must lie in \(0, 1\]; got 1\.5"):
        q_learning_bound([0], alpha=1.5, gamma=0.5, initial_error=1.0, value_span=1.0,
                         n_pairs=1, horizon=1, delta=0.1)


def test_vi_error_bound_accepts_integral_floats():
    """Float ``k`` holding integers gives ``γ^k e0`` exactly, the same as integer ``k``."""
    out = vi_error_bound([0.0, 1.0, 2.0], 0.5, 2.0)
    assert out.tolist() == [2.0, 1.0, 0.5]
    assert out.tolist() == vi_error_bound(np.array([0, 1, 2]), 0.5, 2.0).tolist()


def test_vi_error_bound_huge_and_infinite_k():
    """Bug found here: float ``k`` was cast to int64, so ``k = 1e20`` (a valid count) wrapped to a
    negative number and was rejected as "non-negative", and ``k = inf`` was reported as
    ``min k = -9223372036854775808``. Now huge counts give ``γ^k e0 → 0`` and ``inf`` is named."""
    assert vi_error_bound([1e20], 0.5, 1.0).tolist() == [0.0]
    with pytest.raises(ValueError, match=r"k must hold finite integers; got array\(\[inf\]\)"):
        vi_error_bound([math.inf], 0.5, 1.0)
    with pytest.raises(ValueError, match=r"k must hold finite integers; got array\(\[0\. , 1\.5\]\)"):
        vi_error_bound([0.0, 1.5], 0.5, 1.0)


# --------------------------------------------------------------------------- bounds.coverage


def _chain_fh(H: int = 3) -> FiniteHorizonMDP:
    # S = 2, A = 2: action 0 stays, action 1 switches state; start in s0
    P = np.zeros((2, 2, 2))
    P[0, 0, 0] = P[1, 0, 1] = 1.0
    P[0, 1, 1] = P[1, 1, 0] = 1.0
    return FiniteHorizonMDP.stationary(P, np.zeros((2, 2)), H=H, mu=[1.0, 0.0])


def test_finite_horizon_occupancy_of_a_stationary_policy():
    """A stationary ``[S, A]`` policy is repeated over ``h``: ``d_h(s, a) = (μ P_π^h)(s) π(a|s)``
    with ``P_π`` built by hand (independent of the forward recursion)."""
    fh = _chain_fh(H=3)
    pi = np.array([[0.25, 0.75], [0.5, 0.5]])
    P_pi = np.array([[0.25, 0.75], [0.5, 0.5]])  # stay w.p. π(0|s), switch w.p. π(1|s)
    ds = np.array([1.0, 0.0])
    expected = []
    for _ in range(3):
        expected.append(ds[:, None] * pi)
        ds = ds @ P_pi
    np.testing.assert_allclose(finite_horizon_occupancy(fh, pi), np.stack(expected), rtol=0, atol=1e-15)
    # a deterministic stationary policy int[S] takes the same branch
    det = finite_horizon_occupancy(fh, np.array([1, 1]))  # always switch: s0, s1, s0
    assert det[:, :, 1].tolist() == [[1.0, 0.0], [0.0, 1.0], [1.0, 0.0]] and float(det[:, :, 0].sum()) == 0.0


def test_max_occupancy_rejects_batches_and_non_models():
    P = np.zeros((2, 2, 2, 2))
    P[..., 0] = 1.0
    fh = FiniteHorizonMDP.stationary(P, np.zeros((2, 2, 2)), H=2)
    with pytest.raises(ValueError, match=r"max_occupancy needs a single model; got batch_shape=\(2,\)"):
        max_occupancy(fh)
    mdp = FiniteMDP(P, np.zeros((2, 2, 2)), gamma=0.5)
    with pytest.raises(ValueError, match=r"max_occupancy needs a single model; got batch_shape=\(2,\)"):
        max_occupancy(mdp)
    with pytest.raises(TypeError, match=r"a discounted FiniteMDP; got a FiniteMDP with gamma=None"):
        max_occupancy(FiniteMDP(P[0], np.zeros((2, 2)), gamma=None))
    with pytest.raises(TypeError, match=r"a discounted FiniteMDP; got ndarray"):
        max_occupancy(P)


def test_feature_covariance_shape_mismatch_names_both_shapes():
    with pytest.raises(ValueError, match=r"matching S, A; got \(2, 2, 3\), \(3, 2\)"):
        feature_covariance(np.ones((2, 2, 3)), np.ones((3, 2)))
    with pytest.raises(ValueError, match=r"features must be \(\.\.\., S, A, k\).*got \(2, 3\), \(2, 3\)"):
        feature_covariance(np.ones((2, 3)), np.ones((2, 3)))


def test_relative_condition_number_skips_an_all_zero_step():
    """A step where both covariances vanish contributes ``κ_h = 0`` (``xᵀ0x/xᵀ0x`` has no mass);
    the other step's ``κ = max_i t_i/d_i = 2`` (diagonal closed form) is still the answer."""
    T = np.stack([np.zeros((2, 2)), np.diag([0.5, 0.5])])
    D = np.stack([np.zeros((2, 2)), np.diag([0.25, 0.75])])
    assert relative_condition_number(T, D) == pytest.approx(2.0, rel=1e-14)
    assert relative_condition_number(T[:1], D[:1]) == 0.0


def _one_shot_game():
    P = np.ones((1, 1, 2, 2, 1))
    pi = np.full((1, 1, 2), 0.5)
    return P, pi


def test_unilateral_concentrability_checks_the_other_players_policy_shape():
    P, pi = _one_shot_game()
    with pytest.raises(ValueError, match=r"policies\[1\] must have shape \(H, S, A_1\) = \(1, 1, 2\); got \(1, 2\)"):
        unilateral_concentrability(P, [pi, pi[0]], np.full((1, 1, 2, 2), 0.25))


def test_induced_mdp_argument_errors():
    P, pi = _one_shot_game()
    with pytest.raises(ValueError, match=r"player must be in \[0, 2\) .*got player=2, 2 policies"):
        induced_mdp(P, None, [pi, pi], player=2)
    with pytest.raises(ValueError, match=r"player must be in \[0, 2\) .*got player=0, 1 policies"):
        induced_mdp(P, None, [pi], player=0)
    with pytest.raises(ValueError, match=r"R must have shape .* = \(2, 1, 1, 2, 2\); got \(1, 1, 1, 2, 2\)"):
        induced_mdp(P, np.zeros((1, 1, 1, 2, 2)), [pi, pi], player=0)


# --------------------------------------------------------------------------- bounds.offline


def test_pessimism_bound_validates_and_locates():
    d = np.array([[[1.0, 0.0]]])
    with pytest.raises(ValueError, match=r"d_star has shape \(1, 1, 2\) but bonus has shape \(1, 2\)"):
        pessimism_suboptimality_bound(d, np.ones((1, 2)))
    with pytest.raises(ValueError, match=r"bonus must be finite and non-negative; bonus\[0, 0, 1\] = -1\.0"):
        pessimism_suboptimality_bound(d, np.array([[[0.1, -1.0]]]))
    with pytest.raises(ValueError, match=r"bonus must be finite and non-negative; bonus\[0, 0, 0\] = inf"):
        pessimism_suboptimality_bound(d, np.array([[[math.inf, 0.0]]]))


def test_pessimism_bound_rejects_nan_occupancy():
    """Bug found here: ``np.any(d < 0)`` is False for NaN, so a NaN ``d_star`` returned ``nan``."""
    with pytest.raises(ValueError, match=r"d_star must be finite and non-negative; d_star\[0, 0, 0\] = nan"):
        pessimism_suboptimality_bound(np.array([[[math.nan, 0.0]]]), np.array([[[0.1, 5.0]]]))


def test_elliptical_bonus_lambda_shape():
    with pytest.raises(ValueError, match=r"d = features.shape\[-1\] = 2; got \(1, 3, 3\)"):
        elliptical_bonus(np.eye(2).reshape(1, 2, 2), np.eye(3)[None], 1.0)


@pytest.mark.parametrize(("args", "msg"), [((0, 3, 100), "d must be a positive integer; got 0"),
                                           ((2, True, 100), "H must be a positive integer; got True"),
                                           ((2, 3, 100.0), r"K must be a positive integer; got 100\.0")])
def test_pevi_beta_counts(args, msg):
    with pytest.raises(ValueError, match=msg):
        pevi_beta(*args, 0.1)


def test_lcb_vi_rate_counts_and_vacuous_cases():
    with pytest.raises(ValueError, match="A must be a positive integer; got 0"):
        lcb_vi_rate(1.0, 1, 0, 1, 100, 0.5)
    # ⌊K/H⌋ = 0 (no full round of split data) or C* = ∞: the bound is vacuous
    assert lcb_vi_rate(1.0, 2, 2, 3, 2, 0.5) == math.inf
    assert lcb_vi_rate(math.inf, 2, 2, 3, 30, 0.5) == math.inf
    # one more episode makes ⌊K/H⌋ = 1 and the closed form H(H+1)√(S C ln(2HSA/δ))
    assert lcb_vi_rate(1.0, 2, 2, 3, 3, 0.5) == pytest.approx(12 * math.sqrt(2 * math.log(48.0)), rel=1e-14)


def test_offline_game_gap_rate_counts_and_vacuous_cases():
    with pytest.raises(ValueError, match="n_candidates must be a positive integer; got 0"):
        offline_game_gap_rate(1.0, 1, (1, 1), 1, 100, 0.5, n_candidates=0)
    assert offline_game_gap_rate(1.0, 1, (1, 1), 2, 1, 0.5) == math.inf
    assert offline_game_gap_rate(math.inf, 1, (1, 1), 1, 100, 0.5) == math.inf
    # closed form 2 n H (H+1) √(S J C ι / ⌊K/H⌋), ι = ln(4 n H S J / δ), with n = 2, H = 2, K = 2
    assert offline_game_gap_rate(1.0, 1, (1, 1), 2, 2, 0.5) == pytest.approx(
        2 * 2 * 2 * 3 * math.sqrt(math.log(32.0)), rel=1e-14)


@pytest.mark.parametrize("C", [math.nan, -1.0])
def test_offline_game_gap_rate_rejects_nan_and_negative_coverage(C):
    """Bug found here: ``C_uni = nan`` returned ``nan`` and ``C_uni < 0`` raised a bare
    ``math domain error``; now the argument and value are named. (The message says ">= 1" since
    C_uni in [0, 1) is refused too: it returned a rate below the C_uni = 1 one.)"""
    with pytest.raises(ValueError, match=rf"C_uni must be >= 1 .*; got {C!r}"):
        offline_game_gap_rate(C, 1, (1, 1), 1, 100, 0.5)


# --------------------------------------------------------------------------- bounds.rates


def test_ratefit_kind_and_from_dict_errors():
    with pytest.raises(ValueError, match=r"RateFit.kind must be 'algebraic' or 'geometric', got 'linear'"):
        RateFit(slope=-1.0, intercept=0.0, ci=(-1.0, -1.0), window=(1.0, 2.0), n=3, kind="linear")
    fit = fit_rate([1.0, 2.0, 4.0], [1.0, 0.5, 0.25], n_boot=10)
    d = fit.to_dict()
    assert RateFit.from_dict(d) == fit  # the round trip the error path protects
    del d["intercept"]
    with pytest.raises(ValueError, match=r"not a RateFit dict \(KeyError\('intercept'\)\)"):
        RateFit.from_dict(d)
    with pytest.raises(ValueError, match=r"not a RateFit dict \(TypeError.*\): None"):
        RateFit.from_dict(None)


def test_fit_rate_needs_1d_t_and_1d_or_2d_err():
    with pytest.raises(ValueError, match=r"t must be 1-D and err 1-D or 2-D \(runs, points\); got shapes \(2, 3\) "
                       r"and \(2, 3\)"):
        fit_rate(np.ones((2, 3)), np.ones((2, 3)))
    with pytest.raises(ValueError, match=r"got shapes \(3,\) and \(2, 2, 3\)"):
        fit_rate(np.arange(1.0, 4.0), np.ones((2, 2, 3)))


def test_fit_rate_all_bootstrap_resamples_degenerate():
    """With one resample that draws a single distinct ``t`` there is no bootstrap slope: the
    interval is the HC3 Student-t interval around the least-squares slope, here the closed form
    −3/2 (``x = log t = (0, 0, log 2)``, ``y = (0, log 2, −log 2)``: ``sxy/sxx = −log²2 / (2/3 log²2)``).
    With ``L = log 2``: leverages ``(1/2, 1/2, 1)``, residuals ``(−L/2, L/2, 0)``, so
    ``se_HC3 = sqrt(2 (L/3)² L²) / (2L²/3) = √2/2`` and the interval is ``−3/2 ∓ t_{1, 0.975} √2/2``.
    (It used to collapse to ``(−3/2, −3/2)``: a zero-width 95 % interval from three noisy points.)"""
    t, err = np.array([1.0, 1.0, 2.0]), np.array([1.0, 2.0, 0.5])

    def drawn(seed):  # the indices fit_rate's single bootstrap resample draws
        return set(np.random.default_rng(seed).integers(0, 3, size=(1, 3))[0].tolist())

    seed = next(s for s in range(100) if drawn(s) <= {0, 1} or drawn(s) == {2})
    fit = fit_rate(t, err, n_boot=1, seed=seed)
    assert fit.slope == pytest.approx(-1.5, rel=1e-14)
    half = math.tan(0.475 * math.pi) * math.sqrt(2) / 2  # t_{1, 0.975}: Cauchy quantile tan(π (0.975 − 1/2))
    assert fit.ci == pytest.approx((-1.5 - half, -1.5 + half), rel=1e-12) and fit.slope_ci == fit.ci
    # control: a resample with t = 2 and one t = 1 point has slope −1 or −2, which widens the interval
    other = next(s for s in range(100) if drawn(s) in ({0, 2}, {1, 2}))
    lo, hi = fit_rate(t, err, n_boot=1, seed=other).ci
    assert lo < hi and lo <= fit.slope <= hi


@pytest.mark.parametrize(("rtol", "atol"), [(float("nan"), 0.0), (0.0, float("nan")), (-1e-3, 0.0), (0.0, float("inf"))])
def test_check_bound_tolerances_must_be_finite_and_non_negative(rtol, atol):
    # a NaN rtol used to pass the `< 0` check and made a bound that holds read holds=False
    with pytest.raises(ValueError, match=r"rtol and atol must be finite and non-negative; got rtol="):
        check_bound([1.0], [2.0], rtol=rtol, atol=atol)


def test_check_bound_needs_a_point():
    with pytest.raises(ValueError, match="check_bound needs at least one point; got empty arrays"):
        check_bound([], [])


@pytest.mark.parametrize("tol", [-1.0, math.nan, math.inf])
def test_claim_tol_must_be_finite_and_non_negative(tol):
    with pytest.raises(ValueError, match=rf"Claim.tol must be finite and non-negative; got {tol!r}"):
        Claim("c", "s", "src", 0.5, "rate", tol=tol)


def test_claim_and_claimcheck_evidence_errors():
    fit = fit_rate([1.0, 2.0, 4.0], [1.0, 0.5, 0.25], n_boot=10)
    bc = check_bound([1.0], [2.0])
    rate = Claim("halving", "s", "src", -1.0, "rate")
    bound = Claim("below", "s", "src", None, "bound")
    with pytest.raises(TypeError, match=r"claim 'halving' of kind 'rate' needs a RateFit; got BoundCheck"):
        rate.check(bc)
    with pytest.raises(ValueError, match="not two BoundChecks"):
        ClaimCheck(bound, bc, bound_check=bc)
    with pytest.raises(ValueError, match=r"claim 'below' of kind 'bound' needs a BoundCheck as evidence"):
        ClaimCheck(bound, fit=fit)
    with pytest.raises(ValueError, match=r"claim 'halving' of kind 'rate' needs a RateFit as evidence"):
        ClaimCheck(rate, bound_check=bc)
    assert ClaimCheck(rate, fit).passed and ClaimCheck(bound, bc).passed  # the valid forms


# --------------------------------------------------------------------------- bounds.selective_coverage


def _witness():
    g = selective_coverage_witness()
    return g["P"], g["R"], g["nash"], g["behaviour"], g["mu"]


def test_selective_concentrability_shape_errors():
    P, R, nash, rho, mu = _witness()
    with pytest.raises(ValueError, match=r"P must have shape \(H, S, A_1, \.\.\., A_n, S\); got \(2, 2, 2\)"):
        selective_concentrability(P[:, :, 0, 0], R, nash, rho, mu)
    with pytest.raises(ValueError, match=r"R must have shape .* = \(2, 2, 2, 2, 2\); got \(2, 2, 2, 2\)"):
        selective_concentrability(P, R[0], nash, rho, mu)
    with pytest.raises(ValueError, match=r"policies must list 2 per-player policies \(H, S, A_i\); got 1"):
        selective_concentrability(P, R, nash[:1], rho, mu)
    with pytest.raises(ValueError, match=r"policies\[1\] must have shape \(H, S, A_1\) = \(2, 2, 2\); got \(2, 2\)"):
        selective_concentrability(P, R, [nash[0], nash[1][0]], rho, mu)
    with pytest.raises(ValueError, match=r"mu must be a distribution over the S = 2 states; got \[0\.5 0\.6\]"):
        selective_concentrability(P, R, nash, rho, np.array([0.5, 0.6]))


def test_selective_concentrability_rejects_nan_mu_and_policies():
    """Bug found here: ``abs(nan − 1) > 1e-8`` and ``nan < 0`` are False, so a NaN ``mu`` or a NaN
    policy row passed validation and the function returned ``nan``."""
    P, R, nash, rho, mu = _witness()
    assert math.isfinite(selective_concentrability(P, R, nash, rho, mu))
    with pytest.raises(ValueError, match=r"mu must be a distribution over the S = 2 states; got \[nan nan\]"):
        selective_concentrability(P, R, nash, rho, np.array([math.nan, math.nan]))
    bad = [p.copy() for p in nash]
    bad[1][1, 0, 1] = math.nan
    with pytest.raises(ValueError, match=r"policies\[1\]\[h=1, s=0\] must be a distribution over A_1; got \[1\.0, nan\]"):
        selective_concentrability(P, R, bad, rho, mu)


@pytest.mark.parametrize("w", [0.0, 1.0, math.nan])
def test_selective_coverage_witness_weight(w):
    with pytest.raises(ValueError, match=rf"behaviour_weight must lie in \(0, 1\); got {w!r}"):
        selective_coverage_witness(behaviour_weight=w)


# --------------------------------------------------------------------------- trace


def _trace() -> Trace:
    return Trace(metrics={"m": np.array([0.5, 0.25])}, iteration=np.arange(2), wall_time=np.array([0.0, 0.1]))


def test_trace_save_names_the_unsupported_array(tmp_path):
    """Before the fix the TypeError said only "got dtype complex128", not which array."""
    t = Trace(metrics={"m": np.zeros(2), "z": np.array([1j, 2j])}, iteration=np.arange(2), wall_time=np.zeros(2))
    with pytest.raises(TypeError, match=r"metrics\['z'\]: only boolean, integer and float arrays .* complex128"):
        t.save(tmp_path / "t.json")
    assert list(tmp_path.iterdir()) == []  # nothing written
    t = dataclasses.replace(_trace(), final={"s": np.array(["a"])})
    with pytest.raises(TypeError, match=r"final\['s'\]: only boolean.*got dtype <U1"):
        t.to_dict()


def _corrupt(tmp_path, edit):
    d = _trace().to_dict()
    edit(d)
    p = tmp_path / "t.json"
    p.write_text(json.dumps(d))
    return p


@pytest.mark.parametrize(("edit", "msg"), [
    (lambda d: d["metrics"].__setitem__("m", [1, 2]), r"metrics\['m'\] must be an object with keys dtype, shape, data"),
    (lambda d: d["metrics"]["m"].__setitem__("dtype", "<c16"), r"metrics\['m'\]: unsupported dtype '<c16'"),
    (lambda d: d["metrics"]["m"]["data"].__setitem__(1, "abc"),
     r"metrics\['m'\]: non-numeric entry in data; data\[1\] = 'abc'"),
    (lambda d: d.pop("final"), r"missing fields \['final'\]"),
    (lambda d: d.__setitem__("wall_time", {"dtype": "<f8", "shape": [3], "data": [0, 1, 2]}),
     r"iteration and wall_time must be 1-D of equal length; got \(2,\) and \(3,\)"),
    (lambda d: d["metrics"].__setitem__("m", {"dtype": "<f8", "shape": [3], "data": [0, 1, 2]}),
     r"metric 'm' has shape \(3,\); its first axis must have length 2"),
])
def test_trace_load_reports_the_malformed_field(tmp_path, edit, msg):
    p = _corrupt(tmp_path, edit)
    with pytest.raises(ResultFileError, match=msg) as info:
        Trace.load(p)
    assert str(p) in str(info.value)  # the file is named


def test_trace_load_rejects_another_npz_format_tag(tmp_path):
    p = tmp_path / "t.npz"
    _trace().save(p)
    with np.load(p) as z:
        arrays = {k: z[k] for k in z.files}
    arrays["__format__"] = np.asarray("rltheory.trace/2")
    np.savez(p, **arrays)
    with pytest.raises(ResultFileError, match=r"format 'rltheory.trace/2', expected rltheory.trace/1"):
        Trace.load(p)


# --------------------------------------------------------------------------- experiments.base


def test_quick_mode_reads_the_environment(monkeypatch):
    monkeypatch.delenv("RLTHEORY_QUICK", raising=False)
    assert quick_mode() is False
    for value, expected in ((" On ", True), ("YES", True), ("1", True), ("0", False), ("quick", False)):
        monkeypatch.setenv("RLTHEORY_QUICK", value)
        assert quick_mode() is expected, value


@dataclasses.dataclass(frozen=True)
class _Plain:
    a: tuple
    b: float
    c: np.ndarray


def test_jsonable_dataclasses_arrays_and_errors():
    fit = fit_rate([1.0, 2.0, 4.0], [1.0, 0.5, 0.25], n_boot=10)
    assert jsonable(fit) == fit.to_dict()  # a dataclass with to_dict uses it
    out = jsonable(_Plain(a=(1, np.int64(2)), b=math.inf, c=np.array([[0.5], [np.nan]])))
    assert out == {"a": [1, 2], "b": None, "c": [[0.5], [None]]}  # fields; non-finite → None
    assert type(out["a"][1]) is int
    with pytest.raises(TypeError, match=r"cannot convert complex to JSON: 1j"):
        jsonable({"x": [1j]})


def test_config_to_dict_needs_an_instance():
    assert config_to_dict(ToyConfig()) == {"n": 1}
    with pytest.raises(TypeError, match="config must be a dataclass instance; got dict"):
        config_to_dict({"n": 1})
    with pytest.raises(TypeError, match="config must be a dataclass instance; got type"):
        config_to_dict(ToyConfig)


def test_experiment_result_curves_must_hold_dicts():
    with pytest.raises(TypeError, match=r"curves\['panel'\] must be a dict of series; got list"):
        ExperimentResult("toy", {}, {"panel": [1, 2]}, [])


@dataclasses.dataclass(frozen=True)
class _QuickOnly:
    n: int = 1

    @classmethod
    def quick(cls) -> _QuickOnly:
        return cls()


def _plot(result):
    return figure()[0]


def test_experiment_validation_and_reproduce_type_check():
    with pytest.raises(TypeError, match=r"experiment 'toy-x': config_cls needs a classmethod full\(\)"):
        Experiment("toy-x", "t", _QuickOnly, lambda c, **kw: None, _plot)
    with pytest.raises(TypeError, match=r"experiment 'toy-x': run must be callable"):
        Experiment("toy-x", "t", ToyConfig, None, _plot)
    with pytest.raises(TypeError, match=r"experiment 'toy-x': plot must be callable"):
        Experiment("toy-x", "t", ToyConfig, lambda c, **kw: None, "plot")
    exp = Experiment("toy-x", "t", ToyConfig, lambda c, **kw: {"n": c.n}, _plot)
    with pytest.raises(TypeError, match=r"experiment 'toy-x': run returned dict, not ExperimentResult"):
        exp.reproduce()
    with pytest.raises(TypeError, match="register expects an Experiment; got str"):
        register("toy-x")


# --------------------------------------------------------------------------- experiments.sweep


def _numpy_result(config, seed):
    return {"arr": np.arange(config["n"]), "x": np.float64(0.5) * seed, "i": np.int64(seed)}


def test_sweep_converts_numpy_results_and_configs(tmp_path):
    """numpy arrays/scalars in results become lists/Python numbers, and a numpy config value has
    the same key as the Python one, so a rerun reads every point back unchanged."""
    path = tmp_path / "r.jsonl"
    with ThreadPoolExecutor(2) as ex:
        fresh = sweep(_numpy_result, [{"n": np.int64(3)}], [1, 2], executor=ex, results_path=path)
        cached = sweep(_numpy_result, [{"n": 3}], [1, 2], executor=ex, results_path=path)
    assert [p.result for p in fresh] == [{"arr": [0, 1, 2], "x": 0.5, "i": 1}, {"arr": [0, 1, 2], "x": 1.0, "i": 2}]
    assert type(fresh[0].result["i"]) is int and type(fresh[0].result["x"]) is float
    assert [p.result for p in cached] == [p.result for p in fresh] and all(p.cached for p in cached)


def test_load_results_header_errors(tmp_path):
    p = tmp_path / "r.jsonl"
    p.write_bytes(b'{"format": "rltheory.sweep", "version": 1')  # header cut off before its newline
    with pytest.raises(ResultFileError, match=r"r\.jsonl: no complete header line"):
        load_results(p)
    # version 3: the first unknown one (version 2, the strict-JSON format, is the current one)
    p.write_text('{"format": "rltheory.sweep", "version": 3, "fn": "m.f"}\n')
    with pytest.raises(ResultFileError, match=r"r\.jsonl: unsupported sweep file version 3"):
        load_results(p)


# --------------------------------------------------------------------------- cli


def test_cli_list_prints_every_registered_name_with_its_title(capsys, monkeypatch):
    monkeypatch.setitem(base._REGISTRY, "toy-with-a-rather-long-name",
                        Experiment("toy-with-a-rather-long-name", "A toy title", ToyConfig, lambda c, **kw: None, _plot))
    from rltheory import experiments

    assert main(["list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    names = experiments.names()
    width = max(len(n) for n in names)
    assert lines == [f"{n:<{width}}  {experiments.get(n).title}" for n in names]
    assert any(line.startswith("toy-with-a-rather-long-name") and line.endswith("  A toy title") for line in lines)


def _toy_run(config, *, seed=0, progress=False):
    bc = check_bound([0.5 * seed], [1.0 + seed])
    return ExperimentResult("toy", {"n": config.n}, {}, [Claim("below", "m ≤ b", "toy", None, "bound").check(bc)])


def test_cli_reproduce_all_runs_every_name(tmp_path, capsys, monkeypatch):
    from rltheory import experiments

    for name in ("toy-a", "toy-b"):
        monkeypatch.setitem(base._REGISTRY, name, Experiment(name, f"title {name}", ToyConfig, _toy_run, _plot))
    monkeypatch.setattr(experiments, "names", lambda: ["toy-a", "toy-b"])
    assert main(["reproduce", "--all", "--out", str(tmp_path), "--quiet", "--seed", "2"]) == 0
    out = capsys.readouterr().out
    assert "toy-a: PASS (1 checks" in out and "toy-b: PASS (1 checks" in out
    assert sorted(p.name for p in tmp_path.iterdir()) == ["toy-a.json", "toy-a.png", "toy-b.json", "toy-b.png"]
    for name in ("toy-a", "toy-b"):
        rec = json.loads((tmp_path / f"{name}.json").read_text())
        assert rec["title"] == f"title {name}" and rec["seed"] == 2 and rec["pass"] is True


def test_cli_solve_draws_walls(capsys):
    """``--wall ROW,COL`` builds a walled 4×4 world; the printed map is checked cell by cell
    against an independent policy-iteration solve of the same world (walls drawn as '#')."""
    walls = [(1, 1), (2, 2)]
    assert main(["solve", "gridworld", "--size", "4", "--gamma", "0.9", "--method", "pi",
                 "--wall", "1,1", "--wall", "2,2"]) == 0
    out = capsys.readouterr().out.splitlines()
    grid = [line.split() for line in out[out.index("greedy policy (G = goal):") + 1:]]
    world = gridworld(4, walls=walls, slip=0.1, gamma=0.9)
    pol = np.asarray(policy_iteration(world.mdp).policy)
    goals = {tuple(g) for g in world.goals}
    expected = [["#" if (r, c) in walls else "G" if (r, c) in goals else "↑→↓←"[int(pol[world.state_of(r, c)])]
                 for c in range(4)] for r in range(4)]
    assert grid == expected


def test_cli_solve_rejects_bad_walls(capsys):
    """A malformed --wall is an argparse error (exit 2); a wall off the grid is the model's located error."""
    with pytest.raises(SystemExit) as exc:
        main(["solve", "gridworld", "--size", "4", "--wall", "1;1"])
    assert exc.value.code == 2
    assert "a wall is ROW,COL (two integers); got '1;1'" in capsys.readouterr().err
    assert main(["solve", "gridworld", "--size", "4", "--wall", "9,0"]) == 2
    # (the message names the option since 08349d2: "--wall: walls[0] = ...")
    assert "rltheory solve: --wall: walls[0] = (9, 0) is off the 4x4 grid" in capsys.readouterr().err


# --------------------------------------------------------------------------- plot


def test_value_heatmap_draws_stay_actions_as_dots():
    """On a 2×3 grid with moves (right, stay), the states choosing 'stay' (1, 2, 4) get one dot
    each at (col, row) = divmod(s, 3) reversed; without a stay action no dot line is drawn."""
    _, axes = figure()
    ax = value_heatmap(axes[0, 0], np.arange(6.0), (2, 3), policy=[0, 1, 1, 0, 1, 0], moves=[(0, 1), (0, 0)])
    dots = [ln for ln in ax.lines if ln.get_marker() == "o"]
    assert len(dots) == 1
    assert np.asarray(dots[0].get_xdata()).tolist() == [1, 2, 1]
    assert np.asarray(dots[0].get_ydata()).tolist() == [0, 0, 1]
    _, axes = figure()
    ax = value_heatmap(axes[0, 0], np.arange(6.0), (2, 3), policy=[0] * 6, moves=[(0, 1), (0, 0)])
    assert [ln for ln in ax.lines if ln.get_marker() == "o"] == []
