"""ESIM and the padding-blind BiLSTM it shares with ESAN: known values and padding behaviour."""
from __future__ import annotations

import torch

from nlivis.models.esim import ESIM, ESIMConfig
from nlivis.models.inspect import random_batch
from nlivis.models.layers.recurrent import MaskedLSTM
from nlivis.models.registry import build
from nlivis.models.trace import Alignment, Representation

VOCAB = 30
CHAR_VOCAB = 20


def tiny(**options) -> ESIM:
    torch.manual_seed(0)
    return build({"name": "esim", **ESIM.tiny_overrides, **options}).eval()


def test_masked_lstm_never_reads_padding():
    torch.manual_seed(0)
    lstm = MaskedLSTM(3, 4)
    x = torch.randn(2, 5, 3)
    mask = torch.tensor([[True] * 5, [True, True, False, False, False]])
    noisy = x.clone()
    noisy[1, 2:] = 50.0
    out = lstm(noisy, mask)
    torch.testing.assert_close(out, lstm(x, mask))
    assert (out[1, 2:] == 0).all()
    # the second row alone, unpadded, gives the same states (the backward direction starts at its last token)
    torch.testing.assert_close(out[1, :2], lstm(x[1:, :2], mask[1:, :2])[0])
    assert out.shape == (2, 5, 8)


def test_alignment_is_the_softmax_of_encoded_state_products():
    model = tiny()
    batch = random_batch([4, 2], [3, 3], VOCAB, CHAR_VOCAB)
    _, trace = model(batch, trace=True)
    a = model.encoder(model.word_embedding(batch.premise_ids), batch.premise_mask)
    b = model.encoder(model.word_embedding(batch.hypothesis_ids), batch.hypothesis_mask)
    expected = torch.softmax(a[1, :2] @ b[1].T, dim=1)
    torch.testing.assert_close(trace["attention_p→h"].weights[1, :2], expected)
    assert (trace["attention_h→p"].weights[1, :, 2:] == 0).all()
    assert set(trace.of_type(Alignment)) == {"attention_p→h", "attention_h→p"}
    assert trace["pooled"].vector.shape == (2, 8 * model.config.hidden_size)
    assert isinstance(trace["pooled"], Representation)


def test_paper_size_parameter_count_matches_the_architecture():
    model = ESIM(ESIMConfig(word_dim=300, vocab_size=10))
    d, n, k = 300, 300, 3
    bilstm = lambda inputs: 2 * (4 * n * (inputs + n) + 8 * n)
    expected = bilstm(d) + (8 * n * n + n) + bilstm(n) + (8 * n * n + n) + (n * k + k)
    assert model.count_parameters() == expected
    assert 4.0e6 < expected < 4.5e6  # ESIM reports 4.3M
