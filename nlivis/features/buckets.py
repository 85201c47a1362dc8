"""Length-bucketed batches.

Batches of similar length waste little padding: pairs are shuffled, cut into chunks of about
`CHUNK_BATCHES` batches, sorted by length inside each chunk, split into batches, and the batches
shuffled. Randomness comes only from `seed`, so a run is reproducible.
"""
from __future__ import annotations

import random
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
