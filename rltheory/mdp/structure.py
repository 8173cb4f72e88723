r"""Chain structure of Markov chains and of finite MDPs.

For a Markov chain ``P[s, s']`` the states split into *communicating classes*
(strongly connected components of the graph ``s → s'`` iff ``P(s, s') > 0``).
A class is *recurrent* (closed) when no edge leaves it, otherwise every state
in it is *transient*. The period of a recurrent class is the gcd of its cycle
lengths. ``P`` is *unichain* when it has exactly one recurrent class (plus
possibly transient states), *multichain* otherwise, *irreducible* when it is a
single class (Puterman 1994, Appendix A.2–A.3; Levin, Peres & Wilmer 2017, §1.3).

An MDP is classified through its deterministic stationary policies (Puterman
1994, §8.3.1):

* *recurrent* — every policy's chain is irreducible;
* *unichain* — every policy's chain has a single recurrent class;
* *communicating* — for every ``s, s'`` some policy reaches ``s'`` from ``s``;
* *weakly communicating* — a closed set in which every state reaches every
  other under some policy, plus states transient under every policy;
* *multichain* — some policy has at least two recurrent classes.

A set ``C`` is *closable* when every ``s ∈ C`` has an action whose successors
stay in ``C``; the union of closable sets is closable, so the largest closable
subset ``M(X)`` of any ``X`` is computed by deleting states until none leaves.
That gives polynomial tests: the model is recurrent iff ``M(S∖{s}) = ∅`` for
all ``s``; it is communicating iff the union graph (``s → s'`` iff some action
moves there) is strongly connected; it is weakly communicating iff the union
graph has exactly one closed class ``C`` and ``M(S∖C) = ∅``. Deciding the
unichain property is NP-hard (Tsitsiklis 2007), so :func:`classify_mdp` first
looks for a multichain witness in polynomial time and then enumerates
deterministic policies up to a cap (reporting ``unichain=None`` beyond it).

All routines here inspect the *support* of ``P`` (entries ``> atol``): that
boolean pattern is copied to the host and analysed with networkx.

References
----------
Puterman, M. L. (1994). *Markov Decision Processes*. Wiley. §8.3 (classification),
Appendix A (chain structure, periodicity).
Tsitsiklis, J. N. (2007). NP-hardness of checking the unichain condition in average cost
MDPs. *Operations Research Letters* 35(3), 319–323.
Levin, D. A., Peres, Y. & Wilmer, E. L. (2017). *Markov Chains and Mixing Times*, 2nd ed.
AMS. §1.3 (irreducibility, periodicity).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Any

import networkx as nx
import numpy as np

from .._validate import check_positive_int, check_probability, real_scalar
from ..backend import array_namespace, as_float, to_numpy
from ..errors import InvalidModelError
from .model import FiniteMDP

__all__ = [
    "ChainStructure",
    "MDPStructure",
    "chain_structure",
    "classify_mdp",
    "require_weakly_communicating",
]


def _fmt_sets(sets: tuple[tuple[int, ...], ...]) -> str:
    return ", ".join("{" + ", ".join(str(s) for s in c) + "}" for c in sets) or "none"


@dataclass(frozen=True)
class ChainStructure:
    """Communicating classes, recurrent classes, transient states and periods of ``P``.

    Attributes
    ----------
    classes : tuple of tuple of int
        Communicating classes (strongly connected components), each sorted, ordered
        by smallest state.
    recurrent_classes : tuple of tuple of int
        The closed classes (no transition leaves them).
    transient : tuple of int
        States outside every recurrent class.
    periods : tuple of int
        ``periods[k]`` is the period of ``recurrent_classes[k]`` (1 = aperiodic).
    """

    classes: tuple[tuple[int, ...], ...]
    recurrent_classes: tuple[tuple[int, ...], ...]
    transient: tuple[int, ...]
    periods: tuple[int, ...]

    @property
    def n_states(self) -> int:
        return sum(len(c) for c in self.classes)

    @property
    def unichain(self) -> bool:
        """Exactly one recurrent class (transient states allowed)."""
        return len(self.recurrent_classes) == 1

    @property
    def irreducible(self) -> bool:
        """A single communicating class."""
        return len(self.classes) == 1

    @property
    def aperiodic(self) -> bool:
        """Every recurrent class has period 1."""
        return all(p == 1 for p in self.periods)

    def describe(self) -> str:
        """One line naming the recurrent classes (with periods) and the transient states."""
        per = "" if self.aperiodic else f" with periods {list(self.periods)}"
        return (
            f"recurrent classes {_fmt_sets(self.recurrent_classes)}{per}; "
            f"transient states {_fmt_sets((self.transient,)) if self.transient else 'none'}"
        )


def _period(adj: np.ndarray, cls: tuple[int, ...]) -> int:
    """gcd over edges (u→v) inside the class of ``level(u) + 1 − level(v)`` (BFS levels)."""
    members = set(cls)
    level = {cls[0]: 0}
    queue = [cls[0]]
    d = 0
    while queue:
        u = queue.pop(0)
        for v in np.flatnonzero(adj[u]):
            v = int(v)
            if v not in members:
                continue
            if v not in level:
                level[v] = level[u] + 1
                queue.append(v)
            else:
                d = math.gcd(d, level[u] + 1 - level[v])
    return abs(d) if d else 1  # d = 0 only for a transient singleton without a self-loop


def _structure_from_support(adj: np.ndarray) -> ChainStructure:
    S = adj.shape[0]
    G = nx.DiGraph()
    G.add_nodes_from(range(S))
    G.add_edges_from(zip(*np.nonzero(adj), strict=True))
    classes = sorted(
        (tuple(sorted(int(s) for s in c)) for c in nx.strongly_connected_components(G)), key=min
    )
    label = np.empty(S, dtype=np.int64)
    for k, c in enumerate(classes):
        label[list(c)] = k
    leaves = np.zeros(len(classes), dtype=bool)
    u, v = np.nonzero(adj)
    np.logical_or.at(leaves, label[u], label[u] != label[v])
    rec = tuple(c for k, c in enumerate(classes) if not leaves[k])
    transient = tuple(sorted(s for k, c in enumerate(classes) if leaves[k] for s in c))
    periods = tuple(_period(adj, c) for c in rec)
    return ChainStructure(tuple(classes), rec, transient, periods)


def _check_support(supp: np.ndarray, P: Any, atol: float, row: str, names: tuple[str, ...]) -> None:
    """Every row of the support ``supp`` (``P > atol``) must keep an entry, else a located ``ValueError``.

    A row with no entry above ``atol`` has no successor in the graph, so its state read as an
    absorbing (recurrent) class: rows of 1/3 with ``atol = 0.5`` gave three recurrent classes.
    """
    empty = ~np.any(supp, axis=-1)
    if empty.any():
        idx = tuple(int(i) for i in np.argwhere(empty)[0])
        top = float(np.max(np.asarray(to_numpy(P))[idx]))
        where = ", ".join(f"{n}={i}" for n, i in zip(names, idx, strict=True))
        raise ValueError(
            f"atol = {atol:g} removes every transition of {row} at ({where}) (its largest entry is "
            f"{top:.6g}); atol must lie below the largest entry of every row"
        )


def chain_structure(P: Any, *, atol: float = 0.0) -> ChainStructure:
    r"""Classify the states of a Markov chain ``P[s, s']`` (one chain, no batch axes).

    ``s → s'`` is an edge iff ``P(s, s') > atol``. Communicating classes are the
    strongly connected components; a class is recurrent iff it is closed; the
    period of a recurrent class is ``gcd{n : P^n(s, s) > 0}``, computed as the gcd
    of ``level(u) + 1 − level(v)`` over the class's edges for BFS levels from any
    of its states (Levin, Peres & Wilmer 2017, Lemma 1.6; Puterman 1994, App. A.3).

    Parameters
    ----------
    P : array, shape (S, S)
        Row-stochastic matrix (checked to ``1e-8``).
    atol : float
        Entries ``≤ atol`` count as zero (default 0: exact support). It must lie in
        ``[0, 1)`` and below the largest entry of every row (``ValueError`` naming the row
        otherwise: a row left without successors would read as an absorbing state).

    Returns
    -------
    ChainStructure

    Raises
    ------
    InvalidModelError
        ``P`` not square, not finite, or rows not distributions.

    Examples
    --------
    A periodic 2-cycle plus a transient state feeding it:

    >>> import numpy as np
    >>> cs = chain_structure(np.array([[0., 1., 0.], [1., 0., 0.], [.5, 0., .5]]))
    >>> cs.recurrent_classes, cs.transient, cs.periods
    (((0, 1),), (2,), (2,))
    """
    xp = array_namespace(P)
    P = as_float(P, xp, field="P")  # a ragged or text P is named ("input" before)
    if P.ndim != 2 or P.shape[0] != P.shape[1] or P.shape[0] < 1:
        raise InvalidModelError(
            f"P must be a square (S, S) transition matrix; got shape {tuple(P.shape)}"
        )
    check_probability(P, "P", ("s", "s'"), "P[s, :]")
    if not 0 <= real_scalar(atol) < 1:  # numpy scalars and 0-d arrays as numbers; not bools
        raise ValueError(f"atol must lie in [0, 1); got {atol!r}")
    supp = to_numpy(P > real_scalar(atol))
    _check_support(supp, P, real_scalar(atol), "P[s, :]", ("s",))
    return _structure_from_support(supp)


# ---------------------------------------------------------------------------------------------
# MDP classification
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class MDPStructure:
    """Puterman's classification of a finite MDP (§8.3.1), with witnesses.

    Attributes
    ----------
    recurrent, communicating, weakly_communicating : bool
    unichain : bool or None
        ``None`` when no multichain witness was found in polynomial time and the
        number of deterministic policies exceeded the enumeration cap.
    closed_classes : tuple of tuple of int
        Closed communicating classes of the union graph (closed under every action).
    witness_policy : int array (S,) or None
        For a multichain model, a deterministic policy with ≥ 2 recurrent classes.
    witness_classes : tuple of tuple of int
        The recurrent classes of ``witness_policy``.
    """

    recurrent: bool
    unichain: bool | None
    communicating: bool
    weakly_communicating: bool
    closed_classes: tuple[tuple[int, ...], ...]
    witness_policy: np.ndarray | None
    witness_classes: tuple[tuple[int, ...], ...]

    @property
    def multichain(self) -> bool | None:
        return None if self.unichain is None else not self.unichain

    @property
    def kind(self) -> str:
        """The most specific class: recurrent, unichain, communicating, weakly communicating, multichain."""
        if self.recurrent:
            return "recurrent"
        if self.unichain:
            return "unichain"
        if self.communicating:
            return "communicating"
        if self.weakly_communicating:
            return "weakly communicating"
        return "multichain" if self.unichain is False else "undetermined (not weakly communicating)"

    def describe(self) -> str:
        s = f"{self.kind} MDP; closed classes of the union graph: {_fmt_sets(self.closed_classes)}"
        if self.witness_policy is not None:
            s += (
                f"; the deterministic policy {self.witness_policy.tolist()} has recurrent classes "
                f"{_fmt_sets(self.witness_classes)}"
            )
        return s


def _max_closable(supp: np.ndarray, X: np.ndarray) -> np.ndarray:
    """Largest ``C ⊆ X`` such that every ``s ∈ C`` has an action with successors inside ``C``."""
    C = X.copy()
    while True:
        stays = ~np.any(supp & ~C[None, None, :], axis=-1)  # [S, A]: action keeps s inside C
        new = C & np.any(stays, axis=-1)
        if np.array_equal(new, C):
            return C
        C = new


def _closing_actions(supp: np.ndarray, C: np.ndarray) -> np.ndarray:
    """For each state, the lowest action keeping it inside ``C`` (0 where none)."""
    stays = ~np.any(supp & ~C[None, None, :], axis=-1)
    return np.argmax(stays, axis=-1)


def _policy_support(supp: np.ndarray, pi: np.ndarray) -> np.ndarray:
    return supp[np.arange(supp.shape[0]), pi]


def _multichain_witness(supp: np.ndarray) -> np.ndarray | None:
    """Polynomial search for a deterministic policy with two recurrent classes."""
    S = supp.shape[0]
    full = np.ones(S, dtype=bool)
    for s in range(S):
        X = full.copy()
        X[s] = False
        M = _max_closable(supp, X)
        if not M.any():
            continue
        pi = _closing_actions(supp, M)
        for R in _structure_from_support(_policy_support(supp, pi)).recurrent_classes:
            Rm = np.zeros(S, dtype=bool)
            Rm[list(R)] = True
            if not set(R) <= set(np.flatnonzero(M).tolist()):
                continue
            M2 = _max_closable(supp, ~Rm)
            if M2.any():
                wit = np.where(Rm, _closing_actions(supp, Rm), _closing_actions(supp, M2))
                if len(_structure_from_support(_policy_support(supp, wit)).recurrent_classes) >= 2:
                    return wit
    return None


def classify_mdp(mdp: FiniteMDP, *, max_policies: int = 50_000, atol: float = 0.0) -> MDPStructure:
    r"""Classify an MDP as recurrent / unichain / communicating / weakly communicating / multichain.

    Uses only the support ``P(s'|s,a) > atol``. Recurrent, communicating and weakly
    communicating are decided in polynomial time (see the module notes). Unichain
    is NP-hard to decide (Tsitsiklis 2007): a polynomial search for two disjoint
    closable sets runs first; if it finds none, all ``A^S`` deterministic policies
    are enumerated when ``A^S ≤ max_policies`` (recurrent models skip this), else
    ``unichain`` is reported as ``None``.

    Parameters
    ----------
    mdp : FiniteMDP
        A single (unbatched) model; ``gamma`` is ignored.
    max_policies : int
        Enumeration cap.
    atol : float
        Transition probabilities ``≤ atol`` count as zero; it must lie in ``[0, 1)`` and below
        the largest entry of every row ``P[s, a, :]`` (``ValueError`` naming the row otherwise).

    Returns
    -------
    MDPStructure

    References
    ----------
    Puterman (1994), §8.3.1 (definitions), Prop. 8.3.1 (weakly communicating ⇒ constant
    optimal gain); Tsitsiklis (2007).

    Examples
    --------
    Two absorbing states, each with a "stay" action, form a multichain model:

    >>> import numpy as np
    >>> from rltheory.mdp import FiniteMDP
    >>> P = np.array([[[1., 0.], [0., 1.]], [[0., 1.], [1., 0.]]])
    >>> st = classify_mdp(FiniteMDP(P, np.zeros((2, 2)), gamma=None))
    >>> st.kind, st.unichain, st.communicating
    ('communicating', False, True)
    """
    if not isinstance(mdp, FiniteMDP):
        raise TypeError(f"classify_mdp expects a FiniteMDP; got {type(mdp).__name__}")
    if mdp.batch_shape:
        raise ValueError(
            f"classify_mdp takes a single model; got batch shape {mdp.batch_shape} (index it first)"
        )
    max_policies = check_positive_int(max_policies, "max_policies")  # numpy integers too
    if not 0 <= real_scalar(atol) < 1:  # numpy scalars and 0-d arrays as numbers; not bools
        raise ValueError(f"atol must lie in [0, 1); got {atol!r}")
    supp = to_numpy(mdp.P > real_scalar(atol))
    _check_support(supp, mdp.P, real_scalar(atol), "P[s, a, :]", ("s", "a"))
    S, A = mdp.S, mdp.A
    union = _structure_from_support(np.any(supp, axis=1))
    closed = union.recurrent_classes
    communicating = union.irreducible
    full = np.ones(S, dtype=bool)
    weakly = False
    if len(closed) == 1:
        Cm = np.zeros(S, dtype=bool)
        Cm[list(closed[0])] = True
        weakly = not _max_closable(supp, ~Cm).any()
    recurrent = True
    for s in range(S):
        X = full.copy()
        X[s] = False
        if _max_closable(supp, X).any():
            recurrent = False
            break
    witness = None
    unichain: bool | None
    if recurrent:
        unichain = True
    else:
        witness = _multichain_witness(supp)
        if witness is not None:
            unichain = False
        elif A**S <= max_policies:
            unichain = True
            for pol in itertools.product(range(A), repeat=S):
                pi = np.asarray(pol)
                if len(_structure_from_support(_policy_support(supp, pi)).recurrent_classes) > 1:
                    unichain, witness = False, pi
                    break
        else:
            unichain = None
    wclasses = (
        ()
        if witness is None
        else _structure_from_support(_policy_support(supp, witness)).recurrent_classes
    )
    return MDPStructure(recurrent, unichain, communicating, weakly, closed, witness, wclasses)


def require_weakly_communicating(mdp: FiniteMDP, what: str) -> None:
    """Raise ``InvalidModelError`` naming the closed classes unless ``mdp`` is weakly communicating.

    Batched models are checked instance by instance; the first failing instance is named.
    ``TypeError`` unless ``mdp`` is a :class:`FiniteMDP`.
    """
    if not isinstance(mdp, FiniteMDP):
        # a FiniteHorizonMDP passed silently (its h axis read as a batch axis), None raised an
        # AttributeError on batch_shape
        raise TypeError(f"{what} needs a FiniteMDP; got {type(mdp).__name__}")
    batch = mdp.batch_shape
    S, A = mdp.S, mdp.A
    supports = to_numpy(mdp.P > 0).reshape((-1, S, A, S))
    for i, supp in enumerate(supports):
        union = _structure_from_support(np.any(supp, axis=1))
        ok = False
        if len(union.recurrent_classes) == 1:
            Cm = np.zeros(S, dtype=bool)
            Cm[list(union.recurrent_classes[0])] = True
            stuck = _max_closable(supp, ~Cm)
            ok = not stuck.any()
            detail = (
                f"the states {np.flatnonzero(stuck).tolist()} outside the closed class "
                f"{_fmt_sets(union.recurrent_classes)} can be kept away from it forever"
            )
        else:
            detail = (
                f"it has {len(union.recurrent_classes)} classes closed under every action: "
                f"{_fmt_sets(union.recurrent_classes)}"
            )
        if not ok:
            where = (
                f" (batch index {tuple(int(j) for j in np.unravel_index(i, batch))})"
                if batch
                else ""
            )
            raise InvalidModelError(
                f"{what} needs a weakly communicating model (constant optimal gain), but{where} {detail}; "
                "use the multichain solvers (average_policy_iteration(mdp, multichain=True) or "
                "average_linear_program(mdp, multichain=True))"
            )
