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
