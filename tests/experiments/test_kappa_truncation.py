"""kappa-truncation: the claims are judged only where the correlation decay is established."""

from __future__ import annotations

import numpy as np

from rltheory.experiments.kappa_truncation import Config, run


def test_quick_run_establishes_the_decay_before_judging_the_envelope_and_rate():
    res = run(Config.quick(), seed=0)
    names = [c.claim.name for c in res.checks]
    assert names == [
        f"{k}-{c}"
        for k in ("ring", "line")
        for c in ("decay", "exact-at-diameter", "envelope", "rate")
    ]
    assert res.passed
    for kind in ("ring", "line"):
        phi = res.meta["fits"][kind]["phi"]
        assert phi["ci"][1] < 1.0  # the envelope decreases and the rate bound phi_hi^2 < 1 can fail
        err = np.asarray(res.curves[kind]["error"])
        assert err[-1] <= 1e-20 and err[0] > 0.0  # exact at the diameter, not at kappa = 0


def test_a_ring_whose_decay_is_not_established_fails_instead_of_passing_vacuously():
    # ring of 8: phi fitted on d = 1..3 (d = 3 next to the two-path antipode) has a 95% interval
    # reaching past 1; the old run judged the envelope with phi_hi clipped to 1 - 1e-12 (a constant
    # envelope e_0) and the rate against phi_hi^2 > 1, and passed every check
    res = run(Config(ring_agents=8), seed=0)
    verdict = {c.claim.name: c.passed for c in res.checks}
    assert res.meta["fits"]["ring"]["phi"]["ci"][1] >= 1.0
    assert verdict["ring-decay"] is False and not res.passed
    assert verdict["line-decay"] is True
