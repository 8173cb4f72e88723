"""MDP core, third pass: finite-horizon models, Bellman helpers and the data layer."""

import itertools
import warnings
from fractions import Fraction

import numpy as np
import pytest

from rltheory.errors import InvalidModelError
from rltheory.mdp import FiniteHorizonMDP, FiniteMDP, backward_induction, evaluate_finite_horizon
from rltheory.mdp.bellman import (
    bellman_operator,
    bellman_optimality_operator,
    evaluate_policy,
    expected_value,
    occupancy_measure,
    performance_difference,
    q_values,
    state_occupancy,
)
from rltheory.mdp.offline_data import (
    EpisodeDataset,
    adversarial_policy,
    behaviour_policy,
    load_dataset,
    sample_episodes,
    sample_game_episodes,
    sample_preferences,
    save_dataset,
    trajectory_returns,
)
from rltheory.mdp.structure import chain_structure, classify_mdp, require_weakly_communicating
from rltheory.mdp.transition_data import TransitionDataset, sample_transition_dataset


def test_stationary_names_a_reward_beyond_the_model_dtype_with_its_value():
    # FiniteHorizonMDP.stationary cast R to P's dtype before the constructor's range check, so a
    # float64 reward 1e300 with a float32 P read 'R must be finite; R(h=0, s=0, a=1) = inf' after
    # numpy's 'overflow encountered in cast'
    P = np.ones((1, 2, 1), np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(
            InvalidModelError, match=r"R\(h=0, s=0, a=1\) = 1e\+300 is beyond the float32 range"
        ):
            FiniteHorizonMDP.stationary(P, np.array([[1.0, 1e300]]), H=2)
        with pytest.raises(
            InvalidModelError,
            match=r"R\(h=0, s=0, a=0, s'=0\) = 4e\+38 is beyond the float32 range",
        ):
            FiniteHorizonMDP.stationary(P[:, :1], np.array([[[4e38]]]), H=3)
    # in range: cast to P's dtype as the constructor does, same model as the explicit one
    fh = FiniteHorizonMDP.stationary(P, np.array([[1.0, 3e38]]), H=2)
    assert fh.R.dtype == np.float32 and fh.R[1, 0, 1] == np.float32(3e38)
    explicit = FiniteHorizonMDP(np.stack([P, P]), np.array([[[1.0, 3e38]]] * 2))
    assert np.array_equal(fh.R, explicit.R) and np.array_equal(fh.P, explicit.P)


def _batch_model(B=3, S=4, A=2, seed=0):
    rng = np.random.default_rng(seed)
    P = rng.dirichlet(np.ones(S), (B, S, A))
    return FiniteMDP(P, rng.random((B, S, A)), gamma=0.9), rng


@pytest.mark.parametrize(
    ("call", "msg"),
    [
        (
            lambda m, rng: bellman_operator(
                m[0], rng.random((3, 4)), rng.dirichlet(np.ones(2), (4, 4))
            ),
            r"bellman_operator: .*pi's batch shape \(4,\), V's batch shape \(3,\), the model's batch shape \(\)",
        ),
        (
            lambda m, rng: bellman_operator(m, rng.random(4), rng.dirichlet(np.ones(2), (4, 4))),
            r"bellman_operator: .*pi's batch shape \(4,\), V's batch shape \(\), the model's batch shape \(3,\)",
        ),
        (
            lambda m, rng: state_occupancy(m, np.full((4, 2), 0.5), rng.dirichlet(np.ones(4), 2)),
            r"state_occupancy: .*mu's batch shape \(2,\), pi's batch shape \(\), the model's batch shape \(3,\)",
        ),
        (
            lambda m, rng: occupancy_measure(
                m[0], np.zeros((5, 4), int), rng.dirichlet(np.ones(4), 2)
            ),
            r"state_occupancy: .*mu's batch shape \(2,\), pi's batch shape \(5,\)",
        ),
        (
            lambda m, rng: performance_difference(
                m[0], rng.dirichlet(np.ones(2), (4, 4)), rng.dirichlet(np.ones(2), (3, 4))
            ),
            r"performance_difference: .*pi_new's batch shape \(4,\), pi_old's batch shape \(3,\)",
        ),
        (
            lambda m, rng: expected_value(np.ones((3, 2)), np.full((4, 2), 0.5)),
            r"expected_value: .*V's batch shape \(3,\), mu's batch shape \(4,\)",
        ),
    ],
    ids=[
        "bellman_operator-V",
        "bellman_operator-model",
        "state_occupancy",
        "occupancy_measure",
        "pd",
        "expected_value",
    ],
)
def test_batches_that_do_not_broadcast_are_named(call, msg):
    # each failed inside numpy ('operands could not be broadcast together with shapes ...'),
    # naming none of the arguments
    m, rng = _batch_model()
    with pytest.raises(ValueError, match=msg):
        call(m, rng)


def test_broadcasting_batches_equal_the_per_instance_answers():
    # the new batch checks accept what broadcasts: a batch of models with one V / one mu / one policy
    m, rng = _batch_model(seed=1)
    V = rng.random(4)
    pi = rng.dirichlet(np.ones(2), (3, 4))
    mu = rng.dirichlet(np.ones(4), 3)
    T = bellman_operator(m, V, pi)
    d = state_occupancy(m, pi, mu)
    pd = performance_difference(m, pi, np.zeros(4, int), mu)
    ev = expected_value(np.stack([V, 2 * V, 3 * V]), mu[0])
    for i in range(3):
        mi = m[i]
        np.testing.assert_allclose(T[i], bellman_operator(mi, V, pi[i]), rtol=0, atol=1e-15)
        # d = (1 - gamma) (I - gamma P_pi^T)^{-1} mu, by an independent dense inverse
        Ppi = np.sum(pi[i][:, :, None] * mi.P, axis=1)
        exact = 0.1 * np.linalg.inv(np.eye(4) - 0.9 * Ppi.T) @ mu[i]
        np.testing.assert_allclose(d[i], exact, rtol=0, atol=1e-14)
        lhs = mu[i] @ (evaluate_policy(mi, pi[i]) - evaluate_policy(mi, np.zeros(4, int)))
        np.testing.assert_allclose(pd[i], lhs, rtol=0, atol=1e-12)
        np.testing.assert_allclose(ev[i], (i + 1) * V @ mu[0], rtol=1e-15)


def test_evaluate_finite_horizon_refuses_a_model_that_is_not_finite_horizon():
    # a FiniteMDP failed with AttributeError "'FiniteMDP' object has no attribute 'H'", None with
    # "'NoneType' object has no attribute 'xp'" (backward_induction already raised TypeError)
    m = FiniteMDP(np.ones((1, 1, 1)), np.ones((1, 1)), gamma=0.5)
    with pytest.raises(
        TypeError, match=r"expects a FiniteHorizonMDP; got FiniteMDP \(use evaluate_policy"
    ):
        evaluate_finite_horizon(m, [[0]])
    with pytest.raises(TypeError, match=r"expects a FiniteHorizonMDP; got NoneType$"):
        evaluate_finite_horizon(None, [[0]])
    # the finite-horizon form of the same model: V_0 = H r = 2
    fh = FiniteHorizonMDP.stationary(m.P, m.R, H=2)
    np.testing.assert_array_equal(evaluate_finite_horizon(fh, [[0], [0]])[:, 0], [2.0, 1.0, 0.0])


def test_sample_transition_dataset_refuses_a_model_that_is_not_a_finite_mdp():
    # a FiniteHorizonMDP failed with IndexError 'index 1 is out of bounds for axis 1 with size 1'
    # (its R[h, s, a] was indexed as R[s, a]), None with an AttributeError on batch_shape
    fh = FiniteHorizonMDP.stationary(np.ones((1, 2, 1)), np.array([[0.0, 1.0]]), H=3)
    nu = np.array([[0.5, 0.5]])
    with pytest.raises(
        TypeError, match=r"needs a FiniteMDP; got FiniteHorizonMDP \(use sample_episodes"
    ):
        sample_transition_dataset(fh, nu, 3, rng=0)
    with pytest.raises(TypeError, match=r"needs a FiniteMDP; got NoneType$"):
        sample_transition_dataset(None, nu, 3, rng=0)
    # the discounted model with the same dynamics: action 1 pays 1, so the mean rewards equal the
    # sampled actions
    d = sample_transition_dataset(FiniteMDP(fh.P[0], fh.R[0], gamma=0.5), nu, 50, rng=0)
    np.testing.assert_array_equal(d.rewards, d.actions.astype(float))
    assert set(d.actions.tolist()) == {0, 1}


def test_trajectory_returns_beyond_the_float_range_are_a_located_error():
    # rewards 1e308 over H = 2 steps summed to inf with numpy's 'overflow encountered in reduce'
    d = EpisodeDataset(
        np.zeros((2, 3), int), np.array([[0, 0], [1, 1]]), np.zeros((2, 2)), S=1, A=2
    )
    R = np.array([[[1.0, 1e308]], [[1.0, 1e308]]])  # (H, S, A): action 1 pays 1e308 per step
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(
            ValueError, match=r"episode k=1 for player i=0 left the float64 range \(inf\): H = 2"
        ):
            trajectory_returns(d, R)
        # representable returns are the exact sums: 2 steps of 1, and 2 steps of 2^1022
        big = np.array([[[1.0, 2.0**1022]], [[1.0, 2.0**1022]]])
        np.testing.assert_array_equal(trajectory_returns(d, big), [[2.0], [2.0**1023]])
        # sample_preferences still compares such episodes step by step (its own sum)
        y = sample_preferences(d, d.subset([1, 0]), R, rng=0).labels
        np.testing.assert_array_equal(y, [[0], [1]])


def _far_state_model():
    # state 0: action 0 stays (reward 0), action 1 moves to state 1 paying 1e308 at h = 0;
    # state 1 is absorbing and pays 1e308 at h = 1 only. Under "always action 0":
    # V_0 = (0, 1e308), V_1 = (0, 1e308), V_2 = 0, all finite, while
    # Q_0(0, 1) = 1e308 + V_1(1) = 2e308 overflows (an action the policy never takes)
    P = np.zeros((2, 2, 2, 2))
    P[:, 0, 0, 0] = P[:, 0, 1, 1] = 1.0
    P[:, 1, :, 1] = 1.0
    R = np.zeros((2, 2, 2))
    R[0, 0, 1] = 1e308
    R[1, 1, :] = 1e308
    return FiniteHorizonMDP(P, R)


def test_evaluate_finite_horizon_ignores_overflow_in_actions_the_policy_never_takes():
    # 0 * inf = nan made the finite V^pi a refused 'V^pi_h left the float64 range ... = nan'
    fh = _far_state_model()
    want = np.array([[0.0, 1e308], [0.0, 1e308], [0.0, 0.0]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_array_equal(evaluate_finite_horizon(fh, np.zeros((2, 2), int)), want)
        stoch = np.tile([[1.0, 0.0], [0.5, 0.5]], (2, 1, 1))
        np.testing.assert_array_equal(evaluate_finite_horizon(fh, stoch), want)
    # a policy that takes the action with any probability has V_0(0) = 2e308 p: still refused
    risky = np.tile([[0.75, 0.25], [0.5, 0.5]], (2, 1, 1))
    with pytest.raises(ValueError, match=r"V\^pi_h left the float64 range.*\(h=0, s=0\) = inf"):
        evaluate_finite_horizon(fh, risky)
    # halving R (exact) gives the representable 2e308 p / 2 = 2.5e307 for p = 1/4
    half = FiniteHorizonMDP(fh.P, fh.R / 2)
    assert evaluate_finite_horizon(half, risky)[0, 0] == 0.25 * 1e308


def test_bellman_operator_ignores_overflow_in_actions_the_policy_never_takes():
    # state 0: action 0 stays (reward 0), action 1 moves to state 1 paying 1e308; state 1 absorbs.
    # With V = (0, 1.7e308) and gamma = 1/2: Q_V(0, 1) = 1e308 + 0.85e308 overflows, but
    # T^pi V for "always action 0" is (0, 0.85e308). q_values' range check refused it
    P = np.zeros((2, 2, 2))
    P[0, 0, 0] = P[0, 1, 1] = 1.0
    P[1, :, 1] = 1.0
    R = np.zeros((2, 2))
    R[0, 1] = 1e308
    m = FiniteMDP(P, R, gamma=0.5)
    V = np.array([0.0, 1.7e308])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_array_equal(bellman_operator(m, V, np.array([0, 0])), [0.0, 0.85e308])
        np.testing.assert_array_equal(
            bellman_operator(m, V, np.array([[1.0, 0.0], [0.5, 0.5]])), [0.0, 0.85e308]
        )
    # taking action 1 with probability 1/2 gives T^pi V(0) = 1.85e308 / 2, but the product
    # overflows first: refused, located
    with pytest.raises(
        ValueError, match=r"bellman_operator: T\^pi V left the float64 range.*\(s=0\) = inf"
    ):
        bellman_operator(m, V, np.array([[0.5, 0.5], [1.0, 0.0]]))
    # on representable data it is sum_a pi Q_V (the definition), e.g. V = 0
    pi = np.array([[0.25, 0.75], [1.0, 0.0]])
    np.testing.assert_array_equal(bellman_operator(m, np.zeros(2), pi), [0.75e308, 0.0])


@pytest.mark.parametrize("path", ["", ".", "..", "/", "x.npz/", "sub/"])
def test_save_dataset_refuses_a_directory_path(path, tmp_path, monkeypatch):
    # '' , '.' and '/' failed with "PosixPath('.') has an empty name" (naming no argument), '..'
    # wrote '...npz' into the working directory, 'x.npz/' the file x.npz
    monkeypatch.chdir(tmp_path)
    d = EpisodeDataset(np.array([[0, 1, 1]]), np.array([[1, 0]]), np.array([[0.5, 1.0]]), S=2, A=2)
    with pytest.raises(
        ValueError, match=r"save_dataset: path must name a file, not a directory; got "
    ):
        save_dataset(d, path)
    assert list(tmp_path.iterdir()) == []
    # a file name next to them is written and read back
    back = load_dataset(save_dataset(d, "x"))
    assert np.array_equal(back.states, d.states) and (tmp_path / "x.npz").is_file()


def test_save_replaces_atomically_under_a_reader_on_a_unicode_path(tmp_path):
    # save_dataset writes a temporary file in the same folder and renames it over the target
    # (os.replace): a reader that opened the old archive keeps reading it whole, a new open sees
    # the new one, and no temporary file is left behind. Unicode and spaces in the name are kept.
    old = EpisodeDataset([[0, 1]], [[0]], np.array([[0.25]], np.float32), S=2, A=1)
    new = EpisodeDataset([[1, 0], [0, 0]], [[0], [0]], [[1.5], [-2.0]], S=2, A=1)
    path = save_dataset(old, tmp_path / "données ☃ v1")
    assert path.name == "données ☃ v1.npz"
    with open(path, "rb") as reader:
        save_dataset(new, path)
        np.testing.assert_array_equal(np.load(reader)["rewards"], [[0.25]])  # the old bytes, whole
    back = load_dataset(path)
    np.testing.assert_array_equal(back.rewards, [[1.5], [-2.0]])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["données ☃ v1.npz"]


def test_performance_difference_ignores_overflow_at_pairs_never_visited():
    # two absorbing states, mu = (1, 0): state 1 is never visited. pi_old = "action 0" has
    # V^pi = (0, 0.5e308 / (1 - 1/2)) = (0, 1e308), and A^pi(1, 1) = -1.5e308 + 0.5e308 - 1e308
    # = -2e308 overflows; advantage() refused it, so performance_difference raised although its
    # right-hand side only weighs state 0: 1/(1 - gamma) * d(0, 1) * A^pi(0, 1) = 2 * 1 * 1 = 2
    P = np.zeros((2, 2, 2))
    P[0, :, 0] = P[1, :, 1] = 1.0
    R = np.array([[0.0, 1.0], [0.5e308, -1.5e308]])
    m = FiniteMDP(P, R, gamma=0.5, mu=np.array([1.0, 0.0]))
    old = np.array([0, 0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for new in (np.array([1, 0]), np.array([1, 1]), np.array([[0.0, 1.0], [0.5, 0.5]])):
            assert performance_difference(m, new, old) == 2.0
        # the left-hand side where it is representable: V^{pi'}(mu) - V^pi(mu) = 2 - 0
        assert (
            float(
                np.array([1.0, 0.0])
                @ (evaluate_policy(m, np.array([1, 0])) - evaluate_policy(m, old))
            )
            == 2.0
        )
    # visited from a mu that weighs state 1: the term is -inf, refused (located)
    with pytest.raises(
        ValueError, match=r"performance_difference: the value difference left the float64 range"
    ):
        performance_difference(m, np.array([1, 1]), old, np.array([0.5, 0.5]))


def test_require_weakly_communicating_needs_a_finite_mdp():
    # a FiniteHorizonMDP passed silently (its h axis was read as a batch axis, each P_h checked as
    # a model), None raised AttributeError "'NoneType' object has no attribute 'batch_shape'"
    two_absorbing = np.stack([np.eye(2)[:, None, :]] * 2)  # P_h: each state absorbing, one action
    fh = FiniteHorizonMDP(two_absorbing, np.zeros((2, 2, 1)))
    with pytest.raises(
        TypeError, match=r"^relative_value_iteration needs a FiniteMDP; got FiniteHorizonMDP$"
    ):
        require_weakly_communicating(fh, "relative_value_iteration")
    with pytest.raises(TypeError, match=r"needs a FiniteMDP; got NoneType$"):
        require_weakly_communicating(None, "x")
    # the same dynamics as a FiniteMDP: two closed classes, refused with both named
    with pytest.raises(
        InvalidModelError, match=r"2 classes closed under every action: \{0\}, \{1\}"
    ):
        require_weakly_communicating(FiniteMDP(two_absorbing[0], np.zeros((2, 1)), gamma=None), "x")
    require_weakly_communicating(
        FiniteMDP(np.full((2, 1, 2), 0.5), np.zeros((2, 1)), gamma=None), "x"
    )


def test_trajectory_returns_needs_an_episode_dataset():
    # None raised AttributeError "'NoneType' object has no attribute 'n_players'", a
    # TransitionDataset "... has no attribute 'n_players'" likewise
    R = np.array([[[0.0, 1.0]]])
    t = TransitionDataset([0], [1], [1.0], [0], S=1, A=2)
    for data, name in ((None, "NoneType"), (t, "TransitionDataset")):
        with pytest.raises(
            TypeError, match=rf"^trajectory_returns needs an EpisodeDataset; got {name}$"
        ):
            trajectory_returns(data, R)
    # the one-step episode that takes action 1 returns r_0(0, 1) = 1
    d = EpisodeDataset([[0, 0]], [[1]], [[1.0]], S=1, A=2)
    np.testing.assert_array_equal(trajectory_returns(d, R), [[1.0]])


def _text_probability_cases():
    fh = FiniteHorizonMDP.stationary(np.ones((1, 2, 1)), np.array([[0.0, 1.0]]), H=1)
    m = FiniteMDP(np.ones((1, 2, 1)), np.array([[0.0, 1.0]]), gamma=0.5)
    half = np.array([["0.5", "0.5"]])
    gP, gR, gB = np.ones((1, 1, 2, 1)), np.zeros((1, 1, 1, 2)), np.array([[[0.5, 0.5]]])
    return [
        ("target", lambda: behaviour_policy(half, 0.5)),
        ("target", lambda: behaviour_policy(np.array([[0.5 + 1j, 0.5]]), 0.5)),
        ("other", lambda: behaviour_policy(np.array([[1.0, 0.0]]), 0.5, other=half)),
        ("behaviour", lambda: sample_episodes(fh, half, 2, rng=0)),
        ("nu", lambda: sample_transition_dataset(m, half, 2, rng=0)),
        ("behaviour", lambda: sample_game_episodes(gP, gR, half[None], 2, rng=0)),
        ("mu", lambda: sample_game_episodes(gP, gR, gB, 2, rng=0, mu=np.array(["1"]))),
        ("P", lambda: sample_game_episodes(np.full((1, 1, 2, 1), "1"), gR, gB, 2, rng=0)),
    ]


@pytest.mark.parametrize("case", range(8))
def test_probability_arguments_of_the_data_layer_refuse_text_and_complex(case):
    # a float64 cast parsed the text '0.5' as a probability (behaviour_policy returned
    # [[0.5, 0.5]], the samplers drew from it), and dropped the imaginary part of a complex
    # target with only numpy's ComplexWarning
    field, call = _text_probability_cases()[case]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(TypeError, match=rf"^{field} must hold real probabilities"):
            call()


def _dyadic_fh(rng, H, S, A):
    # probabilities in multiples of 1/64 and rewards in multiples of 1/4: every product and sum
    # of backward induction is a dyadic rational with few bits, so float64 computes it exactly
    counts = rng.multinomial(64, np.ones(S) / S, size=(H, S, A))
    return counts / 64.0, rng.integers(-8, 9, size=(H, S, A)) / 4.0


def _exact_best(P, R, mu):
    """max over all A^(H*S) deterministic Markov policies of sum_s mu(s) V_0^pi(s), in rationals."""
    H, S, A, _ = P.shape
    Pq = [[[[Fraction(x) for x in row] for row in Ps] for Ps in Ph] for Ph in P]
    best = None
    for flat in itertools.product(range(A), repeat=H * S):
        pi = np.reshape(flat, (H, S))
        v = [Fraction(0)] * S
        for h in range(H - 1, -1, -1):
            v = [
                Fraction(R[h, s, pi[h, s]])
                + sum(p * w for p, w in zip(Pq[h][s][pi[h, s]], v, strict=True))
                for s in range(S)
            ]
        value = sum(Fraction(m) * x for m, x in zip(mu, v, strict=True))
        best = value if best is None else max(best, value)
    return best


@pytest.mark.parametrize("seed", range(12))
def test_backward_induction_equals_exact_rational_enumeration(seed):
    # an independent check: the optimum over all deterministic Markov policies, enumerated in
    # exact rationals (fractions.Fraction), equals backward induction's value bit for bit; H, S,
    # A include 1, and the stationary constructor gives the same answer as the explicit stack
    rng = np.random.default_rng(seed)
    H, S, A = (int(x) for x in rng.integers(1, 4, size=3))
    while A ** (H * S) > 729:  # keep the enumeration small (A^S <= 27 at H = 1)
        H -= 1
    P, R = _dyadic_fh(rng, H, S, A)
    mu = np.full(S, 1.0 / S) if S != 3 else np.array([0.25, 0.5, 0.25])
    sol = backward_induction(FiniteHorizonMDP(P, R, mu))
    assert Fraction(float(sol.value)) == _exact_best(P, R, mu)
    stat = backward_induction(FiniteHorizonMDP.stationary(P[0], R[0], H=H, mu=mu))
    explicit = backward_induction(FiniteHorizonMDP(np.stack([P[0]] * H), np.stack([R[0]] * H), mu))
    assert Fraction(float(stat.value)) == _exact_best(
        np.stack([P[0]] * H), np.stack([R[0]] * H), mu
    )
    np.testing.assert_array_equal(stat.V, explicit.V)
    np.testing.assert_array_equal(stat.policy, explicit.policy)


def test_evaluations_stay_linear_in_rows_with_rounding_negatives():
    # a row (1 + 1e-9, -1e-9) is a distribution within the 1e-8 tolerance; the evaluations are
    # the sums Σ_a π(a|s) Q(s, a) over every non-zero entry, the negative one included (an
    # intermediate version summed over π > 0 only and dropped -1e-9 · Q)
    row = np.array([1.0 + 1e-9, -1e-9])
    fh = FiniteHorizonMDP.stationary(np.ones((1, 2, 1)), np.array([[0.0, 1e6]]), H=1)
    v = evaluate_finite_horizon(fh, row[None, None, :])
    assert v[0, 0] == row[1] * 1e6 + row[0] * 0.0
    m = FiniteMDP(np.ones((1, 2, 1)), np.array([[0.0, 1e6]]), gamma=0.5)
    t = bellman_operator(m, np.array([0.0]), row[None, :])
    assert t[0] == row[1] * 1e6 + row[0] * 0.0


def test_an_empty_batch_of_sparse_sized_models_is_valid():
    # S >= 64 turns on the sparse successor lists; for a (0,)-batch their count took xp.max of an
    # empty array: q_values raised numpy's 'zero-size array to reduction operation maximum which
    # has no identity'. An empty batch now gives empty answers, as it does for S < 64
    S = 64
    P = np.zeros((0, S, 2, S))
    m = FiniteMDP(P, np.zeros((0, S, 2)), gamma=0.5)
    assert m.successors is None
    assert q_values(m, np.zeros(S)).shape == (0, S, 2)
    assert bellman_optimality_operator(m, np.zeros(S)).shape == (0, S)
    assert evaluate_policy(m, np.zeros(S, int)).shape == (0, S)
    # one instance of the same size (a cycle s -> s + 1 under both actions) is sparse and
    # backs up through the successor lists: (P V)(s, a) = V(s + 1)
    P1 = np.zeros((1, S, 2, S))
    P1[0, np.arange(S), :, (np.arange(S) + 1) % S] = 1.0
    m1 = FiniteMDP(P1, np.zeros((1, S, 2)), gamma=0.5)
    assert m1.successors is not None
    V = np.arange(S, dtype=float)
    np.testing.assert_array_equal(q_values(m1, V)[0, :, 1], 0.5 * np.roll(V, -1))


def test_several_initial_distributions_on_one_model_and_policy():
    # a (4, S) mu with an unbatched model and policy failed with numpy's 'input operand has more
    # dimensions than allowed by the axis remapping' (mu was broadcast to the solve's batch ());
    # each row now equals the one-distribution occupancy and the dense-inverse formula
    rng = np.random.default_rng(3)
    S, A, g = 3, 2, 0.7
    m = FiniteMDP(rng.dirichlet(np.ones(S), (S, A)), rng.random((S, A)), gamma=g)
    mus = rng.dirichlet(np.ones(S), 4)
    pi = rng.dirichlet(np.ones(A), S)
    d = state_occupancy(m, pi, mus)
    dsa = occupancy_measure(m, pi, mus)
    pd = performance_difference(m, pi, np.zeros(S, int), mus)
    Ppi = np.sum(pi[:, :, None] * m.P, axis=1)
    inv = np.linalg.inv(np.eye(S) - g * Ppi.T)
    gap = evaluate_policy(m, pi) - evaluate_policy(m, np.zeros(S, int))
    for i in range(4):
        np.testing.assert_array_equal(d[i], state_occupancy(m, pi, mus[i]))
        np.testing.assert_allclose(d[i], (1 - g) * inv @ mus[i], rtol=0, atol=1e-15)
        np.testing.assert_allclose(dsa[i], d[i][:, None] * pi, rtol=0, atol=1e-16)
        np.testing.assert_allclose(pd[i], mus[i] @ gap, rtol=0, atol=1e-14)
    assert state_occupancy(m, pi, np.ones((0, S)) / S).shape == (0, S)


def test_behaviour_policy_takes_an_empty_batch_of_policies():
    # the size check refused any empty array, so a (0, S, A) batch of targets was told 'must have
    # shape (..., S, A) with S, A >= 1; got (0, 3, 2)' although S = 3 and A = 2
    # (adversarial_policy already returned (0, 3, 2))
    assert behaviour_policy(np.ones((0, 3, 2)) / 2, 0.5).shape == (0, 3, 2)
    assert behaviour_policy(np.zeros((0, 3), int), 0.5, other=np.ones((0, 3, 2)) / 2).shape == (
        0,
        3,
        2,
    )
    # empty state or action axes are still refused
    with pytest.raises(
        ValueError,
        match=r"stochastic policy target must have shape \(\.\.\., S, A\) with S, A >= 1; got \(3, 0\)",
    ):
        behaviour_policy(np.ones((3, 0)), 0.5)
    with pytest.raises(
        ValueError,
        match=r"deterministic policy target must have shape \(\.\.\., S\) with S >= 1; got \(2, 0\)",
    ):
        behaviour_policy(np.zeros((2, 0), int), 0.5, other=np.ones((2, 0, 2)))
    # a non-empty batch is the row-wise mixture: 0.5 * one-hot(1) + 0.5 * uniform
    np.testing.assert_array_equal(behaviour_policy(np.array([[[0.0, 1.0]]]), 0.5), [[[0.25, 0.75]]])


def test_structure_atol_may_not_empty_a_row():
    # an atol at or above a row's largest entry left that state without successors, read as an
    # absorbing recurrent class: rows of 1/3 with atol = 0.5 were 'three recurrent classes' and
    # the (recurrent) MDP 'multichain' with a witness policy
    P = np.full((3, 3), 1 / 3)
    with pytest.raises(
        ValueError, match=r"atol = 0.5 removes every transition of P\[s, :\] at \(s=0\)"
    ):
        chain_structure(P, atol=0.5)
    with pytest.raises(
        ValueError,
        match=r"atol = 0.6 removes every transition of P\[s, :\] at \(s=1\) \(its largest entry is 0.6\)",
    ):
        chain_structure(np.array([[0.9, 0.1], [0.4, 0.6]]), atol=0.6)
    m = FiniteMDP(np.full((3, 2, 3), 1 / 3), np.zeros((3, 2)), gamma=None)
    with pytest.raises(
        ValueError, match=r"removes every transition of P\[s, a, :\] at \(s=0, a=0\)"
    ):
        classify_mdp(m, atol=0.5)
    # below the largest entries the thresholded support is classified: the 0.1 edge 0 -> 1
    # dropped leaves 0 absorbing and 1 transient
    cs = chain_structure(np.array([[0.9, 0.1], [0.4, 0.6]]), atol=0.2)
    assert cs.recurrent_classes == ((0,),) and cs.transient == (1,)
    assert classify_mdp(m, atol=0.2).kind == "recurrent"


def test_object_arrays_of_text_are_refused_as_probabilities():
    # d963877 refused string and complex dtypes, but an object array holding the text '0.5' was
    # still parsed by the float cast (behaviour_policy returned [[0.5, 0.5]]), and a complex
    # entry failed inside numpy. Object arrays of real numbers (Fractions included) still work
    text = np.array([["0.5", "0.5"]], dtype=object)
    with pytest.raises(
        TypeError,
        match=r"^target must hold real probabilities or integer actions; got dtype object",
    ):
        behaviour_policy(text, 0.5)
    with pytest.raises(TypeError, match=r"^target must hold real probabilities"):
        behaviour_policy(np.array([[0.5, 0.5 + 0j]], dtype=object), 0.5)
    m = FiniteMDP(np.ones((1, 2, 1)), np.array([[0.0, 1.0]]), gamma=0.5)
    with pytest.raises(TypeError, match=r"^nu must hold real probabilities; got dtype object"):
        sample_transition_dataset(m, text, 2, rng=0)
    halves = np.array([[Fraction(1, 2), Fraction(1, 2)]], dtype=object)
    np.testing.assert_array_equal(behaviour_policy(halves, 0.5), [[0.5, 0.5]])


def test_object_arrays_of_text_are_refused_as_rewards():
    # _real_host refused string dtypes (via as_float) but not an object array of text, which the
    # float cast parsed: EpisodeDataset rewards ['1.5'] became 1.5, TransitionDataset ['2.5'] 2.5,
    # trajectory_returns' R [['3']] the return 3 and adversarial_policy's Q ['1', 2.0] a table
    one = EpisodeDataset([[0, 0]], [[0]], [[1.0]], S=1, A=1)
    cases = [
        (
            "EpisodeDataset.rewards",
            lambda: EpisodeDataset([[0, 0]], [[0]], np.array([["1.5"]], dtype=object), S=1, A=1),
        ),
        (
            "TransitionDataset.rewards",
            lambda: TransitionDataset([0], [0], np.array(["2.5"], dtype=object), [0], S=1, A=1),
        ),
        (
            "trajectory_returns R",
            lambda: trajectory_returns(one, np.array([[["3"]]], dtype=object)),
        ),
        ("adversarial_policy Q", lambda: adversarial_policy(np.array([["1", 2.0]], dtype=object))),
    ]
    for field, call in cases:
        with pytest.raises(TypeError, match=rf"^{field} must hold real numbers; got dtype object$"):
            call()
    # object arrays of numbers are read as before
    d = EpisodeDataset([[0, 0]], [[0]], np.array([[Fraction(3, 2)]], dtype=object), S=1, A=1)
    assert d.rewards.dtype == np.float64 and d.rewards[0, 0] == 1.5
