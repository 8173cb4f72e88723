"""Zoo and grid generators: seed-only reproducibility, degenerate sizes, documented values (helper-78)."""

from __future__ import annotations

import os
import platform
import subprocess
import sys

import numpy as np
import pytest

from rltheory.mdp import garnet

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
