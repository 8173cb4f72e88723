"""marlhf-coverage's quick preset gives the same JSON after the speed-up (to round-off).

The reward fit now sums the likelihood over the distinct compared pairs (weighted by their counts)
and takes the row space of ``X`` from the SVD of ``diag(√c) U`` (the distinct rows ``U``), and the
equilibrium search computes every candidate's deviation occupancies in one batched call. On seed 0
the quick preset took 23-26 s CPU before and 2.0-2.2 s after (same process, same machine; 1.7 s
before the separation LP of bradley_terry_mle was added).

``REFERENCE`` is the old code's ``to_json_dict()`` of ``run(Config.quick(), seed=0)`` (flattened;
versions, wall time and the claims' prose left out). Tolerance: the new code reorders sums of at
most ``K = 12 800`` terms, which changes each by at most ``K·eps ≈ 2.8e-12`` relative (the
standard ``γ_K`` bound); the Newton systems it solves have condition number ``≤ 5.7`` (measured on
the quick preset's data) and every reported number is a mean of certificates, NashConvs or a
least-squares slope of their logs, none with cancellation beyond a factor of a few, so
``rtol = 1e-10`` leaves an order of magnitude over the worst-case bound (measured: 1.8e-15).
Non-floats (verdicts, counts, windows, text) must be equal.
"""

from __future__ import annotations

import math

import pytest

from rltheory.experiments.marlhf_coverage import Config, run

RTOL = 1e-10

REFERENCE = {
    "/checks/0/bound_check/argmax/0": 0,
    "/checks/0/bound_check/atol": 0.0,
    "/checks/0/bound_check/holds": True,
    "/checks/0/bound_check/n": 1,
    "/checks/0/bound_check/rtol": 1e-12,
    "/checks/0/bound_check/worst_excess": -0.10000000000010001,
    "/checks/0/bound_check/worst_ratio": 0.0,
    "/checks/0/claim/expected": None,
    "/checks/0/claim/kind": "bound",
    "/checks/0/claim/name": "single-confidence-event",
    "/checks/0/claim/precision": None,
    "/checks/0/claim/tol": 0.0,
    "/checks/0/measured": 0.0,
    "/checks/0/pass": True,
    "/checks/0/verdict": "pass",
    "/checks/1/bound_check/argmax/0": 0,
    "/checks/1/bound_check/atol": 0.0,
    "/checks/1/bound_check/holds": True,
    "/checks/1/bound_check/n": 8,
    "/checks/1/bound_check/rtol": 1e-12,
    "/checks/1/bound_check/worst_excess": -0.09500000000029507,
    "/checks/1/bound_check/worst_ratio": 0.6779661016949152,
    "/checks/1/claim/expected": None,
    "/checks/1/claim/kind": "bound",
    "/checks/1/claim/name": "single-witness",
    "/checks/1/claim/precision": None,
    "/checks/1/claim/tol": 0.0,
    "/checks/1/measured": 0.6779661016949152,
    "/checks/1/pass": True,
    "/checks/1/verdict": "pass",
    "/checks/2/bound_check/argmax/0": 0,
    "/checks/2/bound_check/atol": 0.0,
    "/checks/2/bound_check/holds": True,
    "/checks/2/bound_check/n": 160,
    "/checks/2/bound_check/rtol": 0.0,
    "/checks/2/bound_check/worst_excess": None,
    "/checks/2/bound_check/worst_ratio": 0.0,
    "/checks/2/claim/expected": None,
    "/checks/2/claim/kind": "bound",
    "/checks/2/claim/name": "single-indistinguishable",
    "/checks/2/claim/precision": None,
    "/checks/2/claim/tol": 0.0,
    "/checks/2/measured": 0.0,
    "/checks/2/pass": True,
    "/checks/2/verdict": "pass",
    "/checks/3/bound_check/argmax/0": 0,
    "/checks/3/bound_check/atol": 0.0,
    "/checks/3/bound_check/holds": True,
    "/checks/3/bound_check/n": 1,
    "/checks/3/bound_check/rtol": 1e-12,
    "/checks/3/bound_check/worst_excess": -0.10000000000010001,
    "/checks/3/bound_check/worst_ratio": 0.0,
    "/checks/3/claim/expected": None,
    "/checks/3/claim/kind": "bound",
    "/checks/3/claim/name": "unilateral-confidence-event",
    "/checks/3/claim/precision": None,
    "/checks/3/claim/tol": 0.0,
    "/checks/3/measured": 0.0,
    "/checks/3/pass": True,
    "/checks/3/verdict": "pass",
    "/checks/4/bound_check/argmax/0": 0,
    "/checks/4/bound_check/atol": 0.0,
    "/checks/4/bound_check/holds": True,
    "/checks/4/bound_check/n": 9,
    "/checks/4/bound_check/rtol": 1e-12,
    "/checks/4/bound_check/worst_excess": 0.0,
    "/checks/4/bound_check/worst_ratio": 0.0,
    "/checks/4/claim/expected": None,
    "/checks/4/claim/kind": "bound",
    "/checks/4/claim/name": "unilateral-certified",
    "/checks/4/claim/precision": None,
    "/checks/4/claim/tol": 0.0,
    "/checks/4/measured": 0.0,
    "/checks/4/pass": True,
    "/checks/4/verdict": "pass",
    "/checks/5/claim/expected": -0.5,
    "/checks/5/claim/kind": "rate",
    "/checks/5/claim/name": "unilateral-rate",
    "/checks/5/claim/precision": 0.1,
    "/checks/5/claim/tol": 0.0,
    "/checks/5/decided": None,
    "/checks/5/fit/ci/0": -0.5596705435267335,
    "/checks/5/fit/ci/1": -0.4077992892799375,
    "/checks/5/fit/intercept": 2.4587846291072672,
    "/checks/5/fit/kind": "algebraic",
    "/checks/5/fit/level": 0.95,
    "/checks/5/fit/n": 3,
    "/checks/5/fit/n_boot": 0,
    "/checks/5/fit/rate": -0.48373491640333555,
    "/checks/5/fit/slope": -0.48373491640333555,
    "/checks/5/fit/slope_ci/0": -0.5596705435267335,
    "/checks/5/fit/slope_ci/1": -0.4077992892799375,
    "/checks/5/fit/window/0": 6400.0,
    "/checks/5/fit/window/1": 12800.0,
    "/checks/5/half_width": 0.07593562712339799,
    "/checks/5/informative": True,
    "/checks/5/measured": -0.48373491640333555,
    "/checks/5/pass": True,
    "/checks/5/precision": 0.1,
    "/checks/5/verdict": "pass",
    "/config/delta": 0.1,
    "/config/ridge": 0.001,
    "/config/scale": 5.0,
    "/config/seeds": 20,
    "/config/sizes/0": 200,
    "/config/sizes/1": 400,
    "/config/sizes/2": 800,
    "/config/sizes/3": 1600,
    "/config/sizes/4": 3200,
    "/config/sizes/5": 6400,
    "/config/sizes/6": 9051,
    "/config/sizes/7": 12800,
    "/curves/single coverage/N/0": 200.0,
    "/curves/single coverage/N/1": 400.0,
    "/curves/single coverage/N/2": 800.0,
    "/curves/single coverage/N/3": 1600.0,
    "/curves/single coverage/N/4": 3200.0,
    "/curves/single coverage/N/5": 6400.0,
    "/curves/single coverage/N/6": 9051.0,
    "/curves/single coverage/N/7": 12800.0,
    "/curves/single coverage/nashconv_I/0": 0.009999999999999998,
    "/curves/single coverage/nashconv_I/1": 0.0,
    "/curves/single coverage/nashconv_I/2": 0.0,
    "/curves/single coverage/nashconv_I/3": 0.0,
    "/curves/single coverage/nashconv_I/4": 0.0,
    "/curves/single coverage/nashconv_I/5": 0.0,
    "/curves/single coverage/nashconv_I/6": 0.0,
    "/curves/single coverage/nashconv_I/7": 0.0,
    "/curves/single coverage/nashconv_II/0": 0.29500000000000004,
    "/curves/single coverage/nashconv_II/1": 0.3,
    "/curves/single coverage/nashconv_II/2": 0.3,
    "/curves/single coverage/nashconv_II/3": 0.3,
    "/curves/single coverage/nashconv_II/4": 0.3,
    "/curves/single coverage/nashconv_II/5": 0.3,
    "/curves/single coverage/nashconv_II/6": 0.3,
    "/curves/single coverage/nashconv_II/7": 0.3,
    "/curves/single coverage/nashconv_max/0": 0.29500000000000004,
    "/curves/single coverage/nashconv_max/1": 0.3,
    "/curves/single coverage/nashconv_max/2": 0.3,
    "/curves/single coverage/nashconv_max/3": 0.3,
    "/curves/single coverage/nashconv_max/4": 0.3,
    "/curves/single coverage/nashconv_max/5": 0.3,
    "/curves/single coverage/nashconv_max/6": 0.3,
    "/curves/single coverage/nashconv_max/7": 0.3,
    "/curves/single coverage/ucb_I/0": 405.2421049229552,
    "/curves/single coverage/ucb_I/1": 405.2316868683896,
    "/curves/single coverage/ucb_I/2": 405.23073359725896,
    "/curves/single coverage/ucb_I/3": 405.2363346424085,
    "/curves/single coverage/ucb_I/4": 405.23905687466976,
    "/curves/single coverage/ucb_I/5": 405.23930266098586,
    "/curves/single coverage/ucb_I/6": 405.23940554444164,
    "/curves/single coverage/ucb_I/7": 405.23496199574595,
    "/curves/single coverage/ucb_II/0": 405.2421049229552,
    "/curves/single coverage/ucb_II/1": 405.2316868683896,
    "/curves/single coverage/ucb_II/2": 405.23073359725896,
    "/curves/single coverage/ucb_II/3": 405.2363346424085,
    "/curves/single coverage/ucb_II/4": 405.23905687466976,
    "/curves/single coverage/ucb_II/5": 405.23930266098586,
    "/curves/single coverage/ucb_II/6": 405.23940554444164,
    "/curves/single coverage/ucb_II/7": 405.23496199574595,
    "/curves/unilateral coverage/N/0": 200.0,
    "/curves/unilateral coverage/N/1": 400.0,
    "/curves/unilateral coverage/N/2": 800.0,
    "/curves/unilateral coverage/N/3": 1600.0,
    "/curves/unilateral coverage/N/4": 3200.0,
    "/curves/unilateral coverage/N/5": 6400.0,
    "/curves/unilateral coverage/N/6": 9051.0,
    "/curves/unilateral coverage/N/7": 12800.0,
    "/curves/unilateral coverage/nashconv_I/0": 0.0,
    "/curves/unilateral coverage/nashconv_I/1": 0.0,
    "/curves/unilateral coverage/nashconv_I/2": 0.0,
    "/curves/unilateral coverage/nashconv_I/3": 0.0,
    "/curves/unilateral coverage/nashconv_I/4": 0.0,
    "/curves/unilateral coverage/nashconv_I/5": 0.0,
    "/curves/unilateral coverage/nashconv_I/6": 0.0,
    "/curves/unilateral coverage/nashconv_I/7": 0.0,
    "/curves/unilateral coverage/nashconv_II/0": 0.3,
    "/curves/unilateral coverage/nashconv_II/1": 0.3,
    "/curves/unilateral coverage/nashconv_II/2": 0.3,
    "/curves/unilateral coverage/nashconv_II/3": 0.3,
    "/curves/unilateral coverage/nashconv_II/4": 0.3,
    "/curves/unilateral coverage/nashconv_II/5": 0.3,
    "/curves/unilateral coverage/nashconv_II/6": 0.3,
    "/curves/unilateral coverage/nashconv_II/7": 0.3,
    "/curves/unilateral coverage/ucb_I/0": 1.8054273033151875,
    "/curves/unilateral coverage/ucb_I/1": 1.1926926627470995,
    "/curves/unilateral coverage/ucb_I/2": 0.7944523828058593,
    "/curves/unilateral coverage/ucb_I/3": 0.4994746106930778,
    "/curves/unilateral coverage/ucb_I/4": 0.2899856460078501,
    "/curves/unilateral coverage/ucb_I/5": 0.17069024114646666,
    "/curves/unilateral coverage/ucb_I/6": 0.14047196893948094,
    "/curves/unilateral coverage/ucb_I/7": 0.12197234397444141,
    "/curves/unilateral coverage/ucb_II/0": 2.1242883839380142,
    "/curves/unilateral coverage/ucb_II/1": 1.5280337832268371,
    "/curves/unilateral coverage/ucb_II/2": 1.100626828978454,
    "/curves/unilateral coverage/ucb_II/3": 0.8001949253859026,
    "/curves/unilateral coverage/ucb_II/4": 0.5898046424035306,
    "/curves/unilateral coverage/ucb_II/5": 0.47418764233956623,
    "/curves/unilateral coverage/ucb_II/6": 0.44474114835047807,
    "/curves/unilateral coverage/ucb_II/7": 0.42592081346228516,
    "/meta/C_star_single": 1.25,
    "/meta/C_star_unilateral": 2.5,
    "/meta/C_uni_single": None,
    "/meta/C_uni_unilateral": 10.0,
    "/meta/beta": 27.753858304696326,
    "/meta/event_frequency_single": 1.0,
    "/meta/event_frequency_unilateral": 1.0,
    "/meta/fits/unilateral-ucb/ci/0": -0.5596705435267335,
    "/meta/fits/unilateral-ucb/ci/1": -0.4077992892799375,
    "/meta/fits/unilateral-ucb/intercept": 2.4587846291072672,
    "/meta/fits/unilateral-ucb/kind": "algebraic",
    "/meta/fits/unilateral-ucb/level": 0.95,
    "/meta/fits/unilateral-ucb/n": 3,
    "/meta/fits/unilateral-ucb/n_boot": 0,
    "/meta/fits/unilateral-ucb/rate": -0.48373491640333555,
    "/meta/fits/unilateral-ucb/slope": -0.48373491640333555,
    "/meta/fits/unilateral-ucb/slope_ci/0": -0.5596705435267335,
    "/meta/fits/unilateral-ucb/slope_ci/1": -0.4077992892799375,
    "/meta/fits/unilateral-ucb/window/0": 6400.0,
    "/meta/fits/unilateral-ucb/window/1": 12800.0,
    "/meta/kappa": 0.017662706213291114,
    "/meta/rate_regime_N": 4814.22906748226,
    "/meta/seed": 0,
    "/name": "marlhf-coverage",
    "/pass": True,
}


def _flatten(x, path="", out=None):
    out = {} if out is None else out
    if isinstance(x, dict):
        for k in sorted(x):
            if (path, k) in (("", "versions"), ("/meta", "wall_time_s")):
                continue
            _flatten(x[k], f"{path}/{k}", out)
    elif isinstance(x, list):
        for i, u in enumerate(x):
            _flatten(u, f"{path}/{i}", out)
    else:
        out[path] = x
    return out


@pytest.mark.slow
def test_the_quick_preset_json_is_unchanged_to_round_off():
    got = {
        k: v
        for k, v in _flatten(run(Config.quick(), seed=0).to_json_dict()).items()
        if not k.endswith(("/claim/statement", "/claim/source"))
    }
    assert set(got) == set(REFERENCE)
    for key, want in REFERENCE.items():
        value = got[key]
        if isinstance(want, float) and not isinstance(value, bool):
            assert math.isclose(value, want, rel_tol=RTOL, abs_tol=0.0), (key, value, want)
        else:
            assert value == want and type(value) is type(want), (key, value, want)
