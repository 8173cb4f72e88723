"""The matrix-dynamics experiment's OMWU last-iterate claim states the step it is checked at."""

from __future__ import annotations

import numpy as np

from rltheory.experiments.matrix_dynamics import Config, run
from rltheory.games import optimistic_hedge
from rltheory.games.zoo import rock_paper_scissors


def test_omwu_last_iterate_claim_is_an_observation_beyond_the_cited_step():
    # biased RPS (weights 1, 2, 3): max|A| = 3, R = 6. OMWU's default η = 1/(√8 L), L = R/2,
    # is 1/(6√2) = 0.118 > 1/(8·3) = 0.042, the step of Wei et al. (2021, Thm 3) as cited;
    # the claim used to cite the theorem for it without saying so.
    A = rock_paper_scissors((1.0, 2.0, 3.0))
    eta = float(optimistic_hedge(A, 1).eta[0])
    assert abs(eta - 1.0 / (6.0 * np.sqrt(2.0))) <= 1e-15
    assert eta > 1.0 / (8.0 * 3.0)
    res = run(Config())
    claim = next(c for c in res.checks if c.claim.name == "biased-rps-omwu-last-linear")
    assert claim.passed
    assert "η ≤ 1/(8 max|A|)" in claim.claim.source
    assert "0.118" in claim.claim.statement and "0.0417" in claim.claim.statement
