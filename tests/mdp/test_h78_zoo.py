"""Zoo and grid generators: seed-only reproducibility, degenerate sizes, documented values (helper-78)."""

from __future__ import annotations

import os
import platform
import subprocess
import sys

import numpy as np
import pytest

from rltheory.mdp import chain, cliff_walking, garnet, gridworld, random_mdp, riverswim
from rltheory.mdp.gridworlds import GridWorld
from rltheory.mdp.zoo import MAX_ZOO_P_BYTES

# ---- garnet's key branch (b² > S): the successors' order is the seed's alone -------------------


def _garnet_reference(S: int, A: int, b: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """The documented construction with a full sort instead of a partition (one chunk of keys:
    S·A·S ≤ 2**20): successors = the b smallest keys in increasing key order, probabilities = the
    spacings of b − 1 sorted uniform cuts, rewards U[0, 1), in the order garnet draws them."""
    gen = np.random.default_rng(seed)
    keys = gen.random((S * A, S))
    succ = np.argsort(keys, axis=1, kind="stable")[:, :b]
    cuts = np.sort(gen.random((S * A, b - 1)), axis=1)
    spacings = np.diff(
        np.concatenate([np.zeros((S * A, 1)), cuts, np.ones((S * A, 1))], axis=1), axis=1
    )
    P = np.zeros((S * A, S))
    np.put_along_axis(P, succ, spacings, axis=1)
    return P.reshape(S, A, S), gen.random((S, A))


@pytest.mark.parametrize(
    ("S", "A", "b", "seed"), [(10, 3, 7, 1), (12, 4, 6, 0), (5, 2, 5, 3), (3, 2, 2, 0)]
)
def test_garnet_key_branch_equals_the_sorted_reference(S, A, b, seed):
    # the documented construction, independently written; on AVX2 / AVX-512 machines the old code
    # agreed (numpy's SIMD partition returns the b smallest keys sorted), without AVX2 it did not
    # (next test): the order was the partition algorithm's, not the seed's
    assert b * b > S  # the key branch of _distinct_subsets
    P, R = _garnet_reference(S, A, b, seed)
    m = garnet(S, A, b, gamma=0.9, rng=seed)
    np.testing.assert_array_equal(np.asarray(m.P), P)
    np.testing.assert_array_equal(np.asarray(m.R), R)


_SNIPPET = (
    "import numpy as np, sys; from rltheory.mdp import garnet; "
    "sys.stdout.write(np.asarray(garnet(10, 3, 7, gamma=0.9, rng=1, batch_shape=(2,)).P).tobytes().hex())"
)


@pytest.mark.skipif(platform.machine() not in ("x86_64", "AMD64"), reason="x86 SIMD feature names")
def test_garnet_is_the_same_model_without_numpy_simd_dispatch():
    # the module docstring promises the same model on every machine: a process with numpy's AVX2 /
    # AVX-512 kernels disabled must build the very same garnet (old: another P from the same seed)
    env = dict(os.environ, NPY_DISABLE_CPU_FEATURES="X86_V3 X86_V4 AVX512_ICL AVX512_SPR")
    out = subprocess.run(
        [sys.executable, "-c", _SNIPPET],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    here = np.asarray(garnet(10, 3, 7, gamma=0.9, rng=1, batch_shape=(2,)).P).tobytes().hex()
    assert out.stdout == here


# ---- dense-size cap: refused before any draw ----------------------------------------------------
@pytest.mark.parametrize(
    ("make", "match"),
    [
        # old: drew successor sets one row at a time (1e6 rows, about 15 ms each: ~4 h) before numpy's
        # MemoryError for the 7.28 TiB P
        (
            lambda: garnet(10**6, 1, 1001, gamma=0.9, rng=0),
            r"^garnet: .* shape \(1000000, 1, 1000000\) would need 8e\+12 bytes",
        ),
        # old: int64 np.prod of the batch wrapped around; numpy's 'array is too big' named nothing
        (
            lambda: garnet(3, 2, 2, gamma=0.9, rng=0, batch_shape=(2**32, 2**32)),
            r"^garnet: .* shape \(4294967296, 4294967296, 3, 2, 3\) would need 2\.66e\+21 bytes",
        ),
        (
            lambda: random_mdp(3, 2, gamma=0.9, rng=0, batch_shape=(2**40,)),
            r"^random_mdp: .* would need 1\.58e\+14 bytes",
        ),
        (
            lambda: chain(10**6),
            r"^chain: .* shape \(1000000, 2, 1000000\) would need 1\.6e\+13 bytes",
        ),
        (
            lambda: riverswim(10**6),
            r"^riverswim: .* shape \(1000000, 2, 1000000\) would need 1\.6e\+13 bytes",
        ),
    ],
)
def test_a_dense_model_beyond_the_cap_is_refused_at_once(make, match):
    assert MAX_ZOO_P_BYTES == 2**36
    with pytest.raises(ValueError, match=match + r", more than MAX_ZOO_P_BYTES = 2\*\*36"):
        make()


def test_the_cap_admits_the_largest_models_in_use():
    # the benchmarks' largest zoo models (bench_gpu: random_mdp(3000, 8), garnet(2000, 10, 5)) and a
    # batch of a thousand small models stay far below the cap
    for lead, S in (((3000, 8), 3000), ((2000, 10), 2000), ((1000, 100, 4), 100)):
        assert 8 * np.prod(lead) * S < MAX_ZOO_P_BYTES
    assert random_mdp(2, 1, gamma=0.5, rng=0, batch_shape=(1000,)).batch_shape == (1000,)


# ---- GridWorld checks the geometry it is given -------------------------------------------------
def test_a_gridworld_built_directly_is_checked_and_normalised():
    g = gridworld(3, walls=[(1, 1)])
    # old: the walls list was kept as given, and its repeated wall was counted twice by state_of:
    # state_of(2, 2) = 6 while coords(6) = (2, 1); now the walls are a frozenset and the two agree
    same = GridWorld(g.mdp, (3, 3), [(1, 1), (1, 1)], g.goals)
    assert same.walls == frozenset({(1, 1)})
    assert [same.state_of(*same.coords(s)) for s in range(g.mdp.S)] == list(range(g.mdp.S))
    assert same.state_of(2, 2) == g.state_of(2, 2) == 7
    # old: all accepted; a 3x3 grid without walls drew the 8 states' values on 9 cells
    bad = [
        (
            dict(shape=(3, 3), walls=()),
            ValueError,
            r"^mdp must have one state per non-wall cell .* \(S, A\) = \(9, 4\) for the 3x3 grid with 0 walls; got \(8, 4\)",
        ),
        (
            dict(walls=[(1, 1)], start=(5, 5)),
            ValueError,
            r"^start\[0\] = \(5, 5\) is off the 3x3 grid",
        ),
        (
            dict(walls=[(1, 1)], goals=((1, 1),)),
            ValueError,
            r"^goals\[0\] = \(1, 1\) is also a wall",
        ),
        (
            dict(walls=[(1, 1)], goals=((2, 2), (2, 2))),
            ValueError,
            r"^goals\[1\] = \(2, 2\) repeats goals\[0\]",
        ),
        (
            dict(walls=[(1, 1)], hazards=[(1, 1.5)]),
            ValueError,
            r"^hazards\[0\] must be a cell \(row, col\) of two ints",
        ),
        (dict(shape=3, walls=()), ValueError, r"^shape must be a \(rows, cols\) pair; got 3"),
        (dict(shape=(3, 0), walls=()), ValueError, r"^shape\[1\] must be an integer >= 1; got 0"),
    ]
    for change, exc, match in bad:
        kw = dict(shape=(3, 3), goals=g.goals) | change
        with pytest.raises(exc, match=match):
            GridWorld(g.mdp, **kw)
    with pytest.raises(TypeError, match=r"^mdp must be a FiniteMDP; got str"):
        GridWorld("grid", (3, 3), (), ())
    # the generators' own worlds pass unchanged
    c = cliff_walking(gamma=0.9)
    assert (c.shape, c.start, len(c.hazards), c.goals) == ((4, 12), (3, 0), 10, ((3, 11),))
    assert gridworld(1).mdp.S == 1 and gridworld(1).goals == ((0, 0),)


def test_to_grid_names_text_values_and_fill():
    g = gridworld(3, walls=[(1, 1)])
    # reference: the 8 states in row-major order around the wall, nan (or fill) on the wall
    want = np.array([[0.0, 1.0, 2.0], [3.0, np.nan, 4.0], [5.0, 6.0, 7.0]])
    np.testing.assert_array_equal(g.to_grid(np.arange(8)), want)
    np.testing.assert_array_equal(g.to_grid(np.arange(8), fill=np.array(-1.0))[1, 1], -1.0)
    # old: numpy's "could not convert string to float: np.str_('x')" and a DType promotion error
    with pytest.raises(
        ValueError, match=r"^fill must be a real number \(nan by default\); got 'x'"
    ):
        g.to_grid(np.arange(8), fill="x")
    with pytest.raises(ValueError, match=r"^values must be real numbers; got dtype <U1"):
        g.to_grid(["a"] * 8)
