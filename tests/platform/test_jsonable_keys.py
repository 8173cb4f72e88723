"""rltheory.experiments.base.jsonable keeps every entry of a dict or says why it cannot."""

from __future__ import annotations

import json
import re

import pytest

from rltheory.experiments.base import ExperimentResult, jsonable


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ({1: "a", "1": "b"}, "the keys 1 and '1' both become the JSON key '1'; rename one"),
        ({"m": {0.5: 1.0, "0.5": 2.0}}, "the keys 0.5 and '0.5' both become the JSON key '0.5'"),
        ([{None: 1, "None": 2}], "the keys None and 'None' both become the JSON key 'None'"),
    ],
)
def test_keys_that_become_one_json_key_are_refused(value, message):
    # str(k) of 1 and "1" is "1": the dict comprehension kept only the last entry, without a word
    with pytest.raises(ValueError, match=re.escape(message)):
        jsonable(value)


def test_a_result_whose_meta_would_lose_an_entry_is_not_written_short():
    r = ExperimentResult("x", {}, {"panel": {"k": [1, 2]}}, [], meta={1: "int key", "1": "str key"})
    with pytest.raises(ValueError, match="both become the JSON key '1'"):
        r.to_json_dict()
    # distinct keys of mixed types are kept, each under its str
    d = jsonable({1: "a", "2": "b", (3, 4): "c"})
    assert d == {"1": "a", "2": "b", "(3, 4)": "c"} and json.loads(json.dumps(d)) == d
