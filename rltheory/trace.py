"""Trace: the per-iteration record every iterative routine in rltheory returns.

A :class:`Trace` holds named metric arrays indexed by iteration (first axis;
batched runs keep their batch axes after it), the iteration index and the
cumulative wall time. Solvers build one with :class:`TraceRecorder`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .backend import to_numpy

__all__ = ["Trace", "TraceRecorder"]


@dataclass(frozen=True)
class Trace:
    """Per-iteration metrics of an iterative routine.

    Attributes
    ----------
    metrics : dict[str, numpy.ndarray]
        ``metrics[name][k]`` is the metric after iteration ``iteration[k]``;
        batched runs store shape ``(K, *batch_shape)``.
    iteration : numpy.ndarray of int, shape (K,)
    wall_time : numpy.ndarray of float, shape (K,)
        Seconds since the routine started, at each record.
    """

    metrics: dict[str, np.ndarray] = field(default_factory=dict)
    iteration: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    wall_time: np.ndarray = field(default_factory=lambda: np.zeros(0))

    def __getitem__(self, name: str) -> np.ndarray:
        try:
            return self.metrics[name]
        except KeyError:
            raise KeyError(f"trace has no metric {name!r}; it has {sorted(self.metrics)}") from None

    def __contains__(self, name: object) -> bool:
        return name in self.metrics

    def __len__(self) -> int:
        return int(self.iteration.shape[0])

    @property
    def names(self) -> list[str]:
        return sorted(self.metrics)


class TraceRecorder:
    """Accumulates metrics iteration by iteration, then freezes them into a :class:`Trace`.

    Values may be device arrays; they are copied to the host when recorded
    (one small transfer per iteration, alongside the stopping test's sync).
    """

    def __init__(self) -> None:
        self._t0 = time.perf_counter()
        self._rows: dict[str, list[np.ndarray]] = {}
        self._it: list[int] = []
        self._wall: list[float] = []

    def record(self, iteration: int, **metrics: Any) -> None:
        """Record ``metrics`` for ``iteration`` (every call must give the same names)."""
        if self._it and set(metrics) != set(self._rows):
            raise ValueError(f"metrics {sorted(metrics)} differ from the first record's {sorted(self._rows)}")
        for k, v in metrics.items():
            self._rows.setdefault(k, []).append(np.asarray(to_numpy(v), dtype=float))
        self._it.append(int(iteration))
        self._wall.append(time.perf_counter() - self._t0)

    def finish(self) -> Trace:
        return Trace(
            metrics={k: np.stack(v) for k, v in self._rows.items()},
            iteration=np.asarray(self._it, dtype=np.int64),
            wall_time=np.asarray(self._wall, dtype=float),
        )
