"""Every experiment's ``run`` takes an int seed ``>= 0`` and nothing else.

``run(config, seed=None)`` drew fresh OS entropy through ``numpy.random.default_rng`` (an
unreproducible figure whose ``meta["seed"]`` said ``None``) and ``seed=True`` ran as seed 1, in
every experiment but the four offline ones (reported by helper-44). The check runs first, so
these cases cost no work.
"""

import numpy as np
import pytest

from rltheory import experiments
from rltheory.experiments._seed import check_run_seed

NAMES = experiments.names()


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize(
    ("seed", "error", "message"),
    [
        (None, TypeError, r"seed must be an int >= 0 \(runs are reproducible\); got NoneType"),
        (True, TypeError, r"got bool"),
        (1.0, TypeError, r"got float"),
        ("0", TypeError, r"got str"),
        (-1, ValueError, r"seed"),
    ],
)
def test_run_refuses_a_seed_that_is_not_an_int(name, seed, error, message):
    exp = experiments.get(name)
    with pytest.raises(error, match=message):
        exp.run(exp.config(False), seed=seed)


def test_numpy_integer_seeds_are_ints():
    assert check_run_seed(np.int64(3)) == 3 and check_run_seed(0) == 0
    with pytest.raises(TypeError, match="got bool"):
        check_run_seed(np.bool_(True))


def test_every_experiment_is_covered():
    assert len(NAMES) == 23
