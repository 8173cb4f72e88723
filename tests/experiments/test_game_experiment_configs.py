"""markov-games and matrix-dynamics Configs name a bad field before anything runs.

Before: markov-games with ``gammas=()`` ran nothing and reported a failed run; ``gammas=(0.0,)``
failed in ``check_bound`` ("needs at least one point; got empty arrays": ``V_1 = V*`` leaves no
error curve); ``npg_iterations=0`` ran the Shapley studies and then failed naming ``T``.
matrix-dynamics with ``T=1`` ran all five dynamics on both games and then failed with "a rate fit
needs at least 3 points in the window; got 1".
"""

from __future__ import annotations

import pytest

from rltheory.experiments.markov_games import Config as MarkovConfig
from rltheory.experiments.matrix_dynamics import Config as DynamicsConfig


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (
            {"gammas": ()},
            r"Config\.gammas must be a non-empty tuple of discounts in \(0, 1\); got \(\)",
        ),
        ({"gammas": (0.0,)}, r"Config\.gammas\[0\] must be a finite number in \(0, 1\); got 0\.0"),
        (
            {"gammas": (0.9, 1.0)},
            r"Config\.gammas\[1\] must be a finite number in \(0, 1\); got 1\.0",
        ),
        ({"gammas": 0.9}, r"Config\.gammas must be a non-empty tuple"),
        ({"states": 0}, r"Config\.states must be an integer >= 1; got 0"),
        ({"actions": 2.5}, r"Config\.actions must be an integer >= 1; got 2\.5"),
        ({"soccer": "yes"}, r"Config\.soccer must be True or False; got 'yes'"),
        ({"npg_iterations": 0}, r"Config\.npg_iterations must be an integer >= 1; got 0"),
        ({"npg_eta": -0.5}, r"Config\.npg_eta must be a finite number > 0; got -0\.5"),
    ],
)
def test_markov_games_config_names_the_field(kwargs, message):
    with pytest.raises(ValueError, match=message):
        MarkovConfig(**kwargs)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"T": 1}, r"Config\.T must be an integer >= 3; got 1"),
        ({"T": 1000.0}, r"Config\.T must be an integer >= 3; got 1000\.0"),
        ({"random_size": 0}, r"Config\.random_size must be an integer >= 1; got 0"),
        ({"rps_weights": (1.0, 2.0)}, r"Config\.rps_weights must be three positive finite numbers"),
        (
            {"rps_weights": (1.0, -2.0, 3.0)},
            r"Config\.rps_weights\[1\] must be a finite number > 0; got -2\.0",
        ),
        ({"points": 1}, r"Config\.points must be an integer >= 2; got 1"),
    ],
)
def test_matrix_dynamics_config_names_the_field(kwargs, message):
    with pytest.raises(ValueError, match=message):
        DynamicsConfig(**kwargs)


def test_presets_are_valid():
    # construction runs every field check; the presets must pass them and differ in size
    for cfg in (MarkovConfig, DynamicsConfig):
        quick, full = cfg.quick(), cfg.full()
        assert isinstance(cfg(), cfg) and isinstance(quick, cfg) and quick != full
