"""Exception and warning types shared by every rltheory module.

``InvalidModelError`` is raised when a model's invariants are broken (shapes,
probabilities, discount); plain ``ValueError`` for bad arguments; ``TypeError``
for wrong types or backends; ``SolverError`` when an external solver (HiGHS,
cvxpy) fails, carrying its status. Running out of iterations is *not* an
error: solvers return ``converged=False`` and emit ``ConvergenceWarning``.
"""

from __future__ import annotations

__all__ = ["InvalidModelError", "SolverError", "ConvergenceWarning"]


class InvalidModelError(ValueError):
    """A model's invariant is broken; the message names field, rule, value and index."""


class SolverError(RuntimeError):
    """An external solver failed; ``status`` holds its status code or string."""

    def __init__(self, message: str, status: object = None) -> None:
        super().__init__(message)
        self.status = status


class ConvergenceWarning(UserWarning):
    """An iterative routine reached its iteration cap before its stopping rule held."""
