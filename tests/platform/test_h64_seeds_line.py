"""What a rate claim that some seed could not fit measures, and how `reproduce --seeds` prints
its binomial screen."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from _platform_toy import ToyConfig

from rltheory.bounds import BoundCheck, Claim, ClaimCheck, check_bound, fit_linear_rate
from rltheory.cli import main
from rltheory.experiments import Experiment, ExperimentResult, base
from rltheory.experiments.robustness import ClaimSeeds
from rltheory.plot import figure

HALVING = Claim("halving", "rho = 1/2", "closed form", 0.5, "rate", tol=0.01)
PLACEHOLDER = BoundCheck(worst_ratio=math.inf, holds=False, argmax=(0,), n=0)


def _run(config, *, seed=0, progress=False):
    if seed == 1:  # too few points to fit: an explicit verdict on a placeholder BoundCheck
        check = ClaimCheck(HALVING, bound_check=PLACEHOLDER, passed=False)
    else:  # rho = 1/2 exactly; at seed 2 the claimed 0.6 is an interval miss
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


def test_the_seeds_line_counts_misses_as_the_screen_does(toy, tmp_path, capsys):
    # it printed "P[misses >= 2] ... = 0.0975" (failed seeds 1 and 2) for p = P[Bin(2, 0.05) >= 1]:
    # seed 1 has no interval and is left out of the screen; and "measured 0.5 .. 0.5 .. inf",
    # the inf being the placeholder's worst ratio, not a rate
    assert (
        main(["reproduce", "toy-no-fit", "--seeds", "0:3", "--quiet", "--out", str(tmp_path)]) == 1
    )
    line = next(x for x in capsys.readouterr().out.splitlines() if "halving" in x)
    assert line == (
        "  [1/3] halving: measured 0.5 .. 0.5 .. 0.5 (min .. median .. max); failed at seeds [1, 2]"
        " ([1] unmeasured); P[misses >= 1 of 2] at level 0.95 = 0.0975"
    )
    (c,) = json.loads((tmp_path / "toy-no-fit.seeds.json").read_text())["claims"]
    assert c["measured"] == [0.5, None, 0.5] and c["measured_max"] == 0.5


def test_a_rate_claim_without_a_fit_measures_no_rate():
    check = ClaimCheck(HALVING, bound_check=PLACEHOLDER, passed=False)
    assert math.isnan(check.measured) and check.to_dict()["measured"] != math.inf
    # a bound claim measures its BoundCheck's worst ratio even when a fit is attached
    bound = Claim("b", "x <= y", "made up", kind="bound")
    fit = fit_linear_rate(np.arange(10), 0.5 ** np.arange(10))
    both = ClaimCheck(bound, fit=fit, bound_check=check_bound([1.0], [4.0]))
    assert both.passed and both.measured == 0.25


def test_the_summary_skips_seeds_that_measured_nothing():
    c = ClaimSeeds("c", "rate", 0.5, (0, 1, 2), (True, False, True), (0.4, math.nan, 0.6), 0.95)
    d = c.to_dict()
    assert (d["measured_min"], d["measured_median"], d["measured_max"]) == (0.4, 0.5, 0.6)
    none = ClaimSeeds("c", "rate", 0.5, (0,), (False,), (math.nan,), 0.95).to_dict()
    assert all(math.isnan(none[k]) for k in ("measured_min", "measured_median", "measured_max"))
