"""AttentiveConvNet: known values of its pieces and the behaviour of its switches."""
from __future__ import annotations

import math

import pytest
import torch

from nlivis.features.batch import Batch
from nlivis.models.attentive_conv import ENERGIES, AttentiveConvConfig, AttentiveConvNet, GatedConv
from nlivis.models.inspect import random_batch
from nlivis.models.registry import build
from nlivis.models.trace import Alignment, Gate

VOCAB = 30
CHAR_VOCAB = 20


def tiny(**options) -> AttentiveConvNet:
    torch.manual_seed(0)
    values = {"name": "attentive_conv", **AttentiveConvNet.tiny_overrides, **options}
    return build(values).eval()


def test_attentive_context_is_the_softmax_weighted_sum_of_the_focus():
    model = tiny(version="light", matching="dot")
    source = torch.tensor([[[1.0, 0.0], [0.0, 2.0]]])  # [1, 2, 2]
    focus = torch.tensor([[[1.0, 1.0], [3.0, 0.0], [9.0, 9.0]]])  # third column is padding
    mask = torch.tensor([[True, True, False]])
    model.energy = ENERGIES["dot"](2)
    weights, context = model.attend(source, focus, mask)
    # row 0: scores 1, 3 → softmax (1/(1+e²), e²/(1+e²)); row 1: scores 2, 0
    w0 = torch.tensor([1.0, math.exp(2.0)]) / (1.0 + math.exp(2.0))
    w1 = torch.tensor([math.exp(2.0), 1.0]) / (1.0 + math.exp(2.0))
    torch.testing.assert_close(weights[0, :, :2], torch.stack([w0, w1]))
    assert (weights[0, :, 2] == 0).all()
    expected = torch.stack([w0[0] * focus[0, 0] + w0[1] * focus[0, 1], w1[0] * focus[0, 0] + w1[1] * focus[0, 1]])
    torch.testing.assert_close(context[0], expected)


def test_bilinear_and_additive_energies_follow_eqs_2_and_3():
    source, focus = torch.tensor([[[1.0, 2.0]]]), torch.tensor([[[3.0, -1.0]]])
    bilinear = ENERGIES["bilinear"](2)
    with torch.no_grad():
        bilinear.w.weight.copy_(torch.tensor([[0.0, 1.0], [2.0, 0.0]]))
    # (W s) = [2, 2]; · f = 6 − 2 = 4
    assert bilinear(source, focus).item() == pytest.approx(4.0)
    additive = ENERGIES["additive"](2)
    with torch.no_grad():
        additive.w.weight.copy_(torch.eye(2))
        additive.u.weight.copy_(2 * torch.eye(2))
        additive.v.weight.copy_(torch.tensor([[1.0, -1.0]]))
    # tanh([1 + 6, 2 − 2]) · [1, −1] = tanh 7 − tanh 0
    assert additive(source, focus).item() == pytest.approx(math.tanh(7.0))


def test_gated_convolution_mixes_the_centre_token_and_the_transform():
    conv = GatedConv(2, 1, use_gate=True)
    with torch.no_grad():
        conv.transform.weight.copy_(torch.tensor([[[1.0], [0.0]], [[0.0], [-1.0]]]))
        conv.transform.bias.zero_()
        conv.gate.weight.zero_()
        conv.gate.bias.fill_(math.log(3.0))  # σ = 0.75
    u = torch.tensor([[[0.5, 2.0]]])
    out, gate = conv(u, torch.tensor([[True]]))
    expected = 0.75 * u + 0.25 * torch.tanh(torch.tensor([[[0.5, -2.0]]]))
    torch.testing.assert_close(gate, torch.full_like(u, 0.75))
    torch.testing.assert_close(out, expected)
    plain = GatedConv(2, 1, use_gate=False)
    out, gate = plain(u, torch.tensor([[True]]))
    assert gate is None
    torch.testing.assert_close(out, torch.tanh(plain.transform(u.transpose(1, 2)).transpose(1, 2)))


def test_trigram_gated_conv_ignores_padding_neighbours():
    conv = GatedConv(3, 3, use_gate=True)
    x = torch.randn(1, 4, 3)
    mask = torch.tensor([[True, True, False, False]])
    noisy = x.clone()
    noisy[0, 2:] = 100.0
    torch.testing.assert_close(conv(x, mask)[0], conv(noisy, mask)[0])
    assert (conv(noisy, mask)[0][0, 2:] == 0).all()


def test_trace_names_follow_the_attention_setting():
    batch = random_batch([4, 2], [3, 3], VOCAB, CHAR_VOCAB)
    _, trace = tiny(version="advanced", attention="inter_and_intra")(batch, trace=True)
    directions = {e.direction for e in trace.of_type(Alignment).values()}
    assert directions == {"p→h", "h→p", "p→p", "h→h"}
    gate_names = {e.name for e in trace.of_type(Gate).values()}
    assert gate_names == {"mgran_gate_uni", "mgran_gate_tri", "bene_gate"}

    _, light = tiny(version="light", attention="inter")(batch, trace=True)
    assert {e.direction for e in light.of_type(Alignment).values()} == {"p→h", "h→p"}
    assert not light.of_type(Gate)
    _, no_uni = tiny(use_unigram=False)(batch, trace=True)
    assert {e.name for e in no_uni.of_type(Gate).values()} == {"mgran_gate_tri", "bene_gate"}
    _, no_gate = tiny(use_gate=False)(batch, trace=True)
    assert not no_gate.of_type(Gate)


def test_light_dot_alignment_is_the_softmax_of_word_vector_products():
    model = tiny(version="light", matching="dot")
    batch = random_batch([3], [2], VOCAB, CHAR_VOCAB)
    _, trace = model(batch, trace=True)
    p = model.word_embedding(batch.premise_ids)[0]
    h = model.word_embedding(batch.hypothesis_ids)[0]
    torch.testing.assert_close(trace["attention_p→h"].weights[0], torch.softmax(p @ h.T, dim=1))
    torch.testing.assert_close(trace["attention_h→p"].weights[0], torch.softmax(h @ p.T, dim=1))


def test_intra_only_premise_side_does_not_see_the_hypothesis():
    model = tiny(attention="intra")
    batch = random_batch([4, 3], [3, 2], VOCAB, CHAR_VOCAB, seed=1)
    other = random_batch([4, 3], [3, 2], VOCAB, CHAR_VOCAB, seed=2)
    _, first = model(batch, trace=True)
    swapped = Batch(**{**vars(batch), "hypothesis_ids": other.hypothesis_ids})
    _, second = model(swapped, trace=True)
    n = model.config.hidden_size
    r_p_first, r_p_second = first["pooled"].vector[:, :n], second["pooled"].vector[:, :n]
    torch.testing.assert_close(r_p_first, r_p_second)
    inter = tiny(attention="inter")
    _, a = inter(batch, trace=True)
    _, b = inter(swapped, trace=True)
    assert not torch.allclose(a["pooled"].vector[:, :n], b["pooled"].vector[:, :n])


def test_paper_size_parameter_count_matches_the_architecture():
    config = AttentiveConvConfig(word_dim=300, vocab_size=10)
    model = AttentiveConvNet(config)
    d, n, k = 300, 300, 3
    gated = lambda width: 2 * (width * d * d + d)  # transform + gate
    expected = (gated(1) + gated(3) + gated(1)  # f_mgran uni, tri, f_bene
                + 3 * d * n + n + 2 * d * n  # width-3 conv + width-1 context conv over [uni; tri]
                + 3 * n * n + n + n * n + n + 5 * n * k + k)  # hidden 1, hidden 2, logistic regression
    assert model.count_parameters() == expected


@pytest.mark.parametrize("options", [{"version": "heavy"}, {"attention": "both"}, {"matching": "cosine"},
                                     {"use_unigram": False, "use_trigram": False}])
def test_bad_options_are_refused_with_their_name(options):
    with pytest.raises(ValueError, match=next(iter(options)) if len(options) == 1 else "use_unigram"):
        tiny(**options)
