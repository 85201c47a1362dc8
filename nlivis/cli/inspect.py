"""What a model is made of and what it traces.

    python -m nlivis inspect --config gcnn-glu --params
    python -m nlivis inspect --model diin

The model is built at its config's paper size (the [model] table, without [shipped] overrides) with
300-d word vectors and a small vocabulary, so the parameter count excluding word embeddings can be set
beside a paper's. It equals the paper's only for the setting that paper counted, which each config's
header names: ESAN's 3.9M is its Quora model (esan-quora, 3.85M); esan.toml adds the NLI features (4.76M).
Trace entries are listed for a tiny random batch of two pairs.
"""
from __future__ import annotations

import argparse
from typing import Any

from nlivis.training.config import CONFIG_DIR, load_config, resolve_config_path


def add_arguments(parser: argparse.ArgumentParser) -> None:
    which = parser.add_mutually_exclusive_group(required=True)
    which.add_argument("--model", help="model name (its defaults) or config name in configs/")
    which.add_argument("--config", help="config name or path to a TOML config (e.g. an ablation you wrote)")
    parser.add_argument("--params", action="store_true", help="also print parameter counts (word embeddings excluded)")


def run(args: argparse.Namespace) -> int:
    import torch

    from nlivis.models.inspect import (
        INSPECT_VOCAB_SIZE,
        build_for_inspection,
        parameter_table,
        random_batch,
        trace_summary,
    )

    source = args.config if args.config is not None else args.model
    model = build_for_inspection(model_config_for(source, args.config))
    model.eval()
    print(f"model {model.name} ({source}), built with word_dim {model.config.word_dim}, vocab {INSPECT_VOCAB_SIZE}")
    if args.params:
        rows = parameter_table(model)
        width = max(len(name) for name, _ in rows)
        print("\nparameters (word embeddings excluded)")
        for name, count in rows:
            print(f"  {name:<{width}}  {count:>12,}")
        total = model.count_parameters()
        print(f"  {'total':<{width}}  {total:>12,}  ({total / 1e6:.2f}M)")
    batch = random_batch([5, 3], [4, 2], INSPECT_VOCAB_SIZE, INSPECT_VOCAB_SIZE,
                         num_classes=model.config.num_classes)
    with torch.no_grad():
        _, trace = model(batch, trace=True)
    rows = trace_summary(trace)
    width = max(len(name) for name, _, _ in rows)
    print("\ntrace entries for a batch of 2 pairs (premise lengths 5, 3; hypothesis lengths 4, 2)")
    for name, kind, shape in rows:
        print(f"  {name:<{width}}  {kind:<18} {list(shape)}")
    return 0


def model_config_for(name: str, config_path: str | None = None) -> dict[str, Any]:
    """The [model] table of `config_path` (a config name or a TOML file) or of `configs/<name>.toml`; for
    a model name without a config, its defaults."""
    from nlivis.models.registry import available

    if config_path is not None or (CONFIG_DIR / f"{name}.toml").is_file():
        source = config_path if config_path is not None else name
        config = load_config(source)
        if "model" not in config or "name" not in config["model"]:
            raise ValueError(f"{resolve_config_path(source)}: needs a [model] table with a 'name'")
        return dict(config["model"])
    if name in available():
        return {"name": name}
    known = sorted(p.stem for p in CONFIG_DIR.glob("*.toml"))
    raise ValueError(f"{name!r} is neither a model ({available()}) nor a config ({known})")
