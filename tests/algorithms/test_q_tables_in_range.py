"""The Q-learning family refuses tables that are not finite: beyond the float range, or diverged.

Regressions:

* with rewards 1e308 at γ = 0.9 (``Q* ≈ 1e309``) and a finite reference ``Q_star`` given (which skips
  policy iteration's own range check), every learner returned an ``inf`` table with numpy's "overflow
  encountered in divide" warning only; now the located ``ValueError`` of the exact solvers
  (``rltheory.mdp.bellman._check_in_range``, see tests/mdp/test_solver_range.py);
* VA-learning with the constant step 1 at γ = 0.99 diverged (its Notes) and returned a NaN table and
  trace with numpy's overflow warnings only; now a ``ValueError`` naming the step, run and entry.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from rltheory.algorithms import (
    constant_step,
    double_q_learning,
    q_learning,
    q_learning_replay,
    rescaled_linear_step,
    synchronous_q_learning,
    va_learning,
)
from rltheory.mdp import FiniteMDP, policy_iteration
from rltheory.mdp.zoo import random_mdp

P2 = np.full((2, 2, 2), 0.5)
R2 = np.array([[1e308, 0.0], [0.0, 1e308]])


def _learners(mdp, Q_star, step):
    kw = dict(step_size=step, rng=0, Q_star=Q_star)
    return {
        "synchronous_q_learning": lambda: synchronous_q_learning(mdp, iterations=300, **kw),
        "q_learning": lambda: q_learning(mdp, steps=1500, **kw),
        "q_learning_replay": lambda: q_learning_replay(
            mdp, steps=1500, replay_every=1, replay_updates=1, buffer_size=10, **kw
        ),
        "double_q_learning": lambda: double_q_learning(mdp, steps=6000, **kw),
        "va_learning": lambda: va_learning(
            mdp, steps=1500, **{**kw, "step_size": constant_step(0.3)}
        ),
    }


NAMES = list(_learners(None, None, None))


@pytest.mark.parametrize("name", NAMES)
def test_a_table_beyond_the_float_range_is_refused(name):
    # α = 1 (0.3 for VA): the tables approach Q* ≈ 1e309 (run on inputs scaled by a power of two, finite
    # there); the given Q_star = 0 is finite, so only the returned table shows the overflow
    run = _learners(FiniteMDP(P2, R2, 0.9), np.zeros((2, 2)), constant_step(1.0))[name]
    entry = r"\(s=0, a=0\)" if name == "synchronous_q_learning" else r"\(run=0, s=0, a=0\)"
    msg = (
        rf"^{name}: the table Q left the float64 range: max\|R\| = 1e\+308 at gamma = 0.9 .*"
        rf"first non-finite entry {entry} = inf\. Values scale with R"
    )
    with pytest.raises(ValueError, match=msg), warnings.catch_warnings():
        warnings.simplefilter("error")  # the located error, not numpy's overflow warning first
        run()


@pytest.mark.parametrize("name", NAMES)
def test_tables_inside_the_range_are_returned(name):
    # R/64: Q* = 1.5625e307-ish (see test_solver_range.py), in range; the learners return finite tables
    # within the sampling error of Q* (α = 1 on this model: Q(s, a) = r + γ max Q(s', ·) for a sampled
    # s', and both successors have the same value V* = 1.5625e307; double Q updates each table about
    # every other step, hence its longer run)
    mdp = FiniteMDP(P2, R2 / 64, 0.9)
    Qs = policy_iteration(mdp).Q
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = _learners(mdp, Qs, constant_step(1.0))[name]()
    assert np.all(np.isfinite(res.Q))
    if name != "va_learning":  # value iteration with exact targets once every pair was visited
        np.testing.assert_allclose(
            res.Q.reshape(-1, 2, 2), np.broadcast_to(Qs, (res.Q.size // 4, 2, 2)), rtol=1e-12
        )


@pytest.mark.parametrize("record_every", [1, 5000])
def test_diverging_va_learning_names_the_step_run_and_entry(record_every):
    # the constant step 1 overshoots (VA-learning's Notes): Q(s, a) ← 2y − V_old(s) each visit; the
    # table overflows after about 3400 steps here (found at record 1 or at the end with record_every=5000)
    mdp = random_mdp(3, 2, gamma=0.99, rng=0)
    msg = (
        r"^va_learning: the iterates diverged: the table is not finite at step t = \d+ \(first non-finite "
        r"entry run=0, s=\d, a=\d = (inf|-inf|nan)\); VA-learning's update is unstable at "
        r"constant steps above a threshold that shrinks with 1 - gamma"
    )  # (the message used to say "needs steps below about 1/2", untrue: test_h65_va_stability.py)
    with pytest.raises(ValueError, match=msg), warnings.catch_warnings():
        warnings.simplefilter("error")
        va_learning(
            mdp, steps=200_000, step_size=constant_step(1.0), rng=0, record_every=record_every
        )


def test_a_converging_va_run_is_unchanged():
    # the decaying step of the q-replay study converges: same tables as the formula's bits before the check
    mdp = random_mdp(5, 3, gamma=0.9, rng=1)
    res = va_learning(
        mdp, steps=3000, step_size=rescaled_linear_step(0.9, alpha0=0.1), rng=2, n_runs=2
    )
    assert np.all(np.isfinite(res.Q)) and res.trace["error"][-1].max() < res.trace["error"][0].max()
    np.testing.assert_array_equal(res.Q, res.extra["V"][..., None] + res.extra["A"])
