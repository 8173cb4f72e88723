"""`rltheory reproduce`: the console line of a rate claim judged without a fit, and a run that
returns no ExperimentResult."""

from __future__ import annotations

import math

import pytest
from _platform_toy import ToyConfig

from rltheory.bounds import BoundCheck, Claim, ClaimCheck
from rltheory.cli import main
from rltheory.experiments import Experiment, ExperimentResult, base
from rltheory.plot import figure


def _no_fit_run(config, *, seed=0, progress=False):
    # too few points to fit: the experiment gives the verdict itself (offline-pessimism's
    # bound-slope claims), with a placeholder BoundCheck of 0 points as evidence
    claim = Claim("slope", "s = -1/2", "made up", -0.5, "rate", tol=0.12)
    bc = BoundCheck(worst_ratio=math.inf, holds=False, argmax=(0,), n=0)
    return ExperimentResult("toy-no-fit", {}, {}, [ClaimCheck(claim, bound_check=bc, passed=False)])


def test_a_rate_claim_without_a_fit_is_not_printed_as_a_bound(tmp_path, capsys, monkeypatch):
    # the line read "[FAIL] slope: worst measured/bound ratio inf at [0] over 0 points": a bound
    # that was never checked, for a claim about a rate
    exp = Experiment("toy-no-fit", "A toy", ToyConfig, _no_fit_run, lambda r: figure()[0])
    monkeypatch.setitem(base._REGISTRY, "toy-no-fit", exp)
    assert main(["reproduce", "toy-no-fit", "--quiet", "--out", str(tmp_path)]) == 1
    line = next(x for x in capsys.readouterr().out.splitlines() if " slope:" in x)
    assert line == (
        "  [UNMEASURED] slope: no fitted rate (the experiment's own verdict) vs claimed rate -0.5 ± 0.12"
    )


def test_a_run_that_returns_no_result_is_named(tmp_path, monkeypatch):
    # the CLI called run itself and failed on the dict: "'dict' object has no attribute 'to_json_dict'"
    exp = Experiment(
        "toy-dict", "A toy", ToyConfig, lambda c, *, seed, progress: {"pass": True}, lambda r: None
    )
    monkeypatch.setitem(base._REGISTRY, "toy-dict", exp)
    with pytest.raises(
        TypeError, match=r"experiment 'toy-dict': run returned dict, not ExperimentResult"
    ):
        main(["reproduce", "toy-dict", "--quiet", "--out", str(tmp_path)])
    assert list(tmp_path.iterdir()) == []
