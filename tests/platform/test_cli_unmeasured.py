"""`rltheory reproduce` prints the verdict NAME.json records, "unmeasured" included."""

from __future__ import annotations

import json

from _platform_toy import ToyConfig

from rltheory.bounds import Claim, fit_rate
from rltheory.cli import main
from rltheory.experiments import Experiment, ExperimentResult, base
from rltheory.plot import figure


def _run(config, *, seed=0, progress=False):
    # three noisy points: the slope's interval (-60, 57) contains every claimed slope and is
    # too wide to tell -1 from -1/2 or -2, so the rate claim fails as unmeasured
    fit = fit_rate([1, 2, 4], [1, 3, 0.1])
    return ExperimentResult(
        "toy-wide",
        {"n": config.n},
        {},
        [Claim("wide", "s = -1", "made up", -1.0, "rate").check(fit)],
    )


def test_an_unmeasured_claim_is_printed_as_unmeasured(tmp_path, capsys, monkeypatch):
    # the console said "[FAIL] wide: ..." while NAME.json said "verdict": "unmeasured"
    monkeypatch.setitem(
        base._REGISTRY,
        "toy-wide",
        Experiment("toy-wide", "A toy", ToyConfig, _run, lambda r: figure()[0]),
    )
    assert main(["reproduce", "toy-wide", "--quiet", "--out", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    (check,) = json.loads((tmp_path / "toy-wide.json").read_text())["checks"]
    assert check["verdict"] == "unmeasured" and check["pass"] is False
    line = next(x for x in out.splitlines() if " wide:" in x)
    assert line.startswith("  [UNMEASURED] wide: measured -1.66096 (CI [-59.98")
    assert line.endswith(
        f"; interval half-width {check['half_width']:.4g} > required {check['precision']:.4g}"
    )
    assert "FAIL" not in line
