"""MaskedLSTM without packing: same outputs and gradients as nn.LSTM over packed sequences, padding-blind."""
from __future__ import annotations

import pytest
import torch
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from nlivis.models.layers.recurrent import MaskedLSTM, permute_steps, reversal_index


def packed_reference(lstm: MaskedLSTM, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """What MaskedLSTM computed before it stopped packing (nn.LSTM over pack_padded_sequence)."""
    lengths = mask.sum(dim=1).clamp(min=1).cpu()
    packed = pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=False)
    out, _ = lstm.lstm(packed)
    out, _ = pad_packed_sequence(out, batch_first=True, total_length=x.shape[1])
    return out * mask.unsqueeze(-1).to(out.dtype)


def mixed_batch(seed: int, d_in: int = 5) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    lengths = torch.tensor([7, 1, 4, 7, 2, 5])
    mask = torch.arange(7).unsqueeze(0) < lengths.unsqueeze(1)
    x = torch.randn(len(lengths), 7, d_in, generator=g, dtype=torch.float64)
    return x, mask


def test_reversal_index_reverses_real_tokens_only():
    mask = torch.tensor([[True, True, True, False], [True, False, False, False], [False] * 4])
    assert reversal_index(mask).tolist() == [[2, 1, 0, 3], [0, 1, 2, 3], [0, 1, 2, 3]]


@pytest.mark.parametrize("layers,bidirectional", [(1, True), (2, True), (1, False)])
def test_unpacked_lstm_matches_packed_outputs_and_gradients(layers, bidirectional):
    torch.manual_seed(0)
    lstm = MaskedLSTM(5, 4, num_layers=layers, bidirectional=bidirectional).double().eval()
    x, mask = mixed_batch(1)
    x_ref = x.clone().requires_grad_(True)
    x_new = x.clone().requires_grad_(True)
    weights = torch.randn(6, 7, lstm.output_dim, dtype=torch.float64)
    reference = packed_reference(lstm, x_ref, mask)
    (reference * weights).sum().backward()
    ref_grads = [p.grad.clone() for p in lstm.parameters()]
    lstm.zero_grad()
    out = lstm(x_new, mask)
    (out * weights).sum().backward()
    torch.testing.assert_close(out, reference, atol=1e-12, rtol=0)
    torch.testing.assert_close(x_new.grad, x_ref.grad, atol=1e-12, rtol=0)
    for new, ref in zip((p.grad for p in lstm.parameters()), ref_grads):
        torch.testing.assert_close(new, ref, atol=1e-12, rtol=0)


def test_padding_changes_no_output_and_no_gradient():
    torch.manual_seed(0)
    lstm = MaskedLSTM(5, 4).double()
    x, mask = mixed_batch(2)
    wide_x = torch.cat([x, torch.full((6, 3, 5), 30.0, dtype=torch.float64)], dim=1).requires_grad_(True)
    wide_mask = torch.cat([mask, torch.zeros(6, 3, dtype=torch.bool)], dim=1)
    narrow_x = x.clone().requires_grad_(True)
    narrow = lstm(narrow_x, mask)
    narrow.sum().backward()
    narrow_grads = [p.grad.clone() for p in lstm.parameters()]
    lstm.zero_grad()
    wide = lstm(wide_x, wide_mask)
    wide.sum().backward()
    assert torch.equal(wide[:, :7], narrow) and (wide[:, 7:] == 0).all()
    assert torch.equal(wide_x.grad[:, :7], narrow_x.grad) and (wide_x.grad[:, 7:] == 0).all()
    for new, ref in zip((p.grad for p in lstm.parameters()), narrow_grads):
        torch.testing.assert_close(new, ref, atol=1e-13, rtol=0)


def test_old_state_dicts_load_by_name():
    assert set(MaskedLSTM(5, 4).state_dict()) == {f"lstm.{k}_l0{s}" for k in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")
                                                  for s in ("", "_reverse")}


def test_step_permutation_gradient_is_the_same_permutation():
    mask = torch.tensor([[True, True, True, False], [True, True, False, False]])
    x = torch.randn(2, 4, 3, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(lambda t: permute_steps(t, reversal_index(mask)), (x,))
    assert torch.equal(permute_steps(x, reversal_index(mask))[0, :3], x[0, :3].flip(0))
