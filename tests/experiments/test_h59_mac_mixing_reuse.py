"""mac-mixing's learning panel runs each (method, instance, seed) once, and the split module keeps its names.

Profile of the quick run (~12 s): all but ~0.3 s is the learning panel's 36 runs of 2·10⁴ samples
(vanilla AC 24, MAC 12); the exact estimator study judged in ``quick()`` takes the rest. At the
tuning instance the oracle steps are the tuned steps times ``t_mix,fast/t_mix = 1``, the same method
on the same instance with the same seeds, and those 4 runs were repeated. They are now reused,
36 → 32 runs, with identical curves and verdicts.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from rltheory.experiments import _mac_mixing_dial, _mac_mixing_estimator, mac_mixing
from rltheory.experiments.mac_mixing import Config, run

SMALL = Config(
    ring_sizes=(4,),
    estimator_laziness=(0.5,),
    laziness=(0.5, 0.9375),
    budget=600,
    seeds=2,
)


def test_the_oracle_at_the_tuning_instance_reuses_the_vanilla_runs(monkeypatch):
    calls = []
    real = _mac_mixing_dial.learning_gap

    def counted(method, mdp, g_star, g_unif, *, budget, seed):
        calls.append((method, seed))
        return real(method, mdp, g_star, g_unif, budget=budget, seed=seed)

    monkeypatch.setattr(_mac_mixing_dial, "learning_gap", counted)
    res = run(SMALL, seed=1)
    # 2 instances × 3 methods × 2 seeds, less the 2 oracle runs at the tuning instance
    assert len(calls) == 10
    L = res.curves["learning-dense"]
    assert L["oracle"][0] == L["vanilla"][0]
    # every reused value is what a run of its own gives (seeds 1000·seed + k)
    mdp, g_star, g_unif, _ = _mac_mixing_dial._instance(SMALL, 0.5, "dense")
    oracle = ("vanilla", *SMALL.vanilla_steps)
    own = [real(oracle, mdp, g_star, g_unif, budget=SMALL.budget, seed=1000 + k) for k in range(2)]
    assert np.array_equal(L["oracle"][0], own)
    assert (
        L["oracle"][1] != L["vanilla"][1]
    )  # at t_mix 31 the oracle steps differ: run on their own
    assert res.passed


def test_mac_mixing_is_split_below_the_module_size_limit():
    for mod in (mac_mixing, _mac_mixing_estimator, _mac_mixing_dial):
        n = len(Path(mod.__file__).read_text(encoding="utf-8").splitlines())
        assert n < 500, (mod.__name__, n)
    assert mac_mixing.estimator_bias is _mac_mixing_estimator.estimator_bias
    assert "estimator_bias" in mac_mixing.__all__
