"""mac-mixing: exact estimator claims on both families, the tuning protocol, reproducibility."""

from __future__ import annotations

import numpy as np
import pytest

from rltheory.experiments.mac_mixing import Config, estimator_bias, learning_gap, run
from rltheory.mdp import ring_mdp

SMALL = Config(ring_sizes=(4, 8), estimator_laziness=(0.5, 0.9375), laziness=(0.5, 0.9375), budget=1500, seeds=2)


def test_small_run_passes_estimator_claims_and_is_reproducible():
    a, b = run(SMALL, seed=3), run(SMALL, seed=3)
    assert a.passed and [c.claim.name for c in a.checks] == ["mlmc-bias-bound", "mlmc-vs-plain"]
    assert a.curves["learning"] == b.curves["learning"]
    L = a.curves["learning"]
    assert L["t_mix"] == [4, 31]  # uniform policy on the 6-cycle at α = 1/2 and 15/16
    for key in ("vanilla", "oracle", "mac"):
        assert np.asarray(L[key]).shape == (2, 2)
    for row in a.meta["learning_summary"]:
        for key in ("vanilla", "oracle", "mac", "mac_minus_vanilla"):
            mean, lo, hi = row[key]
            assert lo <= mean <= hi
    assert a.meta["tuning"] == {"tuned": False, "vanilla": list(SMALL.vanilla_steps), "mac": list(SMALL.mac_settings)}


def test_tuning_protocol_selects_on_the_fastest_instance():
    # steps of 1e-4 cannot move the uniform policy in 1500 samples (gap ≈ 1), so the search must
    # pick the other grid point for each method
    cfg = Config(ring_sizes=(4,), estimator_laziness=(0.5,), laziness=(0.5,), budget=1500, seeds=1, tune=True,
                 tune_seeds=2, vanilla_grid=((1e-4, 1e-4), (0.5, 2.0)), mac_grid=((1e-4, 1e-4, 16), (1.0, 0.2, 16)))
    res = run(cfg)
    assert res.meta["tuning"]["vanilla"] == [0.5, 2.0] and res.meta["tuning"]["mac"] == [1.0, 0.2, 16]
    assert res.meta["tuning"]["vanilla_scores"][0] > 0.9 and res.meta["tuning"]["mac_scores"][0] > 0.9


@pytest.mark.parametrize("laziness", [0.5, 0.9375])
def test_estimator_bias_with_one_level_is_the_first_sample(laziness):
    # T_max = 1: j_max = 0, the MLMC estimate is x_0 and the equal-cost plain average has N̄ = 1 sample,
    # so both biases coincide; the bound with N = 1 is span·d(0) ≥ the bias of a single sample
    r = estimator_bias(6, 1, laziness=laziness, reward="dense")
    assert r["N_bar"] == 1 and r["mlmc"] == pytest.approx(r["plain"], rel=1e-12)
    assert np.all(r["abs_bias"] <= r["abs_bound"] + 1e-12)


def test_estimator_bias_is_the_same_problem_on_the_laziness_dial():
    # ∇J does not depend on α, but the start-state bias of a T_max-sample average grows with t_mix
    fast, slow = (estimator_bias(6, 64, laziness=a, reward="dense") for a in (0.5, 0.96875))
    assert slow["t_mix"] > 8 * fast["t_mix"]
    assert slow["mlmc"] > 4 * fast["mlmc"] and slow["avg_tv"] > 4 * fast["avg_tv"]


def test_learning_gap_validates_the_method():
    with pytest.raises(ValueError, match="method must start with 'vanilla' or 'mac'; got 'npg'"):
        learning_gap(("npg", 0.1), ring_mdp(4, reward="dense"), 0.75, 0.5, budget=10, seed=0)
