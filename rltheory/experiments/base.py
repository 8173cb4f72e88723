"""Experiment protocol and registry: one module per reproduced figure.

Each experiment module ``rltheory/experiments/<snake_name>.py`` defines

* a frozen dataclass ``Config`` with classmethods ``quick()`` (≤ 60 s on two
  cores) and ``full()``;
* ``run(config, *, seed=0, progress=False) -> ExperimentResult``;
* ``plot(result) -> matplotlib.figure.Figure`` (drawn with :mod:`rltheory.plot`);
* ``EXPERIMENT = register(Experiment(name, title, Config, run, plot))``;

and is listed (one line) in ``_MODULES`` of :mod:`rltheory.experiments`, whose
:func:`names`/:func:`get` import the listed modules on first use.
"""

from __future__ import annotations

import dataclasses
import math
import os
import platform
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..bounds.rates import ClaimCheck

__all__ = [
    "Experiment",
    "ExperimentResult",
    "register",
    "registered",
    "config_to_dict",
    "quick_mode",
    "versions",
    "jsonable",
]

_KEBAB = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
_REGISTRY: dict[str, Experiment] = {}


def quick_mode() -> bool:
    """True when the environment variable ``RLTHEORY_QUICK`` is ``1``/``true``/``yes``/``on`` (any case)."""
    return os.environ.get("RLTHEORY_QUICK", "").strip().lower() in ("1", "true", "yes", "on")


def versions() -> dict[str, str]:
    """Versions of Python, rltheory and the numerical libraries, for result files."""
    import scipy

    from .. import __version__

    return {
        "rltheory": __version__,
        "python": platform.python_version(),
        "numpy": np.__version__,
        "scipy": scipy.__version__,
        "platform": platform.platform(),
    }


def jsonable(x: Any) -> Any:
    """Convert ``x`` to plain JSON types: arrays → lists, numpy scalars → Python,
    tuples → lists, dataclasses → dicts, dict keys → ``str(key)``, non-finite floats →
    ``None`` (strict JSON).

    Raises
    ------
    TypeError
        A value with no JSON form (a set, a complex number, an arbitrary object).
    ValueError
        Two keys of one dict with the same ``str`` (``1`` and ``"1"``), which would
        leave one entry in place of two.
    """
    if isinstance(x, dict):
        out: dict[str, Any] = {}
        first: dict[str, Any] = {}
        for k, v in x.items():
            key = str(k)
            if key in first:  # e.g. 1 and "1": one would silently replace the other
                raise ValueError(
                    f"the keys {first[key]!r:.60} and {k!r:.60} both become the JSON key {key!r:.60}; rename one"
                )
            first[key] = k
            out[key] = jsonable(v)
        return out
    if isinstance(x, (list, tuple)):
        return [jsonable(v) for v in x]
    if dataclasses.is_dataclass(x) and not isinstance(x, type):
        if hasattr(x, "to_dict"):
            return jsonable(x.to_dict())
        return {f.name: jsonable(getattr(x, f.name)) for f in dataclasses.fields(x)}
    if isinstance(x, np.ndarray):
        return jsonable(x.tolist())
    if isinstance(x, (bool, np.bool_)):
        return bool(x)
    if isinstance(x, (int, np.integer)):
        return int(x)
    if isinstance(x, (float, np.floating)):
        v = float(x)
        return v if math.isfinite(v) else None
    if x is None or isinstance(x, str):
        return x
    raise TypeError(f"cannot convert {type(x).__name__} to JSON: {x!r}")


def config_to_dict(config: Any) -> dict:
    """A frozen config dataclass as a JSON-ready dict (tuples become lists)."""
    if not (dataclasses.is_dataclass(config) and not isinstance(config, type)):
        raise TypeError(f"config must be a dataclass instance; got {type(config).__name__}")
    return jsonable({f.name: getattr(config, f.name) for f in dataclasses.fields(config)})


@dataclass(frozen=True)
class ExperimentResult:
    """What an experiment's ``run`` returns: measured curves and the verdict on each claim.

    Attributes
    ----------
    name : str
        The experiment's registered name.
    config : dict
        The configuration used (``config_to_dict(config)``).
    curves : dict[str, dict[str, list]]
        ``curves[panel][series]`` — e.g. ``curves["gridworld"]["k"]``,
        ``curves["gridworld"]["error"]``, ``curves["gridworld"]["bound"]``.
    checks : list[ClaimCheck]
        One entry per checked claim.
    meta : dict
        Anything else worth recording (seed, sizes, wall time).
    """

    name: str
    config: dict
    curves: dict[str, dict[str, list]]
    checks: list[ClaimCheck]
    meta: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        if isinstance(self.checks, (str, bytes, dict)) or not hasattr(self.checks, "__iter__"):
            raise TypeError(
                f"checks must be a list of ClaimCheck; got {type(self.checks).__name__}"
            )
        # a list of its own: a generator would be used up by the loop below, leaving no check
        # behind and a run that 'passed' whatever its checks said
        object.__setattr__(self, "checks", list(self.checks))
        for i, c in enumerate(self.checks):
            if not isinstance(c, ClaimCheck):
                raise TypeError(f"checks[{i}] must be a ClaimCheck; got {type(c).__name__}")
        if not isinstance(self.curves, Mapping):  # a list failed below: "no attribute 'items'"
            raise TypeError(
                f"curves must be a dict of panels (curves[panel][series]); got {type(self.curves).__name__}"
            )
        for panel, series in self.curves.items():
            if not isinstance(series, dict):
                raise TypeError(
                    f"curves[{panel!r}] must be a dict of series; got {type(series).__name__}"
                )

    @property
    def passed(self) -> bool:
        """True iff there is at least one check and every check passed."""
        return bool(self.checks) and all(c.passed for c in self.checks)

    def to_json_dict(self) -> dict:
        """JSON-ready record: name, ``pass``, config, checks (measured vs claimed, CI), curves,
        meta and library versions."""
        return {
            "name": self.name,
            "pass": self.passed,
            "config": jsonable(self.config),
            "checks": [jsonable(c.to_dict()) for c in self.checks],
            "curves": jsonable(self.curves),
            "meta": jsonable(self.meta),
            "versions": versions(),
        }


@dataclass(frozen=True)
class Experiment:
    """A registered reproduction.

    Attributes
    ----------
    name : str
        Kebab-case name used by ``rltheory reproduce NAME``.
    title : str
        One line: the figure and the claim it checks.
    config_cls : type
        Frozen dataclass with classmethods ``quick()`` and ``full()``.
    run : callable
        ``run(config, *, seed=0, progress=False) -> ExperimentResult``.
    plot : callable
        ``plot(result) -> matplotlib.figure.Figure``.
    """

    name: str
    title: str
    config_cls: type
    run: Callable[..., ExperimentResult]
    plot: Callable[[ExperimentResult], Any]

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not _KEBAB.match(self.name):
            raise ValueError(
                f"experiment name must be kebab-case (e.g. 'vi-rates'); got {self.name!r}"
            )
        if not (dataclasses.is_dataclass(self.config_cls) and isinstance(self.config_cls, type)):
            raise TypeError(f"experiment {self.name!r}: config_cls must be a dataclass type")
        for preset in ("quick", "full"):
            if not callable(getattr(self.config_cls, preset, None)):
                raise TypeError(
                    f"experiment {self.name!r}: config_cls needs a classmethod {preset}()"
                )
        for attr in ("run", "plot"):
            if not callable(getattr(self, attr)):
                raise TypeError(f"experiment {self.name!r}: {attr} must be callable")

    def config(self, full: bool = False) -> Any:
        """The ``full()`` or ``quick()`` preset (``full`` a bool: ``"no"`` chose the full one)."""
        if not isinstance(full, (bool, np.bool_)):
            raise TypeError(
                f"experiment {self.name!r}: full must be a bool (True for the full preset); "
                f"got {type(full).__name__} {full!r:.40}"
            )
        return self.config_cls.full() if full else self.config_cls.quick()

    def reproduce(
        self, *, full: bool = False, seed: int = 0, progress: bool = False
    ) -> ExperimentResult:
        """Run the ``quick`` (default) or ``full`` preset."""
        result = self.run(self.config(full), seed=seed, progress=progress)
        if not isinstance(result, ExperimentResult):
            raise TypeError(
                f"experiment {self.name!r}: run returned {type(result).__name__}, not ExperimentResult"
            )
        return result


def register(experiment: Experiment) -> Experiment:
    """Add ``experiment`` to the registry and return it (``EXPERIMENT = register(...)``).

    Raises
    ------
    ValueError
        Another module already registered the same name.
    """
    if not isinstance(experiment, Experiment):
        raise TypeError(f"register expects an Experiment; got {type(experiment).__name__}")
    old = _REGISTRY.get(experiment.name)
    if old is not None and getattr(old.run, "__module__", None) != getattr(
        experiment.run, "__module__", None
    ):
        raise ValueError(
            f"experiment name {experiment.name!r} is already registered by {old.run.__module__}"
        )
    # re-registration from the same module (reload) replaces
    _REGISTRY[experiment.name] = experiment
    return experiment


def registered() -> dict[str, Experiment]:
    """The experiments registered so far (without importing ``_MODULES``)."""
    return dict(_REGISTRY)
