"""The structure rltheory.mdp.mixing_zoo documents for ring_mdp and two_room_mdp, checked with
classify_mdp (itself checked against brute force over all deterministic policies) over the edges
of the parameter ranges, slip included."""

from __future__ import annotations

import numpy as np
import pytest

from rltheory.mdp import (
    chain_structure,
    classify_mdp,
    policy_transition_matrix,
    ring_mdp,
    two_room_mdp,
)


@pytest.mark.parametrize("n", [2, 3, 4, 5, 6])
@pytest.mark.parametrize("laziness", [0.0, 0.3, 1.0])
@pytest.mark.parametrize("slip", [0.0, 0.2, 1.0])
def test_ring_structure_as_documented(n, laziness, slip):
    mdp = ring_mdp(n, laziness=laziness, slip=slip)
    st = classify_mdp(mdp)
    if laziness == 1.0:  # P = I
        assert st.unichain is False
    elif 0.0 < slip < 1.0:  # both neighbours under every action (the case the docs missed: it said
        assert st.kind == "recurrent"  # 'communicating but not unichain' for n >= 4)
    elif n == 2:
        assert st.kind == "recurrent"
    elif n == 3:
        assert st.kind == "unichain"
    else:
        assert st.communicating and st.unichain is False
    C = np.roll(np.eye(n), 1, axis=1)
    Pu = np.asarray(policy_transition_matrix(mdp, np.full((n, 2), 0.5)))
    np.testing.assert_allclose(Pu, laziness * np.eye(n) + (1 - laziness) * (C + C.T) / 2, rtol=0, atol=1e-15)
    if 0.0 < laziness < 1.0 or (laziness == 0.0 and n % 2):
        cs = chain_structure(Pu)
        assert cs.irreducible and cs.aperiodic
    elif laziness == 0.0:
        assert chain_structure(Pu).periods == (2,)


@pytest.mark.parametrize("room_size", [2, 3, 4])
@pytest.mark.parametrize("p", [1.0, 0.5, 1e-6])
def test_two_room_structure_as_documented(room_size, p):
    mdp = two_room_mdp(room_size, p)
    st = classify_mdp(mdp)
    assert st.communicating and st.unichain is False
    cs = chain_structure(np.asarray(policy_transition_matrix(mdp, np.full((2 * room_size, 2), 0.5))))
    assert cs.irreducible and cs.aperiodic


def test_a_positive_dial_that_underflows_in_the_dtype_is_refused(xp):
    # two_room_mdp(2, 1e-50, dtype=float32) passed the 'bottleneck must be > 0' check in float64 and
    # returned two disconnected rooms (the uniform chain had recurrent classes {0, 1}, {2, 3}), against
    # 'irreducible and aperiodic for p > 0'; a float32 slip or laziness of 1e-50 likewise turned the
    # recurrent ring into a multichain one and the lazy ring into a periodic one
    f32 = xp.float32
    with pytest.raises(ValueError, match=r"two_room_mdp\(bottleneck=1e-50\): P\[1, 1, 2\] = 1e-50 underflows to 0 in"):
        two_room_mdp(2, 1e-50, xp=xp, dtype=f32)
    with pytest.raises(ValueError, match=r"ring_mdp\(laziness=0\.5, slip=1e-50\): P\[0, 0, 1\] = 5e-51 underflows"):
        ring_mdp(4, slip=1e-50, xp=xp, dtype=f32)
    with pytest.raises(ValueError, match=r"ring_mdp\(laziness=1e-50, slip=0\.0\): P\[0, 0, 0\] = 1e-50 underflows"):
        ring_mdp(4, laziness=1e-50, xp=xp, dtype=f32)
    # representable (subnormal) dials keep their support, and float64 keeps 1e-50
    mdp = two_room_mdp(2, 1e-40, xp=xp, dtype=f32)
    assert chain_structure(np.asarray(policy_transition_matrix(mdp, np.full((4, 2), 0.5)), dtype=np.float64)).irreducible
    assert classify_mdp(ring_mdp(4, slip=1e-50)).kind == "recurrent"
