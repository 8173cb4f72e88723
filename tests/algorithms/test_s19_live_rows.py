"""The live-row layout of batched NPG (rltheory.algorithms._live_rows).

Rows ``(s, a)`` with ``log π(a|s) < −50`` leave the arrays; their logits follow in closed form and
a bound on their probability enters the evaluation certificate. These tests check the layout's
segment operations against dense ones, and whole runs against the full layout (``npg._ROWS``
switched off), including a run where a dead row comes back and ends with probability 0.27.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rltheory.algorithms import _live_rows as live_rows
from rltheory.algorithms import _npg_chunk as npg_module
from rltheory.algorithms import natural_policy_gradient
from rltheory.algorithms._warm_eval import WarmEvaluator, action_major
from rltheory.mdp import FiniteMDP, evaluate_policy, policy_iteration
from rltheory.mdp.zoo import random_mdp
from rltheory.testing import discounts, finite_mdps

from .test_policy_gradient import _eval_level


def _run(mdp, eta, T, rows, monkeypatch):
    monkeypatch.setattr(npg_module, "_ROWS", rows)
    return natural_policy_gradient(mdp, eta=eta, iterations=T)


@pytest.fixture
def builds(monkeypatch):
    """Record every layout build: (iteration, rows live before (or None), rows live after)."""
    out = []
    init = live_rows.LiveRows.__init__

    def live_set(lay):
        m = np.zeros((lay.B, lay.A * lay.S), dtype=bool)
        b = np.nonzero(~lay.pad)[0]
        m[b, lay.rows[~lay.pad]] = True
        return m

    def spy(self, ev, theta, step, t):
        before = live_set(ev.lay) if isinstance(ev, live_rows.RowEvaluator) else None
        init(self, ev, theta, step, t)
        out.append((t, before, live_set(self.lay)))

    monkeypatch.setattr(live_rows.LiveRows, "__init__", spy)
    return out


def test_row_layout_segment_operations_match_dense_ones():
    rng = np.random.default_rng(0)
    B, A, S = 5, 4, 7
    theta = rng.normal(size=(B, A, S)) * 30
    live = rng.random((B, A, S)) < 0.4
    live[np.arange(B)[:, None], np.argmax(theta, axis=1), np.arange(S)[None, :]] = (
        True  # every state's top row
    )
    lay = live_rows.RowLayout(live, theta)
    x_full = rng.normal(size=(B, A, S))
    x = lay.gather(x_full)
    x[lay.pad] = 0.0
    np.testing.assert_allclose(
        lay.seg_sum(x), np.sum(np.where(live, x_full, 0.0), axis=1), atol=1e-14
    )
    top = lay.seg_reduce(np.maximum, np.where(lay.pad, -np.inf, x))
    np.testing.assert_array_equal(top, np.max(np.where(live, x_full, -np.inf), axis=1))
    y = rng.normal(size=(B, S))
    e = lay.expand(y)
    np.testing.assert_array_equal(e[~lay.pad], y[np.nonzero(~lay.pad)[0], lay.state[~lay.pad]])
    back = np.zeros_like(x_full)
    lay.scatter(back, x)
    np.testing.assert_array_equal(back, np.where(live, x_full, 0.0))
    # the reference row of each state is its largest logit
    th = lay.gather(theta)
    np.testing.assert_array_equal(
        np.reshape(th, (-1,))[lay.ref_flat].reshape(B, S), np.max(theta, axis=1)
    )
    # a subset of instances: the same sums
    idx = np.array([3, 1])
    np.testing.assert_allclose(lay.seg_sum(x[idx], idx), lay.seg_sum(x)[idx], atol=1e-15)


def test_row_softmax_is_the_softmax_over_live_rows():
    rng = np.random.default_rng(1)
    B, A, S = 3, 5, 6
    theta = rng.normal(size=(B, A, S)) * 5
    live = np.ones((B, A, S), dtype=bool)
    lay = live_rows.RowLayout(live, theta)
    th = lay.gather(theta)
    scores = rng.normal(size=th.shape) * 40  # large enough that some row overtakes its reference
    pi, th2, shift = live_rows.row_softmax(lay, th.copy(), scores)
    z = theta + np.reshape(np.zeros((B, A * S)), (B, A, S))
    full_scores = np.zeros((B, A * S))
    full_scores[np.nonzero(~lay.pad)[0], lay.rows[~lay.pad]] = scores[~lay.pad]
    z = theta + np.reshape(full_scores, (B, A, S))
    ref = np.exp(z - z.max(axis=1, keepdims=True))
    ref /= ref.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(lay.gather(ref), pi, rtol=1e-12, atol=1e-300)
    # θ' = θ + scores − shift per state
    np.testing.assert_allclose(th2, th + scores - lay.expand(shift), rtol=1e-14, atol=1e-12)


def test_evaluator_stores_K_equal_to_I_minus_gamma_P_bitwise():
    rng = np.random.default_rng(2)
    for dtype in (np.float64, np.float32):
        P = rng.dirichlet(np.ones(7), size=(3, 7, 4)).astype(dtype)
        R = rng.random((3, 7, 4)).astype(dtype)
        ev = WarmEvaluator(P, R, 0.93, np)
        K = np.eye(7, dtype=dtype)[:, None, :] - 0.93 * P
        assert ev.K4.dtype == dtype and ev.K4.flags.c_contiguous
        np.testing.assert_array_equal(ev.K4, action_major(np, K))


def test_live_rows_run_equals_the_full_layout_run(monkeypatch, builds):
    mdp = random_mdp(20, 4, gamma=0.9, rng=3, batch_shape=(16,))
    full = _run(mdp, 1.0, 300, False, monkeypatch)
    assert not builds
    rows = _run(mdp, 1.0, 300, True, monkeypatch)
    assert len(builds) >= 3  # the switch and at least two rebuilds as rows die
    assert builds[-1][2].sum() < 0.5 * builds[-1][2].size  # most rows left the arrays
    np.testing.assert_allclose(rows.policy, full.policy, rtol=0, atol=1e-12)
    for name in ("suboptimality", "suboptimality_inf"):
        np.testing.assert_allclose(rows.trace[name], full.trace[name], rtol=0, atol=1e-12)
    # dead rows' logits came back in closed form: their log-probabilities agree to relative 1e-9
    both = (rows.policy > 1e-300) & (full.policy > 1e-300)
    assert np.min(np.log(full.policy[both])) < -200  # (rows far below the threshold were compared)
    np.testing.assert_allclose(np.log(rows.policy[both]), np.log(full.policy[both]), rtol=1e-9)
    assert np.array_equal(rows.policy > 1e-300, full.policy > 1e-300)
    # the certificate holds for the returned policy: exact values against the trace's last gap
    V = np.asarray(evaluate_policy(mdp, rows.policy))
    V_star = np.asarray(policy_iteration(mdp).V)
    gap = np.max(V_star - V, axis=-1)
    assert np.all(
        np.abs(gap - rows.trace["suboptimality_inf"][-1]) <= rows.trace["evaluation_bound"][-1]
    )
    # the dead rows' allowance stays far below the stopping level: bounds as tight as the full layout's
    assert np.max(rows.trace["evaluation_bound"]) <= 1.5 * np.max(full.trace["evaluation_bound"])


def _reviving_chain(copies: int = 8) -> FiniteMDP:
    """State 0 chooses between a sure 9.1 ('stay', action 0) and 'go' (action 1) to state 1, whose
    best action is only slightly better than the rest. With η = 3, 'stay' falls below e^-50 within
    five iterations (8e-39 at T = 5), rises again as state 1's values settle and ends with
    probability 0.73 at T = 300 ('go' 0.27)."""
    S, A, delta = 4, 5, 0.01
    P, R = np.zeros((S, A, S)), np.zeros((S, A))
    P[0, 0, 2] = P[0, 1, 1] = 1.0
    P[0, 2:, 3] = 1.0
    P[1, :, 1] = P[2, :, 2] = P[3, :, 3] = 1.0
    R[0, 0] = 9.1 - 0.9 * 10.0
    R[1, :], R[1, 0] = 1.0 - 3 * delta, 1.0 + delta
    R[2, :], R[2, 0] = 0.5, 1.0
    R[3, 0] = 0.1
    return FiniteMDP(
        np.broadcast_to(P, (copies, S, A, S)).copy(),
        np.broadcast_to(R, (copies, S, A)).copy(),
        gamma=0.9,
    )


def test_a_dead_row_that_comes_back_is_rebuilt_and_matches_the_full_layout(monkeypatch, builds):
    mdp = _reviving_chain()
    full = _run(mdp, 3.0, 300, False, monkeypatch)
    rows = _run(mdp, 3.0, 300, True, monkeypatch)
    revived = [t for t, before, after in builds if before is not None and np.any(after & ~before)]
    assert revived, "no dead row came back"
    np.testing.assert_allclose(rows.policy, full.policy, rtol=0, atol=1e-12)
    np.testing.assert_allclose(
        rows.trace["suboptimality"], full.trace["suboptimality"], rtol=0, atol=1e-12
    )
    assert 0.65 < full.policy[0, 0, 0] < 0.8  # 'stay' came back from below e^-50


def test_certificate_includes_the_dead_rows_share(monkeypatch):
    # Rows declared dead at e^-20 (DEAD = 20): at iterate 13 their share of the values is ~1e-11,
    # far above round-off; the bound, which adds 2(A − 1) e^U (‖r‖ + 2‖V‖) to the residual,
    # must cover the true error of the traced gap against an exact evaluation.
    monkeypatch.setattr(live_rows, "DEAD", 20.0)
    monkeypatch.setattr(live_rows, "REVIVE", -15.0)
    mdp = random_mdp(12, 3, gamma=0.9, rng=5, batch_shape=(10,))
    rows = _run(mdp, 2.0, 13, True, monkeypatch)
    V = np.asarray(evaluate_policy(mdp, rows.policy))
    gap = np.max(np.asarray(policy_iteration(mdp).V) - V, axis=-1)
    err = np.abs(gap - rows.trace["suboptimality_inf"][-1])
    assert np.all(err <= rows.trace["evaluation_bound"][-1])
    assert np.max(err) > 1e-12  # (the dead rows did change the values: the check is not vacuous)


def test_chunks_merged_once_on_live_rows_equal_one_chunk(monkeypatch):
    # Three cache-sized chunks run to iterate 40 on their own, then merge into one (per-instance
    # arrays, trace rows, stored inverses, a fresh live-row layout): the run must equal the
    # single-chunk run, settled instances included.
    from rltheory.algorithms import npg as driver

    merges = []
    merge = driver.merge_chunks

    def spy(runs):
        out = merge(runs)
        merges.append((len(runs), out is not None))
        return out

    mdp = random_mdp(20, 4, gamma=0.9, rng=3, batch_shape=(24,))
    whole = natural_policy_gradient(mdp, eta=1.0, iterations=300)
    monkeypatch.setattr(driver, "merge_chunks", spy)
    monkeypatch.setattr(driver, "_CHUNK_BYTES", 20 * 4 * 20 * 8 * 8)  # chunks of 8 instances
    monkeypatch.setattr(driver, "_MERGE_AT", 40)
    chunked = natural_policy_gradient(mdp, eta=1.0, iterations=300)
    assert merges == [(3, True)]
    np.testing.assert_allclose(chunked.policy, whole.policy, rtol=0, atol=1e-12)
    for name in ("suboptimality", "suboptimality_inf", "evaluation_bound", "suboptimality_bound"):
        assert chunked.trace[name].shape == (301, 24)
        np.testing.assert_allclose(chunked.trace[name], whole.trace[name], rtol=1e-9, atol=1e-12)
    assert chunked.trace.wall_time.shape == (301,) and np.all(np.diff(chunked.trace.wall_time) >= 0)


def test_chunks_stopping_apart_are_not_merged(monkeypatch):
    # With tol, a chunk whose instances are done stops early; chunks at different iterates stay apart.
    from rltheory.algorithms import npg as driver

    merges = []
    merge = driver.merge_chunks
    monkeypatch.setattr(driver, "merge_chunks", lambda runs: merges.append(merge(runs)))
    monkeypatch.setattr(driver, "_CHUNK_BYTES", 20 * 4 * 20 * 8 * 8)
    monkeypatch.setattr(driver, "_MERGE_AT", 200)
    mdp = random_mdp(20, 4, gamma=0.9, rng=3, batch_shape=(24,))
    whole = natural_policy_gradient(mdp, eta=5.0, iterations=400, tol=1e-6)
    assert merges == [None]
    monkeypatch.setattr(driver, "_CHUNK_BYTES", 8 * 2**20)
    one = natural_policy_gradient(mdp, eta=5.0, iterations=400, tol=1e-6)
    assert whole.iterations == one.iterations and whole.converged and one.converged
    np.testing.assert_allclose(whole.policy, one.policy, rtol=0, atol=1e-12)


@settings(max_examples=30, deadline=None)
@given(
    finite_mdps(max_states=6, max_actions=4, gamma=discounts(0.0, 0.99), batch_shape=(9,)),
    st.floats(0.5, 20.0),
)
def test_live_rows_equal_the_full_layout_on_random_batches(mdp, eta):
    # Hypothesis-drawn batches (reward ties, γ up to 0.99, large steps): the live-row run and the
    # full-layout run are both certified; they differ by round-off and by the dead rows' share,
    # which the NPG step amplifies by at most c = η/(1−γ) per iteration in the logits.
    from _pytest.monkeypatch import MonkeyPatch

    T, g = 80, mdp.gamma
    with MonkeyPatch.context() as mp:
        full = _run(mdp, eta, T, False, mp)
        rows = _run(mdp, eta, T, True, mp)
    bound = max(np.max(full.trace["evaluation_bound"]), np.max(rows.trace["evaluation_bound"]))
    # the a-priori ceiling: the full layout's (test_policy_gradient._eval_level) plus the dead
    # rows' share 2(A − 1) e^U (‖r‖ + 2.01‖V‖) with U ≤ REVIVE, over 1 − γ
    v, r = 1 / (1 - g), 1.0
    dead = 2 * (mdp.A - 1) * np.exp(live_rows.REVIVE) * (r + 2.01 * v) / (1 - g) * (1 + 1e-12)
    assert np.max(rows.trace["evaluation_bound"]) <= _eval_level(mdp.S, mdp.A, g, v, r) + dead
    eps = np.finfo(float).eps
    lu_err = 64 * eps * (v + 1) / (1 - g)
    drift = 2 * (eta / (1 - g)) * T * (bound + lu_err)
    np.testing.assert_allclose(rows.policy, full.policy, rtol=0, atol=4 * drift + 1e-12)
    np.testing.assert_allclose(
        rows.trace["suboptimality"],
        full.trace["suboptimality"],
        rtol=0,
        atol=4 * drift / (1 - g) + 2 * lu_err,
    )
