"""Games and exact equilibrium solvers: matrix games (batched zero-sum kernel, bimatrix
Nash, correlated equilibria), Markov games (Shapley value iteration, general-sum
finite-horizon equilibria), exploitability, and learning dynamics."""

from .bimatrix import (
    DegenerateGameError,
    DegenerateGameWarning,
    bimatrix_nash_conv,
    is_degenerate,
    lemke_howson,
    nash_equilibria,
)
from .correlated import (
    CorrelatedEquilibrium,
    cce_constraints,
    cce_gap,
    ce_constraints,
    ce_gap,
    max_entropy_ce,
    max_welfare_cce,
    max_welfare_ce,
)
from .dynamics import (
    DynamicsResult,
    fictitious_play,
    hedge,
    ogda,
    optimistic_hedge,
    project_simplex,
    regret_matching,
)
from .exploit import Exploitability, best_response, exploitability, nash_conv
from .general_sum import (
    FiniteHorizonEquilibrium,
    correlated_value_iteration,
    finite_horizon_nash_conv,
    finite_horizon_values,
    nash_value_iteration,
)
from .markov import MarkovGame, ZeroSumMarkovGame
from .matrix import ZeroSumSolution, duality_gap, solve_zero_sum, solve_zero_sum_highs
from .shapley import ShapleyResult, evaluate_policy_pair, shapley_operator, shapley_value_iteration

__all__ = [
    "DynamicsResult",
    "fictitious_play",
    "hedge",
    "ogda",
    "optimistic_hedge",
    "project_simplex",
    "regret_matching",
    "FiniteHorizonEquilibrium",
    "correlated_value_iteration",
    "finite_horizon_nash_conv",
    "finite_horizon_values",
    "nash_value_iteration",
    "CorrelatedEquilibrium",
    "DegenerateGameError",
    "DegenerateGameWarning",
    "Exploitability",
    "MarkovGame",
    "ShapleyResult",
    "ZeroSumMarkovGame",
    "ZeroSumSolution",
    "best_response",
    "bimatrix_nash_conv",
    "cce_constraints",
    "cce_gap",
    "ce_constraints",
    "ce_gap",
    "duality_gap",
    "evaluate_policy_pair",
    "exploitability",
    "is_degenerate",
    "lemke_howson",
    "max_entropy_ce",
    "max_welfare_cce",
    "max_welfare_ce",
    "nash_conv",
    "nash_equilibria",
    "shapley_operator",
    "shapley_value_iteration",
    "solve_zero_sum",
    "solve_zero_sum_highs",
]
