"""The offline experiments' configs are validated where they are built, naming the field.

Before, ``seeds=0`` ran and failed with "division by zero" (marlhf-coverage), "need at least one
array to stack" (hnpg-hybrid), "check_bound needs at least one point" (selective-coverage) or
"measured must be finite; measured[0] = nan" (offline-pessimism); ``sizes=()`` with "max() arg is
an empty sequence"; selective-coverage's N = 1 < H gave K_h = 0 and "bound must be finite".
"""

from __future__ import annotations

import numpy as np
import pytest

import rltheory.experiments.hnpg_hybrid as hn
import rltheory.experiments.marlhf_coverage as ml
import rltheory.experiments.offline_pessimism as op
import rltheory.experiments.selective_coverage as sc


@pytest.mark.parametrize(
    "mod", [op, sc, hn, ml], ids=["offline-pessimism", "selective-coverage", "hnpg", "marlhf"]
)
def test_quick_and_full_configs_are_valid(mod):
    # construction runs every field check; the presets must pass them and differ in size
    quick, full = mod.Config.quick(), mod.Config.full()
    assert isinstance(quick, mod.Config) and quick != full


@pytest.mark.parametrize(
    ("make", "msg"),
    [
        (lambda: op.Config(seeds=0), r"Config\.seeds must be an integer >= 1; got 0"),
        (lambda: op.Config(seeds=1.5), r"Config\.seeds must be an integer >= 1; got 1\.5"),
        (
            lambda: op.Config(sizes=()),
            r"Config\.sizes must be a non-empty tuple of integers >= 1; got \(\)",
        ),
        (lambda: op.Config(sizes=(400, 0)), r"Config\.sizes\[1\] must be an integer >= 1; got 0"),
        (lambda: op.Config(H=0), r"Config\.H must be an integer >= 1; got 0"),
        (
            lambda: op.Config(delta=1.0),
            r"Config\.delta must be a finite number in \(0, 1\); got 1\.0",
        ),
        (
            lambda: op.Config(trap_mass=0.0),
            r"Config\.trap_mass must be a finite number in \(0, 1\); got 0\.0",
        ),
        # old: "n_traps must be an integer >= 0; got -1" from inside the run (no such field)
        (
            lambda: op.Config(trap_mass=1e-4, sizes=(400, 800, 1600)),
            r"Config\.trap_mass · max\(sizes\)/S must exceed 1/2 .*= 0\.08",
        ),
        # old: refused by trap_behaviour only after the good-coverage half of the run
        # exactly 1/2 gives ⌈log2(1/2)⌉ + 1 = 0 traps
        (
            lambda: op.Config(trap_mass=0.5, sizes=(1, 2, 4), S=4),
            r"must exceed 1/2 .*got 0\.5 · 4/4 = 0\.5",
        ),
        (
            lambda: op.Config(trap_mass=0.9),
            r"Config\.trap_mass must be below 0\.500008 \(with 16 traps",
        ),
        (lambda: op.Config(n_good=9), r"Config\.n_good must be at most 8"),
        (lambda: sc.Config(seeds=0), r"Config\.seeds must be an integer >= 1; got 0"),
        (lambda: sc.Config(sizes=(1, 500)), r"Config\.sizes\[0\] must be an integer >= 2; got 1"),
        (
            lambda: sc.Config(behaviour_weight=True),
            r"Config\.behaviour_weight must be a finite number in \(0, 1\); got True",
        ),
        (
            lambda: sc.Config(delta=2.0),
            r"Config\.delta must be a finite number in \(0, 1\); got 2\.0",
        ),
        (lambda: hn.Config(seeds=0), r"Config\.seeds must be an integer >= 1; got 0"),
        (lambda: hn.Config(iterations=0), r"Config\.iterations must be an integer >= 1; got 0"),
        (
            lambda: hn.Config(A=1),
            r"Config\.A \(the adversarial behaviour drops the digit: at least 2 actions\) must be an integer >= 2; got 1",
        ),
        (lambda: hn.Config(eta=0.0), r"Config\.eta must be a finite number > 0; got 0\.0"),
        (lambda: ml.Config(seeds=0), r"Config\.seeds must be an integer >= 1; got 0"),
        (
            lambda: ml.Config(sizes=()),
            r"Config\.sizes must be a non-empty tuple of integers >= 1; got \(\)",
        ),
        (
            lambda: ml.Config(scale=float("nan")),
            r"Config\.scale must be a finite number > 0; got nan",
        ),
        (lambda: ml.Config(ridge=0), r"Config\.ridge must be a finite number > 0; got 0"),
        # a rate is fitted over the sizes: fewer than 3 different ones raised in fit_rate after the run
        (
            lambda: ml.Config(sizes=(200, 400)),
            r"Config\.sizes must hold at least 3 different sizes .*got \(200, 400\)",
        ),
        (
            lambda: sc.Config(sizes=(250, 250, 500)),
            r"Config\.sizes must hold at least 3 different sizes .*got \(250, 250, 500\)",
        ),
    ],
)
def test_bad_settings_are_named(make, msg):
    with pytest.raises(ValueError, match=msg):
        make()


@pytest.mark.parametrize(
    "mod", [op, sc, hn, ml], ids=["offline-pessimism", "selective-coverage", "hnpg", "marlhf"]
)
@pytest.mark.parametrize(
    ("seed", "exc", "msg"),
    [
        # old: default_rng(None) drew OS entropy (an unreproducible run, meta["seed"] = None),
        # default_rng(True) used the seed 1
        (None, TypeError, r"seed must be an int >= 0 \(runs are reproducible\); got NoneType"),
        (True, TypeError, r"seed must be an int >= 0 \(runs are reproducible\); got bool"),
        (-1, ValueError, r"seed must be an integer >= 0; got -1"),
    ],
)
def test_run_needs_an_int_seed(mod, seed, exc, msg):
    with pytest.raises(exc, match=msg):
        mod.run(mod.Config.quick(), seed=seed)


def test_a_numpy_integer_seed_runs_as_the_int():
    cfg = hn.Config(H=3, A=2, offline_episodes=3, iterations=2, n_online=2, seeds=1)
    a, b = hn.run(cfg, seed=np.int64(4)), hn.run(cfg, seed=4)
    assert a.curves == b.curves and a.meta["seed"] == 4
