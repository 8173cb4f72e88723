r"""Seed robustness of a reproduction: every claim's verdict over many seeds.

A reproduction that passes at seed 0 may pass by luck. :func:`seed_robustness` runs one
registered experiment at each of several seeds and reports, per claim, at which seeds
it passed, what was measured, and — for claims judged by a confidence interval — how
surprising the number of misses is.

What a miss means depends on the claim's kind (:class:`rltheory.bounds.Claim`):

* ``"bound"`` — a theorem's inequality. It must hold at every seed; one miss is a
  counterexample (or a bug).
* ``"rate"`` — the claimed rate must lie in the fitted rate's interval at level ``L``
  (widened by the claim's ``tol``). Even for a true claim a calibrated interval misses
  with probability at most ``1 − L``, so some misses over many seeds are expected.
  The claim also needs an informative interval (half-width at most the claim's
  precision, :meth:`rltheory.bounds.Claim.required_precision`); a failure for want of one is
  *unmeasured*, not a miss. The report gives the one-sided binomial tail
  ``p = P[Bin(n, 1 − L) ≥ k]`` for ``k`` misses in the ``n`` seeds whose interval was
  informative: a small ``p`` says the claim fails more often than its interval's level
  explains (seeds are independent draws); unmeasured seeds are listed apart. Bootstrap percentile intervals are approximate, so read ``p`` as a screen,
  not an exact test.
* ``"rate_at_most"`` / ``"rate_at_least"`` — judged on the point estimate with an
  allowance; no nominal miss rate, so no ``p``.

A claim that a run does not check at all (an experiment may leave one out where its data
admit no check) is *absent* at that seed: its record covers only the seeds that checked it,
and the report's JSON lists the others as the claim's ``absent_seeds``.

The command-line form is ``rltheory reproduce NAME --seeds 0:20`` (``--all`` for every
experiment), which writes ``NAME.seeds.json``.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import stats

from .base import Experiment, ExperimentResult, jsonable, versions

__all__ = ["ClaimSeeds", "SeedReport", "parse_seeds", "seed_robustness"]


@dataclass(frozen=True)
class ClaimSeeds:
    """One claim's verdicts over the seeds at which it was checked.

    Attributes
    ----------
    name, kind : str
        The claim's name and kind.
    expected : float or None
        The claimed value (``None`` for a bound), when it is the same at every seed;
        ``None`` when it differs between seeds (a claim whose threshold is computed from
        the run's own data, e.g. a fitted ``φ̂²``): see ``expected_at``.
    seeds : tuple of int
        The seeds at which the claim was checked, in run order.
    passed : tuple of bool
        The verdict at each seed.
    measured : tuple of float
        The measured number at each seed (fitted rate, or the bound's worst ratio).
    level : float or None
        Confidence level of the fitted intervals (``"rate"`` claims with a fit at some seed;
        ``None`` otherwise).
    expected_at, tol_at : tuple
        The claimed value and its allowance at each seed, in the order of ``seeds``
        (empty when not recorded).
    unmeasured : tuple of bool
        Per seed: the claim failed because its fitted interval was not informative, or (a
        ``"rate"`` claim) because there was no fit at all (empty when not recorded; see the
        module docstring and :meth:`rltheory.bounds.ClaimCheck.to_dict`).
    """

    name: str
    kind: str
    expected: float | None
    seeds: tuple[int, ...]
    passed: tuple[bool, ...]
    measured: tuple[float, ...]
    level: float | None = None
    expected_at: tuple[float | None, ...] = ()
    tol_at: tuple[float, ...] = ()
    unmeasured: tuple[bool, ...] = ()

    def __post_init__(self) -> None:
        # no seed divided by zero in pass_rate; a short or long column failed in zip() or read
        # a passed seed as unmeasured (which left it out of the binomial screen)
        n = len(self.seeds)
        if n == 0:
            raise ValueError(
                f"ClaimSeeds {self.name!r}: seeds must hold at least one seed; got none"
            )
        for field in ("passed", "measured", "expected_at", "tol_at", "unmeasured"):
            m = len(getattr(self, field))
            if m != n and not (m == 0 and field in ("expected_at", "tol_at", "unmeasured")):
                raise ValueError(f"ClaimSeeds {self.name!r}: {field} has {m} entries for {n} seeds")
        for s, ok, u in zip(self.seeds, self.passed, self.unmeasured, strict=False):
            if ok and u:
                raise ValueError(
                    f"ClaimSeeds {self.name!r}: seed {s} passed but is marked unmeasured "
                    "(unmeasured is a kind of failure)"
                )

    @property
    def unmeasured_seeds(self) -> tuple[int, ...]:
        """The seeds at which the claim failed unmeasured (an uninformative interval)."""
        return tuple(
            s for s, u in zip(self.seeds, self.unmeasured, strict=False) if u
        )  # () if unrecorded

    @property
    def failed_seeds(self) -> tuple[int, ...]:
        """The seeds at which the claim failed."""
        return tuple(s for s, ok in zip(self.seeds, self.passed, strict=True) if not ok)

    @property
    def pass_rate(self) -> float:
        """Share of the seeds at which the claim passed."""
        return sum(self.passed) / len(self.passed)

    @property
    def miss_p_value(self) -> float | None:
        """``P[Bin(n, 1 − level) ≥ misses]`` for a ``"rate"`` claim, else ``None`` (module docstring).

        Only seeds with an informative interval count, in ``n`` and in the misses; ``None``
        when there is none."""
        if self.kind != "rate" or self.level is None:
            return None
        unmeasured = set(self.unmeasured_seeds)
        n = len(self.seeds) - len(unmeasured)
        if n == 0:
            return None
        misses = sum(1 for s in self.failed_seeds if s not in unmeasured)
        return float(stats.binom.sf(misses - 1, n, 1.0 - self.level))

    def to_dict(self) -> dict:
        """JSON-ready record, with the summary numbers."""
        m = np.asarray(self.measured, dtype=float)
        return {
            "name": self.name,
            "kind": self.kind,
            "expected": self.expected,
            "level": self.level,
            "seeds": list(self.seeds),
            "passed": list(self.passed),
            "measured": [float(x) for x in m],
            "expected_at": list(self.expected_at),
            "tol_at": list(self.tol_at),
            "failed_seeds": list(self.failed_seeds),
            "unmeasured_seeds": list(self.unmeasured_seeds),
            "pass_rate": self.pass_rate,
            "miss_p_value": self.miss_p_value,
            # over the seeds that measured a number (NaN: a rate claim with no fit at that seed)
            **_summary(m),
        }


def _summary(m: np.ndarray) -> dict[str, float]:
    """``measured_min``/``_median``/``_max`` over the non-NaN entries of ``m`` (NaN if none)."""
    m = m[~np.isnan(m)]
    if m.size == 0:
        return dict.fromkeys(("measured_min", "measured_median", "measured_max"), math.nan)
    return {
        "measured_min": float(np.min(m)),
        "measured_median": float(np.median(m)),
        "measured_max": float(np.max(m)),
    }


@dataclass(frozen=True)
class SeedReport:
    """What :func:`seed_robustness` returns.

    Attributes
    ----------
    name : str
        The experiment.
    preset : {"quick", "full"}
    seeds : tuple of int
        The seeds run, in order.
    claims : tuple of ClaimSeeds
        One per claim name, in the order the claims first appeared.
    run_passed : tuple of bool
        Whether the whole run passed, per seed.
    elapsed_s : tuple of float
        Wall time of each run.
    """

    name: str
    preset: str
    seeds: tuple[int, ...]
    claims: tuple[ClaimSeeds, ...]
    run_passed: tuple[bool, ...]
    elapsed_s: tuple[float, ...]

    @property
    def passed(self) -> bool:
        """True iff every run passed."""
        return all(self.run_passed)

    @property
    def failed_seeds(self) -> tuple[int, ...]:
        """The seeds whose run failed (some claim failed)."""
        return tuple(s for s, ok in zip(self.seeds, self.run_passed, strict=True) if not ok)

    def claim(self, name: str) -> ClaimSeeds:
        """The record of the claim ``name``."""
        for c in self.claims:
            if c.name == name:
                return c
        raise KeyError(
            f"no claim named {name!r} in {self.name!r}; claims: {[c.name for c in self.claims]}"
        )

    def absent_seeds(self, name: str) -> tuple[int, ...]:
        """The seeds whose run did not check the claim ``name`` at all (in run order).

        An experiment may leave a claim out where its data admit no check (entropy-npg's rate
        claims where the error reaches the floor within 5 iterates); the claim's own record
        then covers fewer seeds than the report, and its pass count is over those only.
        """
        checked = set(self.claim(name).seeds)
        return tuple(s for s in self.seeds if s not in checked)

    def to_json_dict(self) -> dict:
        """JSON-ready record (``pass`` is true iff every run passed); each claim's entry adds
        ``absent_seeds`` (:meth:`absent_seeds`)."""
        return {
            "name": self.name,
            "preset": self.preset,
            "seeds": list(self.seeds),
            "pass": self.passed,
            "run_passed": list(self.run_passed),
            "failed_seeds": list(self.failed_seeds),
            "elapsed_s": list(self.elapsed_s),
            "claims": [
                jsonable({**c.to_dict(), "absent_seeds": list(self.absent_seeds(c.name))})
                for c in self.claims
            ],
            "versions": versions(),
        }


MAX_SEEDS = 100_000  # a robustness run reruns the experiment once per seed


def parse_seeds(spec: str) -> tuple[int, ...]:
    """Seeds from ``"START:STOP"`` (``range(START, STOP)``) or a comma list ``"0,3,7"``.

    Raises
    ------
    TypeError
        ``spec`` is not a ``str``.
    ValueError
        Not one of those forms, a negative seed, an empty range, a range of more than
        :data:`MAX_SEEDS` seeds (rejected before it is built), or a seed listed twice.
    """
    if not isinstance(spec, str):  # 5 or None failed in spec.strip(): "no attribute 'strip'"
        raise TypeError(
            f"seeds must be text such as '0:20' or '0,3,7'; got {type(spec).__name__} {spec!r:.40}"
        )
    text = spec.strip()
    try:
        if ":" in text:
            lo, hi = (int(x) for x in text.split(":"))
            if hi <= lo:
                raise ValueError(
                    f"seeds {spec!r}: the range {lo}:{hi} is empty (STOP must exceed START)"
                )
            if lo < 0:
                raise ValueError(f"seeds {spec!r}: seeds[0] must be non-negative; got {lo}")
            if hi - lo > MAX_SEEDS:  # checked before the range is built (each seed is a full run)
                raise ValueError(
                    f"seeds {spec!r}: the range {lo}:{hi} has {hi - lo} seeds; at most {MAX_SEEDS}"
                )
            seeds = tuple(range(lo, hi))
        else:
            seeds = tuple(int(x) for x in text.split(","))
    except ValueError as exc:
        if str(exc).startswith("seeds "):
            raise
        raise ValueError(
            f"seeds {spec!r}: expected START:STOP or a comma list of integers such as 0,3,7"
        ) from None
    try:
        return _check_seeds(seeds)
    except ValueError as exc:
        raise ValueError(f"seeds {spec!r}: {exc}") from None


def _check_seeds(seeds: Iterable[int]) -> tuple[int, ...]:
    """The seeds as a tuple of distinct non-negative ints (located errors otherwise)."""
    first: dict[int, int] = {}
    for i, s in enumerate(seeds):
        if isinstance(s, bool) or not isinstance(s, (int, np.integer)):
            raise TypeError(f"seeds[{i}] must be an integer; got {s!r}")
        if s < 0:
            raise ValueError(f"seeds[{i}] must be non-negative; got {s}")
        if int(s) in first:
            raise ValueError(f"seeds[{i}] repeats seed {s} (first at seeds[{first[int(s)]}])")
        first[int(s)] = i
    if not first:
        raise ValueError("seeds must contain at least one seed; got none")
    return tuple(first)


def seed_robustness(
    experiment: Experiment | str,
    seeds: Iterable[int],
    *,
    full: bool = False,
    progress: bool = False,
    on_result: Callable[[int, ExperimentResult], object] | None = None,
) -> SeedReport:
    """Run ``experiment`` at every seed and collect each claim's verdicts.

    Parameters
    ----------
    experiment : Experiment or str
        A registered experiment or its name (:func:`rltheory.experiments.get`).
    seeds : iterable of int
        Distinct non-negative seeds.
    full : bool
        Use the ``full()`` preset instead of ``quick()``.
    progress : bool
        Passed to each run (progress bars).
    on_result : callable, optional
        ``on_result(seed, result)`` after each run (e.g. to save its JSON).

    Returns
    -------
    SeedReport
        Per-claim verdicts, measured numbers and, for interval claims, the binomial
        tail of the misses (module docstring).

    Examples
    --------
    >>> from rltheory.experiments.robustness import seed_robustness
    >>> rep = seed_robustness("discount-to-gain", [0, 1])
    >>> rep.passed, rep.seeds
    (True, (0, 1))
    """
    if isinstance(experiment, str):
        from . import get  # noqa: PLC0415

        experiment = get(experiment)
    if not isinstance(experiment, Experiment):
        raise TypeError(
            f"experiment must be an Experiment or a registered name; got {type(experiment).__name__}"
        )
    seeds = _check_seeds(seeds)
    records: dict[str, dict[str, Any]] = {}
    run_passed, elapsed = [], []
    for seed in seeds:
        t0 = time.perf_counter()
        result = experiment.reproduce(full=full, seed=seed, progress=progress)
        elapsed.append(time.perf_counter() - t0)
        run_passed.append(result.passed)
        _collect(records, result, seed)
        if on_result is not None:
            on_result(seed, result)
    claims = tuple(
        ClaimSeeds(
            name=name,
            kind=r["kind"],
            expected=_same(r["expected"]),
            seeds=tuple(r["seeds"]),
            passed=tuple(r["passed"]),
            measured=tuple(r["measured"]),
            level=r["level"],
            expected_at=tuple(r["expected"]),
            tol_at=tuple(r["tol"]),
            unmeasured=tuple(r["unmeasured"]),
        )
        for name, r in records.items()
    )
    return SeedReport(
        name=experiment.name,
        preset="full" if full else "quick",
        seeds=seeds,
        claims=claims,
        run_passed=tuple(run_passed),
        elapsed_s=tuple(elapsed),
    )


def _collect(records: dict[str, dict[str, Any]], result: ExperimentResult, seed: int) -> None:
    """Append the checks of one run to the per-claim records.

    A claim name that a run checks more than once is recorded as ``"name [k]"`` for its
    ``k``-th check (``k ≥ 2``), so that repeated checks are matched by position across seeds.
    """
    count: dict[str, int] = {}
    for c in result.checks:
        count[c.claim.name] = count.get(c.claim.name, 0) + 1
        k = count[c.claim.name]
        name = c.claim.name if k == 1 else f"{c.claim.name} [{k}]"
        level = float(c.fit.level) if (c.claim.kind == "rate" and c.fit is not None) else None
        r = records.setdefault(
            name,
            {
                "kind": c.claim.kind,
                "expected": [],
                "tol": [],
                "level": level,
                "seeds": [],
                "passed": [],
                "measured": [],
                "unmeasured": [],
            },
        )
        # a seed without a fit (an explicit verdict where too few points could be fitted) has no
        # level: it agrees with any; seeds with fits must agree with each other
        if r["kind"] != c.claim.kind or (level is not None and r["level"] not in (None, level)):
            raise ValueError(
                f"experiment {result.name!r} at seed {seed}: claim {name!r} changed kind/level between seeds "
                f"({r['kind']}/{r['level']} before, {c.claim.kind}/{level} now)"
            )
        if r["level"] is None:
            r["level"] = level
        r["seeds"].append(seed)
        r["expected"].append(None if c.claim.expected is None else float(c.claim.expected))
        r["tol"].append(float(c.claim.tol))
        r["passed"].append(bool(c.passed))
        r["measured"].append(c.measured)
        # the verdict NAME.json records (a too wide interval, or a rate claim with no fit at all)
        r["unmeasured"].append(c.to_dict()["verdict"] == "unmeasured")


def _same(values: list[float | None]) -> float | None:
    """The common value of ``values``, or ``None`` when they differ."""
    return values[0] if all(v == values[0] for v in values) else None
