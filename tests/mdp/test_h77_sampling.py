"""Roll-outs, trajectories and episode containers: laws, guards and located errors (helper 77)."""

import math

import numpy as np
import pytest

import rltheory.mdp.sample as sample
from rltheory._validate import as_distribution
from rltheory.errors import InvalidModelError
from rltheory.mdp import FiniteMDP
from rltheory.mdp.episodes import EpisodeDataset
from rltheory.mdp.sample import Trajectories, rollout, sample_transitions
from rltheory.mdp.zoo import garnet, two_state


def _weissman_radius(S: int, n: int, delta: float, events: int = 1) -> float:
    """L1 radius of an empirical law of ``n`` draws on ``S`` points, with probability ≥ 1 − δ
    over ``events`` laws (Weissman et al. 2003, Thm 2.1: Pr(‖p̂ − p‖₁ ≥ ε) ≤ 2^S exp(−nε²/2))."""
    return math.sqrt(2.0 * (S * math.log(2.0) + math.log(events / delta)) / n)


def _rotation(S: int, stay: float) -> FiniteMDP:
    # one action: stay with probability `stay`, else move to s + 1 (mod S); from s = 0 the law
    # at step t is Binomial(t, 1 - stay) mod S, different at every step (a shifted step is seen)
    P = np.zeros((S, 1, S))
    for s in range(S):
        P[s, 0, s] += stay
        P[s, 0, (s + 1) % S] += 1 - stay
    return FiniteMDP(P, np.arange(S, dtype=float)[:, None], 0.9)


def test_the_state_law_at_every_step_is_mu_times_p_pi_to_the_t():
    S, H, n, delta = 5, 6, 20_000, 1e-6
    mdp = _rotation(S, 0.3)
    mu = np.eye(S)[0]
    tr = rollout(mdp, np.zeros(S, int), H, n, rng=7, mu=mu)
    eps = _weissman_radius(S, n, delta, events=H + 1)  # 0.043
    law = mu.copy()
    P = np.asarray(mdp.P)[:, 0, :]
    for t in range(H + 1):
        freq = np.bincount(tr.states[:, t], minlength=S) / n
        assert np.abs(freq - law).sum() <= eps, (t, freq, law)
        nxt = law @ P
        # the test can tell steps apart: consecutive laws are farther than 2·eps
        assert np.abs(nxt - law).sum() > 2 * eps
        law = nxt
    # rewards are r(s_t, a_t) = s_t here, exactly
    np.testing.assert_array_equal(tr.rewards, tr.states[:, :-1].astype(float))


def test_generative_counts_fit_p_within_the_weissman_radius_on_every_pair():
    mdp = garnet(6, 3, 3, gamma=0.9, rng=2)
    n, delta = 5_000, 1e-6
    N = sample_transitions(mdp, n, rng=11)
    dev = np.abs(N / n - np.asarray(mdp.P)).sum(-1)
    assert dev.max() <= _weissman_radius(6, n, delta, events=18)
    # the same seed, as an int or a fresh Generator, gives the same counts; a Generator advances
    np.testing.assert_array_equal(N, sample_transitions(mdp, n, np.random.default_rng(11)))
    g = np.random.default_rng(11)
    first, second = sample_transitions(mdp, n, g), sample_transitions(mdp, n, g)
    assert not np.array_equal(first, second)


def test_rollout_reads_a_float16_mu_at_float16_rounding():
    # float16 1/7 = 0.1428..: the entries sum to 0.99976, within float16's 16 eps = 0.0156 (the
    # rule of as_distribution); rollout judged it at float64's 1e-8 and refused it
    S, n = 7, 7_000
    mdp = FiniteMDP(np.full((S, 1, S), 1 / S), np.zeros((S, 1)), 0.5)
    mu16 = np.full(S, 1 / S, dtype=np.float16)
    as_distribution(mu16, "mu", S, np)  # the library's rule accepts it
    tr = rollout(mdp, np.zeros(S, int), 1, n, rng=3, mu=mu16)
    freq = np.bincount(tr.states[:, 0], minlength=S) / n
    assert np.abs(freq - 1 / S).sum() <= _weissman_radius(S, n, 1e-6)
    with pytest.raises(
        ValueError, match=r"its entries sum to 1\.2001953125, not 1 \(atol=0\.015625"
    ):
        rollout(two_state(), [0, 0], 1, 2, rng=0, mu=np.array([0.7, 0.5], np.float16))
    # float64 is still judged at 1e-8
    with pytest.raises(ValueError, match=r"sum to 1\.000001, not 1 \(atol=1e-08"):
        rollout(two_state(), [0, 0], 1, 2, rng=0, mu=[0.5, 0.500001])


@pytest.mark.parametrize(
    ("args", "exc", "match"),
    [
        (
            (np.zeros((2, 3), int), np.zeros((2, 2), int), np.ones((2, 5))),
            InvalidModelError,
            r"^Trajectories\.rewards must have shape \(K, H\) = \(2, 2\) to match states \(2, 3\); got \(2, 5\)$",
        ),
        (
            (np.zeros((2, 3), int), np.zeros((3, 2), int), np.ones((2, 2))),
            InvalidModelError,
            r"^Trajectories\.actions must have shape \(K, H\) = \(2, 2\) to match states",
        ),
        (
            (np.zeros(3, int), np.zeros(2, int), np.ones(2)),
            InvalidModelError,
            r"^Trajectories\.states must have shape \(K, H\+1\); got \(3,\)$",
        ),
        (
            (np.zeros((1, 2)), np.zeros((1, 1), int), np.ones((1, 1))),
            InvalidModelError,
            r"^Trajectories\.states must hold integer indices; got dtype float64$",
        ),
        (
            (np.zeros((1, 3), int), np.zeros((1, 2), int), [[1.0, math.nan]]),
            InvalidModelError,
            r"^Trajectories\.rewards\[k=0, t=1\] = nan must be finite$",
        ),
        (
            (np.zeros((1, 2), int), np.zeros((1, 1), int), [["1.5"]]),
            TypeError,
            r"^Trajectories\.rewards must hold real numbers",
        ),
    ],
    ids=[
        "rewards-shape",
        "actions-shape",
        "states-1d",
        "float-states",
        "nan-reward",
        "text-reward",
    ],
)
def test_trajectories_are_checked_on_construction(args, exc, match):
    # nothing was checked: the first case reached discounted_returns as numpy's
    # 'matmul: Input operand 1 has a mismatch in its core dimension 0'
    with pytest.raises(exc, match=match):
        Trajectories(*args)


def test_trajectories_from_lists_are_arrays():
    tr = Trajectories([[0, 1, 1]], [[1, 0]], [[1.0, 2.0]])
    assert tr.states.dtype == np.int64 and tr.rewards.dtype == np.float64
    np.testing.assert_array_equal(tr.discounted_returns(0.5), [2.0])  # 1 + 0.5·2


def test_a_rollout_beyond_the_memory_cap_is_refused_before_any_work(monkeypatch):
    # numpy said only "array is too big; `arr.size * arr.dtype.itemsize` is larger than the
    # maximum possible size" (and a merely large request swapped)
    with pytest.raises(
        ValueError, match=r"rollout stores .*10000000000·10000000001 entries.*MAX_ROLLOUT_BYTES"
    ):
        rollout(two_state(), [0, 0], 10**10, 10**10, rng=0)
    # the cap is exact: 8·K·(H+1) + 16·K·H bytes, K = 3, H = 4: 120 + 192 = 312
    monkeypatch.setattr(sample, "MAX_ROLLOUT_BYTES", 312)
    assert rollout(two_state(), [0, 0], 4, 3, rng=0).states.shape == (3, 5)
    with pytest.raises(ValueError, match=r"3·6 entries, 384 bytes, above MAX_ROLLOUT_BYTES = 312"):
        rollout(two_state(), [0, 0], 5, 3, rng=0)


def _game_data(A: tuple[int, ...]) -> EpisodeDataset:
    st = np.array([[0, 1, 0], [1, 1, 0]])
    ac = np.array([[[0, 1], [1, 0]], [[1, 1], [0, 0]]])
    return EpisodeDataset(st, ac, np.zeros((2, 2, 2)), S=2, A=A)


def test_joint_actions_beyond_the_int64_range_are_named():
    # numpy's ravel_multi_index: 'invalid dims: array size defined by dims is larger than the
    # maximum possible size'
    with pytest.raises(
        ValueError, match=r"joint action space J = 4294967296·4294967295 = 1\.84e\+19 is beyond"
    ):
        _game_data((2**32, 2**32 - 1)).joint_actions()
    # J = 2**62 fits: the row-major index a1·A2 + a2
    ja = _game_data((2**31, 2**31)).joint_actions()
    np.testing.assert_array_equal(ja, [[1, 2**31], [2**31 + 1, 0]])


def test_empirical_model_matches_a_brute_force_count_on_random_datasets():
    # consistency: the bincount model against a per-cell loop, on 60 seeded datasets that
    # include one-episode and one-step data (K = 1, H = 1) and one- and two-player actions
    from rltheory.mdp.episodes import empirical_model

    rng = np.random.default_rng(77)
    for _ in range(60):
        K, H, S = (int(v) for v in rng.integers(1, 5, size=3))
        A = tuple(int(a) for a in rng.integers(1, 3, size=int(rng.integers(1, 3))))
        st = rng.integers(0, S, (K, H + 1))
        ac = np.stack([rng.integers(0, a, (K, H)) for a in A], -1)
        rw = rng.normal(size=(K, H, len(A)))
        d = EpisodeDataset(st, ac, rw, S=S, A=A)
        m, ja = empirical_model(d), d.joint_actions()
        for h in range(H):
            for s in range(S):
                for j in range(math.prod(A)):
                    k = np.flatnonzero((st[:, h] == s) & (ja[:, h] == j))
                    assert m.counts[h, s, j] == k.size
                    if k.size:
                        np.testing.assert_allclose(
                            m.P[h, s, j], np.bincount(st[k, h + 1], minlength=S) / k.size
                        )
                        np.testing.assert_allclose(
                            m.R[:, h, s, j], rw[k, h].mean(0), rtol=1e-14, atol=1e-15
                        )
                    else:  # unvisited: zero rows, as documented
                        assert not m.P[h, s, j].any() and not m.R[:, h, s, j].any()
                n_s = int((st[:, h] == s).sum())
                if n_s:
                    np.testing.assert_allclose(m.behaviour[h, s], m.counts[h, s] / n_s)
