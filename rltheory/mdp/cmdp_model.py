r"""The constrained MDP model ``(M, C, b)``: maximise ``V_R^π(μ)`` subject to ``V_{C_i}^π(μ) ≤ b_i``.

Values are unnormalised discounted sums ``E[Σ_t γ^t f(s_t, a_t) | s_0 ~ μ]``, or gains for
``gamma=None`` (Altman 1999, ch. 3 and 4). The model validates its costs ``C[m, S, A]`` and
thresholds ``b[m]`` once, in the namespace and dtype of the underlying :class:`FiniteMDP`; it is
solved by :func:`rltheory.mdp.solve_cmdp` and its Lagrangian is in
:mod:`rltheory.mdp.cmdp_lagrangian`.

References
----------
Altman, E. (1999). *Constrained Markov Decision Processes*. Chapman & Hall/CRC. Ch. 3, 4.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .._validate import check_finite, check_ndim
from ..backend import as_float
from ..errors import InvalidModelError
from .model import FiniteMDP

__all__ = ["ConstrainedMDP"]


@dataclass(frozen=True, eq=False)
class ConstrainedMDP:
    """Constrained MDP: maximise ``V_R^π(μ)`` subject to ``V_{C_i}^π(μ) ≤ b_i``.

    Parameters
    ----------
    mdp : FiniteMDP
        Unbatched model; ``gamma=None`` selects the average-reward (gain) criterion.
    C : array, shape (m, S, A)
        Cost functions ``C_i(s, a)``.
    b : array, shape (m,)
        Thresholds.

    Raises
    ------
    InvalidModelError
        ``C`` of the wrong shape or with non-finite entries (index named), ``b`` of
        the wrong length or non-finite, a batched ``mdp``.
    TypeError
        Complex or string ``C`` or ``b`` (the field named).

    Examples
    --------
    >>> import numpy as np
    >>> from rltheory.mdp import FiniteMDP
    >>> mdp = FiniteMDP(np.ones((1, 2, 1)), np.array([[0.0, 1.0]]), gamma=0.5)
    >>> cmdp = ConstrainedMDP(mdp, C=np.array([[[0.0, 1.0]]]), b=np.array([1.0]))
    >>> cmdp.m, cmdp.S, cmdp.A
    (1, 1, 2)
    """

    mdp: FiniteMDP
    C: Any
    b: Any

    def __post_init__(self) -> None:
        if not isinstance(self.mdp, FiniteMDP):
            raise InvalidModelError(f"mdp must be a FiniteMDP; got {type(self.mdp).__name__}")
        if self.mdp.batch_shape:
            raise InvalidModelError(
                f"ConstrainedMDP takes a single model; mdp has batch shape {self.mdp.batch_shape}"
            )
        xp = self.mdp.xp
        S, A = self.mdp.S, self.mdp.A
        C = as_float(self.C, xp, self.mdp.dtype, field="C")
        check_ndim(C, "C", 3, f"(m, S, A) = (m, {S}, {A})")
        if C.ndim != 3 or tuple(C.shape[1:]) != (S, A):
            raise InvalidModelError(
                f"C must have shape (m, S, A) = (m, {S}, {A}); got {tuple(C.shape)}"
            )
        check_finite(C, "C", ("i", "s", "a"))
        b = as_float(self.b, xp, self.mdp.dtype, field="b")
        if b.ndim != 1 or b.shape[0] != C.shape[0]:
            raise InvalidModelError(
                f"b must have shape (m,) = ({C.shape[0]},) matching C's {C.shape[0]} constraints; "
                f"got {tuple(b.shape)}"
            )
        check_finite(b, "b", ("i",))
        object.__setattr__(self, "C", C)
        object.__setattr__(self, "b", b)

    @property
    def m(self) -> int:
        """Number of constraints."""
        return int(self.C.shape[0])

    @property
    def S(self) -> int:
        return self.mdp.S

    @property
    def A(self) -> int:
        return self.mdp.A

    @property
    def gamma(self) -> float | None:
        return self.mdp.gamma

    def __repr__(self) -> str:
        return f"ConstrainedMDP(S={self.S}, A={self.A}, m={self.m}, gamma={self.gamma})"


def _check_cmdp(cmdp: Any, what: str) -> None:
    if not isinstance(cmdp, ConstrainedMDP):
        raise TypeError(f"{what} expects a ConstrainedMDP; got {type(cmdp).__name__}")
