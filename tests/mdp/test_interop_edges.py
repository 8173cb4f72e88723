"""Interop outside the ranges of test_interop.py: every toy-text variant against its own table
and the real env, float32 round trips, NaN and tolerance edges, envs the table does not describe."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from rltheory.errors import InvalidModelError
from rltheory.mdp import (
    FiniteMDP,
    evaluate_policy,
    from_gymnasium,
    from_mdptoolbox,
    from_quantecon,
    to_gymnasium,
    to_mdptoolbox,
    to_quantecon_sa,
)


# ---- QuantEcon ----------------------------------------------------------------------------------
@pytest.mark.parametrize("pad", [False, True])
def test_quantecon_product_form_nan_reward_is_not_an_infeasible_action(pad):
    # NaN > -inf is False, so a NaN reward was taken for an infeasible action: with
    # pad_infeasible=True it was silently replaced by the reward of action 0 (R[0, 1] became 1.0),
    # without it the message blamed an "infeasible" action.
    R = np.array([[1.0, np.nan], [0.0, 0.0]])
    Q = np.full((2, 2, 2), 0.5)
    with pytest.raises(InvalidModelError, match=r"product form; R\[0, 1\] = nan"):
        from_quantecon(R, Q, 0.9, pad_infeasible=pad)
    # -inf still marks an infeasible action
    R[0, 1] = -np.inf
    np.testing.assert_array_equal(
        from_quantecon(R, Q, 0.9, pad_infeasible=True).R, [[1.0, 1.0], [0.0, 0.0]]
    )


# ---- from_gymnasium ----------------------------------------------------------------------------
gym = pytest.importorskip("gymnasium")

from ._table_env import TableEnv as _TableEnv  # noqa: E402 - after the importorskip


def test_inplace_terminal_without_initial_distribution_refuses_a_start_state_with_dynamics():
    # No initial_state_distrib: the model's μ is uniform, so state 1 (entered only by episode
    # ends, but earning 5 per step of its own) is a start state. In place, the old code made it
    # absorbing with reward 0 without a word: V(1) = 0 instead of 5/(1 − γ) = 10, V(μ) 0.5 for 5.5.
    table = {0: {0: [(1.0, 1, 1.0, True)]}, 1: {0: [(1.0, 1, 5.0, False)]}}
    env = _TableEnv(table, 2, 1)
    with pytest.raises(
        InvalidModelError,
        match=r"state s=1 ends episodes but has initial probability mu\[1\] = 0\.5 "
        r"\(uniform: the env has no initial_state_distrib\); use terminal='extra'",
    ):
        from_gymnasium(env, 0.5)
    extra = from_gymnasium(env, 0.5, terminal="extra")
    np.testing.assert_array_equal(np.asarray(extra.P)[:, 0], [[0, 0, 1], [0, 1, 0], [0, 0, 1]])
    np.testing.assert_array_equal(np.asarray(extra.R)[:, 0], [1.0, 5.0, 0.0])
    # a terminal state that is already absorbing with reward 0 stays fine without μ
    ok = {0: {0: [(1.0, 1, 1.0, True)]}, 1: {0: [(1.0, 1, 0.0, True)]}}
    m = from_gymnasium(_TableEnv(ok, 2, 1), 0.5)
    np.testing.assert_array_equal(np.asarray(m.P)[:, 0], [[0, 1], [0, 1]])
    np.testing.assert_array_equal(np.asarray(m.R)[:, 0], [1.0, 0.0])


def test_taxi_with_a_fickle_passenger_is_refused():
    # Taxi(fickle_passenger=True) redraws the destination inside step(), outside env.P: the old
    # code imported the table as if it were the env (under its optimal policy the imported V(μ)
    # was -1.263 at γ = 0.9 while 2000 episodes of the real env averaged -0.781 ± 0.067).
    if "Taxi-v4" not in gym.registry:
        pytest.skip("Taxi-v4 (fickle_passenger) needs gymnasium >= 1.3")
    with pytest.raises(ValueError, match=r"TaxiEnv has fickle_passenger=True: step\(\) changes"):
        from_gymnasium(gym.make("Taxi-v4", fickle_passenger=True), 0.9)
    assert from_gymnasium(gym.make("Taxi-v4", is_rainy=True), 0.9).S == 500


# ---- float32 round trips ------------------------------------------------------------------------
def _random_model(S, A, dtype, seed):
    rng = np.random.default_rng(seed)
    P = rng.random((S, A, S)).astype(dtype)
    P /= P.sum(-1, keepdims=True)  # rows sum to 1 only to the dtype's rounding
    mu = rng.random(S).astype(dtype)
    return FiniteMDP(P, rng.random((S, A)).astype(dtype), 0.9, mu / mu.sum())


def _through_mdptoolbox(m):
    return from_mdptoolbox(*to_mdptoolbox(m), m.gamma, mu=m.mu)


def _through_quantecon(m):
    R, Q, s_idx, a_idx = to_quantecon_sa(m)
    return from_quantecon(R, Q, m.gamma, s_idx, a_idx).replace(mu=m.mu)


def _through_gymnasium(m):
    return from_gymnasium(to_gymnasium(m), m.gamma)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("S, A", [(1, 1), (1, 3), (3, 1), (20, 4), (60, 3)])
@pytest.mark.parametrize(
    "through",
    [_through_mdptoolbox, _through_quantecon, _through_gymnasium],
    ids=["mdptoolbox", "quantecon", "gymnasium"],
)
def test_layout_round_trips_are_exact_and_keep_the_dtype(through, S, A, dtype):
    # A float32 model's rows sum to 1 only to float32 rounding (3e-8 at S = 3, 1.7e-7 at S = 20);
    # the exporters cast to float64 and the importers built float64 models, validated at float64's
    # 1e-8: every float32 round trip with S >= 3 raised "each P[s, a, :] must sum to 1", and the
    # others came back float64.
    m = _random_model(S, A, dtype, seed=S * 10 + A)
    back = through(m)
    assert back.P.dtype == dtype and back.R.dtype == dtype
    np.testing.assert_array_equal(np.asarray(back.P), np.asarray(m.P))
    np.testing.assert_array_equal(np.asarray(back.R), np.asarray(m.R))
    np.testing.assert_array_equal(
        np.asarray(back.initial_distribution()), np.asarray(m.initial_distribution())
    )


def test_exports_are_copies_and_float32_inputs_stay_float32():
    m = _random_model(
        4, 1, np.float32, seed=0
    )  # A = 1: (S, 1, S) -> (1, S, S) is a contiguous view
    P0, R0 = np.array(m.P), np.array(m.R)
    for arrays in (to_mdptoolbox(m), to_quantecon_sa(m)[:2]):
        for x in arrays:
            assert x.dtype == np.float32
            x[...] = -1.0
    np.testing.assert_array_equal(m.P, P0)
    np.testing.assert_array_equal(m.R, R0)
    sparse = pytest.importorskip("scipy.sparse")
    P, R = to_mdptoolbox(m)
    assert from_mdptoolbox([sparse.csr_matrix(p) for p in P], R, 0.9).P.dtype == np.float32
    # integer inputs still become float64
    assert (
        from_mdptoolbox(np.ones((1, 1, 1), dtype=int), np.zeros(1, dtype=int), 0.9).P.dtype
        == np.float64
    )


def test_from_gymnasium_dtype_argument():
    env = _TableEnv({0: {0: [(1.0, 0, 0.5, False)]}}, 1, 1)
    assert from_gymnasium(env, 0.9).P.dtype == np.float64
    assert from_gymnasium(env, 0.9, dtype=np.float32).R.dtype == np.float32
    with pytest.raises(
        ValueError, match=r"dtype must be numpy.float32 or numpy.float64; got 'int64'"
    ):
        from_gymnasium(env, 0.9, dtype="int64")
    with pytest.raises(
        ValueError, match=r"dtype must be numpy.float32 or numpy.float64; got 'f16'"
    ):
        from_gymnasium(env, 0.9, dtype="f16")


# ---- the model's tolerance for table entries ----------------------------------------------------
def test_rounding_entries_of_a_valid_model_survive_the_gymnasium_round_trip():
    # FiniteMDP accepts entries >= -1e-8 and row sums within 1e-8·(1 + √S); to_gymnasium writes
    # the model's entries as they are, but from_gymnasium refused any p < 0 or p > 1 + 1e-12:
    # "env.P[0][0][1] has probability p=-1e-10, not in [0, 1]" for a model it had just exported.
    P = np.array(
        [
            [[0.5 + 1e-10, -1e-10, 0.5]],
            [[0.0, 0.0, 1.0]],
            [[-1e-10, 1.0 + 1e-10, 0.0]],
        ]
    )
    m = FiniteMDP(P, np.array([[1.0], [0.0], [2.0]]), 0.9, [1.0, 0.0, 0.0])
    back = from_gymnasium(to_gymnasium(m), 0.9)
    np.testing.assert_array_equal(np.asarray(back.P), P)
    np.testing.assert_array_equal(np.asarray(back.R), np.asarray(m.R))


@pytest.mark.parametrize(
    "entries, match",
    [
        ([(1.0 + 1e-9, 0, 0.0, False)], None),  # the sum of the next row, accepted either way
        ([(0.5 + 1e-9, 0, 0.0, False), (0.5, 0, 0.0, False)], None),
        ([(1.0 + 1e-9, 0, 0.0, False), (-1e-9, 0, 0.0, False)], None),
        (
            [(1.0 + 3e-8, 0, 0.0, False)],
            r"env.P\[0\]\[0\]\[0\] has probability p=1\.00000003, not in \[0, 1\] \(atol=1e-08\)",
        ),
        (
            [(1.0, 0, 0.0, False), (-2e-8, 0, 0.0, False)],
            r"env.P\[0\]\[0\]\[1\] has probability p=-2e-08, not in \[0, 1\] \(atol=1e-08\)",
        ),
        (  # entries within [-atol, 1 + atol] whose sum is not 1 within 1e-8·(1 + √1)
            [(0.5 + 1.5e-8, 0, 0.0, False), (0.5 + 1.5e-8, 0, 0.0, False)],
            r"each P\[s, a, :\] must sum to 1 .*sums to 1\.00000003",
        ),
    ],
)
def test_table_probabilities_follow_the_model_tolerance(entries, match):
    env = _TableEnv({0: {0: entries}}, 1, 1)
    if match is None:
        m = from_gymnasium(env, 0.9)
        assert float(np.asarray(m.P)[0, 0, 0]) == sum(e[0] for e in entries)  # never renormalised
    else:
        with pytest.raises(InvalidModelError, match=match):
            from_gymnasium(env, 0.9)


def test_a_rounding_negative_episode_end_ends_no_episode():
    # p = -1e-10 is probability 0: the state it "enters" keeps its own dynamics in place
    table = {
        0: {0: [(1.0 + 1e-10, 0, 0.0, False), (-1e-10, 1, 0.0, True)]},
        1: {0: [(1.0, 1, 5.0, False)]},
    }
    m = from_gymnasium(_TableEnv(table, 2, 1), 0.5)
    np.testing.assert_array_equal(np.asarray(m.P)[:, 0], [[1.0 + 1e-10, -1e-10], [0.0, 1.0]])
    np.testing.assert_array_equal(np.asarray(m.R)[:, 0], [0.0, 5.0])


def test_expected_reward_of_rewards_near_the_float_range():
    # r(s, a) = Σ p r was formed as r_ref + Σ p (r − r_ref), and r − r_ref overflows for rewards of
    # opposite sign near 1.8e308: (±1e308 with p = 1/2) raised "R must be finite; R(s=0, a=0) = -inf"
    # for a table whose expected reward is 0.
    table = {
        0: {0: [(0.5, 0, 1e308, False), (0.5, 0, -1e308, False)]},
        1: {0: [(0.25, 0, 1.5e308, False), (0.75, 1, -1e308, False)]},
    }
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no overflow warning either
        m = from_gymnasium(_TableEnv(table, 2, 1), 0.5)
    np.testing.assert_array_equal(np.asarray(m.R)[:, 0], [0.0, 0.25 * 1.5e308 - 0.75 * 1e308])


@pytest.mark.parametrize("done", ["False", None, 2, 0.0, np.array([True, False])])
def test_done_flags_must_be_booleans(done):
    # done went through bool(): "False" (a table read from text) ended the episode, None and 0.0
    # did not, and a two-element array raised numpy's "truth value ... is ambiguous"
    table = {0: {0: [(1.0, 1, 1.0, done)]}, 1: {0: [(1.0, 1, 5.0, False)]}}
    with pytest.raises(
        InvalidModelError, match=r"env.P\[0\]\[0\]\[0\] has done=.*, not a bool \(or 0/1\)"
    ):
        from_gymnasium(_TableEnv(table, 2, 1, isd=[1.0, 0.0]), 0.5)


@pytest.mark.parametrize("done", [True, np.True_, 1, np.int64(1)])
def test_done_flags_may_be_numpy_booleans_or_0_1(done):
    table = {0: {0: [(1.0, 1, 1.0, done)]}, 1: {0: [(1.0, 1, 0.0, True)]}}
    m = from_gymnasium(_TableEnv(table, 2, 1, isd=[1.0, 0.0]), 0.5)
    np.testing.assert_array_equal(np.asarray(m.P)[:, 0], [[0.0, 1.0], [0.0, 1.0]])


# ---- every toy-text variant against its own table ------------------------------------------------
TOY_TEXT = [
    ("FrozenLake-v1", {}),
    ("FrozenLake-v1", {"is_slippery": False}),
    ("FrozenLake-v1", {"map_name": "8x8"}),
    ("FrozenLake-v1", {"map_name": "8x8", "is_slippery": False}),
    ("FrozenLake-v1", {"desc": ["SFH", "FHG", "FFF"]}),
    # two start cells, two goals, per-step reward, a hole penalty and success rate 1/2
    (
        "FrozenLake-v1",
        {"desc": ["SFS", "FHG", "GFF"], "success_rate": 0.5, "reward_schedule": (2, -1, 0.5)},
    ),
    ("Taxi-v4", {}),
    ("Taxi-v4", {"is_rainy": True}),
    ("CliffWalking-v1", {}),
    ("CliffWalking-v1", {"is_slippery": True}),
]


def _make(name, kwargs):
    if name not in gym.registry:
        pytest.skip(f"{name} is not registered in gymnasium {gym.__version__}")
    try:
        return gym.make(name, **kwargs)
    except TypeError as exc:  # an option this gymnasium version lacks
        pytest.skip(f"{name}{kwargs}: {exc}")


def _reference_extra(u, S, A):
    """The 'extra' model written out from the table: Σ p into s' (or into S on done), Σ p r."""
    P = np.zeros((S + 1, A, S + 1))
    R = np.zeros((S + 1, A))
    for s in range(S):
        for a in range(A):
            for p, s2, r, done in u.P[s][a]:
                P[s, a, S if done else s2] += p
                R[s, a] += p * r
    P[S, :, S] = 1.0
    return P, R


@pytest.mark.parametrize("name, kwargs", TOY_TEXT, ids=lambda x: str(x))
def test_every_toy_text_variant_equals_its_table(name, kwargs):
    env = _make(name, kwargs)
    u = env.unwrapped
    S, A = int(env.observation_space.n), int(env.action_space.n)
    gamma = 0.95
    extra = from_gymnasium(env, gamma, terminal="extra")
    P_ref, R_ref = _reference_extra(u, S, A)
    np.testing.assert_array_equal(np.asarray(extra.P), P_ref)  # same sums in the same order
    scale = max(1.0, float(np.abs(R_ref).max()))
    np.testing.assert_allclose(
        np.asarray(extra.R), R_ref, rtol=0, atol=4 * np.finfo(float).eps * scale
    )
    np.testing.assert_array_equal(np.asarray(extra.mu), np.append(u.initial_state_distrib, 0.0))
    # in place: the same values on every state the episode can visit; episode ends absorbing, reward 0
    inplace = from_gymnasium(env, gamma)
    mu = np.asarray(inplace.mu)
    for seed in range(3):  # the same start value under any policy (three random ones)
        pi = np.random.default_rng(seed).integers(A, size=S)
        v_in = mu @ evaluate_policy(inplace, pi)
        v_extra = np.asarray(extra.mu) @ evaluate_policy(extra, np.append(pi, 0))
        assert abs(v_in - v_extra) <= 1e-9 * scale / (1 - gamma)
    ends = sorted(
        {s2 for s in range(S) for a in range(A) for p, s2, r, d in u.P[s][a] if d and p > 0}
    )
    P_in, R_in = np.asarray(inplace.P), np.asarray(inplace.R)
    for t in ends:
        np.testing.assert_array_equal(P_in[t, :, t], 1.0)
        np.testing.assert_array_equal(R_in[t], 0.0)


def test_custom_frozenlake_value_matches_episodes_of_the_real_env():
    # Two start cells, two goals (+2), a hole (−1), +0.5 on every frozen cell entered, success rate 1/2:
    # the rewards depend on the next state and are kept on the episode-ending transition. The MDP value
    # from μ under a fixed policy equals the mean discounted return of real episodes within 4 standard
    # errors (fixed seeds; truncation at the env's 100 steps costs at most 0.9^100·2/0.1 = 5e-4).
    env = _make(
        "FrozenLake-v1",
        {"desc": ["SFS", "FHG", "GFF"], "success_rate": 0.5, "reward_schedule": (2, -1, 0.5)},
    )
    gamma = 0.9
    mdp = from_gymnasium(env, gamma)
    pi = np.array([1, 2, 1, 0, 0, 0, 2, 2, 3])  # down / right / left moves towards the goals
    v = float(np.asarray(mdp.mu) @ evaluate_policy(mdp, pi))
    G = np.empty(1500)
    for e in range(G.size):
        s, _ = env.reset(seed=e)
        g, disc, done = 0.0, 1.0, False
        while not done:
            s, r, term, trunc, _ = env.step(int(pi[s]))
            g += disc * r
            disc *= gamma
            done = term or trunc
        G[e] = g
    assert abs(G.mean() - v) <= 4 * G.std(ddof=1) / np.sqrt(G.size) + 5e-4


def test_tables_may_be_lists():
    # P[s][a] as nested lists (a common hand-written layout) was reported as
    # "env.P has no entry for state s=0" although it had one: only dict.get was tried
    table = [
        [[(1.0, 1, 1.0, False)], [(0.5, 0, 0.0, False), (0.5, 1, 2.0, False)]],
        [[(1.0, 1, 0.0, True)], [(1.0, 0, 3.0, False)]],
    ]
    m = from_gymnasium(_TableEnv(table, 2, 2, isd=[1.0, 0.0]), 0.9, terminal="extra")
    ref = from_gymnasium(
        _TableEnv({s: dict(enumerate(row)) for s, row in enumerate(table)}, 2, 2, isd=[1.0, 0.0]),
        0.9,
        terminal="extra",
    )
    np.testing.assert_array_equal(np.asarray(m.P), np.asarray(ref.P))
    np.testing.assert_array_equal(np.asarray(m.R), [[1.0, 1.0], [0.0, 3.0], [0.0, 0.0]])
    with pytest.raises(InvalidModelError, match=r"env.P has no entry for state s=1 \(S=2\)"):
        from_gymnasium(_TableEnv(table[:1], 2, 2), 0.9)
    with pytest.raises(InvalidModelError, match=r"env.P\[1\] has no entry for action a=1 \(A=2\)"):
        from_gymnasium(_TableEnv([table[0], table[1][:1]], 2, 2), 0.9)


def test_terminal_transitions_in_rows_no_episode_uses_end_nothing():
    # State 1 ends every episode (entered from the start by a terminal transition); its own row,
    # which no episode uses, "resets" to the start with done=True. The old code counted that entry
    # and refused the exact conversion: "state s=0 ends episodes but has initial probability
    # mu[0] = 1.0" (likewise for a target entered only from an unreachable state, state 3 here).
    table = {
        0: {0: [(1.0, 1, 1.0, True)], 1: [(1.0, 2, 0.0, False)]},
        1: {0: [(1.0, 0, 0.0, True)], 1: [(1.0, 0, 0.0, True)]},
        2: {0: [(1.0, 0, 2.0, False)], 1: [(1.0, 1, 1.0, True)]},
        3: {0: [(1.0, 2, 0.0, True)], 1: [(1.0, 3, 0.0, False)]},  # unreachable from μ
    }
    env = _TableEnv(table, 4, 2, isd=[1.0, 0.0, 0.0, 0.0])
    m = from_gymnasium(env, 0.5)
    P, R = np.asarray(m.P), np.asarray(m.R)
    np.testing.assert_array_equal(P[1], [[0, 1, 0, 0], [0, 1, 0, 0]])  # absorbing, reward 0
    np.testing.assert_array_equal(R[1], 0.0)
    np.testing.assert_array_equal(P[[0, 2, 3]].argmax(-1), [[1, 2], [0, 1], [2, 3]])  # rows kept
    np.testing.assert_array_equal(R[[0, 2]], [[1.0, 0.0], [2.0, 1.0]])
    extra = from_gymnasium(env, 0.5, terminal="extra")
    for pi in ([0, 0, 0, 0], [1, 0, 1, 0], [1, 0, 0, 0]):
        assert evaluate_policy(m, pi)[0] == pytest.approx(
            evaluate_policy(extra, pi + [0])[0], abs=1e-12
        )


def test_extra_end_state_is_no_start_state_without_an_initial_distribution():
    # Without initial_state_distrib the extra model kept mu = None, i.e. uniform over S + 1 states:
    # the artificial end state had initial probability 1/(S + 1) and V(μ) was 3/4 of the in-place
    # model's (here 1·3/4 = 0.75 against 1.0 on a one-step episode earning 1 from every env state).
    table = {s: {0: [(1.0, (s + 1) % 3, 1.0, True)]} for s in range(3)}
    extra = from_gymnasium(_TableEnv(table, 3, 1), 0.5, terminal="extra")
    np.testing.assert_array_equal(
        np.asarray(extra.initial_distribution()), [1 / 3, 1 / 3, 1 / 3, 0.0]
    )
    v = np.asarray(extra.initial_distribution()) @ evaluate_policy(extra, [0, 0, 0, 0])
    assert v == pytest.approx(1.0, abs=1e-15)


def test_inplace_is_exact_whenever_it_is_accepted_on_random_tables():
    # The docstring's claim, checked on 400 random tables (S <= 5, A <= 2, up to 3 entries per row,
    # repeated targets, done on 30% of entries, some absorbing zero-reward rows, μ given or not):
    # whenever the in-place conversion is accepted, its start value under random policies equals
    # that of the always-exact "extra" encoding.
    rng = np.random.default_rng(0)
    accepted = 0
    for _ in range(400):
        S, A = int(rng.integers(1, 6)), int(rng.integers(1, 3))
        table = {}
        for s in range(S):
            table[s] = {}
            for a in range(A):
                p = rng.dirichlet(np.ones(int(rng.integers(1, 4))))
                table[s][a] = [
                    (
                        float(q),
                        int(rng.integers(S)),
                        float(rng.integers(-2, 3)),
                        bool(rng.random() < 0.3),
                    )
                    for q in p
                ]
            if rng.random() < 0.3:
                table[s] = {a: [(1.0, s, 0.0, bool(rng.random() < 0.5))] for a in range(A)}
        isd = None
        if rng.random() < 0.7:
            isd = rng.dirichlet(np.ones(S)) * (rng.random(S) < 0.5)
            isd[0] += isd.sum() == 0
            isd /= isd.sum()
        env = _TableEnv(table, S, A, isd)
        extra = from_gymnasium(env, 0.7, terminal="extra")
        try:
            m = from_gymnasium(env, 0.7)
        except InvalidModelError as exc:
            assert "use terminal='extra'" in str(exc)
            continue
        accepted += 1
        mu = np.asarray(m.initial_distribution())
        np.testing.assert_array_equal(np.asarray(extra.initial_distribution()), np.append(mu, 0.0))
        for _ in range(3):
            pi = rng.integers(A, size=S)
            v = mu @ evaluate_policy(m, pi)
            assert v == pytest.approx(
                np.append(mu, 0.0) @ evaluate_policy(extra, np.append(pi, 0)), abs=1e-9
            )
    assert accepted >= 100


def test_from_mdptoolbox_sequences_of_matrices_are_checked():
    # an empty list or per-action matrices of different shapes reached np.stack, which raised
    # "need at least one array to stack" / "all input arrays must have the same shape" unlocated
    eye = np.eye(2)
    with pytest.raises(
        InvalidModelError, match=r"P given as a sequence needs A >= 1 .*got shapes \[\]"
    ):
        from_mdptoolbox([], np.zeros(2), 0.9)
    with pytest.raises(
        InvalidModelError, match=r"P given as a sequence .*got shapes \[\(2, 2\), \(3, 3\)\]"
    ):
        from_mdptoolbox([eye, np.eye(3)], np.zeros(2), 0.9)
    with pytest.raises(
        InvalidModelError, match=r"R given as a sequence .*got shapes \[\(2, 2\), \(2, 3\)\]"
    ):
        from_mdptoolbox([eye, eye], [np.zeros((2, 2)), np.zeros((2, 3))], 0.9)
    m = from_mdptoolbox([eye, eye[::-1]], [np.ones((2, 2)), 2 * np.ones((2, 2))], 0.9)
    np.testing.assert_array_equal(m.R, [[1.0, 2.0], [1.0, 2.0]])
