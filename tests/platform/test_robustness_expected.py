"""Seed reports record each seed's claimed value when the claim's threshold depends on the run."""

from __future__ import annotations

import json

import numpy as np
import pytest
from _platform_toy import ToyConfig

from rltheory import experiments
from rltheory.bounds import Claim, fit_linear_rate
from rltheory.cli import main
from rltheory.experiments import Experiment, ExperimentResult, base
from rltheory.experiments.robustness import seed_robustness
from rltheory.plot import figure


def _run(config, *, seed=0, progress=False):
    """Exact halving judged against a fixed claim and against one whose value depends on the seed."""
    fit = fit_linear_rate(np.arange(10), 0.5 ** np.arange(10))
    return ExperimentResult(
        "toy-expected",
        {"n": config.n},
        {},
        [
            Claim("fixed", "rho <= 0.6", "made up", 0.6, "rate_at_most", tol=0.01).check(fit),
            Claim(
                "data",
                "rho <= c(seed)",
                "made up",
                (0.4, 0.5, 0.6)[seed],
                "rate_at_most",
                tol=(0.0, 0.01, 0.02)[seed],
            ).check(fit),
        ],
    )


@pytest.fixture
def toy(monkeypatch):
    exp = Experiment("toy-expected", "A toy", ToyConfig, _run, lambda r: figure()[0])
    monkeypatch.setitem(base._REGISTRY, "toy-expected", exp)
    return exp


def test_a_seed_dependent_claimed_value_is_recorded_per_seed(toy, tmp_path, capsys):
    # the report kept the first seed's claimed value as 'expected' (0.4 here), so a reader saw
    # the passing runs at seeds 1 and 2 (rho 0.5 <= 0.5, 0.6) measured above their claim
    rep = seed_robustness(toy, [0, 1, 2])
    data = rep.claim("data")
    assert data.passed == (False, True, True)
    assert data.expected is None  # differs between seeds
    assert data.expected_at == (0.4, 0.5, 0.6) and data.tol_at == (0.0, 0.01, 0.02)
    fixed = rep.claim("fixed")
    assert (
        fixed.expected == 0.6
        and fixed.expected_at == (0.6, 0.6, 0.6)
        and fixed.tol_at == (0.01,) * 3
    )
    assert (
        main(["reproduce", "toy-expected", "--seeds", "0:3", "--quiet", "--out", str(tmp_path)])
        == 1
    )
    capsys.readouterr()
    rec = json.loads((tmp_path / "toy-expected.seeds.json").read_text())
    by_name = {c["name"]: c for c in rec["claims"]}
    assert by_name["data"]["expected"] is None and by_name["data"]["expected_at"] == [0.4, 0.5, 0.6]
    assert by_name["fixed"]["expected"] == 0.6 and by_name["fixed"]["tol_at"] == [0.01, 0.01, 0.01]


def test_kappa_truncation_records_each_seeds_phi_squared():
    # ring-rate's claim is 'contraction <= phi_hi^2' with phi_hi fitted on the run's own
    # network: 0.147, 0.560 and 0.935 at seeds 0, 1, 2 of the quick preset
    exp = experiments.get("kappa-truncation")
    rep = seed_robustness(exp, [0, 1])
    for s in rep.seeds:
        direct = {c.claim.name: c.claim for c in exp.reproduce(seed=s).checks}
        for c in rep.claims:
            i = c.seeds.index(s)
            assert c.expected_at[i] == direct[c.name].expected and c.tol_at[i] == direct[c.name].tol
    ring = rep.claim("ring-rate")
    assert ring.expected is None and ring.expected_at[0] != ring.expected_at[1]
