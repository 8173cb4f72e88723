"""The seed rule of every experiment's ``run(config, *, seed=...)``: an int ``≥ 0``.

A figure is reproducible only from a seed: ``seed=None`` drew fresh OS entropy through
``numpy.random.default_rng`` (an unreproducible run whose ``meta["seed"]`` said ``None``), and
``seed=True`` was read as the seed 1.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._validate import check_int

__all__ = ["check_run_seed"]


def check_run_seed(seed: Any) -> int:
    """``seed`` as an int ``≥ 0`` (numpy integers accepted); ``TypeError`` for anything that is
    not an integer (``None``, bools, floats, text), ``ValueError`` for a negative one."""
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)):
        raise TypeError(f"seed must be an int >= 0 (runs are reproducible); got {type(seed).__name__}")
    return check_int(seed, "seed", 0)
