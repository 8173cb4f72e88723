"""ExperimentResult names a curves argument that is not a dict of panels."""

from __future__ import annotations

import pytest

from rltheory.bounds import Claim, check_bound
from rltheory.experiments import ExperimentResult


@pytest.mark.parametrize("curves", [[], [("panel", {"k": [1]})], None])
def test_curves_that_are_not_a_dict_are_named(curves):
    # curves=[] failed with AttributeError "'list' object has no attribute 'items'"
    check = Claim("b", "err <= bound", "made up", kind="bound").check(check_bound([1.0], [2.0]))
    with pytest.raises(
        TypeError, match=r"curves must be a dict of panels \(curves\[panel\]\[series\]\); got"
    ):
        ExperimentResult("toy", {}, curves, [check])
    # a dict of series per panel is accepted, as before
    assert ExperimentResult("toy", {}, {"p": {"k": [1]}}, [check]).passed
