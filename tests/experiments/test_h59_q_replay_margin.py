"""q-replay's replay claims report their real margin, not the tie at the unsampled pairs.

Regression: the replay-K-F claims compared the run-averaged errors from the second checkpoint
(``t = 100`` on the quick preset). There every run's sup-norm error was attained at a pair not yet
sampled, where both tables (same trajectories) still hold ``Q_0``, so replay and plain Q-learning
had the same error in every run and the JSON's worst ratio was 1 (argmax 0) for every scheme at
every seed. The check now starts at the first checkpoint at which some run's errors differ.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from rltheory.algorithms import q_learning, q_learning_replay, rescaled_linear_step
from rltheory.experiments.q_replay import Config, run
from rltheory.mdp import policy_iteration
from rltheory.mdp.zoo import random_mdp


def _small(**kw):
    base = dict(
        steps=1000,
        runs=8,
        replay=((4, 1),),
        replay_claim_steps=1000,
        va_steps=200,
        sync_iterations=40,
    )
    return dataclasses.replace(Config.quick(), **{**base, **kw})


@pytest.mark.parametrize("seed", [0, 1])
def test_the_replay_margin_starts_where_replay_has_moved_an_error(seed):
    config = _small()
    res = run(config, seed=seed)
    # the same two runs, per run (the experiment's rule: same model, same rng, same steps)
    mdp = random_mdp(config.states, config.actions, gamma=config.gamma, rng=seed)
    kw = dict(
        steps=config.steps,
        step_size=rescaled_linear_step(config.gamma),
        n_runs=config.runs,
        Q_star=np.asarray(policy_iteration(mdp).Q),
        record_every=config.steps // 50,
    )
    plain = q_learning(mdp, rng=seed + 1, **kw)
    rep = q_learning_replay(
        mdp, rng=seed + 1, replay_every=1, replay_updates=4, buffer_size=config.buffer_size, **kw
    )
    t = plain.trace.iteration
    e_p, e_r = plain.trace["error"], rep.trace["error"]
    assert np.array_equal(e_p[1], e_r[1])  # the tie the old check began with: ratio exactly 1
    start = int(np.flatnonzero(np.any(e_p != e_r, axis=1) & (t > t[0]))[0])
    ratio = e_r.mean(axis=1)[start:] / e_p.mean(axis=1)[start:]
    bc = next(c for c in res.checks if c.claim.name == "replay-4-1").bound_check
    assert res.meta["replay_first_checked"]["K=4,F=1"] == int(t[start])
    assert bc.n == t.size - start  # the old check had t.size - 1 points
    assert bc.worst_ratio == pytest.approx(ratio.max(), rel=1e-12)
    assert bc.worst_ratio < 1.0 and bc.holds


def test_a_window_of_tied_checkpoints_only_is_refused_by_name():
    config = _small(steps=200, replay_claim_steps=4)  # checkpoints every 4 steps: t = 4 only
    with pytest.raises(
        ValueError,
        match=r"replay K=4, F=1 leaves every run's error equal .* "
        r"replay_claim_steps = 4",
    ):
        run(config, seed=0)
