"""The experiment registry holds every experiment module once, and each one's presets build."""

from __future__ import annotations

import ast
from pathlib import Path

import rltheory.experiments as experiments
from rltheory.experiments import base

_PKG = Path(experiments.__file__).resolve().parent


def _registering_modules() -> set[str]:
    """Modules of rltheory/experiments whose top level calls register(...)."""
    out = set()
    for path in _PKG.glob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "register":
                out.add(path.stem)
    return out


def test_every_module_that_registers_an_experiment_is_listed_once():
    # a module left out of _MODULES is never imported by names()/get(): its experiment is
    # missing from `rltheory list` and `reproduce --all` without a word
    listed = experiments._MODULES
    assert len(listed) == len(set(listed))
    assert _registering_modules() == set(listed)


def test_each_registered_experiment_comes_from_a_listed_module_and_builds_its_presets():
    names = experiments.names()
    assert len(names) == len(set(names)) == len(base.registered())
    modules = {f"rltheory.experiments.{m}" for m in experiments._MODULES}
    seen = set()
    for name in names:
        exp = experiments.get(name)
        assert exp.name == name and exp.run.__module__ in modules and exp.plot.__module__ in modules
        seen.add(exp.run.__module__)
        quick, full = exp.config(False), exp.config(True)
        assert type(quick) is exp.config_cls and type(full) is exp.config_cls
        assert base.config_to_dict(quick) and base.config_to_dict(full)
    assert seen == modules  # every listed module registers something
