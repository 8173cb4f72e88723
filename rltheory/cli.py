"""The ``rltheory`` command.

::

    rltheory list
    rltheory reproduce NAME [--full] [--out DIR] [--seed N] [--quiet]
    rltheory reproduce --all [--full] [--out DIR] [--seed N] [--quiet]
    rltheory reproduce NAME|--all --seeds 0:20 [--full] [--out DIR] [--quiet]
    rltheory solve gridworld [--size 10] [--slip 0.1] [--gamma 0.99] [--method vi|pi|mpi|lp] [--tol 1e-8]

``reproduce`` writes ``DIR/NAME.png`` (measured curves with the theorem's curve
overlaid) and ``DIR/NAME.json`` (config, measured vs claimed rates with their
confidence intervals, ``"pass"``, library versions); it exits with status 1 if
any claim fails. With ``--seeds`` (``START:STOP`` or ``0,3,7``) it runs each experiment at
every seed instead and writes ``DIR/NAME.seeds.json``: each claim's verdict and measured
number per seed, the failing seeds and, for interval claims, the binomial tail of the
misses (:mod:`rltheory.experiments.robustness`); it exits with status 1 if any run failed.
Files are written atomically, and ``NAME.png`` with ``NAME.json`` as a pair: both are
prepared and written to temporary files before either replaces an older one. Status 2
means the command could not do its work: bad arguments, or an ``--out`` folder that cannot
be created or written (tested before any experiment runs) or a file that could not be
written; the message names the folder or file, or a ``solve`` model whose dense transition
array would exceed :data:`SOLVE_MAX_P_BYTES` (refused before it is built). Status 141 (128 + SIGPIPE, as shells report
for other writers) means standard output was closed before the command was done
(``rltheory list | head -1``); nothing is printed about it.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

# the solve command lives in _cli_solve; its cap and size check stay importable from here
from ._cli_solve import (  # noqa: F401
    SOLVE_MAX_P_BYTES,
    _cell,
    _cmd_solve,
    _gridworld_size_error,
    _tolerance,
)

__all__ = ["main"]

#: Exit status when standard output is closed before the command is done (128 + SIGPIPE).
EXIT_BROKEN_PIPE = 141


def _fmt(x: Any) -> str:
    return f"{x:.4g}" if isinstance(x, float) else str(x)


def _claim_line(c: Any) -> str:
    claim = c.claim
    record = c.to_dict()
    # the verdict NAME.json records: "unmeasured" is a failure whose interval was too wide to judge
    verdict = record.get("verdict", "pass" if c.passed else "fail")
    status = verdict.upper()
    if c.fit is not None and claim.kind != "bound":
        lo, hi = c.fit.ci
        detail = (
            f"measured {c.fit.rate:.6g} (CI [{lo:.6g}, {hi:.6g}], window {c.fit.window[0]:g}..{c.fit.window[1]:g})"
            f" vs claimed {claim.kind} {_fmt(claim.expected)} ± {claim.tol:g}"
        )
        if verdict == "unmeasured" and record.get("precision") is not None:
            detail += f"; interval half-width {record['half_width']:.4g} > required {record['precision']:.4g}"
    elif claim.kind != "bound":  # a rate claim judged without a fit (too few points to fit)
        detail = (
            f"no fitted rate (the experiment's own verdict) vs claimed {claim.kind} "
            f"{_fmt(claim.expected)} ± {claim.tol:g}"
        )
    elif (b := c.bound_check) is not None:
        detail = (
            f"worst measured/bound ratio {b.worst_ratio:.4g} at {list(b.argmax)} over {b.n} points"
        )
    else:  # a bound claim given a fit and an explicit verdict
        detail = "no bound check (the experiment's own verdict)"
    return f"  [{status}] {claim.name}: {detail}"


def _cmd_list(args: argparse.Namespace) -> int:
    from . import experiments  # noqa: PLC0415

    names = experiments.names()
    width = max((len(n) for n in names), default=0)
    for n in names:
        print(f"{n:<{width}}  {experiments.get(n).title}")
    return 0


def _cmd_reproduce(args: argparse.Namespace) -> int:
    from . import experiments  # noqa: PLC0415
    from .plot import png_bytes  # noqa: PLC0415

    known = experiments.names()
    if args.all:
        if args.name:
            print("rltheory reproduce: give either NAME or --all, not both", file=sys.stderr)
            return 2
        todo = known
    elif args.name:
        if args.name not in known:
            print(
                f"rltheory reproduce: no experiment named {args.name!r}; known: {', '.join(known)}",
                file=sys.stderr,
            )
            return 2
        todo = [args.name]
    else:
        print(
            "rltheory reproduce: give an experiment NAME or --all (see `rltheory list`)",
            file=sys.stderr,
        )
        return 2
    if args.seeds is not None:
        if args.seed is not None:
            print("rltheory reproduce: give either --seed or --seeds, not both", file=sys.stderr)
            return 2
        from .experiments.robustness import parse_seeds  # noqa: PLC0415

        try:
            seeds = parse_seeds(args.seeds)
        except ValueError as exc:
            print(f"rltheory reproduce: --{exc}", file=sys.stderr)
            return 2
        return _reproduce_seeds(args, todo, seeds)
    seed = 0 if args.seed is None else args.seed
    out = _out_dir(args.out)
    if out is None:
        return 2
    failed = []
    for name in todo:
        exp = experiments.get(name)
        t0 = time.perf_counter()
        # (reproduce: a run that returns no ExperimentResult is named, not an AttributeError below)
        result = exp.reproduce(full=args.full, seed=seed, progress=not args.quiet)
        elapsed = time.perf_counter() - t0
        record = result.to_json_dict()
        record.update(
            {
                "title": exp.title,
                "seed": seed,
                "preset": "full" if args.full else "quick",
                "elapsed_s": elapsed,
            }
        )
        written = _write_all(
            [
                (out / f"{name}.png", png_bytes(exp.plot(result))),
                (out / f"{name}.json", json.dumps(record, indent=1, allow_nan=False)),
            ]
        )
        if written is None:
            return 2
        png, js = written
        verdict = "PASS" if result.passed else "FAIL"
        print(f"{name}: {verdict} ({len(result.checks)} checks, {elapsed:.1f} s) -> {png}, {js}")
        if not args.quiet or not result.passed:
            for c in result.checks:
                if not args.quiet or not c.passed:
                    print(_claim_line(c))
        if not result.passed:
            failed.append(name)
    if failed:
        print(f"failed: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


def _reproduce_seeds(args: argparse.Namespace, todo: list[str], seeds: tuple[int, ...]) -> int:
    """``reproduce --seeds``: one seed-robustness report per experiment."""
    from . import experiments  # noqa: PLC0415
    from .experiments.robustness import seed_robustness  # noqa: PLC0415

    out = _out_dir(args.out)
    if out is None:
        return 2
    failed = []
    for name in todo:
        rep = seed_robustness(experiments.get(name), seeds, full=args.full, progress=not args.quiet)
        written = _write_all(
            [
                (
                    out / f"{name}.seeds.json",
                    json.dumps(rep.to_json_dict(), indent=1, allow_nan=False),
                )
            ]
        )
        if written is None:
            return 2
        (js,) = written
        ok = sum(rep.run_passed)
        print(
            f"{name}: {ok}/{len(seeds)} seeds pass ({len(rep.claims)} claims, {sum(rep.elapsed_s):.1f} s) -> {js}"
        )
        for c in rep.claims:
            absent = rep.absent_seeds(c.name)
            if args.quiet and all(c.passed) and not absent:
                continue
            d = c.to_dict()
            line = (
                f"  [{sum(c.passed)}/{len(c.seeds)}] {c.name}: measured {d['measured_min']:.4g} .. "
                f"{d['measured_median']:.4g} .. {d['measured_max']:.4g} (min .. median .. max)"
            )
            if c.failed_seeds:
                line += f"; failed at seeds {list(c.failed_seeds)}"
            unmeasured = c.unmeasured_seeds
            if unmeasured:
                line += f" ({list(unmeasured)} unmeasured)"
            if absent:  # (the count [k/n] is over the seeds that checked the claim only)
                line += f"; not checked at seeds {list(absent)}"
            p = c.miss_p_value
            misses = len(c.failed_seeds) - len(unmeasured)
            if p is not None and misses:  # the screen counts the seeds with an interval only
                line += (
                    f"; P[misses >= {misses} of {len(c.seeds) - len(unmeasured)}] at level "
                    f"{c.level:g} = {p:.3g}"
                )
            print(line)
        if not rep.passed:
            failed.append(name)
    if failed:
        print(f"failed at some seed: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


def _seed(text: str) -> int:
    """``--seed``: an integer ``≥ 0`` (numpy's generators take no negative seeds)."""
    try:
        seed = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid int value: {text!r}") from None
    if seed < 0:
        raise argparse.ArgumentTypeError(f"must be an integer >= 0; got {seed}")
    return seed


def _out_dir(path: str) -> Path | None:
    """The ``--out`` folder, created when missing; ``None`` (after a message) when it cannot be."""
    if not path:  # Path("") is ".": the files went to the working folder unasked
        print(f"rltheory reproduce: --out {path!r} names no folder", file=sys.stderr)
        return None
    out = Path(path)
    if out.exists() and not out.is_dir():
        print(f"rltheory reproduce: --out {path!r} is a file, not a folder", file=sys.stderr)
        return None
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        print(
            f"rltheory reproduce: cannot create --out {path!r}: {exc.strerror or exc}",
            file=sys.stderr,
        )
        return None
    try:  # before any experiment runs: a folder that exists need not take files
        fd, probe = tempfile.mkstemp(prefix=".rltheory-write-test.", dir=out)
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        print(
            f"rltheory reproduce: cannot write to --out {path!r}: {exc.strerror or exc}",
            file=sys.stderr,
        )
        return None
    return out


def _write_all(files: list[tuple[Path, bytes | str]]) -> list[Path] | None:
    """Write every file or none, atomically: each goes to a fsynced temporary file beside it
    (:func:`rltheory.trace.write_atomic`'s first half), and only when all are written are they
    renamed into place, so a failed write (disk full) never leaves a new ``NAME.png`` next to an
    old ``NAME.json``. ``None`` after a message naming the file when a write fails."""
    from .trace import _discard, _stage, _sync_directory  # noqa: PLC0415

    for path, _ in files:  # os.replace would fail on it after the other file was renamed
        if path.is_dir():
            print(
                f"rltheory reproduce: cannot write {str(path)!r}: a folder has that name",
                file=sys.stderr,
            )
            return None
    staged: list[tuple[str, Path]] = []
    try:
        for path, data in files:
            try:
                staged.append((_stage(path, data), path))
            except OSError as exc:
                print(
                    f"rltheory reproduce: cannot write {str(path)!r}: {exc.strerror or exc}",
                    file=sys.stderr,
                )
                return None
        while staged:
            tmp, path = staged[0]
            try:
                os.replace(tmp, path)
            except OSError as exc:
                print(
                    f"rltheory reproduce: cannot write {str(path)!r}: {exc.strerror or exc}",
                    file=sys.stderr,
                )
                return None
            staged.pop(0)
            _sync_directory(Path(path).parent)
    finally:
        for tmp, _ in staged:  # a failure (or an interrupt) leaves no temporary file behind
            _discard(tmp)
    return [path for path, _ in files]


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="rltheory", description="Reproduce rltheory's theorem checks and solve models."
    )
    sub = p.add_subparsers(dest="command", required=True)
    sub.add_parser("list", help="list the registered reproductions").set_defaults(func=_cmd_list)
    r = sub.add_parser("reproduce", help="run reproductions, writing NAME.png and NAME.json")
    r.add_argument("name", nargs="?", help="experiment name (see `rltheory list`)")
    r.add_argument("--all", action="store_true", help="run every registered experiment")
    r.add_argument(
        "--full", action="store_true", help="use the full preset instead of the quick one"
    )
    r.add_argument("--out", default="figures", help="output folder (default: figures)")
    r.add_argument(
        "--seed", type=_seed, default=None, help="random seed, an integer >= 0 (default 0)"
    )
    r.add_argument(
        "--seeds",
        default=None,
        metavar="START:STOP|S1,S2,...",
        help="run at every seed and write NAME.seeds.json (per-claim verdicts over the seeds)",
    )
    r.add_argument("--quiet", action="store_true", help="no progress bars; print only failures")
    r.set_defaults(func=_cmd_reproduce)
    s = sub.add_parser("solve", help="solve a zoo model and print the certificate")
    s.add_argument("model", choices=["gridworld"])
    s.add_argument("--size", type=int, default=10)
    s.add_argument("--slip", type=float, default=0.1)
    s.add_argument("--gamma", type=float, default=0.99)
    s.add_argument("--method", choices=["vi", "pi", "mpi", "lp"], default="vi")
    s.add_argument(
        "--wall",
        type=_cell,
        action="append",
        default=[],
        metavar="ROW,COL",
        help="a wall cell (repeat for more); drawn as # in the printed policy",
    )
    s.add_argument(
        "--tol",
        type=_tolerance,
        default=1e-8,
        help="certificate target for vi/mpi (a positive number)",
    )
    s.set_defaults(func=_cmd_solve)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``rltheory`` console script; returns the exit status."""
    args = _parser().parse_args(argv)
    try:
        return int(args.func(args))
    except BrokenPipeError:
        # the reader of standard output went away (`rltheory list | head -1`): stop quietly,
        # with 128 + SIGPIPE as a shell reports for other writers, and send what Python still
        # flushes at exit to /dev/null instead of a second BrokenPipeError
        # (stdout may not be a real file: captured output has no usable fileno)
        with contextlib.suppress(OSError, ValueError, AttributeError):
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        return EXIT_BROKEN_PIPE


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
