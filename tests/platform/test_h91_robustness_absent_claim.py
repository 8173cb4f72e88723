"""A seed report says at which seeds a claim was not checked at all.

Regression (helper-91, session 18): an experiment may leave a claim out of a run where its data
admit no check (entropy-npg's ``f=1-rate``). The report recorded such a claim over the seeds that
checked it only, so ``[2/2]`` for a claim that three of five runs never checked read like a full
pass, and the JSON had no field naming the other seeds. Now ``SeedReport.absent_seeds(name)`` and
each claim's ``absent_seeds`` in the JSON list them.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from _platform_toy import ToyConfig

from rltheory.bounds import Claim, fit_linear_rate
from rltheory.experiments import Experiment, ExperimentResult, base
from rltheory.experiments.robustness import seed_robustness
from rltheory.plot import figure

ALWAYS = Claim("always", "rho = 1/2", "closed form", 0.5, "rate", tol=0.01)
SOMETIMES = Claim("sometimes", "rho = 1/2", "closed form", 0.5, "rate", tol=0.01)


def _run(config, *, seed=0, progress=False):
    fit = fit_linear_rate(np.arange(10), 0.5 ** np.arange(10))
    checks = [ALWAYS.check(fit)]
    if seed % 2 == 0:  # odd seeds leave the claim out, as entropy-npg leaves out f=1-rate
        checks.append(SOMETIMES.check(fit))
    return ExperimentResult("toy-absent", {"n": config.n}, {}, checks)


@pytest.fixture
def toy(monkeypatch):
    exp = Experiment("toy-absent", "A toy", ToyConfig, _run, lambda r: figure()[0])
    monkeypatch.setitem(base._REGISTRY, "toy-absent", exp)
    return exp


def test_the_report_lists_the_seeds_that_did_not_check_a_claim(toy):
    rep = seed_robustness(toy, [0, 1, 2, 3, 4])
    assert rep.claim("sometimes").seeds == (0, 2, 4)
    assert rep.absent_seeds("sometimes") == (1, 3) and rep.absent_seeds("always") == ()
    d = json.loads(json.dumps(rep.to_json_dict(), allow_nan=False))
    by = {c["name"]: c for c in d["claims"]}
    assert by["sometimes"]["absent_seeds"] == [1, 3] and by["always"]["absent_seeds"] == []
    with pytest.raises(KeyError, match="no claim named 'never'"):
        rep.absent_seeds("never")


def test_reproduce_seeds_prints_the_seeds_that_did_not_check_a_claim(toy, tmp_path, capsys):
    # (lead, session 18) the summary line read "[3/3] sometimes" although 2 of 5 runs never
    # checked it; it now says so, also under --quiet
    from rltheory.cli import main

    for quiet in ([], ["--quiet"]):
        rc = main(["reproduce", "toy-absent", "--seeds", "0:5", "--out", str(tmp_path), *quiet])
        out = capsys.readouterr().out
        assert rc == 0
        assert "  [3/3] sometimes: measured" in out and "; not checked at seeds [1, 3]" in out
        assert "not checked" not in "".join(ln for ln in out.splitlines() if "] always:" in ln)
