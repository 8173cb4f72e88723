"""npg-primal-dual's quick preset decides its rate claims: each interval lies below −1/2 + 0.1.

With the six horizons ``T = 25, 50, ..., 800`` the fitted log–log slopes were −0.739 (violation,
interval (−1.13, −0.35)) and −0.883 (gap, (−1.67, −0.10)) at every seed (the runs are exact; only
the bootstrap draws change): both intervals straddled the threshold −0.4, so ``rate_at_most`` read
the point estimates alone (``decided`` false in the JSON). Eleven horizons on the same range,
spaced by √2, give (−0.90, −0.57) and (−1.19, −0.53).
"""

from __future__ import annotations

import pytest

from rltheory.experiments.npg_primal_dual import RATE_TOL, Config, run


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_quick_rate_intervals_lie_below_the_threshold(seed):
    res = run(Config.quick(), seed=seed)
    checks = {c.claim.name: c.to_dict() for c in res.checks}
    for name in ("violation-rate", "gap-rate"):
        d = checks[name]
        threshold = d["claim"]["expected"] + d["claim"]["tol"]
        assert threshold == pytest.approx(-0.5 + RATE_TOL)
        assert d["decided"] is True and d["fit"]["ci"][1] < threshold, (name, d["fit"]["ci"])
        assert d["pass"] is True
    assert res.passed
