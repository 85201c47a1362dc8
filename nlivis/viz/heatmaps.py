"""The matrices behind the token × token and token × slot heatmaps: one pair's alignment (attention) and AMN
memory keys with padding cut, each with its tokens, and an alignment's title. The Pair explorer draws them as
Vega-Lite specs (`nlivis.viz.vega.heatmaps`), the overview and the head grid lay them out
(`nlivis.viz.vega.overview`, `nlivis.viz.vega.head_grid`)."""
from __future__ import annotations

from typing import Sequence

import numpy as np

from nlivis.models.trace import Alignment, MemoryKeys
from nlivis.viz.common import entry_array, real_length


def _tokens_of(sentence: str, premise_tokens: Sequence[str], hypothesis_tokens: Sequence[str]) -> Sequence[str]:
    return premise_tokens if sentence == "premise" else hypothesis_tokens


def alignment_matrix(entry: Alignment, index: int, premise_tokens: Sequence[str], hypothesis_tokens: Sequence[str]) -> tuple[np.ndarray, list[str], list[str]]:
    """The real (unpadded) rows × columns of one pair's alignment, with their tokens."""
    weights = entry_array(entry.weights[index])
    row_tokens = list(_tokens_of(entry.rows, premise_tokens, hypothesis_tokens))
    col_tokens = list(_tokens_of(entry.cols, premise_tokens, hypothesis_tokens))
    n_rows = real_length(row_tokens, weights.shape[0])
    n_cols = real_length(col_tokens, weights.shape[1])
    return weights[:n_rows, :n_cols], row_tokens[:n_rows], col_tokens[:n_cols]


def alignment_title(entry: Alignment, label: str = "") -> str:
    """'layer 2 · p→h · softmax' (plus the entry's name when given)."""
    parts = [label] if label else []
    parts += [f"layer {entry.layer}", entry.direction, entry.kind]
    return " · ".join(parts)


def memory_keys_matrix(entry: MemoryKeys, index: int, tokens: Sequence[str]) -> tuple[np.ndarray, list[str], list[str]]:
    """One pair's memory addressing [real tokens, slots], with the tokens and slot names."""
    weights = entry_array(entry.weights[index])
    n = real_length(tokens, weights.shape[0])
    return weights[:n], list(tokens)[:n], [f"slot {s}" for s in range(weights.shape[1])]
