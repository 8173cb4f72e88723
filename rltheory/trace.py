"""Trace: the per-iteration record every iterative routine in rltheory returns.

A :class:`Trace` holds named metric arrays indexed by iteration (first axis;
batched runs keep their batch axes after it), the iteration index, the
cumulative wall time and, optionally, the final answer (``final``: e.g. the
last policy and values). Solvers build one with :class:`TraceRecorder`.

Traces are saved as JSON (``.json``, human-readable, strict JSON: non-finite
floats are written as the strings ``"nan"``, ``"inf"``, ``"-inf"``) or as
NumPy archives (``.npz``, loaded with ``allow_pickle=False``) — never pickle.
Writes are atomic (:func:`write_atomic`: a temporary file in the same folder,
flushed and fsynced, then ``os.replace``), so an interrupted save leaves the
previous file intact. :meth:`Trace.load` raises :class:`ResultFileError` naming
the file and the problem for anything that is not a complete rltheory trace.
"""

from __future__ import annotations

import io
import json
import os
import time
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

# the CLI stages its paired writes with these (rltheory.cli._write_all)
from ._atomic_write import _discard, _stage, _sync_directory, write_atomic  # noqa: F401
from ._trace_codec import (
    _check_npz_name,
    _decode_array,
    _DuplicateKey,
    _encode_array,
    _iteration_array,
    _unique_keys,
)
from .backend import array_namespace, device_clock, on_device, to_numpy

__all__ = ["Trace", "TraceRecorder", "ResultFileError", "write_atomic"]

_FORMAT = "rltheory.trace"
_VERSION = 1


class ResultFileError(ValueError):
    """A results/trace file is corrupt, truncated, or not an rltheory file; the message names the file."""


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
        Seconds since the routine started, at each record (for a run on a GPU: when the
        device finished the work queued before the record, read from CUDA events).
    final : dict[str, numpy.ndarray]
        The routine's final answer worth keeping with the trace (e.g. ``policy``, ``V``);
        empty by default.
    """

    metrics: dict[str, np.ndarray] = field(default_factory=dict)
    iteration: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    wall_time: np.ndarray = field(default_factory=lambda: np.zeros(0))
    final: dict[str, np.ndarray] = field(default_factory=dict)

    def __post_init__(self) -> None:
        # host sequences (lists, tuples, scalars) become arrays; arrays (device ones too) are kept
        def arr(v: Any, where: str) -> Any:
            if isinstance(v, np.ndarray) or on_device(v):
                return v
            try:
                return np.asarray(v)
            except ValueError as exc:  # a ragged list
                raise ValueError(f"Trace {where}: not an array ({exc})") from None

        for name in ("metrics", "final"):
            group = getattr(self, name)
            if isinstance(group, dict) and not all(
                isinstance(v, np.ndarray) or on_device(v) for v in group.values()
            ):
                object.__setattr__(
                    self, name, {k: arr(v, f"{name}[{k!r:.60}]") for k, v in group.items()}
                )
        for name in ("iteration", "wall_time"):
            object.__setattr__(self, name, arr(getattr(self, name), name))

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

    # ------------------------------------------------------------------ persistence
    def to_dict(self) -> dict:
        """JSON-ready dict: ``{"format", "version", "iteration", "wall_time", "metrics", "final"}``,
        each array as ``{"dtype", "shape", "data"}`` (non-finite floats as strings).

        Raises
        ------
        TypeError
            A metric or final name that is not a string (JSON would turn ``1`` into ``"1"``,
            and ``1`` next to ``"1"`` into a repeated key), or an array with no JSON form.
        """
        for group, names in (("metrics", self.metrics), ("final", self.final)):
            for k in names:
                if not isinstance(k, str):
                    raise TypeError(
                        f"{group}[{k!r:.60}]: names must be strings; got {type(k).__name__}"
                    )
        return {
            "format": _FORMAT,
            "version": _VERSION,
            "iteration": _encode_array(np.asarray(self.iteration), "iteration"),
            "wall_time": _encode_array(np.asarray(self.wall_time), "wall_time"),
            "metrics": {
                k: _encode_array(np.asarray(to_numpy(v)), f"metrics[{k!r}]")
                for k, v in self.metrics.items()
            },
            "final": {
                k: _encode_array(np.asarray(to_numpy(v)), f"final[{k!r}]")
                for k, v in self.final.items()
            },
        }

    @classmethod
    def from_dict(cls, d: Any, *, source: str = "trace dict") -> Trace:
        """Inverse of :meth:`to_dict`; raises :class:`ResultFileError` on anything malformed."""
        try:
            if not isinstance(d, dict) or d.get("format") != _FORMAT:
                found = d.get("format") if isinstance(d, dict) else type(d).__name__
                raise ValueError(
                    f"not an rltheory trace (format field is {found!r}, expected {_FORMAT!r})"
                )
            version = d.get("version")
            if isinstance(version, bool) or not isinstance(version, int) or version != _VERSION:
                raise ValueError(
                    f"unsupported trace version {d.get('version')!r} (this rltheory reads {_VERSION})"
                )
            missing = {"iteration", "wall_time", "metrics", "final"} - set(d)
            if missing:
                raise ValueError(f"missing fields {sorted(missing)}")
            for group in ("metrics", "final"):
                if not isinstance(d[group], dict):
                    raise ValueError(
                        f"{group} must be an object of named arrays; got {type(d[group]).__name__}"
                    )
            trace = cls(
                metrics={
                    str(k): _decode_array(v, f"metrics[{k!r}]") for k, v in d["metrics"].items()
                },
                iteration=_iteration_array(_decode_array(d["iteration"], "iteration"), "iteration"),
                wall_time=_decode_array(d["wall_time"], "wall_time").astype(float),
                final={str(k): _decode_array(v, f"final[{k!r}]") for k, v in d["final"].items()},
            )
            trace._check_consistent()
        except ResultFileError:
            raise
        except (ValueError, TypeError, AttributeError, KeyError, OverflowError) as exc:
            raise ResultFileError(f"{source}: {exc}") from exc
        return trace

    def _check_consistent(self) -> None:
        K = self.iteration.shape[0] if self.iteration.ndim == 1 else -1
        if self.iteration.ndim != 1 or self.wall_time.shape != (K,):
            raise ValueError(
                f"iteration and wall_time must be 1-D of equal length; got {self.iteration.shape} and {self.wall_time.shape}"
            )
        for k, v in self.metrics.items():
            if v.ndim == 0 and v.dtype == object:  # Trace(metrics={"a": {"b": ...}}): a 0-d object
                raise ValueError(
                    f"metric {k!r} holds a {type(v.item()).__name__}, not an array of numbers "
                    "(nested metrics: give each array its own name, such as 'a/b')"
                )
            if v.ndim == 0 or v.shape[0] != K:
                raise ValueError(
                    f"metric {k!r} has shape {v.shape}; its first axis must have length {K}"
                )

    def save(self, path: str | os.PathLike) -> Path:
        """Save atomically as JSON (``.json``) or a NumPy archive (``.npz``); returns the path.

        Raises
        ------
        ValueError
            The suffix is neither ``.json`` nor ``.npz``, or the trace is inconsistent
            (``iteration``/``wall_time`` lengths differ, a metric's first axis is not the
            number of records, e.g. a 0-d metric), or an ``iteration`` entry is not an int64
            integer (``0.5``, NaN, a bool array, a uint64 past the int64 range): :meth:`load`
            would reject the file.
            For ``.npz``, also a metric/final name that a zip member name cannot hold as
            written: one containing NUL (cut there on reading), a lone surrogate (not
            UTF-8), or longer than 65535 UTF-8 bytes.
        TypeError
            An array with no faithful form in the format (JSON: not boolean/integer/float,
            or wider than float64; ``.npz``: object arrays, which would need pickle), a
            ``wall_time`` that does not hold real numbers (complex, text), or a metric/final
            name that is not a string. Nothing is written in any case.
        """
        path = Path(path)
        suffix = path.suffix.lower()
        if suffix in (".json", ".npz"):
            try:
                self._check_consistent()  # never write a file that load() rejects
                _iteration_array(np.asarray(to_numpy(self.iteration)), "iteration")
            except ValueError as exc:
                raise ValueError(f"Trace.save({str(path)!r}): {exc}; nothing written") from None
            wall = np.asarray(to_numpy(self.wall_time))
            # load() reads it as float64 (a complex one lost its imaginary part)
            if wall.dtype.kind not in "biuf":
                raise TypeError(
                    f"Trace.save({str(path)!r}): wall_time must hold real numbers; got dtype {wall.dtype}; nothing written"
                )
        if suffix == ".json":
            return write_atomic(path, json.dumps(self.to_dict(), allow_nan=False))
        if suffix == ".npz":
            arrays: dict[str, np.ndarray] = {
                "__format__": np.asarray(f"{_FORMAT}/{_VERSION}"),
                "iteration": np.asarray(self.iteration),
                "wall_time": np.asarray(self.wall_time),
            }
            for prefix, group in (("metric/", self.metrics), ("final/", self.final)):
                for k, v in group.items():
                    where = f"{'metrics' if prefix == 'metric/' else 'final'}[{k!r:.60}]"
                    _check_npz_name(prefix, k, where)
                    a = np.asarray(to_numpy(v))
                    if a.dtype.hasobject:  # would be pickled, and load() never unpickles
                        raise TypeError(
                            f"{where}: object arrays cannot be saved (pickle-free format); got dtype {a.dtype}"
                        )
                    arrays[prefix + k] = a
            buf = io.BytesIO()
            np.savez(buf, **arrays)
            return write_atomic(path, buf.getvalue())
        raise ValueError(f"Trace.save: path must end in .json or .npz; got {str(path)!r}")

    @classmethod
    def load(cls, path: str | os.PathLike) -> Trace:
        """Load a trace written by :meth:`save` (format detected from the content).

        Raises
        ------
        FileNotFoundError
            No such file.
        ResultFileError
            The file is empty, truncated, corrupt, or not an rltheory trace; the
            message names the file and what is wrong.
        """
        path = Path(path)
        raw = path.read_bytes()
        if not raw:
            raise ResultFileError(f"{path}: empty file, not an rltheory trace")
        if raw[:2] == b"PK":
            return cls._load_npz(raw, path)
        if raw.lstrip()[:1] == b"{":
            try:
                d = json.loads(raw.decode("utf-8"), object_pairs_hook=_unique_keys)
            except (UnicodeDecodeError, json.JSONDecodeError) as exc:
                raise ResultFileError(f"{path}: corrupt or truncated JSON ({exc})") from exc
            except RecursionError:  # arrays nested deeper than the parser's stack: never a trace
                raise ResultFileError(
                    f"{path}: corrupt JSON (nested too deeply to parse; save() writes arrays "
                    "as flat lists)"
                ) from None
            except _DuplicateKey as exc:
                raise ResultFileError(
                    f"{path}: {exc}; save() never writes one (a corrupt or merged file)"
                ) from None
            return cls.from_dict(d, source=str(path))
        raise ResultFileError(
            f"{path}: neither an rltheory JSON trace nor an .npz archive (starts with {raw[:8]!r})"
        )

    @classmethod
    def _load_npz(cls, raw: bytes, path: Path) -> Trace:
        try:
            with np.load(io.BytesIO(raw), allow_pickle=False) as z:
                files = list(z.files)
                if "__format__" not in files:
                    raise ValueError("not an rltheory trace (no __format__ entry)")
                tag = str(z["__format__"])
                if tag != f"{_FORMAT}/{_VERSION}":
                    raise ValueError(
                        f"not a supported rltheory trace (format {tag!r}, expected {_FORMAT}/{_VERSION})"
                    )
                metrics = {f[len("metric/") :]: z[f] for f in files if f.startswith("metric/")}
                final = {f[len("final/") :]: z[f] for f in files if f.startswith("final/")}
                trace = cls(
                    metrics=metrics,
                    iteration=_iteration_array(z["iteration"], "iteration"),
                    wall_time=z["wall_time"].astype(float),
                    final=final,
                )
            trace._check_consistent()
        except (zipfile.BadZipFile, EOFError, OSError, KeyError, ValueError, OverflowError) as exc:
            raise ResultFileError(f"{path}: corrupt, truncated or foreign .npz ({exc})") from exc
        return trace


def _iteration_index(iteration: Any) -> int:
    """``iteration`` as an int for :meth:`TraceRecorder.record`; located errors otherwise."""
    if isinstance(iteration, (bool, np.bool_)) or not isinstance(iteration, (int, np.integer)):
        raise TypeError(
            f"TraceRecorder.record: iteration must be an integer; got {iteration!r:.80} ({type(iteration).__name__})"
        )
    it = int(iteration)
    if not -(2**63) <= it < 2**63:
        raise ValueError(f"TraceRecorder.record: iteration must lie in the int64 range; got {it}")
    return it


class TraceRecorder:
    """Accumulates metrics iteration by iteration, then freezes them into a :class:`Trace`.

    Values may be device (cupy) arrays: they stay on the device until :meth:`finish`, which
    copies each metric's rows to the host in one transfer, and from the first such record
    on, the wall times come from a :class:`~rltheory.backend.DeviceClock` (CUDA events: the
    time at which the work queued before each record finished). Recording therefore never
    waits for the GPU; only a driver's own stopping test does. Recorded arrays are kept, not
    copied (on the host too): a driver must not modify them in place afterwards.
    """

    def __init__(self) -> None:
        self._t0 = time.perf_counter()
        self._rows: dict[str, list[Any]] = {}
        self._it: list[int] = []
        self._wall: list[float] = []
        self._clock: Any = None  # a DeviceClock once a device array has been recorded
        self._clock_offset = 0.0  # host seconds from construction to the clock's zero
        self._clock_from = 0  # records before the clock started (host-timed)

    def record(self, iteration: int, **metrics: Any) -> None:
        """Record ``metrics`` for ``iteration`` (every call must give the same names).

        Raises
        ------
        TypeError
            ``iteration`` is not an integer (a bool, a float such as ``1.7``, text).
        ValueError
            ``iteration`` lies outside the int64 range of :attr:`Trace.iteration`; the
            metric names differ from the first record's; a metric is not a real number or
            array, or changes shape. Nothing of a refused record is kept.
        """
        it = _iteration_index(iteration)
        if self._it and set(metrics) != set(self._rows):
            raise ValueError(
                f"metrics {sorted(metrics)} differ from the first record's {sorted(self._rows)}"
            )
        device = None
        rows: dict[str, Any] = {}
        for k, v in metrics.items():  # check every value before keeping any (no half record)
            if on_device(v):
                device = v
                row = v
            else:
                try:
                    h = np.asarray(to_numpy(v))
                    if h.dtype.kind in "SUV":  # np.asarray(h, float) would parse '1.5' into 1.5
                        raise TypeError(f"it holds text/bytes (dtype {h.dtype}), not numbers")
                    # a real value stored as complex is fine; else it would be cut
                    if h.dtype.kind == "c":
                        if np.any(h.imag != 0):
                            raise TypeError("its imaginary part is not 0 and would be discarded")
                        h = h.real
                    row = np.asarray(h, dtype=float)
                # OverflowError: an int past the float range
                except (TypeError, ValueError, OverflowError) as exc:
                    raise ValueError(
                        f"TraceRecorder.record: metric {k!r} at iteration {iteration} must be a real "
                        f"number or array; got {v!r:.80} ({exc})"
                    ) from None
            if k in self._rows and tuple(row.shape) != tuple(self._rows[k][0].shape):
                raise ValueError(
                    f"TraceRecorder.record: metric {k!r} has shape {tuple(row.shape)} at iteration "
                    f"{iteration} but {tuple(self._rows[k][0].shape)} at the first record "
                    f"(iteration {self._it[0]}); a metric keeps one shape"
                )
            rows[k] = row
        for k, row in rows.items():
            self._rows.setdefault(k, []).append(row)
        self._it.append(it)
        if self._clock is None and device is not None:
            self._clock = device_clock(array_namespace(device))
            self._clock_offset = time.perf_counter() - self._t0
            self._clock_from = len(self._wall)
        if self._clock is not None:
            self._clock.mark()
        else:
            self._wall.append(time.perf_counter() - self._t0)

    def finish(self, **final: Any) -> Trace:
        """Freeze the records; keyword arrays (e.g. ``policy=..., V=...``) go to ``Trace.final``."""
        wall = np.asarray(self._wall, dtype=float)
        if self._clock is not None:
            wall = np.concatenate(
                [wall[: self._clock_from], self._clock_offset + self._clock.times()]
            )
        return Trace(
            metrics={k: stack_rows(v) for k, v in self._rows.items()},
            iteration=np.asarray(self._it, dtype=np.int64),
            wall_time=wall,
            final={k: np.asarray(to_numpy(v)) for k, v in final.items()},
        )


def stack_rows(rows: list[Any]) -> np.ndarray:
    """Stack recorded rows on the host: device rows in one transfer when all are on one."""
    if rows and all(on_device(r) for r in rows):
        return np.asarray(to_numpy(array_namespace(rows[0]).stack(rows)), dtype=float)
    return np.stack([np.asarray(to_numpy(r), dtype=float) for r in rows])
