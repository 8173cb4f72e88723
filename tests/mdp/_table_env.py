"""A minimal toy-text-like env for the interop tests: Discrete spaces and a transition table ``P``."""

from __future__ import annotations

from typing import Any

import numpy as np


class TableEnv:
    """``env.P[s][a] = [(p, s', r, done), ...]`` with gymnasium ``Discrete`` spaces; ``isd`` the
    optional ``initial_state_distrib``."""

    def __init__(self, table: Any, S: int, A: int, isd: Any = None) -> None:
        import gymnasium as gym  # noqa: PLC0415 - the tests that use it skip without gymnasium

        self.P = table
        self.observation_space = gym.spaces.Discrete(S)
        self.action_space = gym.spaces.Discrete(A)
        if isd is not None:
            self.initial_state_distrib = np.asarray(isd)

    @property
    def unwrapped(self) -> TableEnv:
        return self
