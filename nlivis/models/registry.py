"""One registry: model name → class. `build(config)` is the only way models are made, and it checks the
options first: types and ranges (`model_config`), then that the model can be built at all and fits in
this machine's memory (`check_buildable`), so neither a config file nor a checkpoint's config.json can
start a 192 GB allocation or reach torch with a string for a size."""
from __future__ import annotations

import importlib
import os
import pkgutil
from dataclasses import fields
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable, Mapping

import torch
from torch.overrides import TorchFunctionMode

from nlivis.data.options import ConfigError, shown_value, typed_options
from nlivis.models.base import MatchingModel, ModelConfig
from nlivis.models.families import FAMILIES

_MODELS: dict[str, type[MatchingModel]] = {}

MODEL_TABLE = "[model]"

FRACTION_OPTIONS: dict[str, tuple[bool, bool]] = {
    "dropout": (True, False),
    "first_scale_down_ratio": (False, True),
    "transition_scale_down_ratio": (False, True),
}
"""Float options that are fractions: name → (0 allowed, 1 allowed). Dropout 1 would zero every input;
a scale-down ratio of 0 would keep no channels."""
MAX_LAYERS = 64
"""Most layers or blocks one option may ask for (the papers use at most 8): the model is constructed layer by
layer, on the meta device too, so `dense_layers = 1000000000` would never finish being checked."""
LOWER_SIZES = "Lower its sizes (hidden_size, layers, vocabulary or word_dim)"
ODD_OPTIONS = frozenset({"kernel_width", "filter_width", "char_width", "dense_kernel"})
"""Kernel widths of "same"-padded convolutions over tokens or characters: an even width gives an output one
position longer than its input (measured: every model with such an option fails its first forward pass)."""


def register(name: str) -> Callable[[type[MatchingModel]], type[MatchingModel]]:
    """Class decorator: make a model buildable as `{"name": name, ...}` and tie it to its family's metadata
    (`families.FAMILIES`: label, order, colour, paper), which every model must declare there."""

    def add(cls: type[MatchingModel]) -> type[MatchingModel]:
        if name in _MODELS:
            raise ValueError(f"model {name!r} registered twice")
        if name not in FAMILIES:
            raise ValueError(f"model {name!r} has no entry in nlivis/models/families.py (its label, order, "
                             "colour and paper): add one there")
        cls.name = name
        cls.family = FAMILIES[name]
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


def model_config(config: Any, table: str = MODEL_TABLE) -> ModelConfig:
    """The model's config from plain data (`{"name": "gcnn", <options of GCNNConfig>...}`), every option
    checked against the model's declared defaults: its type, finite numbers, sizes and counts at least 1
    (at least 0 where the default is 0, which means "automatic"), layer counts (`*_layers`, `*_blocks`) at
    most `MAX_LAYERS`, fractions within [0, 1), odd kernel widths. Problems raise `ConfigError` naming
    `table` and the key."""
    if not isinstance(config, Mapping):
        raise ConfigError(f"{table} must be a table of model options, got {shown_value(config)}", table)
    name = config.get("name")
    if name is None:
        raise ConfigError(f"{table} needs a 'name' (one of {available()})", table, "name")
    if not isinstance(name, str) or name not in available():
        raise ConfigError(f"{table} name: unknown model {shown_value(name)}; available: {available()}", table, "name")
    cls = _MODELS[name]
    options = typed_options(cls.config_class, {k: v for k, v in config.items() if k != "name"}, table)
    defaults = {f.name: f.default for f in fields(cls.config_class)}
    for key, value in options.items():
        problem = _range_problem(key, value, defaults[key])
        if problem:
            raise ConfigError(f"{table} {key}: {problem}, got {shown_value(value)}", table, key)
    return cls.config_class(**options)


def _range_problem(key: str, value: Any, default: Any) -> str | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if key in FRACTION_OPTIONS:
        zero, one = FRACTION_OPTIONS[key]
        if not ((0 <= value if zero else 0 < value) and (value <= 1 if one else value < 1)):
            return f"must lie in {'[' if zero else '('}0, 1{']' if one else ')'}"
        return None
    if isinstance(value, int):
        if default == 0 and value < 0:
            return "must be 0 (automatic) or a positive integer"
        if default != 0 and value < 1:
            return "must be a positive integer"
        if key.endswith(("_layers", "_blocks")) and value > MAX_LAYERS:
            return f"must be at most {MAX_LAYERS} (a count of layers; the papers use at most 8)"
        if key in ODD_OPTIONS and value % 2 == 0:
            return "must be odd (a \"same\"-padded convolution needs an odd width)"
        return None
    if value < 0:
        return "must not be negative"
    return None


def physical_memory_bytes() -> int | None:
    """This machine's physical memory, or None where the OS does not say."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return None


def check_buildable(cls: type[MatchingModel], config: ModelConfig, table: str = MODEL_TABLE) -> int:
    """Build the model on torch's `meta` device (shapes only, no memory) and refuse it, before any real
    allocation, when its own checks refuse the options or its parameters and buffers would need more
    memory than the machine has. Returns the bytes the real model will take."""
    needed, count = _meta_size(cls, tuple(sorted(config.to_dict().items())), table)
    available_bytes = physical_memory_bytes()
    if available_bytes is not None and needed > available_bytes:
        raise ConfigError(f"{table}: the {cls.name} model these options describe is too large for this machine: its "
                          f"{count:,} parameters need {needed / 1e9:,.1f} GB, and this machine has "
                          f"{available_bytes / 1e9:,.1f} GB of memory. {LOWER_SIZES}", table)
    return needed


class ShapesOnly(TorchFunctionMode):
    """Leaves a meta tensor's in-place changes undone (an initialiser's `normal_`, `uniform_`, `zero_` …): on the
    meta device they change no shape, yet torch runs some of them through reference code that imports
    torch._dynamo on first use (2.5 s of CPU in every process that checked a model). Like `torch.device`, a mode
    of this thread only: a model built in another thread meanwhile is initialised as usual."""

    KEPT = frozenset({"resize_", "resize_as_", "set_", "as_strided_", "squeeze_", "unsqueeze_", "transpose_", "t_",
                      "swapdims_", "swapaxes_", "requires_grad_", "share_memory_"})
    """In-place methods that change a shape or a flag, which the shell must keep."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        name = getattr(func, "__name__", "")
        target = args[0] if args else (kwargs or {}).get("tensor")  # torch.nn.init's functions take it by name
        if (name.endswith("_") and not name.startswith("_") and name not in self.KEPT
                and isinstance(target, torch.Tensor) and target.is_meta):
            return target
        return func(*args, **(kwargs or {}))


@lru_cache(maxsize=256)
def _meta_size(cls: type[MatchingModel], options: tuple[tuple[str, Any], ...], table: str) -> tuple[int, int]:
    """(bytes of parameters and buffers, parameter count) of the model built on the meta device; cached, as
    the app's Train page checks every project config on each rerun (~30 ms a model otherwise)."""
    config = cls.config_class(**dict(options))
    try:
        with torch.device("meta"), ShapesOnly():
            shell = cls(config)
    except ValueError as error:  # the model's own checks (DIIN's grid, ESAN's even width ...)
        raise ConfigError(f"{table}: {error}", table) from None
    except (RuntimeError, TypeError, IndexError, OverflowError, MemoryError) as error:
        if "overflow" in str(error).lower() or isinstance(error, (OverflowError, MemoryError)):
            raise ConfigError(f"{table}: the {cls.name} model these options describe is too large to build (a weight "
                              f"would have more elements than torch can address: {str(error)[:160]}). {LOWER_SIZES}",
                              table) from None
        raise ConfigError(f"{table}: these options cannot build a {cls.name} model ({type(error).__name__}: "
                          f"{str(error)[:200]})", table) from None
    tensors = [*shell.parameters(), *shell.buffers()]
    return sum(t.numel() * t.element_size() for t in tensors), sum(t.numel() for t in shell.parameters())


def build(config: Mapping[str, Any]) -> MatchingModel:
    """Build a model from plain data: `{"name": "gcnn", <options of GCNNConfig>...}`, checked first
    (`model_config`, `check_buildable`); every problem is a `ConfigError` (a ValueError)."""
    checked = model_config(config)
    cls = _MODELS[config["name"]]
    check_buildable(cls, checked)
    return cls(checked)


def _import_models() -> None:
    """Import the model files so their @register decorators run."""
    for info in pkgutil.iter_modules([str(Path(__file__).parent)]):
        if info.name not in {"base", "registry", "trace", "layers", "families"}:
            importlib.import_module(f"nlivis.models.{info.name}")
