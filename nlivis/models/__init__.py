"""The model zoo: `build(config)` makes any registered model; `available()` lists them."""
from nlivis.models.base import MatchingModel, ModelConfig
from nlivis.models.registry import available, build, model_class, register

__all__ = ["MatchingModel", "ModelConfig", "available", "build", "model_class", "register"]
