"""Edge cases of the offline data layer outside the ranges the main tests draw from.

Every test here failed on the code before its fix (the commit message names the defect).
"""

from __future__ import annotations

import struct

import numpy as np
import pytest

from rltheory.errors import InvalidModelError
from rltheory.mdp.offline_data import (
    EpisodeDataset,
    PreferenceDataset,
    TransitionDataset,
    adversarial_policy,
    behaviour_policy,
    empirical_model,
    load_dataset,
    sample_game_episodes,
    sample_preferences,
    save_dataset,
    trajectory_returns,
)


def _episodes() -> EpisodeDataset:
    return EpisodeDataset(np.zeros((3, 3), int), np.zeros((3, 2), int), np.zeros((3, 2)), S=2, A=2)


# ----------------------------------------------------------------------------- load_dataset
def _patched(raw: bytes, offset: int, fmt: str, value: int) -> bytes:
    b = bytearray(raw)
    struct.pack_into(fmt, b, offset, value)
    return bytes(b)


def test_load_dataset_names_the_file_for_corrupted_zip_metadata(tmp_path):
    # a flipped bit in the zip directory (compression method, encryption flag, version, the
    # directory's offset) made zipfile raise NotImplementedError, RuntimeError or OSError,
    # which load_dataset let through without naming the file or the format
    raw = save_dataset(_episodes(), tmp_path / "d.npz").read_bytes()
    cd = raw.find(b"PK\x01\x02")  # first central-directory entry
    eocd = raw.find(b"PK\x05\x06")  # end-of-central-directory record
    assert 0 < cd < eocd
    files = {
        "method.npz": _patched(raw, cd + 10, "<H", 99),  # compression method 99
        "encrypted.npz": _patched(raw, cd + 8, "<H", 1),  # flag bit 0: encrypted
        "version.npz": _patched(raw, cd + 6, "<H", 0xFF),  # needs zip version 25.5
        "patched.npz": _patched(raw, cd + 8, "<H", 1 << 5),  # compressed patched data
        "offset.npz": _patched(raw, eocd + 16, "<I", 0xFFFFFFFF),  # directory offset past EOF
    }
    for name, data in files.items():
        (tmp_path / name).write_bytes(data)
        with pytest.raises(InvalidModelError, match=rf"{name}: not a dataset archive written by save_dataset"):
            load_dataset(tmp_path / name)
    # a missing file still says so (it is not a corrupted archive)
    with pytest.raises(FileNotFoundError):
        load_dataset(tmp_path / "absent.npz")
    with pytest.raises(IsADirectoryError):
        load_dataset(tmp_path)


# ----------------------------------------------------------------------------- TransitionDataset
@pytest.mark.parametrize(
    "rewards",
    [np.array(["1.5"]), np.array(["abc"]), np.array([1.0 + 2.0j]), [1.0 + 0.0j]],
    ids=["numeric-text", "text", "complex", "complex-list"],
)
def test_transition_dataset_refuses_text_and_complex_rewards(rewards):
    # the rewards were cast with np.asarray(..., float64): "1.5" was parsed into 1.5, "abc"
    # raised numpy's unlocated "could not convert string to float", and 1+2j lost its
    # imaginary part with only a ComplexWarning (EpisodeDataset already refused all three)
    with pytest.raises(TypeError, match=r"TransitionDataset\.rewards must hold real numbers"):
        TransitionDataset([0], [0], rewards, [0], 1, 1)


def test_transition_dataset_keeps_real_rewards_exactly():
    d = TransitionDataset([0, 0], [0, 0], np.array([-0.0, 0.1], dtype=np.float32), [0, 0], 1, 1)
    assert d.rewards.dtype == np.float64
    assert d.rewards.tolist() == [-0.0, float(np.float32(0.1))] and np.signbit(d.rewards[0])


# ----------------------------------------------------------------------------- unsigned indices
def test_subset_refuses_uint64_indices_that_wrap_to_negative():
    # the indices were cast to int64 before the range check: uint64 2**64 - 1 became -1 and
    # silently selected the last episode; Python 2**63 (a uint64 array) was reported as
    # -9223372036854775808 (both are out of range)
    d = EpisodeDataset(np.array([[0, 1], [1, 0]]), [[0], [1]], [[1.0], [2.0]], S=2, A=2)
    top = 2**64 - 1
    with pytest.raises(InvalidModelError, match=rf"episodes\[0\] = {top} is not an episode index in \[-2, 2\)"):
        d.subset(np.array([top], dtype=np.uint64))
    with pytest.raises(InvalidModelError, match=rf"episodes\[1\] = {2**63} is not an episode index"):
        d.subset(np.array([0, 2**63], dtype=np.uint64))
    with pytest.raises(InvalidModelError, match=rf"episodes\[0\] = {2**63} is not an episode index"):
        d.subset([2**63])
    assert d.subset(np.array([1], dtype=np.uint64)).states.tolist() == [[1, 0]]


@pytest.mark.parametrize("field", ["states", "actions"])
def test_uint64_indices_are_reported_with_their_value(field):
    # states[0, 1] = 2**64 - 1 (uint64) was reported as "= -1 is not a state index"
    top = 2**64 - 1
    arrs = {"states": np.array([[0, 1]], dtype=np.uint64), "actions": np.array([[0]], dtype=np.uint64)}
    arrs[field][0, -1] = top
    with pytest.raises(InvalidModelError, match=rf"EpisodeDataset\.{field}\[0, {1 if field == 'states' else 0}\] = {top} is not an index"):
        EpisodeDataset(arrs["states"], arrs["actions"], [[0.0]], S=2, A=2)
    with pytest.raises(InvalidModelError, match=rf"TransitionDataset\.next_states\[1\] = {top} is not an index"):
        TransitionDataset([0, 0], [0, 0], [0.0, 0.0], np.array([0, top], dtype=np.uint64), 1, 1)
    ok = EpisodeDataset(np.array([[0, 1]], dtype=np.uint64), np.array([[1]], dtype=np.uint8), [[0.0]], S=2, A=2)
    assert ok.states.dtype == ok.actions.dtype == np.int64 and ok.states.tolist() == [[0, 1]]


# ----------------------------------------------------------------------------- empirical_model
def test_empirical_mean_reward_does_not_overflow():
    # r̂ was (Σ r)/n: two rewards 1e308 at the same (h, s, a) summed to inf, so the mean of
    # finite rewards was inf (and -1e308, 1.5e308, 1.5e308 gave inf instead of 6.667e307)
    top = np.finfo(np.float64).max
    d = EpisodeDataset(np.zeros((2, 2), int), np.zeros((2, 1), int), np.full((2, 1), 1e308), S=1, A=1)
    assert empirical_model(d).R[0, 0, 0, 0] == 1e308
    d = EpisodeDataset(np.zeros((3, 2), int), np.zeros((3, 1), int), np.array([[-1e308], [1.5e308], [1.5e308]]), S=1, A=1)
    assert empirical_model(d).R[0, 0, 0, 0] == pytest.approx(1e308 / 3 * 2, rel=4 * np.finfo(float).eps)
    d = EpisodeDataset(np.zeros((4, 2), int), np.zeros((4, 1), int), np.full((4, 1), -top), S=1, A=1)
    assert empirical_model(d).R[0, 0, 0, 0] == -top
    # per-player rewards of a game, one cell huge and one subnormal: both means exact
    tiny = 5e-324
    rw = np.array([[[1e308, tiny]], [[1e308, 3 * tiny]]])
    g = EpisodeDataset(np.zeros((2, 2), int), np.zeros((2, 1, 2), int), rw, S=1, A=(1, 1))
    assert empirical_model(g).R[:, 0, 0, 0].tolist() == [1e308, 2 * tiny]


def _recount(d: EpisodeDataset):
    import math

    J = int(np.prod(d.action_shape))
    n = d.rewards.shape[-1] if d.rewards.ndim == 3 else 1
    counts = np.zeros((d.H, d.S, J), int)
    trans = np.zeros((d.H, d.S, J, d.S), int)
    cells: dict = {}
    ja = d.joint_actions()
    rw = d.rewards.reshape(d.K, d.H, n)
    for k in range(d.K):
        for h in range(d.H):
            s, a = int(d.states[k, h]), int(ja[k, h])
            counts[h, s, a] += 1
            trans[h, s, a, int(d.states[k, h + 1])] += 1
            cells.setdefault((h, s, a), []).append(rw[k, h])
    R = np.zeros((n, d.H, d.S, J))
    for (h, s, a), rs in cells.items():
        for i in range(n):
            R[i, h, s, a] = math.fsum(r[i] for r in rs) / len(rs)
    return counts, trans, R


@pytest.mark.parametrize("seed", range(40))
def test_empirical_model_matches_a_brute_force_recount(seed):
    # includes S = 1, A = 1, H = 1, K = 1 and joint actions of 1-3 players
    rng = np.random.default_rng(seed)
    K, H, S = (int(x) for x in rng.integers(1, 5, 3))
    n = int(rng.integers(0, 4))
    sizes = tuple(int(x) for x in rng.integers(1, 4, max(n, 1)))
    states = rng.integers(0, S, (K, H + 1))
    if n:
        actions = np.stack([rng.integers(0, a, (K, H)) for a in sizes], -1)
        d = EpisodeDataset(states, actions, rng.normal(size=(K, H, n)) * 10.0 ** rng.integers(-300, 300), S, sizes)
    else:
        actions = rng.integers(0, sizes[0], (K, H))
        d = EpisodeDataset(states, actions, rng.normal(size=(K, H)) * 10.0 ** rng.integers(-300, 300), S, sizes[0])
    m = empirical_model(d)
    counts, trans, R = _recount(d)
    assert np.array_equal(m.counts, counts)
    visited = counts > 0
    assert np.array_equal(m.P[visited] * counts[visited][:, None], trans[visited])
    assert not m.P[~visited].any() and not m.R[:, ~visited].any()
    # the sum of K terms is within (K - 1) eps of the exact (fsum) sum, relative to Σ|r|
    mag = np.abs(R) + np.max(np.abs(d.rewards))
    assert np.all(np.abs(m.R - R) <= 2 * K * np.finfo(float).eps * mag)
    ns = counts.sum(-1, keepdims=True)
    assert np.allclose(m.behaviour * np.maximum(ns, 1), counts, rtol=0, atol=1e-12 * K)


# ----------------------------------------------------------------------------- PreferenceDataset
def test_preference_halves_must_hold_actions_of_the_same_shape(tmp_path):
    # first with A = (3,) (actions (K, H, 1)) and second with A = 3 (actions (K, H)) were
    # accepted as "the same sizes"; save_dataset wrote one A for both, and load_dataset then
    # refused its own file ("EpisodeDataset.actions must have shape (1, 1, 1) ... got (1, 1)")
    tup = EpisodeDataset(np.zeros((1, 2), int), np.zeros((1, 1, 1), int), np.zeros((1, 1, 1)), S=1, A=(3,))
    flat = EpisodeDataset(np.zeros((1, 2), int), np.zeros((1, 1), int), np.zeros((1, 1)), S=1, A=3)
    for a, b in ((tup, flat), (flat, tup)):
        with pytest.raises(InvalidModelError, match=r"PreferenceDataset: first has actions of shape .* give both halves A as an int"):
            PreferenceDataset(a, b, [1])
    for a in (tup, flat):
        path = save_dataset(PreferenceDataset(a, a, [1]), tmp_path / "p.npz")
        back = load_dataset(path)
        assert back.first.actions.shape == back.second.actions.shape == a.actions.shape
        assert back.first.A == a.A and back.labels.tolist() == [[1]]


@pytest.mark.parametrize("scale", [np.float32(2.0), np.int64(2), np.float64(2.0), 2, 2.0])
def test_sample_preferences_accepts_numpy_scalar_scales(scale):
    # scale had to be a Python int or float: np.float32(2.0) and np.int64(2) raised
    # "scale must be a positive finite number; got np.float32(2.0)"
    a = EpisodeDataset(np.zeros((64, 2), int), np.ones((64, 1), int), np.zeros((64, 1)), S=1, A=2)
    b = EpisodeDataset(np.zeros((64, 2), int), np.zeros((64, 1), int), np.zeros((64, 1)), S=1, A=2)
    R = np.array([[[0.0, 0.5]]])
    got = sample_preferences(a, b, R, rng=7, scale=scale).labels
    assert np.array_equal(got, sample_preferences(a, b, R, rng=7, scale=2.0).labels)


@pytest.mark.parametrize("scale", [True, np.bool_(True), np.float32("nan"), np.float64("inf"), np.int64(0), -1.0, "2"])
def test_sample_preferences_still_refuses_bad_scales(scale):
    a = EpisodeDataset(np.zeros((2, 2), int), np.ones((2, 1), int), np.zeros((2, 1)), S=1, A=2)
    with pytest.raises(ValueError, match="scale must be a positive finite number"):
        sample_preferences(a, a, np.zeros((1, 1, 2)), rng=0, scale=scale)


# ----------------------------------------------------------------------------- sample_game_episodes
def _game():
    # two players with 2 and 1 actions, S = 2, H = 1
    return np.full((1, 2, 2, 1, 2), 0.5), np.zeros((2, 1, 2, 2, 1)), np.full((1, 2, 2, 1), 0.5)


@pytest.mark.parametrize("mu", [[0.0, 0.0, 1.0], [[0.5, 0.5]], 1.0], ids=["long", "2-D", "scalar"])
def test_game_sampler_names_a_wrong_initial_distribution_shape(mu):
    # numpy's "operands could not be broadcast together" (long, 2-D) or IndexError (scalar)
    P, R, beh = _game()
    with pytest.raises(ValueError, match=r"mu must have shape \(S,\) = \(2,\); got"):
        sample_game_episodes(P, R, beh, 5, rng=0, mu=mu)


@pytest.mark.parametrize(("rewards", "bad"), [("mean", np.nan), ("mean", np.inf), ("bernoulli", np.nan)])
def test_game_sampler_refuses_non_finite_mean_rewards(rewards, bad):
    # a NaN mean was blamed on the sampled data ("EpisodeDataset.rewards[k=1, h=0, i=0] =
    # nan must be finite"), and with Bernoulli rewards it was silently drawn as reward 0
    P, R, beh = _game()
    R[1, 0, 1, 1, 0] = bad
    with pytest.raises(InvalidModelError, match=rf"sample_game_episodes\.R\[i=1, h=0, s=1, a1=1, a2=0\] = {bad} must be finite"):
        sample_game_episodes(P, R, beh, 50, rng=0, rewards=rewards)


def test_game_sampler_names_an_empty_axis():
    # S = 0 raised ZeroDivisionError (the uniform mu = 1/S)
    with pytest.raises(InvalidModelError, match=r"P must have H, S and every A_i >= 1 .* got \(1, 0, 1, 0\)"):
        sample_game_episodes(np.ones((1, 0, 1, 0)), np.zeros((1, 1, 0, 1)), np.ones((1, 0, 1)), 5, rng=0)
    with pytest.raises(InvalidModelError, match=r"P must have H, S and every A_i >= 1 .* got \(1, 1, 0, 1\)"):
        sample_game_episodes(np.ones((1, 1, 0, 1)), np.zeros((1, 1, 1, 0)), np.ones((1, 1, 0)), 5, rng=0)


# ----------------------------------------------------------------------------- behaviour_policy
def test_deterministic_target_needs_a_stochastic_other():
    # A was read from other's last axis: for a deterministic other that axis is S, so two
    # deterministic policies on S = 3 states (A = 2) gave a 3-action policy with 0.5 on an
    # action that does not exist; a scalar other raised IndexError
    with pytest.raises(ValueError, match=r"deterministic target needs the number of actions: .* got an array of dtype int64 and shape \(3,\)"):
        behaviour_policy(np.array([0, 1, 1]), 0.5, other=np.array([1, 0, 0]))
    with pytest.raises(ValueError, match=r"deterministic target needs the number of actions: .* shape \(\)"):
        behaviour_policy(np.array([0, 1]), 0.5, other=5)
    got = behaviour_policy(np.array([0, 1, 1]), 0.5, other=np.full((3, 2), 0.5))
    assert got.tolist() == [[0.75, 0.25], [0.25, 0.75], [0.25, 0.75]]


@pytest.mark.parametrize(
    ("drop", "where"),
    [([[0.5, 0.0]], r"drop\[0, 0\] = 0\.5$"), ([[0, 2]], r"drop\[0, 1\] = 2$"),
     ([["False", "False"]], r"drop\[0, 0\] = 'False'$")],
)
def test_drop_must_be_a_boolean_mask(drop, where):
    # np.asarray(drop, dtype=bool) read 0.5, 2 and "False" as True: [[0.5, 0]] silently
    # dropped action 0, [["False", "False"]] dropped both ("no mass left")
    with pytest.raises(ValueError, match=rf"drop must be a boolean mask \(or 0/1 entries\); {where}"):
        behaviour_policy([[0.5, 0.5]], 0.5, drop=drop)
    assert behaviour_policy([[0.5, 0.5]], 0.5, drop=[[1, 0]]).tolist() == [[0.0, 1.0]]
    assert behaviour_policy([[0.5, 0.5]], 0.5, drop=[[0.0, 1.0]]).tolist() == [[1.0, 0.0]]


@pytest.mark.parametrize(
    "R", [np.array([[["1", "2", "3"]]]), np.array([[[1 + 1j, 2, 3]]])], ids=["text", "complex"]
)
def test_trajectory_returns_refuses_text_and_complex_rewards(R):
    # R was cast with np.asarray(..., float64): the text "1" was read as the reward 1.0 and
    # 1+1j lost its imaginary part with only a ComplexWarning (both returned [[1.0]])
    d = EpisodeDataset(np.zeros((1, 2), int), np.zeros((1, 1), int), np.zeros((1, 1)), S=1, A=3)
    with pytest.raises(TypeError, match="trajectory_returns R must hold real numbers"):
        trajectory_returns(d, R)
    with pytest.raises(TypeError, match="trajectory_returns R must hold real numbers"):
        sample_preferences(d, d, R, rng=0)
    assert trajectory_returns(d, np.array([[[1.0, 2.0, 3.0]]], dtype=np.float32)).tolist() == [[1.0]]


# ----------------------------------------------------------------------------- check_compatible
def test_check_compatible_does_not_truncate_sizes():
    # int(H) and int(S) truncated: a dataset with H = 2, S = 2 was "compatible" with H = 2.7
    # and S = 2.5; A = np.array([2]) raised numpy's "only 0-dimensional arrays can be
    # converted to Python scalars"
    d = EpisodeDataset(np.zeros((1, 3), int), np.zeros((1, 2), int), np.zeros((1, 2)), S=2, A=2)
    with pytest.raises(InvalidModelError, match=r"check_compatible: H must be an integer >= 1; got 2\.7"):
        d.check_compatible(H=2.7)
    with pytest.raises(InvalidModelError, match=r"check_compatible: S must be an integer >= 1; got 2\.5"):
        d.check_compatible(S=2.5)
    with pytest.raises(InvalidModelError, match=r"check_compatible: model\.A must be an integer >= 1; got array\(\[2\]\)"):
        d.check_compatible(A=np.array([2]))
    d.check_compatible(S=np.int64(2), A=2, H=np.int32(2))  # numpy integers are sizes
    d.check_compatible(A=[2])
    with pytest.raises(InvalidModelError, match=r"action sizes \(2,\) but the model has \(3,\)"):
        d.check_compatible(A=3)
    t = TransitionDataset([0], [1], [0.0], [1], 2, 2)
    with pytest.raises(InvalidModelError, match=r"check_compatible: S must be an integer >= 1; got 2\.5"):
        t.check_compatible(S=2.5)
    with pytest.raises(InvalidModelError, match=r"check_compatible: A must be an integer >= 1; got 2\.9"):
        t.check_compatible(A=2.9)
    t.check_compatible(S=np.int64(2), A=2)


# ----------------------------------------------------------------------------- preference labels
def test_preference_labels_shape_message_and_boolean_labels(tmp_path):
    # 1-D labels for a two-player dataset were reported with their reshaped shape
    # ("got (1, 1)" for a (1,) input); boolean labels 1[τ ≻ τ'] were refused as
    # "labels must hold integer indices; got dtype bool"
    g = EpisodeDataset(np.zeros((1, 2), int), np.zeros((1, 1, 2), int), np.zeros((1, 1, 2)), S=1, A=(2, 2))
    with pytest.raises(InvalidModelError, match=r"labels must have shape \(K, n\) = \(1, 2\); got \(1,\)$"):
        PreferenceDataset(g, g, [1])
    one = EpisodeDataset(np.zeros((2, 2), int), np.zeros((2, 1), int), np.zeros((2, 1)), S=1, A=2)
    with pytest.raises(InvalidModelError, match=r"labels must have shape \(K, n\) = \(2, 1\); got \(3,\) \(one player may"):
        PreferenceDataset(one, one, [1, 0, 1])
    p = PreferenceDataset(g, g, np.array([[True, False]]))
    assert p.labels.dtype == np.int64 and p.labels.tolist() == [[1, 0]]
    q = PreferenceDataset(one, one, np.array([True, False]))
    assert q.labels.tolist() == [[1], [0]]
    assert load_dataset(save_dataset(p, tmp_path / "p")).labels.tolist() == [[1, 0]]
    with pytest.raises(InvalidModelError, match=r"labels\[k=0, i=0\] = 2 is not a 0/1 index"):
        PreferenceDataset(one, one, [2, 0])


# ----------------------------------------------------------------------------- load_dataset contents
def _archive(path, header: dict, **arrs) -> None:
    import json

    np.savez(path, header=np.asarray(json.dumps(header)), **arrs)


@pytest.mark.parametrize("rewards", [np.array([["a", "b"], ["c", "d"]]), np.zeros((2, 2), complex)], ids=["text", "complex"])
def test_load_dataset_names_the_file_for_text_or_complex_rewards(tmp_path, rewards):
    # the dataset class's TypeError escaped load_dataset without the path (its docstring
    # promises the located message prefixed with the path)
    header = {"kind": "EpisodeDataset", "format_version": 1, "S": 2, "A": 2}
    _archive(tmp_path / "r.npz", header, states=np.zeros((2, 3), int), actions=np.zeros((2, 2), int), rewards=rewards)
    with pytest.raises(InvalidModelError, match=r"r\.npz: EpisodeDataset\.rewards must hold real numbers"):
        load_dataset(tmp_path / "r.npz")


@pytest.mark.parametrize("version", [True, 1.0, "1", 2, None])
def test_load_dataset_requires_the_integer_format_version(tmp_path, version):
    # format_version true and 1.0 compared equal to 1 and were accepted as version 1
    header = {"kind": "EpisodeDataset", "format_version": version, "S": 2, "A": 2}
    _archive(tmp_path / "v.npz", header, states=np.zeros((2, 3), int), actions=np.zeros((2, 2), int), rewards=np.zeros((2, 2)))
    with pytest.raises(InvalidModelError, match=rf"v\.npz: format_version {version!r} is not 1"):
        load_dataset(tmp_path / "v.npz")
    header["format_version"] = 1
    _archive(tmp_path / "v.npz", header, states=np.zeros((2, 3), int), actions=np.zeros((2, 2), int), rewards=np.zeros((2, 2)))
    assert load_dataset(tmp_path / "v.npz").K == 2


# ----------------------------------------------------------------------------- non-numeric rewards
@pytest.mark.parametrize(
    "rewards",
    [np.array([["2020-01-01"]], dtype="datetime64[D]"), np.ones((1, 1), dtype="timedelta64[s]"),
     np.ones((1, 1), dtype=[("x", float)])],
    ids=["date", "duration", "record"],
)
def test_rewards_must_be_real_numbers_not_dates_or_records(rewards):
    # a float cast read the date 2020-01-01 as the reward 18262.0, one second as 1.0 and a
    # one-field record as its field, in EpisodeDataset, TransitionDataset and trajectory_returns
    with pytest.raises(TypeError, match=r"EpisodeDataset\.rewards must hold real numbers; got dtype"):
        EpisodeDataset([[0, 0]], [[0]], rewards, S=1, A=1)
    with pytest.raises(TypeError, match=r"TransitionDataset\.rewards must hold real numbers; got dtype"):
        TransitionDataset([0], [0], rewards[0], [0], 1, 1)
    d = EpisodeDataset([[0, 0]], [[0]], [[0.0]], S=1, A=1)
    with pytest.raises(TypeError, match=r"trajectory_returns R must hold real numbers; got dtype"):
        trajectory_returns(d, rewards[None])
    assert EpisodeDataset([[0, 0]], [[0]], np.array([[3]], dtype=np.int8), S=1, A=1).rewards.tolist() == [[3.0]]


# ----------------------------------------------------------------------------- frozen arrays
def test_datasets_do_not_alias_the_callers_arrays():
    # the validated arrays were the caller's own (int64 / float64 inputs were not copied):
    # writing 7 into the caller's states after construction gave an S = 2 dataset a state 7
    # (empirical_model then failed with numpy's "cannot reshape array of size 15"), and a
    # write into d.rewards changed the caller's array
    st, ac, rw = np.zeros((2, 3), np.int64), np.zeros((2, 2), np.int64), np.zeros((2, 2))
    d = EpisodeDataset(st, ac, rw, S=2, A=2)
    st[0, 0], ac[0, 0], rw[0, 0] = 7, 5, np.nan
    assert d.states.max() == 0 and d.actions.max() == 0 and np.isfinite(d.rewards).all()
    assert empirical_model(d).counts.sum() == 4
    for a in (d.states, d.actions, d.rewards):
        with pytest.raises(ValueError, match="read-only"):
            a[0, 0] = 1
    s, a, r, s2 = np.zeros(2, np.int64), np.zeros(2, np.int64), np.zeros(2), np.zeros(2, np.int64)
    t = TransitionDataset(s, a, r, s2, 1, 1)
    s[0] = a[0] = s2[0] = 9
    r[0] = np.inf
    assert (t.states.max(), t.actions.max(), t.next_states.max(), t.rewards[0]) == (0, 0, 0, 0.0)
    with pytest.raises(ValueError, match="read-only"):
        t.next_states[0] = 1
    y = np.ones((2, 1), np.int64)
    one = EpisodeDataset(np.zeros((2, 2), int), np.zeros((2, 1), int), np.zeros((2, 1)), S=1, A=2)
    p = PreferenceDataset(one, one, y)
    y[0, 0] = 5
    assert p.labels.tolist() == [[1], [1]]
    with pytest.raises(ValueError, match="read-only"):
        p.labels[0, 0] = 0


def test_deterministic_policy_reports_a_uint64_action_with_its_value():
    # the range check ran on p.astype(int64): uint64 2**64 - 1 was reported as "= -1"
    top = 2**64 - 1
    with pytest.raises(InvalidModelError, match=rf"policy\.target\[ax0=1\] = {top} is not an action index in \[0, 2\)"):
        behaviour_policy(np.array([0, top], dtype=np.uint64), 0.5, other=np.full((2, 2), 0.5))
    got = behaviour_policy(np.array([0, 1], dtype=np.uint64), 1.0, other=np.full((2, 2), 0.5))
    assert got.tolist() == [[1.0, 0.0], [0.0, 1.0]]


def test_float32_policies_are_checked_at_float32_tolerance():
    # _policy_host cast to float64 before check_probability, so a float32 policy normalised
    # in float32 (this row sums to 1 - 1.0e-7 in float64) failed "must sum to 1 (atol=1e-08)"
    # (rows of 7 may be off by 1e-8 (1 + √7) = 3.6e-8) in behaviour_policy and sample_episodes
    from rltheory.mdp import FiniteHorizonMDP
    from rltheory.mdp.offline_data import sample_episodes

    # exact float32 values (0.9000000357627869 is float32(0.8) + float32(0.1), not float32(0.9))
    x = np.array([[0.9000000357627869, 0.9000000357627869, 0.30000001192092896, 1.0,
                   0.20000000298023224, 0.4000000059604645, 0.30000001192092896]], dtype=np.float32)
    p = x / x.sum(-1, keepdims=True)
    dev = abs(float(p.astype(np.float64).sum()) - 1.0)
    assert 1e-8 * (1 + 7**0.5) < dev < 16 * np.finfo(np.float32).eps  # off for float64, fine for float32
    pb = behaviour_policy(p, 0.5)
    assert pb.dtype == np.float64 and abs(pb.sum() - 1.0) <= 1e-15
    fh = FiniteHorizonMDP.stationary(np.ones((1, 7, 1)), np.zeros((1, 7)), H=1)
    assert sample_episodes(fh, p, 3, rng=0).actions.shape == (3, 1)
    with pytest.raises(InvalidModelError, match=r"must sum to 1 \(atol=1\.9"):
        behaviour_policy(np.array([[0.5, 0.5001]], dtype=np.float32), 0.5)


def _float32_row() -> np.ndarray:
    """A float32 distribution over 7 entries whose float64 sum is 1 - 1.0e-7."""
    x = np.array([0.9000000357627869, 0.9000000357627869, 0.30000001192092896, 1.0,
                  0.20000000298023224, 0.4000000059604645, 0.30000001192092896], dtype=np.float32)
    return x / x.sum()


def test_transition_sampler_accepts_a_float32_data_distribution():
    # nu was cast to float64 before check_probability, so a float32 nu (e.g. the occupancy
    # measure of a float32 model, as the docstring suggests) failed "each nu must sum to 1
    # (atol=1e-08)": 42 of 50 random float32 6x4 models in a probe
    from rltheory.mdp import FiniteMDP, occupancy_measure
    from rltheory.mdp.offline_data import sample_transition_dataset

    nu = _float32_row().reshape(7, 1)
    assert abs(float(nu.astype(np.float64).sum()) - 1.0) > 1e-8 * (1 + 7**0.5)
    mdp = FiniteMDP(np.full((7, 1, 7), 1 / 7, np.float32), np.zeros((7, 1), np.float32), 0.9)
    d = sample_transition_dataset(mdp, nu, 50, rng=0)
    assert d.N == 50 and d.states.max() < 7
    rng = np.random.default_rng(3)
    P = rng.random((6, 4, 6)).astype(np.float32)
    P /= P.sum(-1, keepdims=True)
    mdp = FiniteMDP(P, rng.random((6, 4)).astype(np.float32), 0.9)
    occ = occupancy_measure(mdp, np.full((6, 4), 0.25, np.float32), np.full(6, 1 / 6, np.float32))
    assert sample_transition_dataset(mdp, occ, 20, rng=1).N == 20
    with pytest.raises(InvalidModelError, match=r"each nu must sum to 1 \(atol=1\.9"):
        sample_transition_dataset(mdp, occ * np.float32(1.001), 20, rng=1)


@pytest.mark.parametrize("which", ["P", "behaviour", "mu"])
def test_game_sampler_accepts_float32_distributions(which):
    # P, behaviour and mu were cast to float64 before check_probability, so a float32 row
    # normalised in float32 (summing to 1 - 1.0e-7 in float64) failed "must sum to 1 (atol=1e-08)"
    row = _float32_row()
    P = np.full((1, 7, 7, 1, 7), 1 / 7)
    beh = np.full((1, 7, 7, 1), 1 / 7)
    mu = np.full(7, 1 / 7)
    if which == "P":
        P = np.broadcast_to(row, P.shape).astype(np.float32)
    elif which == "behaviour":
        beh = np.broadcast_to(row[:, None], beh.shape).astype(np.float32)
    else:
        mu = row
    d = sample_game_episodes(P, np.zeros((2, 1, 7, 7, 1)), beh, 30, rng=0, mu=mu)
    assert d.K == 30 and d.rewards.dtype == np.float64
    bad = {"P": P, "behaviour": beh, "mu": mu}[which] * np.float32(1.001)
    kw = {"P": P, "behaviour": beh, "mu": mu, which: bad}
    with pytest.raises(InvalidModelError, match=rf"{which}.* must sum to 1 \(atol=1\.9"):
        sample_game_episodes(kw["P"], np.zeros((2, 1, 7, 7, 1)), kw["behaviour"], 30, rng=0, mu=kw["mu"])


@pytest.mark.parametrize("kind", ["text", "complex"])
def test_game_rewards_and_adversarial_q_must_be_real(kind):
    # both were cast with np.asarray(..., float64): R = "1" was sampled as reward 1.0, a
    # complex R or Q lost its imaginary part (Q = [[1+5j, 2]] gave the worst action 0)
    R = np.array([[[["1", "0"]]]]) if kind == "text" else np.zeros((1, 1, 1, 2)) + 1j
    with pytest.raises(TypeError, match="sample_game_episodes R must hold real numbers"):
        sample_game_episodes(np.ones((1, 1, 2, 1)), R, np.full((1, 1, 2), 0.5), 2, rng=0)
    Q = np.array([["1", "0"]]) if kind == "text" else np.array([[1 + 5j, 2]])
    with pytest.raises(TypeError, match="adversarial_policy Q must hold real numbers"):
        adversarial_policy(Q)


# ----------------------------------------------------------------------------- round trip
def _bits(a: np.ndarray) -> bytes:
    return a.dtype.str.encode() + str(a.shape).encode() + np.ascontiguousarray(a).tobytes()


def test_save_load_round_trip_is_bit_exact_at_the_edges(tmp_path):
    # S = A = H = K = 1, a one-player game with A = (1,), -0.0, the smallest subnormal and the
    # largest float, bool labels; every array must come back with its dtype, shape and bits
    top = np.finfo(np.float64).max
    one = EpisodeDataset([[0, 0]], [[0]], [[-0.0]], S=1, A=1)
    game = EpisodeDataset(np.array([[0, 1, 0], [1, 1, 1]]), np.zeros((2, 2, 1), int),
                          np.array([[[5e-324], [-top]], [[-0.0], [0.1]]]), S=2, A=(1,))
    trans = TransitionDataset([1, 0], [0, 1], [-0.0, 5e-324], [0, 1], 2, 2)
    prefs = PreferenceDataset(game, game, np.array([[True], [False]]))
    for i, d in enumerate((one, game, trans, prefs)):
        e = load_dataset(save_dataset(d, tmp_path / f"d{i}"))
        assert type(e) is type(d)
        halves = [(d.first, e.first), (d.second, e.second)] if i == 3 else [(d, e)]
        for x, y in halves:
            fields = ("states", "actions", "rewards") + (("next_states",) if i == 2 else ())
            for f in fields:
                assert _bits(getattr(x, f)) == _bits(getattr(y, f)), (i, f)
            assert (x.S, x.A) == (y.S, y.A) and type(x.A) is type(y.A)
        if i == 3:
            assert _bits(d.labels) == _bits(e.labels)
