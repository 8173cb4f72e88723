"""Strict-JSON form of non-finite floats in sweep records (results file format version 2).

JSON has no NaN or infinity: ``json.dumps`` writes the tokens ``NaN``/``Infinity``, which strict
parsers (JavaScript's ``JSON.parse``, ``jq``, ``json.loads(..., parse_constant=...)`` set to
refuse them) reject. A version-2 record writes each non-finite float of its ``config`` and
``result`` as the string ``"nan"``, ``"inf"`` or ``"-inf"`` and lists where they are in the
field ``"nonfinite"``: one path per value, from the record down, of object keys and list
indices (``[["result", "loss", 3], ["config", "clip"]]``). A string ``"nan"`` that a result
holds as text is at no listed path, so it stays text: the encoding is lossless and unambiguous.
"""

from __future__ import annotations

import json
import math
from typing import Any

_TEXT = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}


def _float_text(v: float) -> str:
    return "nan" if v != v else ("inf" if v > 0 else "-inf")


def encode_nonfinite(x: Any, path: tuple = ()) -> tuple[Any, list[list]]:
    """``x`` (already a JSON value: dicts with string keys, lists, numbers, text, None) with every
    non-finite float replaced by its text, and the paths below ``path`` where they were."""
    if isinstance(x, float) and not math.isfinite(x):
        return _float_text(x), [list(path)]
    if isinstance(x, dict):
        out, paths = {}, []
        for k, v in x.items():
            out[k], p = encode_nonfinite(v, (*path, k))
            paths += p
        return out, paths
    if isinstance(x, list):
        items, paths = [], []
        for i, v in enumerate(x):
            e, p = encode_nonfinite(v, (*path, i))
            items.append(e)
            paths += p
        return items, paths
    return x, []


def decode_nonfinite(record: dict, paths: Any) -> None:
    """Put the floats back at ``paths`` of ``record`` (in place); a located ``ValueError`` for a
    path that is not a list of keys and indices leading to ``"nan"``, ``"inf"`` or ``"-inf"``
    inside ``config`` or ``result``."""
    if not isinstance(paths, list) or not paths:
        raise ValueError(f"nonfinite = {paths!r:.60} is not a non-empty list of paths")
    for j, p in enumerate(paths):
        where = f"nonfinite[{j}] = {p!r:.60}"
        if not isinstance(p, list) or len(p) < 1 or p[0] not in ("config", "result"):
            raise ValueError(f"{where} is not a path into config or result")
        parent: Any = record
        for step in p[:-1]:
            parent = _child(parent, step, where)
        text = _child(parent, p[-1], where)
        if not isinstance(text, str) or text not in _TEXT:
            raise ValueError(f"{where} leads to {text!r:.40}, not 'nan', 'inf' or '-inf'")
        parent[p[-1]] = _TEXT[text]


def _child(parent: Any, step: Any, where: str) -> Any:
    if isinstance(parent, dict) and isinstance(step, str) and step in parent:
        return parent[step]
    if (
        isinstance(parent, list)
        and isinstance(step, int)
        and not isinstance(step, bool)
        and 0 <= step < len(parent)
    ):
        return parent[step]
    raise ValueError(f"{where} does not exist in the record (no entry {step!r:.40})")


def refuse_constant(token: str) -> float:
    """``parse_constant`` for :func:`json.loads` on a version-2 file: ``NaN``/``Infinity`` tokens
    are not strict JSON, and a version-2 writer never writes them."""
    raise ValueError(
        f"{token} is not strict JSON (version 2 writes it as text listed in nonfinite)"
    )


def strict_loads(line: bytes) -> Any:
    """A version-2 line parsed as strict JSON."""
    return json.loads(line, parse_constant=refuse_constant)
