"""What a training run is asked to do (`TrainRequest`), and the config it resolves to.

The request is the one place the run's options are spelled out: the command line, the app's worker (which
runs the command line), the tests and the scripts all build one and hand it to `nlivis.training.trainer.train`.
"""
from __future__ import annotations

import copy
import json
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, Mapping

from nlivis.training.config import FeatureOptions, apply_size
from nlivis.data.options import augment_ratio_problem, exclusive_twins_problem, share_problem
from nlivis.features.settings import FeatureSettings
from nlivis.training.augment import DEFAULT_AUGMENT_RATIO, DEFAULT_NEGATED_SHARE, parse_kinds


@dataclass(frozen=True)
class TrainRequest:
    """One training run: which config on which data, where to write, and how to run it."""

    config: Mapping[str, Any]
    """A loaded config (`nlivis.training.config.load_config`)."""
    dataset: str
    """A protocol (snli-small, mnli-small, quora-small) or a full dataset (snli, mnli, quora)."""
    data_dir: Path
    """The data root for a protocol, the dataset's own folder for a full dataset."""
    out_dir: Path
    """The checkpoint folder to write: new, empty, or this run's own (`nlivis.training.run_folder`)."""
    device: str = "auto"
    """auto | cpu | cuda (auto: CUDA when torch sees it)."""
    seed: int = 1
    """Initialisation, batching and dropout: the same seed gives the same run."""
    max_steps: int | None = None
    """Stop after this many optimizer steps, if that comes before the epochs."""
    epochs: float | None = None
    """Overrides the config's [training] epochs."""
    embeddings: str | None = None
    """Overrides the config's [features] embeddings (random | minilm | glove:PATH)."""
    resume: bool = False
    """Continue from `<out>/state/`."""
    size: str = "paper"
    """paper | shipped (the config's [shipped] overrides deep-merged)."""
    cache_dir: Path | None = None
    """spaCy analyses and word pieces (default: the nlivis cache root)."""
    progress: bool = True
    """Report progress on stderr (a bar on a terminal, plain lines in a log)."""
    stop_event: Any = None
    """Anything with `is_set()` (e.g. a multiprocessing Event): when set, the run saves its state and stops."""
    model_name: str | None = None
    """Overrides the config's model name."""
    augment: tuple[str, ...] = ()
    """Augmentation kinds (`nlivis.training.augment.AUGMENT_KINDS`): label-fixed edits of the training pairs
    added to every epoch; () trains on the training pairs alone."""
    augment_ratio: float | None = None
    """At most this many augmented pairs per training pair (default `DEFAULT_AUGMENT_RATIO` with `augment`)."""
    augment_negated_share: float | None = None
    """The share of each label's augmented pairs drawn from the premises' negated copies and their twins (default
    `DEFAULT_NEGATED_SHARE` with `augment`; `nlivis.training.augment.draw`)."""
    augment_exclusive_twins: bool = False
    """With a negated share: the twins also hold exclusive-object units (`nlivis.training.augment.EXCLUSIVE_TWINS`)."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "data_dir", Path(self.data_dir))
        object.__setattr__(self, "out_dir", Path(self.out_dir))
        if self.cache_dir is not None:
            object.__setattr__(self, "cache_dir", Path(self.cache_dir))
        if self.augment:
            object.__setattr__(self, "augment", parse_kinds(self.augment))
            ratio = DEFAULT_AUGMENT_RATIO if self.augment_ratio is None else self.augment_ratio
            problem = augment_ratio_problem(ratio, "augment_ratio")
            if problem:
                raise ValueError(problem)
            object.__setattr__(self, "augment_ratio", float(ratio))
            share = DEFAULT_NEGATED_SHARE if self.augment_negated_share is None else self.augment_negated_share
            problem = share_problem(share, "augment_negated_share")
            if problem:
                raise ValueError(problem)
            object.__setattr__(self, "augment_negated_share", float(share))
            problem = self.augment_exclusive_twins and exclusive_twins_problem(self.augment, share)
            if problem:
                raise ValueError(problem)
        elif self.augment_ratio is not None or self.augment_negated_share is not None or self.augment_exclusive_twins:
            raise ValueError("an augmentation ratio, negated share or exclusive twins were given without augmentation "
                             "kinds (--augment)")
        else:
            object.__setattr__(self, "augment", ())

    def resolved_config(self) -> dict[str, Any]:
        """The config this run uses: size applied, then the request's overrides."""
        return resolve_config(self.config, self.size, self.embeddings, self.epochs, self.model_name)

    def identity(self, resolved: Mapping[str, Any]) -> dict[str, Any]:
        """What a resumed run must share with the run it continues (`run_identity`)."""
        augment = ({"kinds": list(self.augment), "ratio": self.augment_ratio,
                    "negated_share": self.augment_negated_share, "exclusive_twins": self.augment_exclusive_twins}
                   if self.augment else None)
        return run_identity({k: v for k, v in resolved.items() if k != "size"}, self.dataset, self.size, self.seed,
                            augment)


BUDGET_KEYS = ("epochs",)
"""[training] keys a resumed run may change: how long it trains (as --max-steps may), not what it trains."""
NAME_KEYS = ("config_name",)
"""Config keys that name the config rather than say what it does (a renamed copy is the same config)."""


def run_identity(config: Mapping[str, Any], dataset: str, size: str, seed: int,
                 augment: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The settings that make a run this run: the resolved config (model, features, training, without the
    budget and the name), size, dataset, seed and augmentation (kinds, ratio, negated share and exclusive twins,
    when any). Recorded in the training state; `--resume` must match it."""
    canonical = json.loads(json.dumps(config, sort_keys=True, default=str))
    for key in NAME_KEYS:
        canonical.pop(key, None)
    for key in BUDGET_KEYS:
        canonical.get("training", {}).pop(key, None)
    identity = {"dataset": dataset, "size": size, "seed": seed, "config": canonical}
    if augment:
        identity["augment"] = f"{','.join(augment['kinds'])} at ratio {float(augment['ratio']):g}"
        if augment.get("negated_share"):
            identity["augment"] += f", negated share {float(augment['negated_share']):g}"
        if augment.get("exclusive_twins"):
            identity["augment"] += ", exclusive twins"
    return identity


def checkpoint_identity(record: Mapping[str, Any]) -> dict[str, Any] | None:
    """`run_identity` of the run that wrote a checkpoint's config.json, or None when it does not say."""
    try:
        return run_identity(record["source_config"], record["dataset"]["name"], record["size"], record["seed"],
                            record.get("augmentation"))
    except (KeyError, TypeError):
        return None


def identity_differences(saved: Mapping[str, Any], requested: Mapping[str, Any]) -> list[str]:
    """Where two run identities differ, one phrase each: `seed 2 (the saved run: 1)`,
    `[model] hidden_size 100 (the saved run: 200)`."""
    def flat(identity: Mapping[str, Any]) -> dict[str, Any]:
        rows = {key: value for key, value in identity.items() if key != "config"}

        def walk(value: Any, path: tuple[str, ...]) -> None:
            if isinstance(value, Mapping):
                for key, child in value.items():
                    walk(child, (*path, str(key)))
            else:
                rows[f"[{path[0]}] {'.'.join(path[1:])}" if len(path) > 1 else path[0]] = value

        walk(identity.get("config", {}), ())
        return rows

    old, new = flat(saved), flat(requested)
    unset = object()
    shown = lambda value: "unset" if value is unset else repr(value)  # noqa: E731
    return [f"{key} {shown(new.get(key, unset))} (the saved run: {shown(old.get(key, unset))})"
            for key in sorted(set(old) | set(new), key=lambda k: (k.startswith("["), k))
            if old.get(key, unset) != new.get(key, unset)]


def resolve_config(config: Mapping[str, Any], size: str, embeddings: str | None, epochs: float | None,
                   model_name: str | None = None) -> dict[str, Any]:
    """The config a run uses: size applied, then command-line overrides."""
    resolved = apply_size(config, size) if "size" not in config else copy.deepcopy(dict(config))
    if "model" not in resolved or "name" not in resolved["model"]:
        raise ValueError("config has no [model] table with a name")
    if model_name is not None:
        resolved["model"]["name"] = model_name
    if embeddings is not None:
        resolved.setdefault("features", {})["embeddings"] = embeddings
    if epochs is not None:
        resolved.setdefault("training", {})["epochs"] = float(epochs)
    return resolved


def split_feature_table(table: Mapping[str, Any]) -> tuple[FeatureOptions, dict[str, Any]]:
    """[features] → (vocabulary/embedding options, `FeatureSettings` keyword arguments).
    Keys of either are accepted; anything else is an error listing both."""
    featurizer_keys = {f.name for f in fields(FeatureSettings)}
    option_keys = {f.name for f in fields(FeatureOptions)}
    unknown = sorted(set(table) - featurizer_keys - option_keys)
    if unknown:
        raise ValueError(f"[features]: unknown key(s) {unknown}; known keys: {sorted(featurizer_keys | option_keys)}")
    options = FeatureOptions.from_dict({k: v for k, v in table.items() if k in option_keys})
    featurizer = {k: getattr(options, k) for k in featurizer_keys & option_keys}
    featurizer.update({k: v for k, v in table.items() if k in featurizer_keys})
    FeatureSettings(**featurizer)  # validates now rather than after reading the data
    return options, featurizer
