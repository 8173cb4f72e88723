"""ExperimentResult keeps every check it is given, however they are passed."""

from __future__ import annotations

import pytest

from rltheory.bounds import Claim, check_bound
from rltheory.experiments.base import ExperimentResult


def _checks():
    claim = Claim("b", "x <= 1", "made up", None, "bound")
    return [claim.check(check_bound([0.5], [1.0])), claim.check(check_bound([2.0], [1.0]))]


@pytest.mark.parametrize("wrap", [list, tuple, iter, lambda cs: (c for c in cs)])
def test_a_failing_check_fails_the_run_however_the_checks_are_passed(wrap):
    # a generator was used up by __post_init__'s type loop: checks was then empty, and
    # passed = bool(generator) and all([]) = True although a check had failed
    r = ExperimentResult("x", {}, {}, wrap(_checks()))
    assert isinstance(r.checks, list) and len(r.checks) == 2
    assert not r.passed and r.to_json_dict()["pass"] is False
    assert [c["pass"] for c in r.to_json_dict()["checks"]] == [True, False]


@pytest.mark.parametrize("checks", [None, 3, "checks", {"a": 1}])
def test_checks_that_are_not_a_sequence_are_named(checks):
    with pytest.raises(TypeError, match="checks must be a list of ClaimCheck; got "):
        ExperimentResult("x", {}, {}, checks)
