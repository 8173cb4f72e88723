r"""Step-size schedules of the average-reward actor-critics, and the mixing-time-aware choice.

* :class:`StepSchedule` — ``α_t = c / (1 + t/t0)^p``: constant for ``p = 0``; the
  Robbins–Monro conditions ``Σα_t = ∞, Σα_t² < ∞`` hold for ``1/2 < p ≤ 1``
  (Robbins & Monro 1951; the two-timescale critic/actor pairs of Borkar 2008, ch. 6).
* :func:`mixing_step_sizes` — constant steps ``∝ 1/τ_mix`` (Wu, Zhang, Xu, Gu 2020,
  Thm 4.5; Chen & Zhao 2023), the oracle that multi-level Monte Carlo actor-critic
  (:func:`rltheory.algorithms.mac.multilevel_actor_critic`) removes.

The algorithms accept any callable ``t -> α_t``; each value is checked where it is used
(a finite number ``> 0``, the schedule and ``t`` named otherwise).

References
----------
Robbins, H., Monro, S. (1951). A stochastic approximation method. Ann. Math. Statist. 22(3).
Borkar, V. S. (2008). *Stochastic Approximation: A Dynamical Systems Viewpoint*. Ch. 6.
Wu, Y., Zhang, W., Xu, P., Gu, Q. (2020). A finite-time analysis of two time-scale actor-critic
methods. NeurIPS. Theorem 4.5.
Chen, X., Zhao, L. (2023). Finite-time analysis of single-timescale actor-critic. NeurIPS.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._validate import check_real, real_scalar

__all__ = ["StepSchedule", "mixing_step_sizes"]


@dataclass(frozen=True)
class StepSchedule:
    r"""Step sizes ``α_t = c / (1 + t/t0)^p`` (``p = 0``: constant ``c``).

    Robbins–Monro conditions ``Σα_t = ∞, Σα_t² < ∞`` hold for ``1/2 < p ≤ 1``.

    Examples
    --------
    >>> StepSchedule(0.5, t0=10, power=1.0)(10)
    0.25
    """

    c: float
    t0: float = 1.0
    power: float = 0.0

    def __post_init__(self) -> None:
        # numpy scalars are accepted and stored as Python floats; bools are not numbers here
        for name in ("c", "t0"):
            v = getattr(self, name)
            x = real_scalar(v)
            if not (math.isfinite(x) and x > 0):
                raise ValueError(f"StepSchedule.{name} must be a finite number > 0; got {v!r}")
            object.__setattr__(self, name, x)
        p = real_scalar(self.power)
        if not 0 <= p <= 1:
            raise ValueError(f"StepSchedule.power must lie in [0, 1]; got {self.power!r}")
        object.__setattr__(self, "power", p)

    def __call__(self, t: Any) -> Any:
        """``α_t`` for a time ``t ≥ 0`` (a float), or elementwise for an array of times (an array).

        An array of times is what the Q-learning family passes (visit counts, one per run); it used
        to be refused with "defined for times t >= 0; got t = array([0.])", a time that is ``≥ 0``.
        A time beyond the float range (``10**400``) is ``inf``: ``α = 0`` for ``p > 0``, ``c`` for ``p = 0``
        (the division ``t/t0`` raised ``OverflowError``).
        """
        if isinstance(t, np.ndarray) and t.ndim > 0:
            if t.dtype.kind not in "iuf":
                raise ValueError(
                    f"StepSchedule is defined for real times t >= 0; got an array of dtype {t.dtype}"
                )
            bad = np.argwhere(~(t >= 0))
            if bad.size:
                i = tuple(int(j) for j in bad[0])
                raise ValueError(
                    f"StepSchedule is defined for times t >= 0; got t[{', '.join(map(str, i))}] = "
                    f"{t[i].item()!r}"
                )
            return self.c / (1.0 + t.astype(float) / self.t0) ** self.power
        # t = -t0 raised ZeroDivisionError and t < -t0 a TypeError on a complex power; NaN gave NaN
        x = real_scalar(t)
        if isinstance(t, (bool, np.bool_)) or not x >= 0:
            raise ValueError(f"StepSchedule is defined for times t >= 0; got t = {t!r}")
        return float(self.c / (1.0 + x / self.t0) ** self.power)


def _check_schedules(**schedules: Any) -> None:
    """Each step-size argument must be a :class:`StepSchedule` (or another callable ``t -> α_t``)."""
    for name, sch in schedules.items():
        if sch is not None and not callable(sch):
            raise TypeError(
                f"{name} must be a StepSchedule (a callable t -> step size); got {sch!r}"
            )


def _step(schedule: Any, t: int, name: str) -> float:
    """``schedule(t)`` as a float, which must be a finite step size ``> 0``.

    A callable other than :class:`StepSchedule` is not validated on construction: a negative, zero
    or NaN step ran silently (the iterates went backwards or to NaN); now the first bad ``t`` is named.
    """
    a = schedule(t)
    if isinstance(a, (bool, np.bool_)) or not isinstance(a, (int, float, np.integer, np.floating)):
        raise TypeError(f"{name}(t={t}) must return a number (the step size); got {a!r}")
    x = float(a)
    if not (math.isfinite(x) and x > 0):
        raise ValueError(f"{name}(t={t}) must be a finite step size > 0; got {a!r}")
    return x


def mixing_step_sizes(
    tau_mix: float, *, critic: float = 0.5, actor: float = 0.05
) -> tuple[StepSchedule, StepSchedule]:
    r"""Mixing-time-aware constant steps ``α = critic/τ_mix`` (critic, gain) and ``ζ = actor/τ_mix`` (actor).

    Finite-time analyses of single-trajectory actor-critic under Markovian
    sampling take step sizes inversely proportional to the mixing time (Wu, Zhang,
    Xu, Gu 2020, Thm 4.5; Chen & Zhao 2023): the bias of a Markovian sample
    decays only after ``τ_mix`` steps, so a step must average over that many.
    MAC (Suttle et al. 2023) is built precisely to drop this oracle.

    Raises
    ------
    ValueError
        ``tau_mix < 1`` or not finite; ``critic`` or ``actor`` not a finite number ``> 0``; a step
        ``critic/tau_mix`` or ``actor/tau_mix`` that underflows to 0 (the argument and values named).
    """
    if not real_scalar(tau_mix) >= 1:
        raise ValueError(f"tau_mix must be a number >= 1; got {tau_mix!r}")
    tau_mix = check_real(tau_mix, "tau_mix")
    critic = check_real(critic, "critic", low=0.0, low_open=True)
    actor = check_real(actor, "actor", low=0.0, low_open=True)
    # critic = 1e-300 with tau_mix = 1e308 passed both checks, and the step 1e-608 underflowed to 0.0:
    # the error came from StepSchedule ("StepSchedule.c ... got 0.0"), naming none of these arguments
    steps = []
    for name, scale in (("critic", critic), ("actor", actor)):
        step = scale / tau_mix
        if not step > 0:
            raise ValueError(
                f"mixing_step_sizes: the step {name}/tau_mix = {scale!r}/{tau_mix!r} underflows to "
                f"{step!r} in float64; it must be a number > 0 (raise {name} or lower tau_mix)"
            )
        steps.append(StepSchedule(step))
    return steps[0], steps[1]
