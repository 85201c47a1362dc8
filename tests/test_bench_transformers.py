"""MiniLM against the same encoder in Hugging Face transformers (`python -m nlivis bench`): the synthetic word pieces,
the table with and without transformers, and — where transformers is installed (a bench environment; it is not a
dependency) — that the twin built from a tiny random MiniLM gives the same outputs and trains the same parameters."""
from __future__ import annotations

import pytest
import torch

from nlivis.features.wordpieces import SEP_PIECE
from nlivis.models.inspect import random_batch
from nlivis.models.registry import build, model_class
from nlivis.workflows.bench_transformers import Speeds, _table, with_pieces


def test_synthetic_pieces_sit_on_real_words_only():
    batch = random_batch([5, 2], [3, 4], 30, 20)
    pieces = with_pieces(batch, seed=0, piece_vocab_size=500)
    for ids, mask in ((pieces.premise_pieces, batch.premise_mask), (pieces.hypothesis_pieces, batch.hypothesis_mask)):
        assert ids.shape == (*mask.shape, 2)
        assert bool((ids[..., 0] > SEP_PIECE)[mask].all()), "every real word has a first piece above the specials"
        assert not ids[~mask].any(), "padded words have none"
        assert bool(((ids[..., 1] == 0) | (ids[..., 1] > SEP_PIECE)).all()) and ids[..., 1].max() < 500
    assert torch.equal(with_pieces(batch, 0, 500).premise_pieces, pieces.premise_pieces), "seeded"


def test_the_table_says_where_transformers_is_missing_and_gives_speed_ratios():
    ours = Speeds(train_pairs_per_s=20.0, infer_pairs_per_s=100.0, latency_ms=50.0)
    missing = _table(ours, {})
    assert all("transformers not installed" in line for line in missing[2:]) and len(missing) == 5
    rows = _table(ours, {"sdpa": Speeds(10.0, 200.0, 100.0)})
    assert rows[2] == "| training pairs/s | 20.0 | 10.0 | 2.00× |"
    assert rows[3] == "| inference pairs/s | 100.0 | 200.0 | 0.50× |"
    assert rows[4] == "| 8×20 latency (ms) | 50.0 | 100.0 | 2.00× |", "latency: their time over ours (above 1: nlivis faster)"


@pytest.mark.parametrize("implementation", ["sdpa", "eager"])
def test_the_transformers_twin_gives_the_same_outputs_and_trains_the_same_parameters(implementation):
    pytest.importorskip("transformers", reason="transformers is installed only in a bench environment")
    from nlivis.workflows.bench_transformers import largest_differences, transformers_twin

    batch = random_batch([5, 2], [3, 4], 30, 20)
    for pooling in ("cls", "mean"):  # the shipped size pools the mean: the twin must read the config's pooling
        torch.manual_seed(0)
        model = build({"name": "minilm", **model_class("minilm").tiny_overrides, "freeze_word_embeddings": True,
                       "dropout": 0.1, "pooling": pooling})
        twin = transformers_twin(model, implementation)
        logits, hidden = largest_differences(model, twin, [batch])
        assert logits < 1e-5 and hidden < 1e-5, pooling
    trained = lambda module: sum(p.numel() for p in module.parameters() if p.requires_grad)  # noqa: E731
    assert trained(twin) == trained(model) < sum(p.numel() for p in model.parameters()), "the piece rows stay frozen"
