"""How a sweep's results file names the function it holds points of (split out of
:mod:`rltheory.experiments.sweep`, which imports these names).

``_fn_name`` is ``module.qualname``, with the ``repr`` of the object of a bound method or
callable object and the bound arguments of a :func:`functools.partial`; ``_check_named`` refuses
functions that such a name does not identify (lambdas, closures, objects with the default repr).
"""

from __future__ import annotations

import functools
import inspect
import json
from collections.abc import Callable
from typing import Any

import numpy as np


def _json_default(x: Any) -> Any:
    if isinstance(x, np.ndarray):
        return x.tolist()
    if isinstance(x, np.generic):
        return x.item()
    raise TypeError(f"{type(x).__name__} is not JSON-serialisable")


def _owner(base: Any) -> Any:
    """The object whose state a callable computes with: ``self`` of a bound method, the callable
    object itself (an instance with ``__call__``), else ``None`` (a plain function or class)."""
    if inspect.ismethod(base):
        return base.__self__
    if inspect.isroutine(base) or isinstance(base, type):
        return None
    return base


def _fn_name(fn: Callable) -> str:
    """``module.qualname`` of ``fn``; for a bound method or a callable object, with the ``repr``
    of its object (``Scaled(k=2)`` and ``Scaled(k=3)`` compute different things); for a
    :func:`functools.partial`, with its bound arguments (as JSON, else their ``repr``), so that
    two partials of one function never share results."""
    base = fn.func if isinstance(fn, functools.partial) else fn
    owner = _owner(base)
    named = base if owner is not base else type(base)  # an instance: its class names it
    mod = getattr(named, "__module__", None) or "?"
    name = f"{mod}.{getattr(named, '__qualname__', type(named).__name__)}"
    if owner is not None:
        name += f" of {owner!r}"
    if isinstance(fn, functools.partial) and (fn.args or fn.keywords):
        try:
            # NaN here (json.dumps default allow_nan) is quoted inside the header, still strict JSON
            bound = json.dumps(
                {"args": list(fn.args), "keywords": dict(fn.keywords)},
                default=_json_default,
                sort_keys=True,
                separators=(",", ":"),
            )
        except (TypeError, ValueError):
            bound = repr((fn.args, fn.keywords))
        name += f" with {bound}"
    return name


def _check_named(fn: Callable) -> None:
    """Refuse a results file for a function that its name does not identify (located
    ``ValueError``): every lambda of a module is ``module.<lambda>``, every closure made by
    ``make`` is ``module.make.<locals>.f``, so a second one read the first one's points from the
    file as its own; an object with the default ``repr`` (``<... object at 0x...>``) is named
    by its address, which no rerun finds again."""
    base = fn.func if isinstance(fn, functools.partial) else fn
    qualname = getattr(base, "__qualname__", "")
    if "<lambda>" in qualname or "<locals>" in qualname:
        raise ValueError(
            f"results_path needs a function that its name identifies; fn is "
            f"{_fn_name(fn).split(' with ', 1)[0]!r}, a name that other lambdas or closures share "
            "(their points would be read as its own): use a module-level function, with "
            "functools.partial for bound arguments"
        )
    owner = _owner(base)
    if (
        owner is not None
        and not isinstance(owner, type)
        and type(owner).__repr__ is object.__repr__
    ):
        raise ValueError(
            f"results_path needs a function that its name identifies; fn computes with "
            f"{owner!r}, whose default repr names an address, not its state: give "
            f"{type(owner).__qualname__} a repr of its state (a dataclass has one), or use a "
            "module-level function with functools.partial"
        )
