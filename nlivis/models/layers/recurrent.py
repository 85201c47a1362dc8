"""A padding-blind (Bi)LSTM over right-padded token sequences, shared by ESIM and ESAN.

Padded steps are never fed to the recurrence (pack_padded_sequence), so a sentence's outputs do not
depend on how far the batch is padded, and the backward direction starts at the last real token.
"""
from __future__ import annotations

import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence


class MaskedLSTM(nn.Module):
    """[B, T, d_in] + mask [B, T] → [B, T, directions·hidden] with zeros on padded positions."""

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, bidirectional: bool = True,
                 dropout: float = 0.0):
        super().__init__()
        self.lstm = nn.LSTM(input_size, hidden_size, num_layers=num_layers, batch_first=True,
                            bidirectional=bidirectional, dropout=dropout if num_layers > 1 else 0.0)
        self.output_dim = hidden_size * (2 if bidirectional else 1)

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        # B batch, T tokens, d_in input width; returns [B, T, output_dim]
        total = x.shape[1]
        # An all-padding row (possible in tests) is read as one zero step and then masked to zero.
        lengths = mask.sum(dim=1).clamp(min=1).cpu()
        packed = pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=False)
        out, _ = self.lstm(packed)
        out, _ = pad_packed_sequence(out, batch_first=True, total_length=total)
        return out * mask.unsqueeze(-1).to(out.dtype)

    def forward_pair(self, x_a: torch.Tensor, mask_a: torch.Tensor, x_b: torch.Tensor, mask_b: torch.Tensor
                     ) -> tuple[torch.Tensor, torch.Tensor]:
        """`forward` on two batches of sentences (premise and hypothesis) in one recurrent call.

        The rows are stacked and packed together, so the per-step matrix products cover both sentences
        at once (half the recurrent steps and kernel launches of two calls); each row is still read
        alone, so the outputs are those of two separate calls."""
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
