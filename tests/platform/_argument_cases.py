"""What the two argument fuzzes share: case tables turned into pytest parameters, and the check
that the base call each bad argument is substituted into is itself valid.

A case table lists ``(function name, argument, [bad values or corruption names])``; ``calls``
maps each function name to ``(function, kwargs factory)``.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterable
from typing import Any

import pytest

Cases = Iterable[tuple[str, str, list[Any]]]


def case_params(cases: Cases, ident: Callable[[str, str, Any], str]) -> list[Any]:
    """One ``pytest.param(name, argument, value)`` per value of every case, with id ``ident(...)``."""
    return [pytest.param(name, arg, value, id=ident(name, arg, value)) for name, arg, values in cases for value in values]


def called_names(cases: Cases) -> list[str]:
    """The functions a case table calls, sorted (one base-call test each)."""
    return sorted({name for name, _, _ in cases})


def check_base_call(calls: dict[str, tuple[Callable[..., Any], Callable[[], dict]]], name: str) -> None:
    """The unmodified call runs without a warning and returns a result, so that a rejection in a
    fuzz test is due to the substituted argument alone."""
    fn, kwargs = calls[name]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = fn(**kwargs())
    assert out is not None
