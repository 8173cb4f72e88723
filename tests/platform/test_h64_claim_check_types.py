"""Claim and ClaimCheck refuse evidence and texts of the wrong type, naming the field."""

from __future__ import annotations

import pytest

from rltheory.bounds import BoundCheck, Claim, ClaimCheck, check_bound, fit_rate

RATE = Claim("c", "s = -1/2", "made up", -0.5, "rate", tol=0.1)
BOUND = Claim("b", "x <= 1", "made up", kind="bound")


@pytest.mark.parametrize(
    ("claim", "kwargs", "message"),
    [
        # AttributeError "'dict' object has no attribute 'kind'" from the verdict
        (
            RATE,
            {"fit": {"slope": -0.5}},
            r"ClaimCheck for 'c': fit must be None or a RateFit; got dict",
        ),
        # stored as is: an explicit verdict skipped the judging, and to_dict failed later
        (
            RATE,
            {"fit": {"slope": -0.5}, "passed": True},
            r"fit must be None or a RateFit; got dict",
        ),
        (
            RATE,
            {"bound_check": 3, "passed": False},
            r"bound_check must be None or a BoundCheck; got int",
        ),
        # AttributeError "'tuple' object has no attribute 'holds'"
        (
            BOUND,
            {"bound_check": (0.5, True)},
            r"ClaimCheck for 'b': bound_check must be None or a BoundCheck; got tuple",
        ),
    ],
)
def test_evidence_of_the_wrong_type_is_named(claim, kwargs, message):
    with pytest.raises(TypeError, match=message):
        ClaimCheck(claim, **kwargs)


def test_a_claim_that_is_not_a_claim_is_named():
    with pytest.raises(TypeError, match=r"ClaimCheck\.claim must be a Claim; got str"):
        ClaimCheck("c", bound_check=check_bound([0.5], [1.0]))


@pytest.mark.parametrize("field", ["name", "statement", "source"])
def test_claim_texts_must_be_strings(field):
    # Claim(None, ...) was accepted: seed reports then keyed a claim by None
    args = {"name": "c", "statement": "s", "source": "src", field: None}
    with pytest.raises(TypeError, match=rf"Claim\.{field} must be a str; got NoneType"):
        Claim(**args, expected=-0.5)


def test_the_documented_forms_still_judge():
    fit = fit_rate([1, 2, 4, 8], [1, 0.7, 0.5, 0.36])
    assert ClaimCheck(RATE, fit).passed and RATE.check(fit).passed
    bc = check_bound([0.5], [1.0])
    assert ClaimCheck(BOUND, bc).passed and ClaimCheck(BOUND, bound_check=bc).passed
    assert isinstance(ClaimCheck(BOUND, bc).bound_check, BoundCheck)
