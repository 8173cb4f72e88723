"""Each reproduction's verdict can fail: the same judge, fed a wrong algorithm, says fail.

A reproduction whose claims pass whatever the algorithm does checks nothing. Here each
experiment runs with its algorithm replaced by a plausible wrong one (the monkeypatched
name is the one the experiment module calls) and the claim that the theorem ties to that
algorithm must fail, while the unpatched run at the same settings passes. The configurations
are the quick presets, shrunk where the claim allows it, so that each test takes about a second.

Also two regressions of helper-91's audit (session 18):

* entropy-npg's rate claims were left out without a word where the error fell below the floor
  within 5 iterates (quick preset: ``f = 1``, soft policy iteration, 4 iterates above the floor
  at seeds 0–3); the module docstring said claim 2 was checked for every step. The run now says
  which claim it did not check, and why, in ``meta["fits"][name]``.
* pmd-linear's docstring stated the constant-step bound with ``1/(1−γ)²`` where the check uses
  ``span(r)/(1−γ)²`` (:func:`rltheory.bounds.pmd_sublinear_bound`).
"""

from __future__ import annotations

import dataclasses
from types import SimpleNamespace

import numpy as np
import pytest

from rltheory.algorithms import constant_step
from rltheory.bounds import kl_to_policy
from rltheory.experiments import entropy_npg, pmd_linear, q_replay, solver_comparison, td_linear
from rltheory.mdp import bellman_optimality_operator, policy_iteration, state_occupancy


def _verdicts(result):
    return {c.claim.name: c.passed for c in result.checks}


# --- entropy-npg -----------------------------------------------------------------------


def test_entropy_npg_says_which_rate_claims_it_could_not_fit():
    # regression: f = 1 had no "f=1-rate" claim and nothing said why
    res = entropy_npg.run(entropy_npg.Config.quick(), seed=1)
    names = _verdicts(res)
    for f in entropy_npg.Config.quick().fractions:
        name = f"f={f:g}"
        fit = res.meta["fits"][name]
        assert (f"{name}-rate" in names) != ("rate_not_checked" in fit), name
        if f < 1:  # α > 0: a local rate is claimed, or the run says why not
            assert (f"{name}-local-rate" in names) != ("local_rate_not_checked" in fit), name
    reason = res.meta["fits"]["f=1"]["rate_not_checked"]
    assert "at 4 iterates only (a rate fit needs 6)" in reason  # soft PI: quadratic, 4 iterates


def test_entropy_npg_local_rate_fails_for_a_step_other_than_the_claimed_one(monkeypatch):
    # the run claims α = 1 − ητ/(1−γ) for the η it names; the algorithm runs at η/2 instead
    real = entropy_npg.entropy_regularized_npg

    def half_step(mdp, *, eta, **kw):
        return real(mdp, eta=eta / 2, **kw)

    config = dataclasses.replace(entropy_npg.Config.quick(), states=20, fractions=(0.3,))
    assert all(_verdicts(entropy_npg.run(config, seed=0)).values())
    monkeypatch.setattr(entropy_npg, "entropy_regularized_npg", half_step)
    v = _verdicts(entropy_npg.run(config, seed=0))
    assert v["f=0.3-local-rate"] is False  # contracts at 0.85, not the claimed 0.7


# --- td-linear -------------------------------------------------------------------------


def test_td_linear_rate_fails_with_a_constant_step(monkeypatch):
    # a constant step leaves TD(0) at a noise floor: slope ≈ 0, not −1/2
    real = td_linear.td_linear

    def constant(mdp, pi, Phi, *, step_size, **kw):
        return real(mdp, pi, Phi, step_size=step_size(0), **kw)

    config = td_linear.Config.quick()  # (40 runs of 2·10⁴ steps: fewer do not measure −1/2)
    assert _verdicts(td_linear.run(config, seed=0))["td-rate"] is True
    monkeypatch.setattr(td_linear, "td_linear", constant)
    res = td_linear.run(config, seed=0)
    assert _verdicts(res)["td-rate"] is False
    assert res.meta["fit"]["ci"][0] > -0.5  # the interval, not only the point, excludes −1/2


# --- pmd-linear ------------------------------------------------------------------------


def test_pmd_linear_linear_rate_claims_fail_with_a_constant_step(monkeypatch):
    config = dataclasses.replace(pmd_linear.Config.quick(), states=20, constant_iterations=20)
    assert all(_verdicts(pmd_linear.run(config, seed=0)).values())
    # η_k = η_0 for all k instead of η_0/γ^k: the linear-rate theorem does not apply
    monkeypatch.setattr(pmd_linear, "geometric_step_sizes", lambda eta0, ratio: constant_step(eta0))
    v = _verdicts(pmd_linear.run(config, seed=0))
    # KL PMD slows to a fitted contraction 0.93 > γ = 0.9 and leaves γ^k(Δ_0 + D_0/(γη_0)) by
    # 2.1×; Euclidean PMD with η = 1 happens to contract at 0.898 here, so it is not asserted
    assert v["kl-rate"] is False and v["kl-bound"] is False


def test_pmd_linear_constant_bound_is_the_one_the_docstring_states():
    # regression: the docstring said (D_0/((1−γ)η) + 1/(1−γ)²)/k; the check uses span(r)
    assert "span(r)/(1−γ)^2)/k" in pmd_linear.__doc__
    assert "1/(1−γ)^2)/k" not in pmd_linear.__doc__.replace("span(r)/(1−γ)^2)/k", "")
    config = dataclasses.replace(pmd_linear.Config.quick(), states=20, constant_iterations=20)
    res = pmd_linear.run(config, seed=0)
    mdp = pmd_linear.garnet(
        config.states, config.actions, config.branching, gamma=config.gamma, rng=0
    )
    sol = policy_iteration(mdp)
    d_star = np.asarray(state_occupancy(mdp, sol.policy, np.full(mdp.S, 1.0 / mdp.S)))
    pi0 = np.full((mdp.S, mdp.A), 1.0 / mdp.A)
    D0 = float(kl_to_policy(mdp, sol.policy, pi0, d_star))
    R = np.asarray(mdp.R)
    g, eta = config.gamma, config.constant_eta
    k = np.arange(1, config.constant_iterations + 1)
    expected = (D0 / ((1 - g) * eta) + (R.max() - R.min()) / (1 - g) ** 2) / k
    np.testing.assert_allclose(res.curves["constant"]["bound"], expected, rtol=1e-12)


# --- q-replay --------------------------------------------------------------------------


def test_q_replay_replay_claim_fails_when_replay_runs_with_a_too_large_step(monkeypatch):
    # replay with a constant step 1 overwrites Q(s, a) with each noisy sample: worse, not better
    real = q_replay.q_learning_replay

    def overwrite(mdp, *, step_size, **kw):
        return real(mdp, step_size=constant_step(1.0), **kw)

    config = dataclasses.replace(
        q_replay.Config.quick(),
        steps=2000,
        runs=10,
        replay=((4, 1),),
        replay_claim_steps=2000,
        va_steps=200,
        sync_iterations=40,
    )
    assert _verdicts(q_replay.run(config, seed=0))["replay-4-1"] is True
    monkeypatch.setattr(q_replay, "q_learning_replay", overwrite)
    assert _verdicts(q_replay.run(config, seed=0))["replay-4-1"] is False


# --- solver-comparison -----------------------------------------------------------------


def test_solver_comparison_span_count_claim_fails_for_a_sup_norm_stopping_rule(monkeypatch):
    # value iteration stopped by the sup-norm certificate γ/(1−γ)‖T v − v‖∞ < tol instead of the
    # span one: ‖T v − v‖∞ decays like γ^k on a garnet (vi-rates' tightness claim), so it needs
    # ≈ log(γ max r/((1−γ) tol))/log(1/γ) ≈ 330 sweeps at γ = 0.95, tol = 1e-6, more than the
    # span rule's bound (318 and 315 for S = 25, 50; the span rule itself stops after 28)
    def sup_norm_vi(mdp, *, tol=1e-8, **kw):
        g = float(mdp.gamma)
        v = np.zeros(mdp.S)
        for k in range(1, 10**5):
            nxt = np.asarray(bellman_optimality_operator(mdp, v))
            if g / (1 - g) * np.max(np.abs(nxt - v)) < tol:
                return SimpleNamespace(V=nxt, iterations=k)
            v = nxt
        raise AssertionError("sup-norm VI did not stop")

    config = dataclasses.replace(solver_comparison.Config.quick(), sizes=(25, 50), repeats=1)
    assert all(_verdicts(solver_comparison.run(config, seed=0)).values())
    monkeypatch.setattr(solver_comparison, "value_iteration", sup_norm_vi)
    v = _verdicts(solver_comparison.run(config, seed=0))
    assert v["vi-span-iterations"] is False


@pytest.mark.parametrize("shift", [-1, 1])
def test_solver_comparison_puterman_claims_fail_outside_the_predicted_range(monkeypatch, shift):
    # a stopping index below N_lo or above N_hi is caught by the lower or the upper claim
    config = dataclasses.replace(solver_comparison.Config.quick(), sizes=(25,), repeats=1)
    mdp = solver_comparison.garnet(25, config.actions, config.branching, gamma=config.gamma, rng=0)
    R = np.asarray(mdp.R).max(axis=1)
    ends = {
        -1: solver_comparison.vi_iterations_to_threshold(
            config.epsilon, config.gamma, float(R.min())
        )
        - 1,
        1: solver_comparison.vi_iterations_to_threshold(
            config.epsilon, config.gamma, float(R.max())
        )
        + 1,
    }
    monkeypatch.setattr(solver_comparison, "puterman_stopping_index", lambda m, e: ends[shift])
    v = _verdicts(solver_comparison.run(config, seed=0))
    assert v["vi-puterman-lower" if shift < 0 else "vi-puterman-upper"] is False


def test_q_replay_docstring_quotes_the_replay_margins_it_measures():
    # regression: the docstring gave the margin as 0.62–0.82 at t = 200; over seeds 0–3 the three
    # schemes' worst ratios are 0.62–0.80, 0.37–0.62 and 0.61–0.82 (K = 4, F = 1 below 0.62 at
    # every seed). Seed 0 (0.622, 0.372, 0.608) is checked here; seeds 1–3 give 0.788/0.592/0.774,
    # 0.801/0.618/0.820 and 0.681/0.467/0.701 (quick preset; ~10 s each, not rerun in the tests)
    quoted = {(1, 1): (0.62, 0.80), (4, 1): (0.37, 0.62), (4, 4): (0.61, 0.82)}
    doc = " ".join(q_replay.__doc__.split())
    for (K, F), (lo, hi) in quoted.items():
        assert f"{lo:.2f}–{hi:.2f} (``K = {K}, F = {F}``)" in doc
    config = dataclasses.replace(q_replay.Config.quick(), va_steps=200, sync_iterations=40)
    res = q_replay.run(config, seed=0)  # the replay part is the quick preset's own
    for (K, F), (lo, hi) in quoted.items():
        check = next(c for c in res.checks if c.claim.name == f"replay-{K}-{F}").bound_check
        assert res.meta["replay_first_checked"][f"K={K},F={F}"] == 200
        assert lo - 0.005 <= check.worst_ratio <= hi + 0.005


def test_td_linear_docstring_describes_the_figure_it_draws():
    # regression: the docstring described an older figure (RMS against t; right panel a curve in t
    # settling at the fixed point); the plot draws RMS and geometric mean against t + t_0 and,
    # right, errors and bounds against λ with TD(0)'s final error as a star at λ = 0
    figure_text = " ".join(td_linear.__doc__.split("Claims checked:")[0].split())
    for phrase in ("against ``t + t_0``", "geometric mean", "against ``λ``", "star at ``λ = 0``"):
        assert phrase in figure_text, phrase
    res = td_linear.run(td_linear.Config.quick(), seed=0)
    fig = td_linear.plot(res)
    left, right = fig.axes[0], fig.axes[1]
    assert left.get_xlabel() == "t + t₀" and right.get_xlabel() == "λ"
    labels = [t.get_text() for t in left.get_legend().get_texts()]
    assert "RMS over runs" in labels and "geometric mean over runs" in labels
    lam = list(td_linear.Config.quick().lams)
    curves = [ln for ln in right.get_lines() if list(ln.get_xdata()) == lam]
    assert len(curves) == 3  # the exact error and its two bounds, one point per λ
    star = [ln for ln in right.get_lines() if ln.get_marker() == "*"]
    assert len(star) == 1 and list(star[0].get_xdata()) == [0.0]


def test_vi_rates_rate_tolerance_covers_the_recorded_roundoff():
    # regression: the docstring justified tol = 1e-6 by "relative accuracy ≤ 1e-3 ... over ≥ 100
    # points"; the gridworld windows hold 21–23 iterates, and 1e-3 over n points allows ≈ 3e-3/n.
    # The run now records the bound γ·expm1(Σ|w_k| δ/(e_k − 2δ)) per panel; on the quick preset
    # it is below 2e-7, inside the claim's tol
    from rltheory.experiments import vi_rates

    assert "≥ 100 points" not in vi_rates.__doc__
    res = vi_rates.run(vi_rates.Config.quick(), seed=1)
    for panel, f in res.meta["fits"].items():
        assert 0.0 < f["rate_roundoff"] < 2e-7 < vi_rates.RATE_TOL, panel
    # the bound itself: errors off by exactly δ in the worst direction move the slope by Σ|w_k|ε_k
    k = np.arange(50.0)
    e = 0.9**k
    delta = 1e-3 * e.min()
    x = k - k.mean()
    tilted = e + delta * np.sign(x)  # raises the late errors, lowers the early ones: ρ up
    slope = np.polyfit(k, np.log(tilted), 1)[0]
    assert np.exp(slope) - 0.9 <= vi_rates.rate_roundoff(k, tilted, delta, 0.9)
    assert np.exp(slope) - 0.9 >= 0.5 * vi_rates.rate_roundoff(k, tilted, delta, 0.9)
    assert vi_rates.rate_roundoff(k, e, e.min() / 2, 0.9) == float("inf")


def test_pmd_linear_docstring_gives_each_panel_its_axes():
    # regression: the docstring called the whole figure semilog; the constant-step panel is log–log
    assert "left (semilog)" in pmd_linear.__doc__ and "right\n(log–log)" in pmd_linear.__doc__
    config = dataclasses.replace(pmd_linear.Config.quick(), states=20, constant_iterations=20)
    fig = pmd_linear.plot(pmd_linear.run(config, seed=0))
    left, right = fig.axes[0], fig.axes[1]
    assert (left.get_xscale(), left.get_yscale()) == ("linear", "log")
    assert (right.get_xscale(), right.get_yscale()) == ("log", "log")
    labels = [t.get_text() for t in left.get_legend().get_texts()]
    assert any("γ^k(Δ_0 + D_0/(γη_0))" in s for s in labels)  # the overlaid bound
