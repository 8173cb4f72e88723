"""The array-layout converters refuse complex and text entries, naming the argument.

Their cast to float dropped an imaginary part with only numpy's ComplexWarning (``R + 1j`` became
``R``, a model silently different from the input) and parsed text as numbers (``R.astype(str)`` was
accepted), unlike :class:`~rltheory.mdp.FiniteMDP`, which raises ``TypeError`` for both.
"""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from rltheory.mdp import FiniteMDP
from rltheory.mdp.array_layouts import (
    from_mdptoolbox,
    from_quantecon,
    to_mdptoolbox,
    to_quantecon_sa,
)

RNG = np.random.default_rng(0)
P = RNG.dirichlet(np.ones(2), size=(2, 2))  # P[s, a, s']
R = RNG.random((2, 2))
PA = np.ascontiguousarray(P.transpose(1, 0, 2))  # mdptoolbox's P[a, s, s']
L_R, L_Q, S_IDX, A_IDX = to_quantecon_sa(FiniteMDP(P, R, 0.9))


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: from_quantecon(R + 1j, P, 0.9), "R must hold real numbers; got a complex array"),
        (lambda: from_quantecon(R, P + 0j, 0.9), "Q must hold real numbers; got a complex array"),
        (
            lambda: from_quantecon(R.astype(str), P, 0.9),
            "R must hold real numbers; got a string array",
        ),
        (
            lambda: from_quantecon(L_R + 1j, L_Q, 0.9, S_IDX, A_IDX),
            "R must hold real numbers; got a complex array",
        ),
        (
            lambda: from_quantecon(L_R, sp.csr_matrix(L_Q + 0j), 0.9, S_IDX, A_IDX),
            "Q must hold real numbers; got a complex array",
        ),
        (lambda: from_mdptoolbox(PA, R + 1j, 0.9), "R must hold real numbers; got a complex array"),
        (lambda: from_mdptoolbox(PA + 0j, R, 0.9), "P must hold real numbers; got a complex array"),
        (
            lambda: from_mdptoolbox([PA[0], PA[1] + 0j], R, 0.9),
            r"P\[1\] must hold real numbers; got a complex array",
        ),
        (
            lambda: from_mdptoolbox(PA, R.astype(str), 0.9),
            "R must hold real numbers; got a string array",
        ),
    ],
)
def test_complex_and_text_entries_are_refused(call, message):
    with warnings.catch_warnings(record=True) as caught:  # no ComplexWarning on the way
        warnings.simplefilter("always")
        with pytest.raises(TypeError, match=message):
            call()
    assert not caught, [str(w.message) for w in caught]


def test_real_inputs_still_round_trip_exactly():
    # (the refusal is of complex and text only: integers, booleans and object arrays of reals still
    # become float64; float32 stays float32; the layouts round-trip bit for bit)
    for dt in (np.float32, np.float64):
        m = FiniteMDP(P.astype(dt), R.astype(dt), 0.9)
        back = from_mdptoolbox(*to_mdptoolbox(m), 0.9)
        assert back.P.dtype == dt and np.array_equal(back.P, m.P) and np.array_equal(back.R, m.R)
        back = from_quantecon(*to_quantecon_sa(m)[:2], 0.9, *to_quantecon_sa(m)[2:])
        assert back.P.dtype == dt and np.array_equal(back.P, m.P) and np.array_equal(back.R, m.R)
    m = from_mdptoolbox(PA, np.array([1, 2]), 0.9)
    assert m.R.dtype == np.float64 and m.R.tolist() == [[1.0, 1.0], [2.0, 2.0]]
    m = from_quantecon(np.array([[0.5, 1], [0, 1]], dtype=object), P, 0.9)
    assert m.R.tolist() == [[0.5, 1.0], [0.0, 1.0]]
