"""The policy-optimisation experiments' Config names a bad field before anything runs."""

from __future__ import annotations

import pytest

from rltheory.experiments import entropy_npg, pg_vs_npg, pmd_linear


@pytest.mark.parametrize("module", [entropy_npg, pg_vs_npg, pmd_linear])
def test_the_presets_are_valid(module):
    # construction runs every field check; the presets must pass them and differ in size
    quick, full = module.Config.quick(), module.Config.full()
    assert isinstance(module.Config(), module.Config) and quick != full


@pytest.mark.parametrize(
    ("module", "kw", "msg"),
    [
        # ran, then failed with "entropy-regularised NPG needs 0 < eta <= (1 - gamma)/tau" (no such field)
        (entropy_npg, {"fractions": (2.0,)}, r"Config.fractions\[0\] must be a finite number in \(0, 1\]; got 2.0"),
        # ran nothing and reported "pass": false with no checks
        (entropy_npg, {"fractions": ()}, r"Config.fractions must be a non-empty tuple"),
        # failed in check_bound after the run: "check_bound needs at least one point; got empty arrays"
        (entropy_npg, {"max_iter": 0}, r"Config.max_iter must be an integer >= 1; got 0"),
        (entropy_npg, {"branching": 60}, r"Config.branching must be at most Config.states = 50; got 60"),
        (entropy_npg, {"tau": 0.0}, r"Config.tau must be a finite number > 0; got 0.0"),
        # failed after the run: "a rate fit needs at least 3 points in the window; got 1"
        (pmd_linear, {"iterations": 0}, r"Config.iterations must be an integer >= 2; got 0"),
        # failed in pmd_linear_bound: "rate must lie in (0, 1); got 0.0"
        (pmd_linear, {"gamma": 0.0}, r"Config.gamma must be a finite number in \(0, 1\); got 0.0"),
        (pmd_linear, {"constant_eta": -1.0}, r"Config.constant_eta must be a finite number > 0; got -1.0"),
        # failed after the runs: "check_bound needs at least one point; got empty arrays"
        (pg_vs_npg, {"npg_iterations": 0}, r"Config.npg_iterations must be an integer >= 1; got 0"),
        # one action: the limit L = S(A-1)/(A eta) is 0 and the gap to fit is 0
        (pg_vs_npg, {"rate_actions": 1}, r"Config.rate_actions must be an integer >= 2; got 1"),
        (pg_vs_npg, {"rate_iterations": 6}, r"Config.rate_iterations must be an integer >= 7; got 6"),
        (pg_vs_npg, {"chain_gamma": 1.0}, r"Config.chain_gamma must be a finite number in \[0, 1\); got 1.0"),
        (pg_vs_npg, {"chain_slip": 1.5}, r"Config.chain_slip must be a finite number in \[0, 1\]; got 1.5"),
    ],
)
def test_a_bad_field_is_named_before_the_run(module, kw, msg):
    with pytest.raises(ValueError, match=msg):
        module.Config(**kw)
