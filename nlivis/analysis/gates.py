"""Gate statistics over many pairs: how open each gate is on real tokens, computed from traces."""
from __future__ import annotations

from typing import Iterable

import pandas as pd
import torch

from nlivis.features.batch import Batch
from nlivis.models.trace import Gate


def gate_summary(model: torch.nn.Module, batches: Iterable[Batch], model_label: str = "") -> pd.DataFrame:
    """Mean and standard deviation of every gate over the real tokens of all pairs in `batches`.

    One row per gate entry: model, entry, gate, layer, tokens, mean, std, pairs, tokens_seen.
    Padding positions never count (their gate values are meaningless).
    """
    sums: dict[str, list[float]] = {}
    meta: dict[str, Gate] = {}
    pairs = 0
    model.eval()
    with torch.no_grad():
        for batch in batches:
            _, trace = model(batch, trace=True)
            pairs += len(batch)
            for name, entry in trace.of_type(Gate).items():
                mask = batch.premise_mask if entry.tokens == "premise" else batch.hypothesis_mask
                values = entry.values.detach().float()
                token_mask = mask[:, : values.shape[1]].unsqueeze(-1).expand_as(values)
                real = values[token_mask]
                total = sums.setdefault(name, [0.0, 0.0, 0.0, 0.0])  # sum, sum of squares, values, tokens
                total[0] += float(real.sum())
                total[1] += float((real.double() ** 2).sum())
                total[2] += real.numel()
                total[3] += int(mask.sum())
                meta[name] = entry
    rows = []
    for name, (total, squares, count, tokens) in sums.items():
        entry = meta[name]
        mean = total / count if count else float("nan")
        variance = max(0.0, squares / count - mean * mean) if count else float("nan")
        rows.append({"model": model_label, "entry": name, "gate": entry.name, "layer": entry.layer,
                     "tokens": entry.tokens, "mean": mean, "std": variance ** 0.5, "pairs": pairs,
                     "tokens_seen": int(tokens)})
    return pd.DataFrame(rows, columns=["model", "entry", "gate", "layer", "tokens", "mean", "std", "pairs", "tokens_seen"])
