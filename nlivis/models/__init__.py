"""The model zoo: `build(config)` makes any registered model; `available()` lists them.

The registry's names load lazily (PEP 562): importing `nlivis.models.families`, the torch-free family
metadata the app's Home reads, must not import torch through this package's registry."""
from __future__ import annotations

from typing import Any

__all__ = ["MatchingModel", "ModelConfig", "available", "build", "model_class", "register"]


def __getattr__(name: str) -> Any:
    """`from nlivis.models import build` etc.: import torch (through base and registry) only when asked."""
    if name in ("MatchingModel", "ModelConfig"):
        from nlivis.models import base  # deferred: base imports torch

        return getattr(base, name)
    if name in ("available", "build", "model_class", "register"):
        from nlivis.models import registry  # deferred: registry imports torch

        return getattr(registry, name)
    raise AttributeError(f"module 'nlivis.models' has no attribute {name!r}")
