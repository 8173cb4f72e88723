"""networked-pd's quick preset decides its fosp-rate claim: the whole interval lies below −2/3 + 0.1.

With the four horizons ``T = 50, 100, 200, 400`` the log–log slope of the average FOSP measure was
−0.764 with interval (−1.12, −0.41) at every seed (the runs are exact; only the bootstrap draws
change): the interval straddled the threshold −0.567, so ``rate_at_most`` read the point estimate
alone (``decided`` false in the JSON). Seven horizons on the same range, spaced by √2, give
(−0.856, −0.654).
"""

from __future__ import annotations

import dataclasses

import pytest

from rltheory.experiments import networked_pd as exp


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_quick_fosp_rate_interval_lies_below_the_threshold(seed):
    # the sample-based run and the MSE study do not enter this claim: shortened
    cfg = dataclasses.replace(
        exp.Config.quick(), sample_iterations=2, samples=20, mse_samples=(100, 200, 400), mse_reps=2
    )
    res = exp.run(cfg, seed=seed)
    check = next(c for c in res.checks if c.claim.name == "fosp-rate")
    d = check.to_dict()
    threshold = d["claim"]["expected"] + d["claim"]["tol"]
    assert threshold == pytest.approx(-2.0 / 3.0 + 0.1)
    assert d["decided"] is True and d["fit"]["ci"][1] < threshold, d
    assert check.passed
