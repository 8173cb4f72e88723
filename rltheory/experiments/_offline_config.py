"""Config checks shared by the offline experiments (offline-pessimism, selective-coverage,
hnpg-hybrid, marlhf-coverage).

A bad setting used to fail deep inside a run with a message that named nothing
(``seeds=0``: "division by zero", "need at least one array to stack" or "measured must be
finite; measured[0] = nan"; ``sizes=()``: "max() arg is an empty sequence"); each
``Config.__post_init__`` now names the field, the rule and the value.
"""

from __future__ import annotations

from typing import Any

from .._validate import check_int, check_real

__all__: list[str] = []


def check_sizes(sizes: Any, name: str, minimum: int = 1, *, distinct: int = 1) -> None:
    """``sizes`` must be a non-empty tuple/list of integers ``≥ minimum``; the first bad entry is named.

    ``distinct``: the least number of different sizes (3 where a rate is fitted over them:
    :func:`rltheory.bounds.fit_rate` raised "a rate fit needs at least 3 points" after the run).
    """
    if not isinstance(sizes, (tuple, list)) or len(sizes) == 0:
        raise ValueError(
            f"{name} must be a non-empty tuple of integers >= {minimum}; got {sizes!r}"
        )
    for i, n in enumerate(sizes):
        check_int(n, f"{name}[{i}]", minimum)
    if len(set(int(n) for n in sizes)) < distinct:
        raise ValueError(
            f"{name} must hold at least {distinct} different sizes (a rate is fitted over them); got {sizes!r}"
        )


def check_seeds(seeds: Any, name: str) -> None:
    check_int(seeds, name, 1)


def check_delta(delta: Any, name: str) -> None:
    check_real(delta, name, low=0.0, high=1.0, low_open=True, high_open=True)
