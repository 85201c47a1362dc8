"""Configs as data: TOML files with single inheritance (`extends = "parent.toml"`) and deep merge.

An ablation is a small file that extends its parent and overrides a few keys; `load_config` returns
the merged plain dict (with `extends` resolved away and `config_name` set to the file's stem).
"""
from __future__ import annotations

import copy
import tomllib
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, Mapping

CONFIG_DIR = Path(__file__).resolve().parents[2] / "configs"
"""The project's config folder; `load_config("gcnn")` looks here."""


def deep_merge(base: Mapping[str, Any], override: Mapping[str, Any]) -> dict[str, Any]:
    """`override` wins key by key; nested tables merge, everything else is replaced."""
    merged = copy.deepcopy(dict(base))
    for key, value in override.items():
        if isinstance(value, Mapping) and isinstance(merged.get(key), Mapping):
            merged[key] = deep_merge(merged[key], value)
        else:
            merged[key] = copy.deepcopy(value)
    return merged


def resolve_config_path(name_or_path: str | Path) -> Path:
    """A path as given if it exists, else `configs/<name>.toml`."""
    path = Path(name_or_path)
    if path.is_file():
        return path
    candidate = CONFIG_DIR / (path.name if path.suffix == ".toml" else f"{path.name}.toml")
    if candidate.is_file():
        return candidate
    known = sorted(p.stem for p in CONFIG_DIR.glob("*.toml"))
    raise FileNotFoundError(f"config {str(name_or_path)!r} not found; known configs: {known}")


def load_config(name_or_path: str | Path, _seen: tuple[Path, ...] = ()) -> dict[str, Any]:
    """Load a TOML config, following `extends` chains (cycles are an error naming the chain)."""
    path = resolve_config_path(name_or_path).resolve()
    if path in _seen:
        chain = " → ".join(p.name for p in (*_seen, path))
        raise ValueError(f"config inheritance cycle: {chain}")
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as error:
        raise ValueError(f"{path}: not valid TOML ({error})") from error
    parent = data.pop("extends", None)
    if parent is not None:
        base = load_config(path.parent / parent, (*_seen, path))
        data = deep_merge(base, data)
    data["config_name"] = path.stem
    return data


def all_configs() -> dict[str, dict[str, Any]]:
    """Every config in the project's folder, by name (used by the parametrised model test)."""
    return {p.stem: load_config(p) for p in sorted(CONFIG_DIR.glob("*.toml"))}


OPTIMIZERS = ("adam", "adadelta", "adagrad", "rmsprop", "sgd")
L2_SCHEDULES = ("none", "sigmoid_ramp")
SIZES = ("paper", "shipped")
UNKNOWN_WORD_INITS = ("normal", "uniform")


@dataclass(frozen=True)
class TrainingSettings:
    """The `[training]` table, validated. Defaults are what a config that omits a key gets."""

    optimizer: str = "adam"
    """adam | adadelta | adagrad | rmsprop | sgd."""
    lr: float = 1e-3
    """Initial learning rate."""
    batch_size: int = 32
    """Pairs per optimizer step (per process under torchrun)."""
    epochs: float = 10.0
    """Passes over the training split; a fraction stops part-way through the last one."""
    weight_decay: float = 0.0
    """The optimizer's own L2 weight decay (0 = none)."""
    max_grad_norm: float = 0.0
    """Clip the global gradient norm to this value (0 = no clipping)."""
    lr_decay_per_epoch: float = 1.0
    """Learning rate × this factor after every finished epoch (1 = constant)."""
    dropout_keep_decay_rate: float = 1.0
    """DIIN: keep-rate × this factor every `dropout_keep_decay_steps` steps, smoothly (1 = no schedule)."""
    dropout_keep_decay_steps: int = 10_000
    """Steps over which the keep-rate decays by `dropout_keep_decay_rate` once."""
    l2_schedule: str = "none"
    """none | sigmoid_ramp (DIIN's eq. 8 over the weight matrices)."""
    l2_full_weight: float = 0.0
    """Weight the sigmoid ramp reaches (DIIN: 9e-6, the paper's L2FullRatio; the official code has 9e-5)."""
    l2_ramp_midpoint_step: int = 50_000
    """Step at which the ramp gives half the full weight (DIIN: L2FullStep/2 = 50,000)."""
    l2_ramp_steps: int = 50_000
    """Ramp length: the sigmoid's argument is (step − midpoint)·8 / ramp_steps (DIIN: 50,000)."""
    encoder_difference_weight: float = 0.0
    """Weight of the model's `encoder_difference` regularization term (DIIN: 1e-3)."""
    sgd_fallback_after_steps: int = 0
    """Switch to SGD once this many optimizer steps have passed without a better select-split accuracy,
    checked at every evaluation (0 = never; DIIN §4.2: 30,000 steps)."""
    snli_fraction_with_mnli: float = 0.0
    """Under the full-data `mnli` protocol, each epoch also trains on this fraction of SNLI's training
    split, a new random sample every epoch (Williams et al. 2017's recipe, which DIIN §4.2 follows: 0.15).
    SNLI is looked for in the data root's snli_1.0/ folder, then in the root. No other protocol reads it."""
    sgd_fallback_lr: float = 3e-4
    """Learning rate of the SGD fallback (DIIN §4.2: 3e-4)."""
    adadelta_rho: float = 0.95
    """Adadelta's running-average factor (DIIN §4.2: 0.95)."""
    eps: float = 1e-8
    """The optimizer's epsilon (adam, adadelta, adagrad, rmsprop)."""
    eval_every_steps: int = 500
    """Evaluate on the select split every this many steps, besides every epoch's end (0 = epoch ends only)."""
    checkpoint_every_steps: int = 200
    """Save the resumable training state every this many steps (0 = only when stopped)."""
    eval_batch_size: int = 128
    """Pairs per forward pass when evaluating."""
    log_every_steps: int = 10
    """Write a line to metrics.jsonl (and refresh the progress bar) every this many steps."""

    @classmethod
    def from_dict(cls, values: Mapping[str, Any]) -> "TrainingSettings":
        settings = _checked(cls, values, "[training]")
        if settings.optimizer not in OPTIMIZERS:
            raise ValueError(f"[training] optimizer {settings.optimizer!r} unknown; choose one of {list(OPTIMIZERS)}")
        if settings.l2_schedule not in L2_SCHEDULES:
            raise ValueError(f"[training] l2_schedule {settings.l2_schedule!r} unknown; choose one of {list(L2_SCHEDULES)}")
        for name in ("lr", "batch_size", "epochs", "dropout_keep_decay_steps", "l2_ramp_steps", "eval_batch_size",
                     "log_every_steps", "dropout_keep_decay_rate", "lr_decay_per_epoch"):
            if getattr(settings, name) <= 0:
                raise ValueError(f"[training] {name} must be positive, got {getattr(settings, name)}")
        if not 0.0 <= settings.snli_fraction_with_mnli <= 1.0:
            raise ValueError(f"[training] snli_fraction_with_mnli must be between 0 and 1, got {settings.snli_fraction_with_mnli}")
        for name in ("weight_decay", "max_grad_norm", "l2_full_weight", "encoder_difference_weight",
                     "sgd_fallback_after_steps", "eval_every_steps", "checkpoint_every_steps"):
            if getattr(settings, name) < 0:
                raise ValueError(f"[training] {name} must not be negative, got {getattr(settings, name)}")
        return settings

    def to_dict(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


@dataclass(frozen=True)
class FeatureOptions:
    """The `[features]` table, validated: cut-offs, vocabulary and embedding source. The table may also
    set any other `nlivis.features.featurize.FeatureSettings` field (exact_match_rule, pad_to_cutoff)."""

    max_premise_len: int = 48
    """Premise tokens kept (longer premises are cut, with a notice where a user typed them)."""
    max_hypothesis_len: int = 48
    """Hypothesis tokens kept."""
    max_chars: int = 16
    """Characters kept per word for the char features."""
    min_word_freq: int = 1
    """Training-split count a word needs for its own vocabulary row (others map to UNK)."""
    embeddings: str = "random"
    """Word-vector source: random | minilm | glove:PATH."""
    lowercase: bool = False
    """Fold case in the word vocabulary (and in every lookup of typed text)."""
    unknown_word_init: str = "normal"
    """Rows of words the embedding source has no vector for (and UNK): "normal", N(0, s²), or "uniform",
    U(−s, s), with s = `unknown_word_scale`. Runs recorded without this key used "normal"."""
    unknown_word_scale: float = 0.0
    """s of `unknown_word_init`; 0 = the source's default, which is also what runs recorded without the key
    used: 1.0 for GloVe and random (the DIIN code's std-1 rows), the word-piece matrix's std (≈0.05) for MiniLM."""

    @classmethod
    def from_dict(cls, values: Mapping[str, Any]) -> "FeatureOptions":
        options = _checked(cls, values, "[features]")
        for name in ("max_premise_len", "max_hypothesis_len", "max_chars", "min_word_freq"):
            if getattr(options, name) <= 0:
                raise ValueError(f"[features] {name} must be positive, got {getattr(options, name)}")
        if options.unknown_word_init not in UNKNOWN_WORD_INITS:
            raise ValueError(f"[features] unknown_word_init {options.unknown_word_init!r} unknown; "
                             f"choose one of {list(UNKNOWN_WORD_INITS)}")
        if options.unknown_word_scale < 0:
            raise ValueError(f"[features] unknown_word_scale must not be negative, got {options.unknown_word_scale}")
        return options

    def to_dict(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


def _checked(cls: type, values: Mapping[str, Any], table: str):
    """Build a settings dataclass; unknown keys and wrong types are errors naming the table and key."""
    known = {f.name: f for f in fields(cls)}
    unknown = sorted(set(values) - set(known))
    if unknown:
        raise ValueError(f"{table}: unknown key(s) {unknown}; known keys: {sorted(known)}")
    converted: dict[str, Any] = {}
    for key, value in values.items():
        default = known[key].default
        if isinstance(default, bool) != isinstance(value, bool):
            raise ValueError(f"{table} {key}: expected {type(default).__name__}, got {value!r}")
        if isinstance(default, float) and isinstance(value, int):
            value = float(value)
        if isinstance(default, int) and isinstance(value, float) and value.is_integer():
            value = int(value)
        if type(value) is not type(default):
            raise ValueError(f"{table} {key}: expected {type(default).__name__}, got {value!r}")
        converted[key] = value
    return cls(**converted)


def apply_size(config: Mapping[str, Any], size: str) -> dict[str, Any]:
    """`paper`: the config as written; `shipped`: its `[shipped]` table deep-merged over it.
    Either way the `[shipped]` table itself is dropped and `size` is recorded."""
    if size not in SIZES:
        raise ValueError(f"size {size!r} unknown; choose one of {list(SIZES)}")
    base = {k: v for k, v in config.items() if k != "shipped"}
    if size == "shipped":
        if "shipped" not in config:
            raise ValueError(f"config {config.get('config_name', '?')!r} has no [shipped] table for --size shipped")
        base = deep_merge(base, config["shipped"])
    base["size"] = size
    return base
