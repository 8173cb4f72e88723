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
settings.register_profile(
    "stress",  # HYPOTHESIS_PROFILE=stress: a bug hunt over many more random models (never run by CI)
    deadline=None,
    max_examples=40,  # the base every test's count is multiplied from (see the hook below)
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    print_blob=True,
)
# an explicit HYPOTHESIS_PROFILE wins (a stress run with CI=true set must not fall back to "ci" silently)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE") or ("ci" if os.environ.get("CI") else "dev"))

_STRESS = settings.get_current_profile_name() == "stress"


def pytest_collection_modifyitems(items):
    """Under the ``stress`` profile, multiply every property test's ``max_examples`` (its own
    ``@settings`` count, or the profile's 40, as in CI) by ``HYPOTHESIS_STRESS_FACTOR``
    (default 10): most property tests pin a small count for CI."""
    if not _STRESS:
        return
    factor = int(os.environ.get("HYPOTHESIS_STRESS_FACTOR", "10"))
    for item in items:
        fn = getattr(item, "obj", None)
        own = getattr(fn, "_hypothesis_internal_use_settings", None)  # where @given keeps its settings
        if own is not None and getattr(fn, "is_hypothesis_test", False):
            fn._hypothesis_internal_use_settings = settings(own, max_examples=own.max_examples * factor)


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

