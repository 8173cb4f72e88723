"""The q-replay sync-bound claim checks every run, so each run's bound is taken at δ/m (union bound).

Regression: the claim checked all ``m = sync_runs`` runs against the bound at ``δ = 0.05`` each, a joint
statement that holds only with probability ``≥ 1 − mδ`` (0.75 for the quick preset's 5 runs, vacuous for
the full preset's 20). Now each run's bound is :func:`rltheory.bounds.q_learning_bound` at ``δ/m``, so the
checked joint statement holds with probability ``≥ 1 − δ``.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from rltheory import experiments
from rltheory.bounds import q_learning_bound
from rltheory.mdp import policy_iteration
from rltheory.mdp.zoo import random_mdp


def test_sync_bound_is_taken_at_delta_over_the_number_of_runs():
    exp = experiments.get("q-replay")
    config = dataclasses.replace(
        exp.config_cls.quick(),
        steps=200,
        runs=2,
        replay=((1, 1),),
        replay_claim_steps=200,
        va_steps=200,
        sync_iterations=40,
        sync_runs=4,
    )
    result = exp.run(config, seed=0)
    smdp = random_mdp(config.sync_states, config.sync_actions, gamma=config.sync_gamma, rng=0 + 4)
    sol = policy_iteration(smdp)
    Qs, V = np.asarray(sol.Q), np.asarray(sol.V)
    T = config.sync_iterations
    kw = dict(
        alpha=config.sync_alpha,
        gamma=config.sync_gamma,
        initial_error=float(np.abs(Qs).max()),
        value_span=float(V.max() - V.min()),
        n_pairs=smdp.S * smdp.A,
        horizon=T,
    )
    union = q_learning_bound(np.arange(T + 1), delta=config.delta / config.sync_runs, **kw)
    per_run = q_learning_bound(np.arange(T + 1), delta=config.delta, **kw)
    bound = np.asarray(result.curves["sync"]["bound"])
    np.testing.assert_array_equal(bound, union)
    # log(2nTm/δ) > log(2nT/δ): the joint statement costs a wider bound
    assert np.all(bound[1:] > per_run[1:])
    assert result.meta["sync_delta_per_run"] == config.delta / config.sync_runs
    claim = next(c for c in result.checks if c.claim.name == "sync-bound")
    assert claim.passed and "jointly with probability ≥ 1 − δ" in claim.claim.statement
