"""Experiment registry, ExperimentResult, the two MDP-core reproductions, and plots."""

from __future__ import annotations

import json

import numpy as np
import pytest
from _platform_toy import ToyConfig
from matplotlib.figure import Figure

from rltheory import experiments
from rltheory.bounds import Claim, check_bound, fit_linear_rate
from rltheory.experiments import Experiment, ExperimentResult, register
from rltheory.experiments.vi_rates import vi_error_curve
from rltheory.mdp import garnet, gridworld, policy_iteration
from rltheory.plot import convergence_plot, figure, occupancy_heatmap, png_bytes, value_heatmap


def _run(config, *, seed=0, progress=False):
    fit = fit_linear_rate(np.arange(10), 0.5 ** np.arange(10))
    return ExperimentResult("toy", {"n": config.n}, {"p": {"k": list(range(10))}},
                            [Claim("c", "ρ = 1/2", "closed form", 0.5, "rate").check(fit)])


def test_registry_lists_both_core_experiments_and_rejects_bad_entries():
    names = experiments.names()
    assert {"vi-rates", "solver-comparison"} <= set(names) and names == sorted(names)
    exp = experiments.get("vi-rates")
    assert exp.config(False) == exp.config_cls.quick() and exp.config(True) == exp.config_cls.full()
    with pytest.raises(KeyError, match="no experiment named 'nope'; known: \\["):
        experiments.get("nope")
    with pytest.raises(ValueError, match="kebab-case"):
        Experiment("Bad_Name", "t", ToyConfig, _run, lambda r: None)
    with pytest.raises(TypeError, match="dataclass"):
        Experiment("ok-name", "t", dict, _run, lambda r: None)
    with pytest.raises(ValueError, match="already registered by rltheory.experiments.vi_rates"):
        register(Experiment("vi-rates", "clash", ToyConfig, _run, lambda r: None))
    assert experiments.get("vi-rates").run.__module__ == "rltheory.experiments.vi_rates"


def test_experiment_result_pass_semantics_and_strict_json():
    r = _run(ToyConfig())
    assert r.passed
    assert not ExperimentResult("x", {}, {}, []).passed  # nothing checked: no pass
    failing = ExperimentResult("x", {}, {}, r.checks + [Claim("b", "s", "src", None, "bound").check(check_bound([2.0], [1.0]))])
    assert not failing.passed
    d = json.loads(json.dumps(failing.to_json_dict(), allow_nan=False))
    assert d["pass"] is False and d["checks"][1]["bound_check"]["worst_ratio"] == 2.0
    assert {"rltheory", "numpy", "python"} <= set(d["versions"])
    with pytest.raises(TypeError, match=r"checks\[0\]"):
        ExperimentResult("x", {}, {}, ["not a check"])


def test_vi_rates_quick_passes_and_measures_rates_near_gamma():
    exp = experiments.get("vi-rates")
    res = exp.reproduce()
    assert res.passed, [c.to_dict() for c in res.checks if not c.passed]
    by = {c.claim.name: c for c in res.checks}
    for g in exp.config_cls.quick().gammas:
        assert abs(by[f"garnet-{g}-rate"].fit.rate - g) < 1e-3  # γ^k is attained on the garnet
        assert by[f"gridworld-{g}-rate"].fit.rate < g  # the absorbing goal makes VI faster
        assert by[f"garnet-{g}-bound"].bound_check.worst_ratio > 0.99  # tight
    fig = exp.plot(res)
    assert isinstance(fig, Figure) and png_bytes(fig)[:8] == b"\x89PNG\r\n\x1a\n"
    for ax in fig.axes:
        labels = [t.get_text() for t in ax.get_legend().get_texts()]
        assert any("γ^k" in s for s in labels) and any("CI" in s for s in labels)


def test_vi_rates_detects_a_wrong_claim():
    # The same curve judged against a false theorem ("VI contracts at γ²") must fail.
    mdp = garnet(30, 3, 4, gamma=0.9, rng=1)
    k, err = vi_error_curve(mdp, policy_iteration(mdp).V, max_iter=1000)
    fit = fit_linear_rate(k, err, window=(k[-1] // 2, k[-1]))
    assert not Claim("false", "ρ ≤ γ²", "none", 0.81, "rate_at_most", 1e-6).check(fit).passed
    assert not check_bound(err, 0.9 ** (2 * k) * err[0]).holds


def test_solver_comparison_quick_passes_with_counts_inside_predictions():
    exp = experiments.get("solver-comparison")
    res = exp.reproduce()
    assert res.passed, [c.to_dict() for c in res.checks if not c.passed]
    c = {k: np.asarray(v) for k, v in res.curves["garnet"].items()}
    assert np.all(c["puterman_lo"] <= c["puterman_k"]) and np.all(c["puterman_k"] <= c["puterman_hi"])
    assert np.all(c["pi_iterations"] <= c["vi_iterations"])  # PI needs fewer (costlier) iterations
    assert np.all(c["max_value_gap"] < 1e-5)  # all four solvers agree on V*
    assert isinstance(exp.plot(res), Figure)


def test_convergence_plot_draws_measured_bound_and_fit():
    fig, axes = figure(1, 1)
    ax = axes[0, 0]
    k = np.arange(30)
    err = 0.8**k
    err[5] = 0.0  # masked on a log axis, never clipped
    fit = fit_linear_rate(k[6:], err[6:])
    convergence_plot(ax, k, err, label="measured", bound=0.9**k, bound_label="γ^k", fit=fit, logx=False)
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert labels[0] == "measured" and labels[1] == "γ^k" and labels[2].startswith("fit: ρ 0.800")
    assert np.isnan(ax.lines[0].get_ydata()[5]) and ax.get_yscale() == "log"
    with pytest.raises(ValueError, match="same length"):
        convergence_plot(ax, k, err[:-1], label="x")
    with pytest.raises(ValueError, match="bound must have the same length"):
        convergence_plot(ax, k, err, label="x", bound=err[:-1])


def test_heatmaps_place_states_and_arrows():
    g = gridworld((3, 4), slip=0.0, gamma=0.9, walls=[(1, 1)])
    res = policy_iteration(g.mdp)
    fig, axes = figure(1, 2)
    value_heatmap(axes[0, 0], res.V, g, policy=res.policy, title="V*")
    img = axes[0, 0].images[0].get_array()
    assert np.ma.is_masked(img[1, 1]) or np.isnan(img[1, 1])  # the wall (NaN, masked by imshow)
    assert img[2, 3] == pytest.approx(0.0)  # absorbing goal, V* = 0
    assert img[2, 2] == pytest.approx(1.0)  # next to the goal: one step pays 1
    quiv = axes[0, 0].collections[0]
    assert quiv.N == g.mdp.S - 1  # an arrow in every state but the goal
    occupancy_heatmap(axes[0, 1], np.full((g.mdp.S, 4), 1 / (4 * g.mdp.S)), grid=g)
    with pytest.raises(ValueError, match="need moves"):
        value_heatmap(axes[0, 0], np.zeros(4), (2, 2), policy=np.zeros(4, dtype=int))
    with pytest.raises(ValueError, match="needs 6"):
        value_heatmap(axes[0, 0], np.zeros(5), (2, 3))
    with pytest.raises(ValueError, match=r"policy\[1\] = 7"):
        value_heatmap(axes[0, 0], np.zeros(4), (2, 2), policy=[0, 7, 0, 0], moves=[(0, 1)])
    with pytest.raises(ValueError, match=r"d\[0, 1\] = -1.0"):
        occupancy_heatmap(axes[0, 1], [[0.0, -1.0]])


def test_occupancy_matrix_and_located_plot_errors():
    fig, axes = figure(1, 2)
    d = np.array([[0.1, 0.2], [0.3, 0.4]])
    occupancy_heatmap(axes[0, 0], d, action_names=["left", "right"], title="d*")
    ax = axes[0, 0]
    np.testing.assert_array_equal(ax.images[0].get_array(), d)  # the (S, A) matrix as is
    assert [t.get_text() for t in ax.get_xticklabels()] == ["left", "right"] and ax.get_title() == "d*"
    occupancy_heatmap(axes[0, 1], d.sum(1))  # a state occupancy: one column
    assert axes[0, 1].images[0].get_array().shape == (2, 1)
    assert fig.axes[-1].get_ylabel() == "d(s)"  # its colorbar
    with pytest.raises(ValueError, match=r"d must have shape \(S, A\) or \(S,\); got \(1, 1, 2\)"):
        occupancy_heatmap(ax, np.zeros((1, 1, 2)))
    with pytest.raises(ValueError, match=r"grid must be a GridWorld or a \(rows, cols\) pair; got 'big'"):
        value_heatmap(ax, np.zeros(4), "big")
    g = gridworld((2, 2), slip=0.0, gamma=0.9)
    with pytest.raises(ValueError, match="V has 5 entries but the gridworld has 4 states"):
        value_heatmap(ax, np.zeros(5), g)
    with pytest.raises(ValueError, match="policy has 3 entries but V has 4"):
        value_heatmap(ax, np.zeros(4), g, policy=np.zeros(3, dtype=int))
