"""Error paths and rare branches of rltheory.mdp, rltheory._validate and rltheory.backend.

Each raise is reached through the public function a user would call and its message is
pinned on the located part (field, index, value); each functional branch is checked
against an independent reference (another solver, a closed form, a hand-built model).
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from rltheory.backend import require_host, to_numpy
from rltheory.errors import InvalidModelError, SolverError
from rltheory.games import MarkovGame
from rltheory.mdp import (
    ConstrainedMDP,
    EpisodeDataset,
    FiniteHorizonMDP,
    FiniteMDP,
    PreferenceDataset,
    TransitionDataset,
    aperiodicity_transform,
    average_linear_program,
    average_policy_iteration,
    chain_structure,
    classify_mdp,
    empirical_model,
    evaluate_cmdp,
    evaluate_finite_horizon,
    from_gymnasium,
    from_quantecon,
    gain_bias,
    garnet,
    gridworld,
    hitting_times,
    kl_divergence,
    linear_program,
    linear_utility,
    load_dataset,
    mixing_time,
    neg_kl_utility,
    occupancy_measure,
    policy_iteration,
    policy_reward,
    policy_transition_matrix,
    quadratic_utility,
    sample_transition_dataset,
    save_dataset,
    shadow_reward,
    solve_cmdp,
    solve_general_utility,
    spectral_gap,
    tv_distances,
)
from rltheory.mdp.average import _reach_actions

# a communicating 2-state, 2-action model used by the LP tests
_P2 = np.array([[[0.5, 0.5], [1.0, 0.0]], [[0.0, 1.0], [0.3, 0.7]]])


def _episodes() -> EpisodeDataset:
    return EpisodeDataset(
        np.array([[0, 1, 1], [1, 1, 0]]), np.array([[1, 0], [1, 1]]), np.array([[0.5, 1.0], [0.0, 2.0]]), S=2, A=2
    )


# ---------------------------------------------------------------------------------- backend
def test_to_numpy_falls_back_to_dlpack_for_a_non_cpu_strict_array():
    """np.asarray refuses array_api_strict arrays on a non-CPU device; to_numpy (and the
    host-only boundary require_host) then copy through DLPack and keep the values."""
    xps = pytest.importorskip("array_api_strict")
    x = xps.asarray([[0.25, 0.75], [1.0, 0.0]], device=xps.Device("device1"))
    with pytest.raises(RuntimeError):
        np.asarray(x)  # the branch's premise
    h = to_numpy(x)
    assert isinstance(h, np.ndarray)
    np.testing.assert_array_equal(h, [[0.25, 0.75], [1.0, 0.0]])
    np.testing.assert_array_equal(require_host(x, "test"), h)


# ---------------------------------------------------------------------------------- _validate
class _TableEnv:
    """A toy-text-like env: a transition table ``P[s][a] = [(p, s', r, done), ...]``."""

    def __init__(self, table: dict, S: int, A: int, mu=None):
        from gymnasium.spaces import Discrete

        self.P = table
        self.observation_space = Discrete(S)
        self.action_space = Discrete(A)
        if mu is not None:
            self.initial_state_distrib = mu


def test_from_gymnasium_rejects_gamma_none():
    """A discounted converter must not accept gamma=None (check_discount(allow_none=False))."""
    pytest.importorskip("gymnasium")
    env = _TableEnv({0: {0: [(1.0, 0, 0.0, False)]}}, 1, 1)
    with pytest.raises(InvalidModelError, match=r"gamma must be a number in \[0, 1\); got None"):
        from_gymnasium(env, gamma=None)


# ---------------------------------------------------------------------------------- interop
def test_from_gymnasium_skips_zero_probability_entries():
    """A p = 0 entry (here a terminal one into state 1) contributes nothing: the model equals
    the one built without it. Counting its done flag would make state 1 absorbing."""
    pytest.importorskip("gymnasium")
    with_zero = {0: {0: [(0.0, 1, 5.0, True), (1.0, 0, 1.0, False)]}, 1: {0: [(1.0, 0, 2.0, False)]}}
    without = {0: {0: [(1.0, 0, 1.0, False)]}, 1: {0: [(1.0, 0, 2.0, False)]}}
    m = from_gymnasium(_TableEnv(with_zero, 2, 1), gamma=0.9)
    ref = from_gymnasium(_TableEnv(without, 2, 1), gamma=0.9)
    np.testing.assert_array_equal(m.P, ref.P)
    np.testing.assert_array_equal(m.R, ref.R)
    np.testing.assert_array_equal(m.P[:, 0], [[1.0, 0.0], [1.0, 0.0]])
    np.testing.assert_array_equal(m.R[:, 0], [1.0, 2.0])


def test_from_gymnasium_initial_distribution_shape():
    pytest.importorskip("gymnasium")
    env = _TableEnv({0: {0: [(1.0, 1, 0.0, False)]}, 1: {0: [(1.0, 0, 0.0, False)]}}, 2, 1, mu=[0.2, 0.3, 0.5])
    with pytest.raises(InvalidModelError, match=r"initial_state_distrib must have shape \(2,\); got \(3,\)"):
        from_gymnasium(env, gamma=0.5)


@pytest.mark.parametrize("field", ["s_indices", "a_indices"])
def test_from_quantecon_pair_indices_must_be_integers(field):
    R, Q = np.array([1.0, 2.0, 0.0]), np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 0.0]])
    idx = {"s_indices": [0, 0, 1], "a_indices": [0, 1, 0]}
    idx[field] = np.asarray(idx[field], dtype=float)
    with pytest.raises(InvalidModelError, match=rf"{field} must be integers; got dtype float64"):
        from_quantecon(R, Q, 0.9, idx["s_indices"], idx["a_indices"], pad_infeasible=True)


# ---------------------------------------------------------------------------------- _dataset_checks
def test_episode_dataset_rejects_an_empty_action_tuple():
    with pytest.raises(InvalidModelError, match=r"EpisodeDataset\.A must be a positive int or a non-empty tuple .*got \(\)"):
        EpisodeDataset(np.zeros((1, 2), int), np.zeros((1, 1), int), np.zeros((1, 1)), S=1, A=())


def test_sample_transition_dataset_reward_mode():
    mdp = FiniteMDP(np.ones((1, 2, 1)), np.array([[0.0, 1.0]]), gamma=0.9)
    with pytest.raises(ValueError, match=r"rewards must be 'mean' or 'bernoulli'; got 'median'"):
        sample_transition_dataset(mdp, np.array([[0.5, 0.5]]), 3, rng=0, rewards="median")


# ---------------------------------------------------------------------------------- _occupancy_lp / discounted
def test_linear_program_with_explicit_weights_matches_policy_iteration():
    """Given strictly positive weights w: the LP's V is V* (policy iteration) and strong
    duality (1 − γ) wᵀV* = ⟨r, d*⟩ holds with d* the occupancy of the LP's policy from w."""
    mdp = FiniteMDP(_P2, np.array([[1.0, 0.0], [0.0, 2.0]]), gamma=0.8)
    w = np.array([0.2, 0.8])
    sol = linear_program(mdp, weights=w)
    ref = policy_iteration(mdp)
    np.testing.assert_allclose(sol.V, ref.V, rtol=0, atol=1e-9)
    np.testing.assert_array_equal(sol.policy, ref.policy)
    np.testing.assert_allclose((1 - 0.8) * w @ sol.V, np.sum(mdp.R * sol.occupancy), rtol=0, atol=1e-9)
    d_pi = occupancy_measure(mdp.replace(mu=w), sol.policy)
    np.testing.assert_allclose(sol.occupancy, d_pi, rtol=0, atol=1e-9)


def test_linear_program_solver_failure_names_the_batch_index(monkeypatch):
    """A HiGHS failure carries its status, and the failing batch index is printed as plain ints
    (was '(np.int64(1),)'). HiGHS is made to fail on the second instance: since the LP is solved
    for r/max|r|, the rewards of 1e25 that used to exceed HiGHS's infinity (1e20) solve."""
    import rltheory.mdp.discounted as disc  # noqa: PLC0415

    real, calls = disc.highs_linprog, []

    def flaky(*args, **kwargs):
        calls.append(1)
        res = real(*args, **kwargs)
        if len(calls) == 2:
            res.status, res.message = 4, "numerical difficulties (forced by the test)"
        return res

    monkeypatch.setattr(disc, "highs_linprog", flaky)
    R = np.zeros((1, 2, 2, 2))
    with pytest.raises(SolverError, match=r"HiGHS failed on the LP \(batch index \(0, 1\)\): numerical") as info:
        linear_program(FiniteMDP(np.broadcast_to(_P2, (1, 2, 2, 2, 2)), R, gamma=0.9))
    assert "np." not in str(info.value)
    assert info.value.status == 4
    calls.clear()
    calls.append(1)  # the next call fails
    with pytest.raises(SolverError, match=r"HiGHS failed on the LP: numerical"):
        linear_program(FiniteMDP(_P2, np.full((2, 2), -1.0), gamma=0.9))


@pytest.mark.parametrize("scale", [1e-14, 1e-12, 1e12])
def test_policy_iteration_is_invariant_to_the_reward_scale(scale):
    """Its default tie tolerance is relative to the value scale: with the former absolute floor
    (32·eps·(1 + max|r|/(1−γ))/(1−γ)) every action tied at reward size 1e-12 and PI kept a
    suboptimal policy, certified only to an absolute 1e-13."""
    rng = np.random.default_rng(3)
    mdp = FiniteMDP(rng.dirichlet(np.ones(8), size=(8, 4)), rng.random((8, 4)), gamma=0.9)
    ref, out = policy_iteration(mdp), policy_iteration(mdp.replace(R=scale * np.asarray(mdp.R)))
    np.testing.assert_array_equal(out.policy, ref.policy)
    np.testing.assert_allclose(out.V, scale * np.asarray(ref.V), rtol=1e-13)
    assert float(out.bound) <= 1e-12 * scale * float(np.max(np.abs(ref.V)))


@pytest.mark.parametrize("multichain", [False, True])
@pytest.mark.parametrize("scale", [1e-14, 1e-12, 1e12])
def test_average_policy_iteration_is_invariant_to_the_reward_scale(scale, multichain):
    """Its tie tolerances are relative to max|r| (an absolute floor of 1e-10 made every action a tie
    at reward size 1e-12, and PI kept its first policy)."""
    rng = np.random.default_rng(3)
    mdp = FiniteMDP(rng.dirichlet(np.ones(8), size=(8, 4)), rng.random((8, 4)), gamma=None)
    ref = average_policy_iteration(mdp, multichain=multichain)
    out = average_policy_iteration(mdp.replace(R=scale * np.asarray(mdp.R)), multichain=multichain)
    np.testing.assert_array_equal(out.policy, ref.policy)
    np.testing.assert_allclose(out.gain, scale * np.asarray(ref.gain), rtol=1e-13)


@pytest.mark.parametrize("scale", [1e-12, 1e25])
def test_linear_program_at_extreme_reward_scales(scale):
    """V* scales with the rewards; the LP (solved for r/max|r|) matches policy iteration at reward sizes
    1e-12 (24% off before) and 1e25 (beyond HiGHS's infinity before)."""
    rng = np.random.default_rng(0)
    mdp = FiniteMDP(rng.dirichlet(np.ones(4), size=(4, 3)), scale * rng.random((4, 3)), gamma=0.9)
    lp, ref = linear_program(mdp), policy_iteration(mdp)
    np.testing.assert_allclose(lp.V, ref.V, rtol=1e-12)
    np.testing.assert_array_equal(lp.policy, ref.policy)
    assert float(lp.bound) <= 1e-7 * float(np.max(np.abs(ref.V)))


# ---------------------------------------------------------------------------------- average
def test_average_reward_routines_need_a_finite_mdp():
    with pytest.raises(TypeError, match=r"gain_bias expects a FiniteMDP; got str"):
        gain_bias("mdp", np.array([0, 0]))
    with pytest.raises(TypeError, match=r"aperiodicity_transform expects a FiniteMDP; got NoneType"):
        aperiodicity_transform(None, 0.5)


@pytest.mark.parametrize("tau", [0, 0.0, 1.5, -0.1, True, "0.5"])
def test_aperiodicity_transform_tau_range(tau):
    mdp = FiniteMDP(_P2, np.zeros((2, 2)), gamma=None)
    with pytest.raises(ValueError, match=rf"tau must lie in \(0, 1\]; got {tau!r}"):
        aperiodicity_transform(mdp, tau)


def _fail_call(monkeypatch, module, n, status, message):
    """Make the ``n``-th call of ``module.highs_linprog`` report ``status`` (the calls before it are real)."""
    real, calls = module.highs_linprog, []

    def flaky(*args, **kwargs):
        calls.append(1)
        res = real(*args, **kwargs)
        if len(calls) == n:
            res.status, res.message = status, message
        return res

    monkeypatch.setattr(module, "highs_linprog", flaky)
    return calls


def test_average_linear_program_solver_failure_names_the_batch_index(monkeypatch):
    import rltheory.mdp.average as avg  # noqa: PLC0415

    calls = _fail_call(monkeypatch, avg, 2, 4, "numerical difficulties (forced by the test)")
    with pytest.raises(SolverError, match=r"HiGHS failed on the average-reward LP \(batch index \(1,\)\): numer") as info:
        average_linear_program(FiniteMDP(np.stack([_P2, _P2]), np.zeros((2, 2, 2)), gamma=None))
    assert info.value.status == 4
    calls[:] = [1]
    with pytest.raises(SolverError, match=r"HiGHS failed on the average-reward LP: numer"):
        average_linear_program(FiniteMDP(_P2, np.ones((2, 2)), gamma=None), multichain=True)


@pytest.mark.parametrize("multichain", [False, True])
@pytest.mark.parametrize("scale", [1e-12, 1e25])
def test_average_linear_program_at_extreme_reward_scales(multichain, scale):
    """Gains scale with the rewards; the LP (solved for r/max|r|) gives the unit-scale policy at reward
    size 1e-12 and at 1e25, beyond HiGHS's infinity (1e20), which used to fail."""
    R = np.array([[0.0, 1.0], [0.5, 0.2]])
    unit = average_linear_program(FiniteMDP(_P2, R, gamma=None), multichain=multichain)
    out = average_linear_program(FiniteMDP(_P2, scale * R, gamma=None), multichain=multichain)
    np.testing.assert_allclose(out.gain, scale * np.asarray(unit.gain), rtol=1e-12)
    np.testing.assert_array_equal(out.policy, unit.policy)


def test_reach_actions_marks_states_that_cannot_reach_the_target():
    """Private helper (the BFS behind the unichain LP policy): states with no path to the
    target keep action −1. Through average_linear_program this cannot happen, because the
    model is checked to be weakly communicating and then every state reaches S_x."""
    supp = np.zeros((3, 2, 3), dtype=bool)
    supp[0, :, 0] = True  # 0 is absorbing: it can never reach the target {2}
    supp[1, 0, 0] = True
    supp[1, 1, 2] = True  # 1 reaches 2 by action 1
    supp[2, :, 2] = True
    act = _reach_actions(supp, np.array([False, False, True]))
    np.testing.assert_array_equal(act, [-1, 1, -1])


# ---------------------------------------------------------------------------------- bellman
def test_policies_given_as_lists():
    """Lists are accepted as policies: integer lists are deterministic, float lists stochastic."""
    mdp = FiniteMDP(_P2, np.array([[1.0, 0.0], [0.0, 2.0]]), gamma=0.9)
    np.testing.assert_array_equal(policy_transition_matrix(mdp, [1, 0]), [_P2[0, 1], _P2[1, 0]])
    np.testing.assert_allclose(policy_reward(mdp, [[0.25, 0.75], [0.5, 0.5]]), [0.25, 1.0], rtol=0, atol=1e-15)


# ---------------------------------------------------------------------------------- constrained
def test_constrained_mdp_repr():
    mdp = FiniteMDP(np.ones((1, 2, 1)), np.array([[0.0, 1.0]]), gamma=0.5)
    cmdp = ConstrainedMDP(mdp, C=np.array([[[0.0, 1.0]]]), b=np.array([1.0]))
    assert repr(cmdp) == "ConstrainedMDP(S=1, A=2, m=1, gamma=0.5)"


def test_solve_cmdp_solver_failure_carries_the_status(monkeypatch):
    """When HiGHS still reports trouble after every retry of ``highs_linprog``, the generic
    SolverError carries the status."""
    import rltheory.mdp.constrained as con  # noqa: PLC0415

    # average reward: a discounted LP in trouble (status 4) is re-solved on the normalised occupancy
    # since f63043b (tests/mdp/test_h71_cmdp_near_one.py), so one forced failure is no longer final there
    _fail_call(monkeypatch, con, 1, 4, "numerical difficulties (forced by the test)")
    cmdp = ConstrainedMDP(FiniteMDP(_P2, np.ones((2, 2)), gamma=None), C=np.ones((1, 2, 2)), b=np.array([100.0]))
    with pytest.raises(SolverError, match=r"HiGHS failed on the CMDP LP \(status 4\): numer") as info:
        solve_cmdp(cmdp)
    assert info.value.status == 4


def test_solve_cmdp_model_error_is_not_reported_as_infeasibility(monkeypatch):
    """scipy maps HiGHS's "Model error" (e.g. coefficients beyond its limits) to status 2, the
    infeasibility status, too. The message used to claim "the CMDP is infeasible ... each
    constraint is satisfiable alone, but not all at once"."""
    import rltheory.mdp.constrained as con  # noqa: PLC0415

    _fail_call(monkeypatch, con, 1, 2, "Model error (forced by the test)")
    cmdp = ConstrainedMDP(FiniteMDP(_P2, np.zeros((2, 2)), gamma=0.9), C=np.ones((1, 2, 2)), b=np.array([100.0]))
    with pytest.raises(SolverError, match=r"HiGHS failed on the CMDP LP \(status 2\): Model error") as info:
        solve_cmdp(cmdp)
    assert "infeasible" not in str(info.value)
    assert info.value.status == 2


@pytest.mark.parametrize("scale", [1e-12, 1e25])
def test_solve_cmdp_at_extreme_scales(scale):
    """Rewards, costs and thresholds of any size (each solved relative to its own scale): at 1e-12 the
    policy used to spend 2.5 times the allowed cost; costs of size 1e25 (beyond HiGHS's infinity)
    were a "Model error". The solution is the unit-scale one: same policy, value and costs scaled,
    multipliers unchanged (reward and costs scaled alike)."""
    rng = np.random.default_rng(1)
    mdp = FiniteMDP(rng.dirichlet(np.ones(3), size=(3, 2)), rng.random((3, 2)), gamma=0.9)
    C = rng.random((1, 3, 2))
    unit = ConstrainedMDP(mdp, C, np.array([4.0]))
    big = ConstrainedMDP(mdp.replace(R=scale * np.asarray(mdp.R)), scale * C, np.array([4.0 * scale]))
    ref, out = solve_cmdp(unit), solve_cmdp(big)
    np.testing.assert_allclose(out.policy, ref.policy, atol=1e-9)
    assert out.value == pytest.approx(scale * ref.value, rel=1e-9)
    np.testing.assert_allclose(out.duals, ref.duals, rtol=1e-9)
    value, costs = evaluate_cmdp(big, out.policy)
    assert float(costs[0]) <= 4.0 * scale * (1 + 1e-12)


# ---------------------------------------------------------------------------------- dataset_io
def _write_npz(path, header: str) -> None:
    np.savez(path, header=np.asarray(header), states=np.zeros((1, 2), int), actions=np.zeros((1, 1), int),
             rewards=np.zeros((1, 1)))


def test_save_dataset_rejects_other_objects(tmp_path):
    with pytest.raises(TypeError, match=r"save_dataset saves EpisodeDataset, TransitionDataset or PreferenceDataset; got dict"):
        save_dataset({"states": np.zeros((1, 2))}, tmp_path / "x.npz")


@pytest.mark.parametrize(
    "header, match",
    [
        ("{not json", r"header is not valid JSON \("),
        (json.dumps({"kind": "Trajectories", "format_version": 1, "S": 1, "A": 1}),
         r"unknown dataset kind 'Trajectories'"),
        (json.dumps({"kind": "EpisodeDataset", "format_version": 2, "S": 1, "A": 1}),
         r"format_version 2 is not 1"),
        # these two crashed with AttributeError / KeyError before
        ("[1, 2]", r"header must be a JSON object with keys kind, format_version, S, A; got a JSON list"),
        (json.dumps({"kind": "EpisodeDataset", "format_version": 1, "S": 1}), r"header lacks the keys \['A'\]"),
    ],
)
def test_load_dataset_bad_headers(tmp_path, header, match):
    p = tmp_path / "d.npz"
    _write_npz(p, header)
    with pytest.raises(InvalidModelError, match=rf"d\.npz: {match}"):
        load_dataset(p)


def test_load_dataset_round_trip_of_a_hand_written_header(tmp_path):
    """The header checks accept a well-formed archive (the same writer as the bad ones)."""
    p = tmp_path / "ok.npz"
    _write_npz(p, json.dumps({"kind": "EpisodeDataset", "format_version": 1, "S": 1, "A": 1}))
    d = load_dataset(p)
    assert (d.K, d.H, d.S, d.A) == (1, 1, 1, 1)


# ---------------------------------------------------------------------------------- episodes / preference / transitions
def test_episode_dataset_shape_errors():
    with pytest.raises(InvalidModelError, match=r"EpisodeDataset\.states must have shape \(K, H\+1\); got \(3,\)"):
        EpisodeDataset(np.zeros(3, int), np.zeros((1, 2), int), np.zeros((1, 2)), S=1, A=1)
    with pytest.raises(InvalidModelError, match=r"EpisodeDataset\.rewards must have shape \(1, 2\) to match actions; got \(1, 3\)"):
        EpisodeDataset(np.zeros((1, 3), int), np.zeros((1, 2), int), np.zeros((1, 3)), S=1, A=1)


def test_episode_dataset_check_compatible_actions_and_repr():
    d = _episodes()
    with pytest.raises(InvalidModelError, match=r"the dataset has action sizes \(2,\) but the model has \(3,\)"):
        d.check_compatible(A=3)
    d.check_compatible(S=2, A=2, H=2)  # the matching model passes
    assert repr(d) == "EpisodeDataset(K=2, H=2, S=2, A=2)"


def test_empirical_model_visited_matches_a_direct_count():
    d = _episodes()
    want = np.zeros((2, 2, 2), dtype=bool)
    for k in range(d.K):
        for h in range(d.H):
            want[h, d.states[k, h], d.actions[k, h]] = True
    np.testing.assert_array_equal(empirical_model(d).visited, want)


def test_preference_dataset_size_and_repr():
    d = _episodes()
    p = PreferenceDataset(d, d, np.array([1, 0]))
    assert p.K == 2
    assert repr(p) == "PreferenceDataset(K=2, H=2, S=2, A=2)"


def test_transition_dataset_repr_and_single_model_sampling():
    t = TransitionDataset(np.array([0, 0, 0]), np.array([1, 0, 1]), np.zeros(3), np.array([0, 0, 0]), S=1, A=2)
    assert repr(t) == "TransitionDataset(N=3, S=1, A=2)"
    batch = FiniteMDP(np.ones((2, 1, 2, 1)), np.zeros((2, 1, 2)), gamma=0.9)
    with pytest.raises(ValueError, match=r"needs a single model; got batch_shape=\(2,\)"):
        sample_transition_dataset(batch, np.array([[0.5, 0.5]]), 3, rng=0)


# ---------------------------------------------------------------------------------- horizon
def test_evaluate_finite_horizon_stochastic_policy_shape():
    fh = FiniteHorizonMDP.stationary(_P2, np.zeros((2, 2)), H=3)
    with pytest.raises(ValueError, match=r"stochastic policy must have shape \(\.\.\., H, S, A\) = \(\.\.\., 3, 2, 2\); got \(2, 2\)"):
        evaluate_finite_horizon(fh, np.full((2, 2), 0.5))


# ---------------------------------------------------------------------------------- mixing
@pytest.mark.parametrize("t_max", [-1, 1.5, True])
def test_tv_distances_t_max(t_max):
    with pytest.raises(ValueError, match=rf"t_max must be a non-negative integer; got {t_max!r}"):
        tv_distances(np.eye(2), t_max)


def _double_well(k: int, eps):
    """Birth–death chain on 0..2k: from the centre k go either way w.p. 1/2; elsewhere step
    towards the centre w.p. eps and away (or stay at an end) w.p. 1 − eps. Crossing between
    the two wells takes ~eps^(-k) steps."""
    n = 2 * k + 1
    rows = []
    for i in range(n):
        row = [0 * eps] * n
        if i == k:
            row[i - 1] = row[i + 1] = 0 * eps + 0.5
        else:
            toward, away = (i + 1, i - 1) if i < k else (i - 1, i + 1)
            row[toward] = eps
            row[away if 0 <= away < n else i] = 1 - eps
        rows.append(row)
    return rows


def test_mixing_time_beyond_representable_time():
    """k = 4, eps = 1e-5: the slowest eigenvalue is ~1 − 1e-20, so d(2^62) is still ≈ 1/2
    (checked in 60-digit arithmetic with mpmath) and t_mix(1/4) does not fit the 2^62 range;
    the message names eps and the dtype, and no meaningless float64 value of d."""
    with pytest.raises(ValueError, match=r"mixing_time: d\(2\^62\) > eps = 0\.25 in float64 arithmetic; the chain does not mix"):
        mixing_time(np.array(_double_well(4, 1e-5)), 0.25)
    fast_and_slow = np.zeros((2, 9, 9))
    fast_and_slow[0] = 1.0 / 9
    fast_and_slow[1] = _double_well(4, 1e-5)
    with pytest.raises(ValueError, match=r"d\(2\^62\) > eps = 0\.25 \(batch index \(1,\)\) in float64"):
        mixing_time(fast_and_slow, 0.25)
    mp = pytest.importorskip("mpmath")
    with mp.workdps(60):
        P = mp.matrix(_double_well(4, mp.mpf("1e-5")))
        M = P
        for _ in range(62):
            M = M * M
        n = P.rows
        A = P.T - mp.eye(n)
        A[n - 1, :] = mp.ones(1, n)  # stationary law: μ(P − I) = 0, Σ μ = 1
        mu = mp.lu_solve(A, mp.matrix([0] * (n - 1) + [1]))
        d = max(sum(abs(M[s, j] - mu[j]) for j in range(n)) / 2 for s in range(n))
        assert d > 0.25


def test_spectral_gap_of_one_state_and_of_a_batch():
    """S = 1: the Perron root is the only eigenvalue and both gaps are 1 by convention."""
    sg = spectral_gap(np.array([[1.0]]))
    np.testing.assert_array_equal(sg.eigenvalues, [1.0])
    assert (sg.gap, sg.absolute_gap, sg.relaxation_time, sg.reversible) == (1.0, 1.0, 1.0, True)
    with pytest.raises(ValueError, match=r"spectral_gap takes one chain \(S, S\); got shape \(2, 2, 2\)"):
        spectral_gap(np.stack([np.eye(2), np.eye(2)]))


def test_hitting_times_argument_errors():
    P = np.array([[0.5, 0.5], [0.5, 0.5]])
    with pytest.raises(ValueError, match=r"hitting_times takes one chain \(S, S\); got shape \(2, 2, 2\)"):
        hitting_times(np.stack([P, P]), [0])
    with pytest.raises(ValueError, match=r"a boolean target must have shape \(2,\); got \(3,\)"):
        hitting_times(P, np.array([True, False, True]))
    with pytest.raises(ValueError, match=r"target set B is empty"):
        hitting_times(P, np.array([False, False]))


# ---------------------------------------------------------------------------------- model
def test_markov_game_reward_shape_mismatch():
    """R with the right number of axes and players but swapped action axes."""
    with pytest.raises(InvalidModelError, match=r"R must have shape \(2, 1, 2, 3\); got \(2, 1, 3, 2\)"):
        MarkovGame(np.ones((1, 2, 3, 1)), np.zeros((2, 1, 3, 2)), 0.5)


def test_model_reprs():
    P, R = np.ones((2, 1, 2)) / 2, np.zeros((2, 1))
    assert repr(FiniteMDP(P, R, 0.9)) == "FiniteMDP(S=2, A=1, gamma=0.9)"
    assert repr(FiniteMDP(np.stack([P] * 3), np.stack([R] * 3), None)) == "FiniteMDP(S=2, A=1, gamma=None, batch=(3,))"
    fh = FiniteHorizonMDP.stationary(P, R, H=4)
    assert repr(fh) == "FiniteHorizonMDP(H=4, S=2, A=1)"
    fhb = FiniteHorizonMDP.stationary(np.stack([P] * 2), np.stack([R] * 2), H=4)
    assert repr(fhb) == "FiniteHorizonMDP(H=4, S=2, A=1, batch=(2,))"


# ---------------------------------------------------------------------------------- structure
# s0: a0 -> 2, a1 -> 1;  s1: a0 -> 3, a1 -> {0, 1};  s2: a0 -> 1, a1 -> 3;  s3: a0 -> 0, a1 -> 2.
# The policy (1, 1, 1, 1) closes {0, 1} and {2, 3}, so the model is multichain; the lowest-index
# closing actions of the polynomial witness search always merge the two sets, so only the
# enumeration of the 2^4 deterministic policies finds a witness.
_P_HIDDEN = np.zeros((4, 2, 4))
for _s, _a, _t, _p in [(0, 0, 2, 1), (0, 1, 1, 1), (1, 0, 3, 1), (1, 1, 0, 0.5), (1, 1, 1, 0.5),
                       (2, 0, 1, 1), (2, 1, 3, 1), (3, 0, 0, 1), (3, 1, 2, 1)]:
    _P_HIDDEN[_s, _a, _t] = _p


def test_classify_mdp_enumeration_finds_a_multichain_policy():
    mdp = FiniteMDP(_P_HIDDEN, np.zeros((4, 2)), gamma=None)
    # the hand-checked witness: two closed classes
    by_hand = chain_structure(_P_HIDDEN[np.arange(4), [1, 1, 1, 1]])
    assert by_hand.recurrent_classes == ((0, 1), (2, 3))
    # below the 2^4 = 16 policies the enumeration is skipped: the polynomial search found nothing
    assert classify_mdp(mdp, max_policies=15).unichain is None
    st = classify_mdp(mdp)
    assert st.unichain is False and st.multichain is True and st.kind == "communicating"
    cs = chain_structure(_P_HIDDEN[np.arange(4), st.witness_policy])
    assert len(cs.recurrent_classes) >= 2 and cs.recurrent_classes == st.witness_classes
    assert st.describe() == (
        "communicating MDP; closed classes of the union graph: {0, 1, 2, 3}; the deterministic policy "
        f"{st.witness_policy.tolist()} has recurrent classes "
        + ", ".join("{" + ", ".join(map(str, c)) + "}" for c in st.witness_classes)
    )


def test_mdp_structure_describe_without_witness_and_chain_n_states():
    P = np.array([[[0.5, 0.5]], [[0.5, 0.5]]])
    st = classify_mdp(FiniteMDP(P, np.zeros((2, 1)), gamma=None))
    assert st.witness_policy is None
    assert st.describe() == "recurrent MDP; closed classes of the union graph: {0, 1}"
    assert chain_structure(np.array([[1.0, 0, 0], [0.5, 0.5, 0], [0, 0, 1]])).n_states == 3


def test_chain_structure_argument_errors():
    with pytest.raises(InvalidModelError, match=r"P must be a square \(S, S\) transition matrix; got shape \(2, 3\)"):
        chain_structure(np.ones((2, 3)) / 3)
    with pytest.raises(ValueError, match=r"atol must lie in \[0, 1\); got 1\.5"):
        chain_structure(np.eye(2), atol=1.5)


def test_classify_mdp_argument_errors():
    batch = FiniteMDP(np.ones((2, 1, 1, 1)), np.zeros((2, 1, 1)), gamma=None)
    with pytest.raises(ValueError, match=r"classify_mdp takes a single model; got batch shape \(2,\)"):
        classify_mdp(batch)
    with pytest.raises(ValueError, match=r"max_policies must be a positive integer; got 0"):
        classify_mdp(batch[0], max_policies=0)
    for atol, shown in ((-0.1, r"-0\.1"), (1.0, r"1\.0"), (True, "True"), ("0", "'0'")):
        with pytest.raises(ValueError, match=rf"atol must lie in \[0, 1\); got {shown}"):
            classify_mdp(batch[0], atol=atol)


# ---------------------------------------------------------------------------------- utility
def test_occupancy_table_shapes():
    with pytest.raises(ValueError, match=r"r must have shape \(S, A\); got \(3,\)"):
        linear_utility(np.zeros(3))
    with pytest.raises(ValueError, match=r"target must have shape \(S, A\) = \(1, 2\); got \(2, 1\)"):
        quadratic_utility(np.zeros((1, 2)), 1.0, target=np.zeros((2, 1)))


def test_kl_is_infinite_off_the_expert_support():
    """KL(d ‖ d_E) = +∞ when d puts mass where d_E has none (d is not ≪ d_E)."""
    dE = np.array([[1.0, 0.0]])
    d = np.array([[0.5, 0.5]])
    assert kl_divergence(dE).value(d) == np.inf
    assert neg_kl_utility(dE).value(d) == -np.inf
    assert kl_divergence(dE).value(np.array([[1.0, 0.0]])) == 0.0


def test_utility_type_errors():
    with pytest.raises(TypeError, match=r"F must be an OccupancyFunction; got dict"):
        shadow_reward({}, np.zeros((1, 2)))
    with pytest.raises(TypeError, match=r"solve_general_utility expects a FiniteMDP; got str"):
        solve_general_utility("mdp", linear_utility(np.zeros((1, 2))))


def test_solve_general_utility_constraint_shape():
    mdp = FiniteMDP(np.ones((1, 2, 1)), np.array([[0.0, 1.0]]), gamma=0.5)
    bad = (linear_utility(np.zeros((2, 2))), 1.0)
    with pytest.raises(ValueError, match=r"constraints\[0\] \('linear'\) has shape \(2, 2\); the model has \(S, A\) = \(1, 2\)"):
        solve_general_utility(mdp, linear_utility(mdp.R), [bad])


def test_solve_general_utility_unknown_solver_and_iteration_limit():
    """A solver cvxpy cannot run is listed with its error; runs that stop at a user limit are
    skipped (every rung of the default ladder) and the last status is attached."""
    mdp = FiniteMDP(np.ones((1, 2, 1)), np.array([[0.0, 1.0]]), gamma=0.5)
    with pytest.raises(SolverError, match=r"no optimum .*\(NO_SUCH_SOLVER: The solver NO_SUCH_SOLVER is not installed"):
        solve_general_utility(mdp, linear_utility(mdp.R), solver="NO_SUCH_SOLVER")
    with pytest.raises(SolverError, match=r"\(CLARABEL: user_limit; CLARABEL: user_limit; CLARABEL: user_limit; CLARABEL: user_limit\)") as info:
        solve_general_utility(mdp, linear_utility(mdp.R), solver_options={"max_iter": 1})
    assert info.value.status == "user_limit"


@pytest.mark.parametrize("switch_reward, b", [(-1.0, 0.5), (-10.0, 0.5), (-0.5, 0.3)])
def test_average_reward_split_optimum_is_rejected_like_solve_cmdp(switch_reward, b):
    """Two absorbing 'stay' actions (rewards 2 and 0), costly switches, and a budget on
    staying in 0: the unique optimum stays in 0 with frequency b and in 1 with 1 − b, which no
    stationary policy attains from every start. solve_cmdp (a vertex from the simplex) raises;
    solve_general_utility must too. The interior-point solution leaves ~1e-13 on the switches;
    the check read that noise as support and passed or raised depending on its sign (the
    (−1, 0.5) and (−0.5, 0.3) cases passed before the fix)."""
    P = np.array([[[1.0, 0.0], [0.0, 1.0]], [[0.0, 1.0], [1.0, 0.0]]])
    R = np.array([[2.0, switch_reward], [0.0, switch_reward]])
    C = np.array([[1.0, 0.0], [0.0, 0.0]])
    mdp = FiniteMDP(P, R, gamma=None)
    with pytest.raises(InvalidModelError, match=r"optimal stationary frequencies split over the policy's recurrent classes \{0\}, \{1\}"):
        solve_cmdp(ConstrainedMDP(mdp, C[None], np.array([b])))
    with pytest.raises(InvalidModelError, match=r"optimal frequencies split over the policy's recurrent classes \{0\}, \{1\}"):
        solve_general_utility(mdp, linear_utility(R), [(linear_utility(C), b)])


# ---------------------------------------------------------------------------------- zoo
def test_zoo_argument_types():
    with pytest.raises(ValueError, match=r"slip must be a number in \[0, 1\]; got '0\.1'"):
        gridworld(3, slip="0.1")
    with pytest.raises(ValueError, match=r"batch_shape must be a tuple of non-negative ints; got 3"):
        garnet(3, 2, 2, gamma=0.9, rng=0, batch_shape=3)


def test_highs_linprog_retry_ladder(monkeypatch):
    """``highs_linprog`` tries the simplex, then interior point, at ``small_matrix_value`` 1e-12, then both
    again at HiGHS's default 1e-9, and stops at the first answer that is not status 4; the feasibility
    tolerances stay 1e-10 throughout. A status other than 4 (e.g. infeasible) is returned at once."""
    import scipy.optimize

    from rltheory._numerics import highs_linprog

    seen = []

    def fake(c, *, method, options, **kwargs):
        seen.append((method, options["small_matrix_value"], options["primal_feasibility_tolerance"]))
        return scipy.optimize.OptimizeResult(status=4 if len(seen) < 4 else 0, message="")

    monkeypatch.setattr(scipy.optimize, "linprog", fake)
    assert highs_linprog(np.zeros(1)).status == 0
    assert seen == [("highs-ds", 1e-12, 1e-10), ("highs-ipm", 1e-12, 1e-10), ("highs-ds", 1e-9, 1e-10),
                    ("highs-ipm", 1e-9, 1e-10)]
    seen.clear()
    monkeypatch.setattr(scipy.optimize, "linprog",
                        lambda c, **kw: seen.append(kw["method"]) or scipy.optimize.OptimizeResult(status=2, message=""))
    assert highs_linprog(np.zeros(1), method="highs").status == 2
    assert seen == ["highs"]
