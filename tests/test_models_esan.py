"""ESAN: augmentation arithmetic, co-attention values, trace layout and the measured parameter count."""
from __future__ import annotations

import math

import pytest
import torch
from torch import nn

from nlivis.models.esan import AUGMENTATIONS, ESAN, AlignmentLayer, ESANConfig
from nlivis.models.inspect import random_batch
from nlivis.models.registry import build
from nlivis.models.trace import Alignment, Gate

VOCAB = 30
CHAR_VOCAB = 20


def tiny(**options) -> ESAN:
    torch.manual_seed(0)
    return build({"name": "esan", **ESAN.tiny_overrides, **options}).eval()


def layer(first: bool, augmentation: str, use_word: bool = True, use_context: bool = True) -> AlignmentLayer:
    return AUGMENTATIONS[augmentation](2, first, use_word, use_context, nn.Dropout(0.0))


A = torch.tensor([[[1.0, -1.0]]])
E = torch.tensor([[[2.0, 0.5]]])
H = torch.tensor([[[-3.0, 4.0]]])


def test_gated_augmentation_follows_eqs_1_to_3():
    gated = layer(first=False, augmentation="gated")
    with torch.no_grad():
        gated.w_g.weight.zero_()
        gated.w_e.weight.zero_()
        gated.w_e.bias.fill_(math.log(3.0))  # g_e = σ(log 3) = 0.75
        gated.w_h.weight.zero_()
        gated.w_h.bias.fill_(-math.log(3.0))  # g_h = 0.25
    out, gates = gated.augment(A, E, H)
    torch.testing.assert_close(out, A + 0.75 * E + 0.25 * H)
    torch.testing.assert_close(gates["word"], torch.full_like(A, 0.75))
    torch.testing.assert_close(gates["context"], torch.full_like(A, 0.25))
    # the gates read the layer input through the shared W_g
    with torch.no_grad():
        gated.w_g.weight.copy_(torch.eye(2))
    _, gates = gated.augment(A, E, H)
    torch.testing.assert_close(gates["word"], torch.sigmoid(A + math.log(3.0)))


def test_simple_augmentation_is_eq_4_and_the_first_layer_adds_word_features_only():
    torch.testing.assert_close(layer(False, "simple").augment(A, E, H)[0], A + E + H)
    torch.testing.assert_close(layer(True, "simple").augment(A, E, H)[0], A + E)
    first = layer(True, "gated")
    assert first.w_h is None and first.w_e is not None
    assert set(first.augment(A, E, H)[1]) == {"word"}
    torch.testing.assert_close(layer(False, "none").augment(A, E, H)[0], A)
    torch.testing.assert_close(layer(False, "simple", use_word=False).augment(A, E, H)[0], A + H)
    torch.testing.assert_close(layer(False, "simple", use_context=False).augment(A, E, H)[0], A + E)
    no_word_first = layer(True, "gated", use_word=False)
    assert no_word_first.w_g is None
    torch.testing.assert_close(no_word_first.augment(A, E, H)[0], A)


def test_co_attention_uses_relu_projected_products():
    coattention = layer(True, "none")
    with torch.no_grad():
        coattention.w_c.weight.copy_(torch.eye(2))
    a = torch.tensor([[[1.0, -2.0], [0.5, 3.0]]])
    b = torch.tensor([[[2.0, 1.0], [-1.0, 1.0], [7.0, 7.0]]])  # third token is padding
    mask_a = torch.tensor([[True, True]])
    mask_b = torch.tensor([[True, True, False]])
    zeros_a, zeros_b = torch.zeros_like(a), torch.zeros_like(b)
    _, _, (a_to_b, b_to_a), _ = coattention(a, b, (zeros_a, zeros_a), (zeros_b, zeros_b), mask_a, mask_b)
    scores = torch.relu(a[0]) @ torch.relu(b[0, :2]).T  # [[2, 0], [4, 3]]
    torch.testing.assert_close(a_to_b[0, :, :2], torch.softmax(scores, dim=1))
    assert (a_to_b[0, :, 2] == 0).all()
    torch.testing.assert_close(b_to_a[0, :2], torch.softmax(scores.T, dim=1))


def test_trace_has_both_directions_per_layer_and_gates_per_layer_and_sentence():
    batch = random_batch([4, 2], [3, 3], VOCAB, CHAR_VOCAB)
    _, trace = tiny(num_layers=3)(batch, trace=True)
    alignments = trace.of_type(Alignment)
    assert sorted((e.layer, e.direction) for e in alignments.values()) == [
        (k, d) for k in (1, 2, 3) for d in ("h→p", "p→h")]
    gates = [(e.layer, e.tokens, e.name) for e in trace.of_type(Gate).values()]
    assert (1, "premise", "augment_word") in gates and (1, "premise", "augment_context") not in gates
    assert (3, "hypothesis", "augment_context") in gates
    assert len(gates) == 2 * (1 + 2 + 2)
    for variant in ({"augmentation": "none"}, {"augmentation": "simple"}):
        _, plain = tiny(**variant)(batch, trace=True)
        assert not plain.of_type(Gate) and len(plain.of_type(Alignment)) == 4


def test_paper_width_follows_the_features_and_must_be_even():
    model = ESAN(ESANConfig(word_dim=10, vocab_size=20, char_vocab_size=20, char_filters=6))
    assert model.projection is None and model.encoder.output_dim == 10 + 6 + 47 + 1
    with pytest.raises(ValueError, match="even"):
        ESAN(ESANConfig(word_dim=11, vocab_size=20, char_vocab_size=20, char_filters=6))
    with pytest.raises(ValueError, match="augmentation"):
        tiny(augmentation="residual")


def test_quora_setting_parameter_count_is_near_the_papers_3_9m():
    model = ESAN(ESANConfig(word_dim=300, vocab_size=10, char_vocab_size=100, use_pos=False, use_exact_match=False))
    d, k = 400, 3  # GloVe 300 + char-CNN 100
    chars = 100 * 8 + (8 * 5 * 100 + 100)
    bilstm = 2 * (4 * (d // 2) * (d + d // 2) + 8 * (d // 2))
    first = d * d + (d * d + d) + d * d + (4 * d * d + d)  # W_g, W_e, W_c, W_f
    second = first + (d * d + d)  # + W_h
    mlp = (8 * d * 150 + 150) + (150 * k + k)
    assert model.count_parameters() == chars + bilstm + first + second + mlp == 3_850_703
