"""Small numerical helpers shared by the iterative solvers and the exact LP solvers."""

from __future__ import annotations

import contextlib
import ctypes
import functools
import math
import os
import sys
import threading
import warnings
from collections.abc import Iterator
from typing import Any

__all__ = [
    "HIGHS_OPTIONS",
    "HIGHS_TIME_LIMIT",
    "contraction_steps",
    "higham_gamma",
    "highs_linprog",
    "highs_console_silenced",
    "subnormal_spacing",
    "unit_range",
]

# small_matrix_value: HiGHS treats |entries| below it as zero (default 1e-9; 1e-12 is the least it
# accepts). Transition probabilities of 1e-10 are legitimate model entries, and dropping them
# moved an LP value by 2.5e-4 at γ = 0.999 (tests/mdp/test_discounted.py)
# time_limit: seconds per HiGHS call. A 3-state CMDP LP at γ = 1 − 2^-34 ran for over ten minutes
# inside HiGHS (deaf to SIGINT); at the limit HiGHS stops with scipy status 1 ("Time limit
# reached"), which the callers report as a located SolverError.
HIGHS_TIME_LIMIT = 300.0
HIGHS_OPTIONS = {
    "primal_feasibility_tolerance": 1e-10,
    "dual_feasibility_tolerance": 1e-10,
    "small_matrix_value": 1e-12,
    "time_limit": HIGHS_TIME_LIMIT,
}
# scipy's status for "numerical difficulties" (HiGHS model status Unknown and the like)
_HIGHS_TROUBLE = 4


def higham_gamma(n: int, u: float) -> float:
    """``γ_n = n u/(1 − n u)``: a computed sum of ``n`` products is within ``γ_n`` (relative, of the sum
    of the terms' absolute values) of the exact one, for any order of summation (Higham 2002,
    *Accuracy and Stability of Numerical Algorithms*, 2nd ed., Lemma 3.1 and eq. (3.4))."""
    return n * u / (1.0 - n * u)


def subnormal_spacing(dtype: Any, xp: Any) -> float:
    """The spacing ``s = ε·f_min`` of the subnormal numbers of ``dtype`` (``ε`` the machine epsilon,
    ``f_min`` the smallest normal number): a product whose result is subnormal errs by at most
    ``s/2`` absolutely (Higham 2002, §2.1, eq. (2.8)), which the relative model ``γ_n`` misses."""
    fi = xp.finfo(dtype)
    return float(fi.eps) * float(fi.smallest_normal)


def contraction_steps(g: float, start: float, tol: float, *, strict: bool = False) -> int:
    r"""Smallest ``k ≥ 0`` with ``g^k · start ≤ tol`` (``< tol`` when ``strict``): the a-priori
    step count of a ``g``-contraction whose certificate starts at ``start``
    (``0 ≤ g < 1``, ``tol > 0``).

    With ``x = (log start − log tol) / (−log g)`` this is ``⌈x⌉`` (``⌊x⌋ + 1`` when
    ``strict``), after the cases ``start`` already below ``tol`` (``k = 0``, which also covers
    a ``start`` that underflowed to 0) and ``g = 0`` (one step). Logarithms of the factors are
    taken separately: the form ``log(tol(1 − g)/(g·d₀)) / log g`` used before divided by an
    underflowed 0 for a subnormal discount such as ``5e-324``, and ``start / tol`` can overflow.
    Used by the solvers' iteration caps and by the iteration bounds of
    :mod:`rltheory.bounds.mdp` (the strict form of Puterman's stopping rules).
    """
    if (start < tol) if strict else (start <= tol):
        return 0
    if g <= 0.0:
        return 1
    x = (math.log(start) - math.log(tol)) / -math.log(g)
    return int(math.floor(x)) + 1 if strict else max(1, math.ceil(x))


def highs_linprog(c: Any, *, method: str = "highs-ds", presolve: bool = True, **kwargs: Any) -> Any:
    r"""``scipy.optimize.linprog`` by HiGHS at the tolerances the exact LP solvers need, with retries.

    The simplex (``method``, default the dual simplex) runs with primal and dual feasibility
    tolerances ``1e-10`` (:data:`HIGHS_OPTIONS`). When it reports numerical difficulties (scipy
    status 4: e.g. HiGHS model status *Unknown* with the primal infeasible at those tolerances,
    which a stress run met on a discounted LP with ``γ = 1.2e-7``, where every coefficient of
    ``γP`` is below ``1e-7``), the same LP is solved again by the interior-point method with
    crossover (``"highs-ipm"``), which returns a basic solution and its marginals as the
    simplex does. Any other status is returned as it is, for the caller to report. The callers
    certify what they return independently of the solver (Bellman residuals, LP gaps).

    HiGHS also drops matrix entries below its ``small_matrix_value`` (default ``1e-9``); the
    options lower it to ``1e-12``, the least HiGHS accepts, so that a transition probability of
    ``1e-10`` stays in the LP. (scipy passes that option to HiGHS verbatim and warns that it does
    not know it; the warning is silenced here.) Entries between ``1e-12`` and ``1e-11`` can in turn
    leave HiGHS unable to decide an LP at the edge of feasibility (model status *Unknown* from
    both methods, where HiGHS's default drop reports *Infeasible*; met by a bisection for the
    first feasible threshold of a CMDP): only then are both methods run once more at HiGHS's
    default ``1e-9``, the setting the solvers used before.

    ``presolve=False`` switches HiGHS's presolve off for every attempt (for callers whose LP the
    presolve misjudges: the multichain average-reward LP with transitions of ``1e-7``, which it
    called *unbounded* and, with the implied row ``Σx = 1`` stated, *Unknown*).

    Each call stops after ``HIGHS_OPTIONS["time_limit"]`` seconds (:data:`HIGHS_TIME_LIMIT`,
    300): scipy status 1, "Time limit reached", returned like any other status for the caller
    to report.

    HiGHS's console text is discarded (:func:`highs_console_silenced`: it prints some messages,
    e.g. at model status *Not Set*, with a bare ``printf`` that its options do not reach); the
    result's ``status`` and ``message`` carry what it reports.
    """
    from scipy.optimize import linprog  # noqa: PLC0415

    res = None
    with _options_warning_ignored():
        for small in (HIGHS_OPTIONS["small_matrix_value"], 1e-9):
            options = {**HIGHS_OPTIONS, "small_matrix_value": small}
            if not presolve:
                options["presolve"] = False
            # the simplex first, then interior point
            for how in dict.fromkeys((method, "highs-ipm")):
                with highs_console_silenced():
                    res = linprog(c, method=how, options=options, **kwargs)
                if res.status != _HIGHS_TROUBLE:
                    return res
    return res


_WARNING_LOCK = threading.Lock()
_warning = {"depth": 0, "entry": None}  # calls in progress, and the filter they installed


@contextlib.contextmanager
def _options_warning_ignored() -> Iterator[None]:
    """Ignore scipy's ``OptimizeWarning`` "Unrecognized options detected" (it passes
    ``small_matrix_value`` to HiGHS verbatim) while any thread runs :func:`highs_linprog`.

    ``warnings.catch_warnings`` saves and restores the process-wide filter list, so threads
    that entered and left it out of order removed each other's filter (the warning reached
    users) or left one installed for good. Here the first call in installs one filter and the
    last call out removes that same entry, under a lock."""
    from scipy.optimize import OptimizeWarning  # noqa: PLC0415

    with _WARNING_LOCK:
        if _warning["depth"] == 0:
            warnings.filterwarnings(
                "ignore", message="Unrecognized options detected", category=OptimizeWarning
            )
            _warning["entry"] = warnings.filters[0]
        _warning["depth"] += 1
    try:
        yield
    finally:
        with _WARNING_LOCK:
            _warning["depth"] -= 1
            if _warning["depth"] == 0:
                with contextlib.suppress(ValueError):  # removed by resetwarnings() meanwhile
                    warnings.filters.remove(_warning["entry"])
                # what filterwarnings does after a change (a private hook; absent: nothing cached
                # needs it, as ignored warnings are not recorded in the registries)
                with contextlib.suppress(AttributeError):
                    warnings._filters_mutated()  # type: ignore[attr-defined]
                _warning["entry"] = None


_CONSOLE_LOCK = threading.Lock()
_console = {"depth": 0, "saved": -1}  # HiGHS calls in progress, and the real fd 1 while silenced


@functools.cache
def _c_library() -> Any:
    """The C library of this process (``None`` where it cannot be loaded, e.g. on Windows)."""
    try:
        return ctypes.CDLL(None)
    except (OSError, TypeError):
        return None


def _flush_c_stdout() -> None:
    """``fflush(NULL)``: C's buffered standard output (HiGHS's ``printf``) goes out to the file
    descriptor it is meant for before fd 1 changes. A no-op where no C library is found."""
    with contextlib.suppress(OSError, AttributeError, TypeError):
        _c_library().fflush(None)


def _switch_to_devnull() -> int:
    """Point fd 1 to ``os.devnull``; the duplicate of the real fd 1 to switch back to, or -1
    (fd 1 left as it is) where there is no fd 1 or no ``os.devnull`` to open."""
    try:
        saved = os.dup(1)
    except OSError:
        return -1
    try:
        null = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(null, 1)
        finally:
            os.close(null)
    except OSError:
        os.close(saved)
        return -1
    return saved


@contextlib.contextmanager
def highs_console_silenced() -> Iterator[None]:
    """Run HiGHS with its console text discarded: file descriptor 1 points to ``os.devnull``
    while the block runs, and back to the real standard output after it (also on an error).

    HiGHS (inside scipy) prints some messages with a bare ``printf``, which neither scipy's
    ``disp=False`` (its default) nor HiGHS's ``output_flag``/``log_to_console`` options reach:
    e.g. ``Highs::returnFromOptimizeModel: return_status = -1 != 0 = run_return_status For
    model_status_ = Not Set`` when an LP ends with model status *Not Set* (scipy status 4, met by
    the CMDP LP at ``γ = 1 − 2^-33`` of ``tests/mdp/test_h71_cmdp_near_one.py``). What the caller
    needs of it is in the result: ``status`` and ``message``.

    Pending Python and C output is flushed before fd 1 is switched and C output again before it
    is switched back, so nothing printed before the block is lost or lands in ``os.devnull``.
    Calls from several threads at once nest (a counter under a lock: the first switches, the last
    switches back); text that *other* threads write to standard output while a HiGHS call runs
    is discarded with HiGHS's. A process forked meanwhile starts with its real fd 1 and no call
    in progress. Where fd 1 cannot be duplicated (no standard output) or
    ``os.devnull`` cannot be opened, the block runs as it is.
    """
    with _CONSOLE_LOCK:
        if _console["depth"] == 0:
            with contextlib.suppress(OSError, ValueError, AttributeError):
                sys.stdout.flush()
            _flush_c_stdout()
            _console["saved"] = _switch_to_devnull()
        _console["depth"] += 1
    try:
        yield
    finally:
        with _CONSOLE_LOCK:
            _console["depth"] -= 1
            if _console["depth"] == 0 and _console["saved"] >= 0:
                _flush_c_stdout()  # HiGHS's buffered text goes to os.devnull, not to stdout later
                os.dup2(_console["saved"], 1)
                os.close(_console["saved"])
                _console["saved"] = -1


def _reset_in_child() -> None:
    """After ``fork``: no HiGHS call runs in the child (only the forking thread is copied), so
    fd 1 goes back to the real standard output, the filter comes off and the locks are new (one
    held by another thread of the parent would never be released in the child)."""
    global _CONSOLE_LOCK, _WARNING_LOCK
    _CONSOLE_LOCK, _WARNING_LOCK = threading.Lock(), threading.Lock()
    if _console["depth"] and _console["saved"] >= 0:
        with contextlib.suppress(OSError):
            os.dup2(_console["saved"], 1)
            os.close(_console["saved"])
    _console.update(depth=0, saved=-1)
    if _warning["depth"]:
        with contextlib.suppress(ValueError):
            warnings.filters.remove(_warning["entry"])
    _warning.update(depth=0, entry=None)


if hasattr(os, "register_at_fork"):  # POSIX
    os.register_at_fork(after_in_child=_reset_in_child)


def unit_range(*arrays: Any) -> tuple[Any, ...]:
    """The arrays mapped by one common positive affine map ``x ↦ (x − lo)/(hi − lo)`` into ``[0, 1]``
    (``lo``, ``hi`` the least and largest entry of them all; zeros when they are all equal).

    For the equilibrium LPs: optimal strategies, CE/CCE sets and welfare maximisers are unchanged by
    such a map, and HiGHS, which treats |entries| below 1e-9 as zero and has absolute tolerances,
    then sees entries of size one (payoffs of size 1e-12 lost every entry before).
    """
    lo = min(float(a.min()) for a in arrays)
    span = max(float(a.max()) for a in arrays) - lo
    return tuple((a - lo) / span if span > 0 else a * 0.0 for a in arrays)
