"""Shared private machinery of the tabular Q-learning family.

Argument checks, the exact ``Q*`` the traces are measured against, the result
type :class:`QLearningResult` (re-exported by :mod:`rltheory.algorithms.q_learning`),
the trace metrics, and :class:`_Runs`, the state shared by the trajectory-based
learners (behaviour trajectories, reward noise, recording).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._validate import as_real_array, check_finite, check_real
from .._validate import check_int as _int
from ..backend import as_float, require_host
from ..mdp.bellman import _check_in_range, _discounted_scale, as_stochastic_policy
from ..mdp.discounted import policy_iteration
from ..mdp.model import FiniteMDP
from ..mdp.sample import _rng, rollout
from ..trace import Trace, TraceRecorder
from ._policy_opt import discount

__all__ = ["QLearningResult", "StepSize"]

StepSize = Callable[[Any], Any]


# -- helpers ---------------------------------------------------------------------------


def _alpha(step_size: StepSize, n: Any) -> np.ndarray:
    """``step_size(n)`` as floats, each in ``[0, 1]`` (the Q-learning update is a convex combination).

    A NaN, an infinite, a negative or a ``> 1`` step raises ``ValueError`` naming the argument
    the schedule got and the value it returned (it used to turn the table into NaN silently).
    A result that is not one step per count (``[0.1]`` for the scalar ``t``, two steps for one
    run) raises ``ValueError`` naming both shapes (numpy's broadcasting or ``float()`` error before).
    A complex, string or boolean result raises ``TypeError`` naming the argument and the value: the
    float cast dropped an imaginary part with only a ``ComplexWarning`` (``0.5+0.5j`` ran as 0.5),
    parsed text (``"0.5"``) and took ``True`` as the step 1.
    """
    raw = step_size(n)
    a = np.asarray(raw)
    if a.dtype.kind in "bcUS":
        what = {"b": "boolean", "c": "complex", "U": "string", "S": "string"}[a.dtype.kind]
        at = (
            f"step_size({np.asarray(n).item()!r})"
            if np.ndim(n) == 0
            else f"step_size(n) for counts n of shape {np.shape(n)}"
        )
        got = f"value {a.ravel()[0].item()!r}" if a.size else f"array of shape {a.shape}"
        raise TypeError(f"step_size must return real steps in [0, 1]; {at} returned a {what} {got}")
    # (an object result, None included, as before: NaN entries, refused below with the value)
    a = np.asarray(raw, dtype=float) if a.dtype.kind == "O" else a.astype(float, copy=False)
    try:
        fits = np.broadcast_shapes(a.shape, np.shape(n)) == np.shape(n)
    except ValueError:
        fits = False
    if not fits:
        at = (
            f"step_size({np.asarray(n).item()!r})"
            if np.ndim(n) == 0
            else f"step_size(n) for counts n of shape {np.shape(n)}"
        )
        raise ValueError(f"step_size must return one step per count; {at} returned shape {a.shape}")
    ok = (a >= 0.0) & (a <= 1.0)
    if not np.all(ok):
        i = np.argwhere(~np.broadcast_to(ok, np.broadcast_shapes(ok.shape, np.shape(n))))[0]
        got = np.broadcast_to(a, np.broadcast_shapes(a.shape, np.shape(n)))[tuple(i)]
        arg = np.broadcast_to(np.asarray(n), np.broadcast_shapes(a.shape, np.shape(n)))[
            tuple(i)
        ].item()
        raise ValueError(
            f"step_size must return steps in [0, 1]; step_size({arg!r}) = {float(got)!r}"
        )
    return a


_FACTORIES: dict[Any, str] = {}  # schedule factory -> how to call it (filled by q_learning.py)


def _factory(example: str) -> Callable[[Callable[..., StepSize]], Callable[..., StepSize]]:
    """Register a schedule factory, so that passing it uncalled is named (:func:`_schedule`)."""

    def register(f: Callable[..., StepSize]) -> Callable[..., StepSize]:
        _FACTORIES[f] = example
        return f

    return register


def _schedule(step_size: Any) -> StepSize:
    """``step_size`` must be a callable schedule (a bare number is a common slip: name it).

    A factory passed uncalled (``step_size=constant_step``) is callable too, but calling it with
    a count raised a misleading "alpha must lie in (0, 1]; got 0" (or "gamma must lie in [0, 1);
    got array([0.])"); it raises ``TypeError`` naming the factory and how to call it.
    """
    if any(step_size is f for f in _FACTORIES):  # identity: a list or an array is unhashable
        raise TypeError(
            f"step_size must be a schedule n -> alpha_n; got the factory {step_size.__name__} "
            f"itself: call it, e.g. step_size={_FACTORIES[step_size]}"
        )
    if not callable(step_size):
        raise TypeError(
            f"step_size must be a callable n -> alpha_n (e.g. constant_step(0.1)); "
            f"got {type(step_size).__name__} {step_size!r}"
        )
    return step_size


def _model(mdp: Any, what: str, single: bool = True) -> tuple[np.ndarray, np.ndarray, float]:
    g = discount(mdp, what, single=single)
    return require_host(mdp.P, what), require_host(mdp.R, what), g


def _q0(mdp: FiniteMDP, Q0: Any, shape: tuple[int, ...]) -> np.ndarray:
    """A writable copy of the initial table ``Q0[..., S, A]`` (finite, located errors) broadcast to ``shape``."""
    Q = as_real_array(require_host(Q0, "Q0"), "Q0", (mdp.S, mdp.A), ("s", "a"), np, np.float64)
    try:
        return np.broadcast_to(Q, shape).copy()
    except ValueError:
        raise ValueError(f"Q0 must broadcast to {shape}; got {Q.shape}") from None


def _q_star(mdp: FiniteMDP, Q_star: Any) -> np.ndarray:
    """The reference ``Q*`` of the traces: ``Q_star`` checked, or policy iteration on the sampled model.

    The samplers draw from ``max(P, 0)/σ`` in float64 (:mod:`rltheory.mdp.sample`) and the tables
    are float64, so the ``Q*`` the iterates converge to is that of the model's float64
    row-normalised copy, whatever its dtype: policy iteration on a float32 model returned a float32
    ``Q*``, ``2.3e-6`` from the exact one, and the trace's error stalled there while the iterates
    reached ``1.8e-15``; on a float64 model whose rows sum to ``1 − 2e-8`` (inside the validators'
    tolerance) at ``γ = 0.99`` the stored kernel's ``Q*`` is ``99.9998`` where the sampled model's
    is ``100``, and the trace of iterates at ``100`` read ``2e-4``. A row that sums to exactly 1 is
    divided by 1: unchanged.
    """
    if Q_star is None:
        P = np.maximum(np.asarray(require_host(mdp.P, "Q_star"), dtype=np.float64), 0.0)
        R = np.asarray(require_host(mdp.R, "Q_star"), dtype=np.float64)
        mdp = FiniteMDP(P / P.sum(-1, keepdims=True), R, mdp.gamma)
        return np.asarray(require_host(policy_iteration(mdp).Q, "Q_star"), dtype=float)
    # complex and string arrays: TypeError naming Q_star (a float cast dropped the imaginary part)
    Q_star = np.asarray(as_float(require_host(Q_star, "Q_star"), np, np.float64, field="Q_star"))
    if Q_star.shape != mdp.batch_shape + (mdp.S, mdp.A):
        raise ValueError(
            f"Q_star must have shape {mdp.batch_shape + (mdp.S, mdp.A)}; got {Q_star.shape}"
        )
    check_finite(Q_star, "Q_star", ("s", "a"))
    return Q_star


def _noise(x: Any) -> float:
    return check_real(x, "reward_noise", low=0.0)


def _scale(gamma: float, *arrays: Any) -> float:
    """A power of two ``c`` to run a learner on ``c·(r, Q_0, σ)`` and divide its results by: exact.

    Every learner of the family is positively homogeneous in ``(r, Q_0, reward_noise)`` for fixed
    random draws (``max``, ``argmax`` and the step sizes commute with ``x ↦ c x``, ``c > 0``), and
    multiplying by a power of two is exact in floating point, so the run on the scaled inputs is,
    to the bit, ``c`` times the run on the inputs. ``c = 1`` unless ``M = max(|r|, |Q_0|, σ)/(1−γ)``
    exceeds ``2^1000``: tables of size ``M`` near the float range overflowed in the intermediate
    ``target − Q`` (rewards ``±1e308``: ``Q = inf`` or NaN where ``Q*`` is finite); then ``c`` is the
    largest power of two with ``c M < 2^1000`` (``c ≥ 2^-78``), which leaves ``2^24`` of headroom;
    only entries below ``2^-1022/c ≤ 2^-944 ≈ 2.5e-284`` become subnormal and lose bits (in float64:
    a float32 ``r`` is cast first).
    """
    m = max(
        (float(np.abs(np.asarray(x, dtype=float)).max(initial=0.0)) for x in arrays), default=0.0
    )
    M = m * 2.0**-1000 / (1.0 - gamma)  # M·2^-1000 (no overflow: m·2^-1000 < 2^25, 1/(1−γ) < 2^54)
    if not M > 1.0:
        return 1.0
    return math.ldexp(1.0, -math.frexp(M)[1])


@dataclass(frozen=True, eq=False)
class QLearningResult:
    """Result of a tabular Q-learning variant.

    Attributes
    ----------
    Q : numpy.ndarray
        Final estimate: ``batch_shape + (S, A)`` (synchronous) or ``(n_runs, S, A)``.
    steps : int
        Iterations (synchronous) or environment transitions (trajectory-based).
    updates : int
        Total tabular updates per run (replay updates included).
    trace : Trace
        ``error`` = ``‖Q_t − Q*‖∞`` and ``value_bias`` = ``Σ_s ρ(s)(max_a Q_t(s, a) − V*(s))``
        per run / instance, at the recorded steps.
    converged : None
        Fixed sample budget (no stopping rule).
    extra : dict
        Variant-specific final quantities (``Q_A`` and ``Q_B`` for double Q, ``V`` and ``A`` for VA).
    """

    Q: np.ndarray
    steps: int
    updates: int
    trace: Trace
    converged: None = None
    extra: dict | None = None


def _metrics(
    Q: np.ndarray, Q_star: np.ndarray, rho: np.ndarray, c: float = 1.0
) -> dict[str, np.ndarray]:
    """The trace metrics of ``Q/c`` against ``Q*/c`` (both given scaled by the power of two ``c``, :func:`_scale`).

    A metric beyond the float range (``‖Q_t − Q*‖∞ = 2e308``) is ``inf``, its value rounded.
    """
    with np.errstate(over="ignore"):
        return {
            "error": np.abs(Q - Q_star).max(axis=(-2, -1)) / c,
            "value_bias": ((Q.max(-1) - Q_star.max(-1)) * rho).sum(-1) / c,
        }


_RUN_NAMES = {2: ("run", "s"), 3: ("run", "s", "a")}  # axes of the trajectory learners' tables


def _check_diverged(what: str, t: int, Q: np.ndarray, names: tuple[str, ...]) -> None:
    """Raise ``ValueError`` where the table of the (scaled) run is not finite: the iterates diverged.

    The learners run on inputs scaled so that every table of a convex-combination update stays
    ``2^24`` below the float range (:func:`_scale`); only an update that overshoots (VA-learning,
    whose update is not a convex combination: Notes of :func:`~rltheory.algorithms.va_learning`)
    gets there. It used to return
    ``inf``/``NaN`` tables and traces with numpy's overflow warnings only.
    """
    finite = np.isfinite(Q)
    if np.all(finite):
        return
    idx = tuple(int(i) for i in np.argwhere(~finite)[0])
    nb = Q.ndim - len(names)
    at = ", ".join(f"{n}={i}" for n, i in zip(names, idx[nb:], strict=True))
    batch = f"batch index {idx[:nb]}, " if nb else ""
    # VA-learning's update is unstable at constant steps far below 1/2 when γ is near 1 (about
    # 4(1 − γ) on a 2-cycle) and for every schedule on long deterministic cycles: its Notes
    why = (
        "VA-learning's update is unstable at constant steps above a threshold that shrinks "
        "with 1 - gamma (about 4(1 - gamma) on a deterministic 2-cycle), and for every step "
        "schedule on long deterministic cycles with gamma near 1: see its Notes"
        if what == "va_learning"
        else "the steps are too large for this update"
    )
    raise ValueError(
        f"{what}: the iterates diverged: the table is not finite at step t = {t} ({batch}first "
        f"non-finite entry {at} = {Q[idx]}); {why}"
    )


def _table_out(
    mdp: FiniteMDP,
    x: np.ndarray,
    c: float,
    g: float,
    what: str,
    t: int,
    name: str,
    names: tuple[str, ...],
) -> np.ndarray:
    """The table ``x/c`` of a run on inputs scaled by ``c`` (:func:`_scale`), refused where not finite.

    A non-finite scaled table means the iterates diverged (:func:`_check_diverged`); a finite one
    whose ``x/c`` is not means the table lies beyond the float range (rewards ``1e308`` at
    ``γ = 0.9`` with a finite reference ``Q_star`` given, which skips policy iteration's own check):
    the located ``ValueError`` of :func:`rltheory.mdp.bellman._check_in_range`. Both used to be
    returned as ``inf`` or ``NaN`` tables with numpy's overflow warning only.
    """
    _check_diverged(what, t, x, names)
    with np.errstate(over="ignore"):
        y = x / c
    return _check_in_range(mdp, y, what, f"the table {name}", names, _discounted_scale(g))


def _record_now(t: int, every: int, last: int) -> bool:
    return t % every == 0 or t == last


# -- trajectory-based ------------------------------------------------------------------


def _behaviour(mdp: FiniteMDP, behavior: Any) -> np.ndarray:
    if behavior is None:
        return np.full((mdp.S, mdp.A), 1.0 / mdp.A)
    b = np.asarray(
        require_host(as_stochastic_policy(mdp, behavior, field="behavior"), "behavior"), float
    )
    if b.shape != (mdp.S, mdp.A):
        raise ValueError(f"behavior must be one policy of shape ({mdp.S}, {mdp.A}); got {b.shape}")
    return b


class _Runs:
    """Shared state of trajectory-based learners: trajectories, counts, noise, recording.

    Values live scaled by the power of two ``c`` of :func:`_scale` (``c = 1`` at ordinary sizes):
    rewards, noise, ``Q0`` (``self.Q0``) and ``Q*`` (``self.Qs``) are stored times ``c``; the trace
    metrics are divided by ``c`` and so must every returned table (:meth:`out`).
    """

    def __init__(
        self,
        mdp,
        behavior,
        steps,
        n_runs,
        rng,
        Q_star,
        reward_noise,
        record_every,
        what,
        step_size,
        Q0=None,
    ):
        self.P, self.R, self.g = _model(mdp, what)
        self.mdp, self.what = mdp, what
        self.step_size = _schedule(step_size)
        self.steps = _int(steps, "steps")
        self.n_runs = _int(n_runs, "n_runs")
        self.every = _int(record_every, "record_every")
        self.noise = _noise(reward_noise)
        shape = (self.n_runs, mdp.S, mdp.A)
        Q0 = np.zeros(shape) if Q0 is None else _q0(mdp, Q0, shape)
        self.gen = _rng(rng)
        self.Qs = _q_star(mdp, Q_star)
        self.c = _scale(self.g, self.R, Q0, self.noise)
        self.noisy = self.noise > 0  # before scaling: a σ that underflows still draws (same stream)
        self.Q0, self.Qs, self.noise = Q0 * self.c, self.Qs * self.c, self.noise * self.c
        self.rho = np.asarray(require_host(mdp.initial_distribution(), "rho"), float)
        self.tr = rollout(mdp, _behaviour(mdp, behavior), self.steps, self.n_runs, self.gen)
        self.S, self.A = mdp.S, mdp.A
        self.runs = np.arange(self.n_runs)
        self.rec = TraceRecorder()

    def reward(self, t: int) -> np.ndarray:
        """Scaled reward ``c·(r_t + ξ_t)`` of every run."""
        r = self.tr.rewards[:, t] * self.c
        return r + self.noise * self.gen.standard_normal(self.n_runs) if self.noisy else r

    def transition(self, t: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(s_t, a_t, s_{t+1})`` of every run."""
        return self.tr.states[:, t], self.tr.actions[:, t], self.tr.states[:, t + 1]

    def q_update(
        self,
        Q: np.ndarray,
        n: np.ndarray,
        step_size: StepSize,
        s: np.ndarray,
        a: np.ndarray,
        r: np.ndarray,
        s1: np.ndarray,
    ) -> None:
        """In place, every run: ``Q(s, a) += α_{n(s,a)} (r + γ max_b Q(s', b) − Q(s, a))``, then ``n(s, a) += 1``."""
        target = r + self.g * Q[self.runs, s1].max(-1)
        alpha = _alpha(step_size, n[self.runs, s, a])
        Q[self.runs, s, a] += alpha * (target - Q[self.runs, s, a])
        n[self.runs, s, a] += 1

    def record(self, t: int, Q: np.ndarray, **more: Any) -> None:
        if _record_now(t, self.every, self.steps):
            m = _metrics(Q, self.Qs, self.rho, self.c)
            if not np.all(np.isfinite(m["error"])):  # a non-finite table makes it inf or NaN
                _check_diverged(self.what, t, Q, _RUN_NAMES[Q.ndim])
            self.rec.record(t, **m, **more)

    def out(self, x: np.ndarray, name: str = "Q") -> np.ndarray:
        """A scaled table back in the units of the model, refused where it is not finite (:func:`_table_out`)."""
        return _table_out(
            self.mdp, x, self.c, self.g, self.what, self.steps, name, _RUN_NAMES[x.ndim]
        )
