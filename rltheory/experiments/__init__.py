"""Reproductions of paper figures and theorem checks, one module per figure.

Usage::

    from rltheory import experiments
    experiments.names()                       # registered names, e.g. ['vi-rates', ...]
    exp = experiments.get("vi-rates")
    result = exp.run(exp.config_cls.quick())  # ExperimentResult; result.passed
    fig = exp.plot(result)
    report = experiments.seed_robustness("vi-rates", range(10))  # each claim's verdicts over seeds

To add an experiment, write ``rltheory/experiments/<snake_name>.py`` following
:mod:`rltheory.experiments.base` and add its module name to ``_MODULES`` below
(one line). The modules are imported lazily by :func:`names` and :func:`get`.
"""

from __future__ import annotations

import importlib

from .base import Experiment, ExperimentResult, config_to_dict, quick_mode, register, registered
from .robustness import SeedReport, seed_robustness
from .sweep import SweepPoint, grid_product, load_results, sweep

__all__ = [
    "Experiment",
    "ExperimentResult",
    "SeedReport",
    "SweepPoint",
    "config_to_dict",
    "get",
    "grid_product",
    "load_results",
    "names",
    "quick_mode",
    "register",
    "seed_robustness",
    "sweep",
]

#: Experiment modules (relative to ``rltheory.experiments``), imported on first use.
_MODULES: list[str] = [
    # one module name per line
    "vi_rates",
    "offline_pessimism",
    "marlhf_coverage",
    "hnpg_hybrid",
    "selective_coverage",
    "solver_comparison",
    "matrix_dynamics",
    "markov_games",
    "average_reward",
    "cmdp_frontier",
    "npg_primal_dual",
    "general_utility_pd",
    "kappa_truncation",
    "networked_pd",
    "mac_mixing",
    "two_stage_vs_pd",
    "pg_vs_npg",
    "entropy_npg",
    "pmd_linear",
    "td_linear",
    "q_replay",
    "nac_critic",
]


def _load_all() -> None:
    for mod in _MODULES:
        importlib.import_module(f"{__name__}.{mod}")


def names() -> list[str]:
    """Sorted names of all experiments (imports every module listed in ``_MODULES``)."""
    _load_all()
    return sorted(registered())


def get(name: str) -> Experiment:
    """The experiment registered as ``name``.

    Raises
    ------
    KeyError
        No experiment has that name; the message lists the known names.
    """
    _load_all()
    reg = registered()
    try:
        return reg[name]
    except KeyError:
        raise KeyError(f"no experiment named {name!r}; known: {sorted(reg)}") from None
