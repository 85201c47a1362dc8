"""Configs as data: TOML files with single inheritance (`extends = "parent.toml"`) and deep merge.

An ablation is a small file that extends its parent and overrides a few keys; `load_config` returns
the merged plain dict (with `extends` resolved away and `config_name` set to the file's stem), checked
whole: every table's keys, types and ranges, for the paper size and for the `[shipped]` overrides, with a
`ConfigError` naming the file that set the offending key, its table and the key.
"""
from __future__ import annotations

import copy
import tomllib
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, Mapping

from nlivis.data.options import ConfigError, epochs_problem, shown_value, typed_options
from nlivis.features.settings import FeatureSettings

CONFIG_DIR = Path(__file__).resolve().parents[2] / "configs"
"""The project's config folder; `load_config("gcnn")` looks here."""

OPTION_TABLES = ("model", "features", "training")
"""The tables a config (and its `[shipped]` table) may hold."""
TOP_LEVEL_KEYS = ("extends", "shipped", *OPTION_TABLES)


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


def load_config(name_or_path: str | Path) -> dict[str, Any]:
    """Load a TOML config, following `extends` chains (cycles are an error naming the chain), and check it
    (`check_config`) for the paper size and, when it has a `[shipped]` table, the shipped size; a problem
    is a `ConfigError` naming the file that set the offending key."""
    chain = _read_chain(resolve_config_path(name_or_path).resolve(), ())
    data: dict[str, Any] = {}
    for _, raw in reversed(chain):  # the root first, each child deep-merged over it
        data = deep_merge(data, {k: v for k, v in raw.items() if k != "extends"})
    data["config_name"] = chain[0][0].stem
    for size in SIZES if "shipped" in data else SIZES[:1]:
        try:
            check_config(data, size)
        except ConfigError as error:
            raise _from_loaded_file(_locate(error, chain, size), chain[0][0]) from None
    return data


def _from_loaded_file(error: ConfigError, loaded: Path) -> ConfigError:
    """`error` as it names the file that set the key; when that is a parent, the file the user loaded is named
    too, so the message answers both "where is it set" and "which config did I load"."""
    if error.path in (None, str(loaded)):
        return error
    return ConfigError(f"{error.bare_message} (reached from {loaded} through `extends`)", error.table, error.key,
                       error.path)


def _read_chain(path: Path, seen: tuple[Path, ...]) -> list[tuple[Path, dict[str, Any]]]:
    """[(file, its own data)] from `path` up its `extends` chain, each file's structure checked."""
    if path in seen:
        chain = " → ".join(p.name for p in (*seen, path))
        raise ConfigError(f"config inheritance cycle: {chain}", path=str(seen[-1]))
    data = _read_toml(path)
    _check_structure(data, path)
    parent = data.get("extends")
    if parent is None:
        return [(path, data)]
    try:
        parent_path = resolve_config_path(path.parent / parent).resolve()
    except FileNotFoundError as error:
        raise ConfigError(f"extends = {parent!r}: {error}", key="extends", path=str(path)) from None
    return [(path, data), *_read_chain(parent_path, (*seen, path))]


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        raw = path.read_bytes()
    except OSError as error:
        raise ConfigError(f"cannot read the config ({error.strerror or error})", path=str(path)) from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        line = raw[: error.start].count(b"\n") + 1
        raise ConfigError(f"line {line}: not UTF-8 text (the bytes {raw[error.start:error.end]!r})",
                          path=str(path)) from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"not valid TOML ({error})", path=str(path)) from None
    except RecursionError:
        raise ConfigError("not valid TOML (nested too deeply)", path=str(path)) from None


def _check_structure(data: dict[str, Any], path: Path) -> None:
    """The file's own top level: known keys, `extends` a file name, every option table a table."""
    unknown = sorted(set(data) - set(TOP_LEVEL_KEYS))
    if unknown:
        raise ConfigError(f"unknown top-level key(s) {unknown}; a config holds {list(TOP_LEVEL_KEYS)}",
                          key=unknown[0], path=str(path))
    parent = data.get("extends")
    if parent is not None and (not isinstance(parent, str) or not parent.strip()):
        raise ConfigError(f"extends must name the parent config file (a string such as \"gcnn.toml\"), "
                          f"got {shown_value(parent)}", key="extends", path=str(path))
    _check_tables(data, "", path)
    if "shipped" in data:
        if not isinstance(data["shipped"], dict):
            raise ConfigError(f"[shipped] must be a table of overrides ([shipped.model], [shipped.features], "
                              f"[shipped.training]), got {shown_value(data['shipped'])}", "[shipped]", path=str(path))
        unknown = sorted(set(data["shipped"]) - set(OPTION_TABLES))
        if unknown:
            raise ConfigError(f"[shipped]: unknown key(s) {unknown}; it may hold {list(OPTION_TABLES)}", "[shipped]",
                              unknown[0], path=str(path))
        _check_tables(data["shipped"], "shipped.", path)


def _check_tables(data: Mapping[str, Any], prefix: str = "", path: Path | None = None) -> None:
    for table in OPTION_TABLES:
        if table in data and not isinstance(data[table], Mapping):
            raise ConfigError(f"[{prefix}{table}] must be a table of options, got {table} = "
                              f"{shown_value(data[table])}", f"[{prefix}{table}]", path=None if path is None else str(path))


def _locate(error: ConfigError, chain: list[tuple[Path, dict[str, Any]]], size: str) -> ConfigError:
    """`error` naming the file (child-most first) that set its key, under `[shipped.*]` when the shipped
    overrides set it; the loaded file when no file sets it (a missing key)."""
    table = (error.table or "").strip("[]")
    searched = ([("shipped", table)] if size == "shipped" else []) + [(table,)]
    for keys in searched:
        for path, raw in chain:
            node: Any = raw
            for part in (*keys, *([error.key] if error.key else [])):
                node = node.get(part) if isinstance(node, dict) else None
            if node is not None:
                if keys[0] == "shipped":
                    return ConfigError(error.bare_message.replace(f"[{table}]", f"[shipped.{table}]", 1),
                                       f"[shipped.{table}]", error.key, str(path))
                return error.located(path)
    return error.located(chain[0][0])


def check_config(config: Mapping[str, Any], size: str = "paper") -> dict[str, Any]:
    """The config a run of `size` uses (`apply_size`), checked by `check_resolved_config`; returned."""
    resolved = apply_size(config, size)
    check_resolved_config(resolved)
    return resolved


def check_resolved_config(resolved: Mapping[str, Any]) -> None:
    """Every table of a config as a run uses it (size applied, command-line overrides such as --model or
    --embeddings written in): `[model]` against the model's declared options (types, ranges, and that it
    can be built in this machine's memory at the config's own sizes), `[features]` and `[training]`
    against theirs. Problems raise `ConfigError` naming the table and key."""
    from nlivis.models.registry import check_buildable, model_class, model_config

    _check_tables(resolved)
    model_table = resolved.get("model")
    if model_table is None:
        raise ConfigError("needs a [model] table with a name", "[model]", "name")
    checked = model_config(model_table)
    check_buildable(model_class(model_table["name"]), checked)
    TrainingSettings.from_dict(resolved.get("training", {}))
    check_feature_table(resolved.get("features", {}))


def check_feature_table(table: Mapping[str, Any]) -> None:
    """`[features]`: the keys of `FeatureOptions` (vocabulary, embeddings) and of the featurizer's
    `FeatureSettings` (cut-offs, exact_match_rule, pad_to_cutoff), each of its type and range."""
    if not isinstance(table, Mapping):
        raise ConfigError(f"[features] must be a table of options, got {shown_value(table)}", "[features]")
    option_keys = {f.name for f in fields(FeatureOptions)}
    featurizer_keys = {f.name for f in fields(FeatureSettings)}
    unknown = sorted(str(key) for key in set(table) - option_keys - featurizer_keys)
    if unknown:
        raise ConfigError(f"[features]: unknown key(s) {unknown}; known keys: {sorted(option_keys | featurizer_keys)}",
                          "[features]", unknown[0])
    FeatureOptions.from_dict({k: v for k, v in table.items() if k in option_keys})
    featurizer = typed_options(FeatureSettings, {k: v for k, v in table.items() if k in featurizer_keys}, "[features]")
    try:
        FeatureSettings(**featurizer)
    except ValueError as error:
        key = next((k for k in featurizer if f" {k} " in f" {error} "), None)
        raise ConfigError(f"[features] {error}", "[features]", key) from None


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
    warmup_steps: int = 0
    """The learning rate rises linearly from lr/warmup_steps to lr over the first this many optimizer steps, as
    BERT's fine-tuning does (0 = no warm-up)."""
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
        """Checked: known keys of the right types, finite numbers, each within its range (`ConfigError`)."""
        table = "[training]"
        settings = cls(**typed_options(cls, values, table))
        if settings.optimizer not in OPTIMIZERS:
            raise ConfigError(f"{table} optimizer {settings.optimizer!r} unknown; choose one of {list(OPTIMIZERS)}",
                              table, "optimizer")
        if settings.l2_schedule not in L2_SCHEDULES:
            raise ConfigError(f"{table} l2_schedule {settings.l2_schedule!r} unknown; choose one of "
                              f"{list(L2_SCHEDULES)}", table, "l2_schedule")
        for name in ("lr", "batch_size", "epochs", "dropout_keep_decay_steps", "l2_ramp_steps", "eval_batch_size",
                     "log_every_steps", "dropout_keep_decay_rate", "lr_decay_per_epoch", "eps", "sgd_fallback_lr"):
            if getattr(settings, name) <= 0:
                raise ConfigError(f"{table} {name} must be positive, got {getattr(settings, name)}", table, name)
        problem = epochs_problem(settings.epochs, f"{table} epochs")
        if problem:
            raise ConfigError(problem, table, "epochs")
        for name in ("snli_fraction_with_mnli", "adadelta_rho", "dropout_keep_decay_rate"):
            if not 0.0 <= getattr(settings, name) <= 1.0:
                raise ConfigError(f"{table} {name} must be between 0 and 1, got {getattr(settings, name)}", table, name)
        for name in ("weight_decay", "max_grad_norm", "l2_full_weight", "encoder_difference_weight",
                     "sgd_fallback_after_steps", "eval_every_steps", "checkpoint_every_steps"):
            if getattr(settings, name) < 0:
                raise ConfigError(f"{table} {name} must not be negative, got {getattr(settings, name)}", table, name)
        return settings

    def to_dict(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


@dataclass(frozen=True)
class FeatureOptions:
    """The `[features]` table, validated: cut-offs, vocabulary and embedding source. The table may also
    set any other `nlivis.features.settings.FeatureSettings` field (exact_match_rule, pad_to_cutoff)."""

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
        """Checked: known keys of the right types, finite numbers, each within its range (`ConfigError`)."""
        table = "[features]"
        options = cls(**typed_options(cls, values, table))
        for name in ("max_premise_len", "max_hypothesis_len", "max_chars", "min_word_freq"):
            if getattr(options, name) <= 0:
                raise ConfigError(f"{table} {name} must be positive, got {getattr(options, name)}", table, name)
        if options.unknown_word_init not in UNKNOWN_WORD_INITS:
            raise ConfigError(f"{table} unknown_word_init {options.unknown_word_init!r} unknown; "
                              f"choose one of {list(UNKNOWN_WORD_INITS)}", table, "unknown_word_init")
        if options.unknown_word_scale < 0:
            raise ConfigError(f"{table} unknown_word_scale must not be negative, got {options.unknown_word_scale}",
                              table, "unknown_word_scale")
        return options

    def to_dict(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


def apply_size(config: Mapping[str, Any], size: str) -> dict[str, Any]:
    """`paper`: the config as written; `shipped`: its `[shipped]` table deep-merged over it.
    Either way the `[shipped]` table itself is dropped and `size` is recorded."""
    if size not in SIZES:
        raise ValueError(f"size {size!r} unknown; choose one of {list(SIZES)}")
    base = {k: v for k, v in config.items() if k != "shipped"}
    if size == "shipped":
        if "shipped" not in config:
            raise ConfigError(f"config {config.get('config_name', '?')!r} has no [shipped] table for --size shipped",
                              "[shipped]")
        if not isinstance(config["shipped"], Mapping):
            raise ConfigError(f"[shipped] must be a table of overrides, got {shown_value(config['shipped'])}",
                              "[shipped]")
        base = deep_merge(base, config["shipped"])
    base["size"] = size
    return base
