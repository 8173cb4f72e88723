"""solver-comparison's Config names a bad field before anything runs."""

from __future__ import annotations

import re

import pytest

from rltheory.experiments.solver_comparison import Config


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        # ran every solver first, then "'NoneType' object has no attribute 'iterations'"
        ({"repeats": 0}, "Config.repeats must be an integer >= 1; got 0"),
        # ran, then check_bound's "needs at least one point; got empty arrays"
        ({"sizes": ()}, "Config.sizes must be a non-empty tuple of integers >= 1; got ()"),
        # ran as S = 25
        ({"sizes": (25.5,)}, "Config.sizes[0] must be an integer >= 1; got 25.5"),
        ({"sizes": (50, True)}, "Config.sizes[1] must be an integer >= 1; got True"),
        ({"repeats": True}, "Config.repeats must be an integer >= 1; got True"),
        (
            {"sizes": (50, 5), "branching": 10},
            "Config.branching must be at most every size; got 10 > Config.sizes[1] = 5",
        ),
        ({"gamma": 0.0}, "Config.gamma must be a finite number in (0, 1); got 0.0"),
        ({"gamma": 1.0}, "Config.gamma must be a finite number in (0, 1); got 1.0"),
        ({"tol": 0.0}, "Config.tol must be a finite number > 0; got 0.0"),
        ({"epsilon": -1.0}, "Config.epsilon must be a finite number > 0; got -1.0"),
        ({"actions": 0}, "Config.actions must be an integer >= 1; got 0"),
        ({"mpi_m": -1}, "Config.mpi_m must be an integer >= 0; got -1"),
    ],
)
def test_a_bad_field_is_named_before_the_run(fields, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        Config(**fields)


def test_the_presets_and_value_iteration_as_mpi_are_valid():
    assert Config.quick().sizes == (25, 50, 100, 200, 400)
    assert Config.full().gamma == 0.99
    assert Config(mpi_m=0).mpi_m == 0  # m = 0 partial sweeps: MPI is value iteration
