"""ClaimSeeds checks that its per-seed columns line up with its seeds."""

from __future__ import annotations

import pytest
from scipy import stats

from rltheory.experiments.robustness import ClaimSeeds


def _seeds(**kw):
    args = {"name": "c", "kind": "rate", "expected": 0.5, "level": 0.95, **kw}
    return ClaimSeeds(**args)


@pytest.mark.parametrize(
    ("kw", "message"),
    [
        # pass_rate divided by zero in to_dict: ZeroDivisionError
        (
            {"seeds": (), "passed": (), "measured": ()},
            r"'c': seeds must hold at least one seed; got none",
        ),
        # failed_seeds: "zip() argument 2 is shorter than argument 1"
        (
            {"seeds": (0, 1), "passed": (True,), "measured": (0.5, 0.5)},
            r"'c': passed has 1 entries for 2 seeds",
        ),
        (
            {"seeds": (0,), "passed": (True,), "measured": (0.5, 0.5)},
            r"'c': measured has 2 entries for 1 seeds",
        ),
        (
            {"seeds": (0, 1), "passed": (True, True), "measured": (0.5, 0.5), "tol_at": (0.0,)},
            r"'c': tol_at has 1 entries for 2 seeds",
        ),
        # seed 0 passed and was counted unmeasured: left out of the screen, p = None
        (
            {"seeds": (0,), "passed": (True,), "measured": (0.5,), "unmeasured": (True,)},
            r"'c': seed 0 passed but is marked unmeasured",
        ),
    ],
)
def test_columns_that_do_not_match_the_seeds_are_named(kw, message):
    with pytest.raises(ValueError, match=message):
        _seeds(**kw)


def test_consistent_columns_keep_their_numbers():
    # a miss at seed 1, seed 2 unmeasured, optional columns empty or full: P[Bin(2, 0.05) >= 1]
    c = _seeds(
        seeds=(0, 1, 2),
        passed=(True, False, False),
        measured=(0.5, 0.7, 0.5),
        unmeasured=(False, False, True),
    )
    assert c.miss_p_value == pytest.approx(float(stats.binom.sf(0, 2, 0.05)))
    assert c.to_dict()["pass_rate"] == pytest.approx(1 / 3) and c.unmeasured_seeds == (2,)
    assert _seeds(
        seeds=(4,), passed=(False,), measured=(0.7,), expected_at=(0.5,), tol_at=(0.0,)
    ).failed_seeds == (4,)
