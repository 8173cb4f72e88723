"""Resumable parameter sweeps on any :class:`concurrent.futures.Executor`.

``sweep(fn, grid, seeds)`` evaluates ``fn(config, seed)`` for every config in
``grid`` and every seed, on a local process pool by default or on any
``concurrent.futures.Executor`` — in particular a Dask cluster through
``distributed.Client(...).get_executor()`` (with dask-jobqueue the same call runs
on SLURM). With ``results_path`` every finished point is appended at once as one
JSON line (flushed and fsynced), so an interrupted sweep, rerun with the same
arguments, computes only the points that are missing.

Results file format (JSON lines, strict JSON)::

    {"format": "rltheory.sweep", "version": 2, "fn": "package.module.function"}
    {"key": ..., "config": {...}, "seed": 0, "result": ..., "wall_time": 0.12}
    {"key": ..., "config": {...}, "seed": 1, "result": [1.0, "nan"], "wall_time": 0.1,
     "nonfinite": [["result", 1]]}
    ...

JSON has no NaN or infinity, so a non-finite float in a config or a result is written as the text
``"nan"``, ``"inf"`` or ``"-inf"`` and its place is listed in the record's ``"nonfinite"`` (paths
of keys and indices from the record down; :mod:`rltheory.experiments._sweep_json`), and is read
back as the float. Version-1 files (written before; non-finite floats as the non-standard tokens
``NaN``/``Infinity``) are still read, and a sweep resumed on one appends version-1 records, so
that the file stays readable by the rltheory that wrote it.

A final line cut off by an interruption (no trailing newline) is dropped and
recomputed, with a warning; any other malformed line, a missing or foreign
header, or a header naming another function raises :class:`ResultFileError`.
"""

from __future__ import annotations

import itertools
import json
import math
import multiprocessing
import os
import time
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Executor, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .._atomic_write import _discard, _stage, _sync_directory
from ..trace import ResultFileError
from ._sweep_json import decode_nonfinite, encode_nonfinite, strict_loads
from ._sweep_names import _check_named, _fn_name, _json_default

__all__ = ["SweepPoint", "sweep", "grid_product", "load_results"]

_FORMAT = "rltheory.sweep"
_VERSION = 2  # version 1: non-finite floats as NaN/Infinity tokens (still read and appended to)


@dataclass(frozen=True)
class SweepPoint:
    """One evaluated point of a sweep.

    Attributes
    ----------
    config : dict
        The grid entry after a JSON round trip (tuples and arrays become lists), the
        same whether computed now or read back from the results file.
    seed : int
    result : Any
        ``fn(config, seed)`` after a JSON round trip (lists, dicts, floats, ...),
        identical whether computed now or read back from the results file.
    wall_time : float
        Seconds ``fn`` took.
    cached : bool
        True when read from the results file instead of computed in this call.
    """

    config: dict
    seed: int
    result: Any
    wall_time: float
    cached: bool = False


def grid_product(**axes: Sequence[Any]) -> list[dict]:
    """Cartesian product of named axes: ``grid_product(S=[10, 20], gamma=[0.9])`` →
    ``[{"S": 10, "gamma": 0.9}, {"S": 20, "gamma": 0.9}]`` (last axis fastest)."""
    names = list(axes)
    for n in names:
        if isinstance(axes[n], (str, bytes)) or not isinstance(axes[n], Iterable):
            raise ValueError(f"grid axis {n!r} must be a sequence of values; got {axes[n]!r}")
    return [
        dict(zip(names, vals, strict=True))
        for vals in itertools.product(*(list(axes[n]) for n in names))
    ]


def _dumps(x: Any, *, allow_nan: bool = False) -> str:
    """Compact sorted JSON; NaN/Infinity tokens only where ``allow_nan`` (in-memory round trips
    and version-1 files), a ``ValueError`` otherwise."""
    return json.dumps(
        x, default=_json_default, sort_keys=True, separators=(",", ":"), allow_nan=allow_nan
    )


def _as_json(x: Any) -> Any:
    """``x`` after a JSON round trip (tuples -> lists, numpy -> Python, keys -> text), floats kept."""
    return json.loads(_dumps(x, allow_nan=True))


def _key(config: Mapping, seed: int, version: int = _VERSION) -> str:
    """The point's identity: its config as the results file holds it, and its seed.

    The config is taken after its JSON round trip, so that the writer (given ``{10: 1, 2: 2}``)
    and a reader of the file (``{"10": 1, "2": 2}``) sort its keys alike."""
    c = _as_json(dict(config))
    if version == 1:
        return _dumps({"config": c, "seed": int(seed)}, allow_nan=True)
    c, paths = encode_nonfinite(c)
    return _dumps({"config": c, "seed": int(seed), **({"nonfinite": paths} if paths else {})})


def _record(key: str, config: Any, seed: int, result: Any, wall: float, version: int) -> dict:
    """A results-file record; for version 2 with non-finite floats as text listed in ``nonfinite``."""
    rec = {
        "key": key,
        "config": _as_json(config),
        "seed": seed,
        "result": result,
        "wall_time": wall,
    }
    if version == 1:
        return rec
    body, paths = encode_nonfinite({"config": rec["config"], "result": result})
    rec.update(body)
    if paths:
        rec["nonfinite"] = paths
    return rec


def _create_header(path: Path, header: str) -> bool:
    """Create ``path`` holding ``header`` atomically, only if no file is there; False if one is.

    ``os.replace`` of a staged file would replace a results file that another sweep created after
    this one found none (two jobs started on one results file): its points, and those it appends
    to its open handle, went to a file no longer in the folder. ``os.link`` fails instead. Where
    the file system has no hard links the staged file is renamed, as :func:`rltheory.trace.write_atomic` does."""
    tmp = _stage(path, header)
    try:
        try:
            os.link(tmp, path)
        except FileExistsError:
            if path.exists():  # a results file another sweep created meanwhile
                return False
            os.replace(tmp, path)  # a dangling symlink: replaced, as write_atomic replaces it
        except OSError:  # no hard links here (some network/FUSE file systems): rename
            os.replace(tmp, path)
    finally:
        _discard(tmp)
    _sync_directory(path.parent)
    return True


def _run_point(fn: Callable, config: dict, seed: int) -> tuple[Any, float]:
    t0 = time.perf_counter()
    out = fn(config, seed)
    return out, time.perf_counter() - t0


def load_results(
    path: str | os.PathLike, *, fn: Callable | None = None, repair: bool = False
) -> dict[str, SweepPoint]:
    """Read a sweep results file into ``{key: SweepPoint}``.

    Parameters
    ----------
    path : path-like
    fn : callable, optional
        If given, the header must name this function.
    repair : bool
        Cut a trailing partial line (left by an interruption) off the file.

    Raises
    ------
    ResultFileError
        Missing/foreign header, another function's file, or a malformed line
        other than a cut-off last line (in a version-2 file also a ``NaN``/``Infinity`` token or
        a ``nonfinite`` path that leads to no ``"nan"``/``"inf"``/``"-inf"``); the message gives
        the file and line number.
    """
    return _load(Path(path), fn=fn, repair=repair)[1]


def _load(path: Path, *, fn: Callable | None, repair: bool) -> tuple[int, dict[str, SweepPoint]]:
    """:func:`load_results`, with the file's format version."""
    raw = path.read_bytes()
    if not raw:
        raise ResultFileError(
            f"{path}: empty file, not an rltheory sweep results file (no header line)"
        )
    lines = raw.split(b"\n")
    tail = lines.pop()  # after the last newline: b"" for a complete file, else a cut-off record
    if not lines:
        raise ResultFileError(
            f"{path}: no complete header line; not an rltheory sweep results file"
        )
    try:
        header = json.loads(lines[0])
    # RecursionError: arrays nested deeper than the parser's stack
    except (json.JSONDecodeError, UnicodeDecodeError, RecursionError) as exc:
        raise ResultFileError(
            f"{path}: line 1 is not a JSON header ({exc}); not an rltheory sweep results file"
        ) from exc
    if not isinstance(header, dict) or header.get("format") != _FORMAT:
        raise ResultFileError(
            f"{path}: line 1 is not an rltheory sweep header (format {header.get('format') if isinstance(header, dict) else None!r})"
        )
    version = header.get("version")
    # exactly the integer the writer writes: true or 1.0 are not version 1
    if isinstance(version, bool) or not isinstance(version, int) or version not in (1, _VERSION):
        raise ResultFileError(f"{path}: unsupported sweep file version {header.get('version')!r}")
    if fn is not None and header.get("fn") != _fn_name(fn):
        raise ResultFileError(
            f"{path}: results belong to {header.get('fn')!r}, not {_fn_name(fn)!r}; use another results_path"
        )
    out: dict[str, SweepPoint] = {}
    for i, line in enumerate(lines[1:], start=2):
        try:
            rec = json.loads(line) if version == 1 else strict_loads(line)
            if not isinstance(rec, dict):
                raise ValueError(f"a record is a JSON object; got {type(rec).__name__}")
            if version != 1 and "nonfinite" in rec:
                decode_nonfinite(rec, rec["nonfinite"])
            key, config, seed, wall = rec["key"], rec["config"], rec["seed"], rec["wall_time"]
            # as the writer writes them: nothing is cast (seed 0.9 is not seed 0, "1" is no time)
            if isinstance(seed, bool) or not isinstance(seed, int):
                raise ValueError(f"seed = {seed!r:.40} is not an integer")
            if not isinstance(config, dict):
                raise ValueError(f"config = {config!r:.40} is not an object")
            if (
                isinstance(wall, bool)
                or not isinstance(wall, (int, float))
                or not 0 <= wall < math.inf
            ):
                raise ValueError(f"wall_time = {wall!r:.40} is not a finite number of seconds >= 0")
            if key != _key(config, seed, version):
                raise ValueError("key does not match config and seed")
            point = SweepPoint(
                config=config, seed=seed, result=rec["result"], wall_time=float(wall), cached=True
            )
        except (
            json.JSONDecodeError,
            UnicodeDecodeError,
            KeyError,
            TypeError,
            ValueError,
            RecursionError,  # nested deeper than the parser's stack: never a record
        ) as exc:
            raise ResultFileError(f"{path}: line {i} is corrupt ({exc}): {line[:80]!r}") from exc
        out.setdefault(key, point)
    if tail:
        warnings.warn(
            f"{path}: dropping a cut-off last record ({len(tail)} bytes, from an interrupted run); "
            "that point will be recomputed",
            RuntimeWarning,
            stacklevel=2,
        )
        if repair:
            with open(path, "r+b") as fh:
                fh.truncate(len(raw) - len(tail))
                fh.flush()
                os.fsync(fh.fileno())
    return version, out


def _append(fh: Any, record: dict) -> None:
    # strict JSON; a version-1 record (no nonfinite field) keeps its NaN/Infinity tokens
    fh.write((_dumps(record, allow_nan="nonfinite" not in record) + "\n").encode("utf-8"))
    fh.flush()
    os.fsync(fh.fileno())


def _default_executor(n_tasks: int, max_workers: int | None) -> Executor:
    workers = max_workers or min(n_tasks, os.cpu_count() or 1)
    methods = multiprocessing.get_all_start_methods()
    # forkserver/spawn: never fork a process that may hold threads (Dask, BLAS)
    ctx = multiprocessing.get_context("forkserver" if "forkserver" in methods else "spawn")
    return ProcessPoolExecutor(max_workers=max(1, workers), mp_context=ctx)


def sweep(
    fn: Callable[[dict, int], Any],
    grid: Sequence[Mapping[str, Any]] | Mapping[str, Sequence[Any]],
    seeds: Iterable[int],
    *,
    executor: Executor | None = None,
    results_path: str | os.PathLike | None = None,
    max_workers: int | None = None,
    progress: bool = False,
) -> list[SweepPoint]:
    """Evaluate ``fn(config, seed)`` on every ``config in grid`` × ``seed in seeds``.

    Parameters
    ----------
    fn : callable
        ``fn(config: dict, seed: int) -> JSON-serialisable result`` (numbers, lists,
        dicts; numpy arrays/scalars are converted; NaN and infinities are kept, see the
        module docstring for their strict-JSON form). It must be importable by name
        (a module-level function) to run in worker processes, and it should take all
        its randomness from ``seed``. The results file is tied to ``fn``'s module and
        qualified name (with the ``repr`` of the object of a bound method or a callable object,
        and the bound arguments of a :func:`functools.partial`), so with ``results_path`` it
        must not be a lambda, a closure, or the method of an object with the default ``repr``.
    grid : sequence of dict, or dict of sequences
        The configurations; a dict of sequences is expanded with :func:`grid_product`.
        Values must be JSON-serialisable (they form the point's key; non-finite floats
        included).
    seeds : iterable of int
    executor : concurrent.futures.Executor, optional
        Where to run. Default: a local :class:`~concurrent.futures.ProcessPoolExecutor`
        (forkserver start method, ``max_workers`` processes), shut down on return.
        A given executor (e.g. ``distributed.Client(...).get_executor()``) is used
        as is and not shut down.
    results_path : path-like, optional
        JSON-lines file; points already in it are not recomputed, and every newly
        finished point is appended (flushed and fsynced) as soon as it finishes.
    max_workers : int ≥ 1, optional
        Size of the default pool (default: ``min(#points, cpu_count)``).
    progress : bool
        Show a tqdm progress bar.

    Returns
    -------
    list[SweepPoint]
        One per (config, seed), in grid-major, seed-minor order.

    Raises
    ------
    ValueError
        Empty grid or seeds (or ``seeds`` not an iterable), a non-integer seed, a config that
        is not a dict of JSON values, a result that is not JSON-serialisable (circular ones
        included), ``max_workers < 1``, a ``results_path`` that is a folder, or a
        ``results_path`` for a lambda or a closure (``<locals>``), whose name other functions
        share, so that their points would be read as ``fn``'s (or for an object whose default
        ``repr`` gives an address, not its state).
    ResultFileError
        ``results_path`` exists but is not this function's results file.
    Exception
        The first exception raised by ``fn`` (or the ``ValueError`` of the first result
        that is not JSON-serialisable), after every other point that finished has been
        written to ``results_path``; points not yet started are cancelled.

    Examples
    --------
    >>> from concurrent.futures import ThreadPoolExecutor
    >>> def shifted_square(config, seed):
    ...     return config["x"] ** 2 + seed
    >>> with ThreadPoolExecutor(2) as ex:
    ...     points = sweep(shifted_square, {"x": [1, 2]}, [0, 10], executor=ex)
    >>> [(p.config["x"], p.seed, p.result) for p in points]
    [(1, 0, 1), (1, 10, 11), (2, 0, 4), (2, 10, 14)]
    """
    if max_workers is not None and (
        isinstance(max_workers, bool)
        or not isinstance(max_workers, (int, np.integer))
        or max_workers < 1
    ):
        raise ValueError(f"max_workers must be None or an integer >= 1; got {max_workers!r}")
    if isinstance(grid, Mapping):
        configs = grid_product(**grid)
    elif isinstance(grid, (str, bytes)) or not isinstance(grid, Iterable):
        raise ValueError(
            f"grid must be a sequence of dicts or a dict of sequences; got {grid!r:.80}"
        )
    else:
        configs = []
        for i, c in enumerate(grid):
            if not isinstance(c, Mapping):
                raise ValueError(
                    f"grid[{i}] must be a dict of JSON values; got {type(c).__name__} {c!r:.80}"
                )
            configs.append(dict(c))
    if isinstance(seeds, (str, bytes)) or not isinstance(seeds, Iterable):
        # list(3) raised "'int' object is not iterable", naming no argument
        raise ValueError(f"seeds must be an iterable of integers; got {seeds!r:.80}")
    seeds = list(seeds)
    if not configs:
        raise ValueError("sweep needs at least one config in grid")
    if not seeds:
        raise ValueError("sweep needs at least one seed")
    for i, s in enumerate(seeds):
        if isinstance(s, bool) or not isinstance(s, (int, np.integer)):
            raise ValueError(f"seeds[{i}] must be an integer; got {s!r}")
    seeds = [int(s) for s in seeds]
    for i, c in enumerate(configs):
        try:
            _key(c, 0)
        # ValueError: a circular config; RecursionError: one nested too deeply
        except (TypeError, ValueError, RecursionError) as exc:
            raise ValueError(
                f"grid[{i}] = {c!r:.200} is not a dict of JSON values ({exc})"
            ) from exc

    version = _VERSION
    done: dict[str, SweepPoint] = {}
    fh = None
    if results_path is not None:
        _check_named(fn)
        path = Path(results_path)
        if path.is_dir():  # read_bytes() raised a bare IsADirectoryError naming no argument
            raise ValueError(
                f"results_path {str(path)!r} is a folder; give the path of a results file in it"
            )
        header = _dumps({"format": _FORMAT, "version": _VERSION, "fn": _fn_name(fn)}) + "\n"
        # the header appears atomically (temp file + link): an interruption leaves no file, or a
        # complete header, never an empty/cut header that a rerun must reject; and only where no
        # file is: a sweep that created it since the check above keeps its file and its points
        if path.exists() or not _create_header(path, header):
            version, done = _load(path, fn=fn, repair=True)
        fh = open(path, "ab")
    # keyed as the file keys them (versions differ only for configs with non-finite floats)
    points = [(_key(c, s, version), c, s) for c in configs for s in seeds]

    todo = [(k, c, s) for k, c, s in points if k not in done]
    todo = list({k: (k, c, s) for k, c, s in todo}.values())  # a config listed twice runs once
    own = executor is None and bool(todo)
    ex = _default_executor(len(todo), max_workers) if own else executor
    bar = None
    if progress:
        from tqdm.auto import tqdm  # noqa: PLC0415

        bar = tqdm(total=len(points), initial=len(points) - len(todo), desc=f"sweep {_fn_name(fn)}")
    first_error: BaseException | None = None
    try:
        pending: dict[Future, tuple[str, dict, int]] = {}
        for k, c, s in todo:
            pending[ex.submit(_run_point, fn, c, s)] = (k, c, s)  # type: ignore[union-attr]
        while pending:
            finished, _ = wait(list(pending), return_when=FIRST_COMPLETED)
            for fut in finished:
                k, c, s = pending.pop(fut)
                if fut.cancelled():
                    continue
                exc = fut.exception()
                result, secs = fut.result() if exc is None else (None, 0.0)
                if exc is None:
                    try:
                        result = _as_json(result)
                    # ValueError: a circular result; RecursionError: one nested too deeply
                    except (TypeError, ValueError, RecursionError) as err:
                        exc = ValueError(
                            f"fn result for config {c!r}, seed {s} is not JSON-serialisable: {err}"
                        )
                        exc.__cause__ = err
                if exc is not None:
                    if first_error is None:
                        first_error = exc
                        # stop what has not started; let running points finish
                        for other in pending:
                            other.cancel()
                    continue
                # the config as the results file holds it (tuples -> lists, ...), so a point reads
                # the same whether computed now or on a rerun; fn itself got the grid entry as given
                done[k] = SweepPoint(
                    config=_as_json(c), seed=s, result=result, wall_time=float(secs)
                )
                if fh is not None:
                    _append(fh, _record(k, c, s, result, float(secs), version))
                if bar is not None:
                    bar.update(1)
    finally:
        if fh is not None:
            fh.close()
        if bar is not None:
            bar.close()
        if own:
            ex.shutdown(wait=True, cancel_futures=True)  # type: ignore[union-attr]
    if first_error is not None:
        raise first_error
    return [done[k] for k, _, _ in points]
