"""A toy experiment configuration shared by the platform tests (registry, CLI)."""

from __future__ import annotations

import dataclasses


@dataclasses.dataclass(frozen=True)
class ToyConfig:
    n: int = 1

    @classmethod
    def quick(cls) -> ToyConfig:
        return cls()

    @classmethod
    def full(cls) -> ToyConfig:
        return cls(n=2)
