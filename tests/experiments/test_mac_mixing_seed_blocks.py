"""mac-mixing's evaluation seeds never coincide with its tuning seeds, nor across experiment seeds.

At ``seed = 1000`` the evaluation runs ``1000·seed + k`` were the tuning runs ``10⁶ + k``, so the
"held-out" instances were evaluated on the very seeds the settings were tuned with.
"""

import pytest

from rltheory.experiments import mac_mixing
from rltheory.experiments._mac_mixing_dial import TUNING_SEED0, evaluation_seed


def test_seeds_below_1000_keep_their_runs():
    # the numbers quoted in mac_mixing's docstring come from seeds 0 and 1
    assert [evaluation_seed(s, k) for s in (0, 1, 999) for k in (0, 15)] == [0, 15, 1000, 1015, 999000, 999015]


@pytest.mark.parametrize("seed", [999, 1000, 1001, 10**6])
def test_evaluation_seeds_avoid_the_tuning_block(seed):
    evaluation = {evaluation_seed(seed, k) for k in range(1000)}
    tuning = {TUNING_SEED0 + k for k in range(1000)}
    assert not evaluation & tuning


def test_evaluation_blocks_are_disjoint_across_seeds():
    seeds = [*range(0, 5), *range(995, 1006), 10**6]
    blocks = [{evaluation_seed(s, k) for k in range(1000)} for s in seeds]
    assert len(set().union(*blocks)) == 1000 * len(seeds)


@pytest.mark.parametrize("name", ["seeds", "tune_seeds"])
def test_more_than_1000_runs_per_block_is_refused(name):
    with pytest.raises(ValueError, match=rf"Config\.{name} must be at most 1000.*got 1001"):
        mac_mixing.Config(**{name: 1001})
