r"""Actions of the unichain average-reward LP's policy outside the support of its frequencies.

On ``S_x = {s : Σ_a x*(s, a) > 0}`` the policy takes the action of ``x*``; any action choice that
reaches ``S_x`` from the other states makes them transient, with gain ``g*`` everywhere (Puterman
1994, §8.8). HiGHS meets the flow rows to 1e-10 only, so ``S_x`` can leak with a probability below
that, and a completion through a transition of that size is then no completion: its states share a
recurrent class with ``S_x``. The actions here minimise the expected time to reach ``S_x``.

References
----------
Puterman, M. L. (1994). *Markov Decision Processes*. Wiley. §8.8 (unichain LP).
Bertsekas, D. P. & Tsitsiklis, J. N. (1991). An analysis of stochastic shortest path problems.
*Mathematics of Operations Research* 16(3), 580–595 (policy iteration from a proper policy).
"""

from __future__ import annotations

import numpy as np

__all__: list[str] = []


def _reach_actions(supp: np.ndarray, target: np.ndarray) -> np.ndarray:
    """Actions moving every state outside ``target`` one BFS layer closer to it (−1 if unreachable)."""
    S = supp.shape[0]
    act = np.full(S, -1, dtype=np.int64)
    done = target.copy()
    while not done.all():
        hits = np.any(supp & done[None, None, :], axis=-1) & ~done[:, None]  # [S, A]
        layer = np.any(hits, axis=-1)
        if not layer.any():
            break
        act[layer] = np.argmax(hits[layer], axis=-1)
        done = done | layer
    return act


def _fastest_reach_actions(P: np.ndarray, target: np.ndarray, max_iter: int = 100) -> np.ndarray:
    r"""Actions minimising the expected time ``T(s)`` to reach ``target`` from the other states.

    ``T(s) = min_a 1 + Σ_{j ∉ target} P(j|s,a) T(j)`` (a stochastic shortest path with unit costs),
    solved by policy iteration from the breadth-first choice of :func:`_reach_actions`, which is
    proper (every state reaches ``target`` with probability 1); each improvement keeps it proper
    (Bertsekas & Tsitsiklis 1991). The breadth-first choice alone took a door of probability 1e-11
    into ``target`` over a sure two-step route (expected times 1e11 and 4): on a weakly communicating
    model whose ``S_x`` leaked to that state with probability 1e-11, the LP returned a policy of gain
    0.5, ``g* = 1 − 3e-11``. Actions are kept within a relative ``1e-9`` of the minimum (the solve of
    ``I − P_π`` loses digits as ``T`` grows). Where a state cannot reach ``target`` (``−1``), the
    breadth-first choice is returned as it is.
    """
    act = _reach_actions(P > 0, target)
    out = np.flatnonzero(~target)
    n = out.size
    if n == 0 or np.any(act[out] < 0):  # (a state that cannot reach target: no proper policy)
        return act
    Q = P[out][:, :, out]  # [n, A, n]: moves that stay outside the target
    rows = np.arange(n)
    for _ in range(max_iter):
        # (singular to working precision: the last proper choice is kept)
        try:
            T = np.linalg.solve(np.eye(n) - Q[rows, act[out]], np.ones(n))
        except np.linalg.LinAlgError:
            break
        cost = 1.0 + Q @ T  # [n, A]
        best = np.min(cost, axis=-1)
        keep = cost[rows, act[out]] <= best * (1.0 + 1e-9)
        new = np.where(keep, act[out], np.argmin(cost, axis=-1))
        if np.array_equal(new, act[out]):
            break
        act[out] = new
    return act
