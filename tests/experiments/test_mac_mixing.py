"""mac-mixing: exact estimator claims on both families, the tuning protocol, reproducibility."""

from __future__ import annotations

import numpy as np
import pytest

from rltheory.experiments._mac_mixing_dial import _instance
from rltheory.experiments.mac_mixing import (
    Config,
    estimator_bias,
    learning_gap,
    plot,
    retuning,
    run,
)
from rltheory.mdp import ring_mdp

SMALL = Config(
    ring_sizes=(4, 8),
    estimator_laziness=(0.5, 0.9375),
    laziness=(0.5, 0.9375),
    budget=1500,
    seeds=2,
    rewards=("dense", "sparse"),
)


def test_small_run_passes_estimator_claims_and_is_reproducible():
    a, b = run(SMALL, seed=3), run(SMALL, seed=3)
    assert a.passed and [c.claim.name for c in a.checks] == ["mlmc-bias-bound", "mlmc-vs-plain"]
    fixed = {"tuned": False, "vanilla": list(SMALL.vanilla_steps), "mac": list(SMALL.mac_settings)}
    assert a.meta["tuning"] == {"dense": fixed, "sparse": fixed}
    for reward in ("dense", "sparse"):
        assert a.curves[f"learning-{reward}"] == b.curves[f"learning-{reward}"]
        L = a.curves[f"learning-{reward}"]
        # uniform policy on the 6-cycle at α = 1/2 and 15/16 (reward-free)
        assert L["t_mix"] == [4, 31]
        for key in ("vanilla", "oracle", "mac"):
            assert np.asarray(L[key]).shape == (2, 2)
        for row in a.meta["learning_summary"][reward]:
            for key in ("vanilla", "oracle", "mac", "mac_minus_vanilla"):
                mean, lo, hi = row[key]
                assert lo <= mean <= hi
    assert len(plot(a).axes) == 3  # estimator panel + one learning panel per reward


def test_tuning_protocol_selects_on_the_fastest_instance():
    # steps of 1e-4 cannot move the uniform policy in 1500 samples (gap ≈ 1), so the search must
    # pick the other grid point for each method
    cfg = Config(
        ring_sizes=(4,),
        estimator_laziness=(0.5,),
        laziness=(0.5,),
        budget=1500,
        seeds=1,
        tune=True,
        tune_seeds=2,
        vanilla_grid=((1e-4, 1e-4), (0.5, 2.0)),
        mac_grid=((1e-4, 1e-4, 16), (1.0, 0.2, 16)),
    )
    tun = run(cfg).meta["tuning"]["dense"]
    assert tun["vanilla"] == [0.5, 2.0] and tun["mac"] == [1.0, 0.2, 16]
    assert tun["vanilla_scores"][0] > 0.9 and tun["mac_scores"][0] > 0.9


def test_retuning_searches_on_the_given_instance():
    # the same two-point grids as above, searched on the slow instance itself: the best point's
    # score is the mean gap of direct runs with the tuning seeds, and the frozen grid point loses
    cfg = Config(
        budget=1500,
        tune_seeds=2,
        vanilla_grid=((1e-4, 1e-4), (0.5, 2.0)),
        mac_grid=((1e-4, 1e-4, 16), (1.0, 0.2, 16)),
    )
    out = retuning(cfg, 0.9375, "dense")
    assert out["t_mix"] == 31
    mdp, g_star, g_unif, _ = _instance(cfg, 0.9375, "dense")
    for name, best in (("vanilla", [0.5, 2.0]), ("mac", [1.0, 0.2, 16])):
        assert out[name]["best"] == best and out[name]["scores"][0] > 0.9
        direct = np.mean(
            [
                learning_gap((name, *best), mdp, g_star, g_unif, budget=1500, seed=10**6 + k)
                for k in range(2)
            ]
        )
        assert out[name]["score"] == pytest.approx(direct, abs=1e-12)
    with pytest.raises(ValueError, match=r"laziness must lie in \[0, 1\) on the dial .*got 1\.0"):
        retuning(cfg, 1.0)
    with pytest.raises(ValueError, match="reward must be 'sparse' or 'dense'; got 'flat'"):
        retuning(cfg, 0.5, "flat")


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


def test_vanilla_claim_is_judged_on_held_out_runs_and_can_fail():
    # 300 samples: the oracle's steps (the fixed ones × t_mix,fast/t_mix) are too small to learn in so short
    # a run, so they do not end better than the fixed steps and the claim fails; the held-out instances are
    # those with α ≥ judge_from other than the tuning instance
    cfg = Config(
        ring_sizes=(4,),
        estimator_laziness=(0.5,),
        laziness=(0.5, 0.75, 0.96875),
        budget=300,
        seeds=3,
        rewards=("sparse",),
        judge_from=0.75,
    )
    res = run(cfg)
    claim = res.checks[-1]
    assert claim.claim.name == "vanilla-needs-mixing-steps" and not claim.passed and not res.passed
    assert res.meta["vanilla_claim"]["t_mix"] == [8, 62] and res.meta["vanilla_claim"]["runs"] == 6
    with pytest.raises(ValueError, match="judge_reward 'dense' must be one of rewards"):
        run(
            Config(
                ring_sizes=(4,),
                estimator_laziness=(0.5,),
                laziness=(0.5, 0.75),
                budget=50,
                seeds=1,
                rewards=("sparse",),
                judge_from=0.75,
                judge_reward="dense",
            )
        )


@pytest.mark.parametrize("start", [-1, 6, True, 2.0])
def test_estimator_bias_needs_a_state_index(start) -> None:
    """start=-1 silently meant state n − 1, start=n raised an IndexError and start=True built a
    (1, n) start law; each is now refused, naming the range."""
    with pytest.raises(ValueError, match=r"start must be a state index in \[0, 6\) or None; got "):
        estimator_bias(6, 16, start)


def test_estimator_bias_numpy_start_equals_int() -> None:
    a = estimator_bias(6, 16, np.int64(2))
    b = estimator_bias(6, 16, 2)
    assert a["mlmc"] == b["mlmc"] and a["plain"] == b["plain"]


def test_dial_instance_accepts_numpy_laziness() -> None:
    """np.float32(0.5) was refused ('laziness must lie in [0, 1)'); it is the instance of 0.5."""
    cfg = Config()
    a = _instance(cfg, np.float32(0.5), "dense")
    b = _instance(cfg, 0.5, "dense")
    assert a[1:] == b[1:]
    with pytest.raises(ValueError, match=r"laziness must lie in \[0, 1\)"):
        _instance(cfg, True, "dense")


def test_estimator_bias_takes_a_numpy_T_max() -> None:
    """estimator_bias(6, np.int64(16)) raised AttributeError ('numpy.int64' object has no attribute
    'bit_length') from the integer top-level computation; it is the study at T_max = 16."""
    a = estimator_bias(6, np.int64(16))
    b = estimator_bias(6, 16)
    assert a["mlmc"] == b["mlmc"] and a["avg_tv"] == b["avg_tv"]


@pytest.mark.parametrize(
    ("kw", "msg"),
    [
        (dict(seeds=0), r"Config\.seeds must be an integer >= 1; got 0"),
        (dict(seeds=True), r"Config\.seeds must be an integer >= 1; got True"),
        (dict(budget=0), r"Config\.budget must be an integer >= 1; got 0"),
        (dict(T_max=0), r"Config\.T_max must be an integer >= 1; got 0"),
        (dict(ring_sizes=()), r"Config\.ring_sizes must not be empty"),
        (dict(laziness=()), r"Config\.laziness must not be empty"),
        (dict(rewards=()), r"Config\.rewards must not be empty"),
    ],
)
def test_config_is_checked(kw, msg) -> None:
    """seeds=0 ran and reported NaN means with passed=True, seeds=True ran one seed, and an empty
    ring_sizes, laziness or rewards ended run with an IndexError."""
    with pytest.raises(ValueError, match=msg):
        Config(**kw)


def test_config_takes_numpy_integers() -> None:
    cfg = Config(
        ring_sizes=(4,),
        estimator_laziness=(0.5,),
        laziness=(0.5,),
        budget=np.int64(50),
        seeds=np.int64(1),
        T_max=np.int64(16),
    )
    assert run(cfg).checks[0].passed
