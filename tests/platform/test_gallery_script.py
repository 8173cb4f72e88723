"""scripts/gallery.py: the README gallery table from the files `rltheory reproduce` writes."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest
from _platform_toy import ToyConfig

from rltheory.bounds import Claim, check_bound, fit_linear_rate
from rltheory.cli import main
from rltheory.experiments import Experiment, ExperimentResult, base
from rltheory.plot import figure

_SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "gallery.py"


def _gallery():
    spec = importlib.util.spec_from_file_location("rltheory_gallery_script", _SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _toy_run(config, *, seed=0, progress=False):
    fit = fit_linear_rate(np.arange(10), 0.5 ** np.arange(10))  # exact halving: rho = 1/2
    return ExperimentResult(
        "toy-gallery",
        {"n": config.n},
        {},
        [
            Claim("halving", "rho = 1/2", "closed form", 0.5, "rate", tol=0.01).check(fit),
            Claim("small", "x <= 1", "made up", None, "bound").check(check_bound([0.5], [1.0])),
        ],
    )


@pytest.fixture
def written(tmp_path, monkeypatch, capsys):
    """A folder holding what `reproduce toy-gallery` and `reproduce toy-gallery --seeds 0:2` write."""
    monkeypatch.setitem(
        base._REGISTRY,
        "toy-gallery",
        Experiment("toy-gallery", "A toy", ToyConfig, _toy_run, lambda r: figure()[0]),
    )
    assert main(["reproduce", "toy-gallery", "--quiet", "--out", str(tmp_path)]) == 0
    assert (
        main(["reproduce", "toy-gallery", "--quiet", "--seeds", "0:2", "--out", str(tmp_path)]) == 0
    )
    capsys.readouterr()
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "toy-gallery.json",
        "toy-gallery.png",
        "toy-gallery.seeds.json",
    ]
    return tmp_path


def test_a_seed_report_next_to_the_run_adds_no_row(written, capsys):
    # the seed report (NAME.seeds.json) has no "checks": it was read as a second row
    # "| `toy-gallery` | 0/0 | bound checks only | ✅ |"
    assert _gallery().main(["gallery.py", str(written)]) == 0
    rows = capsys.readouterr().out.strip().split("\n")
    assert rows[2:] == ["| `toy-gallery` | 2/2 | ρ 0.5 [0.5, 0.5] (claim = 0.5 ± 0.01) | ✅ |"]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"a": 1}', "not a reproduction record of `rltheory reproduce` (no name, pass, checks)"),
        ("[1, 2]", "not a reproduction record of `rltheory reproduce` (no name, pass, checks)"),
        ('{"name": "x", "pass": true', "not valid JSON"),
    ],
)
def test_a_json_file_that_is_not_a_record_is_named(written, capsys, content, message):
    # a foreign JSON file raised a bare KeyError: 'name' (or a JSONDecodeError) naming no file
    (written / "other.json").write_text(content)
    assert _gallery().main(["gallery.py", str(written)]) == 2
    out, err = capsys.readouterr()
    assert out == ""  # no half table
    assert err.startswith(f"gallery: {written / 'other.json'}: {message}")


def test_the_real_kappa_truncation_record_gives_its_row(tmp_path, capsys):
    # the row README.md shows for the quick preset at seed 0 (ring of 10, 10 checks since the
    # phi-resolved claims; 8 checks on the ring of 9 since f05abd1)
    assert main(["reproduce", "kappa-truncation", "--quiet", "--out", str(tmp_path)]) == 0
    capsys.readouterr()
    rec = json.loads((tmp_path / "kappa-truncation.json").read_text(encoding="utf-8"))
    assert rec["pass"] is True and len(rec["checks"]) == 10
    assert _gallery().main(["gallery.py", str(tmp_path)]) == 0
    (line,) = capsys.readouterr().out.strip().split("\n")[2:]
    readme = (_SCRIPT.parents[1] / "README.md").read_text(encoding="utf-8")
    assert line.startswith("| `kappa-truncation` | 10/10 |")
    assert line in readme.split("\n"), (
        f"README gallery is stale; rebuild it with scripts/gallery.py: {line}"
    )
