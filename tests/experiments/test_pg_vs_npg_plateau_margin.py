"""pg-vs-npg's plateau check reports its real margin, not the shared starting point.

NPG and softmax PG start from the same uniform policy, so at ``t = 0`` their gaps are equal and
the ratio NPG/PG is 1. The check ran from ``t = 0``, so the JSON's worst ratio was 1 (argmax 0)
whatever happened afterwards. It now runs over ``1 ≤ t ≤ min(T_NPG, T_PG)``.
"""

from __future__ import annotations

import numpy as np
import pytest

from rltheory.experiments.pg_vs_npg import Config, run


def test_plateau_worst_ratio_is_the_largest_npg_over_pg_ratio_from_t_one():
    res = run(Config.quick(), seed=0)
    c = res.curves["chain"]
    pg, npg = np.asarray(c["pg"]), np.asarray(c["npg"])
    n = min(pg.size, npg.size) - 1
    assert npg[0] == pytest.approx(pg[0], rel=1e-12)  # the shared start the check leaves out
    bc = next(ch for ch in res.checks if ch.claim.name == "plateau").bound_check
    assert bc.n == n
    assert bc.worst_ratio == pytest.approx(np.max(npg[1 : n + 1] / pg[1 : n + 1]), rel=1e-9)
    assert bc.worst_ratio < 0.9 and bc.holds  # 0.850 at t = 1 (seed-free: exact gradients)
