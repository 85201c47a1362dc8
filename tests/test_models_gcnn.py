"""GCNN known values: the gate equations (eqs. 2–3 and the ablations) on a hand-computed one-token case."""
from __future__ import annotations

import math

import pytest
import torch

from nlivis.models.gcnn import CONV_BLOCKS, GCNN, ConvStack, GCNNConfig
from nlivis.models.inspect import random_batch
from nlivis.models.trace import Gate

X = torch.tensor([[[1.0, 2.0]]])  # one sentence, one token, two input features
MASK = torch.tensor([[True]])


def sigmoid(v: float) -> float:
    return 1.0 / (1.0 + math.exp(-v))


def set_conv(conv: torch.nn.Conv1d, weights: list[float], bias: float) -> None:
    with torch.no_grad():
        conv.weight.copy_(torch.tensor(weights).view(1, 2, 1))
        conv.bias.fill_(bias)


def block(kind: str = "gcnn", forget_gate: bool = True, output_gate: bool = True) -> torch.nn.Module:
    """A 2 → 1 block with kernel width 1: g_pre = 0.5·1 − 0.5·2 + 0.1 = −0.4, o_pre = 1, f_pre = 1, W_p h = 3."""
    b = CONV_BLOCKS[kind](2, 1, 1, forget_gate, output_gate)
    set_conv(b.candidate, [0.5, -0.5], 0.1)
    if getattr(b, "output", None) is not None:
        set_conv(b.output, [1.0, 0.0], 0.0)
    if getattr(b, "forget", None) is not None:
        set_conv(b.forget, [0.0, 1.0], -1.0)
    if getattr(b, "projection", None) is not None:
        with torch.no_grad():
            b.projection.weight.fill_(1.0)
    return b


def test_gcnn_layer_follows_eq_2_and_3():
    previous_cell = torch.tensor([[[0.7]]])
    h, cell, gates = block()(X, previous_cell, MASK)
    o, f, g = sigmoid(1.0), sigmoid(1.0), math.tanh(-0.4)
    expected_cell = f * 0.7 + (1 - f) * 3.0
    assert cell.item() == pytest.approx(expected_cell, abs=1e-6)
    assert h.item() == pytest.approx(o * g + expected_cell, abs=1e-6)
    assert gates["output"].item() == pytest.approx(o) and gates["forget"].item() == pytest.approx(f)


def test_first_layer_cell_starts_at_zero():
    h, cell, _ = block()(X, None, MASK)
    assert cell.item() == pytest.approx((1 - sigmoid(1.0)) * 3.0, abs=1e-6)


def test_without_forget_gate_the_input_is_added():
    h, cell, gates = block(forget_gate=False)(X, None, MASK)
    assert cell is None and set(gates) == {"output"}
    assert h.item() == pytest.approx(sigmoid(1.0) * math.tanh(-0.4) + 3.0, abs=1e-6)


def test_without_output_gate_g_is_relu():
    h, cell, gates = block(output_gate=False)(X, torch.tensor([[[0.7]]]), MASK)
    f = sigmoid(1.0)
    assert set(gates) == {"forget"}
    assert h.item() == pytest.approx(max(-0.4, 0.0) + f * 0.7 + (1 - f) * 3.0, abs=1e-6)


def test_cnn_and_glu_baselines():
    h_cnn, _, _ = block("cnn")(X, None, MASK)
    assert h_cnn.item() == pytest.approx(0.0 + 3.0, abs=1e-6)  # ReLU(−0.4) + W_p h
    h_glu, _, gates = block("glu")(X, None, MASK)
    assert h_glu.item() == pytest.approx(-0.4 * sigmoid(1.0), abs=1e-6)  # eq. 1, no residual
    assert not hasattr(block("glu"), "projection")


def test_unknown_context_layer_is_a_clear_error():
    with pytest.raises(ValueError, match="context_layer"):
        ConvStack(2, 2, 1, 3, "lstm", True, True)


def test_paper_size_parameter_count_without_features():
    """4 context layers 300→300 (3 convs of 300·3·300+300 each) + 2 aggregation layers (the first 1200→300
    with a 1200×300 projection) + MLP 1200→300→3."""
    model = GCNN(GCNNConfig(vocab_size=50))
    conv_300 = 3 * (300 * 3 * 300 + 300)
    conv_1200 = 3 * (1200 * 3 * 300 + 300) + 1200 * 300
    mlp = 1200 * 300 + 300 + 300 * 3 + 3
    assert model.count_parameters() == 4 * conv_300 + conv_1200 + conv_300 + mlp


def test_trace_gates_cover_every_layer_of_both_stacks():
    config = GCNNConfig(**{**GCNN.tiny_overrides, "use_chars": True, "use_pos": True})
    model = GCNN(config).eval()
    batch = random_batch([3, 2], [2, 2], config.vocab_size, config.char_vocab_size)
    _, trace = model(batch, trace=True)
    gates = trace.of_type(Gate)
    layers = config.context_layers + config.aggregation_layers
    assert {(g.layer, g.name, g.tokens) for g in gates.values()} == {
        (layer, name, sentence) for layer in range(1, layers + 1) for name in ("output", "forget")
        for sentence in ("premise", "hypothesis")}
    assert all(((g.values >= 0) & (g.values <= 1)).all() for g in gates.values())
