"""Module-level sweep functions for the platform tests (importable by worker processes).

Each call leaves one marker file in ``config["log_dir"]`` so tests can count how
many points were actually computed, across processes and reruns.
"""

from __future__ import annotations

import time
import uuid
from pathlib import Path

import numpy as np


def _mark(config: dict, seed: int) -> int:
    log = Path(config["log_dir"])
    (log / f"call-{config['x']}-{seed}-{uuid.uuid4().hex}").touch()
    return len(list(log.glob("call-*")))


def noisy_moments(config: dict, seed: int) -> dict:
    """Sample mean and variance of ``n`` draws of N(x, 1) from ``default_rng(seed)``; one marker per call.

    If ``log_dir/abort_after`` holds an integer k, the call raises once k calls have
    been made (a simulated crash half-way through a sweep).
    """
    calls = _mark(config, seed)
    stop = Path(config["log_dir"]) / "abort_after"
    if stop.exists() and calls > int(stop.read_text()):
        raise RuntimeError(f"simulated crash at call {calls}")
    delay = float(config.get("delay", 0.0))
    if delay:
        time.sleep(delay)
    z = np.random.default_rng(seed).normal(config["x"], 1.0, size=int(config["n"]))
    return {"mean": float(z.mean()), "var": float(z.var())}
