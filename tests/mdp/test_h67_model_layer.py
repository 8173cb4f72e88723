"""Model-layer edge cases found by a bug hunt (helper 67): shapes, batches and closed forms."""

import numpy as np
import pytest

from rltheory.errors import InvalidModelError
from rltheory.mdp import FiniteHorizonMDP


@pytest.mark.parametrize("H", [2, 3])
def test_stationary_names_an_unbatched_reward_given_with_a_batched_kernel(H):
    # P (4, S, A, S) with R (S, A), S = A = 2: R was read as per transition by its number of axes;
    # H = 3 failed in numpy's broadcast_to ('operands could not be broadcast together ...') and
    # H = 2 reported 'got (2, 2, 2)', a shape nobody passed
    P = np.full((4, 2, 2, 2), 0.5)
    R = np.arange(4.0).reshape(2, 2)
    with pytest.raises(
        InvalidModelError,
        match=r"R must have shape \(4, 2, 2\) \(\.\.\., S, A\) or that of P \(4, 2, 2, 2\) "
        r"\(per transition\), with the batch axes of P; got \(2, 2\)",
    ):
        FiniteHorizonMDP.stationary(P, R, H)
    # a batched P (3, S, A, S) with a per-(s, a) R of another batch: named likewise
    with pytest.raises(InvalidModelError, match=r"got \(4, 2, 2\)"):
        FiniteHorizonMDP.stationary(P[:3], np.zeros((4, 2, 2)), H)


def test_stationary_repeats_both_reward_layouts_over_the_batch():
    # the layouts that stay accepted: R[b, s, a] and R[b, s, a, s'] repeated over h
    rng = np.random.default_rng(0)
    P = rng.dirichlet(np.ones(2), size=(3, 2, 2))
    R = rng.random((3, 2, 2))
    fh = FiniteHorizonMDP.stationary(P, R, 4)
    assert fh.batch_shape == (3,) and fh.H == 4
    np.testing.assert_array_equal(fh.R, np.broadcast_to(R[:, None], (3, 4, 2, 2)))
    Rt = rng.random((3, 2, 2, 2))
    ft = FiniteHorizonMDP.stationary(P, Rt, 4)
    np.testing.assert_allclose(
        ft.R, np.broadcast_to((P * Rt).sum(-1)[:, None], (3, 4, 2, 2)), rtol=1e-15
    )


def test_random_mdp_reads_a_0d_alpha_and_its_support_note_holds():
    from rltheory.mdp.structure import classify_mdp
    from rltheory.mdp.zoo import random_mdp

    # alpha=np.array(0.5) was refused ('alpha must be a positive number; got array(0.5)') although
    # every other scalar of the zoo (slip, p, laziness, rewards) accepts a 0-d array
    a = random_mdp(3, 2, gamma=0.9, rng=4, alpha=np.array(0.5))
    np.testing.assert_array_equal(a.P, random_mdp(3, 2, gamma=0.9, rng=4, alpha=0.5).P)
    with pytest.raises(ValueError, match=r"alpha must be a positive number; got -0\.5"):
        random_mdp(3, 2, gamma=0.9, rng=4, alpha=np.array(-0.5))
    # the docstring's support note: full support in floating point for alpha >= 0.1, not for 0.01
    big = random_mdp(20, 4, gamma=0.9, rng=0, alpha=0.1, batch_shape=(1000,))
    assert float(np.min(big.P)) > 0.0
    small = random_mdp(5, 2, gamma=0.9, rng=1, alpha=0.01)
    assert int(np.sum(small.P == 0.0)) > 0 and not classify_mdp(small).recurrent


def test_a_per_transition_reward_whose_mean_overflows_is_named():
    import warnings

    from rltheory.mdp import FiniteMDP

    # R(s, a, s') = the float64 maximum with a row of P summing to 1 + 6e-9 (inside the tolerance)
    # gave r(s, a) = inf after numpy's 'overflow encountered in reduce': a model holding a
    # non-finite reward, which the constructor promises never to build
    big = np.finfo(np.float64).max
    P = np.full((3, 2, 2, 2), 0.5)
    P[2, 1, 0] = [0.5 + 3e-9, 0.5 + 3e-9]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no overflow warning on the way
        with pytest.raises(
            InvalidModelError,
            match=r"R given per transition has r\(batch=\(2,\), s=1, a=0\) = sum_s' P R beyond the "
            r"float64 range \(largest 1\.798e\+308\); scale R",
        ):
            FiniteMDP(P, np.full(P.shape, big), 0.5)
        with pytest.raises(InvalidModelError, match=r"r\(batch=\(0,\), h=2, s=1, a=0\)"):
            FiniteHorizonMDP(P[None], np.full((1,) + P.shape, big))
    # the same rewards on exactly stochastic rows stay finite: r = the maximum itself
    m = FiniteMDP(np.full((3, 2, 2, 2), 0.5), np.full(P.shape, big), 0.5)
    assert np.all(m.R == big)


def test_zoo_names_a_reward_beyond_the_requested_dtype():
    import warnings

    import array_api_strict as xps

    from rltheory.mdp.zoo import gridworld, riverswim

    # a goal reward of 1e39 (r = 0.925e39 next to the goal at slip 0.1) with dtype=float32 read 'R must be finite; R(s=5, a=2) = inf' after
    # numpy's 'overflow encountered in cast' (a value nobody passed); now the model names it
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(
            InvalidModelError,
            match=r"R\(s=5, a=2\) = 9\.25e\+38 is beyond the float32 range of the model",
        ):
            gridworld(3, rewards=1e39, dtype=np.float32)
        with pytest.raises(InvalidModelError, match=r"R\(s=5, a=1\) = 3e\+39 is beyond the"):
            riverswim(large=1e40, xp=xps, dtype=xps.float32)
    # in range, the float32 model holds the float32 rounding of the float64 rewards
    g = gridworld(3, rewards=2.5, slip=0.3, dtype=np.float32)
    assert g.mdp.R.dtype == np.float32 and g.mdp.P.dtype == np.float32
    np.testing.assert_array_equal(
        g.mdp.R, gridworld(3, rewards=2.5, slip=0.3).mdp.R.astype(np.float32)
    )
    r = riverswim(xp=xps, dtype=xps.float32)
    assert r.R.dtype == xps.float32 and float(r.R[5, 1]) == 3000.0
