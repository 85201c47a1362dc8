"""Every full model can fit 64 real SNLI pairs: spaCy features, batching, model, loss and optimizer learn.

The pairs are read from ../shared/data at test time. Each model is built at its shipped (reduced) size
with trainable random 64-d word vectors and no dropout, and trained with Adam until it labels all 64
pairs right in eval mode (checked every few steps), within a step budget.
"""
from __future__ import annotations

import pytest
import torch

from nlivis.data.readers import read_line_aligned
from nlivis.data.records import NLI_LABELS
from nlivis.features.dataset import analyse_pairs
from nlivis.features.featurize import Featurizer
from nlivis.features.settings import FeatureSettings
from nlivis.models.families import FAMILIES
from nlivis.features.vocab import CharVocabulary, Vocabulary
from nlivis.models.registry import build
from nlivis.training.config import apply_size, load_config

PAIRS, BATCH, MAX_STEPS, CHECK_EVERY = 64, 16, 400, 8
MODELS = tuple(name for name in FAMILIES if name != "minilm")
"""Every family built from random 64-d word vectors; MiniLM is a pretrained encoder over word pieces, trained end to
end on fixture pairs in tests/test_models_minilm.py instead."""


@pytest.fixture(scope="module")
def snli_64(tmp_path_factory):
    from tests.conftest import SHARED_DATA

    folder = SHARED_DATA / "snli" / "esnli_tokenized"
    if not folder.is_dir():
        pytest.skip(f"SNLI pairs not found at {folder} (set NLIVIS_SHARED_DATA to ../shared/data)")
    pairs = read_line_aligned(folder, "test").pairs[:PAIRS]
    return analyse_pairs(pairs, cache_dir=tmp_path_factory.mktemp("cache"), progress=False)


@pytest.mark.slow
@pytest.mark.parametrize("name", MODELS)
def test_model_fits_64_snli_pairs(name, snli_64):
    config = apply_size(load_config(name), "shipped")
    tokens = [t for item in snli_64 for t in (item.premise.tokens, item.hypothesis.tokens)]
    vocab, chars = Vocabulary.build(tokens), CharVocabulary.build(tokens)
    features = config["features"]
    settings = FeatureSettings(max_premise_len=features["max_premise_len"],
                               max_hypothesis_len=features["max_hypothesis_len"], max_chars=features["max_chars"])
    featurizer = Featurizer(vocab, chars, settings, NLI_LABELS)
    batches = [featurizer.encode(snli_64[i:i + BATCH]) for i in range(0, PAIRS, BATCH)]
    torch.manual_seed(1)
    model = build({**config["model"], "vocab_size": len(vocab), "char_vocab_size": len(chars), "word_dim": 64,
                   "num_classes": len(NLI_LABELS), "dropout": 0.0, "freeze_word_embeddings": False})
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)

    correct = 0
    for step in range(1, MAX_STEPS + 1):
        model.train()
        batch = batches[step % len(batches)]
        loss = model.loss(model(batch), batch.labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if step % CHECK_EVERY == 0:
            model.eval()
            with torch.no_grad():
                correct = sum(int((model(b).argmax(-1) == b.labels).sum()) for b in batches)
            if correct == PAIRS:
                break
    assert correct == PAIRS, f"{name} labels {correct} of {PAIRS} training pairs right after {MAX_STEPS} steps"
