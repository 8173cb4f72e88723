r"""Live-row compaction for exact NPG: state–action rows of negligible probability leave the arrays.

Along an NPG run ``π_{t+1} ∝ π_t exp(c A_t)`` (``c = η/(1−γ)``) the probability of every action
that is not (nearly) optimal falls geometrically. On the NPG benchmark (``S = 50``, ``A = 5``,
``γ = 0.9``, ``η = 1``) the rows ``(s, a)`` with ``log π(a|s) > −50`` are, per instance, 172 of
250 at iteration 10, 75 at 50 and 55 from 200 on. The evaluation (``K V`` with
``K = I − γP``), the residual and the softmax update only need those rows: the other rows'
probabilities are below ``e^{−50} ≈ 2e-22``, a hundred thousand times below the evaluator's
stopping level ``16ε(‖V‖∞ + ‖r‖∞)``. :class:`LiveRows` keeps the live rows of each instance
in a compact ``(B, K)`` layout (``K`` the chunk's largest live count) and the rest in closed
form; everything stays exact up to a certificate:

* **Evaluation.** The residual of the full policy is the live rows' residual plus
  ``Σ_dead π(a|s) A(s, a)``, and the live policy is normalised over live rows only; both
  differences are at most ``(A − 1) e^U (‖r‖∞ + 2‖V‖∞)`` per state (``|A| ≤ ‖r‖∞ + (1 + γ)‖V‖∞``),
  where ``U`` bounds every dead row's ``log π``. :class:`RowEvaluator` adds twice that to the
  residual norm before the certificate ``(r + e)/(1 − γ)`` is formed.
* **Dead logits, exactly.** ``A_t = r − K V_t`` is affine in ``V_t``, so with the reference
  ``V_ref`` (the value when the layout was built, at iteration ``t_ref``) and ``A_ref = r − K V_ref``,
  a row that skips its updates has ``θ_t = θ_{t_ref} + c((t − t_ref) A_ref − K Σ_{τ<t}(V_τ − V_ref))
  − Σ_{τ<t} m_τ(s)`` (``m_τ`` the per-state shifts of the max-shifted logits). The sums are kept
  per instance (``S`` numbers each, ``c Σ_{τ<t}(V_τ − V_ref)`` kept on the logits' scale), and one product with the full ``K`` gives every dead logit
  whenever it is needed (a new layout, a settled instance, the returned policy).
* **The bound U.** ``log π_{t+1}(a|s) − log π_t(a|s) = c A_t(s, a) − log Σ_b π_t(b|s) e^{c A_t(s, b)}``
  and, by Jensen, the log-sum is at least ``c Σ_b π_t(b|s) A_t(s, b) ≥ −c(r_t + e_t)`` (the certified
  residual and its round-off). With ``A_t(s, a) ≤ A_ref(s, a) + (1 + γ)‖V_t − V_ref‖∞`` the rise per
  iteration is at most ``c(max_dead A_ref + (1 + γ)‖V_t − V_ref‖∞ + (1 − γ)·bound_t + round-off)``,
  accumulated per instance. A dead row whose ``U`` reaches ``−40`` (it may be reviving) triggers a
  rebuild of the layout from the exact logits.

The layout is rebuilt when the largest live count would shrink by 15 %, checked every 8
iterations (a rebuild costs about three products with the full ``K``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._policy_opt import _exp_floor
from ._warm_eval import WarmEvaluator, compact
from .soft import log_softmax

__all__ = ["DEAD", "LiveRows", "RowEvaluator", "RowLayout", "live_counts"]

DEAD = 50.0  # a row with log π < −DEAD leaves the arrays
REVIVE = -40.0  # the dead rows' bound U above this: rebuild the layout from the exact logits
SHRINK = 0.85  # rebuild once the largest live count would fall below this fraction of K
SWITCH = 0.6  # a full-layout chunk switches once every instance has at most this fraction live
CHECK_EVERY = 8
SHIFT_LIMIT = 30.0  # live logits above this (relative to the reference rows): shift by the maxima


def _log_policy(theta: np.ndarray) -> np.ndarray:
    """``log π`` of logits ``(B, A, S)`` (:func:`~rltheory.algorithms.soft.log_softmax` over the action axis 1)."""
    return np.moveaxis(log_softmax(np.moveaxis(theta, 1, -1), np), -1, 1)


def live_counts(theta: np.ndarray) -> np.ndarray:
    """Per instance, the number of rows of the logits ``(B, A, S)`` with ``log π ≥ −DEAD``."""
    return np.count_nonzero((_log_policy(theta) >= -DEAD).reshape(theta.shape[0], -1), axis=1)


class RowLayout:
    """The live rows ``(a, s)`` of each instance, sorted by state, padded to a common count ``K``.

    ``rows[b, k] = a·S + s`` (the action-major flat index), ``state[b, k] = s``; padding rows sit
    at the end of each instance, count as state ``S − 1`` and are flagged in ``pad``. Every state
    has at least one live row, so the segments of ``np.ufunc.reduceat`` are non-empty.
    """

    def __init__(self, live: np.ndarray, theta: np.ndarray) -> None:
        B, A, S = live.shape
        by_state = np.transpose(live, (0, 2, 1))  # (B, S, A): nonzero() lists rows by (b, s, a)
        counts = np.count_nonzero(by_state, axis=2)
        if not counts.all():
            raise AssertionError("every state keeps a live row (its largest logit)")
        b, s, a = np.nonzero(by_state)
        n = counts.sum(axis=1)
        K = int(n.max())
        k = np.arange(b.shape[0]) - np.repeat(np.cumsum(n) - n, n)
        self.B, self.S, self.A, self.K = B, S, A, K
        self.rows = np.zeros((B, K), dtype=np.intp)
        self.rows[b, k] = a * S + s
        self.pad = np.ones((B, K), dtype=bool)
        self.pad[b, k] = False
        self.state = np.full((B, K), S - 1, dtype=np.intp)
        self.state[b, k] = s
        self.start = np.zeros((B, S), dtype=np.intp)
        self.start[:, 1:] = np.cumsum(counts, axis=1)[:, :-1]
        # each state's reference row (its largest logit), by its position k among the instance's rows
        where = np.zeros((B, A * S), dtype=np.intp)
        where[b, a * S + s] = k
        top = np.argmax(theta, axis=1)  # (B, S)
        self.ref = np.take_along_axis(where, top * S + np.arange(S), axis=1)
        self._cache()

    def _cache(self) -> None:
        B = self.rows.shape[0]
        self.off = (self.start + self.K * np.arange(B)[:, None]).ravel()
        self.seg = self.state + self.S * np.arange(B)[:, None]
        self.seg_flat = self.seg.ravel()
        self.ref_flat = (self.ref + self.K * np.arange(B)[:, None]).ravel()

    def offsets(self, idx: Any = None) -> np.ndarray:
        if idx is None:
            return self.off
        return (self.start[idx] + self.K * np.arange(idx.shape[0])[:, None]).ravel()

    def segments(self, idx: Any = None) -> np.ndarray:
        if idx is None:
            return self.seg
        return self.state[idx] + self.S * np.arange(idx.shape[0])[:, None]

    def seg_sum(self, x: np.ndarray, idx: Any = None) -> np.ndarray:
        """The sum of ``x`` (n, K) over each state's rows: (n, S) (``bincount``, summed in float64)."""
        n = x.shape[0]
        seg = self.seg_flat if idx is None else np.ravel(self.segments(idx))
        out = np.bincount(seg, weights=np.ravel(x), minlength=n * self.S)
        return np.reshape(out.astype(x.dtype, copy=False), (n, self.S))

    def seg_reduce(self, op: Any, x: np.ndarray, idx: Any = None) -> np.ndarray:
        """``op``-reduction of ``x`` (n, K[, ...]) over each state's rows: shape (n, S[, ...])."""
        n = x.shape[0]
        flat = np.reshape(x, (n * self.K,) + x.shape[2:])
        return np.reshape(op.reduceat(flat, self.offsets(idx), axis=0), (n, self.S) + x.shape[2:])

    def expand(self, y: np.ndarray, idx: Any = None) -> np.ndarray:
        """Per-state values ``y`` (n, S) at every row: (n, K)."""
        return np.reshape(y, (-1,))[self.segments(idx)]

    def gather(self, full: np.ndarray) -> np.ndarray:
        """Rows of a full action-major array ``(B, A, S, ...)``: ``(B, K, ...)``."""
        n, rest = full.shape[0], full.shape[3:]
        flat = np.reshape(full, (n * self.A * self.S,) + rest)
        at = np.ravel(self.rows + (self.A * self.S) * np.arange(n)[:, None])
        return np.reshape(np.take(flat, at, axis=0), (n, self.K) + rest)

    def scatter(self, full: np.ndarray, x: np.ndarray, idx: Any = None) -> None:
        """Write the live rows ``x`` (n, K) into the full ``(n, A, S)`` array ``full`` (in place)."""
        rows = self.rows if idx is None else self.rows[idx]
        keep = ~(self.pad if idx is None else self.pad[idx])
        flat = np.reshape(full, (full.shape[0], -1))
        b = np.nonzero(keep)[0]
        flat[b, rows[keep]] = x[keep]

    def retire(self, holes: np.ndarray, movers: np.ndarray, n: int) -> None:
        self.rows, self.pad, self.state, self.start, self.ref = (
            compact(x, holes, movers, n)
            for x in (self.rows, self.pad, self.state, self.start, self.ref)
        )
        self.B = n
        self._cache()


def row_softmax(
    lay: RowLayout, theta: np.ndarray, scores: Any = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`~rltheory.algorithms._policy_opt.logit_step` on the live rows: ``(π, θ', shift)``.

    ``θ' = θ + scores − shift`` in place and ``π ∝ exp θ'`` over each state's live rows (the same
    exponent floor); ``shift`` (n, S) is each state's reference-row logit (its largest at the
    layout's build), or the largest logit where some logit would exceed ``SHIFT_LIMIT`` (the
    softmax is the same for any shift; this one costs a gather instead of a segmented maximum).
    """
    if scores is not None:
        theta += scores
    flat = np.reshape(theta, (-1,))
    shift = flat[lay.ref_flat]
    theta -= np.reshape(shift[lay.seg_flat], theta.shape)
    shift = np.reshape(shift, (theta.shape[0], lay.S))
    if float(np.max(theta)) > SHIFT_LIMIT:  # a row overtook its reference: shift by the maxima
        top = lay.seg_reduce(np.maximum, theta)
        theta -= lay.expand(top)
        shift += top
    floor, w_floor = _exp_floor(theta.dtype)
    w = np.maximum(theta, floor)
    np.exp(w, out=w)
    w -= w_floor
    w /= lay.expand(lay.seg_sum(w))
    return w, theta, shift


class RowEvaluator(WarmEvaluator):
    """:class:`~rltheory.algorithms._warm_eval.WarmEvaluator` on the live rows of a :class:`RowLayout`.

    Takes over a (full or row) evaluator's state: stored inverses, counters and constants; its
    ``history`` is replaced by the caller (advantages in the new layout). ``Kf``/``R`` hold the
    live rows (padding rows are zero, so their advantage is 0 and their policy weight 0);
    ``K_full``/``R_full`` keep the full action-major arrays. ``U`` (per instance) bounds the
    dead rows' ``log π``; :meth:`_with_unlisted` adds what they can contribute to the residual.
    """

    def __init__(
        self, base: WarmEvaluator, lay: RowLayout, history: list[tuple[Any, Any]], U: np.ndarray
    ) -> None:
        self.__dict__.update(base.__dict__)
        if not isinstance(base, RowEvaluator):
            self.K_full, self.R_full = base.K4, base.R
        self.lay, self.U = lay, U
        Kc = lay.gather(self.K_full)
        Kc[lay.pad] = 0.0
        Rc = lay.gather(self.R_full)
        Rc[lay.pad] = 0.0
        self.Kf, self.R = Kc, Rc
        self.K4 = None  # (the full matrix is K_full; _matrix uses the live rows)
        self.rows_shape = (lay.K,)
        self.history = history

    def _residual(self, pi: Any, Adv: Any, idx: Any = None) -> Any:
        return self.lay.seg_sum(pi * Adv, idx)

    def _sum_defect(self, pi: Any) -> Any:
        d = np.max(np.abs(self.lay.seg_sum(pi) - 1.0), axis=-1)
        return d + self.a_A * (1.0 + d)

    def _matrix(self, pi: Any, idx: Any = None) -> Any:
        Kc = self.Kf if idx is None else self.Kf[idx]
        return self.lay.seg_reduce(np.add, pi[..., None] * Kc, idx)

    def _solve(self, pi: Any, idx: Any = None) -> tuple[Any, Any]:
        M = self._matrix(pi, idx)
        R = self.R if idx is None else self.R[idx]
        r = self.lay.seg_sum(pi * R, idx)
        self.exact_solves += int(M.shape[0])
        return np.linalg.solve(M, r[..., None])[..., 0], M

    def _with_unlisted(self, r: Any, v: Any) -> Any:
        """``r + 2(A − 1) e^U (‖r‖∞ + 2.01‖V‖∞)``: the dead rows' share of the residual (module docstring).

        The small factor ``w = 2(A − 1) e^U`` multiplies each norm on its own: ``‖r‖∞ + 2.01‖V‖∞``
        overflows for ``‖V‖∞ > 9e307`` (``inf``, or ``NaN`` where ``U = −∞``), where ``r`` is finite.
        """
        w = 2.0 * (self.A - 1) * np.exp(self.U)
        return r + w * self.r_max + (2.01 * w) * v

    def settled(self, dead_top: Any = None) -> tuple[Any, Any]:
        """:meth:`WarmEvaluator.settled` with the dead rows' advantages bounded by ``dead_top`` (per instance).

        An instance counts as settled only if ``dead_top`` is below every state's largest live
        advantage (then the dead rows do not change ``max_a A(s, a)``).
        """
        V, Adv = self.history[-1]
        top = self.lay.seg_reduce(np.maximum, np.where(self.lay.pad, -np.inf, Adv))
        clear = dead_top <= np.min(top, axis=-1)
        F = np.maximum(np.max(np.abs(top), axis=-1), self.residual)
        nu = (
            max(self.nu, self.c_eps)
            if isinstance(self.nu, float)
            else np.maximum(self.nu, self.c_eps)
        )
        v = np.max(np.abs(V), axis=-1)
        done = (F <= self._tolerance(v, self.r_max)) & clear
        return done, self._bound(F * (1.0 + self.c_eps), self._allowance(v, nu))

    def retire(self, done: Any) -> tuple[Any, Any, int]:
        holes, movers, n = super().retire(done)
        self.lay.retire(holes, movers, n)
        self.U = compact(self.U, holes, movers, n)
        return holes, movers, n

    def _retire_rows(self, holes: Any, movers: Any, n: int) -> None:
        self.K_full, self.R_full, self.Kf, self.R = (
            compact(x, holes, movers, n) for x in (self.K_full, self.R_full, self.Kf, self.R)
        )


class LiveRows:
    """The dead rows of an NPG chunk in closed form (module docstring), for a chunk on a :class:`RowLayout`.

    Built by :meth:`build` from the chunk's full logits at iteration ``t``; the chunk then keeps
    only the live logits ``(B, K)`` and calls :meth:`step` for every update.
    """

    def __init__(self, ev: WarmEvaluator, theta_full: np.ndarray, step: float, t: int) -> None:
        V = ev.history[-1][0]
        K_full = ev.K_full if isinstance(ev, RowEvaluator) else ev.K4
        R_full = ev.R_full if isinstance(ev, RowEvaluator) else ev.R
        B, A, S = theta_full.shape
        logp = _log_policy(theta_full)
        live = logp >= -DEAD
        lay = RowLayout(live, theta_full)
        Kflat = np.reshape(K_full, (B, A * S, S))

        def adv(
            x: np.ndarray,
        ) -> np.ndarray:  # the full advantage r − K x (the evaluator's formula)
            return R_full - np.reshape(Kflat @ x[..., None], (B, A, S))

        self.A_ref = adv(V)
        history = [(Vh, lay.gather(self.A_ref if Vh is V else adv(Vh))) for Vh, _ in ev.history]
        dead = ~live & np.isfinite(theta_full)  # (-inf logits stay -inf: never counted)
        with np.errstate(invalid="ignore"):
            U = np.max(np.where(dead, logp, -np.inf).reshape(B, -1), axis=1)
            self.m = np.max(np.where(dead, self.A_ref, -np.inf).reshape(B, -1), axis=1)
        U = U + 1e-9 * (1.0 + np.abs(np.where(np.isfinite(U), U, 0.0)))  # (the rounding of log π)
        self.ev = RowEvaluator(ev, lay, history, U)
        self.lay, self.c, self.t_ref, self.gamma = lay, float(step), int(t), ev.gamma
        self.V_ref = V.copy()
        self.base = theta_full.copy()
        self.SD = np.zeros((B, S), dtype=theta_full.dtype)
        self.SM = np.zeros((B, S), dtype=theta_full.dtype)
        self.theta = lay.gather(theta_full)
        self.theta[lay.pad] = -np.inf
        self.pi, self.theta, shift = row_softmax(lay, self.theta)
        self.SM += shift  # (the dead rows take the live rows' shift: a row above the old reference moved them)
        # m plus the round-off of the two computed advantages in A_t − A_ref ≤ (1 + γ)‖V_t − V_ref‖∞
        # (each ≤ γ_{S+3}(‖r‖∞ + 2‖V‖∞), with ‖V‖∞ ≤ ‖r‖∞/(1 − γ) up to the evaluation's error)
        self.m_err = self.m + 2.0 * ev.a_S * ev.r_max * (1.0 + 4.04 / (1.0 - ev.gamma))

    def dead_top(self) -> np.ndarray:
        """A bound on every dead row's advantage at the last evaluated value, per instance."""
        d = np.subtract(self.ev.history[-1][0], self.V_ref)
        np.abs(d, out=d)
        top = np.max(d, axis=-1)
        top *= 1.0 + self.gamma
        top += self.m_err
        return top

    def step(self, adv: np.ndarray, bound: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """One NPG update of the live logits with the live advantages ``adv`` of the last evaluation
        (``bound`` its certificate per instance): ``(π, θ)``; the dead rows advance in closed form."""
        V = self.ev.history[-1][0]
        rise = self.dead_top()
        rise += (1.0 - self.gamma) * bound
        rise *= self.c
        self.ev.U += rise
        d = np.subtract(V, self.V_ref)
        d *= self.c  # (c·(V − V_ref): the logits' scale, which the driver keeps finite)
        self.SD += d
        self.pi, self.theta, shift = row_softmax(self.lay, self.theta, self.c * adv)
        self.SM += shift
        return self.pi, self.theta

    def full_theta(self, t: int, idx: Any = None) -> np.ndarray:
        """The full logits ``(n, A, S)`` at iteration ``t``: live rows as kept, dead rows in closed form."""
        sel = slice(None) if idx is None else idx
        base, A_ref, SD, SM = self.base[sel], self.A_ref[sel], self.SD[sel], self.SM[sel]
        n, A, S = base.shape
        K = np.reshape(self.ev.K_full[sel], (n, A * S, S))
        KS = np.reshape(K @ SD[..., None], (n, A, S))
        # (t − t_ref)·(c A_ref) − K·SD with SD = c Σ(V_τ − V_ref): each term on the logits' scale,
        # which the driver's range check keeps finite ((t − t_ref)·A_ref alone overflowed for
        # rewards ~1e306 and left −inf dead logits where the full layout has finite ones)
        theta = (t - self.t_ref) * (self.c * A_ref)
        theta -= KS
        theta += base
        theta -= SM[:, None, :]
        self.lay.scatter(theta, self.theta[sel], idx)
        return theta

    def full_advantage(self, idx: np.ndarray) -> np.ndarray:
        """The full advantages ``r − K V`` at the last evaluated value, for the instances ``idx``."""
        V = self.ev.history[-1][0][idx]
        n = idx.shape[0]
        K = np.reshape(self.ev.K_full[idx], (n, self.lay.A * self.lay.S, self.lay.S))
        return self.ev.R_full[idx] - np.reshape(K @ V[..., None], (n, self.lay.A, self.lay.S))

    def reviving(self) -> bool:
        """Whether some dead row's bound ``U`` passed ``REVIVE`` (the layout must be rebuilt before the next evaluation)."""
        return bool(self.lay.B) and float(np.max(self.ev.U)) > REVIVE

    def needs_rebuild(self, t: int) -> bool:
        """Whether the layout should be rebuilt now: many more rows died (checked every ``CHECK_EVERY``)."""
        if self.lay.B == 0 or (t - self.t_ref) % CHECK_EVERY:
            return False
        lay = self.lay
        with np.errstate(divide="ignore"):
            logp = np.log(np.where(lay.pad, 1.0, self.pi))
        n = np.count_nonzero(~lay.pad & (logp >= -DEAD), axis=1)
        return int(n.max()) <= SHRINK * lay.K

    def retire(self, holes: np.ndarray, movers: np.ndarray, n: int) -> None:
        """Keep the rows of the instances the evaluator kept (after ``ev.retire``)."""
        self.V_ref, self.A_ref, self.base, self.SD, self.SM, self.m_err, self.theta, self.pi = (
            compact(x, holes, movers, n)
            for x in (
                self.V_ref,
                self.A_ref,
                self.base,
                self.SD,
                self.SM,
                self.m_err,
                self.theta,
                self.pi,
            )
        )
