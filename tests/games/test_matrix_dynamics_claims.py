"""The matrix-dynamics experiment's OMWU last-iterate claim states the step it is checked at."""

from __future__ import annotations

import numpy as np

from rltheory.experiments.matrix_dynamics import Config, run
from rltheory.games import optimistic_hedge
from rltheory.games.zoo import rock_paper_scissors


def test_omwu_last_iterate_claim_is_an_observation_beyond_the_cited_step():
    # biased RPS (weights 1, 2, 3): max|A| = 3, R = 6. OMWU's default η = 1/(√8 L), L = R/2,
    # is 1/(6√2) = 0.118 > 1/(8R) = 0.0208, the step of Wei et al. (2021) as restated by Cai et
    # al. (2025): η ≤ 1/8 on losses in [0, 1], i.e. 1/(8R) after the shift and scaling that leave
    # OMWU's iterates unchanged. The claim used to state 1/(8 max|A|) = 0.0417, twice that.
    A = rock_paper_scissors((1.0, 2.0, 3.0))
    eta = float(optimistic_hedge(A, 1).eta[0])
    assert abs(eta - 1.0 / (6.0 * np.sqrt(2.0))) <= 1e-15
    assert eta > 1.0 / (8.0 * 6.0)
    res = run(Config())
    claim = next(c for c in res.checks if c.claim.name == "biased-rps-omwu-last-linear")
    assert claim.passed
    assert "η ≤ 1/(8R)" in claim.claim.source and "max|A|" not in claim.claim.source
    assert "0.118" in claim.claim.statement and "0.0208" in claim.claim.statement
    # claim 1 with the first-round term and OGDA's D = (1 − 1/k)/2 holds on both games
    bounds = [c for c in res.checks if c.claim.name.endswith(("-omwu-bound", "-ogda-bound"))]
    assert len(bounds) == 4 and all(c.passed for c in bounds)
