"""The pairs bootstrap of ``fit_rate`` draws its resamples in blocks.

One ``(n_boot, n)`` block of indices and its gathered copies took about 1 GB at ``n = 2·10⁴``
points (and 5 GB at ``10⁵``); fits small enough for one block still draw it in one call.
"""

import tracemalloc

import numpy as np

from rltheory.bounds import rates
from rltheory.bounds.rates import fit_rate


def _noisy_power_law(n, seed=0):
    rng = np.random.default_rng(seed)
    t = np.arange(1, n + 1, dtype=float)
    return t, t**-0.5 * np.exp(0.1 * rng.standard_normal(n))


def test_large_fit_stays_within_a_few_blocks_of_memory():
    t, err = _noisy_power_law(20_000)
    tracemalloc.start()
    try:
        fit = fit_rate(t, err, n_boot=1000, seed=1)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # a block is 2**22 indices (32 MB as int64; its gathered x and y copies as much again each):
    # ~200 MB, against ~1 GB for the single (1000, 20000) block
    assert peak < 300 * 2**20, peak
    assert fit.ci[0] <= -0.5 <= fit.ci[1]


def test_blocks_draw_the_same_distribution():
    # a fit drawn in blocks of 100 resamples and in one block: different draws, the same law
    t, err = _noisy_power_law(400, seed=2)
    one = fit_rate(t, err, n_boot=4000, seed=3)
    saved = rates._BOOT_ELEMENTS
    rates._BOOT_ELEMENTS = 400 * 100
    try:
        blocked = fit_rate(t, err, n_boot=4000, seed=3)
    finally:
        rates._BOOT_ELEMENTS = saved
    assert blocked.rate == one.rate
    # 95% percentile bounds of 4000 resamples: Monte-Carlo error well below 2% of the width
    width = one.ci[1] - one.ci[0]
    assert abs(blocked.ci[0] - one.ci[0]) < 0.05 * width
    assert abs(blocked.ci[1] - one.ci[1]) < 0.05 * width
