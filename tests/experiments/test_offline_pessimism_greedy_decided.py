"""offline-pessimism's quick preset decides good-greedy-rate: the slope interval lies below −0.4.

Greedy's mean error under good coverage is positive only up to ``K`` ≈ 6400. With the sizes
doubling (400, 800, ..., 51200) its slope was fitted on five points, and at seed 0 the interval
was (−4.05, 0.28): it straddled the threshold −1/2 + 0.1, so ``rate_at_most`` read the point
estimate −1.89 alone (``decided`` false). The quick sizes are now spaced by √2 up to 6400.
"""

from __future__ import annotations

import pytest

from rltheory.experiments import offline_pessimism as exp


@pytest.mark.parametrize("seed", [0, 1])
def test_quick_good_greedy_rate_interval_lies_below_the_threshold(seed):
    res = exp.run(exp.Config.quick(), seed=seed)
    d = next(c for c in res.checks if c.claim.name == "good-greedy-rate").to_dict()
    threshold = d["claim"]["expected"] + d["claim"]["tol"]
    assert threshold == pytest.approx(-0.4)
    assert d["fit"]["n"] >= 6
    assert d["decided"] is True and d["fit"]["ci"][1] < threshold, d["fit"]
    assert d["pass"] is True and res.passed
