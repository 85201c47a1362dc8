"""ESIM and the padding-blind BiLSTM it shares with ESAN: known values and padding behaviour."""
from __future__ import annotations

import torch

from nlivis.features.batch import Batch
from nlivis.models.esim import ESIM, ESIMConfig
from nlivis.models.layers.recurrent import MaskedLSTM
from nlivis.models.registry import build
from nlivis.models.trace import Alignment, Representation

VOCAB = 30


def make_batch(premise_lengths: list[int], hypothesis_lengths: list[int], seed: int = 0) -> Batch:
    """A right-padded random batch with every field filled."""
    g = torch.Generator().manual_seed(seed)

    def side(lengths: list[int]) -> dict[str, torch.Tensor]:
        width = max(lengths)
        mask = torch.arange(width).unsqueeze(0) < torch.tensor(lengths).unsqueeze(1)
        ids = torch.randint(2, VOCAB, (len(lengths), width), generator=g) * mask
        chars = torch.randint(2, 20, (len(lengths), width, 4), generator=g) * mask.unsqueeze(-1)
        pos = torch.randint(1, 47, (len(lengths), width), generator=g) * mask
        exact = torch.randint(0, 2, (len(lengths), width), generator=g).float() * mask
        return {"ids": ids, "mask": mask, "chars": chars, "pos": pos, "exact": exact}

    p, h = side(premise_lengths), side(hypothesis_lengths)
    return Batch(premise_ids=p["ids"], hypothesis_ids=h["ids"], premise_mask=p["mask"], hypothesis_mask=h["mask"],
                 premise_chars=p["chars"], hypothesis_chars=h["chars"], premise_pos=p["pos"],
                 hypothesis_pos=h["pos"], premise_exact_match=p["exact"], hypothesis_exact_match=h["exact"],
                 labels=torch.randint(0, 3, (len(premise_lengths),), generator=g),
                 ids=[f"pair{i}" for i in range(len(premise_lengths))],
                 premise_tokens=[[f"p{t}" for t in range(n)] for n in premise_lengths],
                 hypothesis_tokens=[[f"h{t}" for t in range(n)] for n in hypothesis_lengths])


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
    batch = make_batch([4, 2], [3, 3])
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
