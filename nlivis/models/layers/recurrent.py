"""A padding-blind (Bi)LSTM over right-padded token sequences, shared by ESIM and ESAN.

A sentence's outputs do not depend on how far its batch is padded, and the backward direction starts
at its last real token, without packing: the forward direction runs on the padded batch (padding comes
after every real step, so it cannot reach a real output), and the backward direction runs on each row
reversed within its own length (real tokens last-to-first, then the padding), whose outputs are put
back in place by the same permutation. Outputs at padded positions are zeroed, so no gradient flows
through padded steps either. On CPU this keeps PyTorch's fused LSTM kernel, which
`pack_padded_sequence` leaves (1.3–1.6× faster ESIM training; bench/RESULTS.md). The weights are
those of an `nn.LSTM`, under its parameter names, so checkpoints of the packed version load unchanged.
"""
from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F


def reversal_index(mask: torch.Tensor) -> torch.Tensor:
    """[B, T] positions that reverse each row's real tokens in place and leave its padding where it is
    (an involution: applying it twice is the identity)."""
    # B batch, T tokens; mask [B, T] → index [B, T]
    lengths = mask.sum(dim=1, keepdim=True)  # [B, 1]
    steps = torch.arange(mask.shape[1], device=mask.device).unsqueeze(0)  # [1, T]
    return torch.where(steps < lengths, lengths - 1 - steps, steps)


class _PermuteRows(torch.autograd.Function):
    """rows[index] of a [N, d] matrix for an involutive permutation `index`, whose gradient is the same
    row selection (a gather's generic backward is a scatter-add, several times slower on CPU)."""

    @staticmethod
    def forward(ctx, rows: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
        ctx.save_for_backward(index)
        return rows.index_select(0, index)

    @staticmethod
    def backward(ctx, grad: torch.Tensor) -> tuple[torch.Tensor, None]:
        (index,) = ctx.saved_tensors
        return grad.index_select(0, index), None


def permute_steps(x: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
    """x[b, index[b, t]] for [B, T, d] x and a [B, T] `reversal_index` (its own inverse)."""
    batch, steps, width = x.shape
    flat = (index + torch.arange(batch, device=x.device).unsqueeze(1) * steps).reshape(-1)  # [B·T]
    return _PermuteRows.apply(x.reshape(batch * steps, width), flat).view(batch, steps, width)


class MaskedLSTM(nn.Module):
    """[B, T, d_in] + mask [B, T] → [B, T, directions·hidden] with zeros on padded positions."""

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, bidirectional: bool = True,
                 dropout: float = 0.0):
        super().__init__()
        self.lstm = nn.LSTM(input_size, hidden_size, num_layers=num_layers, batch_first=True,
                            bidirectional=bidirectional, dropout=dropout if num_layers > 1 else 0.0)
        self.output_dim = hidden_size * (2 if bidirectional else 1)

    def _direction(self, x: torch.Tensor, layer: int, suffix: str) -> torch.Tensor:
        """One direction of one layer over [B, T, d] in time order → [B, T, hidden] (torch.lstm with the
        nn.LSTM's own weights for that layer and direction)."""
        lstm = self.lstm
        params = [getattr(lstm, f"{kind}_l{layer}{suffix}") for kind in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")]
        zeros = x.new_zeros(1, x.shape[0], lstm.hidden_size)
        out, _, _ = torch.lstm(x, (zeros, zeros), params, True, 1, 0.0, self.training, False, True)
        return out

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        # B batch, T tokens, d_in input width; returns [B, T, output_dim]
        lstm = self.lstm
        reverse = reversal_index(mask) if lstm.bidirectional else None  # [B, T]
        out = x
        for layer in range(lstm.num_layers):
            if layer > 0:
                out = F.dropout(out, lstm.dropout, self.training)
            forward = self._direction(out, layer, "")  # [B, T, hidden]
            if reverse is None:
                out = forward
            else:
                backward = permute_steps(self._direction(permute_steps(out, reverse), layer, "_reverse"), reverse)
                out = torch.cat([forward, backward], dim=-1)  # [B, T, 2·hidden]
        return out * mask.unsqueeze(-1).to(out.dtype)

    def forward_pair(self, x_a: torch.Tensor, mask_a: torch.Tensor, x_b: torch.Tensor, mask_b: torch.Tensor
                     ) -> tuple[torch.Tensor, torch.Tensor]:
        """`forward` on two batches of sentences (premise and hypothesis) in one recurrent call.

        The rows are stacked, so the per-step matrix products cover both sentences at once (half the
        recurrent steps and kernel launches of two calls); each row is still read alone, so the outputs
        are those of two separate calls."""
        # B batch, P / H lengths of a / b, d_in input width; returns [B, P, output_dim], [B, H, output_dim]
        p, h = x_a.shape[1], x_b.shape[1]
        t = max(p, h)

        def pad(x: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
            extra = t - x.shape[1]
            if extra == 0:
                return x, mask
            return (nn.functional.pad(x, (0, 0, 0, extra)), nn.functional.pad(mask, (0, extra), value=False))

        (xa, ma), (xb, mb) = pad(x_a, mask_a), pad(x_b, mask_b)
        out = self(torch.cat([xa, xb]), torch.cat([ma, mb]))
        return out[: x_a.shape[0], :p], out[x_a.shape[0]:, :h]
