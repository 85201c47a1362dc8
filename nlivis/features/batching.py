"""Length-bucketed batches and the papers' sequence-length cut-offs.

Batches of similar length waste little padding: pairs are shuffled, cut into chunks of about
`CHUNK_BATCHES` batches, sorted by length inside each chunk, split into batches, and the batches
shuffled. Randomness comes only from `seed`, so a run is reproducible.
"""
from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Sequence

CHUNK_BATCHES = 50
"""Batches per sorting chunk: large enough to group lengths well, small enough to keep batches mixed."""


def _length(value: int | Sequence[int]) -> int:
    return int(value) if isinstance(value, int) else int(max(value))


def bucket_batches(
    lengths: Sequence[int | Sequence[int]], batch_size: int, seed: int, shuffle: bool = True
) -> list[list[int]]:
    """Index batches covering every position of `lengths` exactly once.

    `lengths[i]` is pair i's length: an int, or (premise_len, hypothesis_len), whose max is used.
    `shuffle` (default True, for training) shuffles pairs before chunking and batches afterwards;
    with `shuffle=False` (evaluation) the pairs keep their order across chunks and only sort within
    them, and `seed` is unused. The last batch of a chunk may be smaller than `batch_size`.
    """
    if batch_size < 1:
        raise ValueError(f"batch_size must be at least 1; got {batch_size}")
    rng = random.Random(seed)
    order = list(range(len(lengths)))
    if shuffle:
        rng.shuffle(order)
    chunk = batch_size * CHUNK_BATCHES
    batches: list[list[int]] = []
    for start in range(0, len(order), chunk):
        block = sorted(order[start:start + chunk], key=lambda i: (_length(lengths[i]), i))
        batches.extend(block[k:k + batch_size] for k in range(0, len(block), batch_size))
    if shuffle:
        rng.shuffle(batches)
    return batches


@dataclass(frozen=True)
class Cutoff:
    """Hard cut-offs in tokens (premise, hypothesis) and where the number comes from."""

    max_premise_len: int
    max_hypothesis_len: int
    source: str


CUTOFFS: dict[tuple[str, str], Cutoff] = {
    ("diin", "mnli"): Cutoff(48, 48, "DIIN paper §4.1: 48 for MultiNLI; code --seq_length 48"),
    ("diin", "snli"): Cutoff(48, 48, "DIIN code --seq_length 48 (the paper's text says 32 for SNLI)"),
    ("diin", "quora"): Cutoff(24, 24, "DIIN paper §4.1: 24 for Quora"),
    ("gcnn", "mnli"): Cutoff(60, 30, "GCNN paper §4: 60 premise / 30 hypothesis on MultiNLI"),
    ("gcnn", "snli"): Cutoff(60, 30, "GCNN paper gives MultiNLI's 60/30; used for SNLI too"),
    ("gcnn", "quora"): Cutoff(40, 40, "GCNN paper §4: 40 for Quora sentences"),
    ("attentive_conv", "snli"): Cutoff(70, 70, "AttentiveConvNet code maxSentLen=70"),
}
"""Per (model, dataset family) cut-offs from the papers, used as config defaults."""

DEFAULT_CUTOFF = Cutoff(48, 48, "DIIN's 48, the most common setting, for combinations no paper gives")

DATASET_FAMILIES: dict[str, str] = {
    "snli": "snli", "snli-small": "snli", "mnli": "mnli", "mnli-small": "mnli", "xnli_en": "mnli",
    "mnli_hard": "mnli", "quora": "quora", "quora-small": "quora",
}
"""Dataset or protocol name → the family whose cut-off applies (XNLI/MultiNLI-hard are MultiNLI-like)."""


def cutoff_for(model: str, dataset: str) -> Cutoff:
    """The paper's cut-off for `model` on `dataset` (a dataset or protocol name), else the default."""
    family = DATASET_FAMILIES.get(dataset, dataset)
    return CUTOFFS.get((model, family), DEFAULT_CUTOFF)
