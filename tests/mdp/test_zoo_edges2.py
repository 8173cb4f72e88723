"""Edge cases of the zoo generators' arguments (cells, goals, numpy scalars)."""

import numpy as np
import pytest

from rltheory.mdp import garnet, gridworld, random_mdp, two_state


@pytest.mark.parametrize(
    "cell",
    [(1.5, 0), "11", (True, False), (1,), (1, 1, 0), np.array([1.0, 1.0])],
    ids=["float", "text", "bools", "one", "three", "float-array"],
)
def test_a_cell_must_be_a_pair_of_ints(cell):
    # int() used to truncate 1.5 to 1, parse "11" into (1, 1) and read True as 1: the wall landed
    # on a cell nobody named
    with pytest.raises(ValueError, match=r"walls\[0\] must be a cell \(row, col\) of two ints"):
        gridworld(3, walls=[cell])


def test_numpy_int_cells_are_cells():
    g = gridworld(3, walls=np.array([[1, 1]]), goals=[(np.int64(2), np.int32(2))])
    assert g.walls == frozenset({(1, 1)}) and g.goals == ((2, 2),) and g.mdp.S == 8


def test_a_repeated_goal_is_refused():
    # with goals [(0, 1), (0, 1)] and rewards [1, 5] the first reward was dropped silently
    with pytest.raises(ValueError, match=r"goals\[1\] = \(0, 1\) repeats goals\[0\]"):
        gridworld(3, goals=[(0, 1), (0, 1)], rewards=[1.0, 5.0])


def test_random_mdp_accepts_a_numpy_integer_alpha():
    # alpha=np.int64(2) was refused as 'alpha must be a positive number'
    a = random_mdp(3, 2, gamma=0.5, rng=4, alpha=np.int64(2))
    b = random_mdp(3, 2, gamma=0.5, rng=4, alpha=2.0)
    np.testing.assert_array_equal(a.P, b.P)


@pytest.mark.parametrize(
    "cell", [(1.5, 0), (True, 0), ("1", 0), (0, 2.0)], ids=["float", "bool", "text", "float-col"]
)
def test_state_of_takes_int_coordinates(cell):
    # state_of(1.5, 0) on a 3x3 grid returned 4 (cell (1, 1)), state_of(True, 0) returned 3, and
    # state_of("1", 0) failed with "'<=' not supported between instances of 'int' and 'str'"
    g = gridworld(3)
    with pytest.raises(ValueError, match=r"cell coordinate [rc] must be an int; got"):
        g.state_of(*cell)
    assert g.state_of(np.int64(1), np.int32(1)) == 4


@pytest.mark.parametrize(
    "dtype", [np.int64, np.float16, "float16", bool], ids=["int64", "float16", "text", "bool"]
)
@pytest.mark.parametrize(
    "make",
    [
        lambda dt: garnet(3, 2, 2, gamma=0.5, rng=0, dtype=dt),
        lambda dt: random_mdp(3, 2, gamma=0.5, rng=0, dtype=dt),
        lambda dt: gridworld(2, gamma=0.5, dtype=dt).mdp,
        lambda dt: two_state(dtype=dt),
    ],
    ids=["garnet", "random_mdp", "gridworld", "two_state"],
)
def test_the_dtype_must_be_a_float_dtype(make, dtype):
    # dtype=np.int64 cast the probabilities to 0 and was reported as 'each P[s, a, :] must sum to 1;
    # worst row (s=0, a=0) sums to 0', float16 as a row summing to 0.999755859375
    with pytest.raises(TypeError, match=r"dtype must be float32 or float64; got"):
        make(dtype)
    assert make(np.float32).P.dtype == np.float32 and make("float64").P.dtype == np.float64


def test_random_mdp_alpha_beyond_the_dirichlet_range_is_named():
    # alpha = 1e308 with S = 3: numpy's Dirichlet sums 3 Gamma(1e308) variates (inf) and returned
    # rows of zeros, reported as "each P[s, a, :] must sum to 1 ... sums to 0"
    with pytest.raises(
        ValueError,
        match=r"alpha = 1e\+308 is too large for S = 3: .*S\*alpha = 3 x 1e\+308, beyond the float64 range",
    ):
        random_mdp(3, 2, gamma=0.9, rng=0, alpha=1e308)
    # the largest alpha still drawn: rows are uniform to float64 rounding (Dirichlet(α·1) has
    # coordinate standard deviation ~ 1/(S·sqrt(S·α)))
    P = np.asarray(random_mdp(3, 2, gamma=0.9, rng=0, alpha=5e307).P)
    np.testing.assert_allclose(P, 1.0 / 3.0, rtol=1e-15)


def test_scalar_arguments_take_0d_arrays_and_reward_lists_take_numbers_only():
    # slip=np.array(0.1) was refused as "slip must be a number in [0, 1]; got array(0.1)" (and
    # rewards, step_reward, p, r_low, r_high, cost likewise), while check_real's arguments accept
    # 0-d arrays; reward lists were read by np.asarray(..., float): ["2.5"] parsed, [True] as 1.0
    ref = gridworld(3, slip=0.1, rewards=2.0, step_reward=-1.0)
    got = gridworld(3, slip=np.array(0.1), rewards=np.array(2.0), step_reward=np.array(-1.0))
    np.testing.assert_array_equal(got.mdp.P, ref.mdp.P)
    np.testing.assert_array_equal(got.mdp.R, ref.mdp.R)
    a = two_state(p=np.array(0.25), r_low=np.array(0.5), r_high=np.array(1), cost=np.array(0.1))
    b = two_state(p=0.25, r_low=0.5, r_high=1, cost=0.1)
    np.testing.assert_array_equal(a.P, b.P)
    np.testing.assert_array_equal(a.R, b.R)
    for bad in (["2.5"], [True], [None], np.array(["1"])):
        with pytest.raises(
            ValueError, match=r"rewards must be a number or a sequence of numbers; got"
        ):
            gridworld(3, rewards=bad)
    with pytest.raises(ValueError, match=r"slip must be a number in \[0, 1\]; got array\(True\)"):
        gridworld(3, slip=np.array(True))
