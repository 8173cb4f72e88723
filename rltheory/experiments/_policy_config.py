"""Config checks shared by the policy-optimisation experiments (pg-vs-npg, entropy-npg, pmd-linear).

A bad setting used to run the experiment and then fail with a message that named no field
(``pmd-linear`` with ``iterations=0``: "a rate fit needs at least 3 points in the window; got 1";
``pg-vs-npg`` with ``npg_iterations=0``: "check_bound needs at least one point; got empty
arrays"; ``entropy-npg`` with ``fractions=(2.0,)``: "entropy-regularised NPG needs 0 < eta <=
(1 - gamma)/tau", a rule about ``eta``, which is no field). Each ``Config.__post_init__`` now
names the field, the rule and the value before anything runs.
"""

from __future__ import annotations

from typing import Any

from .._validate import check_int, check_real

__all__: list[str] = []


def check_count(value: Any, name: str, minimum: int = 1) -> None:
    """``Config.<name>`` must be an integer ``≥ minimum``."""
    check_int(value, f"Config.{name}", minimum)


def check_positive(value: Any, name: str) -> None:
    """``Config.<name>`` must be a finite number ``> 0``."""
    check_real(value, f"Config.{name}", low=0.0, low_open=True)


def check_discount(value: Any, name: str, *, positive: bool = False) -> None:
    """``Config.<name>`` must lie in ``[0, 1)`` (``(0, 1)`` when ``positive``)."""
    check_real(value, f"Config.{name}", low=0.0, high=1.0, low_open=positive, high_open=True)


def check_garnet(states: Any, actions: Any, branching: Any) -> None:
    """A garnet ``G(S, A, b)``: ``S, A ≥ 1`` and ``1 ≤ b ≤ S``."""
    check_count(states, "states")
    check_count(actions, "actions")
    check_count(branching, "branching")
    if branching > states:
        raise ValueError(f"Config.branching must be at most Config.states = {states}; got {branching!r}")


def check_fractions(fractions: Any, name: str) -> None:
    """A non-empty tuple of step fractions in ``(0, 1]`` (the first bad entry named)."""
    if not isinstance(fractions, (tuple, list)) or len(fractions) == 0:
        raise ValueError(f"Config.{name} must be a non-empty tuple of numbers in (0, 1]; got {fractions!r}")
    for i, f in enumerate(fractions):
        check_real(f, f"Config.{name}[{i}]", low=0.0, high=1.0, low_open=True)
