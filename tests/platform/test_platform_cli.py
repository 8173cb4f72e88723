"""The `rltheory` command: list, reproduce (PNG + JSON, exit status), solve."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import numpy as np
import pytest
from _platform_toy import ToyConfig

from rltheory.bounds import Claim, check_bound, fit_linear_rate
from rltheory.cli import main
from rltheory.experiments import Experiment, ExperimentResult, base
from rltheory.plot import figure


def test_console_script_lists_experiments():
    from importlib.metadata import entry_points

    (ep,) = entry_points(group="console_scripts", name="rltheory")
    assert ep.load() is main  # the installed `rltheory` command is rltheory.cli:main
    out = subprocess.run([sys.executable, "-m", "rltheory.cli", "list"], capture_output=True, text=True, check=True)
    assert re.search(r"^vi-rates\s+Value iteration", out.stdout, re.M)
    assert re.search(r"^solver-comparison\s+PI vs VI", out.stdout, re.M)


def test_reproduce_writes_png_and_json_with_pass(tmp_path, capsys):
    assert main(["reproduce", "vi-rates", "--out", str(tmp_path), "--quiet", "--seed", "3"]) == 0
    png = (tmp_path / "vi-rates.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    rec = json.loads((tmp_path / "vi-rates.json").read_text())
    assert rec["pass"] is True and rec["seed"] == 3 and rec["preset"] == "quick"
    assert rec["config"]["gammas"] == [0.9, 0.99]
    rate = next(c for c in rec["checks"] if c["claim"]["name"] == "garnet-0.99-rate")
    assert rate["claim"]["expected"] == 0.99 and len(rate["fit"]["ci"]) == 2 and rate["pass"]
    assert "versions" in rec
    assert "vi-rates: PASS" in capsys.readouterr().out
    assert sorted(p.name for p in tmp_path.iterdir()) == ["vi-rates.json", "vi-rates.png"]  # no temp files left


def test_reproduce_argument_errors(tmp_path, capsys):
    assert main(["reproduce", "nope", "--out", str(tmp_path)]) == 2
    assert "no experiment named 'nope'" in capsys.readouterr().err
    assert main(["reproduce", "--out", str(tmp_path)]) == 2
    assert main(["reproduce", "vi-rates", "--all", "--out", str(tmp_path)]) == 2
    with pytest.raises(SystemExit):
        main(["solve", "gridworld", "--method", "qlearning"])


def test_reproduce_rejects_a_negative_seed_and_an_out_that_is_a_file(tmp_path, capsys):
    # a negative seed reached numpy's SeedSequence (a traceback); an --out naming a file
    # raised FileExistsError from mkdir
    with pytest.raises(SystemExit) as exc:
        main(["reproduce", "vi-rates", "--seed", "-1", "--out", str(tmp_path)])
    assert exc.value.code == 2
    assert "argument --seed: must be an integer >= 0; got -1" in capsys.readouterr().err
    afile = tmp_path / "afile"
    afile.write_text("x")
    for extra in ([], ["--seeds", "0:2"]):
        assert main(["reproduce", "vi-rates", "--quiet", "--out", str(afile), *extra]) == 2
        assert "is a file, not a folder" in capsys.readouterr().err
    assert main(["reproduce", "vi-rates", "--quiet", "--out", str(afile / "sub")]) == 2
    assert "cannot create --out" in capsys.readouterr().err
    assert afile.read_text() == "x" and sorted(p.name for p in tmp_path.iterdir()) == ["afile"]


@pytest.mark.parametrize("method", ["vi", "pi", "mpi", "lp"])
def test_solve_gridworld_prints_certificate_and_values(method, capsys):
    assert main(["solve", "gridworld", "--size", "5", "--slip", "0.1", "--gamma", "0.95", "--method", method]) == 0
    out = capsys.readouterr().out
    assert re.search(r"^iterations:\s+\d+$", out, re.M)
    assert re.search(r"^converged:\s+True$", out, re.M)
    cert = float(re.search(r"<= ([0-9.e+-]+)", out).group(1))
    assert cert < 1e-4
    v_start = float(re.search(r"V\(start=\(0, 0\)\) ([0-9.]+)", out).group(1))
    # every method reports the same V*(start) to the printed precision (certificates ≤ 1e-4)
    assert v_start == pytest.approx(_REFERENCE_START, abs=2e-4)
    assert out.rstrip().endswith("G")  # the goal sits in the bottom-right corner of the policy map


def _reference_start() -> float:
    from rltheory.mdp import gridworld, policy_iteration

    g = gridworld(5, slip=0.1, gamma=0.95)
    return float(policy_iteration(g.mdp).V[g.state_of(0, 0)])


_REFERENCE_START = _reference_start()


def test_solve_rejects_bad_model_parameters(capsys):
    assert main(["solve", "gridworld", "--slip", "1.5"]) == 2
    assert "slip" in capsys.readouterr().err


def test_reproduce_reports_a_failing_claim_and_exits_1(tmp_path, capsys, monkeypatch):
    def run(config, *, seed=0, progress=False):
        fit = fit_linear_rate(np.arange(10), 0.5 ** np.arange(10))
        return ExperimentResult("toy-fail", {"n": config.n}, {}, [
            Claim("halving", "ρ = 1/2", "closed form", 0.5, "rate", tol=0.01).check(fit),
            Claim("too-big", "x ≤ bound", "made up", None, "bound").check(check_bound([2.0], [1.0])),
        ])

    monkeypatch.setitem(base._REGISTRY, "toy-fail", Experiment("toy-fail", "A failing toy", ToyConfig, run,
                                                               lambda r: figure()[0]))
    assert main(["reproduce", "toy-fail", "--out", str(tmp_path)]) == 1
    out, err = capsys.readouterr()
    assert "toy-fail: FAIL (2 checks" in out
    assert re.search(r"\[PASS\] halving: measured 0\.5 \(CI \[0\.5, 0\.5\], window \d+\.\.\d+\) vs claimed rate 0\.5 ± 0\.01",
                     out)
    assert "[FAIL] too-big: worst measured/bound ratio 2 at [0] over 1 points" in out
    assert err.strip() == "failed: toy-fail"
    assert json.loads((tmp_path / "toy-fail.json").read_text())["pass"] is False
    # --quiet prints only the failing check
    assert main(["reproduce", "toy-fail", "--out", str(tmp_path), "--quiet"]) == 1
    out = capsys.readouterr().out
    assert "[FAIL] too-big" in out and "halving" not in out
