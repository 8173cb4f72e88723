"""The package's import rules (DESIGN.md "Layers"), checked on the source of every module.

* ``mdp`` never imports ``games``, ``algorithms`` or ``experiments``;
* ``algorithms`` and ``bounds`` never import ``experiments``;
* only ``plot.py``, ``experiments`` and ``cli.py`` import matplotlib;
* only ``backend.py`` imports cupy.

Module splits move code between files; this keeps them from introducing an import that the
layering forbids. Imports are read with :mod:`ast` (nothing is executed), including imports
inside functions, and relative imports are resolved against the importing module.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parents[2] / "rltheory"


def _modules() -> list[Path]:
    return sorted(p for p in PKG.rglob("*.py") if "__pycache__" not in p.parts)


def _dotted(path: Path) -> str:
    rel = path.relative_to(PKG.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _imports(path: Path) -> list[tuple[int, str]]:
    """``(line, absolute module name)`` of every import in ``path``."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    name = _dotted(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            out.append((node.lineno, mod))
            # "from . import x" / "from .. import games": the names may be subpackages
            if node.module is None:
                out += [(node.lineno, f"{mod}.{a.name}") for a in node.names]
    return out


def _rule_violations() -> list[str]:
    bad = []
    for path in _modules():
        name = _dotted(path)
        sub = name.split(".")[1] if name.count(".") >= 1 else ""
        for line, mod in _imports(path):
            where = f"{path.relative_to(PKG.parent)}:{line} imports {mod}"
            top = mod.split(".")
            if top[0] == "rltheory" and len(top) > 1:
                target = top[1]
                if sub == "mdp" and target in ("games", "algorithms", "experiments"):
                    bad.append(f"{where} (mdp must not import {target})")
                if sub in ("algorithms", "bounds") and target == "experiments":
                    bad.append(f"{where} ({sub} must not import experiments)")
            if top[0] == "matplotlib" and not (
                name in ("rltheory.plot", "rltheory.cli") or sub == "experiments"
            ):
                bad.append(f"{where} (only plot.py, experiments and cli.py import matplotlib)")
            if top[0] == "cupy" and name != "rltheory.backend":
                bad.append(f"{where} (only backend.py imports cupy)")
    return bad


def test_every_module_keeps_the_layering():
    bad = _rule_violations()
    assert not bad, "layering violations:\n" + "\n".join(bad)


@pytest.mark.parametrize(
    ("source", "module", "expected"),
    [
        ("from ..games import zoo\n", "mdp/x.py", "rltheory.games"),
        ("from .. import games\n", "mdp/x.py", "rltheory.games"),
        (
            "def f():\n    from rltheory.experiments import base\n",
            "algorithms/x.py",
            "rltheory.experiments",
        ),
        ("import matplotlib.pyplot as plt\n", "bounds/x.py", "matplotlib.pyplot"),
        ("from .bellman import q_values\n", "mdp/x.py", "rltheory.mdp.bellman"),
    ],
)
def test_the_scanner_resolves_imports(tmp_path, monkeypatch, source, module, expected):
    # the check itself can fail: a forbidden import written into a scratch package is found
    root = tmp_path / "rltheory"
    target = root / module
    target.parent.mkdir(parents=True)
    target.write_text(source, encoding="utf-8")
    monkeypatch.setitem(globals(), "PKG", root)
    assert expected in [m for _, m in _imports(target)]
    if expected == "rltheory.mdp.bellman":
        assert not _rule_violations()
    else:
        assert _rule_violations(), f"{source!r} in {module} was not flagged"
