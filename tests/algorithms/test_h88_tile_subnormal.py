"""tile_features is invariant under scaling coordinates and range by a power of 2, down to subnormal spans.

Theorem: the tile of ``x`` is ``floor((x − low + j·w/n_tilings)/w)``, ``w = (high − low)/n_tiles``,
which is unchanged when ``x``, ``low`` and ``high`` are multiplied by ``2^k`` (Sutton & Barto
2018, §9.5.4: tiles are defined relative to the range). Dyadic coordinates below stay exact under
the scaling, so the features must be identical.

Before: for a span near the bottom of the float range the width ``span/n_tiles`` was subnormal
(rounded to a few bits) or 0 (``u = inf`` for every interior state, all put in the last tile, and
``0/0 = NaN`` for the state at ``low``, with numpy's divide warnings).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from rltheory.algorithms.critics import tile_features

X = np.array([[0.0], [3 / 16], [5 / 8], [1.0], [15 / 16], [1 / 2]])


@pytest.mark.parametrize(
    ("k", "n_tiles", "n_tilings"),
    [
        (
            -1060,
            3072,
            1,
        ),  # width 2^-1072/3: rounded to 2^-1074 (25% off), x = 1/2 went to tile 3071
        (-1060, 3000, 2),
        (-1068, 128, 1),  # width 2^-1075 rounds to 0: u = inf for interior states, NaN at low
        (-1070, 7, 3),
    ],
)
def test_subnormal_range_gives_the_unit_range_features(k, n_tiles, n_tilings):
    ref = tile_features(X, low=0.0, high=1.0, n_tiles=n_tiles, n_tilings=n_tilings)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # numpy's divide-by-zero warning was raised here
        got = tile_features(
            np.ldexp(X, k), low=0.0, high=np.ldexp(1.0, k), n_tiles=n_tiles, n_tilings=n_tilings
        )
    np.testing.assert_array_equal(got, ref)
    assert np.all(got.sum(axis=1) == n_tilings)  # one tile per tiling, as documented


def test_reference_tiles_of_a_subnormal_range():
    # 128 tiles of width 2^-1075 (which rounds to 0 in float64) on [0, 2^-1068]: x = (0, 3/16, 5/8, 1)
    # times 2^-1068 lie in tiles 0, 24, 80 and 127 (the last one closed at high): four distinct tiles,
    # so the identity. Before: the state at low in a NaN tile and the other three merged in tile 127
    x = np.ldexp(X[:4], -1068)
    got = tile_features(x, low=0.0, high=np.ldexp(1.0, -1068), n_tiles=128, n_tilings=1)
    assert got.tolist() == np.eye(4).tolist()
