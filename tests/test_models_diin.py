"""DIIN: the equations' arithmetic, the interaction tensor, the fixed grid and the measured parameter count."""
from __future__ import annotations

import math

import pytest
import torch
from torch import nn

from nlivis.models.diin import DIIN, FUSES
from nlivis.models.inspect import random_batch
from nlivis.models.registry import build
from nlivis.models.trace import FeatureMaps

PREMISES, HYPOTHESES = [5, 3, 4, 1], [4, 2, 1, 3]


def tiny(**options) -> DIIN:
    torch.manual_seed(0)
    return build({"name": "diin", **DIIN.tiny_overrides, **options}).eval()


def batch(pad_premise_to: int | None = None, pad_hypothesis_to: int | None = None):
    return random_batch(PREMISES, HYPOTHESES, 30, 20, pad_premise_to=pad_premise_to,
                        pad_hypothesis_to=pad_hypothesis_to, seed=5)


def paper_size(**options) -> DIIN:
    return build({"name": "diin", "word_dim": 300, "vocab_size": 50, "char_vocab_size": 50, **options})


def test_paper_size_parameter_count_is_near_table_6():
    # Table 6: 4.36M at d = 448. The two-gate fuse of eqs. 3–6 is what reaches it.
    assert paper_size().count_parameters() == 4_367_262  # char embedding rows: 50 × 8
    assert paper_size(fuse="one_gate").count_parameters() == 3_563_550


def test_table_6_width_projects_in_the_first_highway_layer():
    model = paper_size(model_dim=100)
    assert model.model_dim == 100
    assert model.highway.carry.weight.shape == (100, 448)
    assert model.extractor.scale_down.out_channels == 30  # floor(100 · 0.3)


def test_dense_blocks_grow_and_transitions_halve():
    model = paper_size()
    pair = random_batch([5], [4], 50, 50, seed=0)
    with torch.no_grad():
        _, trace = model(pair, trace=True)
    assert trace["scale_down"].maps.shape[1] == 134  # floor(448 · 0.3)
    # each block's entry holds the 8 · 20 channels it adds (it also carries 134, 147, 153 channels in)
    assert trace["dense_block_1"].maps.shape[1] == 8 * 20
    assert trace["dense_block_2"].maps.shape[1:] == (160, 24, 24)  # after the first 2×2 pool
    assert trace["dense_block_3"].maps.shape[1:] == (160, 12, 12)
    assert trace["pooled"].vector.shape == (1, 156 * 6 * 6)


def test_dense_block_trace_is_the_channels_the_block_adds():
    model = paper_size().eval()
    pair = random_batch([5], [4], 50, 50, seed=0)
    captured = {}
    model.extractor.blocks[0].register_forward_hook(lambda module, inputs, output: captured.update(out=output))
    with torch.no_grad():
        _, trace = model(pair, trace=True)
    block_output = captured["out"][:, :, :5, :4]
    assert torch.equal(block_output[:, :134], trace["scale_down"].maps)  # the block carries the scale-down in
    assert torch.equal(trace["dense_block_1"].maps, block_output[:, 134:])
    assert not torch.equal(trace["dense_block_1"].maps[:, :8], trace["scale_down"].maps[:, :8])


def test_tri_linear_score_and_two_gate_fuse_follow_eqs_1_to_6():
    encoder = FUSES["two_gates"](2, nn.Dropout(0.0))
    x = torch.tensor([[[1.0, 2.0], [3.0, -1.0]]])
    with torch.no_grad():
        encoder.score_weight.copy_(torch.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]))
        for linear, bias in ((encoder.candidate, 0.5), (encoder.keep_gate, math.log(3.0)),
                             (encoder.write_gate, 0.0)):
            linear.weight.zero_()
            linear.bias.fill_(bias)
        out, weights, gates = encoder(x, torch.ones(1, 2, dtype=torch.bool))
    a = x[0]
    scores = torch.tensor([[float(a[i, 0] + a[j, 1] + (a[i] * a[j]).sum()) for j in range(2)] for i in range(2)])
    torch.testing.assert_close(weights[0], torch.softmax(scores, dim=1))
    r, f, z = 0.75, 0.5, math.tanh(0.5)
    torch.testing.assert_close(out, r * x + f * z)
    assert set(gates) == {"fuse_keep", "fuse_write"}


def test_one_gate_fuse_is_f_x_plus_one_minus_f_z():
    encoder = FUSES["one_gate"](2, nn.Dropout(0.0))
    x = torch.tensor([[[1.0, -2.0]]])
    with torch.no_grad():
        for linear, bias in ((encoder.candidate, 1.0), (encoder.keep_gate, math.log(3.0))):
            linear.weight.zero_()
            linear.bias.fill_(bias)
        out, _, gates = encoder(x, torch.ones(1, 1, dtype=torch.bool))
    torch.testing.assert_close(out, 0.75 * x + 0.25 * math.tanh(1.0))
    assert not hasattr(encoder, "write_gate") and set(gates) == {"fuse_keep"}


@pytest.mark.parametrize("fuse", ["addition", "none"])
def test_fuse_ablations_skip_the_gate(fuse):
    encoder = FUSES[fuse](2, nn.Dropout(0.0))
    x = torch.tensor([[[1.0, 0.0], [0.0, 1.0]]])
    out, weights, gates = encoder(x, torch.ones(1, 2, dtype=torch.bool))
    attended = weights @ x
    torch.testing.assert_close(out, x + attended if fuse == "addition" else attended)
    assert not gates and not list(encoder.parameters())[1:]  # only the score weight


def test_similarity_matrix_is_the_channel_sum_of_the_dense_tensor():
    dense, similarity = tiny(), tiny(interaction="similarity")  # same seed → same encoders
    with torch.no_grad():
        _, dense_trace = dense(batch(), trace=True)
        _, sim_trace = similarity(batch(), trace=True)
    interaction = dense_trace["interaction"].maps
    torch.testing.assert_close(sim_trace["interaction"].maps[:, 0], interaction.sum(dim=1))
    assert sim_trace["similarity_p↔h"].kind == "similarity"


def test_masked_interaction_zeroes_padded_cells_and_unmasked_keeps_them():
    pair = batch()
    masked, unmasked = tiny(), tiny(mask_interaction=False)
    cells = pair.premise_mask.unsqueeze(2) & pair.hypothesis_mask.unsqueeze(1)  # [B, P, H]
    with torch.no_grad():
        masked_maps = masked(pair, trace=True)[1]["interaction"].maps
        unmasked_maps = unmasked(pair, trace=True)[1]["interaction"].maps
    padded = (~cells).unsqueeze(1).expand_as(masked_maps)
    assert (masked_maps[padded] == 0).all()
    assert (unmasked_maps[padded] != 0).any()
    torch.testing.assert_close(masked_maps[~padded], unmasked_maps[~padded])


def test_unmasked_interaction_is_still_padding_invariant_on_the_fixed_grid():
    model = tiny(mask_interaction=False)
    with torch.no_grad():
        torch.testing.assert_close(model(batch(pad_premise_to=8, pad_hypothesis_to=8)), model(batch()))


def test_sentences_longer_than_the_grid_are_a_clear_error():
    model = tiny()
    too_long = random_batch([9], [3], 30, 20, seed=0)
    with pytest.raises(ValueError, match="at most 8 premise tokens"):
        model(too_long)


def test_grid_must_tile_under_the_pooling():
    with pytest.raises(ValueError, match="multiple of"):
        build({"name": "diin", **DIIN.tiny_overrides, "sequence_length": 10, "dense_blocks": 2})


def test_encoder_difference_penalty_vanishes_for_equal_encoders_and_when_shared():
    model = tiny()
    assert model.regularization_terms()["encoder_difference"] > 0
    model.hypothesis_encoder.load_state_dict(model.premise_encoder.state_dict())
    assert float(model.regularization_terms()["encoder_difference"].detach()) == 0.0
    assert tiny(share_encoders=True).regularization_terms() == {}


def test_encoding_based_ablation_has_no_interaction_maps():
    model = tiny(feature_extractor="none")
    with torch.no_grad():
        _, trace = model(batch(), trace=True)
    assert not trace.of_type(FeatureMaps)
    assert trace["pooled"].vector.shape == (len(PREMISES), 4 * model.model_dim)


def test_without_encoding_layer_there_are_no_gates_or_self_attention():
    model = tiny(encoding="none")
    with torch.no_grad():
        _, trace = model(batch(), trace=True)
    assert not any(name.startswith(("highway", "self_attention", "fuse")) for name in trace)
    assert "interaction" in trace


def test_unknown_option_value_is_a_clear_error():
    with pytest.raises(ValueError, match="fuse must be one of"):
        tiny(fuse="three_gates")
