"""parse_seeds names a spec that is not text."""

from __future__ import annotations

import pytest

from rltheory.experiments.robustness import parse_seeds


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        # AttributeError "'int' object has no attribute 'strip'"
        (5, r"seeds must be text such as '0:20' or '0,3,7'; got int 5"),
        (None, r"seeds must be text such as '0:20' or '0,3,7'; got NoneType None"),
        # TypeError "a bytes-like object is required, not 'str'" from the ':' test
        (b"0:3", r"seeds must be text such as '0:20' or '0,3,7'; got bytes b'0:3'"),
    ],
)
def test_a_spec_that_is_not_text_is_named(spec, message):
    with pytest.raises(TypeError, match=message):
        parse_seeds(spec)


def test_text_specs_parse_as_before():
    assert parse_seeds(" 3:6 ") == (3, 4, 5) and parse_seeds("0,7,3") == (0, 7, 3)
