"""Seed reports of a rate claim that some seeds cannot fit.

An experiment whose data admit no rate fit at some seed (fewer than 3 usable points) records
the claim with an explicit verdict and no RateFit (offline-pessimism's bound-slope claims):
``ClaimCheck(claim, bound_check=..., passed=False)``. Such a seed has no interval, hence no
level and nothing an interval could miss.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from _platform_toy import ToyConfig
from scipy import stats

from rltheory.bounds import BoundCheck, Claim, ClaimCheck, fit_linear_rate
from rltheory.cli import main
from rltheory.experiments import Experiment, ExperimentResult, base
from rltheory.experiments.robustness import seed_robustness
from rltheory.plot import figure

HALVING = Claim("halving", "rho = 1/2", "closed form", 0.5, "rate", tol=0.01)


def _run(config, *, seed=0, progress=False):
    if seed == 1:  # too few points to fit here: the claim fails with an explicit verdict
        bc = BoundCheck(worst_ratio=math.inf, holds=False, argmax=(0,), n=0)
        check = ClaimCheck(HALVING, bound_check=bc, passed=False)
    else:  # seeds 0 and 2: halving errors, rho = 1/2 exactly (seed 2: claimed 0.6, a miss)
        claim = (
            HALVING
            if seed != 2
            else Claim("halving", "rho = 0.6", "made up", 0.6, "rate", tol=0.01)
        )
        check = claim.check(fit_linear_rate(np.arange(10), 0.5 ** np.arange(10)))
    return ExperimentResult("toy-no-fit", {"n": config.n}, {}, [check])


@pytest.fixture
def toy(monkeypatch):
    exp = Experiment("toy-no-fit", "A toy", ToyConfig, _run, lambda r: figure()[0])
    monkeypatch.setitem(base._REGISTRY, "toy-no-fit", exp)
    return exp


def test_a_seed_without_a_fit_is_unmeasured_not_a_change_of_level(toy):
    # seed_robustness raised "claim 'halving' changed kind/level between seeds (rate/0.95 before,
    # rate/None now)" at seed 1, so `reproduce --seeds` crashed on such an experiment
    rep = seed_robustness(toy, [0, 1, 2])
    (c,) = rep.claims
    assert c.level == 0.95 and c.failed_seeds == (1, 2) and c.unmeasured_seeds == (1,)
    # one interval miss (seed 2) among the two seeds with an interval: P[Bin(2, 0.05) >= 1]
    assert c.miss_p_value == pytest.approx(float(stats.binom.sf(0, 2, 0.05)))
    # the same when the seed without a fit comes first
    (c,) = seed_robustness(toy, [1, 0]).claims
    assert c.level == 0.95 and c.unmeasured_seeds == (1,) and c.miss_p_value == pytest.approx(1.0)


def test_the_claim_json_calls_a_rate_claim_without_a_fit_unmeasured(toy, tmp_path):
    # its verdict was "fail", as for an interval that excludes the claimed rate
    assert main(["reproduce", "toy-no-fit", "--seed", "1", "--quiet", "--out", str(tmp_path)]) == 1
    (check,) = json.loads((tmp_path / "toy-no-fit.json").read_text())["checks"]
    assert check["verdict"] == "unmeasured" and check["pass"] is False
    # one-sided claims judge a point estimate: their explicit verdicts without a fit stay "fail"
    at_most = Claim("slope", "s <= -0.4", "made up", -0.5, "rate_at_most", tol=0.1)
    bc = BoundCheck(worst_ratio=math.inf, holds=False, argmax=(0,), n=0)
    assert ClaimCheck(at_most, bound_check=bc, passed=False).to_dict()["verdict"] == "fail"


def test_seeds_cli_writes_the_report(toy, tmp_path):
    assert (
        main(["reproduce", "toy-no-fit", "--seeds", "0:3", "--quiet", "--out", str(tmp_path)]) == 1
    )
    (c,) = json.loads((tmp_path / "toy-no-fit.seeds.json").read_text())["claims"]
    assert c["unmeasured_seeds"] == [1] and c["failed_seeds"] == [1, 2] and c["level"] == 0.95
