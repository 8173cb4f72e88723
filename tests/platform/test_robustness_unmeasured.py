"""Seed reports keep unmeasured rate failures out of the binomial screen.

A ``"rate"`` claim fails *unmeasured* when its interval is not informative (commit 130ea2a);
that is not an interval miss, which a calibrated interval makes with probability at most
``1 − L``. ``ClaimSeeds.miss_p_value`` counted every failure as a miss (reported by helper-49).
"""

import pytest
from scipy import stats

from rltheory.experiments.robustness import ClaimSeeds


def _claim(passed, unmeasured):
    n = len(passed)
    return ClaimSeeds(
        name="c",
        kind="rate",
        expected=-0.5,
        seeds=tuple(range(n)),
        passed=tuple(passed),
        measured=(-0.5,) * n,
        level=0.95,
        unmeasured=tuple(unmeasured),
    )


def test_unmeasured_failures_are_not_misses():
    c = _claim([True, False, False, True, False], [False, True, True, False, False])
    assert c.unmeasured_seeds == (1, 2) and c.failed_seeds == (1, 2, 4)
    # one miss (seed 4) among the three informative seeds
    assert c.miss_p_value == pytest.approx(float(stats.binom.sf(0, 3, 0.05)))
    d = c.to_dict()
    assert d["unmeasured_seeds"] == [1, 2] and d["failed_seeds"] == [1, 2, 4]


def test_all_unmeasured_gives_no_p_value():
    assert _claim([False, False], [True, True]).miss_p_value is None


def test_unrecorded_unmeasured_counts_every_failure_as_before():
    c = ClaimSeeds(
        name="c",
        kind="rate",
        expected=0.0,
        seeds=(0, 1),
        passed=(False, True),
        measured=(0.0, 0.0),
        level=0.95,
    )
    assert c.unmeasured_seeds == () and c.miss_p_value == pytest.approx(
        float(stats.binom.sf(0, 2, 0.05))
    )


def test_seed_robustness_records_unmeasured_verdicts():
    from rltheory.experiments.robustness import seed_robustness

    rep = seed_robustness("td-linear", [0])
    for c in rep.claims:
        assert len(c.unmeasured) == len(c.seeds)
