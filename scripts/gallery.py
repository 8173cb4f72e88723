"""Build the README gallery table from the JSON files written by `rltheory reproduce --all --out DIR`.

Usage: python scripts/gallery.py figures/ > gallery.md
Each row: reproduction, its checks passed, the fitted rates against the claims (with 95% CI),
and pass/fail. Seed-robustness reports (``NAME.seeds.json``, from ``reproduce --seeds``) in the
same folder are skipped; any other JSON file that is not a reproduction record is an error
(status 2, naming the file).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def _rate(check: dict) -> str | None:
    fit = check.get("fit")
    if not fit:
        return None
    claim = check["claim"]
    name = "ρ" if fit["kind"] == "geometric" else "slope"
    lo, hi = fit["ci"]
    exp = claim.get("expected")
    want = {"rate": "=", "rate_at_most": "≤", "rate_at_least": "≥"}.get(claim["kind"], "~")
    tol = claim.get("tol") or 0.0
    band = f" ± {tol:g}" if want == "=" and tol else ""
    target = f" (claim {want} {exp:.4g}{band})" if isinstance(exp, (int, float)) else ""
    return f"{name} {fit['rate']:.4g} [{lo:.4g}, {hi:.4g}]{target}"


class NotARecord(ValueError):
    """A JSON file that is not a reproduction record written by ``rltheory reproduce NAME``."""


# `reproduce --seeds` reports: per-claim verdicts over seeds, not one run
_SEEDS_SUFFIX = ".seeds.json"


def row(path: Path) -> str:
    try:
        d = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise NotARecord(f"{path}: not valid JSON ({exc})") from None
    missing = [k for k in ("name", "pass", "checks") if not isinstance(d, dict) or k not in d]
    if missing:
        raise NotARecord(
            f"{path}: not a reproduction record of `rltheory reproduce` (no {', '.join(missing)})"
        )
    checks = d["checks"]
    passed = sum(bool(c.get("pass")) for c in checks)
    rates = [r for r in (_rate(c) for c in checks) if r]
    shown = "; ".join(dict.fromkeys(rates[:3]))
    return f"| `{d['name']}` | {passed}/{len(checks)} | {shown or 'bound checks only'} | {'✅' if d.get('pass') else '❌'} |"


def main(argv: list[str]) -> int:
    folder = Path(argv[1] if len(argv) > 1 else "figures")
    files = sorted(f for f in folder.glob("*.json") if not f.name.endswith(_SEEDS_SUFFIX))
    if not files:
        print(f"no reproduction JSON files in {folder}", file=sys.stderr)
        return 2
    try:
        rows = [row(f) for f in files]
    except NotARecord as exc:
        print(f"gallery: {exc}", file=sys.stderr)
        return 2
    print("| reproduction | checks passed | fitted rates vs claims (95% CI) | pass |")
    print("|---|---|---|---|")
    print("\n".join(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
