r"""Shared pieces of the average-reward algorithms: argument readers, samplers, exact evaluations.

Private to :mod:`rltheory.algorithms.average_reward` and the sibling modules it re-exports from:

* readers that turn user arguments into validated host arrays (a single average-reward
  model, real arrays, critic features ``Φ``, stochastic policies) with located errors;
* inverse-CDF sampling of one index from a cumulative row (``searchsorted`` on a uniform);
* the exact gain ``g^π``, bias ``h^π`` (:func:`rltheory.mdp.gain_bias`, normalised by
  ``μ_πᵀh = 0``) and stationary law ``μ_π`` of a policy, and the host softmax policy.

References
----------
Puterman, M. L. (1994). *Markov Decision Processes*. §8.2 (gain, bias, Poisson equation).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._validate import _source_atol, check_finite
from ..backend import require_host
from ..mdp.average import gain_bias
from ..mdp.bellman import policy_transition_matrix
from ..mdp.mixing import stationary_distribution
from ..mdp.model import FiniteMDP
from .policy_gradient import _softmax_policy
from .step_schedules import StepSchedule, _step


def _avg_model(mdp: FiniteMDP, what: str) -> tuple[np.ndarray, np.ndarray]:
    if not isinstance(mdp, FiniteMDP):
        raise TypeError(f"{what} needs a FiniteMDP; got {type(mdp).__name__}")
    if mdp.batch_shape:
        raise ValueError(f"{what} needs a single model; got batch_shape={mdp.batch_shape}")
    return require_host(mdp.P, what).astype(float), require_host(mdp.R, what).astype(float)


def _real_array(x: Any, name: str, *, bools: bool = False) -> np.ndarray:
    """``x`` as a new float host array; ``TypeError`` naming ``name`` unless it holds real numbers.

    ``np.asarray(x, dtype=float)`` parsed strings as numbers (``theta0=[["1", "2"]]`` ran), dropped
    imaginary parts and read bools as 0/1 weights; bools are accepted only where ``bools`` says so
    (indicator features).
    """
    raw = np.asarray(x)
    if raw.dtype.kind not in ("biuf" if bools else "iuf"):
        raise TypeError(f"{name} must hold real numbers; got an array of dtype {raw.dtype.name}")
    if not bools and isinstance(x, (list, tuple)) and raw.dtype.kind in "iuf":
        # numpy stores [True, 0.5] as floats and [True, 4] as integers: the dtype does not show
        # the bool, so Python sequences are scanned entry by entry
        obj = np.asarray(x, dtype=object)
        if obj.shape == raw.shape:
            for i in np.ndindex(obj.shape):
                if isinstance(obj[i], (bool, np.bool_)):
                    raise TypeError(
                        f"{name} must hold real numbers; {name}[{', '.join(map(str, i))}] = {obj[i]!r} (bool)"
                    )
    return np.array(raw, dtype=float)


def _features(features: Any, S: int) -> np.ndarray:
    if features is None:
        return np.eye(S)
    Phi = _real_array(features, "features", bools=True)
    if Phi.ndim != 2 or Phi.shape[0] != S:
        raise ValueError(f"features must have shape (S, d) = ({S}, d); got {Phi.shape}")
    if not np.all(np.isfinite(Phi)):
        i = tuple(int(k) for k in np.argwhere(~np.isfinite(Phi))[0])
        raise ValueError(f"features must be finite; features{list(i)} = {Phi[i]}")
    return Phi


def _policy(pi: Any, S: int, A: int) -> np.ndarray:
    """``pi`` as a float ``(S, A)`` array of distributions; a located ``ValueError`` otherwise.

    Entries ``≥ −1e-12`` and row sums within ``1e-8`` of 1 (round-off of a computed policy), or
    within ``16·eps`` of the policy's own float dtype where that is coarser (float32: ``1.9e-6``,
    the rule of :func:`rltheory._validate._source_atol`); such rows are divided by their sums in
    float64. A float32 uniform policy over 7 actions (rows ``1 + 4.5e-8``) was refused.
    """
    rule = f"pi must be a stochastic policy of shape (S, A) = {(S, A)}"
    raw = np.asarray(pi)
    if raw.dtype.kind not in "iuf":  # bools, strings, objects
        raise ValueError(f"{rule}; got an array of dtype {raw.dtype.name}")
    atol = _prob_atol(raw)
    pol = raw.astype(float)
    if pol.shape != (S, A):
        raise ValueError(f"{rule}; got shape {pol.shape}")
    check_finite(pol, "pi", ("s", "a"))
    if np.any(pol < -1e-12):
        s, a = (int(i) for i in np.unravel_index(np.argmin(pol), pol.shape))
        raise ValueError(f"{rule}; most negative entry pi(s={s}, a={a}) = {float(pol[s, a])!r}")
    dev = np.abs(pol.sum(-1) - 1.0)
    if np.any(dev > atol):
        s = int(np.argmax(dev))
        raise ValueError(
            f"{rule}; each pi[s, :] must sum to 1, row s={s} sums to {float(pol[s].sum())!r} "
            f"(atol={atol:.2g})"
        )
    if atol > 1e-8:  # a coarser dtype: its rounding taken out (float64 policies are unchanged)
        pol = pol / pol.sum(-1, keepdims=True)
    return pol


def _prob_atol(x: Any) -> float:
    """Row-sum tolerance for a probability argument ``x``, judged in the dtype it was given in.

    ``max(1e-8, 16·eps)`` of a floating ``x`` (float32: ``1.9e-6``), else ``1e-8``: the readers cast
    to float64 first, so float32 rows (``7 · fl32(1/7) = 1 + 4.5e-8``) were held to float64's
    ``1e-8`` and refused. Rows accepted at a coarser tolerance are renormalised by the callers.
    """
    return _source_atol(np.asarray(x), np)


def _cdf(p: np.ndarray) -> np.ndarray:
    c = np.cumsum(p, axis=-1)
    return c / c[..., -1:]


def _draw(cdf_row: np.ndarray, u: float) -> int:
    """The index ``min(#{i : cdf_row[i] ≤ u}, n − 1)`` (inverse-CDF draw of one index).

    The ``ndarray.searchsorted`` method, not the ``np.searchsorted`` wrapper: the same index,
    without the wrapper's dispatch (a third of this function's time in the per-step loops).
    """
    i = int(cdf_row.searchsorted(u, side="right"))
    n = cdf_row.shape[-1]
    return i if i < n else n - 1


def _host_softmax(theta: Any) -> np.ndarray:
    """Host copy of :func:`rltheory.algorithms.policy_gradient.softmax_policy` (rows of ``θ``).

    ``exp(θ − max θ) / Σ exp(θ − max θ)`` along the last axis. A float64 numpy array (every call
    from the actor-critic loops, once per transition) takes plain numpy calls — the same max shift,
    ``exp``, sum and division as :func:`rltheory.algorithms.soft.softmax` under numpy, so the same
    bits — instead of the array-API path, whose namespace lookup and cast cost ~20 µs a call (40%
    of the mac-mixing experiment's quick run). Anything else goes through the array-API path.
    """
    if type(theta) is np.ndarray and theta.dtype == np.float64:
        z = np.exp(theta - theta.max(axis=-1, keepdims=True))
        return z / z.sum(axis=-1, keepdims=True)
    return np.asarray(_softmax_policy(np.asarray(theta, dtype=float)))


def _constant_step(schedule: Any, name: str) -> float | None:
    """The step of a constant :class:`StepSchedule` (``power = 0``), checked once; else ``None``.

    ``StepSchedule(c, power=0)(t) = c / (1 + t/t0)**0.0 = c`` exactly for every ``t``, so the
    per-transition loops use this value instead of calling ``_step(schedule, t, name)`` (about a
    fifth of their time) and get the same bits; other schedules are still evaluated and checked
    at every ``t``.
    """
    if type(schedule) is StepSchedule and schedule.power == 0:
        return _step(schedule, 0, name)
    return None


def _expected_increment(P: np.ndarray, v: np.ndarray) -> np.ndarray:
    """``Σ_{s'} P(s'|s, a) (v(s') − v(s))``, shape ``(S, A)``: ``P v − v`` without its cancellation.

    On a slowly mixing chain ``v`` (a bias ``h^π``, a critic ``Φω``) is of size ``1/p`` for
    switching probabilities ``p`` while ``P v − v`` is of size 1: forming ``P @ v`` first loses
    ``ε·|v|`` (and the rounding of the diagonal ``1 − p``), so ``∇J`` came out with a relative
    error ``≈ ε/p`` (``1.8e-4`` at ``p = 1e-12``). The differences ``v(s') − v(s)`` are exact
    where ``v`` is, and the diagonal term is exactly 0.
    """
    return (P * (v[None, None, :] - v[:, None, None])).sum(axis=-1)


def _diverged(what: str, t: int, value: Any, eta: float, w: np.ndarray, **steps: Any) -> ValueError:
    """The located error of a critic or gain estimate that overflowed at update ``t``.

    ``value`` is the non-finite quantity seen (the TD error ``δ_t`` or an MLMC estimate); ``steps``
    maps each step-size argument's name to its schedule, evaluated at ``t`` in the message. A
    critic step too large for the features made ``ω`` overflow and the iterates NaN: MAC and
    differential TD returned ``η = nan``, ``ω = [nan, ...]``, the actor-critic failed one record
    later with "pi must be finite; pi(s=0, a=0) = nan".
    """
    wmax = float(np.max(np.abs(w))) if w.size else 0.0
    used = ", ".join(f"{name}({t}) = {_step(sch, t, name)!r}" for name, sch in steps.items())
    return ValueError(
        f"{what} diverged at update t={t}: {value} is not finite (gain estimate η = {float(eta)!r}, "
        f"max|ω| = {wmax!r}; {used}); use smaller steps"
    )


def _gain_bias(mdp: FiniteMDP, pi: np.ndarray) -> tuple[float, np.ndarray]:
    if mdp.gamma is not None:
        mdp = mdp.replace(gamma=None)
    g, h = gain_bias(mdp, pi, per_state=False)
    return float(np.asarray(g)), np.asarray(h, dtype=float)


def _stationary(mdp: FiniteMDP, pi: np.ndarray) -> np.ndarray:
    return np.asarray(
        stationary_distribution(np.asarray(policy_transition_matrix(mdp, pi))), dtype=float
    )
