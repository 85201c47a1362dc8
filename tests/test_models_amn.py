"""AMN: the memory step, the cells, the sparsemax output and loss, and the measured parameter counts."""
from __future__ import annotations

import pytest
import torch
from entmax import SparsemaxLoss
from torch import nn

from nlivis.models.amn import AMN, AMNConfig, AttentionMemoryEncoder, erase_and_write, gru_step, lstm_step
from nlivis.models.inspect import random_batch
from nlivis.models.registry import build
from nlivis.models.trace import MemoryKeys, OutputDistribution

VOCAB = 30
CHAR_VOCAB = 20


def tiny(**options) -> AMN:
    torch.manual_seed(0)
    return build({"name": "amn", **AMN.tiny_overrides, **options}).eval()


def test_erase_and_write_on_a_hand_computed_case():
    memory = torch.tensor([[[1.0, 2.0], [3.0, 4.0]]])
    key = torch.tensor([[[0.25, 0.75]]])
    state = torch.tensor([[10.0, 20.0]])
    expected = torch.tensor([[[0.75 * 1 + 0.25 * 10, 0.75 * 2 + 0.25 * 20],
                              [0.25 * 3 + 0.75 * 10, 0.25 * 4 + 0.75 * 20]]])
    torch.testing.assert_close(erase_and_write(memory, key, state), expected)
    # a one-hot key replaces exactly one slot
    torch.testing.assert_close(erase_and_write(memory, torch.tensor([[[0.0, 1.0]]]), state),
                               torch.tensor([[[1.0, 2.0], [10.0, 20.0]]]))


def test_cell_steps_match_torch_cells():
    torch.manual_seed(0)
    x, state, cell_state = torch.randn(3, 4), torch.randn(3, 5), torch.randn(3, 5)
    gru = nn.GRUCell(4, 5)
    projected = nn.functional.linear(x, gru.weight_ih, gru.bias_ih)
    torch.testing.assert_close(gru_step(projected, state, gru), gru(x, state))
    lstm = nn.LSTMCell(4, 5)
    projected = nn.functional.linear(x, lstm.weight_ih, lstm.bias_ih)
    h, c = lstm_step(projected, state, cell_state, lstm)
    h_ref, c_ref = lstm(x, (state, cell_state))
    torch.testing.assert_close(h, h_ref)
    torch.testing.assert_close(c, c_ref)


@pytest.mark.parametrize("cell", ["gru", "lstm"])
def test_encoder_follows_eqs_1_to_5_step_by_step(cell):
    torch.manual_seed(1)
    encoder = AttentionMemoryEncoder(4, 4, cell)
    x = torch.randn(1, 3, 4)
    state, keys = encoder(x, torch.ones(1, 3, dtype=torch.bool))
    memory = x[0].clone()  # M_0 = the embeddings
    o = c_o = h = c_h = torch.zeros(4)
    for t in range(3):
        if cell == "gru":
            o = encoder.reader(x[0, t:t + 1], o.unsqueeze(0))[0]
        else:
            o, c_o = (v[0] for v in encoder.reader(x[0, t:t + 1], (o.unsqueeze(0), c_o.unsqueeze(0))))
        a = torch.softmax(memory @ o, dim=0)  # eq. 2
        torch.testing.assert_close(keys[0, t], a)
        m = a @ memory  # eq. 3
        composed = torch.cat([o, m]).unsqueeze(0)
        if cell == "gru":
            h = encoder.writer(composed, h.unsqueeze(0))[0]
        else:
            h, c_h = (v[0] for v in encoder.writer(composed, (h.unsqueeze(0), c_h.unsqueeze(0))))
        memory = memory * (1 - a.unsqueeze(1)) + a.unsqueeze(1) * h  # eq. 5
    torch.testing.assert_close(state[0], h)


def test_memory_keys_are_distributions_over_real_slots_on_real_steps():
    batch = random_batch([4, 2], [3, 1], VOCAB, CHAR_VOCAB)
    _, trace = tiny()(batch, trace=True)
    keys = trace["memory_keys_premise"]
    assert isinstance(keys, MemoryKeys) and keys.weights.shape == (2, 4, 4)
    torch.testing.assert_close(keys.weights[1, :2].sum(-1), torch.ones(2))
    assert (keys.weights[1, 2:] == 0).all() and (keys.weights[1, :, 2:] == 0).all()
    assert trace["memory_keys_hypothesis"].weights.shape == (2, 3, 3)
    assert keys.layer == 1  # one encoder layer; titles read "layer 1", never "layer 0"


def test_sparsemax_output_has_exact_zeros_and_sums_to_one():
    model = tiny()
    logits = torch.tensor([[3.0, 0.0, -1.0], [0.2, 0.1, 0.0]])
    probs = model.probabilities(logits)
    assert probs[0].tolist() == [1.0, 0.0, 0.0]
    torch.testing.assert_close(probs.sum(-1), torch.ones(2))
    torch.testing.assert_close(probs[1], torch.tensor([0.2, 0.1, 0.0]) + 0.7 / 3)  # p = z − τ, τ = (Σz − 1)/3
    _, trace = model(random_batch([3, 2], [2, 2], VOCAB, CHAR_VOCAB), trace=True)
    output = trace["output"]
    assert isinstance(output, OutputDistribution) and output.kind == "sparsemax"


def test_sparsemax_loss_matches_entmax_and_a_hand_value():
    model = tiny()
    logits = torch.randn(5, 3, generator=torch.Generator().manual_seed(0))
    labels = torch.tensor([0, 1, 2, 0, 1])
    torch.testing.assert_close(model.loss(logits, labels), SparsemaxLoss()(logits, labels))
    # z = 0: p = 1/3 each, loss = ½(1 − ‖p‖²) − (z_y − p·z) = ½(1 − 1/3) = 1/3
    assert model.loss(torch.zeros(1, 3), torch.tensor([0])).item() == pytest.approx(1 / 3)
    # a correct prediction by a margin ≥ 1 costs nothing
    assert model.loss(torch.tensor([[2.0, 0.5, 0.0]]), torch.tensor([0])).item() == pytest.approx(0.0)


def test_softmax_switch_changes_the_output_layer_only():
    sparse, dense = tiny(), tiny(output="softmax")
    batch = random_batch([3, 2], [2, 2], VOCAB, CHAR_VOCAB)
    logits = sparse(batch)
    torch.testing.assert_close(dense(batch), logits)  # same seed, same architecture
    torch.testing.assert_close(dense.probabilities(logits), torch.softmax(logits, -1))
    torch.testing.assert_close(dense.loss(logits, batch.labels), nn.functional.cross_entropy(logits, batch.labels))
    assert dense(batch, trace=True)[1]["output"].kind == "softmax"
    assert not torch.allclose(sparse.probabilities(logits * 20), dense.probabilities(logits * 20))


def test_shared_encoder_is_one_module():
    model = tiny(share_encoder=True)
    assert model.premise_encoder is model.hypothesis_encoder


def test_paper_size_parameter_counts():
    d, k, mlp = 300, 3, 600
    gru = 3 * (d * d + d * d + 2 * d) + 3 * (2 * d * d + d * d + 2 * d)
    lstm = 4 * (d * d + d * d + 2 * d) + 4 * (2 * d * d + d * d + 2 * d)
    head = (4 * d * mlp + mlp) + (mlp * k + k)
    assert AMN(AMNConfig(word_dim=300, vocab_size=10)).count_parameters() == 2 * gru + head == 3_429_603
    assert AMN(AMNConfig(word_dim=300, vocab_size=10, cell="lstm")).count_parameters() == 2 * lstm + head == 4_332_003


@pytest.mark.parametrize("options", [{"cell": "rnn"}, {"output": "entmax"}])
def test_bad_options_are_refused_with_their_name(options):
    with pytest.raises(ValueError, match=next(iter(options))):
        tiny(**options)


@pytest.mark.parametrize("cell,op", [("gru", "gru"), ("lstm", "lstm")])
def test_reading_rnn_train_flag_follows_module_mode(cell, op, monkeypatch):
    """torch.gru / torch.lstm get `train` = the module's mode, as nn.GRU passes it (on CUDA, False is
    cuDNN's inference path, whose backward fails)."""
    flags: list[bool] = []
    original = getattr(torch, op)

    def recording(*args):
        flags.append(args[6])
        return original(*args)

    monkeypatch.setattr(torch, op, recording)
    model = tiny(cell=cell)
    batch = random_batch([3, 2], [2, 2], VOCAB, CHAR_VOCAB)
    model.train()(batch)
    model.eval()(batch)
    assert flags == [True, True, False, False]  # premise and hypothesis encoders, in each mode
