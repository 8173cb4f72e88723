"""The resumable per-chunk NPG run behind :func:`rltheory.algorithms.npg.natural_policy_gradient`.

A chunk is a flat batch of instances that fits the cache; it owns its evaluator
(:class:`~rltheory.algorithms._warm_eval.WarmEvaluator`, or on numpy the live-row
:class:`~rltheory.algorithms._live_rows.RowEvaluator`), its logits and its trace rows.
Chunks that have all moved to the live-row layout are merged into one
(:func:`merge_chunks`): the live rows of the whole batch fit the cache, and one chunk
pays the per-iteration call overhead once.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from ..backend import device_clock, is_numpy, to_numpy
from ..trace import stack_rows
from ._live_rows import SWITCH, LiveRows, live_counts
from ._policy_opt import gap_metrics, logit_step, safe_log, softmax_sum_defect
from ._warm_eval import WarmEvaluator, action_major, compact

__all__ = ["NPGChunk", "merge_chunks"]

_SETTLE = True  # settled instances leave the run (switched off only to measure what that saves)
_ROWS = True  # the live-row layout (switched off only to measure what it saves)
_SETTLE_EVERY = 4  # iterations between checks (each costs ~ a tenth of an iteration; settling later by < 4 is free)


class NPGChunk:
    """A resumable NPG run on a flat batch of instances (action-major policy arrays).

    Evaluation is :class:`~rltheory.algorithms._warm_eval.WarmEvaluator` (exact up to a
    per-iterate certificate, recorded as the trace metric ``evaluation_bound``). The policy
    is kept as logits ``θ`` shifted to maximum 0 per state (``π ∝ exp θ``), updated by
    :func:`~rltheory.algorithms._policy_opt.logit_step`: ``θ ← θ + η A/(1−γ)``.

    Settled instances (numpy): once an instance's value is certified for every later
    iterate (:meth:`WarmEvaluator.settled`: the residual of a fixed value along
    ``θ + k·c·A`` is monotone in ``k``), it leaves the active arrays. Its trace rows stay
    constant (with the bound that holds for all later iterates) and its logits are advanced
    in closed form, ``θ_T = θ_t + (T − t)·η A/(1−γ)`` shifted to maximum 0, when the policy
    is read — the same policy as ``T − t`` further steps, without their cost.

    Live rows (numpy, warm evaluator): every ``_SETTLE_EVERY`` iterations a chunk on the
    full ``(B, A, S)`` layout checks how many rows have ``log π ≥ −50``; once no instance
    has more than ``SWITCH`` of them it moves to a :class:`~rltheory.algorithms._live_rows.LiveRows`
    layout (rebuilt as rows die, and before any dead row that may revive is evaluated).
    """

    def __init__(
        self,
        P: Any,
        R: Any,
        pi: Any,
        V_star: Any,
        rho: Any,
        fixed: Any,
        c_rho: Any,
        *,
        gamma: float,
        step: float,
        u: float,
        xp: Any,
    ) -> None:
        self.ev = WarmEvaluator(P, R, gamma, xp)
        self.pi = action_major(xp, pi)
        self.theta = safe_log(self.pi, xp)  # logits, shifted to max 0 by every update
        self.V_star, self.rho, self.step, self.xp = V_star, rho, step, xp
        self.nu_step = softmax_sum_defect(
            self.pi.shape[1], xp.finfo(self.pi.dtype).eps
        )  # of logit_step's policies
        # per instance, in chunk order (never compacted): the certificate's fixed part and ρ's weighting factor
        # suboptimality_bound = up·gap + a·evaluation_bound + f with a = (1 + c_ρ)·up, f = fixed·up
        self.up = 1.0 + 4.0 * u
        self.stopping = (
            False  # whether advance() needs suboptimality_bound at every iterate (tol given)
        )
        self.frozen_rows: dict[str, np.ndarray] | None = (
            None  # the constant rows once every instance settled
        )
        self.a_up, self.f_up = (1.0 + c_rho) * self.up, fixed * self.up
        self.t, self.adv, self.last = 0, None, None
        self.rows: dict[str, list[Any]] = {}
        self.wall: list[float] = []
        self.elapsed = 0.0
        # On a device the rows stay there until the end and each iterate's time is a CUDA
        # event: no synchronisation per iteration (launches overlap the GPU's work).
        self.clock = device_clock(xp)
        n = P.shape[0]
        self.n = n
        self.freeze = _SETTLE and is_numpy(
            xp
        )  # host-side decisions only (a device would sync every iteration)
        # live-row layout (numpy, warm evaluator): rows with log π < −50 leave the arrays (_live_rows)
        self.rowwise = self.freeze and _ROWS and self.ev.warm
        self.live: LiveRows | None = None
        self.bound: Any = None  # the active instances' evaluation bound of the last iterate
        if self.freeze:
            self.V_star, self.rho = (
                np.array(V_star, copy=True),
                np.array(rho, copy=True),
            )  # compacted in place
            self.slot = np.arange(n)  # chunk position of each active row
            self.open_actions = (
                None if not np.isneginf(self.theta).any() else ~np.isneginf(self.theta)
            )
            self.frozen = np.zeros(n, dtype=bool)
            self.f_theta = np.zeros((n,) + self.theta.shape[1:], dtype=self.theta.dtype)
            self.f_score = np.zeros_like(self.f_theta)
            self.f_t = np.zeros(n, dtype=np.int64)
            self.f_rows: dict[str, np.ndarray] = {}

    def _certify(self, rows: dict[str, Any]) -> None:
        """Add ``suboptimality_bound`` to a full (chunk-order) row of metrics (see the driver)."""
        if isinstance(
            rows["evaluation_bound"], np.ndarray
        ):  # in place: single instances feel each op
            b = np.multiply(rows["evaluation_bound"], self.a_up)
            b += self.f_up
            b += self.up * rows["suboptimality"]
        else:
            b = rows["evaluation_bound"] * self.a_up + self.f_up + self.up * rows["suboptimality"]
        rows["suboptimality_bound"] = b

    def _evaluate(self) -> None:
        if not self.freeze:
            V, self.adv, bound = self.ev.evaluate(self.pi, self._nu())
            self.last = gap_metrics(self.xp, self.V_star, V, self.rho) | {"evaluation_bound": bound}
            self._certify(self.last)
            for k, v in self.last.items():
                self.rows.setdefault(k, []).append(
                    v if self.clock else np.asarray(to_numpy(v), dtype=float)
                )
            if self.clock:
                self.clock.mark()
            else:
                self.wall.append(self.elapsed)
            return
        if (
            not self.slot.shape[0] and self.frozen_rows is not None
        ):  # all settled: the rows stay constant
            self.last = self.frozen_rows
            for k, v in self.frozen_rows.items():
                if k != "suboptimality_bound":
                    self.rows[k].append(v)
            self.wall.append(self.elapsed)
            return
        full = {k: v.copy() for k, v in self.f_rows.items()}  # the settled rows' constant values
        if self.slot.shape[0]:
            V, self.adv, bound = self.ev.evaluate(self.pi, self._nu())
            self.bound = bound
            last = gap_metrics(np, self.V_star, V, self.rho) | {"evaluation_bound": bound}
            if full:
                for k, v in last.items():
                    full[k][self.slot] = v
            else:  # none settled yet: the active rows are the chunk in order
                full = {k: np.asarray(v, dtype=float) for k, v in last.items()}
            if self.t % _SETTLE_EVERY == 0:
                done, f_bound = self.ev.settled(
                    self.open_actions if self.live is None else self.live.dead_top()
                )
                if done.any():
                    self._retire(done, last | {"evaluation_bound": f_bound})
            if self.rowwise and self.slot.shape[0]:
                self._rows()
        for k, v in full.items():
            self.rows.setdefault(k, []).append(v)
        if (
            self.stopping or not self.slot.shape[0]
        ):  # (the trace's rows are formed at the end: trace_rows)
            self._certify(full)
        self.last = full
        if not self.slot.shape[0]:
            self.frozen_rows = full
        self.wall.append(self.elapsed)

    def _nu(self) -> float | None:
        """The action-sum defect of the evaluated policy: measured on ``π_0``, a priori afterwards."""
        return None if self.t == 0 else self.nu_step

    def _rows(self) -> None:
        """Switch to the live-row layout once few rows are live, rebuild it when it is due (_live_rows)."""
        if self.live is None:
            if self.t == 0 or self.t % _SETTLE_EVERY:
                return
            A, S = self.theta.shape[1:]
            if int(np.max(live_counts(self.theta))) > SWITCH * A * S:
                return
            theta = self.theta
        elif self.live.needs_rebuild(self.t):
            theta = self.live.full_theta(self.t)
        else:
            return
        self._rebuild(theta, self.t)

    def _rebuild(self, theta: np.ndarray, t: int) -> None:
        """A new live-row layout from the full logits ``theta`` of iterate ``t``."""
        self.live = LiveRows(self.ev, theta, self.step, t)
        self.ev, self.theta, self.pi = self.live.ev, self.live.theta, self.live.pi
        self.adv, self.open_actions = self.ev.history[-1][1], None

    def _retire(self, done: np.ndarray, last: dict[str, np.ndarray]) -> None:
        """Move the settled rows ``done`` out of the active arrays (see the class docstring)."""
        j, at = np.flatnonzero(done), self.slot[done]
        self.frozen[at] = True
        if self.live is None:
            self.f_theta[at] = self.theta[j]
            self.f_score[at] = self.step * self.adv[j]
        else:  # the full logits and advantages, dead rows in closed form
            self.f_theta[at] = self.live.full_theta(self.t, j)
            self.f_score[at] = self.step * self.live.full_advantage(j)
        self.f_t[at] = self.t
        for k, v in last.items():
            self.f_rows.setdefault(k, np.zeros(self.n))[at] = v[j]
        holes, movers, n = self.ev.retire(done)
        self.V_star, self.rho, self.slot, self.bound = (
            compact(x, holes, movers, n) for x in (self.V_star, self.rho, self.slot, self.bound)
        )
        if self.live is None:
            self.theta, self.pi = (compact(x, holes, movers, n) for x in (self.theta, self.pi))
        else:
            self.live.retire(holes, movers, n)
            self.theta, self.pi = self.live.theta, self.live.pi
        if self.open_actions is not None:
            self.open_actions = compact(self.open_actions, holes, movers, n)
        self.adv = self.ev.history[-1][1]

    def trace_rows(self) -> tuple[dict[str, np.ndarray], np.ndarray]:
        """The host trace of this chunk: metric rows ``(t + 1, n)`` and wall times ``(t + 1,)``.

        On a device this is the run's one transfer (and one synchronisation); the wall
        times are the device clock's, from the chunk's creation to the end of each
        iterate's evaluation.
        """
        if self.clock is None:
            rows = {k: np.asarray(v, dtype=float) for k, v in self.rows.items()}
            if (
                self.freeze
            ):  # suboptimality_bound for all iterates at once (the same operations as _certify)
                self._certify(rows)
            return rows, np.asarray(self.wall)
        return {k: stack_rows(v) for k, v in self.rows.items()}, self.clock.times()

    def policy(self) -> Any:
        """The action-major policy ``(n, A, S)`` of the current iterate, settled rows in closed form."""
        if not self.freeze:
            return self.pi
        out = np.empty_like(self.f_theta)
        if self.live is None:
            out[self.slot] = self.pi
        elif self.slot.shape[
            0
        ]:  # the full policy of the live logits and the dead rows' closed form
            out[self.slot] = logit_step(self.live.full_theta(self.t), 0.0, np)[0]
        at = np.flatnonzero(self.frozen)
        if at.shape[0]:
            k = (self.t - self.f_t[at]).astype(self.f_theta.dtype)[:, None, None]
            out[at] = logit_step(self.f_theta[at], k * self.f_score[at], np)[0]
        return out

    def advance(self, T: int, tol: float | None) -> int:
        """Iterate up to ``t = T``, or until every instance's certified suboptimality is ``≤ tol``; return ``t``."""
        xp, t0 = self.xp, time.perf_counter()
        self.stopping = tol is not None
        if self.last is None:
            self._evaluate()
        self.stopping = tol is not None
        if self.stopping and self.last is not None and "suboptimality_bound" not in self.last:
            self._certify(self.last)
        while self.t < T and not (
            tol is not None and float(xp.max(self.last["suboptimality_bound"])) <= tol
        ):
            if self.live is not None and self.slot.shape[0]:
                self.pi, self.theta = self.live.step(self.adv, self.bound)
                if self.live.reviving():  # a dead row may be back: rebuild before it is evaluated
                    self._rebuild(self.live.full_theta(self.t + 1), self.t + 1)
            elif not self.freeze or self.slot.shape[0]:
                self.pi, self.theta = logit_step(self.theta, self.step * self.adv, xp)
            self.t += 1
            self.elapsed += time.perf_counter() - t0
            t0 = time.perf_counter()
            self._evaluate()
        self.elapsed += time.perf_counter() - t0
        return self.t


def merge_chunks(runs: list[NPGChunk]) -> NPGChunk | None:
    """One chunk holding all of ``runs`` (numpy chunks at the same iterate, all on live-row layouts).

    ``None`` where that does not hold (a chunk still on the full layout, one whose instances
    have all settled, a device run). The merged chunk continues exactly where the parts
    stopped: per-instance arrays and trace rows are concatenated in chunk order, the
    evaluators' stored inverses and value histories are kept, and a fresh
    :class:`~rltheory.algorithms._live_rows.LiveRows` layout is built from the full logits
    (dead rows in closed form) — the same rebuild a single chunk does.
    """
    first = runs[0]
    if len(runs) < 2 or not all(
        r.live is not None and r.slot.shape[0] and r.t == first.t for r in runs
    ):
        return None
    cat = np.concatenate
    new = object.__new__(NPGChunk)
    new.__dict__.update(first.__dict__)  # the scalars: step, u's, flags, t, clock
    offsets = np.cumsum([0] + [r.n for r in runs[:-1]])
    new.n = sum(r.n for r in runs)
    for name in ("V_star", "rho", "bound", "a_up", "f_up", "frozen", "f_theta", "f_score", "f_t"):
        setattr(new, name, cat([getattr(r, name) for r in runs]))
    new.slot = cat([r.slot + o for r, o in zip(runs, offsets, strict=True)])
    keys = set().union(*(r.f_rows for r in runs))
    new.f_rows = {k: cat([r.f_rows.get(k, np.zeros(r.n)) for r in runs]) for k in keys}
    new.rows = {
        k: [cat([r.rows[k][i] for r in runs]) for i in range(len(v))] for k, v in first.rows.items()
    }
    new.last = {k: cat([r.last[k] for r in runs]) for k in first.last}
    new.wall = [sum(r.wall[i] for r in runs) for i in range(len(first.wall))]
    new.elapsed = sum(r.elapsed for r in runs)
    new.frozen_rows = None
    # the evaluator: per-instance arrays concatenated; the layout is rebuilt below
    evs = [r.ev for r in runs]
    ev = object.__new__(type(first.ev))
    ev.__dict__.update(first.ev.__dict__)
    for name in ("K_full", "R_full", "W", "scale", "r_max", "delta", "residual", "U"):
        parts = [getattr(e, name) for e in evs]
        # None in every part (the chunks share their iterate and dtype): W before the first warm
        # call (iterate <= COLD, e.g. iterations=8), scale for float32 models (no mixed precision)
        setattr(ev, name, None if parts[0] is None else cat(parts))
    if not isinstance(ev.nu, float):
        ev.nu = cat([np.broadcast_to(e.nu, (e.B,)) for e in evs])
    ev.history = [(cat([e.history[i][0] for e in evs]), None) for i in range(len(ev.history))]
    ev.B, ev._coef, ev._fold = int(new.slot.shape[0]), None, None
    ev.exact_solves = sum(e.exact_solves for e in evs)
    ev.mixed = all(e.mixed for e in evs)  # (W in float64 once any part's float32 inverse failed)
    theta = cat([r.live.full_theta(r.t) for r in runs])
    new.live = LiveRows(ev, theta, first.step, first.t)
    new.ev, new.theta, new.pi = new.live.ev, new.live.theta, new.live.pi
    new.adv, new.open_actions = new.ev.history[-1][1], None
    return new
