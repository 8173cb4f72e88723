"""Reading gymnasium toy-text transition tables: the spaces' sizes and the table's entries.

Helpers of :func:`rltheory.mdp.interop.from_gymnasium` (``env.unwrapped.P[s][a]`` is a list of
``(p, s', r, done)`` tuples; ``P`` and ``P[s]`` may be dicts or sequences).
"""

from __future__ import annotations

from typing import Any

import numpy as np


def _discrete_n(space: Any, field: str) -> int:
    n = getattr(space, "n", None)
    if n is None or type(space).__name__ != "Discrete" or int(getattr(space, "start", 0)) != 0:
        raise TypeError(
            f"{field} must be gymnasium.spaces.Discrete(n) starting at 0; got {space!r}"
        )
    return int(n)


def _entry(table: Any, i: int) -> Any:
    """``table[i]`` of a dict (toy-text) or a sequence (``P[s][a]`` as lists); None when absent."""
    if hasattr(table, "get"):
        return table.get(i)
    try:
        return table[i]
    except (IndexError, KeyError, TypeError):
        return None


def _beyond(table: Any, n: int) -> Any:
    """The first key of a dict or index of a sequence ``table`` outside ``range(n)``, else None."""
    if hasattr(table, "keys"):
        for k in table.keys():
            if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 0 <= k < n:
                return k
        return None
    try:
        size = len(table)
    except TypeError:
        return None
    return n if size > n else None
