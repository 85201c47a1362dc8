"""One registry: model name → class. `build(config)` is the only way models are made."""
from __future__ import annotations

import importlib
import pkgutil
from pathlib import Path
from typing import Any, Callable, Mapping

from nlivis.models.base import MatchingModel

_MODELS: dict[str, type[MatchingModel]] = {}


def register(name: str) -> Callable[[type[MatchingModel]], type[MatchingModel]]:
    """Class decorator: make a model buildable as `{"name": name, ...}`."""

    def add(cls: type[MatchingModel]) -> type[MatchingModel]:
        if name in _MODELS:
            raise ValueError(f"model {name!r} registered twice")
        cls.name = name
        _MODELS[name] = cls
        return cls

    return add


def available() -> list[str]:
    """Registered model names, sorted."""
    _import_models()
    return sorted(_MODELS)


def model_class(name: str) -> type[MatchingModel]:
    _import_models()
    if name not in _MODELS:
        raise ValueError(f"unknown model {name!r}; available: {sorted(_MODELS)}")
    return _MODELS[name]


def build(config: Mapping[str, Any]) -> MatchingModel:
    """Build a model from plain data: `{"name": "gcnn", <options of GCNNConfig>...}`."""
    if "name" not in config:
        raise ValueError("model config needs a 'name' (one of nlivis.models.available())")
    options = {k: v for k, v in config.items() if k != "name"}
    cls = model_class(str(config["name"]))
    return cls(cls.config_class.from_dict(options))


def _import_models() -> None:
    """Import the model files so their @register decorators run."""
    for info in pkgutil.iter_modules([str(Path(__file__).parent)]):
        if info.name not in {"base", "registry", "trace", "layers"}:
            importlib.import_module(f"nlivis.models.{info.name}")
