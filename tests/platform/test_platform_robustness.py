"""Seed robustness of reproductions (rltheory.experiments.robustness and ``reproduce --seeds``)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from _platform_toy import ToyConfig

from rltheory import experiments
from rltheory.bounds import Claim, check_bound, fit_linear_rate
from rltheory.cli import main
from rltheory.experiments import Experiment, ExperimentResult, base
from rltheory.experiments.robustness import ClaimSeeds, parse_seeds, seed_robustness
from rltheory.plot import figure


def _toy_run(config, *, seed=0, progress=False):
    """Halving errors (rate claim: passes at even seeds, where the claimed rate is the true 1/2)
    and a bound that holds except at seed 3, where the measured/bound ratio is infinite."""
    fit = fit_linear_rate(np.arange(10), 0.5 ** np.arange(10))
    bound = check_bound([1.0], [0.0]) if seed == 3 else check_bound([0.1 * (seed + 1)], [1.0])
    halving = Claim("halving", "ρ = 1/2", "closed form", 0.5 if seed % 2 == 0 else 0.6, "rate", tol=0.01)
    return ExperimentResult("toy-seeds", {"n": config.n}, {}, [
        halving.check(fit),
        Claim("small", "x ≤ 1", "made up", None, "bound").check(bound),
    ])


@pytest.fixture
def toy(monkeypatch):
    exp = Experiment("toy-seeds", "A toy with seed-dependent verdicts", ToyConfig, _toy_run, lambda r: figure()[0])
    monkeypatch.setitem(base._REGISTRY, "toy-seeds", exp)
    return exp


def test_report_collects_each_claims_verdicts_over_seeds(toy):
    rep = seed_robustness(toy, [0, 1, 2, 3])
    assert rep.seeds == (0, 1, 2, 3) and rep.preset == "quick"
    assert rep.run_passed == (True, False, True, False) and not rep.passed
    assert rep.failed_seeds == (1, 3)
    halving, small = rep.claims
    assert (halving.name, halving.kind, halving.level) == ("halving", "rate", 0.95)
    assert halving.passed == (True, False, True, False) and halving.failed_seeds == (1, 3)
    assert halving.pass_rate == 0.5
    assert small.kind == "bound" and small.level is None and small.miss_p_value is None
    assert small.failed_seeds == (3,)
    # the measured numbers are the runs' own
    for s in rep.seeds:
        direct = _toy_run(ToyConfig(), seed=s).checks
        assert halving.measured[s] == direct[0].measured
        assert small.measured[s] == direct[1].measured
    assert math.isinf(small.measured[3])
    assert rep.claim("small") is small
    with pytest.raises(KeyError, match=r"no claim named 'nope' in 'toy-seeds'; claims: \['halving', 'small'\]"):
        rep.claim("nope")


def test_full_preset_and_the_callback_see_every_run(toy):
    seen = []
    rep = seed_robustness("toy-seeds", [5, 2], full=True, on_result=lambda s, r: seen.append((s, r.config["n"])))
    assert seen == [(5, 2), (2, 2)] and rep.preset == "full" and rep.seeds == (5, 2)


def test_miss_p_value_is_the_binomial_tail_at_the_nominal_miss_rate():
    def tail(k, n, q):  # P[Bin(n, q) >= k], summed directly
        return sum(math.comb(n, j) * q**j * (1 - q) ** (n - j) for j in range(k, n + 1))

    for k, n in [(0, 5), (1, 20), (2, 20), (5, 10)]:
        c = ClaimSeeds("c", "rate", 1.0, tuple(range(n)), tuple(i >= k for i in range(n)), (1.0,) * n, level=0.95)
        assert len(c.failed_seeds) == k
        assert c.miss_p_value == pytest.approx(tail(k, n, 0.05), rel=1e-12)
    # one miss in 21 seeds at level 0.95 is unremarkable; 5 misses in 10 are not
    one = ClaimSeeds("c", "rate", 1.0, tuple(range(21)), (False,) + (True,) * 20, (1.0,) * 21, level=0.95)
    assert one.miss_p_value == pytest.approx(1 - 0.95**21)
    assert ClaimSeeds("c", "rate_at_most", 1.0, (0,), (False,), (2.0,)).miss_p_value is None


def test_a_real_reproduction_matches_its_single_seed_runs():
    exp = experiments.get("discount-to-gain")
    rep = seed_robustness(exp, [0, 3])
    for s in rep.seeds:
        direct = exp.reproduce(seed=s)
        assert rep.run_passed[rep.seeds.index(s)] == direct.passed
        for c in direct.checks:
            rec = rep.claim(c.claim.name)
            assert rec.passed[rec.seeds.index(s)] == c.passed
            assert rec.measured[rec.seeds.index(s)] == c.measured
    assert {c.name for c in rep.claims} == {c.claim.name for c in direct.checks}


def test_a_claim_checked_twice_in_a_run_is_matched_by_position(monkeypatch):
    def run(config, *, seed=0, progress=False):
        ok, bad = check_bound([0.5], [1.0]), check_bound([2.0], [1.0])
        c = Claim("b", "x ≤ 1", "made up", None, "bound")
        return ExperimentResult("toy-twice", {}, {}, [c.check(ok), c.check(bad if seed else ok)])

    monkeypatch.setitem(base._REGISTRY, "toy-twice", Experiment("toy-twice", "t", ToyConfig, run, lambda r: None))
    rep = seed_robustness("toy-twice", [0, 1])
    assert [c.name for c in rep.claims] == ["b", "b [2]"]
    assert rep.claim("b").passed == (True, True) and rep.claim("b [2]").passed == (True, False)


def test_a_claim_that_changes_kind_between_seeds_is_rejected(monkeypatch):
    def run(config, *, seed=0, progress=False):
        if seed == 0:
            return ExperimentResult("toy-kind", {}, {}, [
                Claim("c", "x ≤ 1", "made up", None, "bound").check(check_bound([0.5], [1.0]))])
        fit = fit_linear_rate(np.arange(10), 0.5 ** np.arange(10))
        return ExperimentResult("toy-kind", {}, {}, [Claim("c", "ρ", "made up", 0.5, "rate", tol=0.1).check(fit)])

    monkeypatch.setitem(base._REGISTRY, "toy-kind", Experiment("toy-kind", "t", ToyConfig, run, lambda r: None))
    with pytest.raises(ValueError, match=r"experiment 'toy-kind' at seed 1: claim 'c' changed kind/level between "
                                         r"seeds \(bound/None before, rate/0\.95 now\)"):
        seed_robustness("toy-kind", [0, 1])


@pytest.mark.parametrize("spec, seeds", [("0:4", (0, 1, 2, 3)), (" 3:5 ", (3, 4)), ("7", (7,)), ("0,3,7", (0, 3, 7))])
def test_parse_seeds(spec, seeds):
    assert parse_seeds(spec) == seeds


@pytest.mark.parametrize("spec, message", [
    ("0:x", r"seeds '0:x': expected START:STOP or a comma list of integers such as 0,3,7"),
    ("1:2:3", r"seeds '1:2:3': expected START:STOP"),
    ("5:5", r"seeds '5:5': the range 5:5 is empty \(STOP must exceed START\)"),
    ("-2:3", r"seeds '-2:3': seeds\[0\] must be non-negative; got -2"),
    # rejected before the range is built (it used to build all 10**12 seeds in memory first)
    ("0:1000000000000", r"seeds '0:1000000000000': the range 0:1000000000000 has 1000000000000 seeds; "
                        r"at most 100000"),
    ("2,-1", r"seeds '2,-1': seeds\[1\] must be non-negative; got -1"),
    ("1,2,1", r"seeds '1,2,1': seeds\[2\] repeats seed 1 \(first at seeds\[0\]\)"),
    ("", r"seeds '': expected START:STOP"),
])
def test_parse_seeds_errors(spec, message):
    with pytest.raises(ValueError, match=message):
        parse_seeds(spec)


@pytest.mark.parametrize("seeds, exc, message", [
    ([], ValueError, r"seeds must contain at least one seed; got none"),
    ([0, True], TypeError, r"seeds\[1\] must be an integer; got True"),
    ([0, 1.0], TypeError, r"seeds\[1\] must be an integer; got 1\.0"),
    ([2, -3], ValueError, r"seeds\[1\] must be non-negative; got -3"),
    ([4, 5, 4], ValueError, r"seeds\[2\] repeats seed 4 \(first at seeds\[0\]\)"),
])
def test_seed_robustness_argument_errors(toy, seeds, exc, message):
    with pytest.raises(exc, match=message):
        seed_robustness(toy, seeds)


def test_seed_robustness_rejects_a_non_experiment():
    with pytest.raises(TypeError, match=r"experiment must be an Experiment or a registered name; got int"):
        seed_robustness(3, [0])
    with pytest.raises(KeyError, match="no-such-experiment"):
        seed_robustness("no-such-experiment", [0])


def test_cli_seeds_writes_the_report_and_exits_1_when_a_seed_fails(toy, tmp_path, capsys):
    assert main(["reproduce", "toy-seeds", "--seeds", "0:4", "--out", str(tmp_path), "--quiet"]) == 1
    out, err = capsys.readouterr()
    assert "toy-seeds: 2/4 seeds pass (2 claims, " in out and str(tmp_path / "toy-seeds.seeds.json") in out
    assert ("  [2/4] halving: measured 0.5 .. 0.5 .. 0.5 (min .. median .. max); failed at seeds [1, 3]; "
            # "of 4": the seeds with an interval, which the binomial screen counts (helper-64)
            "P[misses >= 2 of 4] at level 0.95 = 0.014") in out
    assert "  [3/4] small: measured 0.1 .. 0.25 .. inf (min .. median .. max); failed at seeds [3]" in out
    assert err.strip() == "failed at some seed: toy-seeds"
    data = json.loads((tmp_path / "toy-seeds.seeds.json").read_text())  # strict JSON: inf became null
    assert data["pass"] is False and data["failed_seeds"] == [1, 3] and data["seeds"] == [0, 1, 2, 3]
    small = data["claims"][1]
    assert small["measured"][:3] == pytest.approx([0.1, 0.2, 0.3])
    assert small["measured"][3] is None and small["failed_seeds"] == [3] and small["miss_p_value"] is None
    assert data["claims"][0]["miss_p_value"] == pytest.approx(1 - 0.95**4 - 4 * 0.05 * 0.95**3)


def test_cli_seeds_quiet_prints_only_claims_with_a_miss(toy, tmp_path, capsys):
    assert main(["reproduce", "toy-seeds", "--seeds", "0,2", "--out", str(tmp_path), "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "toy-seeds: 2/2 seeds pass" in out and "halving" not in out and "small" not in out
    assert main(["reproduce", "toy-seeds", "--seeds", "0,2", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "  [2/2] halving: measured 0.5 .. 0.5 .. 0.5" in out and "failed at" not in out


@pytest.mark.parametrize("argv, message", [
    (["--seed", "1", "--seeds", "0:2"], "rltheory reproduce: give either --seed or --seeds, not both"),
    (["--seeds", "2:1"], "rltheory reproduce: --seeds '2:1': the range 2:1 is empty (STOP must exceed START)"),
])
def test_cli_seeds_argument_errors(toy, tmp_path, capsys, argv, message):
    assert main(["reproduce", "toy-seeds", "--out", str(tmp_path), *argv]) == 2
    assert capsys.readouterr().err.strip() == message
    assert not (tmp_path / "toy-seeds.seeds.json").exists()
