"""Shared fixtures: the array backends kernels are tested under, hypothesis profiles."""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, settings

from rltheory.backend import cupy_available

settings.register_profile(
    "ci",
    derandomize=True,
    deadline=None,
    max_examples=40,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    print_blob=True,
)
settings.register_profile(
    "dev",
    deadline=None,
    max_examples=40,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.load_profile("ci" if os.environ.get("CI") else os.environ.get("HYPOTHESIS_PROFILE", "dev"))


def _backends() -> list:
    out = [pytest.param("numpy", id="numpy"), pytest.param("array_api_strict", id="strict")]
    if cupy_available():
        out.append(pytest.param("cupy", id="cupy", marks=pytest.mark.gpu))
    return out


@pytest.fixture(scope="session", params=_backends())
def xp(request):
    """The array namespace kernels run under: numpy, array_api_strict (and cupy on a GPU)."""
    name = request.param
    if name == "numpy":
        import array_api_compat.numpy as mod
    elif name == "array_api_strict":
        mod = pytest.importorskip("array_api_strict")
    else:
        import cupy as mod
    return mod

