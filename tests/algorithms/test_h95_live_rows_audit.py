"""Adversarial checks of batched NPG's live-row layout and chunk merge (rltheory.algorithms._live_rows).

Each test pins a defect found by an audit: the run must equal the full-layout run
(``_npg_chunk._ROWS = False``) or the single-chunk run, dead rows included (compared in log space),
and must not fail where the full layout runs.
"""

from __future__ import annotations

import numpy as np
import pytest

from rltheory.algorithms import _live_rows as live_rows
from rltheory.algorithms import _npg_chunk as npg_module
from rltheory.algorithms import natural_policy_gradient
from rltheory.algorithms import npg as driver
from rltheory.mdp import FiniteMDP, policy_iteration
from rltheory.mdp.zoo import random_mdp


def _run(mdp, eta, T, monkeypatch, *, rows=True, chunk=None, **kw):
    monkeypatch.setattr(npg_module, "_ROWS", rows)
    if chunk is not None:
        monkeypatch.setattr(driver, "_CHUNK_BYTES", chunk)
    out = natural_policy_gradient(mdp, eta=eta, iterations=T, **kw)
    monkeypatch.setattr(driver, "_CHUNK_BYTES", 8 * 2**20)
    return out


def _assert_same_log_policy(a, b, rtol=1e-9):
    """Equal supports and log-probabilities within ``rtol`` (relative): the dead rows count too."""
    pa, pb = np.asarray(a), np.asarray(b)
    assert np.array_equal(pa > 0, pb > 0)
    both = pa > 0
    np.testing.assert_allclose(np.log(pa[both]), np.log(pb[both]), rtol=rtol, atol=1e-12)
    return float(np.min(np.log(pb[both])))


def _merges(monkeypatch):
    out = []
    merge = driver.merge_chunks

    def spy(runs):
        m = merge(runs)
        out.append(m is not None)
        return m

    monkeypatch.setattr(driver, "merge_chunks", spy)
    return out


def test_dead_rows_follow_the_live_rows_shift_at_a_rebuild(monkeypatch):
    # Seed 17 (S = 5, A = 6, γ = 0.8, η = 20): at the rebuild of iterate 12 a live row stands
    # 23.75 above its state's old reference row, so the new layout shifts the live logits by it.
    # The dead rows kept their unshifted logits: their log π came out 23.75 too high
    # (e.g. −170 + 23.75), 0.14 relative, and at T = 20 a row the full layout rounds to 0 was
    # positive. Now they take the same shift and agree with the full layout to round-off.
    mdp = random_mdp(5, 6, gamma=0.8, rng=17, batch_shape=(8,))
    for T in (12, 20):
        full = _run(mdp, 20.0, T, monkeypatch, rows=False)
        rows = _run(mdp, 20.0, T, monkeypatch)
        assert _assert_same_log_policy(rows.policy, full.policy) < -100  # dead rows were compared
        np.testing.assert_allclose(rows.policy, full.policy, rtol=0, atol=1e-15)


@pytest.mark.parametrize(
    ("dtype", "T", "eta"),
    [(np.float32, 100, 1.0), (np.float64, 8, 20.0), (np.float64, 8, 5.0)],
)
def test_chunk_merge_of_float32_models_and_of_short_runs(monkeypatch, dtype, T, eta):
    # Three chunks of 8 instances (S = 20, A = 4) that all moved to live rows merge at
    # min(_MERGE_AT, T). The merge concatenated every evaluator's W and scale, which are None
    # for float32 models (no mixed precision) and before the first warm call (T ≤ COLD = 10):
    # "ValueError: zero-dimensional arrays cannot be concatenated" — a float32 batch of a few
    # hundred S = 50 instances crashed. The merged run must equal the single-chunk run, and at
    # T = 8 the merged layout's rebuild shifted the dead rows (log π off by up to 2.2).
    base = random_mdp(20, 4, gamma=0.9, rng=3, batch_shape=(24,))
    mdp = FiniteMDP(base.P.astype(dtype), base.R.astype(dtype), gamma=0.9)
    whole = _run(mdp, eta, T, monkeypatch)
    merges = _merges(monkeypatch)
    chunk = 20 * 4 * 20 * np.dtype(dtype).itemsize * 8  # 8 instances per chunk
    chunked = _run(mdp, eta, T, monkeypatch, chunk=chunk)
    assert merges == [True]
    eps = float(np.finfo(dtype).eps)
    tol = 1e-12 if dtype == np.float64 else 64 * eps
    np.testing.assert_allclose(chunked.policy, whole.policy, rtol=0, atol=tol)
    _assert_same_log_policy(
        chunked.policy, whole.policy, rtol=1e-9 if dtype == np.float64 else 1e-4
    )
    # float32: both traces are within their certificates of the exact values of (nearly) one policy
    cert = np.maximum(chunked.trace["evaluation_bound"], whole.trace["evaluation_bound"])
    for name in ("suboptimality", "suboptimality_inf"):
        assert chunked.trace[name].shape == (T + 1, 24)
        err = np.abs(chunked.trace[name] - whole.trace[name])
        assert np.all(err <= (1e-12 if dtype == np.float64 else 2 * cert))
    assert np.all(np.diff(chunked.trace.wall_time) >= 0)


def test_rewards_near_the_largest_float_keep_finite_bounds_and_dead_logits(monkeypatch):
    # Rewards ~1e307 (γ = 0.9, η = 1e-307: steps c·A of order 1). The dead rows' share
    # 2(A − 1)e^U(‖r‖ + 2.01‖V‖) summed the norms first: ‖r‖ + 2.01‖V‖ overflowed, giving
    # evaluation_bound = inf (4633 entries at T = 800) and NaN (0·inf where an instance had no
    # dead rows: 414 at T = 1500). The closed-form dead logits formed (t − t_ref)·A_ref before
    # multiplying by c: it overflowed to −inf where the full layout keeps a positive probability.
    # Now both match the full layout: the same supports, log π to 1e-9, and bounds under the
    # a-priori ceiling of the full layout plus the dead rows' share.
    from .test_policy_gradient import _eval_level

    base = random_mdp(8, 4, gamma=0.9, rng=4, batch_shape=(9,))
    mdp = FiniteMDP(base.P, np.asarray(base.R) * 1e307, gamma=0.9)
    full = _run(mdp, 1e-307, 1500, monkeypatch, rows=False)
    rows = _run(mdp, 1e-307, 1500, monkeypatch)
    _assert_same_log_policy(rows.policy, full.policy)
    bound = rows.trace["evaluation_bound"]
    assert np.all(np.isfinite(bound))
    # the ceiling is homogeneous in (‖V‖, ‖r‖): formed at 1e-300 times the norms, then scaled back
    r = np.max(np.abs(np.asarray(mdp.R)), axis=(1, 2)) * 1e-300
    v = r / (1 - 0.9)
    dead = 2 * (mdp.A - 1) * np.exp(live_rows.REVIVE) * (r + 2.01 * v) / (1 - 0.9) * (1 + 1e-12)
    assert np.all(bound <= (_eval_level(mdp.S, mdp.A, 0.9, v, r) + dead) * 1e300)
    for name in ("suboptimality", "suboptimality_inf"):
        err = np.abs(rows.trace[name] - full.trace[name])
        assert np.all(err <= bound + full.trace["evaluation_bound"])


@pytest.mark.parametrize("rows", [True, False])
def test_suboptimality_bound_stays_finite_for_values_near_the_largest_float(monkeypatch, rows):
    # Rewards ~5e307, γ = 0.5: ‖V*‖∞ = 9.4e307. The driver's fixed part c_ρ(‖V*‖∞ + ‖R‖∞/(1 − γ))
    # summed the norms first (inf), so every suboptimality_bound was inf on either layout; the
    # live rows' evaluation_bound was inf as well (the dead rows' share, above). Now both are
    # finite and the bound holds for the final policy in exact rational arithmetic.
    from fractions import Fraction

    from rltheory.testing import exact_policy_values

    base = random_mdp(6, 3, gamma=0.5, rng=1, batch_shape=(9,))
    mdp = FiniteMDP(base.P, np.asarray(base.R) * 5e307, gamma=0.5)
    res = _run(mdp, 1e-307, 60, monkeypatch, rows=rows)
    assert np.all(np.isfinite(res.trace["evaluation_bound"]))
    assert np.all(np.isfinite(res.trace["suboptimality_bound"]))
    pi_star = np.asarray(policy_iteration(mdp).policy)
    rho = np.asarray(mdp.initial_distribution())
    P, R = np.asarray(mdp.P), np.asarray(mdp.R)
    for b in range(3):
        det = np.eye(mdp.A)[pi_star[b]]
        V_star = exact_policy_values(P[b], R[b], 0.5, det)
        V = exact_policy_values(P[b], R[b], 0.5, res.policy[b])
        gap = sum(Fraction(float(w)) * (x - y) for w, x, y in zip(rho[b], V_star, V, strict=True))
        assert gap <= Fraction(float(res.trace["suboptimality_bound"][-1, b]))


def test_every_traced_evaluation_bound_covers_its_iterate_with_revivals(monkeypatch):
    # The dead rows' bound U (Jensen's rise per step, rebuilds before a revival) must hold at
    # every iterate, not only the last. Thresholds raised to DEAD = 10, REVIVE = −6 make the dead
    # rows' share large (bounds up to ~1e-2 instead of ~1e-15), so a bound U that fell behind the
    # true log π would show against exact rational values of each iterate's policy (read by a spy
    # after every evaluation). On the reviving chain 'stay' (action 0 of state 0) falls to 1e-43 at
    # iterate 1 and is back at 0.73 by iterate 300 (bounds up to 0.02 on the way).
    from fractions import Fraction

    from rltheory.testing import exact_policy_values

    from .test_s19_live_rows import _reviving_chain

    monkeypatch.setattr(live_rows, "DEAD", 10.0)
    monkeypatch.setattr(live_rows, "REVIVE", -6.0)
    seen = {}
    evaluate = npg_module.NPGChunk._evaluate

    def spy(self):
        evaluate(self)
        seen[self.t] = np.swapaxes(self.policy(), 1, 2)

    monkeypatch.setattr(npg_module.NPGChunk, "_evaluate", spy)
    mdp = _reviving_chain()
    P, R = np.asarray(mdp.P), np.asarray(mdp.R)
    det = np.eye(mdp.A)[np.asarray(policy_iteration(mdp).policy)[0]]
    V_exact = exact_policy_values(P[0], R[0], 0.9, det)  # (the copies are identical)
    V_star = np.array([float(x) for x in V_exact])
    res = natural_policy_gradient(
        mdp, eta=3.0, iterations=300, V_star=np.broadcast_to(V_star, (8, mdp.S))
    )
    assert sorted(seen) == list(range(301))
    bound, sub = res.trace["evaluation_bound"][:, 0], res.trace["suboptimality_inf"][:, 0]
    assert np.max(bound) > 1e-6  # (the dead rows' share is far above round-off: not vacuous)
    stay = [float(seen[t][0, 0, 0]) for t in range(301)]
    assert min(stay) < np.exp(-50) and stay[-1] > 0.5  # 'stay' was dead and came back
    ulp = Fraction(4 * float(np.spacing(np.max(np.abs(V_star)))))
    for t in range(301):
        V = exact_policy_values(P[0], R[0], 0.9, seen[t][0])
        gap = max(Fraction(float(x)) - y for x, y in zip(V_star, V, strict=True))
        assert abs(gap - Fraction(float(sub[t]))) <= Fraction(float(bound[t])) + ulp, t


def test_batched_npg_runs_where_float32_rounds_gamma_to_one():
    # γ = 1 − 1e-8 rounds to 1.0 in float32, so the float32 copy of M = I − γP_π of a deterministic
    # 2-cycle (rows e_0 − e_1, e_1 − e_0) is singular while M is not (det 1 − γ² ≈ 2e-8). The
    # batch's mixed-precision preconditioner W = inv(float32(M)) raised LinAlgError('Singular
    # matrix') at the first warm call (iterate 11); one instance alone, solved by LU, ran. Now W
    # falls back to float64: every instance agrees with its single-instance run within the two
    # certificates, and the final bound covers the exact rational values.
    from fractions import Fraction

    from rltheory.testing import exact_policy_values

    g, B = 1 - 1e-8, 8
    P = np.zeros((B, 2, 2, 2))
    P[:, 0, :, 1] = P[:, 1, :, 0] = 1.0
    R = np.random.default_rng(0).random((B, 2, 2))
    V_star = np.stack(
        [np.asarray(policy_iteration(FiniteMDP(P[b], R[b], gamma=g)).V) for b in range(B)]
    )
    batch = natural_policy_gradient(
        FiniteMDP(P, R, gamma=g), eta=3e-8, iterations=30, V_star=V_star
    )
    for b in range(B):
        one = natural_policy_gradient(
            FiniteMDP(P[b], R[b], gamma=g), eta=3e-8, iterations=30, V_star=V_star[b]
        )
        err = np.abs(batch.trace["suboptimality"][:, b] - one.trace["suboptimality"])
        assert np.all(err <= batch.trace["evaluation_bound"][:, b] + one.trace["evaluation_bound"])
        V = exact_policy_values(P[b], R[b], g, batch.policy[b])
        gap = max(Fraction(float(x)) - y for x, y in zip(V_star[b], V, strict=True))
        sub, bound = batch.trace["suboptimality_inf"][-1, b], batch.trace["evaluation_bound"][-1, b]
        ulp = Fraction(4 * float(np.spacing(np.max(np.abs(V_star[b])))))  # (V* ~ 1e8 as floats)
        assert abs(gap - Fraction(float(sub))) <= Fraction(float(bound)) + ulp
