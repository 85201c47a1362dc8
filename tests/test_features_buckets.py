"""Length-bucketed batching and the cut-off table."""
from __future__ import annotations

import random

import pytest

from nlivis.features.buckets import bucket_batches


def _lengths(n=1000, seed=3):
    rng = random.Random(seed)
    return [(rng.randint(1, 60), rng.randint(1, 30)) for _ in range(n)]


def test_every_index_exactly_once():
    lengths = _lengths(1003)
    for shuffle in (True, False):
        batches = bucket_batches(lengths, batch_size=7, seed=1, shuffle=shuffle)
        flat = [i for batch in batches for i in batch]
        assert sorted(flat) == list(range(1003))
        assert all(1 <= len(b) <= 7 for b in batches)


def test_deterministic_given_seed_and_different_across_seeds():
    lengths = _lengths()
    assert bucket_batches(lengths, 16, seed=5) == bucket_batches(lengths, 16, seed=5)
    assert bucket_batches(lengths, 16, seed=5) != bucket_batches(lengths, 16, seed=6)


def test_batches_group_similar_lengths():
    lengths = _lengths(4000)
    batches = bucket_batches(lengths, 20, seed=0)
    spread = sum(max(max(lengths[i]) for i in b) - min(max(lengths[i]) for i in b) for b in batches)
    rng = random.Random(0)
    order = list(range(len(lengths)))
    rng.shuffle(order)
    random_batches = [order[k:k + 20] for k in range(0, len(order), 20)]
    random_spread = sum(max(max(lengths[i]) for i in b) - min(max(lengths[i]) for i in b)
                        for b in random_batches)
    assert spread < random_spread / 5


def test_unshuffled_keeps_chunk_order_and_sorts_within():
    lengths = [5, 1, 3, 2, 4]
    assert bucket_batches(lengths, 2, seed=0, shuffle=False) == [[1, 3], [2, 4], [0]]


def test_plain_int_lengths_and_bad_batch_size():
    assert bucket_batches([3, 1, 2], 3, seed=0, shuffle=False) == [[1, 2, 0]]
    with pytest.raises(ValueError):
        bucket_batches([1], 0, seed=0)
