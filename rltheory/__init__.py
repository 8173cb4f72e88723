"""rltheory: a theory-first toolkit for tabular and linear-function-approximation RL.

Exact models are solved by dense array kernels (numpy, cupy, any array-API
library); provable algorithms run on top and are checked against the exact
answer. Subpackages: :mod:`rltheory.mdp`, :mod:`rltheory.games`,
:mod:`rltheory.algorithms`, :mod:`rltheory.bounds`, :mod:`rltheory.experiments`.
"""

from .errors import ConvergenceWarning, InvalidModelError, SolverError

__version__ = "0.1.0"

__all__ = ["ConvergenceWarning", "InvalidModelError", "SolverError", "__version__"]
